//! The directives and clauses of the assembly form (`irvm dump
//! --output=assembly`, `irvm::bytecode::disasm::assembly`): what a module
//! holds that the disassembly leaves out, stated outright.
//!
//! ```text
//! vm.module @m version 0 attributes {key = "value"}
//! vm.requires YIELD | UNWIND                       (or `none`)
//! vm.dependency [optional] @hal version 7 [flags(REQUIRED | OPTIONAL | bit N)]
//! vm.import [optional] @m.f [cconv "0i_i"] [attributes {...}] [flags(...)]
//! vm.rodata[4] [external] [compression(uncompressed)] = HEX
//! vm.module_state global_bytes 8, global_refs 3
//! vm.func @f(...) -> (...) cconv "..."|none attributes {...} registers(i32: 20, ref: 7) requires(UNWIND) {
//! vm.location[N] = none | LOCATION                 parts name entries as loc[N]
//! vm.source_map "name" = [OFFSET: loc[N], ...]     function N's, by position
//! vm.debug_database                                a database, maps or not
//! ```
//!
//! Each is optional; without it the assembler derives the value as before
//! (module and function requirements from the instructions, state sizes
//! from the globals accessed, register counts from the registers named).

use super::text::{find_word, parse_quoted, parse_uint, split_commas};
use super::{
    split_symbol, Assembler, Attributes, DeclaredFunction, DependencyDraft, Diag, SourceMapDraft,
};
use crate::loader::schema::FeatureBits;

/// `attributes {key = "value", ...}` at the start of `text` (keys bare or
/// quoted): the pairs and the text after the closing brace.
pub(super) fn parse_attributes(text: &str) -> Result<(Attributes, &str), Diag<'_>> {
    let body = text
        .strip_prefix("attributes")
        .map(str::trim_start)
        .and_then(|t| t.strip_prefix('{'))
        .ok_or_else(|| Diag::new("expected 'attributes {key = \"value\", ...}'", text))?;
    let close = find_word(body, "}", false, false)
        .ok_or_else(|| Diag::new("expected '}' to close the attributes", text))?;
    let mut attrs = Vec::new();
    for item in split_commas(&body[..close]) {
        let (key, rest) = match parse_quoted(item) {
            Some((key, rest)) if item.starts_with('"') => (key.into_owned(), rest),
            _ => {
                let end = item.find(['=', ' ']).unwrap_or(item.len());
                (item[..end].to_string(), &item[end..])
            }
        };
        let value = rest
            .trim_start()
            .strip_prefix('=')
            .and_then(parse_quoted)
            .filter(|(_, tail)| tail.trim().is_empty())
            .ok_or_else(|| Diag::new("expected an attribute like key = \"value\"", item))?;
        if key.is_empty() {
            return Err(Diag::new("expected an attribute key", item));
        }
        attrs.push((key, value.0.into_owned()));
    }
    Ok((attrs, &body[close + 1..]))
}

/// Feature bits as `FeatureBits`'s `Display` writes them: `none`, or names
/// (`EXT_F32`, `EXT_F64`, `YIELD`, `UNWIND`, `bit N`) joined by `|`.
fn parse_features(text: &str) -> Result<FeatureBits, Diag<'_>> {
    let text = text.trim();
    if text == "none" {
        return Ok(FeatureBits::empty());
    }
    let mut bits = FeatureBits::empty();
    for name in text.split('|').map(str::trim) {
        let bit = match name {
            "EXT_F32" => FeatureBits::EXT_F32,
            "EXT_F64" => FeatureBits::EXT_F64,
            "YIELD" => FeatureBits::YIELD,
            "UNWIND" => FeatureBits::UNWIND,
            _ => match name.strip_prefix("bit ").and_then(|n| parse_uint(n, 31)) {
                Some(n) => FeatureBits::from_bits_retain(1 << n),
                None => {
                    return Err(Diag::new(
                        format!("unknown feature '{name}' (expected EXT_F32, EXT_F64, YIELD, UNWIND, 'bit N' or none)"),
                        name,
                    ))
                }
            },
        };
        bits |= bit;
    }
    Ok(bits)
}

/// The `REQUIRED` flag of a dependency or an import.
pub(super) const LINK_REQUIRED: u32 = 1;
/// The `OPTIONAL` flag of a dependency or an import.
pub(super) const LINK_OPTIONAL: u32 = 2;

