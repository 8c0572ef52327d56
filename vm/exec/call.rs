//! The fast paths of calls between bytecode functions of one module and of
//! returns: out of line (called from the hot loop) but without the slow
//! path's general set-up, and of calls of imports linked to another
//! bytecode module. Host imports, variadic and yieldable calls go through
//! [`super::slow::step`].

use crate::bytecode::isa::IMPORT_ORDINAL_BIT;
use crate::context::{CallState, Context, ImportTarget};
use crate::program::{aux_list, Function, Inst};
use crate::trap::{StatusCode, Trap};
use crate::values::Ref;

use super::{
    bytecode, marshal_args, marshal_results, pop_frame, push_frame, read_values_into, Frame, Stack,
};

/// Where the loop is: the next instruction and the register windows.
pub(super) type Cursor = (*const Inst, *mut u32, *mut Ref);

/// `vm.call` of internal function `i.x`: records where the caller goes on
/// (`next`, the instruction after the call) and where results go, pushes the
/// callee's frame and passes the arguments.
///
/// No reference count touched, no clone, and
/// argument copies without bounds checks (the verifier checked them).
/// Returns the callee's cursor, so the loop goes on without re-reading the
/// frame stack.
#[inline(never)]
pub(super) fn enter(ctx: &mut Context, i: &Inst, next: *const Inst) -> Result<Cursor, Trap> {
    let limit = ctx.stack_limit();
    let st = &mut ctx.stack;
    let Some(caller) = st.frames.last_mut() else {
        return Err(no_frame("call"));
    };
    // The function outlives the reference even when `frames` reallocates
    // (see `FuncRef`).
    let cfunc: &Function = caller.func.get();
    // SAFETY: `next` points into the caller's code (one past the call, which
    // is never the function's last instruction: a guard follows).
    caller.pc = unsafe { next.offset_from(cfunc.code.as_ptr()) } as u32;
    let (args, caller_base) = call_record(caller, cfunc, i);
    let module = caller.module;
    let callee = &bytecode(&mut ctx.modules, module).funcs[i.x as usize];
    let f: &Function = callee;
    let (base, rbase) = push_frame(st, module, callee, limit)?;
    pass_args(st, caller_base, (base, rbase), args, f);
    Ok(window_cursor(st, f.code.as_ptr(), base, rbase))
}

/// `vm.call` of import `i.x` when it is linked to a function of another
/// bytecode module of the context: records where the caller goes on
/// (`next`, the instruction after the call), pushes the callee's frame (in
/// its own module) and passes the arguments, as [`enter`] does within a
/// module, and returns the callee's cursor. Returns `None`, touching
/// nothing, for any other import (host functions, unresolved optional
/// imports), which [`super::slow::call`] handles.
#[inline(never)]
pub(super) fn enter_import(
    ctx: &mut Context,
    i: &Inst,
    next: *const Inst,
) -> Result<Option<Cursor>, Trap> {
    let limit = ctx.stack_limit();
    let st = &mut ctx.stack;
    let Some(caller) = st.frames.last_mut() else {
        return Err(no_frame("call"));
    };
    let imp = (i.x & !IMPORT_ORDINAL_BIT) as usize;
    let (module, ordinal) = match bytecode(&mut ctx.modules, caller.module).imports.get(imp) {
        Some(&ImportTarget::Bytecode { module, ordinal }) => (module, ordinal),
        _ => return Ok(None),
    };
    // The function outlives the reference even when `frames` reallocates
    // (see `FuncRef`).
    let cfunc: &Function = caller.func.get();
    // SAFETY: `next` points into the caller's code (one past the call, which
    // is never the function's last instruction: a guard follows).
    caller.pc = unsafe { next.offset_from(cfunc.code.as_ptr()) } as u32;
    let (args, caller_base) = call_record(caller, cfunc, i);
    let callee = &bytecode(&mut ctx.modules, module).funcs[ordinal as usize];
    let f: &Function = callee;
    let (base, rbase) = push_frame(st, module, callee, limit)?;
    pass_args(st, caller_base, (base, rbase), args, f);
    Ok(Some(window_cursor(st, f.code.as_ptr(), base, rbase)))
}

/// Passes a call's arguments, registers `args` of the caller's window at
/// `caller_base`, into the windows just opened at `callee_base` for `f`.
#[inline(always)]
fn pass_args(
    st: &mut Stack,
    caller_base: (usize, usize),
    callee_base: (usize, usize),
    args: &[u32],
    f: &Function,
) {
    let nargs = args.len();
    if f.args_are_slots && nargs <= f.i32_count as usize {
        // One slot each, placed from slot 0.
        let regs = st.i32s.as_mut_ptr();
        let copy = |k: usize, reg: u32| {
            // SAFETY: the verifier checked each argument register against
            // the caller's window, which lies below the callee's; `k <
            // nargs <= count` keeps the destination inside the callee's
            // window.
            unsafe { *regs.add(callee_base.0 + k) = *regs.add(caller_base.0 + reg as usize) }
        };
        match args {
            // One argument: no loop set-up.
            [reg] => copy(0, *reg),
            _ => args.iter().enumerate().for_each(|(k, &reg)| copy(k, reg)),
        }
    } else {
        marshal_args(st, caller_base, callee_base, args, &f.arg_slots);
    }
}

