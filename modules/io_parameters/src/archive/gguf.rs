//! The `gguf` reader: ggml's GGUF, versions 2 and 3, little-endian
//! (<https://github.com/ggml-org/ggml/blob/master/docs/gguf.md>).
//!
//! A file is the magic `GGUF`, the version, the tensor count and the
//! metadata count (64-bit), the metadata key/value pairs, the tensor infos
//! (name, dimensions, ggml type, offset), then the tensor data from the
//! next multiple of `general.alignment` (default 32); each tensor's offset
//! is relative to the data's start and a multiple of the alignment. Sizes
//! are not stored: a tensor's size comes from its type's block size and
//! bytes per block ([`GGML_TYPES`]).
//!
//! Differences from IREE's parser, each deliberate:
//! - the ggml type numbers are ggml's (`I8` is 24, as in the spec and
//!   ggml.h); IREE 3.13 still has `I8`, `I16`, `I32` at 16, 17, 18, where
//!   ggml has put `IQ2_XXS`, `IQ2_XS`, `IQ3_XXS` since 2024, and knows no
//!   type past them (BF16, the IQ quants, TQ1_0, MXFP4...); `Q8_1` blocks
//!   are ggml's 36 bytes (IREE's table says 40);
//! - the first dimension must be a whole number of blocks and each offset a
//!   multiple of the alignment (ggml's own loader checks both);
//! - `general.alignment` must be a power of two;
//! - arrays may nest (to a depth of [`MAX_ARRAY_DEPTH`]); IREE refuses any.
//!
//! Like IREE, a file with no tensors is read as empty without reading its
//! metadata. Every count and length is checked against the bytes left
//! before anything is allocated or skipped.

use super::bytes::{align_up, slice, u32_at, u64_at};
use super::{ArchiveEntry, ArchiveError, EntryData, Format};

/// `GGUF` read as a little-endian `u32`.
pub const MAGIC: u32 = 0x4655_4747;
/// The data alignment without `general.alignment`.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// How deep arrays of arrays may nest.
pub const MAX_ARRAY_DEPTH: u32 = 8;

/// A ggml type: its name, elements per block and bytes per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GgmlType {
    /// ggml's name (`q4_0`).
    pub name: &'static str,
    /// Elements per block.
    pub block_size: u64,
    /// Bytes per block.
    pub type_size: u64,
}

const fn t(name: &'static str, block_size: u64, type_size: u64) -> Option<GgmlType> {
    Some(GgmlType {
        name,
        block_size,
        type_size,
    })
}

/// ggml's types by number (`ggml.h`'s `enum ggml_type` and the block structs
/// of `ggml-common.h`, 256-element super-blocks for the k-quants); `None`
/// for numbers ggml has retired.
pub const GGML_TYPES: [Option<GgmlType>; 40] = [
    t("f32", 1, 4),
    t("f16", 1, 2),
    t("q4_0", 32, 18),
    t("q4_1", 32, 20),
    None, // 4: q4_2, removed
    None, // 5: q4_3, removed
    t("q5_0", 32, 22),
    t("q5_1", 32, 24),
    t("q8_0", 32, 34),
    t("q8_1", 32, 36),
    t("q2_K", 256, 84),
    t("q3_K", 256, 110),
    t("q4_K", 256, 144),
    t("q5_K", 256, 176),
    t("q6_K", 256, 210),
    t("q8_K", 256, 292),
    t("iq2_xxs", 256, 66),
    t("iq2_xs", 256, 74),
    t("iq3_xxs", 256, 98),
    t("iq1_s", 256, 50),
    t("iq4_nl", 32, 18),
    t("iq3_s", 256, 110),
    t("iq2_s", 256, 82),
    t("iq4_xs", 256, 136),
    t("i8", 1, 1),
    t("i16", 1, 2),
    t("i32", 1, 4),
    t("i64", 1, 8),
    t("f64", 1, 8),
    t("iq1_m", 256, 56),
    t("bf16", 1, 2),
    None, // 31: q4_0_4_4, removed (repacked at load time now)
    None, // 32: q4_0_4_8, removed
    None, // 33: q4_0_8_8, removed
    t("tq1_0", 256, 54),
    t("tq2_0", 256, 66),
    None, // 36: iq4_nl_4_4, removed
    None, // 37: iq4_nl_4_8, removed
    None, // 38: iq4_nl_8_8, removed
    t("mxfp4", 32, 17),
];

