//! Values that cross the boundary between the VM and its embedder: function
//! arguments and results, list elements, host-function parameters.

use std::fmt;

use crate::refs::Ref;

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

/// Formats `v` as C's `printf("%g", v)` does (6 significant digits, the
/// shorter of fixed and exponent notation, trailing zeros removed).
pub fn format_g(v: f64) -> String {
    format_g_precision(v, 6)
}

/// Formats `v` as C's `printf("%.Pg", v)` does for precision `P`
/// (`precision` significant digits; 0 counts as 1).
pub fn format_g_precision(v: f64, precision: usize) -> String {
    let precision = i32::try_from(precision.clamp(1, 400)).unwrap_or(400);
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // The exponent after rounding to `precision` significant digits.
    let sci = format!("{:.*e}", (precision - 1) as usize, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..precision).contains(&exp) {
        let mantissa = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (precision - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_printf() {
        let cases: &[(f64, &str)] = &[
            (1.5811388, "1.58114"),
            (1.0 / 3.0, "0.333333"),
            (12.182494, "12.1825"),
            (1e30, "1e+30"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (-2.5, "-2.5"),
            (3.0, "3"),
            (999999.5, "1e+06"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
            (-0.0, "-0"),
        ];
        for (v, want) in cases {
            assert_eq!(format_g(*v), *want, "{v}");
        }
    }

    #[test]
    fn g_format_with_precision_matches_printf() {
        let cases: &[(f64, usize, &str)] = &[
            (f64::from(0.1f32), 9, "0.100000001"),
            (f64::from(1.8446743e19f32), 9, "1.8446743e+19"),
            (f64::from(-2147483648.0f32), 9, "-2.14748365e+09"),
            (0.1, 17, "0.10000000000000001"),
            (std::f64::consts::E, 17, "2.7182818284590451"),
            (-2147483648.0, 17, "-2147483648"),
            (1e100, 17, "1e+100"),
            (5e-324, 17, "4.9406564584124654e-324"),
            (107.5, 9, "107.5"),
        ];
        for (v, p, want) in cases {
            assert_eq!(format_g_precision(*v, *p), *want, "{v} %.{p}g");
        }
    }

    #[test]
    fn display_is_tagged() {
        assert_eq!(Value::I32(5).to_string(), "i32=5");
        assert_eq!(Value::I64(-7).to_string(), "i64=-7");
        assert_eq!(Value::F32(0.5).to_string(), "f32=0.5");
    }
}