/// The argument registers of plain call `i` of `cfunc` (its aux record:
/// `[n, args...] [m, results...]`) and the caller's window bases; records
/// in `caller` where the results go.
#[inline(always)]
fn call_record<'f>(
    caller: &mut Frame,
    cfunc: &'f Function,
    i: &Inst,
) -> (&'f [u32], (usize, usize)) {
    let rec = i.y as usize;
    let nargs = cfunc.aux[rec] as usize;
    caller.ret = (rec + 1 + nargs) as u32;
    let bases = (caller.i32_base as usize, caller.ref_base as usize);
    (&cfunc.aux[rec + 1..rec + 1 + nargs], bases)
}

#[cold]
#[inline(never)]
fn no_frame(what: &str) -> Trap {
    Trap::new(StatusCode::Internal, format!("{what} without a frame"))
}

/// The loop's cursor for a frame whose next instruction is `ip`, with
/// register windows at `base`/`rbase`.
#[inline(always)]
fn window_cursor(st: &mut Stack, ip: *const Inst, base: usize, rbase: usize) -> Cursor {
    // SAFETY: the bases index windows that exist while the frame does.
    let regs = unsafe { st.i32s.as_mut_ptr().add(base) };
    // SAFETY: as above.
    let refs = unsafe { st.refs.as_mut_ptr().add(rbase) };
    (ip, regs, refs)
}

/// `vm.return` with the operand list at aux `i.x`: passes the results to
/// the caller's result registers and pops the frame, or, from the entry
/// frame, ends the run with the returned values. Returns the caller's cursor
/// (`Ok(Ok(..))`) or the end of the run (`Ok(Err(..))`).
#[inline(never)]
pub(super) fn leave(ctx: &mut Context, i: &Inst) -> Result<Result<Cursor, CallState>, Trap> {
    let st = &mut ctx.stack;
    let n = st.frames.len();
    if n >= 2 {
        let (top, caller) = (&st.frames[n - 1], &st.frames[n - 2]);
        // Both functions outlive the pops below (see `FuncRef`).
        let (func, cfunc): (&Function, &Function) = (top.func.get(), caller.func.get());
        if func.results_are_slots && func.ref_count == 0 {
            // The common case: one-slot results, no ref window to release.
            let base = top.i32_base as usize;
            let (caller_base, caller_rbase) = (caller.i32_base as usize, caller.ref_base as usize);
            let src = aux_list(&func.aux, i.x, 0);
            let dst = aux_list(&cfunc.aux, caller.ret, 0);
            // SAFETY: the caller's saved pc is an instruction index of its
            // function (set by `enter` from the instruction after the call).
            let ip = unsafe { cfunc.code.as_ptr().add(caller.pc as usize) };
            let regs = st.i32s.as_mut_ptr();
            let copy = |s: u32, d: u32| {
                // SAFETY: the verifier checked result registers against the
                // callee's window and destination registers against the
                // caller's; both windows exist until the pop below.
                unsafe { *regs.add(caller_base + d as usize) = *regs.add(base + s as usize) }
            };
            match (src, dst) {
                // Most functions return one value: no loop set-up.
                ([s], [d]) => copy(*s, *d),
                _ => src.iter().zip(dst).for_each(|(&s, &d)| copy(s, d)),
            }
            st.frames.pop();
            st.i32_top = base;
            return Ok(Ok(window_cursor(st, ip, caller_base, caller_rbase)));
        }
    }
    leave_general(ctx, i)
}

/// [`leave`] for every other case: results that are not all one-slot
/// values, frames with refs, and the return of the entry frame.
#[inline(never)]
fn leave_general(ctx: &mut Context, i: &Inst) -> Result<Result<Cursor, CallState>, Trap> {
    let st = &mut ctx.stack;
    let n = st.frames.len();
    let Some(top) = st.frames.last() else {
        return Err(no_frame("return"));
    };
    let callee_base = (top.i32_base as usize, top.ref_base as usize);
    // The function outlives `pop_frame` below (see `FuncRef`).
    let func: &Function = top.func.get();
    let src = aux_list(&func.aux, i.x, 0);
    if n == 1 {
        // Back to the embedder.
        // (The kinds stay: the next call's `begin` overwrites them in
        // place, no allocation.)
        let mut values = Vec::with_capacity(src.len());
        read_values_into(
            (&st.i32s, &mut st.refs),
            callee_base,
            src,
            &st.entry_results,
            &mut values,
        );
        pop_frame(st);
        return Ok(Err(CallState::Done(values)));
    }
    let caller = &st.frames[n - 2];
    let caller_base = (caller.i32_base as usize, caller.ref_base as usize);
    let caller_pc = caller.pc as usize;
    let cfunc: &Function = caller.func.get();
    let dst = aux_list(&cfunc.aux, caller.ret, 0);
    // One-slot results from frames without refs took the path in `leave`;
    // what is left is rare enough for the general copy.
    marshal_results(st, callee_base, caller_base, src, dst, &func.result_kinds);
    // SAFETY: the caller's saved pc is an instruction index of its function
    // (set by `enter` from the instruction after the call).
    let ip = unsafe { cfunc.code.as_ptr().add(caller_pc) };
    pop_frame(st);
    Ok(Ok(window_cursor(st, ip, caller_base.0, caller_base.1)))
}
