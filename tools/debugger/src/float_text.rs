//! Floats as text the way gdb 13 prints them, the one place every view of
//! a float goes through (`print`, `output`, `display`, `info registers`,
//! `info locals`, watchpoints' old and new values, `x/f`, `/f`, list
//! elements, DAP's variables and `evaluate`).
//!
//! gdb (`target-float.c`, `host_float_ops::to_string` and
//! `floatformat_printf_format`) prints a number with C's `%.Ng`, N the
//! format's `DECIMAL_DIG`: `ceil(1 + p * log10(2))` for `p` bits of
//! precision, 9 for a `float` (24 bits) and 17 for a `double` (53). That
//! is enough digits to read the same value back, but not the shortest
//! such text: `1.1` prints as `1.1000000000000001`, `(float)1/3` as
//! `0.333333343`. Infinities are `inf` and `-inf`; a NaN shows its sign
//! and its mantissa's bits in hex (`floatformat_mantissa`):
//! `-nan(0x8000000000000)` for x86's default double NaN, `nan(0x400000)`
//! for a quiet f32 one.

use irvm::number_text::format_g_precision;

/// An f32 as gdb prints a `float`: `%.9g`, or `inf`, or `nan(0x...)`.
pub fn f32_text(v: f32) -> String {
    // The mantissa's 23 bits in one group.
    gdb_float_text(
        f64::from(v),
        v.is_sign_negative(),
        u64::from(v.to_bits() & 0x7f_ffff),
        23,
        9,
    )
}

/// An f64 as gdb prints a `double`: `%.17g`, or `inf`, or `nan(0x...)`.
pub fn f64_text(v: f64) -> String {
    gdb_float_text(
        v,
        v.is_sign_negative(),
        v.to_bits() & 0xf_ffff_ffff_ffff,
        52,
        17,
    )
}

/// `value` (widened exactly from its own type) as gdb prints a float of
/// `mantissa_bits` stored mantissa bits (`mantissa`: those bits) and
/// `digits` significant decimal digits.
fn gdb_float_text(
    value: f64,
    negative: bool,
    mantissa: u64,
    mantissa_bits: u32,
    digits: usize,
) -> String {
    let sign = if negative { "-" } else { "" };
    if value.is_nan() {
        return format!("{sign}nan(0x{})", mantissa_hex(mantissa, mantissa_bits));
    }
    if value.is_infinite() {
        return format!("{sign}inf");
    }
    format_g_precision(value, digits)
}

/// A mantissa in hex as gdb's `floatformat_mantissa` writes it: the top
/// `bits % 32` bits (32 when that is 0) with `%lx`, then each lower group
/// of 32 bits with `%08lx`, so a double's `0x1` mantissa is `000000001`.
fn mantissa_hex(mantissa: u64, bits: u32) -> String {
    let top_bits = if bits % 32 == 0 { 32 } else { bits % 32 };
    let mut low_bits = bits - top_bits;
    let mut text = format!("{:x}", mantissa >> low_bits);
    while low_bits > 0 {
        low_bits -= 32;
        text.push_str(&format!("{:08x}", (mantissa >> low_bits) & 0xffff_ffff));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each as gdb 13.1 prints `print EXPR` with an x86-64 C program
    /// loaded.
    #[test]
    fn floats_print_as_gdb_prints_them() {
        let doubles: &[(f64, &str)] = &[
            (1.1, "1.1000000000000001"),
            (1.0 / 3.0, "0.33333333333333331"),
            (1e300, "1.0000000000000001e+300"),
            (100.0, "100"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (1e-5, "1.0000000000000001e-05"),
            (0.0001, "0.0001"),
            (123456789.0, "123456789"),
            (-1.5, "-1.5"),
            (0.0, "0"),
            (-0.0, "-0"),
            (5e-324, "4.9406564584124654e-324"),
            (1e-310, "9.9999999999999694e-311"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (
                f64::from_bits(0xfff8_0000_0000_0000),
                "-nan(0x8000000000000)",
            ),
            (
                f64::from_bits(0x7ff8_0000_0000_0000),
                "nan(0x8000000000000)",
            ),
            (f64::from_bits(0x7ff0_0000_0000_0001), "nan(0x000000001)"),
            (f64::from_bits(0x7ff0_0001_0000_0000), "nan(0x100000000)"),
        ];
        for (v, want) in doubles {
            assert_eq!(f64_text(*v), *want, "{v:?}");
        }
        let floats: &[(f32, &str)] = &[
            (1.0 / 3.0, "0.333333343"),
            (16777216.0, "16777216"),
            (0.1, "0.100000001"),
            (1e-45, "1.40129846e-45"),
            (f32::MAX, "3.40282347e+38"),
            (2.5, "2.5"),
            (f32::from_bits(0xffc0_0000), "-nan(0x400000)"),
            (f32::from_bits(0x7f80_0001), "nan(0x1)"),
            (f32::NEG_INFINITY, "-inf"),
        ];
        for (v, want) in floats {
            assert_eq!(f32_text(*v), *want, "{v:?}");
        }
    }
}
