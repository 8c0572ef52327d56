//! gdb's `printf "FORMAT", ARG...`: the command's text split into its
//! format string (C escapes read as gdb 13's `printf` reads them) and its
//! arguments, and the format applied to the arguments' values with C's
//! conversions (`%d %i %u %x %X %o %c %s %p %f %e %g %E %G %%`, flags
//! `- + space 0 #`, width, precision, and the length modifiers `h l ll z`
//! (and `L` of a float conversion), each only where gdb's format parser
//! takes it), in gdb's words for mistakes. The result is bytes, as gdb
//! writes them: `%c` writes one byte (its argument converted to C's `int`,
//! then `unsigned char`), and a NUL byte ends the piece it is in (the text
//! before a conversion and the conversion), as gdb prints each piece as a
//! C string.

use super::c_int::float_to_long;
use super::{DebugCommandError, DebugValue};

/// The parts of a `printf` command's text: the format string (escapes
/// read) and each argument's text, in order.
pub fn split_printf(text: &str) -> Result<(String, Vec<String>), DebugCommandError> {
    let err = |m: &str| Err(DebugCommandError(m.to_string()));
    let text = text.trim();
    if text.is_empty() {
        return err("Argument required (format-control string and values to print).");
    }
    let Some(body) = text.strip_prefix('"') else {
        return err("Bad format string, missing '\"'");
    };
    let mut format = String::new();
    let mut chars = body.char_indices();
    let end = loop {
        let Some((at, c)) = chars.next() else {
            return err("Bad format string, non-terminated '\"'");
        };
        match c {
            '"' => break at + 1,
            '\\' => {
                let Some((_, e)) = chars.next() else {
                    return err("Bad format string, non-terminated '\"'");
                };
                format.push(match e {
                    '\\' => '\\',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'e' => '\u{1b}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    '"' => '"',
                    other => {
                        return Err(DebugCommandError(format!(
                            "Unrecognized escape character \\{other} in format string."
                        )))
                    }
                });
            }
            c => format.push(c),
        }
    };
    let rest = body[end..].trim_start();
    if rest.is_empty() {
        return Ok((format, Vec::new()));
    }
    let Some(rest) = rest.strip_prefix(',') else {
        return err("Invalid argument syntax");
    };
    let args: Vec<String> = split_arguments(rest)
        .into_iter()
        .map(|a| a.trim().to_string())
        .collect();
    if args.iter().any(String::is_empty) {
        return err("Invalid argument syntax");
    }
    Ok((format, args))
}

/// `text` split at its commas outside parentheses, as gdb's expression
/// parser takes `printf`'s arguments one expression at a time: the commas
/// of a call's arguments (`square(1, 2)`) stay in that argument.
pub(crate) fn split_arguments(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// One `%` conversion of a format.
#[derive(Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alternate: bool,
    width: usize,
    precision: Option<usize>,
    /// Bits of an integer conversion: 16 (`h`), 32 (no modifier) or 64.
    bits: u32,
    /// Length modifiers seen: `l`s (0 to 2), `h`, `L`, `z`.
    longs: u8,
    short: bool,
    long_double: bool,
    size_t: bool,
    conversion: char,
}

/// A piece of a format as gdb cuts it: the text before a conversion with
/// the conversion, or the text after the last one.
#[derive(Debug)]
enum Piece {
    Text(String),
    Conversion(String, Spec),
}

/// Most a width or precision may be (gdb passes them to the C library;
/// this keeps a typo from asking for gigabytes).
const MAX_WIDTH: usize = 4096;

/// Whether gdb's format parser takes `spec`'s flags and length modifier
/// with its conversion (gdbsupport/format.cc: `bad`).
fn modifiers_fit(spec: &Spec) -> bool {
    let signs = spec.space || spec.plus;
    match spec.conversion {
        'u' | 'o' | 'x' | 'X' | 'd' | 'i' => {
            let hash_on_u = spec.conversion == 'u' && spec.alternate;
            let sign_on_unsigned = "uoxX".contains(spec.conversion) && signs;
            !hash_on_u && !sign_on_unsigned && !spec.long_double
        }
        'c' => {
            spec.longs < 2
                && !spec.short
                && !spec.long_double
                && spec.precision.is_none()
                && !spec.zero
                && !signs
        }
        'p' => {
            spec.longs == 0
                && !spec.short
                && !spec.long_double
                && spec.precision.is_none()
                && !spec.alternate
                && !spec.zero
                && !signs
        }
        's' => spec.longs < 2 && !spec.short && !spec.long_double && !spec.zero && !signs,
        _ => spec.longs == 0 && !spec.short,
    }
}