/// `flags(...)` at the start of `text`, a dependency's or an import's flags
/// as the disassembler writes them (`none`, or `REQUIRED`, `OPTIONAL` and
/// `bit N` joined by `|`): the bits and the text after it.
pub(super) fn parse_linkage_flags(text: &str) -> Result<(u32, &str), Diag<'_>> {
    let body = text
        .strip_prefix("flags")
        .map(str::trim_start)
        .and_then(|f| f.strip_prefix('('))
        .ok_or_else(|| Diag::new("expected 'flags(REQUIRED | OPTIONAL | bit N)'", text))?;
    let close = body
        .find(')')
        .ok_or_else(|| Diag::new("expected ')' to close the flags", text))?;
    Ok((parse_flag_names(&body[..close])?, &body[close + 1..]))
}

/// `none`, or `REQUIRED`, `OPTIONAL` and `bit N` joined by `|`.
fn parse_flag_names(text: &str) -> Result<u32, Diag<'_>> {
    let text = text.trim();
    if text == "none" {
        return Ok(0);
    }
    let mut flags = 0u32;
    for name in text.split('|').map(str::trim) {
        flags |= match name {
            "REQUIRED" => LINK_REQUIRED,
            "OPTIONAL" => LINK_OPTIONAL,
            _ => match name.strip_prefix("bit ").and_then(|n| parse_uint(n, 31)) {
                Some(n) => 1 << n,
                None => {
                    return Err(Diag::new(
                        format!(
                            "unknown flag '{name}' (expected REQUIRED, OPTIONAL, 'bit N' or none)"
                        ),
                        name,
                    ))
                }
            },
        };
    }
    Ok(flags)
}

/// Refuses a calling convention the runtime cannot parse where it is
/// declared (a function's `cconv` clause, an import), pointing at `at`
/// (the quoted text), rather than at the first call to it. `""` passes: a
/// signature whose convention string is empty loads (the dump of such a
/// module writes it back so), and a call to it is refused at the call.
pub(super) fn check_cconv<'a>(cconv: &str, at: &'a str) -> Result<(), Diag<'a>> {
    if cconv.is_empty() {
        return Ok(());
    }
    crate::program::Signature::parse(cconv)
        .map(|_| ())
        .map_err(|e| {
            Diag::new(
                format!("calling convention \"{cconv}\" does not parse: {e}"),
                at,
            )
        })
}

/// Refuses a variadic calling convention (`0CiD_i`) on a function the
/// module defines, pointing at `at`: only imports may be variadic (an
/// internal function's registers are laid out by a fixed argument list),
/// and a module declaring one is refused at load, by IREE's verifier too
/// ("internal functions cannot accept variadic arguments").
fn check_not_variadic<'a>(cconv: &str, at: &'a str) -> Result<(), Diag<'a>> {
    match crate::program::Signature::parse(cconv) {
        Ok(signature) if signature.variadic => Err(Diag::new(
            format!(
                "calling convention \"{cconv}\" is variadic: only imports may take variadic (`C...D`) arguments"
            ),
            at,
        )),
        _ => Ok(()),
    }
}

/// The clauses between a function's result list and its `{`: `cconv
/// "..."`, `attributes {...}`, `registers(i32: N, ref: M)`,
/// `requires(...)`, in any order, each at most once. Returns them and the
/// rest (which should be `{`).
pub(super) fn parse_function_clauses(mut text: &str) -> Result<(DeclaredFunction, &str), Diag<'_>> {
    let mut declared = DeclaredFunction::default();
    let mut seen: Vec<&str> = Vec::new();
    loop {
        let word = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == '{')
            .next()
            .unwrap_or("");
        if !matches!(word, "cconv" | "attributes" | "registers" | "requires") {
            return Ok((declared, text));
        }
        if seen.contains(&word) {
            return Err(Diag::new(format!("'{word}' is given twice"), word));
        }
        seen.push(word);
        text = match word {
            "cconv" => {
                let after = &text["cconv".len()..];
                // `cconv none`: a signature without a calling convention.
                match after.trim_start().strip_prefix("none") {
                    Some(rest) if !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
                        declared.cconv = Some(None);
                        rest
                    }
                    _ => {
                        let (cconv, rest) = parse_quoted(after).ok_or_else(|| {
                            Diag::new(
                                "expected a quoted calling convention or none after 'cconv'",
                                text,
                            )
                        })?;
                        check_cconv(&cconv, after.trim_start())?;
                        check_not_variadic(&cconv, after.trim_start())?;
                        declared.cconv = Some(Some(cconv.into_owned()));
                        rest
                    }
                }
            }
            "attributes" => {
                let (attrs, rest) = parse_attributes(text)?;
                declared.attrs = attrs;
                rest
            }
            _ => {
                let inner = text[word.len()..].trim_start();
                let close = inner
                    .strip_prefix('(')
                    .and_then(|i| i.find(')'))
                    .ok_or_else(|| Diag::new(format!("expected '{word}(...)'"), text))?;
                let body = &inner[1..close + 1];
                if word == "requires" {
                    declared.requirements = Some(parse_features(body)?);
                } else {
                    declared.registers = Some(parse_registers(body)?);
                }
                &inner[close + 2..]
            }
        }
        .trim_start();
    }
}

