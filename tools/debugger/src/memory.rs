//! The bytes behind a ref: a `!vm.buffer`'s own, a host object's (a
//! `!hal.buffer_view`'s) through a [`RefBytes`] hook the front end sets,
//! and gdb's `x` command over them ([`Examine`]: `x/16xb %r0`, `x/4dw
//! %r1+8`, `x/2fg %r0`).

use std::sync::Arc;

use irvm::Ref;

use super::float_text::{f32_text, f64_text};
use super::DebugCommandError;

/// Reads `count` bytes from byte `offset` of a host object's contents
/// (`None`: the object has no bytes); the front end knows its host types
/// (`irvm dbg` and `irvm dap` read `!hal.buffer_view`s and `!hal.buffer`s).
pub type RefBytes = Arc<dyn Fn(&Ref, u64, usize) -> Option<RefMemory> + Send + Sync>;

/// The contents of a host object as a `!vm.buffer` view of them (`None`:
/// the object has no bytes), for writing them (DAP's `writeMemory`); the
/// view is read-only where the contents are (a module's rodata).
pub type RefContents = Arc<dyn Fn(&Ref) -> Option<Ref> + Send + Sync>;

/// Writes `data` at byte `offset` of `r`'s contents (a buffer's bytes, or
/// a host object's through `host`); with `partial`, as many as fit before
/// the contents end (else none, and an error, when not all fit). Returns
/// how many were written. Read-only contents (a module's rodata, a
/// read-only buffer) are refused, saying so.
pub fn write_ref(
    r: &Ref,
    offset: u64,
    data: &[u8],
    partial: bool,
    host: Option<&RefContents>,
) -> Result<usize, DebugCommandError> {
    let err = |m: String| Err(DebugCommandError(m));
    let buffer = match r {
        Ref::Buffer(b) => b.clone(),
        Ref::Host(_) => match host.and_then(|h| h(r)) {
            Some(Ref::Buffer(b)) => b,
            _ => return err(format!("{r} has no bytes to write")),
        },
        Ref::List(_) => return err("a list has no bytes to write (set its elements)".into()),
        Ref::Null => return err("the ref is null".into()),
    };
    if !buffer.is_mutable() {
        return err(
            "the memory is read-only: constant data (a module's rodata, or memory \
             a host module lends, such as a parameter archive's)"
                .into(),
        );
    }
    let length = buffer.len() as u64;
    if offset > length {
        return err(format!(
            "offset {offset} is past the end of the contents ({length} bytes)"
        ));
    }
    let room = (length - offset).min(data.len() as u64) as usize;
    if room < data.len() && !partial {
        return err(format!(
            "{} bytes at offset {offset} do not fit in the contents ({length} bytes): \
             nothing written (allowPartial writes what fits)",
            data.len()
        ));
    }
    let start = offset as usize;
    buffer
        .with_bytes_mut(|bytes| bytes[start..start + room].copy_from_slice(&data[..room]))
        .map_err(|t| DebugCommandError(format!("cannot write the memory: {}", t.message)))?;
    Ok(room)
}

/// Bytes read from a ref.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefMemory {
    /// The whole contents' length.
    pub length: u64,
    /// The bytes read: fewer than asked where the contents end.
    pub bytes: Vec<u8>,
}

/// Reads `count` bytes from byte `offset` of `r`: a buffer's bytes, or a
/// host object's through `host`.
pub fn read_ref(
    r: &Ref,
    offset: u64,
    count: usize,
    host: Option<&RefBytes>,
) -> Result<RefMemory, DebugCommandError> {
    match r {
        Ref::Buffer(b) => {
            let length = b.len() as u64;
            let start = offset.min(length) as usize;
            let end = (start as u64).saturating_add(count as u64).min(length) as usize;
            Ok(RefMemory {
                length,
                bytes: b.with_bytes(|bytes| bytes[start..end].to_vec()),
            })
        }
        Ref::Host(_) => host
            .and_then(|h| h(r, offset, count))
            .ok_or_else(|| DebugCommandError(format!("{r} has no bytes to examine"))),
        Ref::List(_) => Err(DebugCommandError(
            "a list has no bytes to examine (print shows its elements)".into(),
        )),
        Ref::Null => Err(DebugCommandError("the ref is null".into())),
    }
}