fn parse_format(format: &str) -> Result<Vec<Piece>, DebugCommandError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = format.chars().peekable();
    let number = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        let mut n: usize = 0;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(d as usize);
            chars.next();
        }
        n
    };
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            text.push('%');
            continue;
        }
        let mut spec = Spec {
            bits: 32,
            ..Spec::default()
        };
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                '#' => spec.alternate = true,
                _ => break,
            }
            chars.next();
        }
        let star = || {
            Err(DebugCommandError(
                "`*' not supported for precision or width in printf".into(),
            ))
        };
        if chars.peek() == Some(&'*') {
            return star();
        }
        spec.width = number(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            if chars.peek() == Some(&'*') {
                return star();
            }
            spec.precision = Some(number(&mut chars));
        }
        if spec.width > MAX_WIDTH || spec.precision.is_some_and(|p| p > MAX_WIDTH) {
            return Err(DebugCommandError(format!(
                "width or precision over {MAX_WIDTH} in printf format"
            )));
        }
        // One length modifier, as gdb's format parser reads them (`hh`
        // and `j` are not among them: their second letter is then read
        // as the conversion).
        match chars.peek() {
            Some('h') => {
                spec.short = true;
                spec.bits = 16;
                chars.next();
            }
            Some('l') => {
                chars.next();
                spec.longs = 1;
                if chars.peek() == Some(&'l') {
                    chars.next();
                    spec.longs = 2;
                }
                spec.bits = 64;
            }
            Some('L') => {
                spec.long_double = true;
                chars.next();
            }
            Some('z') => {
                spec.size_t = true;
                spec.bits = 64;
                chars.next();
            }
            _ => {}
        }
        let Some(conversion) = chars.next() else {
            return Err(DebugCommandError(
                "Incomplete format specifier at end of format string".into(),
            ));
        };
        match conversion {
            'n' => {
                return Err(DebugCommandError(
                    "Format specifier `n' not supported in printf".into(),
                ))
            }
            c if !"diuxXocspfeEgG".contains(c) => {
                return Err(DebugCommandError(format!(
                    "Unrecognized format specifier '{c}' in printf"
                )))
            }
            _ => {}
        }
        spec.conversion = conversion;
        if !modifiers_fit(&spec) {
            return Err(DebugCommandError(format!(
                "Inappropriate modifiers to format specifier '{conversion}' in printf"
            )));
        }
        pieces.push(Piece::Conversion(std::mem::take(&mut text), spec));
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// `format` applied to `args`; `render` gives a value's text for `%s`
/// (as `print` shows it).
pub fn format_printf(
    format: &str,
    args: &[DebugValue],
    render: impl Fn(&DebugValue) -> String,
) -> Result<Vec<u8>, DebugCommandError> {
    let pieces = parse_format(format)?;
    let wanted = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Conversion(..)))
        .count();
    if wanted != args.len() {
        return Err(DebugCommandError(
            "Wrong number of arguments for specified format-string".into(),
        ));
    }
    let mut out = Vec::new();
    let mut values = args.iter();
    for piece in pieces {
        let mut bytes = match piece {
            Piece::Text(t) => t.into_bytes(),
            Piece::Conversion(before, spec) => {
                let Some(v) = values.next() else { break };
                let mut bytes = before.into_bytes();
                bytes.extend(convert(&spec, v, &render)?);
                bytes
            }
        };
        // gdb prints each piece as a C string: a NUL (`%c` of 0) ends it.
        if let Some(nul) = bytes.iter().position(|&b| b == 0) {
            bytes.truncate(nul);
        }
        out.extend(bytes);
    }
    Ok(out)
}

