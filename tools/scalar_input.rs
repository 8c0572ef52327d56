//! `--input` scalars read as `iree-run-module` reads them.
//!
//! The reference (`tooling/function_io.c`, `base/string_view.c`) trims the
//! text, turns `(null)` and `(ignored)` into a zero, and otherwise hands the
//! text to the C library: `strtol`/`strtoll` with base 0 (so `017` is octal
//! and `0x1F` hex) for integers, `strtof`/`strtod` for floats (hex floats,
//! `inf`, `nan`). Whatever follows the number is ignored (`5abc` is 5), an
//! i32 takes the low 32 bits of a `long` (`4294967297` is 1), and it fails
//! when no digits were read, when the integer overflows `long`/`long long`,
//! when a float underflows to zero, or when the text does not fit its
//! scratch buffer (15 characters for i32, 31 for the others). irvm calls
//! the same C functions the same way (`irvm::number_text`, which tensor
//! elements use too), so the values are the same bits.

use irvm::Value;

/// Parses `text` (already trimmed) as a value of calling-convention kind
/// `kind` (`i`, `I`, `f`, `F`); `None` when the reference would refuse it.
pub fn parse_scalar(text: &str, kind: char) -> Option<Value> {
    if text == "(null)" || text == "(ignored)" {
        return match kind {
            'i' => Some(Value::I32(0)),
            'I' => Some(Value::I64(0)),
            'f' => Some(Value::F32(0.0)),
            'F' => Some(Value::F64(0.0)),
            _ => None,
        };
    }
    use irvm::number_text::{atod, atof, atoi_i32, atoi_i64};
    match kind {
        'i' => atoi_i32(text).map(Value::I32),
        'I' => atoi_i64(text).map(Value::I64),
        'f' => atof(text).map(Value::F32),
        'F' => atod(text).map(Value::F64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i32_of(t: &str) -> Option<i32> {
        match parse_scalar(t, 'i') {
            Some(Value::I32(v)) => Some(v),
            _ => None,
        }
    }

    #[test]
    fn integers_read_like_strtol() {
        assert_eq!(i32_of("017"), Some(15));
        assert_eq!(i32_of("0x1F"), Some(31));
        assert_eq!(i32_of("5abc"), Some(5));
        assert_eq!(i32_of("4294967297"), Some(1));
        assert_eq!(i32_of("-0"), Some(0));
        assert_eq!(i32_of("abc"), None);
        assert_eq!(i32_of("1234567890123456"), None);
        assert_eq!(i32_of("(null)"), Some(0));
        assert!(parse_scalar("99999999999999999999", 'I').is_none());
    }

    #[test]
    fn floats_read_like_strtod() {
        assert!(matches!(parse_scalar("0x1p3", 'F'), Some(Value::F64(v)) if v == 8.0));
        assert!(matches!(parse_scalar("1.5xyz", 'f'), Some(Value::F32(v)) if v == 1.5));
        assert!(matches!(parse_scalar("-inf", 'F'), Some(Value::F64(v)) if v == f64::NEG_INFINITY));
        assert!(parse_scalar("1e-400", 'F').is_none());
        assert!(parse_scalar("x", 'f').is_none());
    }
}
