//! Numbers to text as C's `printf("%g")` writes them, which is how IREE's
//! tools print floating-point values (`iree-run-module` results, the
//! disassembler's constants, `vm.print`).

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
}
