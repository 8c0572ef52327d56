//! The fast paths of calls between bytecode functions of one module and of
//! returns: out of line (called from the hot loop) but without the slow
//! path's general set-up. Imports, variadic and yieldable calls go through
//! [`super::slow::step`].

use std::rc::Rc;

use crate::context::{CallState, Context};
use crate::program::{aux_list, Inst};
use crate::trap::{StatusCode, Trap};

use super::{bytecode, marshal_args, marshal_results, pop_frame, push_frame, read_values};

/// `vm.call` of internal function `i.x`: records where the caller goes on
/// (`next`, the instruction after the call) and where results go, pushes the
/// callee's frame and passes the arguments.
#[inline(never)]
pub(super) fn enter(ctx: &mut Context, i: &Inst, next: *const Inst) -> Result<(), Trap> {
    let st = &mut ctx.stack;
    let Some(caller) = st.frames.last_mut() else {
        return Err(Trap::new(StatusCode::Internal, "call without a frame"));
    };
    let caller_func = Rc::clone(&caller.func);
    // SAFETY: `next` points into the caller's code (one past the call, which
    // is never the function's last instruction: a guard follows).
    caller.pc = unsafe { next.offset_from(caller_func.code.as_ptr()) } as u32;
    // Aux record of a plain call: [n, args...] [m, results...].
    let rec = i.y as usize;
    let nargs = caller_func.aux[rec] as usize;
    caller.ret = (rec + 1 + nargs) as u32;
    let caller_base = (caller.i32_base as usize, caller.ref_base as usize);
    let module = caller.module;
    let callee = Rc::clone(&bytecode(&mut ctx.modules, module).funcs[i.x as usize]);
    push_frame(st, module, Rc::clone(&callee), ctx.max_depth)?;
    let top = st
        .frames
        .last()
        .map(|f| (f.i32_base as usize, f.ref_base as usize));
    let Some(callee_base) = top else {
        return Err(Trap::new(StatusCode::Internal, "callee frame missing"));
    };
    let args = &caller_func.aux[rec + 1..rec + 1 + nargs];
    if callee.args_are_slots && nargs <= callee.i32_count as usize {
        // One slot each, placed from slot 0 (the verifier checked the
        // source registers against the caller's file).
        for (k, &reg) in args.iter().enumerate() {
            st.i32s[callee_base.0 + k] = st.i32s[caller_base.0 + reg as usize];
        }
    } else {
        marshal_args(st, caller_base, callee_base, args, &callee.arg_kinds);
    }
    Ok(())
}

/// `vm.return` with the operand list at aux `i.x`: passes the results to
/// the caller's result registers and pops the frame, or, from the entry
/// frame, ends the run with the returned values.
#[inline(never)]
pub(super) fn leave(ctx: &mut Context, i: &Inst) -> Result<Option<CallState>, Trap> {
    let st = &mut ctx.stack;
    let n = st.frames.len();
    let Some(top) = st.frames.last() else {
        return Err(Trap::new(StatusCode::Internal, "return without a frame"));
    };
    let func = Rc::clone(&top.func);
    let callee_base = (top.i32_base as usize, top.ref_base as usize);
    let src = aux_list(&func.aux, i.x, 0);
    if n == 1 {
        // Back to the embedder.
        let kinds = std::mem::take(&mut st.entry_results);
        let values = read_values(st, callee_base, src, &kinds);
        pop_frame(st);
        return Ok(Some(CallState::Done(values)));
    }
    let caller = &st.frames[n - 2];
    let caller_base = (caller.i32_base as usize, caller.ref_base as usize);
    let caller_func = Rc::clone(&caller.func);
    let dst = aux_list(&caller_func.aux, caller.ret, 0);
    if func.results_are_slots {
        for (&s, &d) in src.iter().zip(dst) {
            st.i32s[caller_base.0 + d as usize] = st.i32s[callee_base.0 + s as usize];
        }
    } else {
        marshal_results(st, callee_base, caller_base, src, dst, &func.result_kinds);
    }
    pop_frame(st);
    Ok(None)
}
