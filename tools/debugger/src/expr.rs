//! What the debugger reads and prints: register references (`%i3`,
//! `%i0:1`, `%r2`), a frame's registers, the values they hold, and how
//! those print in gdb's formats (`/x`, `/d`, `/t`, `/f`). The expressions
//! over them are `expression.rs`'s.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use irvm::bytecode::isa::{Bank, I32_INDEX_MASK, REF_INDEX_MASK};
use irvm::{Ref, TypeDef, Value};

use super::c_int::{char_literal, float_to_long, IntType, Integer};
use super::float_text::{f32_text, f64_text};
use super::DebugCommandError;

/// A register a command names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RegisterRef {
    /// `%iN`: one i32 slot (an f32 when the function uses it as one).
    I32(u16),
    /// `%iN:N+1`: an i64 (or f64) in two slots.
    Pair(u16),
    /// `%rN`: a ref register.
    Ref(u16),
}

impl RegisterRef {
    /// Parses `%iN`, `%iN:N+1` or `%rN`.
    pub fn parse(text: &str) -> Result<RegisterRef, DebugCommandError> {
        let t = text.trim();
        let bad = || {
            DebugCommandError(format!(
                "`{t}` is not a register (expected %iN, %iN:M or %rN)"
            ))
        };
        let number = |s: &str| -> Result<u64, DebugCommandError> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            // All digits: too many of them is a number out of range.
            Ok(s.parse::<u64>().unwrap_or(u64::MAX))
        };
        let in_range = |n: u64, max: u16, bank: &str| {
            u16::try_from(n).ok().filter(|&n| n <= max).ok_or_else(|| {
                DebugCommandError(format!(
                    "`{t}` is out of range ({bank} registers are numbered 0 to {max})"
                ))
            })
        };
        if let Some(n) = t.strip_prefix("%r") {
            return Ok(RegisterRef::Ref(in_range(
                number(n)?,
                REF_INDEX_MASK,
                "ref",
            )?));
        }
        let body = t.strip_prefix("%i").ok_or_else(bad)?;
        match body.split_once(':') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if Some(b) != a.checked_add(1) {
                    return Err(DebugCommandError(format!(
                        "`{t}` is not a register pair (%iN:N+1)"
                    )));
                }
                in_range(b, I32_INDEX_MASK, "i32")?;
                Ok(RegisterRef::Pair(in_range(a, I32_INDEX_MASK, "i32")?))
            }
            None => Ok(RegisterRef::I32(in_range(
                number(body)?,
                I32_INDEX_MASK,
                "i32",
            )?)),
        }
    }
}

impl std::fmt::Display for RegisterRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegisterRef::I32(n) => write!(f, "%i{n}"),
            RegisterRef::Pair(n) => write!(f, "%i{n}:{}", u32::from(*n) + 1),
            RegisterRef::Ref(n) => write!(f, "%r{n}"),
        }
    }
}

/// A value the debugger shows.
#[derive(Clone, Debug)]
pub enum DebugValue {
    /// A 32-bit integer register or constant.
    I32(i32),
    /// A 64-bit integer (register pair or constant).
    I64(i64),
    /// An f32 register.
    F32(f32),
    /// An f64 register pair or a constant with a fraction.
    F64(f64),
    /// An integer of a C type the VM has no register of (`unsigned int`,
    /// `unsigned long`, `char`, `short`, ...), made by an expression
    /// (`1u`, `(unsigned char)200`); never an `int` or a `long`, which are
    /// [`DebugValue::I32`] and [`DebugValue::I64`] ([`DebugValue::integer`]).
    Integer(Integer),
    /// A ref register or list element.
    Ref(Ref),
    /// Text (a row of buffer bytes, a host object's rendering).
    Text(String),
}