/// How `x` shows each unit: gdb's letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExamineFormat {
    /// `x`: hexadecimal, zero-padded to the unit's width.
    Hex,
    /// `d`: signed decimal.
    Signed,
    /// `u`: unsigned decimal.
    Unsigned,
    /// `t`: binary, zero-padded.
    Binary,
    /// `f`: a float of the unit's width (`w`: f32, `g`: f64).
    Float,
}

/// `x/NFU REF[+OFFSET]`: what to read and how to show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Examine {
    /// How many units.
    pub count: usize,
    /// How each shows.
    pub format: ExamineFormat,
    /// The unit's size in bytes: `b` 1, `h` 2, `w` 4, `g` 8.
    pub unit: usize,
    /// The ref register (`%rN`).
    pub register: String,
    /// The first byte.
    pub offset: u64,
}

/// Most units one `x` shows.
pub const MAX_EXAMINE_UNITS: usize = 4096;

impl Examine {
    /// Parses `x`'s `/NFU` suffix (`""` for none; the `/` may be left out)
    /// and its argument
    /// (`%r0`, `%r0+16`, `%r0+0x10`); the defaults are one byte in hex.
    pub fn parse(suffix: &str, argument: &str) -> Result<Examine, DebugCommandError> {
        let bad = |m: String| DebugCommandError(m);
        let mut count = String::new();
        let (mut format, mut unit) = (ExamineFormat::Hex, 1usize);
        for c in suffix.strip_prefix('/').unwrap_or(suffix).chars() {
            match c {
                '0'..='9' => count.push(c),
                'x' => format = ExamineFormat::Hex,
                'd' => format = ExamineFormat::Signed,
                'u' => format = ExamineFormat::Unsigned,
                't' => format = ExamineFormat::Binary,
                'f' => format = ExamineFormat::Float,
                'b' => unit = 1,
                'h' => unit = 2,
                'w' => unit = 4,
                'g' => unit = 8,
                other => {
                    return Err(bad(format!(
                        "x: unknown letter `{other}` (formats x d u t f, units b h w g)"
                    )))
                }
            }
        }
        let count = if count.is_empty() {
            1
        } else {
            count
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=MAX_EXAMINE_UNITS).contains(&n))
                .ok_or_else(|| {
                    bad(format!(
                        "x: the count is 1 to {MAX_EXAMINE_UNITS}, not {count}"
                    ))
                })?
        };
        if format == ExamineFormat::Float && unit < 4 {
            return Err(bad(
                "x/f reads floats of 4 (w) or 8 (g) bytes: give the unit".into(),
            ));
        }
        let argument = argument.trim();
        if argument.is_empty() {
            return Err(bad("x needs a ref register: x/NFU %rN[+OFFSET]".into()));
        }
        let (register, offset) = match argument.split_once('+') {
            Some((r, o)) => {
                let o = o.trim();
                let parsed = match o.strip_prefix("0x").or_else(|| o.strip_prefix("0X")) {
                    Some(hex) => u64::from_str_radix(hex, 16).ok(),
                    None => o.parse::<u64>().ok(),
                };
                (
                    r.trim(),
                    parsed.ok_or_else(|| bad(format!("x: `{o}` is not a byte offset")))?,
                )
            }
            None => (argument, 0),
        };
        Ok(Examine {
            count,
            format,
            unit,
            register: register.to_string(),
            offset,
        })
    }

    /// The bytes to read.
    pub fn byte_count(&self) -> usize {
        self.count * self.unit
    }

    /// The lines `x` prints for `memory` read at [`Examine::offset`]: the
    /// units per line as gdb puts them (8 bytes or halves, 4 words, 2
    /// giants), each line led by `%rN+0xOFFSET:`; a last unit cut by the
    /// contents' end is left out, and a line says where they end.
    pub fn lines(&self, memory: &RefMemory) -> Vec<String> {
        let per_line = match self.unit {
            1 | 2 => 8,
            4 => 4,
            _ => 2,
        };
        let units: Vec<&[u8]> = memory.bytes.chunks_exact(self.unit).collect();
        let mut out = Vec::new();
        for (k, line) in units.chunks(per_line).enumerate() {
            let at = self.offset + (k * per_line * self.unit) as u64;
            let mut text = format!("{}+{at:#x}:", self.register);
            for unit in line {
                text.push('\t');
                text.push_str(&self.unit_text(unit));
            }
            out.push(text);
        }
        if units.len() < self.count {
            out.push(format!(
                "(the contents end at byte {}: {} of {} units shown)",
                memory.length,
                units.len(),
                self.count
            ));
        }
        out
    }

    fn unit_text(&self, unit: &[u8]) -> String {
        let mut bits = [0u8; 8];
        bits[..unit.len()].copy_from_slice(unit);
        let raw = u64::from_le_bytes(bits);
        let width = self.unit * 8;
        let signed = if width == 64 {
            raw as i64
        } else {
            // Sign-extend from the unit's width.
            ((raw << (64 - width)) as i64) >> (64 - width)
        };
        match self.format {
            ExamineFormat::Hex => format!("0x{raw:0w$x}", w = self.unit * 2),
            ExamineFormat::Signed => signed.to_string(),
            ExamineFormat::Unsigned => raw.to_string(),
            ExamineFormat::Binary => format!("{raw:0width$b}"),
            ExamineFormat::Float if self.unit == 4 => f32_text(f32::from_bits(raw as u32)),
            ExamineFormat::Float => f64_text(f64::from_bits(raw)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(bytes: &[u8]) -> RefMemory {
        RefMemory {
            length: bytes.len() as u64,
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn units_and_formats_as_gdb_shows_them() {
        let x = Examine::parse("/4xb", "%r0+2").unwrap();
        assert_eq!(
            x.lines(&memory(&[1, 0xff, 16, 0])),
            ["%r0+0x2:\t0x01\t0xff\t0x10\t0x00"]
        );
        let d = Examine::parse("/2dh", "%r1").unwrap();
        assert_eq!(d.lines(&memory(&[0xfe, 0xff, 5, 0])), ["%r1+0x0:\t-2\t5"]);
        let u = Examine::parse("/1uw", "%r1").unwrap();
        assert_eq!(u.lines(&memory(&[0xff; 4])), ["%r1+0x0:\t4294967295"]);
        let f = Examine::parse("/2fw", "%r0+0x8").unwrap();
        let mut bytes = 1.5f32.to_le_bytes().to_vec();
        bytes.extend((-2.0f32).to_le_bytes());
        assert_eq!(f.lines(&memory(&bytes)), ["%r0+0x8:\t1.5\t-2"]);
        let t = Examine::parse("/1tb", "%r0").unwrap();
        assert_eq!(t.lines(&memory(&[5])), ["%r0+0x0:\t00000101"]);
        // Nine bytes: a line of eight, then one.
        let nine = Examine::parse("/9xb", "%r0").unwrap();
        assert_eq!(nine.lines(&memory(&[0; 9])).len(), 2);
    }

    #[test]
    fn the_contents_end_is_said_and_mistakes_are_refused() {
        let x = Examine::parse("/4xw", "%r0").unwrap();
        assert_eq!(
            x.lines(&RefMemory {
                length: 6,
                bytes: vec![1, 0, 0, 0, 2, 0]
            }),
            [
                "%r0+0x0:\t0x00000001",
                "(the contents end at byte 6: 1 of 4 units shown)"
            ]
        );
        assert!(Examine::parse("/2fb", "%r0").is_err());
        assert!(Examine::parse("/2q", "%r0").is_err());
        assert!(Examine::parse("/0x", "%r0").is_err());
        assert!(Examine::parse("/99999x", "%r0").is_err());
        assert!(Examine::parse("", "%r0+zz").is_err());
        assert!(Examine::parse("", "").is_err());
    }
}
