//! Changing where a paused call goes (a debugger's `jump` and `return`):
//! a frame's next instruction moved to another instruction of its own
//! function, and a frame popped with the values its caller receives.
//!
//! Both keep every invariant the loops rely on:
//! - a pc is only ever set to an instruction index below the function's
//!   guard, each the lowering of one bytecode instruction (`program::lower`
//!   pushes one `Inst` per instruction), so it is a place a pause can stop
//!   at too: every copy of the loop starts there as it resumes a pause
//!   (the second half of a fused pair stands alone: `program::fuse`), the
//!   fueled loop charges the run from there (`runs` holds one per
//!   instruction), and compiled code is entered only at its own entries
//!   (`enters_at`), loading the window's registers. The verifier's proofs
//!   hold per function (every operand is in range of the function's
//!   windows, whatever path led there), so no other function's instruction
//!   is accepted. Registers the skipped code would have written keep what
//!   they hold: numbers, or refs whose type every use checks.
//! - a pop releases the popped windows as a return does, and writes the
//!   values to the caller's result registers of the call in progress (its
//!   `ret` list, which the verifier matched to the callee's calling
//!   convention), each checked against the callee's result kinds first.

use crate::context::{kind_name, CallState};
use crate::program::aux_list;
use crate::trap::{StatusCode, Trap};
use crate::values::Value;

use super::{pop_frame, write_host_results, Stack};

impl Stack {
    /// The frames of the call in the stack and the bytes of the
    /// reference's stack they occupy (see `Frame::stack_end`).
    pub(crate) fn depth_and_bytes(&self) -> (usize, u64) {
        (
            self.frames.len(),
            self.frames.last().map_or(0, |f| f.stack_end),
        )
    }

    /// The module of frame `n` (0 = innermost), for naming its function
    /// (0 when there is no such frame: the errors say so first).
    pub(crate) fn frame_module(&self, n: usize) -> u32 {
        self.frames.iter().rev().nth(n).map_or(0, |f| f.module)
    }