/// gdb's print formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// As the value's type prints.
    #[default]
    Natural,
    /// `/x`: the bits in hexadecimal.
    Hex,
    /// `/d`: a signed decimal integer.
    Decimal,
    /// `/u`: an unsigned decimal integer.
    Unsigned,
    /// `/o`: the bits in octal (`0` first, as C writes octal).
    Octal,
    /// `/t`: the bits in binary.
    Binary,
    /// `/c`: the low byte as a `char` (`65 'A'`).
    Char,
    /// `/f`: the bits as a floating-point number of the same width.
    Float,
}

impl Format {
    /// The format of a `/x`-style letter.
    pub fn from_letter(letter: &str) -> Result<Format, DebugCommandError> {
        Ok(match letter {
            "x" => Format::Hex,
            "d" => Format::Decimal,
            "u" => Format::Unsigned,
            "o" => Format::Octal,
            "t" => Format::Binary,
            "c" => Format::Char,
            "f" => Format::Float,
            "" => Format::Natural,
            other => {
                return Err(DebugCommandError(format!(
                    "undefined output format `{other}` (x, d, u, o, t, c or f)"
                )))
            }
        })
    }
}

impl DebugValue {
    /// The value of a VM value (a list element, a result).
    pub fn from_value(v: &Value) -> DebugValue {
        match v {
            Value::I32(x) => DebugValue::I32(*x),
            Value::I64(x) => DebugValue::I64(*x),
            Value::F32(x) => DebugValue::F32(*x),
            Value::F64(x) => DebugValue::F64(*x),
            Value::Ref(r) => DebugValue::Ref(r.clone()),
            Value::None => DebugValue::Ref(Ref::Null),
        }
    }

    /// The value of a C integer: an `int` is an [`DebugValue::I32`], a
    /// `long` an [`DebugValue::I64`], the other types an
    /// [`DebugValue::Integer`].
    pub fn integer(i: Integer) -> DebugValue {
        match i.ty() {
            IntType::Int => DebugValue::I32(i.value() as i32),
            IntType::Long => DebugValue::I64(i.value() as i64),
            _ => DebugValue::Integer(i),
        }
    }

    /// The C integer it is, if an integer: an i32 is an `int`, an i64 a
    /// `long`, a comparison's result an `int`.
    pub fn as_integer(&self) -> Option<Integer> {
        Some(match self {
            DebugValue::I32(x) => Integer::new(IntType::Int, i128::from(*x)),
            DebugValue::I64(x) => Integer::new(IntType::Long, i128::from(*x)),
            DebugValue::Integer(i) => *i,
            _ => return None,
        })
    }

    /// The type's name as the debugger shows it.
    pub fn type_name(&self) -> String {
        match self {
            DebugValue::I32(_) => "i32".into(),
            DebugValue::I64(_) => "i64".into(),
            DebugValue::Integer(i) => i.ty().name().into(),
            DebugValue::F32(_) => "f32".into(),
            DebugValue::F64(_) => "f64".into(),
            DebugValue::Ref(r) => match r {
                Ref::Null => "ref".into(),
                Ref::Buffer(_) => "!vm.buffer".into(),
                Ref::List(l) => format!("!vm.list<{}>", type_def_name(l.element_type())),
                Ref::Host(h) => format!("!{}", h.type_name().trim_start_matches('!')),
            },
            DebugValue::Text(_) => "text".into(),
        }
    }

    /// The bits and their width, for the bit-level formats.
    fn bits(&self) -> Option<(u64, u32)> {
        Some(match self {
            DebugValue::I32(v) => (*v as u32 as u64, 32),
            DebugValue::F32(v) => (v.to_bits() as u64, 32),
            DebugValue::I64(v) => (*v as u64, 64),
            DebugValue::F64(v) => (v.to_bits(), 64),
            DebugValue::Integer(i) => (i.bits(), i.ty().bits()),
            _ => return None,
        })
    }

