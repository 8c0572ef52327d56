//! Values that cross the boundary between the VM and its embedder: function
//! arguments and results, list elements, host-function parameters.

use std::fmt;

use super::Ref;
use crate::number_text::format_g;

/// A typed value: a primitive or a reference.
#[derive(Clone, Debug, Default)]
pub enum Value {
    /// A 32-bit integer (`i` in calling conventions).
    I32(i32),
    /// A 64-bit integer (`I`).
    I64(i64),
    /// A 32-bit float (`f`).
    F32(f32),
    /// A 64-bit float (`F`).
    F64(f64),
    /// A reference (`r`), possibly null.
    Ref(Ref),
    /// No value (an empty variant-list slot).
    #[default]
    None,
}

impl Value {
    /// Moves the value to the end of `out`, leaving [`Value::None`] here.
    ///
    /// The same as `out.push(std::mem::take(self))`, but copied field by
    /// field into place: a value made moments ago was written in pieces,
    /// and the whole-value copy a push makes reads it back across them, a
    /// load the processor cannot forward from its store buffer (it waits
    /// for the stores to land, a dozen cycles and more). Host functions
    /// that return values made just before pay that once per result.
    #[inline]
    pub fn take_into(&mut self, out: &mut Vec<Value>) {
        if out.len() == out.capacity() {
            out.reserve(1);
        }
        let moved = match self {
            Value::I32(x) => Value::I32(*x),
            Value::I64(x) => Value::I64(*x),
            Value::F32(x) => Value::F32(*x),
            Value::F64(x) => Value::F64(*x),
            Value::Ref(r) => Value::Ref(r.take_fieldwise()),
            Value::None => Value::None,
        };
        let len = out.len();
        // SAFETY: the capacity exceeds the length (reserved above), and
        // the slot past the length is written once before the length
        // covers it.
        unsafe {
            out.as_mut_ptr().add(len).write(moved);
            out.set_len(len + 1);
        }
        // (The ref, if any, was taken: nothing is dropped here.)
        *self = Value::None;
    }

    /// The calling-convention character of this value's kind (`i`, `I`, ...).
    pub fn kind_char(&self) -> char {
        match self {
            Value::I32(_) => 'i',
            Value::I64(_) => 'I',
            Value::F32(_) => 'f',
            Value::F64(_) => 'F',
            Value::Ref(_) => 'r',
            Value::None => 'v',
        }
    }

    /// The value as an `i32`, if it is one.
    pub fn as_i32(&self) -> Option<i32> {
        match self {
            Value::I32(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as an `i64`, if it is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::I64(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as an `f32`, if it is one.
    pub fn as_f32(&self) -> Option<f32> {
        match self {
            Value::F32(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as an `f64`, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::F64(v) => Some(*v),
            _ => None,
        }
    }

    /// The reference, if the value is one.
    pub fn as_ref(&self) -> Option<&Ref> {
        match self {
            Value::Ref(r) => Some(r),
            _ => None,
        }
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::I32(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::I64(v)
    }
}
impl From<f32> for Value {
    fn from(v: f32) -> Self {
        Value::F32(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::F64(v)
    }
}
impl From<Ref> for Value {
    fn from(v: Ref) -> Self {
        Value::Ref(v)
    }
}

/// Formats like IREE's tools print values: `i32=5`, `f32=0.333333`,
/// `f64=1e+30`, `!vm.buffer`, ...
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::I32(v) => write!(f, "i32={v}"),
            Value::I64(v) => write!(f, "i64={v}"),
            Value::F32(v) => write!(f, "f32={}", format_g(*v as f64)),
            Value::F64(v) => write!(f, "f64={}", format_g(*v)),
            Value::Ref(r) => write!(f, "{r}"),
            Value::None => f.write_str("(null)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_tagged() {
        assert_eq!(Value::I32(5).to_string(), "i32=5");
        assert_eq!(Value::I64(-7).to_string(), "i64=-7");
        assert_eq!(Value::F32(0.5).to_string(), "f32=0.5");
    }
}