/// An argument as an integer, as C's varargs pass it.
fn integer(v: &DebugValue) -> Result<i64, DebugCommandError> {
    Ok(match v {
        DebugValue::I32(x) => i64::from(*x),
        DebugValue::I64(x) => *x,
        // (An `unsigned long` past `long` passes its bits, as C's varargs do.)
        DebugValue::Integer(i) => i.value() as i64,
        // A float through a `long`, as gdb converts one (a NaN is the
        // greatest `long`).
        DebugValue::F32(x) => float_to_long(f64::from(*x)),
        DebugValue::F64(x) => float_to_long(*x),
        DebugValue::Ref(_) | DebugValue::Text(_) => {
            return Err(DebugCommandError(format!(
                "Value of type {} can't be converted to integer.",
                v.type_name()
            )))
        }
    })
}

/// An argument as a double.
fn double(v: &DebugValue) -> Result<f64, DebugCommandError> {
    Ok(match v {
        DebugValue::F32(x) => f64::from(*x),
        DebugValue::F64(x) => *x,
        DebugValue::Integer(i) => i.value() as f64,
        other => integer(other)? as f64,
    })
}

/// One conversion's bytes.
fn convert(
    spec: &Spec,
    v: &DebugValue,
    render: &impl Fn(&DebugValue) -> String,
) -> Result<Vec<u8>, DebugCommandError> {
    let (sign, body) = match spec.conversion {
        'd' | 'i' => {
            let n = truncate_signed(integer(v)?, spec.bits);
            let sign = if n < 0 {
                "-"
            } else if spec.plus {
                "+"
            } else if spec.space {
                " "
            } else {
                ""
            };
            (sign, digits(n.unsigned_abs(), 10, spec, false))
        }
        'u' | 'x' | 'X' | 'o' => {
            let n = truncate_unsigned(integer(v)?, spec.bits);
            let base = match spec.conversion {
                'o' => 8,
                'u' => 10,
                _ => 16,
            };
            ("", digits(n, base, spec, spec.conversion == 'X'))
        }
        'c' => {
            if spec.longs > 0 {
                return Err(DebugCommandError(
                    "expected wchar_t argument for %lc".into(),
                ));
            }
            // C's `%c`: the argument as an `int`, written as an
            // `unsigned char`: one byte, whatever it is.
            let byte = truncate_unsigned(integer(v)?, 8) as u8;
            let fill = vec![b' '; spec.width.saturating_sub(1)];
            return Ok(if spec.left {
                [vec![byte], fill].concat()
            } else {
                [fill, vec![byte]].concat()
            });
        }
        's' => {
            let mut text = render(v);
            if let Some(p) = spec.precision {
                text = text.chars().take(p).collect();
            }
            return Ok(pad("", &text, spec, false).into_bytes());
        }
        'p' => {
            // gdb's `%p`: `0x` and the hex digits, `(nil)` for 0.
            let n = integer(v)?;
            let text = if n == 0 {
                "(nil)".to_string()
            } else {
                format!("{:#x}", n as u64)
            };
            return Ok(pad("", &text, spec, false).into_bytes());
        }
        _ => {
            let x = double(v)?;
            let sign = if x.is_sign_negative() && !x.is_nan() {
                "-"
            } else if spec.plus {
                "+"
            } else if spec.space {
                " "
            } else {
                ""
            };
            (sign, float_body(x.abs(), spec))
        }
    };
    let numeric_zero =
        spec.zero && !spec.left && (spec.precision.is_none() || "fFeEgG".contains(spec.conversion));
    Ok(pad(sign, &body, spec, numeric_zero).into_bytes())
}

fn truncate_signed(n: i64, bits: u32) -> i64 {
    match bits {
        8 => i64::from(n as i8),
        16 => i64::from(n as i16),
        32 => i64::from(n as i32),
        _ => n,
    }
}

fn truncate_unsigned(n: i64, bits: u32) -> u64 {
    match bits {
        8 => u64::from(n as u8),
        16 => u64::from(n as u16),
        32 => u64::from(n as u32),
        _ => n as u64,
    }
}