    /// The value as text in `format`; refs print as [`describe_ref`].
    pub fn format(&self, format: Format, host: Option<&RefFormatter>) -> String {
        if let DebugValue::Ref(r) = self {
            return describe_ref(r, host);
        }
        if let DebugValue::Text(t) = self {
            return t.clone();
        }
        let Some((bits, width)) = self.bits() else {
            return String::new();
        };
        // The bits read as a signed integer of their width.
        let signed = || {
            let shift = 64 - width;
            ((bits << shift) as i64) >> shift
        };
        match format {
            Format::Natural => match self {
                DebugValue::I32(v) => v.to_string(),
                DebugValue::I64(v) => v.to_string(),
                DebugValue::Integer(i) => i.natural(),
                DebugValue::F32(v) => f32_text(*v),
                DebugValue::F64(v) => f64_text(*v),
                _ => String::new(),
            },
            // The integer formats read a value's bits, a float's too, as
            // gdb 13 does (`print/d -1.5` is -4613937818241073152).
            Format::Hex => format!("{bits:#x}"),
            Format::Binary => format!("{bits:b}"),
            Format::Octal if bits == 0 => "0".into(),
            Format::Octal => format!("0{bits:o}"),
            Format::Unsigned => bits.to_string(),
            Format::Decimal if width == 1 => bits.to_string(),
            Format::Decimal => signed().to_string(),
            // `/c`: the value as a `char` (a float's integer part), an
            // `unsigned char` as one.
            Format::Char => {
                let byte = match self {
                    DebugValue::F32(v) => float_to_long(f64::from(*v)) as u8,
                    DebugValue::F64(v) => float_to_long(*v) as u8,
                    _ => bits as u8,
                };
                match self {
                    DebugValue::Integer(i) if i.ty() == IntType::UChar => {
                        format!("{byte} {}", char_literal(byte))
                    }
                    _ => format!("{} {}", byte as i8, char_literal(byte)),
                }
            }
            Format::Float => match width {
                32 => f32_text(f32::from_bits(bits as u32)),
                64 => f64_text(f64::from_bits(bits)),
                _ => match self {
                    DebugValue::Integer(i) => i.value().to_string(),
                    _ => bits.to_string(),
                },
            },
        }
    }
}

/// A type of list elements as the VM names it.
pub fn type_def_name(t: TypeDef) -> String {
    match t {
        TypeDef::Value(v) => format!("{v:?}").to_lowercase(),
        TypeDef::Ref(r) => format!("!{}", r.name().trim_start_matches('!')),
        TypeDef::Any => "?".into(),
    }
}

/// Renders host objects (such as `!hal.buffer_view`) the library does not
/// know; `None` for objects it does not render either.
pub type RefFormatter = std::sync::Arc<dyn Fn(&Ref) -> Option<String> + Send + Sync>;

/// How many list elements and buffer bytes a one-line rendering shows.
pub const PREVIEW_ELEMENTS: usize = 16;

/// A ref on one line: `(null)`, `!vm.list<i32>[3] {1, 2, 3}`,
/// `!vm.buffer[20] {01 02 ...}`, or what `host` makes of a host object.
pub fn describe_ref(r: &Ref, host: Option<&RefFormatter>) -> String {
    match r {
        Ref::Null => "(null)".into(),
        Ref::List(l) => {
            let n = l.len();
            let mut out = format!("!vm.list<{}>[{n}] {{", type_def_name(l.element_type()));
            for i in 0..n.min(PREVIEW_ELEMENTS) {
                if i > 0 {
                    out.push_str(", ");
                }
                match l.get(i as u32) {
                    Ok(Value::Ref(inner)) => out.push_str(&inner.to_string()),
                    Ok(v) => {
                        out.push_str(&DebugValue::from_value(&v).format(Format::Natural, None))
                    }
                    Err(_) => out.push('?'),
                }
            }
            if n > PREVIEW_ELEMENTS {
                out.push_str(", ...");
            }
            out.push('}');
            out
        }
        Ref::Buffer(b) => {
            let n = b.len();
            let head = b.with_bytes(|bytes| bytes[..n.min(PREVIEW_ELEMENTS)].to_vec());
            let mut out = format!("!vm.buffer[{n}] {{");
            for (i, byte) in head.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{byte:02x}");
            }
            if n > PREVIEW_ELEMENTS {
                out.push_str(" ...");
            }
            out.push('}');
            out
        }
        Ref::Host(_) => host.and_then(|f| f(r)).unwrap_or_else(|| r.to_string()),
    }
}

