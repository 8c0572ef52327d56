//! Changing where the stopped program goes: gdb's `jump` (the innermost
//! frame goes on at another instruction of its function), DAP's `goto`
//! (the same, staying stopped) and gdb's `return` (the selected frame
//! returns now, with values), over [`irvm::Context::set_frame_offset`] and
//! [`irvm::Context::return_from_frame`].

use irvm::{CallState, Value};

use super::{
    err, function_name, instruction_offsets, integer_literal, lock, result_kinds, store_bits,
    CodeAddress, DebugCommandError, DebugValue, Debugger, Mode, State, Stop, StoredBits,
    WatchEvent, NOT_RUNNING,
};

impl Debugger {
    /// An error unless the program is stopped where it can go on (not at
    /// a trap, which nothing runs past).
    fn require_movable(&self, what: &str) -> Result<(), DebugCommandError> {
        match self.state {
            State::Idle => err(NOT_RUNNING),
            State::Trapped { .. } => err(format!(
                "the program stopped at a trap: nothing runs past it, so it cannot {what}"
            )),
            State::Paused if self.yielded => err(format!(
                "the program stopped inside a host call that yields: it cannot {what} \
                 until the call returns (`stepi`, `next` or `continue` goes on with it)"
            )),
            State::Paused => Ok(()),
        }
    }

    /// The innermost frame's function, as an address at offset 0.
    fn current_function(&self) -> Result<CodeAddress, DebugCommandError> {
        let (a, _) = self
            .current()
            .ok_or_else(|| DebugCommandError(NOT_RUNNING.into()))?;
        Ok(CodeAddress { offset: 0, ..a })
    }

