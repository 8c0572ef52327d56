//! Lexical helpers of the assembler: comments, bracket-aware splitting and
//! searching, numbers. Every function returns sub-slices of its input, so a
//! fragment's column in the source line can always be recovered
//! ([`column_of`]) for diagnostics.

use std::borrow::Cow;

/// The part of `line` before a `//` or `#` comment that is not inside a
/// double-quoted string (in which `\"` does not end the string).
pub fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'#' => return &line[..i],
            b'/' if bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Byte position of `fragment` inside `line` when it is a sub-slice of it.
pub fn offset_in(line: &str, fragment: &str) -> Option<usize> {
    let start = line.as_ptr() as usize;
    let at = fragment.as_ptr() as usize;
    (at >= start && at + fragment.len() <= start + line.len()).then(|| at - start)
}

/// 1-based column of `fragment` in `line` (1 when it is not a sub-slice).
pub fn column_of(line: &str, fragment: &str) -> usize {
    offset_in(line, fragment).map_or(1, |o| line[..o].chars().count() + 1)
}

/// Scans `text` at bracket depth 0 (outside `()`, `[]`, `{}` and strings),
/// calling `at` with each byte position there; stops when it returns true.
fn scan_top_level(text: &str, mut at: impl FnMut(usize) -> bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        if depth == 0 && at(i) {
            return Some(i);
        }
        match b {
            b'"' => in_string = true,
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Splits `text` at top-level commas into trimmed items; empty input gives
/// no items (an item that is empty between two commas is kept as "").
pub fn split_commas(text: &str) -> Vec<&str> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let mut items = Vec::new();
    let mut start = 0;
    while let Some(comma) = scan_top_level(&text[start..], |i| text.as_bytes()[start + i] == b',') {
        items.push(text[start..start + comma].trim());
        start += comma + 1;
    }
    items.push(text[start..].trim());
    items
}

/// Finds the first top-level occurrence of `word` in `text`. With
/// `space_before`/`space_after`, the occurrence must be preceded/followed
/// by whitespace (or the start/end of `text`), as ` : ` is in
/// `%a : type` but not in the register pair `%i0:1`.
pub fn find_word(text: &str, word: &str, space_before: bool, space_after: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    scan_top_level(text, |i| {
        // Compared as bytes: `i` may be inside a multi-byte character.
        bytes[i..].starts_with(word.as_bytes())
            && (!space_before || i == 0 || bytes[i - 1].is_ascii_whitespace())
            && (!space_after
                || bytes
                    .get(i + word.len())
                    .is_none_or(|b| b.is_ascii_whitespace()))
    })
}

/// Matches the literal `lit` at the start of `text`, where any run of
/// whitespace in `lit` matches any (possibly empty) run of whitespace in
/// `text`. Returns the rest of `text`.
pub fn match_literal<'t>(text: &'t str, lit: &str) -> Option<&'t str> {
    let mut rest = text;
    for c in lit.chars() {
        if c.is_whitespace() {
            rest = rest.trim_start();
        } else {
            rest = rest.strip_prefix(c)?;
        }
    }
    Some(rest)
}

/// Parses a decimal (or `0x` hexadecimal) integer with optional sign.
pub fn parse_int(text: &str) -> Option<i128> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if !hex.is_empty() => i128::from_str_radix(hex, 16).ok()?,
        _ if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().ok()?
        }
        _ => return None,
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Parses an unsigned integer that must fit `max`.
pub fn parse_uint(text: &str, max: u64) -> Option<u64> {
    let v = parse_int(text)?;
    (0..=i128::from(max))
        .contains(&v)
        .then(|| u64::try_from(v).ok())
        .flatten()
}

/// Parses `"..."`, MLIR's string literal: `\"`, `\\`, `\n`, `\t` and
/// `\XX` (two hex digits, a byte) are escapes; a backslash before anything
/// else is kept as it is (iree-dump-module's disassembly prints strings
/// verbatim, so a Windows path there reads back unchanged). Returns the
/// contents and the rest; `None` without a closing quote or when the
/// escaped bytes are not UTF-8.
pub fn parse_quoted(text: &str) -> Option<(Cow<'_, str>, &str)> {
    let (bytes, rest) = parse_quoted_bytes(text)?;
    let contents = match bytes {
        Cow::Borrowed(b) => Cow::Borrowed(std::str::from_utf8(b).ok()?),
        Cow::Owned(b) => Cow::Owned(String::from_utf8(b).ok()?),
    };
    Some((contents, rest))
}

/// [`parse_quoted`] of a string of bytes, UTF-8 or not (a string attribute:
/// `\FF` is the byte 0xFF).
pub fn parse_quoted_bytes(text: &str) -> Option<(Cow<'_, [u8]>, &str)> {
    let inner = text.trim_start().strip_prefix('"')?;
    let bytes = inner.as_bytes();
    let mut decoded: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let contents = match decoded {
                    None => Cow::Borrowed(&bytes[..i]),
                    Some(out) => Cow::Owned(out),
                };
                return Some((contents, &inner[i + 1..]));
            }
            b'\\' => {
                let out = decoded.get_or_insert_with(|| bytes[..i].to_vec());
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match (bytes.get(i + 1), hex) {
                    (_, Some(byte)) => {
                        out.push(byte);
                        i += 3;
                    }
                    (Some(&c @ (b'"' | b'\\')), None) => {
                        out.push(c);
                        i += 2;
                    }
                    (Some(b'n'), None) => {
                        out.push(b'\n');
                        i += 2;
                    }
                    (Some(b't'), None) => {
                        out.push(b'\t');
                        i += 2;
                    }
                    _ => {
                        out.push(b'\\');
                        i += 1;
                    }
                }
            }
            b => {
                if let Some(out) = decoded.as_mut() {
                    out.push(b);
                }
                i += 1;
            }
        }
    }
    None
}

