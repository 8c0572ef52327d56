//! Spelling names and strings in the assembly form ([`super::TextForm::Assembly`]):
//! escaped string literals, symbols quoted when they are not MLIR bare
//! identifiers, and one symbol per internal function.
//!
//! The assembler reads exactly these spellings back (`asm::text`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// `s` as a double-quoted literal in MLIR's escapes: `\"`, `\\`, `\n`,
/// `\t`, and `\XX` (two hex digits) for every other byte below 0x20 and
/// for 0x7F. Other characters (UTF-8 included) are written as they are.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7F}' => {
                let _ = write!(out, "\\{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// [`quoted`] of bytes that need not be UTF-8: each byte of a sequence
/// that is not is written `\XX`, which `irvm as` reads back as that byte.
pub(crate) fn quoted_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        let valid = quoted(chunk.valid());
        out.push_str(&valid[1..valid.len() - 1]);
        for b in chunk.invalid() {
            let _ = write!(out, "\\{b:02X}");
        }
    }
    out.push('"');
    out
}

/// Whether `name` is an MLIR bare identifier (`[A-Za-z_][A-Za-z0-9_$.]*`),
/// written after `@` without quotes.
pub(crate) fn is_bare_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
}

/// `@name`, or `@"name"` (escaped) when `name` is not a bare identifier.
pub(crate) fn symbol(name: &str) -> String {
    if is_bare_identifier(name) {
        format!("@{name}")
    } else {
        format!("@{}", quoted(name))
    }
}

/// An attribute key: bare when it is an identifier, else quoted.
pub(crate) fn attribute_key(key: &str) -> String {
    if is_bare_identifier(key) {
        key.to_string()
    } else {
        quoted(key)
    }
}

/// One symbol per internal function, all distinct and distinct from every
/// name in `reserved` (the imports' full names, which calls also name).
///
/// `wanted[i]` is the name function `i` would be printed under (its first
/// export's name, else its debug name, else `fnN`); `exported[i]` says
/// whether an export names it. A wanted name only one function wants is
/// kept. Among functions wanting the same name, an exported one keeps it
/// (the export and the function then read alike), else the first; the
/// others get `NAME.1`, `NAME.2`, ... (the smallest suffix no function
/// holds or wants: a function really named `NAME.1` keeps its name).
pub(crate) fn unique_function_names(
    wanted: &[String],
    exported: &[bool],
    reserved: &HashSet<&str>,
) -> Vec<String> {
    let mut wanted_by: HashMap<&str, usize> = HashMap::new();
    for name in wanted {
        *wanted_by.entry(name.as_str()).or_default() += 1;
    }
    let mut taken: HashSet<String> = reserved.iter().map(|s| s.to_string()).collect();
    let mut names: Vec<Option<String>> = vec![None; wanted.len()];
    // Names wanted once, then exported functions, then the first of the rest.
    let passes: [&dyn Fn(usize) -> bool; 3] = [
        &|i| wanted_by[wanted[i].as_str()] == 1,
        &|i| exported.get(i).copied().unwrap_or(false),
        &|_| true,
    ];
    for pass in passes {
        for i in 0..wanted.len() {
            if names[i].is_none() && pass(i) && !taken.contains(&wanted[i]) {
                taken.insert(wanted[i].clone());
                names[i] = Some(wanted[i].clone());
            }
        }
    }
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            name.unwrap_or_else(|| {
                let base = &wanted[i];
                let fresh = (1u64..)
                    .map(|n| format!("{base}.{n}"))
                    .find(|c| !taken.contains(c) && !wanted_by.contains_key(c.as_str()))
                    .unwrap_or_else(|| format!("{base}.{i}"));
                taken.insert(fresh.clone());
                fresh
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(wanted: &[&str], exported: &[bool], reserved: &[&str]) -> Vec<String> {
        let wanted: Vec<String> = wanted.iter().map(|s| s.to_string()).collect();
        unique_function_names(&wanted, exported, &reserved.iter().copied().collect())
    }

    #[test]
    fn strings_escape_quotes_backslashes_and_control_bytes() {
        assert_eq!(quoted("plain"), "\"plain\"");
        assert_eq!(
            quoted("device `d` not found: #hal.device.target<\"local\">"),
            "\"device `d` not found: #hal.device.target<\\\"local\\\">\""
        );
        assert_eq!(quoted("a\\b"), "\"a\\\\b\"");
        assert_eq!(
            quoted("a\nb\tc\0d\u{1B}\u{7F}"),
            "\"a\\nb\\tc\\00d\\1B\\7F\""
        );
        assert_eq!(quoted("µ→"), "\"µ→\"");
        assert_eq!(quoted(""), "\"\"");
    }

    #[test]
    fn symbols_are_quoted_unless_bare_identifiers() {
        assert_eq!(symbol("__init"), "@__init");
        assert_eq!(symbol("a.b$c_1"), "@a.b$c_1");
        assert_eq!(
            symbol("torch-jit-export$async"),
            "@\"torch-jit-export$async\""
        );
        assert_eq!(symbol("1st"), "@\"1st\"");
        assert_eq!(symbol("a b\"c"), "@\"a b\\\"c\"");
        assert_eq!(symbol(""), "@\"\"");
        assert_eq!(
            attribute_key("iree.abi.declaration"),
            "iree.abi.declaration"
        );
        assert_eq!(attribute_key("odd key"), "\"odd key\"");
    }

    #[test]
    fn shared_names_get_suffixes_and_exports_keep_theirs() {
        // iree-compile's modules: an internal function whose debug name is
        // `__init` and the exported `__init`.
        assert_eq!(
            unique(&["__init", "f", "__init"], &[false, true, true], &[]),
            ["__init.1", "f", "__init"]
        );
        // No export: the first keeps the name.
        assert_eq!(
            unique(&["g", "g", "g"], &[false; 3], &[]),
            ["g", "g.1", "g.2"]
        );
    }

    #[test]
    fn suffixes_skip_names_that_functions_hold_or_imports_use() {
        // A function really named `f.1` keeps it; the copy of `f` takes `f.2`.
        assert_eq!(
            unique(&["f", "f", "f.1"], &[false; 3], &[]),
            ["f", "f.2", "f.1"]
        );
        // An import's full name is never a function's symbol.
        assert_eq!(
            unique(&["hal.devices.get", "x"], &[false; 2], &["hal.devices.get"]),
            ["hal.devices.get.1", "x"]
        );
        // Odd characters survive (they are quoted when printed).
        assert_eq!(
            unique(&["a b", "a b", "$", "."], &[false; 4], &[]),
            ["a b", "a b.1", "$", "."]
        );
    }
}
