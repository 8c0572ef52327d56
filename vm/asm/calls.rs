//! Call sites against their callees' calling conventions: what both
//! runtimes' verifiers check when they load the module, checked here so
//! that the assembler names the line instead of writing a module no
//! runtime takes.
//!
//! Each `vm.call*` records a [`CallSite`] as it is assembled; once every
//! function is known (calls may name functions defined later), each is
//! checked against its callee's calling convention, flattened as the
//! verifier flattens it (`program::Signature`): the number of arguments
//! and results, and the register bank of each (a ref register for `r`, an
//! i32-bank register for `i`, `I`, `f`, `F`). A variadic import is called
//! with `vm.call.variadic`, whose segment sizes must fit its spans.

use crate::bytecode::isa::{IMPORT_ORDINAL_BIT, REF_BANK_BIT};
use crate::program::{expand_variadic, Signature};

use super::Assembler;

/// A call as written: the callee operand, the line, and the registers.
pub(super) struct CallSite {
    /// The callee operand as written (`@m.f`, `@f`, `@"odd name"`).
    pub callee: String,
    /// The line of the call.
    pub line: usize,
    /// `vm.call.variadic[.yieldable]`.
    pub variadic: bool,
    /// The segment sizes of a variadic call.
    pub segment_sizes: Vec<u16>,
    /// Argument registers (bank bit included).
    pub arguments: Vec<u16>,
    /// Result registers (bank bit included).
    pub results: Vec<u16>,
}

/// The calling convention linking assumes for a callee that declares
/// none (an import without a signature, a function with `cconv none`), as
/// `context::link` does.
pub(super) const NO_SIGNATURE: &str = "0v_v";

impl Assembler<'_> {
    /// Checks every recorded call against its callee's calling convention,
    /// and reports the returns found to disagree with their function's.
    pub(super) fn check_call_sites(&mut self) {
        for (line, problem) in std::mem::take(&mut self.draft.return_problems) {
            let text = self.lines[line - 1];
            let column = text
                .find("vm.return")
                .map_or(1, |at| text[..at].chars().count() + 1);
            self.error_at(line, column, problem);
        }
        let calls = std::mem::take(&mut self.draft.call_sites);
        for call in &calls {
            if let Err(message) = self.check_call(call) {
                let line = self.lines[call.line - 1];
                let column = line
                    .find(call.callee.as_str())
                    .map_or(1, |at| line[..at].chars().count() + 1);
                self.error_at(call.line, column, message);
            }
        }
    }

    /// Why `call` disagrees with its callee's calling convention, if it
    /// does. A callee the module does not define is reported elsewhere.
    fn check_call(&self, call: &CallSite) -> Result<(), String> {
        let Ok(Some(ordinal)) = self.draft.function_operand(&call.callee) else {
            return Ok(());
        };
        let import = ordinal & IMPORT_ORDINAL_BIT != 0;
        let (callee, cconv) = if import {
            let import = &self.draft.imports[(ordinal & !IMPORT_ORDINAL_BIT) as usize];
            (
                format!("import @{}", import.full_name),
                import.cconv.as_deref(),
            )
        } else {
            let Some(function) = self.draft.functions.get(ordinal as usize) else {
                return Ok(());
            };
            (
                format!("function @{}", function.name),
                function.cconv.as_deref(),
            )
        };
        let (cconv, convention) = match cconv {
            Some(cconv) => (cconv, format!("{callee}'s calling convention \"{cconv}\"")),
            None => (
                NO_SIGNATURE,
                format!(
                    "the calling convention of {callee}, which declares none (\"{NO_SIGNATURE}\")"
                ),
            ),
        };
        let signature =
            Signature::parse(cconv).map_err(|e| format!("{convention} does not parse: {e}"))?;
        let arguments = match (call.variadic, signature.variadic) {
            (false, false) => signature.args.clone(),
            (false, true) => {
                return Err(format!(
                    "{convention} is variadic: call it with vm.call.variadic and its segment sizes"
                ))
            }
            (true, _) if !import => {
                return Err(format!(
                    "vm.call.variadic calls imports only, and {callee} is internal: call it with vm.call"
                ))
            }
            (true, _) => expand_variadic(&signature, &call.segment_sizes).ok_or_else(|| {
                format!(
                    "segments[{}] do not fit {convention} (one size per argument; a span's size is its repetitions)",
                    join(&call.segment_sizes)
                )
            })?,
        };
        let argument_error = mismatch("argument", &call.arguments, &arguments);
        let result_error = mismatch("result", &call.results, &signature.results);
        match argument_error.or(result_error) {
            Some(problem) => Err(format!("the call disagrees with {convention}: {problem}")),
            None => Ok(()),
        }
    }
}

/// How `registers` fail to carry values of `kinds` (cconv letters), if
/// they do.
pub(super) fn mismatch(what: &str, registers: &[u16], kinds: &[u8]) -> Option<String> {
    if registers.len() != kinds.len() {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        return Some(format!(
            "{} {what}{} given, {} expected",
            registers.len(),
            plural(registers.len()),
            kinds.len()
        ));
    }
    registers
        .iter()
        .zip(kinds)
        .enumerate()
        .find_map(|(i, (&register, &kind))| {
            let is_ref = register & REF_BANK_BIT != 0;
            (is_ref != (kind == b'r')).then(|| {
                format!(
                    "{what} {i} is {}, where the calling convention has {}",
                    if is_ref {
                        "a ref register"
                    } else {
                        "an i32-bank register"
                    },
                    kind_name(kind)
                )
            })
        })
}

/// The value a calling-convention letter stands for.
fn kind_name(kind: u8) -> &'static str {
    match kind {
        b'i' => "an i32",
        b'I' => "an i64",
        b'f' => "an f32",
        b'F' => "an f64",
        _ => "a ref",
    }
}

fn join(sizes: &[u16]) -> String {
    sizes
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