    /// Where `jump SPEC` (or DAP's `goto`) takes the innermost frame: a
    /// location as for breakpoints (`LINE`, `FILE:LINE`, `FUNCTION`,
    /// `*OFFSET`), which must be in the innermost frame's function (a
    /// frame goes on only in its own function: gdb asks whether to jump
    /// to another; here it is refused).
    pub fn jump_target(&self, spec: &str) -> Result<CodeAddress, DebugCommandError> {
        self.require_movable("jump")?;
        let spec = spec.trim();
        if spec.is_empty() {
            return err("jump needs a location: LINE, FILE:LINE, FUNCTION or *OFFSET");
        }
        let here = self.current_function()?;
        let name = self.function_name(&here);
        if let Some(text) = spec.strip_prefix('*') {
            let t = text.trim();
            let offset = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => t.parse().ok(),
            }
            .ok_or_else(|| DebugCommandError(format!("bad location `*{text}`: not an offset")))?;
            let m = self.module_at(here.module_index)?;
            if !instruction_offsets(m, here.function).contains(&offset) {
                return err(format!(
                    "no instruction of `{name}` starts at offset {offset:#x} \
                     (jump moves only within the current function)"
                ));
            }
            return Ok(CodeAddress { offset, ..here });
        }
        let (addresses, line) = self.resolve(spec)?;
        let mut inside: Vec<CodeAddress> = addresses
            .into_iter()
            .filter(|a| a.module_index == here.module_index && a.function == here.function)
            .collect();
        inside.sort();
        match (inside.first(), line) {
            (Some(a), _) => Ok(a.clone()),
            (None, Some(line)) => err(format!(
                "line {line} is not in `{name}` (jump moves only within the current function)"
            )),
            (None, None) => err(format!(
                "`{spec}` is not in `{name}` (jump moves only within the current function)"
            )),
        }
    }

    /// Makes the innermost frame go on at `target` (an instruction of its
    /// function: [`Debugger::jump_target`]) and stays stopped there (DAP's
    /// `goto`): the next command runs from it, as from any stop.
    pub fn move_to(&mut self, target: &CodeAddress) -> Result<(), DebugCommandError> {
        self.require_movable("go on elsewhere")?;
        let here = self.current_function()?;
        if (target.module_index, target.function) != (here.module_index, here.function) {
            return err(format!(
                "{}+{:#x} is not in `{}` (a frame goes on only in its own function)",
                self.function_name(target),
                target.offset,
                self.function_name(&here)
            ));
        }
        self.ctx
            .set_frame_offset(0, target.offset)
            .map_err(|e| DebugCommandError(e.message))?;
        // The command a breakpoint or interrupt stopped is over.
        self.interrupted = None;
        self.selected = 0;
        Ok(())
    }

    /// gdb's `jump`: the innermost frame goes on at `target`
    /// ([`Debugger::jump_target`]) and the program continues from there;
    /// a breakpoint at `target` stops it at once, as in gdb (so `tbreak`
    /// and `jump` stop there).
    pub fn jump(&mut self, target: &CodeAddress) -> Result<Stop, DebugCommandError> {
        self.move_to(target)?;
        self.moved = true;
        self.go(Mode::Run)
    }

    /// The name of the selected frame's function (`return`'s question).
    pub fn selected_function_name(&self) -> Option<String> {
        let (a, _) = self.selected_location()?;
        Some(self.function_name(&a))
    }

    /// The values `return EXPR...` gives: one expression per result of
    /// the selected frame's function, each evaluated in that frame and
    /// converted to the result's type (integers exactly and in range, any
    /// number for a float; a ref result takes a ref or `0` for null); no
    /// expression at all gives zeros and null refs (gdb leaves the value
    /// undefined).
    pub fn return_values(&self, exprs: &[String]) -> Result<Vec<Value>, DebugCommandError> {
        self.require_movable("return")?;
        let (a, _) = self
            .selected_location()
            .ok_or_else(|| DebugCommandError(NOT_RUNNING.into()))?;
        let m = self.module_at(a.module_index)?;
        let kinds = result_kinds(m, a.function);
        let name = function_name(m, a.function).unwrap_or_else(|| self.function_name(&a));
        if exprs.is_empty() {
            return Ok(kinds.iter().map(|&k| zero_of(k)).collect());
        }
        if exprs.len() != kinds.len() {
            let types: Vec<&str> = kinds.iter().map(|&k| kind_text(k)).collect();
            return err(format!(
                "`{name}` returns {} value{} ({}); `return` was given {}",
                kinds.len(),
                if kinds.len() == 1 { "" } else { "s" },
                types.join(", "),
                exprs.len()
            ));
        }
        let mut out = Vec::with_capacity(kinds.len());
        for (k, (&kind, text)) in kinds.iter().zip(exprs).enumerate() {
            let label = format!("`{name}`'s result {k}");
            let given = self.evaluate(text, self.selected)?;
            out.push(convert_result(kind, &given, integer_literal(text), &label)?);
        }
        Ok(out)
    }

    /// gdb's `return [EXPR...]`: pops the selected frame and every frame
    /// inside it now, handing its caller `values` (of the function's
    /// result types: [`Debugger::return_values`] makes them); the program stays stopped in the
    /// caller, before the instruction the call returns to ([`Stop::Step`];
    /// [`Stop::Watchpoints`] when watchpoints of the popped frames ended,
    /// as when a frame returns). From the entry function's outermost
    /// frame the program ends with those values ([`Stop::Finished`]); from
    /// an initializer's, the initializer ends and the program stops before
    /// the next call's first instruction.
    pub fn return_now(&mut self, values: Vec<Value>) -> Result<Stop, DebugCommandError> {
        self.require_movable("return")?;
        let depth = self.frames().len();
        let selected = self.selected;
        let state = self
            .ctx
            .return_from_frame(selected, values)
            .map_err(|e| DebugCommandError(e.message))?;
        // The watchpoints of the popped frames end with them (disabled
        // ones quietly).
        let first_popped = depth.saturating_sub(selected);
        let ended: Vec<(u32, bool)> = {
            let mut shared = lock(&self.shared);
            let ended = shared
                .watchpoints
                .iter()
                .filter(|w| w.depth >= first_popped)
                .map(|w| (w.id, w.enabled))
                .collect();
            shared.watchpoints.retain(|w| w.depth < first_popped);
            ended
        };
        let events: Vec<WatchEvent> = ended
            .iter()
            .filter(|(_, enabled)| *enabled)
            .map(|&(id, _)| WatchEvent::LeftScope(id))
            .collect();
        self.interrupted = None;
        self.selected = 0;
        let stop = match state {
            CallState::Done(values) if !self.in_init => {
                self.state = State::Idle;
                lock(&self.shared).watchpoints.clear();
                return Ok(Stop::Finished(values));
            }
            CallState::Done(_) => {
                // The initializer ended: the next call begins, stopped
                // before its first instruction.
                self.inits_done += 1;
                self.state = State::Idle;
                self.go_from(Mode::Instruction, false)?
            }
            _ => Stop::Step,
        };
        Ok(match stop {
            Stop::Step | Stop::Entry if !events.is_empty() => Stop::Watchpoints {
                events,
                breakpoint: None,
            },
            other => other,
        })
    }

    /// Why `finish` cannot run from the selected frame, if it cannot: the
    /// outermost frame of an initializer has no caller to return to (gdb:
    /// `"finish" not meaningful in the outermost frame.`). (The entry
    /// function's outermost frame finishes the program, as `finish` from
    /// `main` does.)
    pub fn finish_refusal(&self) -> Result<(), DebugCommandError> {
        self.require_running()?;
        if self.in_init && self.selected + 1 >= self.frames().len() {
            return err("\"finish\" not meaningful in the outermost frame.");
        }
        Ok(())
    }
}