/// An integer's digits with C's precision (minimum digits) and `#`.
fn digits(n: u64, base: u32, spec: &Spec, upper: bool) -> String {
    let mut d = match base {
        8 => format!("{n:o}"),
        16 if upper => format!("{n:X}"),
        16 => format!("{n:x}"),
        _ => n.to_string(),
    };
    if let Some(p) = spec.precision {
        if p == 0 && n == 0 {
            d.clear();
        }
        while d.len() < p {
            d.insert(0, '0');
        }
    }
    if spec.alternate {
        match base {
            8 if !d.starts_with('0') => d.insert(0, '0'),
            16 if n != 0 => d.insert_str(0, if upper { "0X" } else { "0x" }),
            _ => {}
        }
    }
    d
}

/// `sign` and `body` padded to the width: spaces before (after with
/// `-`), or zeros between the sign (and `0x`) and the digits.
fn pad(sign: &str, body: &str, spec: &Spec, zeros: bool) -> String {
    let len = sign.chars().count() + body.chars().count();
    let fill = spec.width.saturating_sub(len);
    if spec.left {
        format!("{sign}{body}{}", " ".repeat(fill))
    } else if zeros {
        let (prefix, rest) = match body.get(..2) {
            Some("0x" | "0X") => body.split_at(2),
            _ => ("", body),
        };
        format!("{sign}{prefix}{}{rest}", "0".repeat(fill))
    } else {
        format!("{}{sign}{body}", " ".repeat(fill))
    }
}

/// A non-negative double as C's `%f`, `%e` or `%g` writes it.
fn float_body(x: f64, spec: &Spec) -> String {
    let upper = spec.conversion.is_ascii_uppercase();
    if x.is_nan() || x.is_infinite() {
        let t = if x.is_nan() { "nan" } else { "inf" };
        return if upper { t.to_uppercase() } else { t.into() };
    }
    let p = spec.precision.unwrap_or(6);
    let text = match spec.conversion.to_ascii_lowercase() {
        'f' => {
            let t = format!("{x:.p$}");
            if spec.alternate && p == 0 {
                format!("{t}.")
            } else {
                t
            }
        }
        'e' => exponent_form(x, p, spec.alternate),
        _ => {
            // %g: %e's exponent X picks %f (precision P-1-X) or %e
            // (P-1), trailing zeros removed unless `#`.
            let p = p.max(1);
            let probe = exponent_form(x, p - 1, false);
            let exp: i64 = probe
                .rsplit_once('e')
                .and_then(|(_, e)| e.parse().ok())
                .unwrap_or(0);
            let t = if (exp as i128) < p as i128 && exp >= -4 {
                let fp = (p as i64 - 1 - exp).max(0) as usize;
                format!("{x:.fp$}")
            } else {
                exponent_form(x, p - 1, false)
            };
            if spec.alternate {
                t
            } else {
                strip_fraction_zeros(&t)
            }
        }
    };
    if upper {
        text.to_uppercase()
    } else {
        text
    }
}

