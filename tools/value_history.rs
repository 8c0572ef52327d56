//! gdb's value history: each value `call` (or `print FUNCTION(ARGS)`)
//! prints as `$N = ...`, and each `Value returned is $N` of `finish`, is
//! kept and read back by `$N` (the Nth), `$` (the last), `$$` (the one
//! before it) and `$$N` (N before the last), wherever `print`, `output`,
//! `printf`, `ptype` and `whatis` take an expression; in `irvm dap`'s
//! debug console (`evaluate` in the `repl` context) each result of a call
//! is `$N = ...` and the references read the history in any `evaluate`.
//! Refs are numbered
//! but not kept: a kept ref would hold the program's memory (counted
//! against its limits) for as long as the session lasts.

use irvm_debugger::DebugValue;

/// The values, `$1` first: each kept, or the type of a ref that was not.
#[derive(Default)]
pub(crate) struct ValueHistory {
    values: Vec<Result<DebugValue, String>>,
}

impl ValueHistory {
    /// Keeps `value` (a ref: only its type); its number (`$N`).
    pub(crate) fn record(&mut self, value: DebugValue) -> usize {
        let kept = match value {
            DebugValue::Ref(_) => Err(value.type_name()),
            other => Ok(other),
        };
        self.values.push(kept);
        self.values.len()
    }

    /// The value `text` names, when it is a history reference (`$N`, `$`,
    /// `$$`, `$$N`), or gdb's error for one it has not reached; `None` for
    /// any other text.
    pub(crate) fn lookup(&self, text: &str) -> Option<Result<DebugValue, String>> {
        let text = text.trim();
        let rest = text.strip_prefix('$')?;
        let count = self.values.len();
        // The number of the value named (1 = the first).
        let number: usize = if rest.is_empty() {
            count
        } else if let Some(back) = rest.strip_prefix('$') {
            let back: usize = if back.is_empty() {
                1
            } else {
                back.parse()
                    .ok()
                    .filter(|_| back.bytes().all(|b| b.is_ascii_digit()))?
            };
            match count.checked_sub(back) {
                Some(n) if n >= 1 => n,
                _ if count == 0 => return Some(Err("History is empty.".into())),
                _ => return Some(Err(format!("History does not go back to $${back}."))),
            }
        } else if rest.bytes().all(|b| b.is_ascii_digit()) {
            rest.parse().ok()?
        } else {
            return None;
        };
        if number == 0 {
            return Some(Err("History is empty.".into()));
        }
        Some(match self.values.get(number - 1) {
            Some(Ok(value)) => Ok(value.clone()),
            Some(Err(type_name)) => Err(format!(
                "${number} was a {type_name}: the value history keeps numbers only (a ref \
                 kept would hold the program's memory)"
            )),
            None => Err(format!("History has not yet reached ${number}.")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(h: &ValueHistory, text: &str) -> Option<Result<String, String>> {
        h.lookup(text).map(|r| r.map(|v| format!("{v:?}")))
    }

    #[test]
    fn numbers_last_and_back_references() {
        let mut h = ValueHistory::default();
        assert_eq!(shown(&h, "$"), Some(Err("History is empty.".into())));
        assert_eq!(
            shown(&h, "$1"),
            Some(Err("History has not yet reached $1.".into()))
        );
        assert_eq!(h.record(DebugValue::I32(10)), 1);
        assert_eq!(h.record(DebugValue::I32(20)), 2);
        assert_eq!(h.record(DebugValue::I32(30)), 3);
        let v = |n: i32| Some(Ok(format!("{:?}", DebugValue::I32(n))));
        assert_eq!(shown(&h, "$1"), v(10));
        assert_eq!(shown(&h, " $3 "), v(30));
        assert_eq!(shown(&h, "$"), v(30));
        assert_eq!(shown(&h, "$$"), v(20));
        assert_eq!(shown(&h, "$$0"), v(30));
        assert_eq!(shown(&h, "$$2"), v(10));
        assert_eq!(
            shown(&h, "$$3"),
            Some(Err("History does not go back to $$3.".into()))
        );
        assert_eq!(
            shown(&h, "$4"),
            Some(Err("History has not yet reached $4.".into()))
        );
        // A ref is numbered, not kept.
        let list = irvm::Ref::Null;
        assert_eq!(h.record(DebugValue::Ref(list)), 4);
        let refused = h.lookup("$4").and_then(Result::err);
        assert!(
            refused
                .as_deref()
                .is_some_and(|m| m.starts_with("$4 was a ") && m.contains("keeps numbers only")),
            "{refused:?}"
        );
        // Anything else is not a history reference.
        assert_eq!(shown(&h, "$argc"), None);
        assert_eq!(shown(&h, "%i0"), None);
        assert_eq!(shown(&h, "$1 + 1"), None);
    }
}