/// `i32: N, ref: M`.
fn parse_registers(text: &str) -> Result<(u32, u32), Diag<'_>> {
    let items = split_commas(text);
    let count = |bank: &str, item: Option<&&str>| {
        item.and_then(|i| i.strip_prefix(bank))
            .and_then(|i| i.trim_start().strip_prefix(':'))
            .and_then(|n| parse_uint(n.trim(), 0x7FFF))
            .map(|n| n as u32)
    };
    match (
        items.len(),
        count("i32", items.first()),
        count("ref", items.get(1)),
    ) {
        (2, Some(i32s), Some(refs)) => Ok((i32s, refs)),
        _ => Err(Diag::new(
            "expected 'registers(i32: N, ref: M)' with counts up to 32767",
            text,
        )),
    }
}

impl<'s> Assembler<'s> {
    /// `vm.requires FEATURES`.
    pub(super) fn module_requirements(&mut self, rest: &'s str) -> Result<(), Diag<'s>> {
        if self.draft.declared_requirements.is_some() {
            return Err(Diag::new("'vm.requires' appears twice", rest));
        }
        self.draft.declared_requirements = Some(parse_features(rest)?);
        Ok(())
    }

    /// `vm.dependency [optional] @name version N [flags(...)]`.
    pub(super) fn dependency(&mut self, rest: &'s str) -> Result<(), Diag<'s>> {
        let (optional, rest) = match rest.strip_prefix("optional") {
            Some(r) if r.starts_with(char::is_whitespace) => (true, r.trim_start()),
            _ => (false, rest),
        };
        let (name, tail) = split_symbol(rest)?;
        let tail = tail.trim();
        let version_text = tail
            .strip_prefix("version")
            .map(str::trim)
            .ok_or_else(|| Diag::new("expected 'version N' after the module name", tail))?;
        let end = version_text
            .find(char::is_whitespace)
            .unwrap_or(version_text.len());
        let version = parse_uint(&version_text[..end], u64::from(u32::MAX))
            .ok_or_else(|| Diag::new("expected 'version N' after the module name", tail))?;
        let after = version_text[end..].trim();
        let flags = if after.is_empty() {
            None
        } else {
            if !after.starts_with("flags") {
                return Err(Diag::new(
                    "expected 'flags(REQUIRED | OPTIONAL | bit N)' or nothing after the version",
                    after,
                ));
            }
            let (flags, rest) = parse_linkage_flags(after)?;
            if !rest.trim().is_empty() {
                return Err(Diag::new("unexpected text after the flags", rest.trim()));
            }
            if optional {
                return Err(Diag::new(
                    "'optional' and 'flags(...)' both give the flags: write OPTIONAL in flags(...)",
                    after,
                ));
            }
            Some(flags)
        };
        if self.draft.dependencies.iter().any(|d| d.name == name) {
            return Err(Diag::new(
                format!("dependency @{name} is declared twice"),
                rest,
            ));
        }
        self.draft.dependencies.push(DependencyDraft {
            name: name.into_owned(),
            minimum_version: version as u32,
            flags: flags.unwrap_or(if optional {
                LINK_OPTIONAL
            } else {
                LINK_REQUIRED
            }),
        });
        Ok(())
    }

    /// `vm.module_state global_bytes N, global_refs M`.
    pub(super) fn module_state(&mut self, rest: &'s str) -> Result<(), Diag<'s>> {
        let items = split_commas(rest);
        let value = |key: &str, item: Option<&&'s str>| {
            item.and_then(|i| i.strip_prefix(key))
                .and_then(|n| parse_uint(n.trim(), i32::MAX as u64))
        };
        match (
            items.len(),
            value("global_bytes", items.first()),
            value("global_refs", items.get(1)),
        ) {
            (2, Some(bytes), Some(refs)) if self.draft.declared_state.is_none() => {
                self.draft.declared_state = Some((bytes, refs));
                Ok(())
            }
            (2, Some(_), Some(_)) => Err(Diag::new("'vm.module_state' appears twice", rest)),
            _ => Err(Diag::new(
                "expected 'vm.module_state global_bytes N, global_refs M'",
                rest,
            )),
        }
    }

    /// `vm.location[N] = ENTRY`, in order from 0.
    pub(super) fn location(&mut self, line: &'s str) -> Result<(), Diag<'s>> {
        let inner = &line["vm.location[".len()..];
        let close = inner
            .find(']')
            .ok_or_else(|| Diag::new("expected ']' after the location number", line))?;
        let expected = self.draft.locations.entries.len();
        if parse_uint(&inner[..close], u64::from(u32::MAX)) != Some(expected as u64) {
            return Err(Diag::new(
                format!("location entries are numbered in order: expected vm.location[{expected}]"),
                &inner[..close],
            ));
        }
        let entry = inner[close + 1..]
            .trim_start()
            .strip_prefix('=')
            .ok_or_else(|| Diag::new("expected '= LOCATION'", &inner[close + 1..]))?;
        self.draft
            .locations
            .define(entry)
            .map_err(|m| Diag::new(format!("bad location: {m}"), entry.trim()))
    }

    /// `vm.source_map "name" = [OFFSET: loc[N], ...]`: the source map of
    /// the function at its position (the first directive's is function
    /// 0's, as IREE reads them), `name` being that function's name in the
    /// debug database. Two maps may not give the same name.
    pub(super) fn source_map(&mut self, line_no: usize, rest: &'s str) -> Result<(), Diag<'s>> {
        let (name, tail) = parse_quoted(rest)
            .ok_or_else(|| Diag::new("expected the function's quoted name", rest))?;
        let quoted_name = &rest[..rest.len() - tail.len()];
        let maps = self.draft.source_maps.as_deref().unwrap_or_default();
        if !name.is_empty() && maps.iter().any(|m| m.name == name) {
            return Err(Diag::new(
                format!("a source map for \"{name}\" is given twice (one map per function)"),
                quoted_name,
            ));
        }
        let list = tail
            .trim_start()
            .strip_prefix('=')
            .map(str::trim)
            .and_then(|t| t.strip_prefix('['))
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(|| Diag::new("expected '= [OFFSET: loc[N], ...]'", tail.trim()))?;
        let mut pairs = Vec::new();
        for item in split_commas(list) {
            let pair = item.split_once(':').and_then(|(offset, loc)| {
                let offset = parse_uint(offset.trim(), i32::MAX as u64)?;
                let index = loc
                    .trim()
                    .strip_prefix("loc[")?
                    .strip_suffix(']')
                    .and_then(|n| parse_uint(n, i32::MAX as u64))?;
                Some((offset as u32, index as i32))
            });
            pairs.push(pair.ok_or_else(|| Diag::new("expected 'OFFSET: loc[N]'", item))?);
        }
        self.draft
            .source_maps
            .get_or_insert_with(Vec::new)
            .push(SourceMapDraft {
                name: name.into_owned(),
                locations: pairs,
                line: line_no,
            });
        Ok(())
    }

    /// `vm.debug_database`: a debug database is written even without
    /// locations, and its source maps are the `vm.source_map` directives
    /// alone (none when there are none).
    pub(super) fn debug_database(&mut self, word: &'s str, rest: &'s str) -> Result<(), Diag<'s>> {
        if !rest.is_empty() {
            return Err(Diag::new(
                "'vm.debug_database' takes nothing after it",
                rest,
            ));
        }
        if self.draft.declared_debug_database {
            return Err(Diag::new("'vm.debug_database' appears twice", word));
        }
        self.draft.declared_debug_database = true;
        self.draft.source_maps.get_or_insert_with(Vec::new);
        Ok(())
    }

    /// What the declared tables must agree with, checked once the whole
    /// text is read.
    pub(super) fn check_declared_tables(&mut self) {
        let last = self.lines.len().max(1);
        if let Some((bytes, refs)) = self.draft.declared_state {
            if bytes < self.draft.global_bytes || refs < self.draft.global_refs {
                self.error_at(
                    last,
                    1,
                    format!(
                        "vm.module_state declares global_bytes {bytes}, global_refs {refs}, but the code accesses {} bytes and {} refs",
                        self.draft.global_bytes, self.draft.global_refs
                    ),
                );
            }
        }
        if let Some((entry, index)) = self.draft.locations.dangling_reference() {
            self.error_at(
                last,
                1,
                format!(
                    "location {entry} refers to loc[{index}], but the table has {} entries",
                    self.draft.locations.entries.len()
                ),
            );
        }
        let count = self.draft.locations.entries.len();
        let Some(maps) = &self.draft.source_maps else {
            return;
        };
        // Reported on the map's own line, at the `loc[N]` that dangles.
        let dangling = maps
            .iter()
            .flat_map(|m| m.locations.iter().map(move |p| (m.line, &m.name, p.1)))
            .find(|(_, _, index)| *index as usize >= count)
            .map(|(line, name, index)| {
                let text = self.lines[line - 1];
                let column = text
                    .find(&format!("loc[{index}]"))
                    .map_or(1, |at| text[..at].chars().count() + 1);
                (
                    line,
                    column,
                    format!("source map \"{name}\" refers to loc[{index}], but the table has {count} entries"),
                )
            });
        let functions = self.draft.functions.len();
        let past_the_functions: Vec<(usize, String)> = maps
            .iter()
            .skip(functions)
            .map(|m| (m.line, m.name.clone()))
            .collect();
        if let Some((line, column, message)) = dangling {
            self.error_at(line, column, message);
        }
        for (line, name) in past_the_functions {
            let text = self.lines[line - 1];
            let column = text
                .find('"')
                .map_or(1, |at| text[..at].chars().count() + 1);
            self.error_at(
                line,
                column,
                format!(
                    "source map \"{name}\" names no function: maps belong to functions by position (the first to the first function), and the module defines {functions}"
                ),
            );
        }
        if self.draft.functions.iter().any(|f| !f.locations.is_empty()) {
            self.error_at(
                last,
                1,
                "a module with vm.source_map or vm.debug_database directives takes no trailing loc(...) on instructions",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_read_bare_and_quoted_keys_and_escaped_values() {
        let (attrs, rest) = parse_attributes(
            r#"attributes {iree.abi.declaration = "sync func @f(%a: tensor<2x{3}xf32>)", "odd key" = "a\"b"} {"#,
        )
        .unwrap();
        assert_eq!(
            attrs,
            [
                (
                    "iree.abi.declaration".to_string(),
                    "sync func @f(%a: tensor<2x{3}xf32>)".to_string()
                ),
                ("odd key".to_string(), "a\"b".to_string())
            ]
        );
        assert_eq!(rest, " {");
        assert!(parse_attributes("attributes {k = v}").is_err());
        assert!(parse_attributes("attributes {k = \"v\"").is_err());
    }

    #[test]
    fn function_clauses_read_in_any_order() {
        let (declared, rest) = parse_function_clauses(
            "requires(YIELD | UNWIND) registers(i32: 20, ref: 7) cconv \"0v_v\" attributes {a = \"b\"} {",
        )
        .unwrap();
        assert_eq!(rest, "{");
        assert_eq!(declared.registers, Some((20, 7)));
        assert_eq!(
            declared.requirements,
            Some(FeatureBits::YIELD | FeatureBits::UNWIND)
        );
        assert_eq!(declared.cconv, Some(Some("0v_v".to_string())));
        assert_eq!(declared.attrs, [("a".to_string(), "b".to_string())]);
        let (declared, _) = parse_function_clauses("cconv none {").unwrap();
        assert_eq!(declared.cconv, Some(None));
        assert!(parse_function_clauses("cconv nonesuch {").is_err());
        let (declared, rest) = parse_function_clauses("{").unwrap();
        assert_eq!((declared.registers, rest), (None, "{"));
        assert!(parse_function_clauses("requires(none) requires(none) {").is_err());
        assert!(parse_function_clauses("registers(i32: 1) {").is_err());
        assert!(parse_function_clauses("requires(FAST) {").is_err());
        assert_eq!(
            parse_features("EXT_F32 | bit 7").unwrap(),
            FeatureBits::EXT_F32 | FeatureBits::from_bits_retain(1 << 7)
        );
    }
}
