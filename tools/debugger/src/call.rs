//! gdb's `call FUNCTION(ARGS)` and `print FUNCTION(ARGS)`: a function of
//! the program called while it is stopped, on a stack of its own
//! ([`irvm::Context::invoke_aside`]): the stopped frames stay as they are.
//! Breakpoints and watchpoints do not stop inside the call (nothing
//! observes it); a pause ([`crate::PauseHandle::pause`] or
//! [`crate::PauseHandle::abandon_call`], when the debugger is
//! interruptible) or a trap abandons it.

use std::sync::atomic::Ordering;

use irvm::Value;

use super::frame_moves::convert_result;
use super::{err, integer_literal, param_kinds, CodeAddress, DebugCommandError, Debugger, State};

impl Debugger {
    /// Calls `function` (a function's name, `MODULE.FUNCTION` when several
    /// modules have one of that name; exported or not; of two modules
    /// registered under one name, the later, as the context's lookups by
    /// name reach it) with one argument
    /// per parameter, each an expression evaluated in the selected frame
    /// and converted to the parameter's type as `return` converts its
    /// values; its results.
    pub fn call_function(
        &mut self,
        function: &str,
        args: &[String],
    ) -> Result<Vec<Value>, DebugCommandError> {
        if matches!(self.state, State::Idle) {
            return err("You can't do that without a process to debug.");
        }
        let found = self
            .resolve_function(function.trim())
            .map_err(|_| DebugCommandError(format!("no function `{function}` in the program")))?;
        // Of several, the one a name reaches when only one is left: a
        // module a later one of its name shadows is called only when
        // nothing else has the function.
        let reached: Vec<CodeAddress> = found
            .iter()
            .filter(|a| {
                self.module(&a.module)
                    .is_ok_and(|(i, _)| i == a.module_index)
            })
            .cloned()
            .collect();
        let a = match (&found[..], &reached[..]) {
            ([a], _) | (_, [a]) => a.clone(),
            _ => {
                return err(format!(
                    "`{function}` names {} functions: say which as MODULE.FUNCTION",
                    found.len()
                ))
            }
        };
        let name = self.function_name(&a);
        let kinds = param_kinds(self.module_at(a.module_index)?, a.function);
        if kinds.len() != args.len() {
            return err(format!(
                "`{name}` takes {} argument{}; the call gives {}",
                kinds.len(),
                if kinds.len() == 1 { "" } else { "s" },
                args.len()
            ));
        }
        let mut values = Vec::with_capacity(args.len());
        for (k, (&kind, text)) in kinds.iter().zip(args).enumerate() {
            let given = self.evaluate(text, self.selected)?;
            let label = format!("argument {k} of `{name}`");
            values.push(convert_result(kind, &given, integer_literal(text), &label)?);
        }
        let func = self
            .ctx
            .function_at(a.module_index, a.function)
            .map_err(|e| DebugCommandError(e.to_string()))?;
        // A pause (Ctrl-C) or `PauseHandle::abandon_call` abandons a call
        // that runs too long; one asked for before this command was read
        // was forgotten then (`command_read`). The call watches a flag of
        // its own: interrupts (a front end serving a request: DAP) are not
        // pauses, they stay for the next command (DAP's `terminate` and
        // `disconnect` end the call through the VM's interrupt).
        let flag = self.interruptible.then(|| self.pause.call.clone());
        self.ctx.set_pause_flag(flag);
        let result = self.ctx.invoke_aside(&func, &values);
        self.ctx.set_pause_flag(None);
        // A pause that came during the call was the call's (it abandoned
        // it, or came as it ended): the program does not stop for it when
        // it goes on. An interrupt stays for the next command.
        self.pause.call.store(false, Ordering::Relaxed);
        if !self.pause.interrupt.load(Ordering::Relaxed) {
            self.pause.flag.store(false, Ordering::Relaxed);
        }
        result.map_err(|trap| {
            DebugCommandError(format!(
                "the call of `{name}` failed: {}: {} (it was abandoned; the program stays \
                 where it stopped)",
                trap.code, trap.message
            ))
        })
    }
}

/// `FUNCTION(ARG, ...)` as the function's name and its arguments' texts
/// (a name starts with a letter or `_`: registers start with `%`); the
/// arguments split at commas outside parentheses. `sizeof(...)` is C's
/// operator, no call, as gdb reads it.
pub fn parse_call(text: &str) -> Option<(&str, Vec<&str>)> {
    let text = text.trim();
    let open = text.find('(')?;
    let name = text[..open].trim();
    let inside = text[open + 1..].strip_suffix(')')?.trim();
    let named = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'));
    if !named || name == "sizeof" {
        return None;
    }
    let args = if inside.is_empty() {
        Vec::new()
    } else {
        super::printf::split_arguments(inside)
            .into_iter()
            .map(str::trim)
            .collect()
    };
    Some((name, args))
}

#[cfg(test)]
mod tests {
    use super::parse_call;

    #[test]
    fn a_calls_arguments_split_at_their_own_commas() {
        assert_eq!(parse_call("f(1, %i0)"), Some(("f", vec!["1", "%i0"])));
        assert_eq!(parse_call(" g() "), Some(("g", vec![])));
        // An argument that is a call keeps its commas (one argument).
        assert_eq!(
            parse_call("f(%i0, g(1, 2))"),
            Some(("f", vec!["%i0", "g(1, 2)"]))
        );
        assert_eq!(parse_call("%i0"), None);
        assert_eq!(parse_call("sizeof(int)"), None);
        assert_eq!(parse_call("sizeof (1 + 2)"), None);
    }
}
