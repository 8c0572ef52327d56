//! Source names, for `irvm dbg` and `irvm dap`: where the debug
//! information places an instruction on a source line that defines `%name
//! = ...` (the `.mlir` text the locations point into), the register that
//! instruction writes is `%name`.
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
//! - Registers that overlap (`%i10` and the pair `%i10:11`) are shared
//!   as much as one register is.
//!
//! The function's own arguments (`func.func @fib(%n: i32)`, its definition
//! found in the files its locations name; a `func.call @fib(` is no
//! definition) are named too, at the registers the calling convention puts
//! them in, when their number is the function's, and only while the
//! instruction is located inside that function's body in the text (an
//! instruction of a callee inlined into it is located in the callee's
//! text, where the names mean the callee's arguments).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use irvm::loader::SourcePosition;
use irvm_debugger::{CodeAddress, DebugInfo, RegisterRef};

/// What the text says of one function's names, wherever it stopped.
#[derive(Default)]
pub struct FunctionNames {
    /// `%name = ...` lines: each name with the register it is written to.
    defined: Vec<(String, RegisterRef)>,
    /// The arguments with their registers.
    arguments: Vec<(String, RegisterRef)>,
    /// Where the function's definition is: the recorded file, and its
    /// first and last lines (from 1).
    body: Option<(String, i32, i32)>,
}

/// The source names of one function at one instruction.
#[derive(Default)]
pub struct SourceNames {
    /// `%name` -> the registers it names.
    pub by_name: BTreeMap<String, BTreeSet<RegisterRef>>,
    /// Register -> the names it holds.
    pub by_register: BTreeMap<RegisterRef, BTreeSet<String>>,
}

impl FunctionNames {
    /// The names of the function at `function_at` (its offset does not matter);
    /// `read` gives the text of a source file as the debug information
    /// records its name (`None`: not found).
    pub fn of(
        dbg: &DebugInfo,
        mut read: impl FnMut(&str) -> Option<String>,
        function_at: &CodeAddress,
    ) -> FunctionNames {
        let (module, function) = (function_at.module_index, function_at.function);
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
            let lines = texts
                .entry(p.file.clone())
                .or_insert_with(|| Some(read(&p.file)?.lines().map(str::to_string).collect()));
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
        let defined: Vec<(String, RegisterRef)> = at.into_values().collect();
        let function_name = dbg.function_name(function_at);
        let registers = dbg.argument_registers(module, function);
        let found = texts.iter().find_map(|(file, lines)| {
            let (names, first, last) = definition(lines.as_ref()?, &function_name)?;
            Some((names, (file.clone(), first, last)))
        });
        let (arguments, body) = match found {
            Some((names, body)) if names.len() == registers.len() => {
                (names.into_iter().zip(registers).collect(), Some(body))
            }
            _ => (Vec::new(), None),
        };
        FunctionNames {
            defined,
            arguments,
            body,
        }
    }

    /// The names at an instruction located at `position`: the arguments
    /// only inside the function's own body (or where nothing is located).
    pub fn at(&self, position: Option<&SourcePosition>) -> SourceNames {
        let arguments_hold = match (position, &self.body) {
            (None, _) => true,
            (Some(p), Some((file, first, last))) => {
                p.file == *file && (*first..=*last).contains(&p.line)
            }
            (Some(_), None) => false,
        };
        let mut named = self.defined.clone();
        if arguments_hold {
            named.extend(self.arguments.iter().cloned());
        }
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
}

impl SourceNames {
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

    /// The other names sharing `name`'s register (or a part of it).
    pub fn sharing(&self, name: &str, register: RegisterRef) -> Vec<String> {
        let shared: BTreeSet<&String> = self
            .by_register
            .iter()
            .filter(|(r, _)| overlap(**r, register))
            .flat_map(|(_, n)| n)
            .filter(|o| *o != name)
            .collect();
        shared.into_iter().cloned().collect()
    }