    /// The index in `frames` of frame `n` (0 = innermost) of a paused call.
    fn paused_frame(&self, n: usize, what: &str) -> Result<usize, Trap> {
        if !self.is_paused() {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                format!("{what}: no call is paused (only a call an observer or the pause flag stopped can be changed)"),
            ));
        }
        let count = self.frames.len();
        count.checked_sub(n + 1).ok_or_else(|| {
            Trap::new(
                StatusCode::InvalidArgument,
                format!("{what}: no frame {n} (the paused call has {count} frames)"),
            )
        })
    }

    /// Makes frame `n` (0 = innermost) of the paused call go on at the
    /// instruction at bytecode `offset` of its own function; `name` names
    /// the function in errors. The innermost frame runs it next when the
    /// call is resumed (asking an observer first: it is not the instruction
    /// the call paused at); a caller, when its callee returns.
    pub(crate) fn set_frame_offset(
        &mut self,
        n: usize,
        offset: u32,
        name: impl FnOnce(u32) -> String,
    ) -> Result<(), Trap> {
        let at = self.paused_frame(n, "cannot move a frame")?;
        let frame = &mut self.frames[at];
        let func = frame.func.get();
        let body = &func.offsets[..func.guard as usize];
        match body.binary_search(&offset) {
            Ok(pc) => {
                frame.pc = pc as u32;
                Ok(())
            }
            Err(_) => Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "no instruction of `{}` starts at bytecode offset {offset:#x} \
                     (a frame goes on only at an instruction of its own function)",
                    name(func.ordinal)
                ),
            )),
        }
    }

    /// Pops frame `n` (0 = innermost) of the paused call and every frame
    /// inside it, handing its caller `values` as the results of the call
    /// in progress; `name` names the function in errors. From the
    /// outermost frame the call ends with `values` ([`CallState::Done`]);
    /// otherwise it stays paused, in the caller, before the instruction
    /// the call returns to ([`CallState::Paused`]). The values must be of
    /// the function's result kinds; nothing changes when they are not.
    pub(crate) fn return_from_frame(
        &mut self,
        n: usize,
        mut values: Vec<Value>,
        name: impl FnOnce(u32) -> String,
    ) -> Result<CallState, Trap> {
        let at = self.paused_frame(n, "cannot return from a frame")?;
        let func = self.frames[at].func.get();
        let kinds = &func.result_kinds;
        let found: String = values.iter().map(Value::kind_char).collect();
        if found.as_bytes() != &kinds[..] {
            let wanted: Vec<&str> = kinds.iter().map(|&k| kind_name(k)).collect();
            let given: Vec<&str> = values
                .iter()
                .map(|v| kind_name(v.kind_char() as u8))
                .collect();
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "`{}` returns ({}), not ({})",
                    name(func.ordinal),
                    wanted.join(", "),
                    given.join(", ")
                ),
            ));
        }
        if at > 0 {
            let caller = &self.frames[at - 1];
            let in_call = caller.ret != crate::program::NONE
                && aux_list(&caller.func.aux, caller.ret, 0).len() == kinds.len();
            if !in_call {
                return Err(Trap::new(
                    StatusCode::Internal,
                    format!(
                        "the caller of `{}` is not in a call of it",
                        name(func.ordinal)
                    ),
                ));
            }
        }
        while self.frames.len() > at + 1 {
            pop_frame(self);
        }
        if at == 0 {
            // The entry frame: the call ends with these values.
            self.clear();
            return Ok(CallState::Done(values));
        }
        let caller = &self.frames[at - 1];
        let cfunc = caller.func.get();
        let dst = aux_list(&cfunc.aux, caller.ret, 0);
        let (ib, rb) = (caller.i32_base as usize, caller.ref_base as usize);
        pop_frame(self);
        write_host_results(
            (&mut self.i32s, &mut self.refs),
            ib,
            rb,
            dst,
            kinds,
            &mut values,
        )?;
        Ok(CallState::Paused)
    }
}

#[cfg(all(test, feature = "asm"))]
mod tests {
    use crate::{CallState, Context, Module, Ref, StatusCode, TypeRegistry, Value};

    /// `main(n)` calls `twice(n)` then `add1`; `spin` loops forever.
    const PROGRAM: &str = r#"
vm.module @m version 0
vm.func @twice(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.add.i32 %i0, %i0
  vm.return %i1
}
vm.func @pair(%i0: i32) -> (i32, !vm.buffer) {
^bb0:
  %r0 = vm.const.ref.zero
  vm.return %i0, %r0
}
vm.export @main
vm.func @main(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call @m:0(%i0)
  %i2 = vm.const.i32 1
  %i3 = vm.add.i32 %i1, %i2
  %i4, %r0 = vm.call @m:1(%i3)
  vm.return %i4
}
"#;

    /// Pauses at every instruction.
    struct EveryInstruction;
    impl crate::Observer for EveryInstruction {
        fn before_instruction(&mut self, _: &crate::ExecView<'_>) -> crate::Control {
            crate::Control::Pause
        }
    }

    /// Paused in `twice`, called from `main`; also the offset of main's
    /// call.
    fn paused_in_twice() -> (Context, crate::Func, u32) {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_module(Module::from_assembly(PROGRAM, "m.vmasm").expect("assembles"))
            .expect("registers");
        let main = ctx.function("m.main").expect("main");
        ctx.set_observer(Some(Box::new(EveryInstruction)));
        // Before main's call, then before twice's add.
        assert!(paused(ctx.begin_call(&main, &[Value::I32(5)])));
        let call = ctx.frames()[0].frame.offset.expect("an offset");
        assert!(paused(ctx.resume()));
        assert_eq!(ctx.frames().len(), 2);
        (ctx, main, call)
    }

