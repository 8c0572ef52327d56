//! Values as gtest prints them in a failure message (`UniversalPrint`:
//! chars with their codes, floats at the precision that round-trips,
//! containers as `{ a, b, ... }`), and numbers as a C++ stream prints them.

use irvm::number_text::format_g_precision;

/// An element type gtest prints and `expect_all_true` compares with zero.
pub trait GtestValue: Copy {
    /// Whether the value equals zero (`-0.0` does; NaN does not).
    fn is_zero(&self) -> bool;
    /// Zero as gtest prints it (`0`, or `'\0'` for the char types).
    fn zero_text() -> &'static str;
    /// The value as gtest's `UniversalPrint` prints it.
    fn gtest_text(&self) -> String;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl GtestValue for $t {
            fn is_zero(&self) -> bool {
                *self == 0
            }
            fn zero_text() -> &'static str {
                "0"
            }
            fn gtest_text(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
integer!(i16, i32, i64, u16, u32, u64);

macro_rules! character {
    ($($t:ty),*) => {$(
        impl GtestValue for $t {
            fn is_zero(&self) -> bool {
                *self == 0
            }
            fn zero_text() -> &'static str {
                "'\\0'"
            }
            fn gtest_text(&self) -> String {
                char_and_code(i32::from(*self), *self as u8)
            }
        }
    )*};
}
character!(i8, u8);

impl GtestValue for f32 {
    fn is_zero(&self) -> bool {
        *self == 0.0
    }
    fn zero_text() -> &'static str {
        "0"
    }
    fn gtest_text(&self) -> String {
        format_g_precision(f64::from(*self), resolution_f32(*self))
    }
}

impl GtestValue for f64 {
    fn is_zero(&self) -> bool {
        *self == 0.0
    }
    fn zero_text() -> &'static str {
        "0"
    }
    fn gtest_text(&self) -> String {
        format_g_precision(*self, resolution_f64(*self))
    }
}

/// A `signed char`/`unsigned char` as gtest prints it (`PrintCharAndCodeTo`):
/// the character literal, then its code in decimal (not for `'\0'`) and in
/// hex (not when the literal already is a hex escape or the code is 1..9):
/// `'A' (65, 0x41)`, `'\x1' (1)`, `'\xFF' (-1)`, `'\n' (10, 0xA)`.
fn char_and_code(code: i32, byte: u8) -> String {
    let (literal, hex_escape) = match byte {
        0 => ("\\0".to_string(), false),
        b'\'' => ("\\'".to_string(), false),
        b'\\' => ("\\\\".to_string(), false),
        0x07 => ("\\a".to_string(), false),
        0x08 => ("\\b".to_string(), false),
        0x0C => ("\\f".to_string(), false),
        b'\n' => ("\\n".to_string(), false),
        b'\r' => ("\\r".to_string(), false),
        b'\t' => ("\\t".to_string(), false),
        0x0B => ("\\v".to_string(), false),
        0x20..=0x7E => ((byte as char).to_string(), false),
        _ => (format!("\\x{byte:X}"), true),
    };
    let mut text = format!("'{literal}'");
    if code == 0 {
        return text;
    }
    text.push_str(&format!(" ({code}"));
    if !(hex_escape || (1..=9).contains(&code)) {
        text.push_str(&format!(", 0x{code:X}"));
    }
    text.push(')');
    text
}

/// The digits gtest prints a float with (`AppropriateResolution`): 6 when
/// the value rounds to itself at 6 significant digits by its test, else 9.
fn resolution_f32(value: f32) -> usize {
    let v = value.abs();
    let six = if v < 1_000_000.0 {
        let mul: f32 = scale_below_million(f64::from(v)) as f32;
        ((v * mul + 0.5) as i32) as f32 / mul == v
    } else if v < 1e10 {
        let div: f32 = scale_below_ten_billion(f64::from(v)) as f32;
        ((v / div + 0.5) as i32) as f32 * div == v
    } else {
        false
    };
    if six {
        6
    } else {
        9
    }
}