    /// The name a bare word under the mouse means: `next` is `%next` when
    /// the function has that name (editors leave the `%` out of the word
    /// they hover).
    pub fn hovered(&self, word: &str) -> Option<String> {
        let bare = !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-'));
        let name = format!("%{word}");
        (bare && self.by_name.contains_key(&name)).then_some(name)
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
            let mut token_len = rest[at + 1..]
                .find(|c: char| {
                    !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-' | ':' | '#'))
                })
                .map_or(rest.len() - at - 1, |n| n);
            // A name may hold `-` (`%x-y`); one that is no name ends at
            // its last `-` that leaves a name or register: a subtraction
            // (`%s-1`); so at a `:` (a register pair's, `%i0:1`, or the
            // conditional's: `%c ? %x:%y`).
            let known = |t: &str| self.register(t).is_some() || RegisterRef::parse(t).is_ok();
            while !known(&rest[at..at + 1 + token_len]) {
                match rest[at + 1..at + 1 + token_len].rfind(['-', ':']) {
                    Some(minus) if minus > 0 => token_len = minus,
                    _ => break,
                }
            }
            if !known(&rest[at..at + 1 + token_len]) {
                // Nothing shorter is known either: the whole word is named.
                token_len = rest[at + 1..]
                    .find(|c: char| {
                        !(c.is_ascii_alphanumeric()
                            || matches!(c, '_' | '$' | '.' | '-' | ':' | '#'))
                    })
                    .map_or(rest.len() - at - 1, |n| n);
            }
            let token = &rest[at..at + 1 + token_len];
            // A register's spelling, even one out of range or a pair that
            // is none (`%i99999`, `%i3:7`): the expression parser says
            // what is wrong with it.
            let is_register = RegisterRef::parse(token).is_ok() || spelled_as_register(token);
            match self.register(token) {
                Some(found) if names_first || !is_register => out.push_str(&found?.to_string()),
                // After an operand (`10%3`, `%i0%-3`) a `%` naming
                // nothing is C's remainder, as gdb reads it.
                None if !is_register && token.len() > 1 && follows_operand(&out) => {
                    out.push('%');
                    rest = &rest[at + 1..];
                    continue;
                }
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

impl SourceNames {
    /// A logpoint's message with the source names inside its `{...}`
    /// parts replaced by their registers (the text outside stays).
    pub fn substitute_in_braces(&self, message: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = message;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            if rest[open..].starts_with("{{") {
                out.push_str("{{");
                rest = &rest[open + 2..];
                continue;
            }
            let Some(close) = rest[open..].find('}') else {
                out.push_str(&rest[open..]);
                return Ok(out);
            };
            let inner = &rest[open + 1..open + close];
            out.push('{');
            out.push_str(&self.substitute(inner, false)?);
            out.push('}');
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Whether `before` (an expression's text up to a `%`) ends with an
/// operand: a number, register, name, history reference or `)`.
fn follows_operand(before: &str) -> bool {
    before
        .trim_end()
        .ends_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | ')'))
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

/// Whether `a` and `b` share a slot.
fn overlap(a: RegisterRef, b: RegisterRef) -> bool {
    let slots = |r: RegisterRef| match r {
        RegisterRef::I32(n) => Some((u32::from(n), u32::from(n))),
        RegisterRef::Pair(n) => Some((u32::from(n), u32::from(n) + 1)),
        RegisterRef::Ref(_) => None,
    };
    match (slots(a), slots(b)) {
        (Some((a0, a1)), Some((b0, b1))) => a0 <= b1 && b0 <= a1,
        _ => a == b,
    }
}

/// The definition of `func.func @name(...)` (or `func @name(`, with or
/// without a visibility) in a source's lines: its argument names and its
/// first and last lines (from 1).
fn definition(lines: &[String], name: &str) -> Option<(Vec<String>, i32, i32)> {
    let marker = format!("@{name}(");
    let (first, column) = lines.iter().enumerate().find_map(|(n, line)| {
        line.match_indices(&marker).find_map(|(at, _)| {
            let mut before = line[..at].trim_end();
            for visibility in ["private", "public", "nested"] {
                before = before.strip_suffix(visibility).unwrap_or(before).trim_end();
            }
            let keyword = before.rsplit([' ', '\t']).next();
            matches!(keyword, Some("func" | "func.func")).then_some((n, at))
        })
    })?;
    let text = lines[first..].join("\n");
    let names = argument_names(&text[column + marker.len()..])?;
    let last = body_end(&lines[first..]).map_or(first, |n| first + n);
    Some((
        names,
        i32::try_from(first + 1).ok()?,
        i32::try_from(last + 1).ok()?,
    ))
}

/// The line (counted in `lines`) that closes the body opened by the first
/// line ending in `{`.
fn body_end(lines: &[String]) -> Option<usize> {
    let open = lines.iter().position(|l| l.trim_end().ends_with('{'))?;
    let mut depth = 0i64;
    for (n, line) in lines.iter().enumerate().skip(open) {
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
        }
        if depth <= 0 {
            return Some(n);
        }
    }
    None
}

/// The names of an argument list (the text after its `(`).
fn argument_names(body: &str) -> Option<Vec<String>> {
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

/// An error about the expression `evaluated` said in terms of what the
/// user typed (`typed`, with source names where `evaluated` has registers):
/// the expression quoted in the message is the typed one. A message that
/// quotes no expression (gdb's `A syntax error in expression, near ...`)
/// is left as it is: the caller names what was typed.
pub fn in_terms_of(message: String, evaluated: &str, typed: &str) -> String {
    if evaluated == typed {
        return message;
    }
    message.replace(&format!("`{evaluated}`"), &format!("`{typed}`"))
}

/// Whether `token` is spelled as a register: `%i` or `%r` and a digit.
fn spelled_as_register(token: &str) -> bool {
    let b = token.as_bytes();
    b.len() > 2 && b[0] == b'%' && matches!(b[1], b'i' | b'r') && b[2].is_ascii_digit()
}