    fn run_to_end(ctx: &mut Context) -> Vec<i32> {
        ctx.set_observer(None);
        match ctx.resume() {
            Ok(CallState::Done(v)) => ints(&v),
            other => panic!("{other:?}"),
        }
    }

    fn ints(values: &[Value]) -> Vec<i32> {
        values.iter().map(|v| v.as_i32().expect("an i32")).collect()
    }

    fn paused(state: Result<CallState, crate::Trap>) -> bool {
        matches!(state, Ok(CallState::Paused))
    }

    #[test]
    fn a_popped_frame_hands_its_caller_the_values() {
        let (mut ctx, _, _) = paused_in_twice();
        assert!(paused(ctx.return_from_frame(0, vec![Value::I32(40)])));
        let frames = ctx.frames();
        assert_eq!(frames.len(), 1);
        // Paused in main, before the instruction after the call.
        assert_eq!(frames[0].frame.function, "main");
        assert_eq!(frames[0].i32s[1], 40);
        assert_eq!(run_to_end(&mut ctx), [41]);
    }

    #[test]
    fn values_of_the_wrong_kinds_change_nothing() {
        let (mut ctx, _, _) = paused_in_twice();
        let e = ctx
            .return_from_frame(0, vec![Value::I64(1)])
            .expect_err("an i64 for an i32");
        assert_eq!(e.code, StatusCode::InvalidArgument);
        assert_eq!(e.message, "`m.fn0` returns (i32), not (i64)");
        let e = ctx.return_from_frame(0, vec![]).expect_err("too few");
        assert_eq!(e.message, "`m.fn0` returns (i32), not ()");
        let e = ctx.return_from_frame(2, vec![]).expect_err("no frame 2");
        assert_eq!(
            e.message,
            "cannot return from a frame: no frame 2 (the paused call has 2 frames)"
        );
        assert_eq!(ctx.frames().len(), 2);
        assert_eq!(run_to_end(&mut ctx), [11]);
    }

    #[test]
    fn popping_the_outermost_frame_ends_the_call() {
        let (mut ctx, main, _) = paused_in_twice();
        match ctx.return_from_frame(1, vec![Value::I32(-3)]) {
            Ok(CallState::Done(v)) => assert_eq!(ints(&v), [-3]),
            other => panic!("{other:?}"),
        }
        assert!(ctx.frames().is_empty());
        // Nothing is left pending: the next call starts.
        ctx.set_observer(None);
        let again = ctx.invoke(&main, &[Value::I32(1)]).expect("runs");
        assert_eq!(ints(&again), [3]);
    }

    #[test]
    fn refs_are_released_and_handed_over() {
        let (mut ctx, _, _) = paused_in_twice();
        // Run into `pair` (main's second call), paused at its first
        // instruction (the observer is asked again about the instruction
        // the call returns to: four pauses).
        ctx.return_from_frame(0, vec![Value::I32(1)])
            .expect("returns");
        for _ in 0..4 {
            assert!(paused(ctx.resume()));
        }
        assert_eq!(ctx.frames()[0].frame.function, "fn1");
        let buffer = Ref::from(crate::values::Buffer::from_vec(vec![1u8, 2]));
        ctx.return_from_frame(0, vec![Value::I32(7), Value::Ref(buffer.clone())])
            .expect("returns");
        assert!(matches!(
            (&ctx.frames()[0].ref_values[0], &buffer),
            (Ref::Buffer(a), Ref::Buffer(b)) if std::sync::Arc::ptr_eq(a, b)
        ));
        assert_eq!(run_to_end(&mut ctx), [7]);
    }

