//! Calls that compiled code makes within its module: the callee's frame
//! is pushed as the interpreter pushes it (same register windows in the
//! shared stacks, same frame record), and the callee runs as compiled code
//! to its return, all without leaving compiled code.
//!
//! The interpreter cannot resume a native caller part-way, so whenever a
//! callee would leave compiled code (an instruction the interpreter must
//! run, a trap, the stop word), every compiled caller leaves with it:
//! each frame then holds where it goes on (a caller's pc is the
//! instruction after its call, as [`super::call::enter`] records it), and
//! the interpreter resumes the innermost one. A call that cannot start
//! without the interpreter (no compiled code for the callee, a stack limit
//! reached, stacks to grow, the stop word raised) changes nothing and the
//! caller leaves before it, for the interpreter to make the call: limits
//! and traps then come from one place, the same in both tiers.

use std::sync::atomic::Ordering;

use crate::bytecode::isa::{Opcode, IMPORT_ORDINAL_BIT};
use crate::context::{Context, Registered};
use crate::jit::{Checks, JitCode, JitEnv, LEFT_IN_CALLEE};
use crate::program::aux_list;
use crate::tier::Tier;

use super::{call, fits_without_growth, marshal_args, push_frame, FuncRef, TieredFunction};

/// The call ran and returned: its results are in the caller's window.
pub(crate) const RETURNED: u32 = 0;
/// Nothing changed: compiled code leaves before the call.
pub(crate) const NOT_ENTERED: u32 = 1;
/// The callee, or a function it called, left compiled code part-way:
/// compiled code leaves with [`LEFT_IN_CALLEE`].
pub(crate) const LEFT: u32 = 2;

/// The most native stack that nested compiled calls take (below the
/// frame that entered compiled code) before a call leaves for the
/// interpreter: about 600 levels of a small function, well inside the
/// smallest thread stack Rust gives (2 MiB).
pub(crate) const NATIVE_STACK_BYTES: usize = 256 << 10;