/// Most children a list or buffer expands to.
pub const MAX_CHILDREN: usize = 1024;

/// The parts a ref expands to (a DAP variable's children): a list's
/// elements, a buffer's bytes in rows of 16 (the first [`MAX_CHILDREN`]).
pub fn ref_children(r: &Ref) -> Vec<(String, DebugValue)> {
    match r {
        Ref::List(l) => (0..l.len().min(MAX_CHILDREN))
            .map(|i| {
                let v = l
                    .get(i as u32)
                    .map(|v| DebugValue::from_value(&v))
                    .unwrap_or_else(|t| DebugValue::Text(format!("<{}>", t.message)));
                (format!("[{i}]"), v)
            })
            .collect(),
        Ref::Buffer(b) => {
            let n = b.len().min(MAX_CHILDREN * 16);
            let bytes = b.with_bytes(|bytes| bytes[..n].to_vec());
            let mut rows = vec![("length".to_string(), DebugValue::I64(b.len() as i64))];
            for (k, row) in bytes.chunks(16).enumerate() {
                let text: Vec<String> = row.iter().map(|x| format!("{x:02x}")).collect();
                rows.push((
                    format!("[{:#06x}]", k * 16),
                    DebugValue::Text(text.join(" ")),
                ));
            }
            rows
        }
        _ => Vec::new(),
    }
}

/// Whether a ref has children ([`ref_children`]).
pub fn expandable(r: &Ref) -> bool {
    matches!(r, Ref::List(_) | Ref::Buffer(_))
}

/// A frame's registers, as expressions read them: the i32 slots, the refs,
/// and how the function uses each i32 slot (for f32/f64).
pub struct RegisterFile<'a> {
    /// The i32 register slots.
    pub i32s: &'a [u32],
    /// The ref registers.
    pub refs: &'a [Ref],
    /// What each i32 slot holds, as the function's instructions use it.
    pub banks: &'a BTreeMap<u16, Bank>,
}

impl RegisterFile<'_> {
    /// The value of a register, typed by the function's use of it.
    pub fn read(&self, r: RegisterRef) -> Result<DebugValue, DebugCommandError> {
        let out_of_range = |what: &str, n: usize| {
            DebugCommandError(format!(
                "{r} is out of range (the frame has {n} {what} registers)"
            ))
        };
        match r {
            RegisterRef::Ref(k) => self
                .refs
                .get(k as usize)
                .map(|v| DebugValue::Ref(v.clone()))
                .ok_or_else(|| out_of_range("ref", self.refs.len())),
            RegisterRef::I32(k) => {
                let v = *self
                    .i32s
                    .get(k as usize)
                    .ok_or_else(|| out_of_range("i32", self.i32s.len()))?;
                Ok(match self.banks.get(&k) {
                    Some(Bank::F32) => DebugValue::F32(f32::from_bits(v)),
                    _ => DebugValue::I32(v as i32),
                })
            }
            RegisterRef::Pair(k) => {
                let at = k as usize;
                let (Some(&lo), Some(&hi)) = (self.i32s.get(at), self.i32s.get(at + 1)) else {
                    return Err(out_of_range("i32", self.i32s.len()));
                };
                let bits = lo as u64 | (hi as u64) << 32;
                Ok(match self.banks.get(&k) {
                    Some(Bank::F64) => DebugValue::F64(f64::from_bits(bits)),
                    _ => DebugValue::I64(bits as i64),
                })
            }
        }
    }
}