/// The name of a calling-convention letter's type.
fn kind_text(k: char) -> &'static str {
    match k {
        'i' => "i32",
        'I' => "i64",
        'f' => "f32",
        'F' => "f64",
        _ => "ref",
    }
}

/// The zero of a result type (a null ref for refs).
fn zero_of(k: char) -> Value {
    match k {
        'i' => Value::I32(0),
        'I' => Value::I64(0),
        'f' => Value::F32(0.0),
        'F' => Value::F64(0.0),
        _ => Value::Ref(irvm::Ref::Null),
    }
}

/// `given` as a value of type `kind` (`label` names it in errors).
pub(super) fn convert_result(
    kind: char,
    given: &DebugValue,
    literal: Option<i128>,
    label: &str,
) -> Result<Value, DebugCommandError> {
    if kind == 'r' {
        return match given {
            DebugValue::Ref(r) => Ok(Value::Ref(r.clone())),
            _ if literal == Some(0) => Ok(Value::Ref(irvm::Ref::Null)),
            // The value's type first: `not 0` alone read as a refusal
            // of the very 0 it offers (an i32 register holding 0).
            _ => err(format!(
                "{label} (a ref) takes a ref register (%rN) or 0 (null), not an {} ({})",
                given.type_name(),
                given.format(super::Format::Natural, None)
            )),
        };
    }
    if matches!(given, DebugValue::Ref(_) | DebugValue::Text(_)) {
        return err(format!(
            "{label} ({}) takes a number, not {}",
            kind_text(kind),
            given.type_name()
        ));
    }
    let current = match kind {
        'I' => DebugValue::I64(0),
        'f' => DebugValue::F32(0.0),
        'F' => DebugValue::F64(0.0),
        _ => DebugValue::I32(0),
    };
    Ok(
        match (kind, store_bits(&label, &current, given, literal)?) {
            ('f', StoredBits::One(b)) => Value::F32(f32::from_bits(b)),
            (_, StoredBits::One(b)) => Value::I32(b as i32),
            ('F', StoredBits::Two(b)) => Value::F64(f64::from_bits(b)),
            (_, StoredBits::Two(b)) => Value::I64(b as i64),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ref_refuses_a_number_register_naming_its_type() {
        let e = convert_result('r', &DebugValue::I32(0), None, "argument 0 of `add`")
            .expect_err("an i32 register is not a ref");
        assert_eq!(
            e.0,
            "argument 0 of `add` (a ref) takes a ref register (%rN) or 0 (null), not an i32 (0)"
        );
        assert!(matches!(
            convert_result('r', &DebugValue::I32(0), Some(0), "x"),
            Ok(Value::Ref(irvm::Ref::Null))
        ));
    }
}
