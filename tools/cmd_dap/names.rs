//! Source names: where the debug information places an instruction on a
//! source line that defines `%name = ...` (the `.mlir` text the locations
//! point into), the register that instruction writes is `%name`.
//!
//! The rules, when it is not one to one:
//! - Several instructions at the same location: the name goes to the
//!   register of the last one that writes one register (IREE lowers an op
//!   to a few instructions and the last computes its value).
//! - Several names for one register (the compiler reuses registers): each
//!   name shows the register's value, marked as shared (`type` says with
//!   which names): the value is that of whichever ran last.
//! - One name for several registers (the same name defined in several
//!   regions of a function): the name is ambiguous; it is listed with its
//!   registers and has no single value.
//! - Names with several results (`%res:3 = ...`) and ops writing several
//!   registers are left out, and so are block arguments (`^bb0(%k: i32)`).
//!
//! The function's own arguments (`func.func @fib(%n: i32)`, found in the
//! files its locations name) are named too, at the registers the calling
//! convention puts them in, when their number is the function's.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use irvm_debugger::{Debugger, RegisterRef};

use super::sources::Sources;

/// The source names of one function.
#[derive(Default)]
pub struct SourceNames {
    /// `%name` -> the registers it names.
    pub by_name: BTreeMap<String, BTreeSet<RegisterRef>>,
    /// Register -> the names it holds.
    pub by_register: BTreeMap<RegisterRef, BTreeSet<String>>,
}

impl SourceNames {
    /// The names of the function `function` of `module`.
    pub fn of(dbg: &Debugger, sources: &Sources, module: &str, function: u32) -> SourceNames {
        let mut texts: HashMap<String, Option<Vec<String>>> = HashMap::new();
        // (file, line, column) -> (name, register), the last write wins.
        let mut at: BTreeMap<(String, i32, i32), (String, RegisterRef)> = BTreeMap::new();
        let positions = dbg.instruction_positions(module, function);
        for (offset, written) in dbg.register_writes(module, function) {
            let [register] = written[..] else {
                continue;
            };
            let Some(p) = positions.get(&offset).cloned() else {
                continue;
            };
            let lines = texts.entry(p.file.clone()).or_insert_with(|| {
                Some(sources.read(&p.file)?.lines().map(str::to_string).collect())
            });
            let Some(text) = lines
                .as_ref()
                .and_then(|l| l.get(usize::try_from(p.line.checked_sub(1)?).ok()?))
            else {
                continue;
            };
            if let Some(name) = defined_name(text, p.col) {
                at.insert((p.file, p.line, p.col), (name, register));
            }
        }
        let mut named: Vec<(String, RegisterRef)> = at.into_values().collect();
        let function_name = dbg.function_name(&irvm_debugger::CodeAddress {
            module: module.to_string(),
            function,
            offset: 0,
        });
        let registers = dbg.argument_registers(module, function);
        let arguments = texts
            .values()
            .flatten()
            .find_map(|lines| argument_names(&lines.join("\n"), &function_name))
            .filter(|a| a.len() == registers.len())
            .unwrap_or_default();
        named.extend(arguments.into_iter().zip(registers));
        let mut names = SourceNames::default();
        for (name, register) in named {
            names
                .by_name
                .entry(name.clone())
                .or_default()
                .insert(register);
            names.by_register.entry(register).or_default().insert(name);
        }
        names
    }

    /// The register a name stands for, or why it stands for none.
    pub fn register(&self, name: &str) -> Option<Result<RegisterRef, String>> {
        let registers = self.by_name.get(name)?;
        Some(match registers.iter().collect::<Vec<_>>()[..] {
            [r] => Ok(*r),
            _ => Err(format!(
                "`{name}` is defined more than once in this function (registers {})",
                list(registers.iter().map(|r| r.to_string()))
            )),
        })
    }

    /// The other names sharing `name`'s register.
    pub fn sharing(&self, name: &str, register: RegisterRef) -> Vec<String> {
        self.by_register
            .get(&register)
            .map(|n| n.iter().filter(|o| *o != name).cloned().collect())
            .unwrap_or_default()
    }

    /// `expr` with the source names in it replaced by their registers.
    /// Spellings of registers (`%i3`, `%i2:3`, `%r0`) stay registers unless
    /// `names_first` (a hover over the source text, where `%i1` is the
    /// source's name).
    pub fn substitute(&self, expr: &str, names_first: bool) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = expr;
        while let Some(at) = rest.find('%') {
            out.push_str(&rest[..at]);
            let token_len = rest[at + 1..]
                .find(|c: char| {
                    !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-' | ':' | '#'))
                })
                .map_or(rest.len() - at - 1, |n| n);
            let token = &rest[at..at + 1 + token_len];
            let is_register = RegisterRef::parse(token).is_ok();
            match self.register(token) {
                Some(found) if names_first || !is_register => out.push_str(&found?.to_string()),
                None if !is_register && token.len() > 1 => {
                    return Err(format!(
                        "`{token}` is neither a register nor a source name of this function"
                    ))
                }
                _ => out.push_str(token),
            }
            rest = &rest[at + 1 + token_len..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The `%name` a source line defines with the op at column `col` (from
/// 1): the text before the op is `%name =` (one result).
fn defined_name(line: &str, col: i32) -> Option<String> {
    let before: String = line
        .chars()
        .take(usize::try_from(col.checked_sub(1)?).ok()?)
        .collect();
    let lhs = before.trim_end().strip_suffix('=')?.trim();
    let name = lhs.strip_prefix('%')?;
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-'));
    valid.then(|| lhs.to_string())
}

/// The argument names of `func.func @name(...)` in a source text.
fn argument_names(text: &str, name: &str) -> Option<Vec<String>> {
    let marker = format!("@{name}(");
    let at = text.match_indices(&marker).find_map(|(at, _)| {
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        text[line_start..at].contains("func").then_some(at)
    })?;
    let body = &text[at + marker.len()..];
    let mut depth = 0usize;
    let mut pieces = vec![String::new()];
    for c in body.chars() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' if depth == 0 => break,
            ')' | '>' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                pieces.push(String::new());
                continue;
            }
            _ => {}
        }
        pieces.last_mut()?.push(c);
    }
    if pieces.len() == 1 && pieces[0].trim().is_empty() {
        return Some(Vec::new());
    }
    pieces
        .iter()
        .map(|p| {
            let (lhs, _) = p.split_once(':')?;
            let lhs = lhs.trim();
            (lhs.starts_with('%') && lhs.len() > 1).then(|| lhs.to_string())
        })
        .collect()
}

/// `a, b and c`.
fn list(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}