/// `d.ddde±XX` with `p` digits after the point.
fn exponent_form(x: f64, p: usize, point: bool) -> String {
    let t = format!("{x:.p$e}");
    let (mantissa, exp) = t.split_once('e').unwrap_or((&t, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    let dot = if point && p == 0 { "." } else { "" };
    format!("{mantissa}{dot}e{sign}{:02}", exp.unsigned_abs())
}

/// `%g`'s removal of trailing zeros of the fraction (and a bare point).
fn strip_fraction_zeros(t: &str) -> String {
    let (number, exp) = match t.split_once('e') {
        Some((m, e)) => (m, format!("e{e}")),
        None => (t, String::new()),
    };
    let number = if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    };
    format!("{number}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printf_bytes(text: &str, args: &[DebugValue]) -> Result<Vec<u8>, String> {
        let (format, _) = split_printf(text).map_err(|e| e.0)?;
        format_printf(&format, args, |v| format!("<{}>", v.type_name())).map_err(|e| e.0)
    }

    fn printf(text: &str, args: &[DebugValue]) -> Result<String, String> {
        printf_bytes(text, args).map(|b| String::from_utf8(b).expect("UTF-8"))
    }

    #[test]
    fn integers_as_c_prints_them() {
        let v = [DebugValue::I32(-5), DebugValue::I32(255)];
        assert_eq!(printf("\"%d %x\\n\"", &v).unwrap(), "-5 ff\n");
        assert_eq!(printf("\"%u|%X\"", &v).unwrap(), "4294967291|FF");
        assert_eq!(
            printf(
                "\"%5d|%-5d|%05d\"",
                &[
                    DebugValue::I32(-5),
                    DebugValue::I32(7),
                    DebugValue::I32(-42)
                ]
            )
            .unwrap(),
            "   -5|7    |-0042"
        );
        assert_eq!(
            printf(
                "\"%#x %#o %+d % d\"",
                &[
                    DebugValue::I32(255),
                    DebugValue::I32(8),
                    DebugValue::I32(3),
                    DebugValue::I32(3)
                ]
            )
            .unwrap(),
            "0xff 010 +3  3"
        );
        assert_eq!(
            printf(
                "\"%lx %x %hd\"",
                &[
                    DebugValue::I32(-1),
                    DebugValue::I64(1 << 32 | 7),
                    DebugValue::I32(0x1ffff)
                ]
            )
            .unwrap(),
            "ffffffffffffffff 7 -1"
        );
        assert_eq!(
            printf(
                "\"%.3d|%c%c|100%%\"",
                &[
                    DebugValue::I32(7),
                    DebugValue::I32(72),
                    DebugValue::I32(105)
                ]
            )
            .unwrap(),
            "007|Hi|100%"
        );
    }

    #[test]
    fn floats_as_c_prints_them() {
        let x = [DebugValue::F32(1.5)];
        assert_eq!(printf("\"%f\"", &x).unwrap(), "1.500000");
        assert_eq!(
            printf(
                "\"%.2f|%e|%g\"",
                &[
                    DebugValue::F64(1.23456),
                    DebugValue::F64(1234.5),
                    DebugValue::F64(0.0001)
                ]
            )
            .unwrap(),
            "1.23|1.234500e+03|0.0001"
        );
        assert_eq!(
            printf(
                "\"%g|%g|%G\"",
                &[
                    DebugValue::F64(100000.0),
                    DebugValue::F64(1e6),
                    DebugValue::F64(1e-5)
                ]
            )
            .unwrap(),
            "100000|1e+06|1E-05"
        );
        assert_eq!(printf("\"%f\"", &[DebugValue::I32(2)]).unwrap(), "2.000000");
        assert_eq!(
            printf("\"%8.3f|\"", &[DebugValue::F64(-2.5)]).unwrap(),
            "  -2.500|"
        );
    }

    #[test]
    fn strings_take_the_printed_value() {
        assert_eq!(
            printf("\"[%s]\"", &[DebugValue::I32(1)]).unwrap(),
            "[<i32>]"
        );
        assert_eq!(printf("\"[%.2s]\"", &[DebugValue::I32(1)]).unwrap(), "[<i]");
    }

    #[test]
    fn mistakes_in_gdbs_words() {
        assert_eq!(
            printf("", &[]).unwrap_err(),
            "Argument required (format-control string and values to print)."
        );
        assert_eq!(
            printf("%d", &[]).unwrap_err(),
            "Bad format string, missing '\"'"
        );
        assert_eq!(
            printf("\"abc", &[]).unwrap_err(),
            "Bad format string, non-terminated '\"'"
        );
        assert_eq!(
            printf("\"%y\"", &[]).unwrap_err(),
            "Unrecognized format specifier 'y' in printf"
        );
        assert_eq!(
            printf("\"%d %d\"", &[DebugValue::I32(1)]).unwrap_err(),
            "Wrong number of arguments for specified format-string"
        );
        assert_eq!(
            printf("\"\\q\"", &[]).unwrap_err(),
            "Unrecognized escape character \\q in format string."
        );
        assert_eq!(
            printf("\"%d\" 5", &[]).unwrap_err(),
            "Invalid argument syntax"
        );
        assert_eq!(
            printf("\"%\"", &[]).unwrap_err(),
            "Incomplete format specifier at end of format string"
        );
        assert!(printf("\"%d\"", &[DebugValue::Ref(irvm::Ref::Null)])
            .unwrap_err()
            .contains("can't be converted to integer"));
        let (_, args) = split_printf("\"%d %d\", %i1 , 5").unwrap();
        assert_eq!(args, ["%i1", "5"]);
        // A call's own commas stay in its argument.
        let (_, args) = split_printf("\"%d %d\", f(1, g(2, 3)), %i0").unwrap();
        assert_eq!(args, ["f(1, g(2, 3))", "%i0"]);
        let (_, args) = split_printf("\"%d\", f(1, 2").unwrap();
        assert_eq!(args, ["f(1, 2"]);
        assert!(split_printf("\"%d\", f(1),").is_err());
    }

    /// `%c` writes its argument's low byte as it is (gdb 13 on x86-64
    /// writes `\xff` for `printf "%c", -1`), and a NUL ends its piece: the
    /// text before the conversion stays, the text after it in the same
    /// piece (its padding) goes, the next piece prints.
    #[test]
    fn c_writes_one_byte_and_a_nul_ends_its_piece() {
        let i = DebugValue::I32;
        assert_eq!(
            printf_bytes("\"%c|%c|%c|%c\\n\"", &[i(-1), i(256), i(321), i(200)]).unwrap(),
            b"\xff||A|\xc8\n"
        );
        assert_eq!(
            printf_bytes(
                "\"a%cb|c%cd|e%5cf|%-3c|\\n\"",
                &[i(256), i(0), i(0), i(0x141)]
            )
            .unwrap(),
            b"ab|cd|e    f|A  |\n"
        );
        assert_eq!(
            printf_bytes("\"x%-3cy|%c%c\"", &[i(0), i(0xc3), i(0xa9)]).unwrap(),
            b"xy|\xc3\xa9"
        );
        assert_eq!(
            printf_bytes(
                "\"%c|%c\"",
                &[DebugValue::F64(65.7), DebugValue::I64(4294967361)]
            )
            .unwrap(),
            b"A|A"
        );
        assert_eq!(
            printf("\"%lc\"", &[i(65)]).unwrap_err(),
            "expected wchar_t argument for %lc"
        );
    }

    /// Flags and length modifiers only where gdb's format parser takes
    /// them, with its messages; `%p` as gdb prints it.
    #[test]
    fn modifiers_as_gdbs_format_parser_takes_them() {
        let i = DebugValue::I32;
        for (format, wrong) in [
            ("%hc", 'c'),
            ("%+c", 'c'),
            ("%05c", 'c'),
            ("%.2c", 'c'),
            ("%llc", 'c'),
            ("%+s", 's'),
            ("%0s", 's'),
            ("%hs", 's'),
            ("%lf", 'f'),
            ("%hf", 'f'),
            ("% u", 'u'),
            ("%+x", 'x'),
            ("%#u", 'u'),
            ("%Ld", 'd'),
            ("%#p", 'p'),
        ] {
            assert_eq!(
                printf(&format!("\"{format}\""), &[i(65)]).unwrap_err(),
                format!("Inappropriate modifiers to format specifier '{wrong}' in printf"),
                "{format}"
            );
        }
        assert_eq!(
            printf("\"%hhd\"", &[i(1)]).unwrap_err(),
            "Unrecognized format specifier 'h' in printf"
        );
        assert_eq!(
            printf("\"%jd\"", &[i(1)]).unwrap_err(),
            "Unrecognized format specifier 'j' in printf"
        );
        assert_eq!(
            printf("\"%5%\"", &[]).unwrap_err(),
            "Unrecognized format specifier '%' in printf"
        );
        assert_eq!(
            printf("\"%n\"", &[i(1)]).unwrap_err(),
            "Format specifier `n' not supported in printf"
        );
        for star in ["%*d", "%5.*d"] {
            assert_eq!(
                printf(&format!("\"{star}\""), &[i(1)]).unwrap_err(),
                "`*' not supported for precision or width in printf"
            );
        }
        assert_eq!(
            printf("\"\\'\"", &[]).unwrap_err(),
            "Unrecognized escape character \\' in format string."
        );
        assert_eq!(
            printf(
                "\"%#c|%-3c|%#d|%zu|%lld|%hd|%Lf|%p|%p|%-6p|\"",
                &[
                    i(65),
                    i(65),
                    i(65),
                    i(-1),
                    i(5),
                    i(70000),
                    DebugValue::F64(65.5),
                    i(65),
                    i(0),
                    i(65)
                ]
            )
            .unwrap(),
            "A|A  |65|18446744073709551615|5|4464|65.500000|0x41|(nil)|0x41  |"
        );
    }
}