/// [`resolution_f32`] for a double: 6, else 17.
fn resolution_f64(value: f64) -> usize {
    let v = value.abs();
    let six = if v < 1_000_000.0 {
        let mul = scale_below_million(v);
        ((v * mul + 0.5) as i32) as f64 / mul == v
    } else if v < 1e10 {
        let div = scale_below_ten_billion(v);
        ((v / div + 0.5) as i32) as f64 * div == v
    } else {
        false
    };
    if six {
        6
    } else {
        17
    }
}

/// gtest's multiplier bringing a value below 1,000,000 to six integer digits.
fn scale_below_million(v: f64) -> f64 {
    match v {
        v if v >= 100_000.0 => 1.0,
        v if v >= 10_000.0 => 1e1,
        v if v >= 1_000.0 => 1e2,
        v if v >= 100.0 => 1e3,
        v if v >= 10.0 => 1e4,
        v if v >= 1.0 => 1e5,
        v if v >= 0.1 => 1e6,
        v if v >= 0.01 => 1e7,
        v if v >= 0.001 => 1e8,
        v if v >= 0.0001 => 1e9,
        _ => 1e10,
    }
}

/// gtest's divisor bringing a value from 1e6 to 1e10 to six integer digits.
fn scale_below_ten_billion(v: f64) -> f64 {
    match v {
        v if v >= 1e9 => 10_000.0,
        v if v >= 1e8 => 1_000.0,
        v if v >= 1e7 => 100.0,
        v if v >= 1e6 => 10.0,
        _ => 1.0,
    }
}

/// A container as gtest prints it: `{ a, b, c }`, at most 32 elements
/// then `, ...`; `{}` when empty.
pub fn container<T: GtestValue>(values: &[T]) -> String {
    const MAX_COUNT: usize = 32;
    let mut text = String::from("{");
    for (count, v) in values.iter().enumerate() {
        if count > 0 {
            text.push(',');
            if count == MAX_COUNT {
                text.push_str(" ...");
                break;
            }
        }
        text.push(' ');
        text.push_str(&v.gtest_text());
    }
    if !values.is_empty() {
        text.push(' ');
    }
    text.push('}');
    text
}

/// A number as a default C++ stream prints it (`%g`, 6 digits).
pub fn stream_f64(v: f64) -> String {
    format_g_precision(v, 6)
}

/// A number as a C++ stream prints it after `std::scientific` and
/// `std::setprecision(3)` (`%.3e`: `1.500e-03`, `-2.000e+00`, `nan`).
pub fn scientific_3(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let text = format!("{v:.3e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars_print_with_their_codes_as_gtest_prints_them() {
        assert_eq!(0i8.gtest_text(), "'\\0'");
        assert_eq!(1i8.gtest_text(), "'\\x1' (1)");
        assert_eq!(65i8.gtest_text(), "'A' (65, 0x41)");
        assert_eq!((-1i8).gtest_text(), "'\\xFF' (-1)");
        assert_eq!(10u8.gtest_text(), "'\\n' (10, 0xA)");
        assert_eq!(200u8.gtest_text(), "'\\xC8' (200)");
    }

    #[test]
    fn floats_print_at_the_resolution_that_round_trips() {
        assert_eq!(1.5f32.gtest_text(), "1.5");
        assert_eq!(0.1f32.gtest_text(), "0.1");
        assert_eq!(0.123_456_79f32.gtest_text(), "0.123456791");
        assert_eq!(0.1f64.gtest_text(), "0.1");
        assert_eq!((1.0f64 / 3.0).gtest_text(), "0.33333333333333331");
        assert_eq!(2.0f64.gtest_text(), "2");
        assert_eq!(f32::NAN.gtest_text(), "nan");
    }

    #[test]
    fn containers_print_at_most_32_elements() {
        assert_eq!(container::<i32>(&[]), "{}");
        assert_eq!(container(&[1i32, 0]), "{ 1, 0 }");
        let many: Vec<i32> = (0..40).collect();
        let text = container(&many);
        assert!(text.ends_with("30, 31, ... }"), "{text}");
    }

    #[test]
    fn scientific_prints_as_a_cpp_stream() {
        assert_eq!(scientific_3(0.0015), "1.500e-03");
        assert_eq!(scientific_3(-2.0), "-2.000e+00");
        assert_eq!(scientific_3(0.0), "0.000e+00");
        assert_eq!(scientific_3(1e300), "1.000e+300");
    }
}