/// A symbol at the start of `text`: `@name` (up to whitespace, `,`, `(`,
/// `)`, `=` or the end) or `@"escaped name"`. Returns the name, the
/// symbol's text, whether it was quoted, and the rest after it.
pub fn take_symbol(text: &str) -> Option<(Cow<'_, str>, &str, bool, &str)> {
    let after_at = text.strip_prefix('@')?;
    if after_at.starts_with('"') {
        let (name, rest) = parse_quoted(after_at)?;
        let symbol = &text[..text.len() - rest.len()];
        return Some((name, symbol, true, rest));
    }
    let end = after_at
        .find(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '='))
        .unwrap_or(after_at.len());
    (end > 0).then(|| {
        (
            Cow::Borrowed(&after_at[..end]),
            &text[..end + 1],
            false,
            &after_at[end..],
        )
    })
}

/// Levenshtein distance, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_outside_strings_are_stripped() {
        assert_eq!(
            strip_comment("%i0 = vm.const.i32 9  // 0x9"),
            "%i0 = vm.const.i32 9  "
        );
        assert_eq!(
            strip_comment("vm.fail %i0, \"a // b\""),
            "vm.fail %i0, \"a // b\""
        );
        assert_eq!(strip_comment("vm.return # done"), "vm.return ");
    }

    #[test]
    fn strings_unescape_what_the_assembly_form_escapes() {
        let (s, rest) = parse_quoted(r#" "a \"b\" \\ \n\t\00\7F" tail"#).unwrap();
        assert_eq!(s, "a \"b\" \\ \n\t\0\u{7F}");
        assert_eq!(rest, " tail");
        // Nothing escaped: borrowed.
        assert!(matches!(
            parse_quoted("\"x\"").unwrap().0,
            Cow::Borrowed("x")
        ));
        // An unknown escape keeps its backslash (disassembly text).
        assert_eq!(parse_quoted(r#""C:\Users\x""#).unwrap().0, r"C:\Users\x");
        assert_eq!(parse_quoted(r#""µ\C2\B5""#).unwrap().0, "µµ");
        assert!(parse_quoted(r#""\FF""#).is_none(), "not UTF-8");
        assert!(parse_quoted(r#""open \""#).is_none());
        // Escaped quotes hide comments and commas.
        assert_eq!(
            strip_comment(r#"vm.fail %i0, "a\" // b" // c"#),
            r#"vm.fail %i0, "a\" // b" "#
        );
        assert_eq!(split_commas(r#""a\",b", c"#), vec![r#""a\",b""#, "c"]);
    }

    #[test]
    fn symbols_read_bare_or_quoted() {
        let (name, symbol, quoted, rest) = take_symbol("@f.1(%i0)").unwrap();
        assert_eq!(
            (name.as_ref(), symbol, quoted, rest),
            ("f.1", "@f.1", false, "(%i0)")
        );
        let (name, symbol, quoted, rest) =
            take_symbol(r#"@"torch-jit-export$async" = @f"#).unwrap();
        assert_eq!(
            (name.as_ref(), symbol, quoted, rest),
            (
                "torch-jit-export$async",
                r#"@"torch-jit-export$async""#,
                true,
                " = @f"
            )
        );
        assert_eq!(take_symbol(r#"@"a \"(b)\"""#).unwrap().0, "a \"(b)\"");
        assert!(take_symbol("@").is_none());
        assert!(take_symbol("f").is_none());
        assert!(take_symbol("@\"open").is_none());
    }

    #[test]
    fn commas_split_at_top_level_only() {
        assert_eq!(
            split_commas("%i0, ^bb1(%i1->%i2, %i3->%i4), \"a,b\""),
            vec!["%i0", "^bb1(%i1->%i2, %i3->%i4)", "\"a,b\""]
        );
        assert!(split_commas("  ").is_empty());
        assert_eq!(split_commas(", 0: ^bb1()"), vec!["", "0: ^bb1()"]);
    }

    #[test]
    fn spaced_words_skip_register_pairs() {
        let text = "%i0 ? %i2:3 : %i4:5";
        assert_eq!(find_word(text, ":", true, true), Some(12));
        assert_eq!(find_word("f(\"(\")(x)", "(", false, false), Some(1));
        assert_eq!(find_word("\"(\"(x)", "(", false, false), Some(3));
        // Found by the assembler fuzz target: a multi-byte character
        // before the word.
        assert_eq!(find_word("ە1 = x", "=", true, true), Some(4));
        assert_eq!(find_word("éé", "(", false, false), None);
    }

    #[test]
    fn literals_match_with_flexible_spaces() {
        assert_eq!(match_literal(" : !vm.buffer", " : "), Some("!vm.buffer"));
        assert_eq!(match_literal(":x", " : "), Some("x"));
        assert_eq!(match_literal("x", ":"), None);
    }

    #[test]
    fn integers_parse_as_the_disassembler_prints_them() {
        assert_eq!(parse_int("-2"), Some(-2));
        assert_eq!(parse_int("0xFF"), Some(255));
        assert_eq!(parse_int("1x"), None);
        assert_eq!(parse_uint("65536", 0xFFFF), None);
        assert_eq!(edit_distance("cmp.lte.i32.s", "cmp.lte.i32"), 2);
    }
}