/// Names of the retired type numbers, for the error.
fn retired(number: u32) -> Option<&'static str> {
    Some(match number {
        4 => "q4_2",
        5 => "q4_3",
        31 => "q4_0_4_4",
        32 => "q4_0_4_8",
        33 => "q4_0_8_8",
        36 => "iq4_nl_4_4",
        37 => "iq4_nl_4_8",
        38 => "iq4_nl_8_8",
        _ => return None,
    })
}

/// Metadata value types.
mod value {
    pub const U8: u32 = 0;
    pub const I8: u32 = 1;
    pub const U16: u32 = 2;
    pub const I16: u32 = 3;
    pub const U32: u32 = 4;
    pub const I32: u32 = 5;
    pub const F32: u32 = 6;
    pub const BOOL: u32 = 7;
    pub const STRING: u32 = 8;
    pub const ARRAY: u32 = 9;
    pub const U64: u32 = 10;
    pub const I64: u32 = 11;
    pub const F64: u32 = 12;
}

fn fail(offset: u64, message: String) -> ArchiveError {
    ArchiveError::new(Format::Gguf, offset, message)
}

fn short(offset: u64, message: String) -> ArchiveError {
    ArchiveError::short(Format::Gguf, offset, message)
}

/// A position in the file and the reads that advance it.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: u64,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> u64 {
        (self.bytes.len() as u64).saturating_sub(self.at)
    }

    fn truncated(&self, what: &str) -> ArchiveError {
        short(
            self.at,
            format!(
                "file truncated: {what} at byte {} is past the end of the {}-byte file",
                self.at,
                self.bytes.len()
            ),
        )
    }

    fn u32(&mut self, what: &str) -> Result<u32, ArchiveError> {
        let v = u32_at(self.bytes, self.at).ok_or_else(|| self.truncated(what))?;
        self.at += 4;
        Ok(v)
    }

    fn u64(&mut self, what: &str) -> Result<u64, ArchiveError> {
        let v = u64_at(self.bytes, self.at).ok_or_else(|| self.truncated(what))?;
        self.at += 8;
        Ok(v)
    }

    /// Skips `count` items of `size` bytes.
    fn skip(&mut self, count: u64, size: u64, what: &str) -> Result<&'a [u8], ArchiveError> {
        let len = count
            .checked_mul(size)
            .filter(|n| *n <= self.left())
            .ok_or_else(|| self.truncated(what))?;
        let s = slice(self.bytes, self.at, len).ok_or_else(|| self.truncated(what))?;
        self.at += len;
        Ok(s)
    }

    fn string(&mut self, what: &str) -> Result<&'a [u8], ArchiveError> {
        let len = self.u64(what)?;
        self.skip(len, 1, what)
    }

    /// Skips a metadata value of type `kind`, `depth` arrays deep.
    fn value(&mut self, kind: u32, depth: u32) -> Result<(), ArchiveError> {
        match kind {
            value::U8 | value::I8 | value::BOOL => self.skip(1, 1, "a metadata value").map(drop),
            value::U16 | value::I16 => self.skip(1, 2, "a metadata value").map(drop),
            value::U32 | value::I32 | value::F32 => self.skip(1, 4, "a metadata value").map(drop),
            value::U64 | value::I64 | value::F64 => self.skip(1, 8, "a metadata value").map(drop),
            value::STRING => self.string("a metadata string").map(drop),
            value::ARRAY => {
                let at = self.at;
                let element = self.u32("an array's element type")?;
                let count = self.u64("an array's length")?;
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(fail(
                        at,
                        format!("arrays nested more than {MAX_ARRAY_DEPTH} deep"),
                    ));
                }
                let fixed = match element {
                    value::U8 | value::I8 | value::BOOL => Some(1),
                    value::U16 | value::I16 => Some(2),
                    value::U32 | value::I32 | value::F32 => Some(4),
                    value::U64 | value::I64 | value::F64 => Some(8),
                    _ => None,
                };
                if let Some(size) = fixed {
                    return self.skip(count, size, "an array").map(drop);
                }
                if element != value::STRING && element != value::ARRAY {
                    // Refused even when the array is empty, as IREE does.
                    return Err(fail(
                        at,
                        format!("unknown metadata value type {element} in an array"),
                    ));
                }
                // Strings take at least 8 bytes, arrays 12: a count the
                // bytes left cannot hold fails before the loop.
                let least = if element == value::ARRAY { 12 } else { 8 };
                if count > self.left() / least {
                    return Err(short(
                        at,
                        format!(
                            "an array of {count} elements does not fit in the {} bytes left",
                            self.left()
                        ),
                    ));
                }
                for _ in 0..count {
                    self.value(element, depth + 1)?;
                }
                Ok(())
            }
            other => Err(fail(
                self.at.saturating_sub(4),
                format!("unknown metadata value type {other}"),
            )),
        }
    }
}

