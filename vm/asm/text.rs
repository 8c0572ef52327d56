//! Lexical helpers of the assembler: comments, bracket-aware splitting and
//! searching, numbers. Every function returns sub-slices of its input, so a
//! fragment's column in the source line can always be recovered
//! ([`column_of`]) for diagnostics.

/// The part of `line` before a `//` or `#` comment that is not inside a
/// double-quoted string.
pub fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_string = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
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
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            if b == b'"' {
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

/// Parses `"..."`: the text between the quotes (no escapes: the
/// disassembler prints strings verbatim). Returns the contents and the rest.
pub fn parse_quoted(text: &str) -> Option<(&str, &str)> {
    let inner = text.trim_start().strip_prefix('"')?;
    let end = inner.find('"')?;
    Some((&inner[..end], &inner[end + 1..]))
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