/// An address in the caller's native stack frame.
#[inline(always)]
pub(crate) fn native_stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// `vm.call` at instruction `k` of the running frame's function, a
/// function of the same module, from compiled code: pushes the callee's
/// frame, runs its compiled code (the same [`Checks`] copy) and performs
/// its return. Returns [`RETURNED`], [`NOT_ENTERED`] or [`LEFT`].
///
/// # Safety
/// `env` is the live environment of compiled code running the top frame
/// of `env.ctx`'s stack, whose registers the code has stored as for an
/// exit at `k`; nothing else touches the context until this returns.
pub(crate) unsafe extern "C" fn call_from_compiled(env: *mut JitEnv, k: u32) -> u32 {
    // SAFETY: per the contract, `env` is valid and not otherwise used
    // while this runs.
    let env = unsafe { &mut *env };
    if native_stack_address() < env.native_floor {
        return NOT_ENTERED;
    }
    let checks = if env.checks == Checks::Polled as u32 {
        Checks::Polled
    } else {
        Checks::None
    };
    if checks == Checks::Polled && stop_raised(env) {
        return NOT_ENTERED;
    }
    let ctx_ptr = env.ctx;
    // SAFETY: per the contract, the context is alive and only this call
    // uses it now (the compiled caller holds no reference into it).
    let ctx = unsafe { &mut *ctx_ptr };
    let Some(caller) = ctx.stack.frames.last() else {
        return NOT_ENTERED;
    };
    let (module, cfunc) = (caller.module, caller.func.get());
    let caller_base = caller.i32_base as usize;
    let Some(&inst) = cfunc.code.get(k as usize) else {
        return NOT_ENTERED;
    };
    if inst.op != Opcode::Call || inst.x & IMPORT_ORDINAL_BIT != 0 {
        return NOT_ENTERED;
    }
    let Some(Registered::Bytecode(b)) = ctx.modules.get(module as usize) else {
        return NOT_ENTERED;
    };
    let Some(callee_arc) = b.funcs.get(inst.x as usize) else {
        return NOT_ENTERED;
    };
    // The function outlives every frame of it (see `FuncRef`), and so
    // its code.
    let callee = FuncRef::new(callee_arc).get();
    let code = match callee.jit.code(checks) {
        Some(code) => code,
        None => match compile_callee(ctx, callee, checks) {
            Some(code) => code,
            None => return NOT_ENTERED,
        },
    };
    let limit = ctx.stack_limit();
    if !code.callable || !fits_without_growth(&ctx.stack, callee, limit) {
        return NOT_ENTERED;
    }
    // The call record (`[n, args...] [m, results...]`), as
    // `call::enter` reads it.
    let rec = inst.y as usize;
    let Some(&nargs) = cfunc.aux.get(rec) else {
        return NOT_ENTERED;
    };
    let ret_at = rec + 1 + nargs as usize;
    let Some(args) = cfunc.aux.get(rec + 1..ret_at) else {
        return NOT_ENTERED;
    };
    let st = &mut ctx.stack;
    if let Some(caller) = st.frames.last_mut() {
        caller.pc = k + 1;
        caller.ret = ret_at as u32;
    }
    // The stacks do not grow (checked above), so the caller's windows
    // stay where its compiled code holds them.
    let Ok((base, rbase)) = push_frame(st, module, callee_arc, limit) else {
        return NOT_ENTERED;
    };
    if callee.args_are_slots && args.len() <= callee.i32_count as usize {
        let slots = st.i32s.as_mut_ptr();
        for (j, &reg) in args.iter().enumerate() {
            // SAFETY: the verifier checked each argument register against
            // the caller's window, which lies below `base`; `j < nargs <=
            // count` keeps the destination inside the callee's window.
            unsafe { *slots.add(base + j) = *slots.add(caller_base + reg as usize) };
        }
    } else {
        let caller_ref_base = st.frames[st.frames.len() - 2].ref_base as usize;
        marshal_args(
            st,
            (caller_base, caller_ref_base),
            (base, rbase),
            args,
            &callee.arg_kinds,
        );
    }
    // SAFETY: the bases index the windows just opened.
    let (regs, refs) = unsafe {
        (
            st.i32s.as_mut_ptr().add(base),
            st.refs.as_mut_ptr().add(rbase),
        )
    };
    // The callee is of the caller's module: the same globals and type
    // table; only the ref window differs.
    let caller_refs = std::mem::replace(&mut env.refs, refs);
    let short_before = std::mem::replace(&mut env.fuel_short, 0);
    // SAFETY: `regs` and `refs` are the windows of the frame just pushed
    // for `callee`, whose code this is; nothing else touches them until
    // the code returns.
    let stop = unsafe { code.run(regs, env, 0) };
    env.refs = caller_refs;
    let short = env.fuel_short != 0;
    env.fuel_short |= short_before;
    if stop == LEFT_IN_CALLEE {
        return LEFT;
    }
    // SAFETY: as above; the nested code has returned.
    let ctx = unsafe { &mut *ctx_ptr };
    let st = &mut ctx.stack;
    let n = st.frames.len();
    if n < 2 {
        return LEFT;
    }
    st.frames[n - 1].pc = stop;
    let Some(ret) = callee.code.get(stop as usize) else {
        return LEFT;
    };
    if ret.op != Opcode::Return || short || (checks == Checks::Polled && stop_raised(env)) {
        return LEFT;
    }
    if callee.results_are_slots && callee.ref_count == 0 {
        // One-slot results, no ref window to release: `call::leave`'s
        // short path.
        let src = aux_list(&callee.aux, ret.x, 0);
        let dst = aux_list(&cfunc.aux, ret_at as u32, 0);
        let slots = st.i32s.as_mut_ptr();
        for (&s, &d) in src.iter().zip(dst) {
            // SAFETY: the verifier checked result registers against the
            // callee's window and destinations against the caller's; both
            // windows exist until the pop below.
            unsafe { *slots.add(caller_base + d as usize) = *slots.add(base + s as usize) };
        }
        st.frames.pop();
        st.i32_top = base;
        return RETURNED;
    }
    match call::leave(ctx, ret) {
        Ok(Ok(_)) => RETURNED,
        _ => LEFT,
    }
}

/// The code of `callee`, not compiled yet for `checks`, compiled now when
/// it is hot (`Tier::Auto`) or whenever asked (`Tier::Jit`); `None` when
/// it stays interpreted (for now).
#[cold]
#[inline(never)]
fn compile_callee<'f>(
    ctx: &Context,
    callee: &'f TieredFunction,
    checks: Checks,
) -> Option<&'f JitCode> {
    let eager = ctx.tier == Tier::Jit;
    if callee.jit.refused(checks) || (!eager && !callee.jit.heat_up(Tier::HOT_BACK_EDGES)) {
        return None;
    }
    callee.jit.compile(callee, eager, checks, &ctx.memory)
}

/// Whether the context's stop word is raised.
fn stop_raised(env: &JitEnv) -> bool {
    // SAFETY: `stop` is the running context's stop word, alive while it
    // runs.
    unsafe { &*env.stop }.load(Ordering::Relaxed) != 0
}