/// One tensor info, before the data's start is known.
struct TensorInfo<'a> {
    at: u64,
    name: &'a str,
    dims: &'a [u8],
    kind: u32,
    offset: u64,
}

/// Reads every entry of a `.gguf` file.
pub fn read(bytes: &[u8]) -> Result<Vec<ArchiveEntry>, ArchiveError> {
    let mut c = Cursor { bytes, at: 0 };
    let magic = c.u32("the magic")?;
    if magic != MAGIC {
        return Err(fail(
            0,
            format!("magic missing or invalid: {magic:08X}, expected {MAGIC:08X} (`GGUF`)"),
        ));
    }
    let version = c.u32("the version")?;
    // IREE's reader calls another version UNIMPLEMENTED (gguf_parser.c).
    match version {
        2 | 3 => {}
        1 => {
            return Err(ArchiveError::unsupported(
                Format::Gguf,
                4,
                "GGUF version 1 is not supported (its counts and lengths are 32-bit); convert the file to version 3".into(),
            ))
        }
        v if v.swap_bytes() == 2 || v.swap_bytes() == 3 => {
            return Err(ArchiveError::unsupported(
                Format::Gguf,
                4,
                format!("big-endian GGUF (version {}) is not supported", v.swap_bytes()),
            ))
        }
        v => {
            return Err(ArchiveError::unsupported(
                Format::Gguf,
                4,
                format!("GGUF version {v} is not supported (versions 2 and 3 are)"),
            ))
        }
    }
    let tensor_count = c.u64("the tensor count")?;
    let kv_count = c.u64("the metadata count")?;
    if tensor_count == 0 {
        return Ok(Vec::new());
    }

    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..kv_count {
        let key_at = c.at;
        let key = c.string("a metadata key")?;
        let kind = c.u32("a metadata value type")?;
        if key == b"general.alignment" {
            if kind != value::U32 {
                return Err(fail(
                    key_at,
                    format!("general.alignment must be a uint32 (type 4), not type {kind}"),
                ));
            }
            let v = c.u32("general.alignment")?;
            if !v.is_power_of_two() {
                return Err(fail(
                    key_at,
                    format!("general.alignment {v} is not a power of two"),
                ));
            }
            alignment = u64::from(v);
        } else {
            c.value(kind, 0)?;
        }
    }

    // Each tensor info takes at least 24 bytes.
    if tensor_count > c.left() / 24 {
        return Err(short(
            8,
            format!(
                "{tensor_count} tensors do not fit in the {} bytes left after the metadata",
                c.left()
            ),
        ));
    }
    let mut infos = Vec::new();
    for _ in 0..tensor_count {
        let at = c.at;
        let name = c.string("a tensor name")?;
        let name = std::str::from_utf8(name).map_err(|e| {
            fail(
                at,
                format!(
                    "tensor name is not UTF-8 (invalid byte at {})",
                    e.valid_up_to()
                ),
            )
        })?;
        let n_dims = c.u32("a tensor's dimension count")?;
        let dims = c.skip(u64::from(n_dims), 8, "a tensor's dimensions")?;
        let kind = c.u32("a tensor's type")?;
        let offset = c.u64("a tensor's offset")?;
        infos.push(TensorInfo {
            at,
            name,
            dims,
            kind,
            offset,
        });
    }

    let file_len = bytes.len() as u64;
    let data_start = align_up(c.at, alignment).filter(|s| *s <= file_len).ok_or_else(|| {
        short(
            c.at,
            format!(
                "the tensor data would start at the next multiple of {alignment} from byte {}, past the end of the {file_len}-byte file",
                c.at
            ),
        )
    })?;
    let data_len = file_len - data_start;

    let mut entries = Vec::with_capacity(infos.len());
    for info in infos {
        let bad = |m: String| fail(info.at, format!("tensor `{}`: {m}", info.name));
        let ty = GGML_TYPES
            .get(info.kind as usize)
            .copied()
            .flatten()
            .ok_or_else(|| match retired(info.kind) {
                Some(name) => bad(format!(
                    "ggml type {} ({name}) was removed from ggml and is not supported",
                    info.kind
                )),
                None => bad(format!("unknown ggml type {}", info.kind)),
            })?;
        let dims: Vec<u64> = info
            .dims
            .chunks_exact(8)
            .map(|d| u64::from_le_bytes(d.try_into().unwrap_or([0; 8])))
            .collect();
        let elements = dims
            .iter()
            .try_fold(1u64, |n, d| n.checked_mul(*d))
            .ok_or_else(|| {
                bad(format!(
                    "dimensions {dims:?} have more elements than fit in 64 bits"
                ))
            })?;
        let first = dims.first().copied().unwrap_or(1);
        if first % ty.block_size != 0 {
            return Err(bad(format!(
                "first dimension {first} is not a multiple of {}'s block of {} elements",
                ty.name, ty.block_size
            )));
        }
        let size = (elements / ty.block_size)
            .checked_mul(ty.type_size)
            .ok_or_else(|| {
                bad(format!(
                    "{} {dims:?} takes more bytes than fit in 64 bits",
                    ty.name
                ))
            })?;
        if info.offset % alignment != 0 {
            return Err(bad(format!(
                "offset {} is not a multiple of the alignment {alignment}",
                info.offset
            )));
        }
        if info
            .offset
            .checked_add(size)
            .is_none_or(|end| end > data_len)
        {
            return Err(bad(format!(
                "{size} bytes at offset {} outside of the {data_len}-byte tensor data",
                info.offset
            )));
        }
        entries.push(ArchiveEntry {
            key: info.name.to_string(),
            data: EntryData::Data {
                offset: data_start + info.offset,
                length: size,
            },
            info: format!("{} {dims:?}", ty.name),
        });
    }
    Ok(entries)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds GGUF files for tests.
    pub(crate) struct Gguf {
        pub(crate) version: u32,
        pub(crate) kvs: Vec<u8>,
        pub(crate) kv_count: u64,
        pub(crate) tensors: Vec<(String, Vec<u64>, u32, u64)>,
        pub(crate) alignment: u64,
        pub(crate) data_len: usize,
    }

    fn string(out: &mut Vec<u8>, s: &[u8]) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }

    impl Gguf {
        pub(crate) fn new() -> Gguf {
            Gguf {
                version: 3,
                kvs: Vec::new(),
                kv_count: 0,
                tensors: Vec::new(),
                alignment: 32,
                data_len: 0,
            }
        }

        pub(crate) fn kv(mut self, key: &str, kind: u32, value: &[u8]) -> Gguf {
            string(&mut self.kvs, key.as_bytes());
            self.kvs.extend_from_slice(&kind.to_le_bytes());
            self.kvs.extend_from_slice(value);
            self.kv_count += 1;
            self
        }

        pub(crate) fn alignment(self, a: u32) -> Gguf {
            let mut g = self.kv("general.alignment", value::U32, &a.to_le_bytes());
            g.alignment = u64::from(a);
            g
        }

        pub(crate) fn tensor(mut self, name: &str, dims: &[u64], kind: u32, offset: u64) -> Gguf {
            self.tensors
                .push((name.into(), dims.to_vec(), kind, offset));
            self
        }

        pub(crate) fn data(mut self, len: usize) -> Gguf {
            self.data_len = len;
            self
        }

        pub(crate) fn build(&self) -> Vec<u8> {
            let mut out = MAGIC.to_le_bytes().to_vec();
            out.extend_from_slice(&self.version.to_le_bytes());
            out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
            out.extend_from_slice(&self.kv_count.to_le_bytes());
            out.extend_from_slice(&self.kvs);
            for (name, dims, kind, offset) in &self.tensors {
                string(&mut out, name.as_bytes());
                out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
                for d in dims {
                    out.extend_from_slice(&d.to_le_bytes());
                }
                out.extend_from_slice(&kind.to_le_bytes());
                out.extend_from_slice(&offset.to_le_bytes());
            }
            let start = (out.len() as u64).div_ceil(self.alignment) * self.alignment;
            out.resize(start as usize + self.data_len, 0);
            out
        }
    }

    fn message(bytes: &[u8]) -> String {
        read(bytes).unwrap_err().message
    }

    fn sample() -> Gguf {
        let mut names = Vec::new();
        string(&mut names, b"x");
        string(&mut names, b"yz");
        Gguf::new()
            .kv(
                "general.name",
                value::STRING,
                &[3, 0, 0, 0, 0, 0, 0, 0, b'a', b'b', b'c'],
            )
            .kv("n", value::U8, &[1])
            .kv("b", value::BOOL, &[1])
            .kv("f", value::F64, &[0; 8])
            .kv(
                "arr",
                value::ARRAY,
                &[
                    &value::STRING.to_le_bytes()[..],
                    &2u64.to_le_bytes(),
                    &names,
                ]
                .concat(),
            )
            .kv(
                "nested",
                value::ARRAY,
                &[
                    &value::ARRAY.to_le_bytes()[..],
                    &1u64.to_le_bytes(),
                    &value::I16.to_le_bytes(),
                    &2u64.to_le_bytes(),
                    &[0; 4],
                ]
                .concat(),
            )
            .tensor("w", &[64, 2], 8, 0) // q8_0: 4 blocks of 34 bytes
            .tensor("v", &[4], 0, 160) // f32
            .data(176)
    }

    #[test]
    fn reads_tensors_after_the_aligned_metadata() {
        let bytes = sample().build();
        let entries = read(&bytes).unwrap();
        let start = bytes.len() as u64 - 176;
        assert_eq!(start % 32, 0);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].key, "w");
        assert_eq!(entries[0].info, "q8_0 [64, 2]");
        assert_eq!(
            entries[0].data,
            EntryData::Data {
                offset: start,
                length: 136
            }
        );
        assert_eq!(
            entries[1].data,
            EntryData::Data {
                offset: start + 160,
                length: 16
            }
        );
        let mut v2 = sample();
        v2.version = 2;
        assert_eq!(read(&v2.build()).unwrap(), entries);
    }

    #[test]
    fn general_alignment_moves_the_data() {
        let bytes = Gguf::new()
            .alignment(256)
            .tensor("t", &[3], 24, 0)
            .data(3)
            .build();
        let entries = read(&bytes).unwrap();
        assert_eq!(
            entries[0].data,
            EntryData::Data {
                offset: 256,
                length: 3
            }
        );
        let bad = Gguf::new()
            .alignment(48)
            .tensor("t", &[3], 24, 0)
            .data(3)
            .build();
        assert!(message(&bad).contains("power of two"));
        let wrong_type = Gguf::new()
            .kv("general.alignment", value::U64, &64u64.to_le_bytes())
            .tensor("t", &[3], 24, 0)
            .data(3)
            .build();
        assert!(message(&wrong_type).contains("uint32"));
    }

    #[test]
    fn block_sizes_of_quantized_types() {
        for (number, ty) in GGML_TYPES.iter().enumerate() {
            let Some(ty) = ty else { continue };
            let bytes = Gguf::new()
                .tensor("t", &[ty.block_size * 2, 3], number as u32, 0)
                .data(ty.type_size as usize * 6)
                .build();
            assert_eq!(
                read(&bytes).unwrap()[0].data.length(),
                ty.type_size * 6,
                "{}",
                ty.name
            );
        }
        let partial = Gguf::new().tensor("t", &[16], 2, 0).data(64).build();
        assert!(message(&partial).contains("not a multiple of q4_0's block"));
    }

    #[test]
    fn unknown_and_retired_types_are_named() {
        let unknown = Gguf::new().tensor("t", &[1], 40, 0).data(64).build();
        assert!(message(&unknown).contains("tensor `t`: unknown ggml type 40"));
        let retired = Gguf::new().tensor("t", &[32], 4, 0).data(64).build();
        assert!(message(&retired).contains("ggml type 4 (q4_2) was removed"));
    }

    #[test]
    fn versions_and_magic() {
        let mut g = sample();
        g.version = 1;
        assert!(message(&g.build()).contains("version 1 is not supported"));
        g.version = 4;
        assert!(message(&g.build()).contains("version 4 is not supported"));
        g.version = 3u32.swap_bytes();
        assert!(message(&g.build()).contains("big-endian"));
        // Each UNIMPLEMENTED, as IREE's parser says it.
        for version in [1, 4, 3u32.swap_bytes()] {
            g.version = version;
            assert!(read(&g.build()).unwrap_err().unsupported, "{version}");
        }
        let mut bytes = sample().build();
        bytes[0] = b'X';
        assert!(message(&bytes).contains("magic"));
        assert!(!read(&bytes).unwrap_err().unsupported);
    }

    #[test]
    fn no_tensors_is_empty_even_with_a_huge_metadata_count() {
        let mut bytes = Gguf::new().build();
        bytes[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read(&bytes).unwrap().is_empty());
    }

    #[test]
    fn huge_counts_fail_fast() {
        let mut bytes = sample().build();
        // Tensor count.
        bytes[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(message(&bytes).contains("do not fit"));
        let mut bytes = sample().build();
        // Metadata count: runs out of bytes after the real pairs.
        bytes[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(message(&bytes).contains("truncated"));
        // An array of 2^64-1 strings, and of 2^63 u64s.
        for (kind, count) in [(value::STRING, u64::MAX), (value::U64, 1u64 << 63)] {
            let bytes = Gguf::new()
                .kv(
                    "a",
                    value::ARRAY,
                    &[&kind.to_le_bytes()[..], &count.to_le_bytes()].concat(),
                )
                .tensor("t", &[1], 0, 0)
                .data(4)
                .build();
            assert!(read(&bytes).is_err());
        }
        // A string length of 2^64-1.
        let bytes = Gguf::new()
            .kv("s", value::STRING, &u64::MAX.to_le_bytes())
            .tensor("t", &[1], 0, 0)
            .data(4)
            .build();
        assert!(message(&bytes).contains("truncated"));
    }

    #[test]
    fn deep_arrays_are_refused() {
        let mut v = Vec::new();
        for _ in 0..=MAX_ARRAY_DEPTH {
            v.extend_from_slice(&value::ARRAY.to_le_bytes());
            v.extend_from_slice(&1u64.to_le_bytes());
        }
        v.extend_from_slice(&value::U8.to_le_bytes());
        v.extend_from_slice(&1u64.to_le_bytes());
        v.push(0);
        let bytes = Gguf::new()
            .kv("a", value::ARRAY, &v)
            .tensor("t", &[1], 0, 0)
            .data(4)
            .build();
        assert!(message(&bytes).contains("nested"));
    }

    #[test]
    fn an_empty_array_of_an_unknown_type_is_refused() {
        let mut v = Vec::new();
        v.extend_from_slice(&99u32.to_le_bytes());
        v.extend_from_slice(&0u64.to_le_bytes());
        let bytes = Gguf::new()
            .kv("a", value::ARRAY, &v)
            .tensor("t", &[1], 0, 0)
            .data(4)
            .build();
        assert!(message(&bytes).contains("unknown metadata value type 99"));
    }

    #[test]
    fn offsets_and_sizes_are_checked() {
        let past = Gguf::new().tensor("t", &[4], 0, 32).data(40).build();
        assert!(message(&past).contains("outside"));
        let wrap = Gguf::new()
            .tensor("t", &[4], 0, u64::MAX - 31)
            .data(40)
            .build();
        assert!(message(&wrap).contains("outside"));
        let unaligned = Gguf::new().tensor("t", &[1], 0, 4).data(40).build();
        assert!(message(&unaligned).contains("multiple of the alignment"));
        let big = Gguf::new()
            .tensor("t", &[1 << 32, 1 << 32], 0, 0)
            .data(40)
            .build();
        assert!(message(&big).contains("fit in 64 bits"));
        let big_bytes = Gguf::new().tensor("t", &[1 << 62], 0, 0).data(40).build();
        assert!(message(&big_bytes).contains("fit in 64 bits"));
        // Overlapping tensors are read as ggml reads them.
        let overlap = Gguf::new()
            .tensor("a", &[4], 0, 0)
            .tensor("b", &[2], 0, 0)
            .data(16)
            .build();
        assert_eq!(read(&overlap).unwrap().len(), 2);
        // Data that would start past the end.
        let mut short = Gguf::new().tensor("t", &[0], 0, 0).build();
        short.truncate(short.len() - 1);
        let msg = message(&short);
        assert!(
            msg.contains("past the end") || msg.contains("truncated"),
            "{msg}"
        );
    }

    #[test]
    fn truncated_at_every_byte_is_an_error() {
        let bytes = sample().build();
        for n in 0..bytes.len() {
            let e = read(&bytes[..n]).unwrap_err();
            // IREE calls a file that ends in its header or tables
            // OUT_OF_RANGE, and tensor bytes cut short INVALID_ARGUMENT.
            assert_eq!(
                e.out_of_range,
                !e.message.contains("outside of the"),
                "{n} bytes: {e}"
            );
        }
    }

    #[test]
    fn duplicate_names_are_listed_as_iree_lists_them() {
        let bytes = Gguf::new()
            .tensor("a", &[1], 0, 0)
            .tensor("a", &[1], 0, 32)
            .data(36)
            .build();
        assert_eq!(read(&bytes).unwrap().len(), 2);
    }
}