    #[test]
    fn a_frame_goes_on_at_another_instruction_of_its_function_only() {
        let (mut ctx, _, call) = paused_in_twice();
        // Back in main, before the instruction after the call.
        ctx.return_from_frame(0, vec![Value::I32(9)])
            .expect("returns");
        let here = ctx.frames()[0].frame.offset.expect("an offset");
        let e = ctx
            .set_frame_offset(0, here + 1)
            .expect_err("inside an instruction");
        assert_eq!(e.code, StatusCode::InvalidArgument);
        assert_eq!(
            e.message,
            format!(
                "no instruction of `m.main` starts at bytecode offset {:#x} \
                 (a frame goes on only at an instruction of its own function)",
                here + 1
            )
        );
        // Offset 0 is the block marker, no instruction.
        ctx.set_frame_offset(0, 0).expect_err("a block marker");
        assert_eq!(ctx.frames()[0].frame.offset, Some(here));
        // Back to the call: it runs again, 5 + 5 over the 9 given, then
        // the rest of main.
        ctx.set_frame_offset(0, call).expect("the call");
        assert_eq!(ctx.frames()[0].frame.offset, Some(call));
        assert_eq!(run_to_end(&mut ctx), [11]);
    }

    #[test]
    fn a_jump_skips_instructions_in_every_loop() {
        for observed in [true, false] {
            let (mut ctx, _, _) = paused_in_twice();
            // Skip twice's add: it returns %i1 as it is (0, a fresh window).
            let ret = ctx.frames()[0].frame.offset.expect("offset") + 1;
            let found = (ret..ret + 16).find(|&o| ctx.set_frame_offset(0, o).is_ok());
            assert!(found.is_some(), "the return follows the add");
            if observed {
                // The hooked loop asks about the new instruction.
                assert!(paused(ctx.resume()));
            }
            assert_eq!(run_to_end(&mut ctx), [1]);
        }
    }

    /// Counts `%i3` to `%i0`, and every iteration ever run in `%i5`.
    const LOOP: &str = r#"
vm.module @l version 0
vm.export @count
vm.func @count(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  vm.br ^bb1(%i1->%i3)
^bb1:
  %i3 = vm.add.i32 %i3, %i2
  %i5 = vm.add.i32 %i5, %i2
  %i4 = vm.cmp.lt.i32.s %i3, %i0
  vm.cond_br %i4, ^bb1(), ^bb2()
^bb2:
  vm.return %i5
}
"#;

    #[test]
    fn a_loop_run_again_after_a_jump_in_every_tier() {
        for tier in [crate::Tier::Interp, crate::Tier::Jit, crate::Tier::Auto] {
            let mut ctx = Context::new(&TypeRegistry::new());
            ctx.register_module(Module::from_assembly(LOOP, "l.vmasm").expect("assembles"))
                .expect("registers");
            ctx.set_tier(tier);
            let count = ctx.function("l.count").expect("count");
            ctx.set_observer(Some(Box::new(EveryInstruction)));
            assert!(paused(ctx.begin_call(&count, &[Value::I32(100_000)])));
            let first = ctx.frames()[0].frame.offset.expect("offset");
            // Three instructions, then five iterations of four.
            for _ in 0..3 + 5 * 4 {
                assert!(paused(ctx.resume()));
            }
            ctx.set_frame_offset(0, first)
                .expect("the first instruction");
            // The loop runs again from 0; %i5 keeps its five.
            assert_eq!(run_to_end(&mut ctx), [100_005], "{tier:?}");
            if tier == crate::Tier::Jit && crate::jit::available() {
                assert!(ctx.compiled_entries() > 0, "compiled code ran the loop");
            }
        }
    }

    #[test]
    fn only_a_paused_call_can_be_changed() {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_module(Module::from_assembly(PROGRAM, "m.vmasm").expect("assembles"))
            .expect("registers");
        let e = ctx.set_frame_offset(0, 1).expect_err("nothing paused");
        assert_eq!(e.code, StatusCode::FailedPrecondition);
        let e = ctx
            .return_from_frame(0, vec![])
            .expect_err("nothing paused");
        assert_eq!(e.code, StatusCode::FailedPrecondition);
    }
}
