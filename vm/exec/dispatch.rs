//! The interpreter's hot loop: fetch, dispatch and execute the common
//! instructions (constants, arithmetic, comparisons, conversions, `br`,
//! `cond_br`, fused compare-branches, buffer loads and stores) with nothing
//! but the instruction pointer and the two register-window pointers live
//! across iterations. Everything else goes through [`super::slow::step`]
//! out of line, after which the loop reloads its pointers from the top frame.
//!
//! Keeping the loop's state to `ip`, `regs` and `refs` lets the compiler keep
//! all three in machine registers (with one big loop over the whole ISA they
//! were spilled to the stack and reloaded on every instruction).

use crate::bytecode::isa::{Opcode, IMPORT_ORDINAL_BIT, REF_INDEX_MASK, REF_MOVE_BIT};
use crate::context::{CallState, Context, Registered};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::jit::{
    callable_inline, entry_live_slots, Callee, Callees, Checks, JitEnv, LEFT_IN_CALLEE,
    MAX_INLINE_RESULTS, RETURNED_BIT,
};
use crate::program::runs::{self, RunRole, LONG_RUN};
use crate::program::{Inst, NONE, NO_REMAP};
use crate::tier::Tier;
use crate::trap::Trap;
use crate::values::{ElementType, List, Ref};

use super::cmath::{self, Bin, Un};
use super::hooks::{self, LoopKind};
use super::{
    call, cast_f32_si32, div_zero, lround, slow, Frame, Stack, Suspended, TieredFunction,
    MAX_REGISTER_SLOTS,
};

/// The current frame's instruction pointer and register windows.
fn cursor(st: &mut Stack) -> (*const Inst, *mut u32, *mut Ref) {
    let top = st.frames.last().expect("a frame to run");
    let (pc, ib, rb) = (
        top.pc as usize,
        top.i32_base as usize,
        top.ref_base as usize,
    );
    // SAFETY: a frame's saved pc is an instruction index of its function
    // (set by `begin`, by calls to 0, and by `save_ip` from a valid `ip`).
    let ip = unsafe { top.func.code.as_ptr().add(pc) };
    // SAFETY: the bases index windows that exist while the frame does.
    let regs = unsafe { st.i32s.as_mut_ptr().add(ib) };
    // SAFETY: as above.
    let refs = unsafe { st.refs.as_mut_ptr().add(rb) };
    (ip, regs, refs)
}

/// Records `ip` (the instruction after the current one) as the top frame's
/// pc, for the slow path, a backtrace or a later resume.
#[inline]
fn save_ip(st: &mut Stack, ip: *const Inst) {
    if let Some(f) = st.frames.last_mut() {
        // SAFETY: `ip` points into the top frame's `func.code` (at most one
        // past the current instruction, which is never the last one).
        f.pc = unsafe { ip.offset_from(f.func.code.as_ptr()) } as u32;
    }
}

/// A ref block argument: retains (or moves) ref register `s` into `d`.
///
/// # Safety
/// `s` and `d` must be ref ordinals inside the window at `refs`.
#[cold]
#[inline(never)]
pub(crate) unsafe fn remap_ref(refs: *mut Ref, s: u16, d: u16) {
    let moved = s & REF_MOVE_BIT != 0;
    let (s, d) = ((s & REF_INDEX_MASK) as usize, (d & REF_INDEX_MASK) as usize);
    // SAFETY: per the contract, both indices are inside the window.
    let v = unsafe {
        if moved {
            std::mem::take(&mut *refs.add(s))
        } else {
            (*refs.add(s)).clone()
        }
    };
    // SAFETY: as above.
    unsafe { *refs.add(d) = v };
}

/// The running module's global storage (`rwdata`); empty when the top
/// frame's module has none, so that every access misses and the slow path
/// reports the out-of-range global.
#[inline(always)]
fn rwdata(ctx: &mut Context) -> &mut [u8] {
    let m = ctx.stack.frames.last().map_or(u32::MAX, |f| f.module) as usize;
    match ctx.modules.get_mut(m) {
        Some(Registered::Bytecode(b)) => &mut b.rwdata,
        _ => &mut [],
    }
}

/// The `N` bytes of global storage at byte offset `off`, if in range.
#[inline(always)]
fn global<const N: usize>(g: &mut [u8], off: u32) -> Option<&mut [u8; N]> {
    let off = off as usize;
    g.get_mut(off..off.checked_add(N)?)?.try_into().ok()
}

/// What [`enter_compiled`] did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entered {
    /// Nothing: no code for this place.
    No,
    /// Compiled code ran; the frame's pc is where it stopped.
    Ran,
    /// Compiled code ran and stopped where the fuel left does not pay for
    /// the next run (uncharged): the hooked loop goes on from there.
    FuelShort,
    /// Compiled code spent its slice of fuel and stopped before a run it
    /// did not pay for (the interpreter pays, then reads the stop word).
    SliceEnd,
}

/// The most fuel compiled code is given at once: it comes back to the
/// interpreter, which reads the stop word, at least this often (about a
/// tenth of a millisecond of compiled code), instead of loading the word
/// at every back edge.
const SLICE: u64 = 1 << 18;

/// Runs the top frame in compiled code (the copy for `checks`) when its
/// function is compiled (or hot enough to compile now) and its pc is a
/// place compiled code starts at. On return the frame's pc is the
/// instruction compiled code stopped before, for the interpreter.
#[inline(never)]
fn enter_compiled(ctx: &mut Context, token: u64, checks: Checks) -> Entered {
    let Some(top) = ctx.stack.frames.last() else {
        return Entered::No;
    };
    let (func, pc) = (top.func.get(), top.pc);
    if func.jit.refused(checks) {
        return Entered::No;
    }
    let code = match func.jit.code(checks) {
        Some(code) => code,
        None => {
            // (Code another context of the module compiled is linked at
            // once: the function is hot there.)
            if ctx.tier != Tier::Jit
                && !func.jit.shared_ready(checks, false)
                && !func.jit.heat_up(Tier::HOT_BACK_EDGES)
            {
                return Entered::No;
            }
            let module = top.module;
            match func
                .jit
                .compile(func, ctx.tier == Tier::Jit, checks, &ctx.memory, || {
                    inline_callees(ctx, module, func, checks)
                }) {
                Some(code) => code,
                None => return Entered::No,
            }
        }
    };
    // A callable function also starts at its entry (where calls start).
    let starts_here = code.enters_at(pc, ctx.tier == Tier::Jit) || (pc == 0 && code.callable);
    if !starts_here {
        return Entered::No;
    }
    let module = top.module as usize;
    let (stack_end, (i32_base, ref_base)) = (top.stack_end, (top.i32_base, top.ref_base));
    let limit = ctx.stack_limit();
    let st = &mut ctx.stack;
    debug_assert_eq!(st.i32_top, i32_base as usize + func.i32_count as usize);
    debug_assert_eq!(st.ref_top, ref_base as usize + func.ref_count as usize);
    let frames = st.frames.as_mut_ptr();
    let depth = st.frames.len();
    let frame_room = st.frames.capacity().min(limit.frames);
    let i32s = st.i32s.as_mut_ptr();
    let i32_room = st.i32s.len().min(MAX_REGISTER_SLOTS);
    let ref_top = st.ref_top as u32;
    let (_, regs, refs) = cursor(st);
    let Some(Registered::Bytecode(state)) = ctx.modules.get_mut(module) else {
        return Entered::No;
    };
    let mut env = JitEnv {
        refs,
        rwdata: state.rwdata.as_mut_ptr(),
        rwdata_len: state.rwdata.len() as u64,
        token,
        fault: 0,
        access_len: 0,
        types: state.types.as_ptr(),
        types_len: state.types.len(),
        fuel: ctx.hooks.fuel.unwrap_or(u64::MAX).min(SLICE),
        fuel_short: 0,
        stop: ctx.hooks.stop.bits(),
        // While a profile samples (at the polls of the interpreter's
        // calls and returns), calls are left to the interpreter, so that a
        // callee without loops is seen on top as before.
        frames_end: if crate::profile::any_active() {
            0
        } else {
            frames.wrapping_add(frame_room) as usize
        },
        stack_bytes: limit.bytes,
        i32s: i32s as usize,
        i32_end: i32s.wrapping_add(i32_room) as usize,
        native_floor: native_floor(native_stack_address()),
        module: module as u32,
        ref_top,
        innermost: 0,
        ret: [0; MAX_INLINE_RESULTS],
        memory: &ctx.memory,
        max_list_elements: ctx.limits.max_list_elements,
        lists: &mut ctx.lists,
    };
    let slice = env.fuel;
    ctx.compiled_entries += 1;
    let frame = frames.wrapping_add(depth - 1) as *mut u8;
    // SAFETY: `regs` and `refs` are the top frame's windows, of a frame of
    // `func`, whose record is `frame`, and `env` holds its module's globals
    // and type table and the bounds of the frame vector's capacity and of
    // the register storage; nothing else touches them until the code
    // returns (it calls `jit::helpers`, which touch the ref window and
    // buffers, and the compiled code of functions it calls, which writes
    // windows above this frame's and frame records past the vector's
    // length, within those bounds).
    let next = unsafe { code.run(regs, &mut env, pc, frame, stack_end) };
    let st = &mut ctx.stack;
    if next == LEFT_IN_CALLEE {
        // Calls made in compiled code left part-way: their records are
        // written, each caller's pc after its call, the innermost's where
        // it stopped.
        let top = (env.innermost - frames as usize) / std::mem::size_of::<Frame>();
        // SAFETY: compiled callers wrote every record from `depth` to
        // `top` (plain data), all within the capacity (`frames_end`).
        unsafe { st.frames.set_len(top + 1) };
        if let Some(f) = st.frames.last() {
            st.i32_top = f.i32_base as usize + f.func.i32_count as usize;
        }
    } else if let Some(top) = st.frames.last_mut() {
        top.pc = next & !RETURNED_BIT;
        if next & RETURNED_BIT != 0 {
            let base = top.i32_base as usize;
            put_returned(&mut st.i32s, base, func, top.pc as usize, &env.ret);
        }
    }
    let spent = slice.saturating_sub(env.fuel);
    let left = match &mut ctx.hooks.fuel {
        Some(f) => {
            *f = f.saturating_sub(spent);
            *f
        }
        None => u64::MAX,
    };
    if env.fuel_short == 0 {
        return Entered::Ran;
    }
    if left < top_run_fuel(&ctx.stack) {
        Entered::FuelShort
    } else {
        Entered::SliceEnd
    }
}

/// Puts the results compiled code left in `ret` when it made the
/// `vm.return` at `k` of `func` (whose window starts at slot `base` of
/// `i32s`) into the registers that return names, where the interpreter,
/// running the return next, reads them: compiled code stores them only to
/// `ret`, which is all a compiled caller reads.
fn put_returned(
    i32s: &mut [u32],
    base: usize,
    func: &crate::program::Function,
    k: usize,
    ret: &[u64],
) {
    let Some(i) = func.code.get(k) else {
        return;
    };
    let list = crate::program::aux_list(&func.aux, i.x, 0);
    for ((&r, &kind), &v) in list.iter().zip(&func.result_kinds).zip(ret) {
        let s = base + r as usize;
        if matches!(kind, b'I' | b'F') {
            if let Some(pair) = i32s.get_mut(s..s + 2) {
                pair[0] = v as u32;
                pair[1] = (v >> 32) as u32;
            }
        } else if let Some(slot) = i32s.get_mut(s) {
            *slot = v as u32;
        }
    }
}

/// The most native stack that nested calls in compiled code take (below
/// the frame that entered compiled code) before a call leaves for the
/// interpreter: well inside the smallest thread stack Rust gives (2 MiB).
const NATIVE_STACK_BYTES: usize = 256 << 10;

/// Native stack kept free below the lowest frame compiled calls may
/// reach: room for the interpreter, host calls and signal handlers that
/// run after compiled code leaves at its floor.
const NATIVE_STACK_RESERVE: usize = 64 << 10;

/// The lowest address nested compiled calls may take the native stack to
/// from `sp`: [`NATIVE_STACK_BYTES`] below it, and never closer than
/// [`NATIVE_STACK_RESERVE`] to the end of this thread's stack (an
/// embedder's thread may have a small one: Python's `threading.stack_size`
/// goes down to 32 KiB). With no room left, the floor is `sp` itself and
/// every compiled call leaves for the interpreter.
fn native_floor(sp: usize) -> usize {
    let floor = sp.saturating_sub(NATIVE_STACK_BYTES);
    match crate::jit::thread_stack_low() {
        Some(low) => floor.max(low.saturating_add(NATIVE_STACK_RESERVE)).min(sp),
        None => floor,
    }
}

/// An address in the caller's native stack frame.
#[inline(always)]
fn native_stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// What compiled code of `func` (of module `module`) needs of the
/// functions it may call itself ([`crate::jit::Callee`]): those of the
/// module it calls with numbers only.
pub(super) fn inline_callees(
    ctx: &Context,
    module: u32,
    func: &TieredFunction,
    checks: Checks,
) -> Callees {
    let mut callees = Callees::new();
    let Some(Registered::Bytecode(b)) = ctx.modules.get(module as usize) else {
        return callees;
    };
    for i in &func.code[..func.guard as usize] {
        if i.op != Opcode::Call || i.x & IMPORT_ORDINAL_BIT != 0 {
            continue;
        }
        let Some(callee) = b.funcs.get(i.x as usize) else {
            continue;
        };
        if !callable_inline(callee) {
            continue;
        }
        callees.entry(i.x).or_insert_with(|| Callee {
            func: &**callee as *const TieredFunction as usize,
            entry: callee.jit.entry_cell(checks),
            i32_count: u32::from(callee.i32_count),
            frame_bytes: callee.frame_bytes,
            arg_kinds: callee.arg_kinds.to_vec(),
            result_kinds: callee.result_kinds.to_vec(),
            zeroed: entry_live_slots(callee),
            first_run: callee.runs.first().copied().unwrap_or(0),
        });
    }
    callees
}

/// Whether the interpreter, having just pushed the top frame for a call,
/// should leave for compiled code at its entry (`Tier::Auto`): the
/// function is compiled and callable there, or is not compiled yet and its
/// calls made it hot or another context of its module compiled it
/// (compiling or linking it is then tried).
#[inline(always)]
fn callee_enters_compiled(st: &Stack, checks: Checks) -> bool {
    let Some(top) = st.frames.last() else {
        return false;
    };
    let slot = &top.func.jit;
    match slot.code(checks) {
        Some(code) => code.callable || code.enters_at(0, false),
        None => {
            !slot.refused(checks)
                && (slot.shared_ready(checks, false) || slot.heat_up(Tier::HOT_BACK_EDGES))
        }
    }
}

/// [`callee_enters_compiled`] for a call through an import, which
/// compiled code never makes itself: the callee is entered at its entry
/// only when its compiled code runs a loop from there
/// ([`crate::jit::JitCode::enters_at`]). A callee without loops is
/// interpreted: entering and leaving compiled code costs more than its
/// few instructions.
#[inline(always)]
fn import_callee_enters_compiled(st: &Stack, checks: Checks) -> bool {
    let Some(top) = st.frames.last() else {
        return false;
    };
    let slot = &top.func.jit;
    match slot.code(checks) {
        Some(code) => code.enters_at(0, false),
        None => {
            !slot.refused(checks)
                && (slot.shared_ready(checks, false) || slot.heat_up(Tier::HOT_BACK_EDGES))
        }
    }
}

/// Whether a back edge of the top frame to `ip` leaves for compiled code:
/// its function is not compiled yet (the edge heats it up, in
/// [`enter_compiled`]), or its code starts at `ip`. A loop compiled code
/// cannot run round (one that calls through an import, say) is not
/// left at each iteration only for [`enter_compiled`] to find no entry.
#[inline(always)]
fn back_edge_enters(st: &Stack, ip: *const Inst, checks: Checks, eager: bool) -> bool {
    let Some(top) = st.frames.last() else {
        return false;
    };
    match top.func.jit.code(checks) {
        None => true,
        Some(code) => {
            // SAFETY: `ip` is an instruction of the top frame's code (a
            // branch target).
            let pc = unsafe { ip.offset_from(top.func.code.as_ptr()) } as u32;
            code.enters_at(pc, eager) || (pc == 0 && code.callable)
        }
    }
}

/// Whether the interpreter, running the top frame, should leave for
/// compiled code at its back edges: its function is not refused for
/// `checks`, and is either not compiled yet (a back edge heats it up) or
/// compiled with loop heads to enter (any block start with `eager`). Read
/// again whenever the top frame changes inside the dispatch loop (a call or
/// a return the interpreter makes), so that a loop is judged by its own
/// function, not by the function that ran before it.
#[inline(always)]
fn leaves_at_back_edges(st: &Stack, checks: Checks, eager: bool) -> bool {
    st.frames.last().is_some_and(|f| {
        !f.func.jit.refused(checks)
            && f.func
                .jit
                .code(checks)
                .is_none_or(|c| eager || c.has_loop_heads)
    })
}

/// A pause flag that is never raised, for loops without one.
static NEVER: AtomicBool = AtomicBool::new(false);

/// The pause flag to poll: the one set, else [`NEVER`].
fn pause_word(flag: &Option<Arc<AtomicBool>>) -> &AtomicBool {
    flag.as_deref().unwrap_or(&NEVER)
}

#[cold]
#[inline(never)]
fn fault(st: &mut Stack, ip: *const Inst, e: Trap) -> Trap {
    save_ip(st, ip);
    e
}

/// The fuel of the straight run from `ip`, an instruction of the top
/// frame's function (`program::runs`).
#[inline(always)]
fn run_fuel(st: &Stack, ip: *const Inst) -> u64 {
    // SAFETY: `ip` is an instruction of the top frame's code.
    let n = unsafe { (*ip).run };
    if n != LONG_RUN {
        return n as u64;
    }
    long_run_fuel(st, ip)
}

#[cold]
#[inline(never)]
fn long_run_fuel(st: &Stack, ip: *const Inst) -> u64 {
    let Some(top) = st.frames.last() else {
        return LONG_RUN as u64;
    };
    // SAFETY: `ip` points into the top frame's code.
    let k = unsafe { ip.offset_from(top.func.code.as_ptr()) } as usize;
    top.func.runs.get(k).map_or(LONG_RUN as u64, |&n| n as u64)
}

/// The fuel of the straight run at the top frame's pc (0 without a frame).
fn top_run_fuel(st: &Stack) -> u64 {
    match st.frames.last() {
        Some(top) => run_fuel(st, top.func.code.as_ptr().wrapping_add(top.pc as usize)),
        None => 0,
    }
}

/// After a trap at the instruction before `ip` in a fueled loop: gives
/// back the fuel paid for the rest of its run, which did not execute, so
/// the fuel left is what the hooked loop would leave.
#[cold]
#[inline(never)]
fn refund_after_trap(ctx: &mut Context, ip: *const Inst) {
    // SAFETY: `ip` is one past an instruction of the top frame's code.
    let f = unsafe { ip.sub(1) };
    // SAFETY: as above.
    if runs::role(unsafe { (*f).op }) != RunRole::Alone {
        let rest = run_fuel(&ctx.stack, f).saturating_sub(1);
        ctx.hooks.return_fuel(rest);
    }
}

/// Hands the top frame, stopped before an instruction whose run is not
/// paid for, to the hooked loop, which charges one instruction at a time
/// and so runs out of fuel at the exact instruction.
#[cold]
#[inline(never)]
fn run_exact(ctx: &mut Context) -> Result<CallState, Trap> {
    run_loop::<true, PLAIN, false>(ctx)
}

/// Stops before the top frame's pc for a pause; in a fueled loop the run
/// paid for from there is given back first (a suspended call is never
/// charged ahead: whichever loop resumes it charges).
#[cold]
#[inline(never)]
fn pause_here(ctx: &mut Context, fueled: bool) -> Result<CallState, Trap> {
    if fueled {
        let paid = top_run_fuel(&ctx.stack);
        ctx.hooks.return_fuel(paid);
    }
    ctx.stack.suspended = Some(Suspended::Pause);
    Ok(CallState::Paused)
}

/// A stop (deadline, interrupt) found before the top frame's next
/// instruction ran: the backtrace names that instruction, the first of a
/// loop when it was found at a back edge (a frame's reported instruction
/// is the one before its pc: the one under way).
#[cold]
#[inline(never)]
fn stopped_before_next(ctx: &mut Context, e: Trap) -> Trap {
    if let Some(f) = ctx.stack.frames.last_mut() {
        f.pc = f.pc.saturating_add(1);
    }
    e
}

/// Answers a raised stop word or pause flag: `Err` to end the invocation
/// (interrupt, deadline), `Ok(true)` to pause, `Ok(false)` when the word
/// was stale.
#[cold]
#[inline(never)]
fn attend(ctx: &mut Context) -> Result<bool, Trap> {
    if ctx.hooks.stop.raised() {
        ctx.hooks.check_stop()?;
        if ctx.hooks.stop.take_sample() {
            super::profiling::take_sample(ctx, None);
        }
    }
    if let Some(p) = &ctx.hooks.pause {
        if p.swap(false, Ordering::Relaxed) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Runs the top frame until the entry frame returns, the program yields or
/// pauses, or something fails, in the copy of the loop the context's
/// settings need ([`LoopKind`]): the plain one checks nothing; the polled
/// one reads the stop word and pause flag at back edges and calls; the
/// fueled one also charges fuel per straight run; the hooked one runs an
/// observer before every instruction. The first three enter compiled code
/// (the copy with the same checks) unless the tier is `Interp`.
pub(super) fn run(ctx: &mut Context) -> Result<CallState, Trap> {
    // Buffer leases taken by this run go back when the outermost run on
    // this thread returns (vm/values/buffer/lease.rs).
    let _run = crate::values::buffer::lease::RunGuard::enter();
    let jit = ctx.tier != Tier::Interp && crate::jit::available();
    match ctx.hooks.loop_kind() {
        LoopKind::Hooked => run_loop::<true, PLAIN, false>(ctx),
        LoopKind::Plain if jit => run_loop::<false, PLAIN, true>(ctx),
        LoopKind::Plain => run_loop::<false, PLAIN, false>(ctx),
        LoopKind::Polled if jit => run_loop::<false, POLLED, true>(ctx),
        LoopKind::Polled => run_loop::<false, POLLED, false>(ctx),
        LoopKind::Fueled => {
            // A call starts (or resumes) with its first run unpaid.
            if !ctx.hooks.take_fuel(top_run_fuel(&ctx.stack)) {
                return run_exact(ctx);
            }
            if jit {
                run_loop::<false, FUELED, true>(ctx)
            } else {
                run_loop::<false, FUELED, false>(ctx)
            }
        }
    }
}

/// `run_loop`'s `LIMITS`: nothing is checked.
const PLAIN: u8 = 0;
/// The stop word and pause flag are polled at back edges and calls.
const POLLED: u8 = 1;
/// Polled, and fuel is charged per straight run.
const FUELED: u8 = 2;

/// The loop. `HOOKED`: the per-instruction hooks run before each
/// instruction (`LIMITS` is then `PLAIN` and `JIT` false: the hooks check
/// everything). `LIMITS` (see [`run`]): what the fast loop checks. `JIT`:
/// leave for compiled code (`vm/jit`) at loop back edges, and with
/// `Tier::Jit` at calls, of functions that have it.
fn run_loop<const HOOKED: bool, const LIMITS: u8, const JIT: bool>(
    ctx: &mut Context,
) -> Result<CallState, Trap> {
    // This thread's buffer-lease token, read once (vm/values/buffer/lease.rs).
    let token = crate::values::buffer::lease::token();
    // A pause flag is not polled by compiled code: with one set, the
    // fuel-counting copy brings control back at least every slice.
    let checks = match LIMITS {
        PLAIN => Checks::None,
        POLLED if ctx.hooks.pause.is_none() => Checks::Polled,
        _ => Checks::Limits,
    };
    let eager = ctx.tier == Tier::Jit;
    let stop = ctx.hooks.stop.clone();
    let pause_flag = ctx.hooks.pause.clone();
    let pause = pause_word(&pause_flag);
    let fueled = LIMITS == FUELED;
    // Whether to stop: one load of each word.
    let raised = || stop.raised() || pause.load(Ordering::Relaxed);
    // JIT: set after compiled code returns, so that the instruction it
    // stopped before runs here before compiled code is entered again.
    let mut interpret_next = false;
    loop {
        if LIMITS != PLAIN && raised() {
            match attend(ctx) {
                Ok(false) => {}
                Ok(true) => return pause_here(ctx, fueled),
                Err(e) => return Err(stopped_before_next(ctx, e)),
            }
        }
        // JIT: whether to leave for compiled code at back edges (and, with
        // `Tier::Jit`, at calls) of the top frame's function.
        let mut jit_here = false;
        if JIT {
            if interpret_next {
                interpret_next = false;
            } else {
                match enter_compiled(ctx, token, checks) {
                    Entered::No => {}
                    Entered::Ran => {
                        interpret_next = true;
                        if LIMITS != PLAIN && raised() {
                            // Answer a raised word before going on.
                            continue;
                        }
                    }
                    Entered::FuelShort => return run_exact(ctx),
                    Entered::SliceEnd => {
                        // Pay for the run compiled code stopped before,
                        // then read the stop word at the top of the loop.
                        interpret_next = true;
                        if !ctx.hooks.take_fuel(top_run_fuel(&ctx.stack)) {
                            return run_exact(ctx);
                        }
                        continue;
                    }
                }
            }
            jit_here = leaves_at_back_edges(&ctx.stack, checks, eager);
        }
        let (mut ip, mut regs, mut refs) = cursor(&mut ctx.stack);
        register_macros!($, regs, refs);
        value_macros!($, regs, refs);
        shape_macros!($);
        'dispatch: loop {
            macro_rules! tri {
                ($e:expr) => {
                    match $e {
                        Ok(v) => v,
                        Err(e) => {
                            if fueled {
                                refund_after_trap(ctx, ip);
                            }
                            return Err(fault(&mut ctx.stack, ip, e));
                        }
                    }
                };
            }
            // Fueled loop: pays for the run at `ip` (where control just
            // arrived by a branch, call or return), or hands the frame,
            // stopped there, to the hooked loop.
            macro_rules! pay_run {
                () => {
                    if fueled && !ctx.hooks.take_fuel(run_fuel(&ctx.stack, ip)) {
                        save_ip(&mut ctx.stack, ip);
                        return run_exact(ctx);
                    }
                };
            }
            // Fueled loop: pays the one unit of an instruction that stands
            // alone (`program::runs`), or hands the frame, stopped before
            // it at `$at`, to the hooked loop.
            macro_rules! pay_alone {
                ($at:expr) => {
                    if fueled && !ctx.hooks.take_fuel(1) {
                        save_ip(&mut ctx.stack, $at);
                        return run_exact(ctx);
                    }
                };
            }
            // Polled loops: stops here (a back edge taken or a call
            // entered; `ip` is where the frame goes on) when the stop word
            // or pause flag is raised.
            macro_rules! poll {
                () => {
                    if LIMITS != PLAIN && raised() {
                        save_ip(&mut ctx.stack, ip);
                        match attend(ctx) {
                            Ok(false) => {}
                            Ok(true) => return pause_here(ctx, fueled),
                            Err(e) => return Err(stopped_before_next(ctx, e)),
                        }
                    }
                };
            }
            // Hot branches hold targets and remap records as distances from the
            // branch instruction `at` (see `program::fuse::relativize_branches`).
            macro_rules! jump {
                ($at:expr, $rel:expr) => {{
                    // SAFETY: the verifier resolved every target to an
                    // instruction of this function; `rel` is its byte distance
                    // from the branch at `$at` (program::fuse::relativize_branches).
                    ip = unsafe { $at.byte_offset($rel as i32 as isize) };
                    pay_run!();
                    // A back edge (a block branching to itself included).
                    if ($rel as i32) <= 0 {
                        poll!();
                        if JIT && jit_here && back_edge_enters(&ctx.stack, ip, checks, eager) {
                            // A loop's back edge: compiled code (once hot) takes it
                            // from the loop head. The instruction compiled code
                            // last stopped before has run by now (a branch ran
                            // after it), so the loop head may be entered: left
                            // set, a loop that calls a function the interpreter
                            // returns from (its code stopped at the return)
                            // never went back to compiled code.
                            save_ip(&mut ctx.stack, ip);
                            interpret_next = false;
                            break 'dispatch;
                        }
                    }
                }};
            }
            macro_rules! remap {
                ($at:expr, $rel:expr) => {{
                    // SAFETY: `rel` is the distance from the branch to its remap
                    // record inside this function's code, whose register pairs
                    // the verifier checked (same bank, in range).
                    let rec = unsafe { $at.add($rel as usize) };
                    // SAFETY: the record's first instruction exists.
                    let first = unsafe { &*rec };
                    let n = first.x as usize;
                    if n == 1 && first.a & 0x8000 == 0 {
                        // The common case: one i32 block argument.
                        wi!(first.b, ri!(first.a));
                    } else {
                        for k in 0..n {
                            // SAFETY: the record spans ceil(n / 2) instructions.
                            let e = unsafe { &*rec.add(k / 2) };
                            let (s, d) = if k & 1 == 0 { (e.a, e.b) } else { (e.c, e.d) };
                            if s & 0x8000 != 0 {
                                // SAFETY: the verifier checked both ref registers.
                                unsafe { remap_ref(refs, s, d) };
                            } else {
                                wi!(d, ri!(s));
                            }
                        }
                    }
                }};
            }
            // Writes the comparison to `$dst`, then branches: true edge to `x`
            // (remapping by record `d` when set), false edge to `y`. The hooked
            // loop only compares and goes on to the original `cond_br` that
            // follows, so observers see both instructions.
            macro_rules! cmp_br {
                ($at:expr, $i:ident, $dst:expr, $cond:expr) => {{
                    let v = $cond;
                    wi!($dst, v as i32);
                    if HOOKED {
                        // `ip` already points at the `cond_br`.
                    } else if v {
                        if $i.d != NO_REMAP {
                            remap!($at, $i.d);
                        }
                        jump!($at, $i.x);
                    } else {
                        jump!($at, $i.y);
                    }
                }};
            }
            // `br` at `$at`: block arguments, then the jump.
            macro_rules! br {
                ($at:expr, $i:ident) => {{
                    if $i.y != NONE {
                        remap!($at, $i.y);
                    }
                    jump!($at, $i.x);
                }};
            }
            macro_rules! buffer {
                ($r:expr, $what:expr) => {
                    tri!(rref!($r).buffer($what))
                };
            }
            // Runs `$i` through the slow path, then leaves the inner loop to
            // reload the cursor from the top frame.
            // An instruction that stands alone (`program::runs`) pays its
            // unit before it runs and the run it leads to after; the others
            // were paid for with their run.
            macro_rules! out_of_line {
                ($i:expr) => {{
                    let alone = fueled && runs::role($i.op) == RunRole::Alone;
                    if alone {
                        // `$i` is the instruction at `at`.
                        pay_alone!(std::ptr::from_ref($i));
                    }
                    save_ip(&mut ctx.stack, ip);
                    // (Calls apart: `slow::call` without `step`'s frame.)
                    let stepped = match $i.op {
                        Opcode::CallVariadic
                        | Opcode::CallYieldable
                        | Opcode::CallVariadicYieldable => slow::call(ctx, $i),
                        _ => slow::step(ctx, *$i),
                    };
                    match stepped {
                        Err(e) => {
                            if fueled {
                                refund_after_trap(ctx, ip);
                            }
                            return Err(e);
                        }
                        Ok(Some(state)) => return Ok(state),
                        Ok(None) => {
                            if alone {
                                pay_top_run!();
                            }
                            break;
                        }
                    }
                }};
            }
            // Fueled loop: pays for the run at the top frame's pc (after an
            // instruction that may have changed frames).
            macro_rules! pay_top_run {
                () => {
                    if fueled && !ctx.hooks.take_fuel(top_run_fuel(&ctx.stack)) {
                        return run_exact(ctx);
                    }
                };
            }
            let at = ip;
            if HOOKED {
                match hooks::before(ctx, at) {
                    Ok(false) => {}
                    Ok(true) => {
                        // Stop before `at`; resuming executes it.
                        save_ip(&mut ctx.stack, at);
                        ctx.stack.suspended = Some(Suspended::Pause);
                        ctx.hooks.resume_quietly = true;
                        return Ok(CallState::Paused);
                    }
                    // SAFETY: `at` is an instruction of the frame, not its last.
                    Err(e) => return Err(fault(&mut ctx.stack, unsafe { at.add(1) }, e)),
                }
            }
            // SAFETY: `ip` is always an instruction of the frame's function:
            // it starts at a saved pc, branches go to verified targets, and
            // falling through stops at the guard that ends every function
            // (the guard goes to the slow path, which traps).
            let i = unsafe { &*at };
            // SAFETY: as above; at most one past the current instruction.
            ip = unsafe { ip.add(1) };
            match i.op {
                Opcode::ConstI32Zero | Opcode::ConstF32Zero => wi!(i.a, 0),
                Opcode::ConstI32 | Opcode::ConstF32 => wi!(i.a, i.x),
                Opcode::ConstI64Zero | Opcode::ConstF64Zero => wl!(i.a, 0),
                Opcode::ConstI64 | Opcode::ConstF64 => {
                    wl!(i.a, ((i.y as u64) << 32 | i.x as u64) as i64)
                }
                Opcode::ConstRefZero => wref!(i.a, Ref::Null),
                Opcode::SelectI32 | Opcode::SelectF32 => {
                    let v = if ri!(i.a) != 0 { ri!(i.b) } else { ri!(i.c) };
                    wi!(i.d, v);
                }
                Opcode::SelectI64 | Opcode::SelectF64 => {
                    let v = if ri!(i.a) != 0 { rl!(i.b) } else { rl!(i.c) };
                    wl!(i.d, v);
                }
                Opcode::AddI32 => bin_i32!(i, |x, y| x.wrapping_add(y)),
                Opcode::SubI32 => bin_i32!(i, |x, y| x.wrapping_sub(y)),
                Opcode::MulI32 => bin_i32!(i, |x, y| x.wrapping_mul(y)),
                Opcode::DivI32S => bin_i32!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    x.wrapping_div(y)
                }),
                Opcode::DivI32U => bin_i32!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    (x as u32 / y as u32) as i32
                }),
                Opcode::RemI32S => bin_i32!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    x.wrapping_rem(y)
                }),
                Opcode::RemI32U => bin_i32!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    (x as u32 % y as u32) as i32
                }),
                Opcode::FmaI32 => wi!(i.d, ri!(i.a).wrapping_mul(ri!(i.b)).wrapping_add(ri!(i.c))),
                Opcode::AbsI32 => un_i32!(i, |x| x.wrapping_abs()),
                Opcode::MinI32S => bin_i32!(i, |x, y| if y < x { y } else { x }),
                Opcode::MinI32U => bin_i32!(i, |x, y| if (y as u32) < (x as u32) { y } else { x }),
                Opcode::MaxI32S => bin_i32!(i, |x, y| if x < y { y } else { x }),
                Opcode::MaxI32U => bin_i32!(i, |x, y| if (x as u32) < (y as u32) { y } else { x }),
                Opcode::NotI32 => un_i32!(i, |x| !x),
                Opcode::AndI32 => bin_i32!(i, |x, y| x & y),
                Opcode::OrI32 => bin_i32!(i, |x, y| x | y),
                Opcode::XorI32 => bin_i32!(i, |x, y| x ^ y),
                Opcode::CtlzI32 => un_i32!(i, |x| x.leading_zeros() as i32),
                Opcode::ShlI32 => bin_i32!(i, |x, y| x.wrapping_shl(y as u32 & 31)),
                Opcode::ShrI32S => bin_i32!(i, |x, y| x >> (y & 31)),
                Opcode::ShrI32U => bin_i32!(i, |x, y| ((x as u32) >> (y & 31)) as i32),
                Opcode::AddI64 => bin_i64!(i, |x, y| x.wrapping_add(y)),
                Opcode::SubI64 => bin_i64!(i, |x, y| x.wrapping_sub(y)),
                Opcode::MulI64 => bin_i64!(i, |x, y| x.wrapping_mul(y)),
                Opcode::DivI64S => bin_i64!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    x.wrapping_div(y)
                }),
                Opcode::DivI64U => bin_i64!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    (x as u64 / y as u64) as i64
                }),
                Opcode::RemI64S => bin_i64!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    x.wrapping_rem(y)
                }),
                Opcode::RemI64U => bin_i64!(i, |x, y| {
                    if y == 0 {
                        tri!(Err(div_zero()))
                    }
                    (x as u64 % y as u64) as i64
                }),
                Opcode::FmaI64 => wl!(i.d, rl!(i.a).wrapping_mul(rl!(i.b)).wrapping_add(rl!(i.c))),
                Opcode::AbsI64 => un_i64!(i, |x| x.wrapping_abs()),
                Opcode::MinI64S => bin_i64!(i, |x, y| if y < x { y } else { x }),
                Opcode::MinI64U => bin_i64!(i, |x, y| if (y as u64) < (x as u64) { y } else { x }),
                Opcode::MaxI64S => bin_i64!(i, |x, y| if x < y { y } else { x }),
                Opcode::MaxI64U => bin_i64!(i, |x, y| if (x as u64) < (y as u64) { y } else { x }),
                Opcode::NotI64 => un_i64!(i, |x| !x),
                Opcode::AndI64 => bin_i64!(i, |x, y| x & y),
                Opcode::OrI64 => bin_i64!(i, |x, y| x | y),
                Opcode::XorI64 => bin_i64!(i, |x, y| x ^ y),
                Opcode::CtlzI64 => un_i64!(i, |x| x.leading_zeros() as i64),
                Opcode::ShlI64 => {
                    let v = rl!(i.a).wrapping_shl(ri!(i.b) as u32 & 63);
                    wl!(i.c, v);
                }
                Opcode::ShrI64S => {
                    let v = rl!(i.a) >> (ri!(i.b) & 63);
                    wl!(i.c, v);
                }
                Opcode::ShrI64U => {
                    let v = ((rl!(i.a) as u64) >> (ri!(i.b) & 63)) as i64;
                    wl!(i.c, v);
                }
                Opcode::TruncI32I8 => un_i32!(i, |x| x as u8 as i32),
                Opcode::TruncI32I16 => un_i32!(i, |x| x as u16 as i32),
                Opcode::TruncI64I32 => {
                    let v = rl!(i.a) as i32;
                    wi!(i.b, v);
                }
                Opcode::ExtI8I32S => un_i32!(i, |x| x as i8 as i32),
                Opcode::ExtI8I32U => un_i32!(i, |x| x as u8 as i32),
                Opcode::ExtI16I32S => un_i32!(i, |x| x as i16 as i32),
                Opcode::ExtI16I32U => un_i32!(i, |x| x as u16 as i32),
                Opcode::ExtI32I64S => wl!(i.b, ri!(i.a) as i64),
                Opcode::ExtI32I64U => wl!(i.b, ri!(i.a) as u32 as i64),
                Opcode::CmpEqI32 => bin_i32!(i, |x, y| (x == y) as i32),
                Opcode::CmpNeI32 => bin_i32!(i, |x, y| (x != y) as i32),
                Opcode::CmpLtI32S => bin_i32!(i, |x, y| (x < y) as i32),
                Opcode::CmpLtI32U => bin_i32!(i, |x, y| ((x as u32) < (y as u32)) as i32),
                Opcode::CmpNzI32 => un_i32!(i, |x| (x != 0) as i32),
                Opcode::CmpEqI64 => wi!(i.c, (rl!(i.a) == rl!(i.b)) as i32),
                Opcode::CmpNeI64 => wi!(i.c, (rl!(i.a) != rl!(i.b)) as i32),
                Opcode::CmpLtI64S => wi!(i.c, (rl!(i.a) < rl!(i.b)) as i32),
                Opcode::CmpLtI64U => wi!(i.c, ((rl!(i.a) as u64) < (rl!(i.b) as u64)) as i32),
                Opcode::CmpNzI64 => wi!(i.b, (rl!(i.a) != 0) as i32),
                Opcode::CmpEqRef => {
                    let v = rref!(i.a).ptr_eq(rref!(i.b));
                    wi!(i.c, v as i32);
                }
                Opcode::CmpNeRef => {
                    let v = !rref!(i.a).ptr_eq(rref!(i.b));
                    wi!(i.c, v as i32);
                }
                Opcode::CmpNzRef => {
                    let v = !rref!(i.a).is_null();
                    wi!(i.b, v as i32);
                }
                Opcode::Br => br!(at, i),
                Opcode::CondBr => {
                    if ri!(i.a) != 0 {
                        if i.c != NO_REMAP {
                            remap!(at, i.c);
                        }
                        jump!(at, i.x);
                    } else {
                        if i.d != NO_REMAP {
                            remap!(at, i.d);
                        }
                        jump!(at, i.y);
                    }
                }
                // Fused compare-and-branch (see program::fuse::fuse_compare_branches).
                Opcode::CmpEqI32Br => cmp_br!(at, i, i.c, ri!(i.a) == ri!(i.b)),
                Opcode::CmpNeI32Br => cmp_br!(at, i, i.c, ri!(i.a) != ri!(i.b)),
                Opcode::CmpLtI32SBr => cmp_br!(at, i, i.c, ri!(i.a) < ri!(i.b)),
                Opcode::CmpLtI32UBr => cmp_br!(at, i, i.c, (ri!(i.a) as u32) < (ri!(i.b) as u32)),
                Opcode::CmpNzI32Br => cmp_br!(at, i, i.b, ri!(i.a) != 0),
                Opcode::CmpEqI64Br => cmp_br!(at, i, i.c, rl!(i.a) == rl!(i.b)),
                Opcode::CmpNeI64Br => cmp_br!(at, i, i.c, rl!(i.a) != rl!(i.b)),
                Opcode::CmpLtI64SBr => cmp_br!(at, i, i.c, rl!(i.a) < rl!(i.b)),
                Opcode::BufferLoadI8U => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<1>(token, rl!(i.b) as u64));
                    wi!(i.c, v[0] as i32);
                }
                Opcode::BufferLoadI8S => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<1>(token, rl!(i.b) as u64));
                    wi!(i.c, v[0] as i8 as i32);
                }
                Opcode::BufferLoadI16U => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<2>(token, rl!(i.b) as u64));
                    wi!(i.c, u16::from_le_bytes(v) as i32);
                }
                Opcode::BufferLoadI16S => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<2>(token, rl!(i.b) as u64));
                    wi!(i.c, i16::from_le_bytes(v) as i32);
                }
                Opcode::BufferLoadI32 | Opcode::BufferLoadF32 => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<4>(token, rl!(i.b) as u64));
                    wi!(i.c, u32::from_le_bytes(v));
                }
                // ---- fused pairs (program::fuse::PAIRS): the first half here, the
                // second from the next instruction; the hooked loop runs only
                // the first half and dispatches the second itself.
                Opcode::AddI32ThenCmpLtI32SBr => {
                    if HOOKED {
                        bin_i32!(i, |x, y| x.wrapping_add(y));
                    } else {
                        // SAFETY: the second instruction of a pair is the next
                        // instruction of the body (program::fuse::fuse_pairs).
                        let (jat, j) = unsafe { (at.add(1), &*at.add(1)) };
                        loop {
                            bin_i32!(i, |x, y| x.wrapping_add(y));
                            cmp_br!(jat, j, j.c, ri!(j.a) < ri!(j.b));
                            // A loop whose body is this pair: run it again
                            // without dispatching.
                            if ip != at {
                                break;
                            }
                        }
                    }
                }
                Opcode::AddI64ThenCmpLtI64SBr => {
                    if HOOKED {
                        bin_i64!(i, |x, y| x.wrapping_add(y));
                    } else {
                        // SAFETY: as above.
                        let (jat, j) = unsafe { (at.add(1), &*at.add(1)) };
                        loop {
                            bin_i64!(i, |x, y| x.wrapping_add(y));
                            cmp_br!(jat, j, j.c, rl!(j.a) < rl!(j.b));
                            if ip != at {
                                break;
                            }
                        }
                    }
                }
                Opcode::AddI32ThenBr => {
                    bin_i32!(i, |x, y| x.wrapping_add(y));
                    if !HOOKED {
                        // SAFETY: the second instruction of a pair is the next
                        // instruction of the body (program::fuse::fuse_pairs).
                        let (jat, j) = unsafe { (at.add(1), &*at.add(1)) };
                        br!(jat, j);
                    }
                }
                Opcode::AddI64ThenBr => {
                    bin_i64!(i, |x, y| x.wrapping_add(y));
                    if !HOOKED {
                        // SAFETY: as above.
                        let (jat, j) = unsafe { (at.add(1), &*at.add(1)) };
                        br!(jat, j);
                    }
                }
                Opcode::BufferLoadI32ThenAddI32 => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<4>(token, rl!(i.b) as u64));
                    wi!(i.c, u32::from_le_bytes(v));
                    if !HOOKED {
                        // SAFETY: as above.
                        let j = unsafe { &*at.add(1) };
                        bin_i32!(j, |x, y| x.wrapping_add(y));
                        // SAFETY: the pair's second instruction is not the
                        // last of the code (the guard follows the body).
                        ip = unsafe { at.add(2) };
                    }
                }
                Opcode::BufferLoadI32ThenAddI64 => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<4>(token, rl!(i.b) as u64));
                    wi!(i.c, u32::from_le_bytes(v));
                    if !HOOKED {
                        // SAFETY: as above.
                        let j = unsafe { &*at.add(1) };
                        bin_i64!(j, |x, y| x.wrapping_add(y));
                        // SAFETY: as above.
                        ip = unsafe { at.add(2) };
                    }
                }
                Opcode::AddI32ThenBrToCmpLtI32SBr => {
                    bin_i32!(i, |x, y| x.wrapping_add(y));
                    if !HOOKED {
                        // SAFETY: as above.
                        let (jat, j) = unsafe { (at.add(1), &*at.add(1)) };
                        br!(jat, j);
                        // The branch's target is a fused compare-branch
                        // (program::fuse::fuse_pairs checked it).
                        let kat = ip;
                        // SAFETY: `ip` is the verified branch target.
                        let k = unsafe { &*kat };
                        cmp_br!(kat, k, k.c, ri!(k.a) < ri!(k.b));
                    }
                }
                Opcode::AddI64ThenBrToCmpLtI64SBr => {
                    bin_i64!(i, |x, y| x.wrapping_add(y));
                    if !HOOKED {
                        // SAFETY: as above.
                        let (jat, j) = unsafe { (at.add(1), &*at.add(1)) };
                        br!(jat, j);
                        let kat = ip;
                        // SAFETY: `ip` is the verified branch target, a
                        // fused compare-branch (program::fuse::fuse_pairs).
                        let k = unsafe { &*kat };
                        cmp_br!(kat, k, k.c, rl!(k.a) < rl!(k.b));
                    }
                }
                // In the pairs below, the second half takes the first
                // half's result from the host register when it names the
                // same VM register (the usual case: a chain), instead of
                // reading back the value just stored, which would put a
                // store-to-load forwarding on the loop's critical path.
                Opcode::AddI64ThenAddI64 => {
                    let v = rl!(i.a).wrapping_add(rl!(i.b));
                    wl!(i.c, v);
                    if !HOOKED {
                        // SAFETY: as above.
                        let j = unsafe { &*at.add(1) };
                        let x = if j.a == i.c { v } else { rl!(j.a) };
                        wl!(j.c, x.wrapping_add(rl!(j.b)));
                        // SAFETY: as above.
                        ip = unsafe { at.add(2) };
                    }
                }
                Opcode::FmaI64ThenAddI64 => {
                    let v = rl!(i.a).wrapping_mul(rl!(i.b)).wrapping_add(rl!(i.c));
                    wl!(i.d, v);
                    if !HOOKED {
                        // SAFETY: as above.
                        let j = unsafe { &*at.add(1) };
                        let x = if j.a == i.d { v } else { rl!(j.a) };
                        wl!(j.c, x.wrapping_add(rl!(j.b)));
                        // SAFETY: as above.
                        ip = unsafe { at.add(2) };
                    }
                }
                Opcode::BufferLoadF32ThenFmaF32ThenStoreF32 => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<4>(token, rl!(i.b) as u64));
                    let v = u32::from_le_bytes(v);
                    wi!(i.c, v);
                    if !HOOKED {
                        // SAFETY: the triple's other two instructions follow
                        // it in the body (program::fuse::fuse_pairs).
                        let (j, k) = unsafe { (&*at.add(1), &*at.add(2)) };
                        let c = if j.c == i.c {
                            f32::from_bits(v)
                        } else {
                            rf!(j.c)
                        };
                        let r = rf!(j.a) * rf!(j.b) + c;
                        wf!(j.d, r);
                        // A trap in the store is reported at it.
                        // SAFETY: as above; the guard follows the body.
                        ip = unsafe { at.add(3) };
                        let out = if k.c == j.d {
                            r.to_bits()
                        } else {
                            ri!(k.c) as u32
                        };
                        tri!(buffer!(k.a, "target_buffer").store_as::<4>(
                            token,
                            rl!(k.b) as u64,
                            out.to_le_bytes()
                        ));
                    }
                }
                Opcode::BufferLoadF32ThenBufferLoadF32 => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<4>(token, rl!(i.b) as u64));
                    wi!(i.c, u32::from_le_bytes(v));
                    if !HOOKED {
                        // SAFETY: as above.
                        let j = unsafe { &*at.add(1) };
                        // A trap in the second load is reported at it.
                        // SAFETY: as above.
                        ip = unsafe { at.add(2) };
                        let v = tri!(
                            buffer!(j.a, "source_buffer").load_as::<4>(token, rl!(j.b) as u64)
                        );
                        wi!(j.c, u32::from_le_bytes(v));
                    }
                }
                Opcode::FmaF32ThenBufferStoreF32 => {
                    let r = rf!(i.a) * rf!(i.b) + rf!(i.c);
                    wf!(i.d, r);
                    if !HOOKED {
                        // SAFETY: as above.
                        let j = unsafe { &*at.add(1) };
                        // SAFETY: as above; a trap in the store is reported
                        // at it.
                        ip = unsafe { at.add(2) };
                        let out = if j.c == i.d {
                            r.to_bits()
                        } else {
                            ri!(j.c) as u32
                        };
                        let v = out.to_le_bytes();
                        tri!(buffer!(j.a, "target_buffer").store_as::<4>(
                            token,
                            rl!(j.b) as u64,
                            v
                        ));
                    }
                }
                Opcode::BufferLoadI64 | Opcode::BufferLoadF64 => {
                    let v =
                        tri!(buffer!(i.a, "source_buffer").load_as::<8>(token, rl!(i.b) as u64));
                    wl!(i.c, i64::from_le_bytes(v));
                }
                Opcode::BufferStoreI8 => {
                    let v = [ri!(i.c) as u8];
                    tri!(buffer!(i.a, "target_buffer").store_as::<1>(token, rl!(i.b) as u64, v));
                }
                Opcode::BufferStoreI16 => {
                    let v = (ri!(i.c) as u16).to_le_bytes();
                    tri!(buffer!(i.a, "target_buffer").store_as::<2>(token, rl!(i.b) as u64, v));
                }
                Opcode::BufferStoreI32 | Opcode::BufferStoreF32 => {
                    let v = (ri!(i.c) as u32).to_le_bytes();
                    tri!(buffer!(i.a, "target_buffer").store_as::<4>(token, rl!(i.b) as u64, v));
                }
                Opcode::BufferStoreI64 | Opcode::BufferStoreF64 => {
                    let v = rl!(i.c).to_le_bytes();
                    tri!(buffer!(i.a, "target_buffer").store_as::<8>(token, rl!(i.b) as u64, v));
                }
                Opcode::AssignRef => {
                    let v = take_ref!(i.a);
                    wref!(i.b, v);
                }
                Opcode::AddF32 => bin_f32!(i, |x, y| x + y),
                Opcode::SubF32 => bin_f32!(i, |x, y| x - y),
                Opcode::MulF32 => bin_f32!(i, |x, y| x * y),
                Opcode::DivF32 => bin_f32!(i, |x, y| x / y),
                Opcode::RemF32 => bin_f32!(i, |x, y| cmath::bin_f32(Bin::Remainder, x, y)),
                Opcode::FmaF32 => wf!(i.d, rf!(i.a) * rf!(i.b) + rf!(i.c)),
                Opcode::AbsF32 => un_f32!(i, |x| x.abs()),
                Opcode::NegF32 => un_f32!(i, |x| -x),
                Opcode::CeilF32 => un_f32!(i, |x| cmath::ceil_f32(x)),
                Opcode::FloorF32 => un_f32!(i, |x| cmath::floor_f32(x)),
                Opcode::RoundF32 => un_f32!(i, |x| cmath::round_f32(x)),
                Opcode::RoundF32Even => un_f32!(i, |x| cmath::round_even_f32(x)),
                Opcode::MinF32 => bin_f32!(i, |x, y| if y < x { y } else { x }),
                Opcode::MaxF32 => bin_f32!(i, |x, y| if x < y { y } else { x }),
                Opcode::AtanF32 => un_f32!(i, |x| cmath::un_f32(Un::Atan, x)),
                Opcode::Atan2F32 => bin_f32!(i, |x, y| cmath::bin_f32(Bin::Atan2, x, y)),
                Opcode::CosF32 => un_f32!(i, |x| cmath::un_f32(Un::Cos, x)),
                Opcode::SinF32 => un_f32!(i, |x| cmath::un_f32(Un::Sin, x)),
                Opcode::ExpF32 => un_f32!(i, |x| cmath::un_f32(Un::Exp, x)),
                Opcode::Exp2F32 => un_f32!(i, |x| cmath::un_f32(Un::Exp2, x)),
                Opcode::Expm1F32 => un_f32!(i, |x| cmath::un_f32(Un::Expm1, x)),
                Opcode::LogF32 => un_f32!(i, |x| cmath::un_f32(Un::Log, x)),
                Opcode::Log10F32 => un_f32!(i, |x| cmath::un_f32(Un::Log10, x)),
                Opcode::Log1pF32 => un_f32!(i, |x| cmath::un_f32(Un::Log1p, x)),
                Opcode::Log2F32 => un_f32!(i, |x| cmath::un_f32(Un::Log2, x)),
                Opcode::PowF32 => bin_f32!(i, |x, y| cmath::bin_f32(Bin::Pow, x, y)),
                Opcode::FPowIF32 => wf!(i.c, cmath::powi_f32(rf!(i.a), rl!(i.b))),
                Opcode::RsqrtF32 => un_f32!(i, |x| 1.0 / x.sqrt()),
                Opcode::SqrtF32 => un_f32!(i, |x| x.sqrt()),
                Opcode::TanhF32 => un_f32!(i, |x| cmath::un_f32(Un::Tanh, x)),
                Opcode::ErfF32 => un_f32!(i, |x| cmath::un_f32(Un::Erf, x)),
                Opcode::CastSI32F32 => wf!(i.b, ri!(i.a) as f32),
                Opcode::CastUI32F32 => wf!(i.b, ri!(i.a) as u32 as f32),
                Opcode::CastSI64F32 => wf!(i.b, rl!(i.a) as f32),
                Opcode::CastUI64F32 => wf!(i.b, rl!(i.a) as u64 as f32),
                Opcode::CastF32SI32 => wi!(i.b, cast_f32_si32(rf!(i.a))),
                Opcode::CastF32UI32 => wi!(i.b, lround(rf!(i.a) as f64) as u32),
                Opcode::CastF32SI64 => wl!(i.b, lround(rf!(i.a) as f64)),
                Opcode::CastF32UI64 => wl!(i.b, cmath::cast_f32_ui64(rf!(i.a))),
                Opcode::BitcastI32F32 | Opcode::BitcastF32I32 => wi!(i.b, ri!(i.a)),
                Opcode::CmpEqF32O => cmp_f32!(i, |x, y| x == y),
                Opcode::CmpEqF32U => cmp_f32!(i, |x, y| x.is_nan() || y.is_nan() || x == y),
                Opcode::CmpNeF32O => cmp_f32!(i, |x, y| x != y),
                Opcode::CmpNeF32U => cmp_f32!(i, |x, y| x.is_nan() || y.is_nan() || x != y),
                Opcode::CmpLtF32O => cmp_f32!(i, |x, y| x < y),
                Opcode::CmpLtF32U => cmp_f32!(i, |x, y| x.is_nan() || y.is_nan() || x < y),
                Opcode::CmpLteF32O => cmp_f32!(i, |x, y| x <= y),
                Opcode::CmpLteF32U => cmp_f32!(i, |x, y| x.is_nan() || y.is_nan() || x <= y),
                Opcode::CmpNanF32 => wi!(i.b, rf!(i.a).is_nan() as i32),
                Opcode::AddF64 => bin_f64!(i, |x, y| x + y),
                Opcode::SubF64 => bin_f64!(i, |x, y| x - y),
                Opcode::MulF64 => bin_f64!(i, |x, y| x * y),
                Opcode::DivF64 => bin_f64!(i, |x, y| x / y),
                Opcode::RemF64 => bin_f64!(i, |x, y| cmath::bin_f64(Bin::Remainder, x, y)),
                Opcode::FmaF64 => wd!(i.d, rd!(i.a) * rd!(i.b) + rd!(i.c)),
                Opcode::AbsF64 => un_f64!(i, |x| x.abs()),
                Opcode::NegF64 => un_f64!(i, |x| -x),
                Opcode::CeilF64 => un_f64!(i, |x| cmath::ceil_f64(x)),
                Opcode::FloorF64 => un_f64!(i, |x| cmath::floor_f64(x)),
                Opcode::RoundF64 => un_f64!(i, |x| cmath::round_f64(x)),
                Opcode::RoundF64Even => un_f64!(i, |x| cmath::round_even_f64(x)),
                Opcode::MinF64 => bin_f64!(i, |x, y| if y < x { y } else { x }),
                Opcode::MaxF64 => bin_f64!(i, |x, y| if x < y { y } else { x }),
                Opcode::AtanF64 => un_f64!(i, |x| cmath::un_f64(Un::Atan, x)),
                Opcode::Atan2F64 => bin_f64!(i, |x, y| cmath::bin_f64(Bin::Atan2, x, y)),
                Opcode::CosF64 => un_f64!(i, |x| cmath::un_f64(Un::Cos, x)),
                Opcode::SinF64 => un_f64!(i, |x| cmath::un_f64(Un::Sin, x)),
                Opcode::ExpF64 => un_f64!(i, |x| cmath::un_f64(Un::Exp, x)),
                Opcode::Exp2F64 => un_f64!(i, |x| cmath::un_f64(Un::Exp2, x)),
                Opcode::Expm1F64 => un_f64!(i, |x| cmath::un_f64(Un::Expm1, x)),
                Opcode::LogF64 => un_f64!(i, |x| cmath::un_f64(Un::Log, x)),
                Opcode::Log10F64 => un_f64!(i, |x| cmath::un_f64(Un::Log10, x)),
                Opcode::Log1pF64 => un_f64!(i, |x| cmath::un_f64(Un::Log1p, x)),
                Opcode::Log2F64 => un_f64!(i, |x| cmath::un_f64(Un::Log2, x)),
                Opcode::PowF64 => bin_f64!(i, |x, y| cmath::bin_f64(Bin::Pow, x, y)),
                Opcode::FPowIF64 => wd!(i.c, cmath::powi_f64(rd!(i.a), rl!(i.b))),
                Opcode::RsqrtF64 => un_f64!(i, |x| 1.0 / x.sqrt()),
                Opcode::SqrtF64 => un_f64!(i, |x| x.sqrt()),
                Opcode::TanhF64 => un_f64!(i, |x| cmath::un_f64(Un::Tanh, x)),
                Opcode::ErfF64 => un_f64!(i, |x| cmath::un_f64(Un::Erf, x)),
                Opcode::TruncF64F32 => wf!(i.b, rd!(i.a) as f32),
                Opcode::ExtF32F64 => wd!(i.b, rf!(i.a) as f64),
                Opcode::CastSI32F64 => wd!(i.b, ri!(i.a) as f64),
                Opcode::CastUI32F64 => wd!(i.b, ri!(i.a) as u32 as f64),
                Opcode::CastSI64F64 => wd!(i.b, rl!(i.a) as f64),
                Opcode::CastUI64F64 => wd!(i.b, rl!(i.a) as u64 as f64),
                // IREE converts through float (lroundf/llroundf) for the i32 casts.
                Opcode::CastF64SI32 => wi!(i.b, lround(rd!(i.a) as f32 as f64) as i32),
                Opcode::CastF64UI32 => wi!(i.b, lround(rd!(i.a) as f32 as f64) as u32),
                Opcode::CastF64SI64 => wl!(i.b, lround(rd!(i.a))),
                Opcode::CastF64UI64 => wl!(i.b, lround(rd!(i.a))),
                Opcode::BitcastI64F64 | Opcode::BitcastF64I64 => wl!(i.b, rl!(i.a)),
                Opcode::CmpEqF64O => cmp_f64!(i, |x, y| x == y),
                Opcode::CmpEqF64U => cmp_f64!(i, |x, y| x.is_nan() || y.is_nan() || x == y),
                Opcode::CmpNeF64O => cmp_f64!(i, |x, y| x != y),
                Opcode::CmpNeF64U => cmp_f64!(i, |x, y| x.is_nan() || y.is_nan() || x != y),
                Opcode::CmpLtF64O => cmp_f64!(i, |x, y| x < y),
                Opcode::CmpLtF64U => cmp_f64!(i, |x, y| x.is_nan() || y.is_nan() || x < y),
                Opcode::CmpLteF64O => cmp_f64!(i, |x, y| x <= y),
                Opcode::CmpLteF64U => cmp_f64!(i, |x, y| x.is_nan() || y.is_nan() || x <= y),
                Opcode::CmpNanF64 => wi!(i.b, rd!(i.a).is_nan() as i32),
                // ---- calls within the module, returns (see `call`) -------------------------
                Opcode::Call if i.x & IMPORT_ORDINAL_BIT == 0 => {
                    pay_alone!(at);
                    (ip, regs, refs) = tri!(call::enter(ctx, i, ip));
                    // Stops before the callee's first instruction.
                    pay_run!();
                    poll!();
                    if JIT && (eager || callee_enters_compiled(&ctx.stack, checks)) {
                        // Compile and enter every function at its entry
                        // (`Tier::Jit`), or one hot or callable there
                        // (the call has run: the callee's entry is next).
                        save_ip(&mut ctx.stack, ip);
                        interpret_next = false;
                        break 'dispatch;
                    }
                    if JIT {
                        // The callee's back edges, not the caller's.
                        jit_here = leaves_at_back_edges(&ctx.stack, checks, eager);
                    }
                }
                Opcode::Call => {
                    pay_alone!(at);
                    if let Some(cursor) = tri!(call::enter_import(ctx, i, ip)) {
                        // A function of another bytecode module: as a call
                        // within the module.
                        (ip, regs, refs) = cursor;
                        pay_run!();
                        poll!();
                        if JIT && (eager || import_callee_enters_compiled(&ctx.stack, checks)) {
                            save_ip(&mut ctx.stack, ip);
                            interpret_next = false;
                            break 'dispatch;
                        }
                        if JIT {
                            jit_here = leaves_at_back_edges(&ctx.stack, checks, eager);
                        }
                    } else {
                        // A host function (or an unresolved optional import).
                        save_ip(&mut ctx.stack, ip);
                        match slow::call(ctx, i) {
                            Err(e) => return Err(e),
                            Ok(Some(state)) => return Ok(state),
                            Ok(None) => {
                                pay_top_run!();
                                break;
                            }
                        }
                    }
                }
                Opcode::Return => {
                    pay_alone!(at);
                    // Polled loops also answer the stop word before a
                    // return, so a sample taken in code without loops or
                    // calls still finds its function on top.
                    if LIMITS != PLAIN && raised() {
                        ip = at;
                        poll!();
                    }
                    match tri!(call::leave(ctx, i)) {
                        Ok(cursor) => {
                            (ip, regs, refs) = cursor;
                            pay_run!();
                            if JIT {
                                // The caller's back edges, not the callee's.
                                jit_here = leaves_at_back_edges(&ctx.stack, checks, eager);
                            }
                        }
                        Err(state) => return Ok(state),
                    }
                }
                // Globals of 32 and 64 bits in place; an offset outside
                // the module's storage goes out of line, where it traps.
                Opcode::GlobalLoadI32 | Opcode::GlobalLoadF32 => {
                    match global::<4>(rwdata(ctx), i.x) {
                        Some(b) => wi!(i.a, u32::from_le_bytes(*b)),
                        None => out_of_line!(i),
                    }
                }
                Opcode::GlobalStoreI32 | Opcode::GlobalStoreF32 => {
                    let v = ri!(i.a) as u32;
                    match global::<4>(rwdata(ctx), i.x) {
                        Some(b) => *b = v.to_le_bytes(),
                        None => out_of_line!(i),
                    }
                }
                Opcode::GlobalLoadIndirectI32 | Opcode::GlobalLoadIndirectF32 => {
                    match global::<4>(rwdata(ctx), ri!(i.a) as u32) {
                        Some(b) => wi!(i.b, u32::from_le_bytes(*b)),
                        None => out_of_line!(i),
                    }
                }
                Opcode::GlobalStoreIndirectI32 | Opcode::GlobalStoreIndirectF32 => {
                    let v = ri!(i.b) as u32;
                    match global::<4>(rwdata(ctx), ri!(i.a) as u32) {
                        Some(b) => *b = v.to_le_bytes(),
                        None => out_of_line!(i),
                    }
                }
                Opcode::GlobalLoadI64 | Opcode::GlobalLoadF64 => {
                    match global::<8>(rwdata(ctx), i.x) {
                        Some(b) => wl!(i.a, i64::from_le_bytes(*b)),
                        None => out_of_line!(i),
                    }
                }
                Opcode::GlobalStoreI64 | Opcode::GlobalStoreF64 => {
                    let v = rl!(i.a);
                    match global::<8>(rwdata(ctx), i.x) {
                        Some(b) => *b = v.to_le_bytes(),
                        None => out_of_line!(i),
                    }
                }
                Opcode::GlobalLoadIndirectI64 | Opcode::GlobalLoadIndirectF64 => {
                    match global::<8>(rwdata(ctx), ri!(i.a) as u32) {
                        Some(b) => wl!(i.b, i64::from_le_bytes(*b)),
                        None => out_of_line!(i),
                    }
                }
                Opcode::GlobalStoreIndirectI64 | Opcode::GlobalStoreIndirectF64 => {
                    let v = rl!(i.b);
                    match global::<8>(rwdata(ctx), ri!(i.a) as u32) {
                        Some(b) => *b = v.to_le_bytes(),
                        None => out_of_line!(i),
                    }
                }
                // ---- list elements stored as the type asked for, in one
                // small arm: the work is in `list_element` (a larger arm
                // here costs every other handler registers). Any conversion,
                // bad index or null list goes out of line; nothing has
                // changed then, so the slow path starts over.
                Opcode::ListGetI32
                | Opcode::ListGetF32
                | Opcode::ListGetI64
                | Opcode::ListGetF64
                | Opcode::ListSetI32
                | Opcode::ListSetF32
                | Opcode::ListSetI64
                | Opcode::ListSetF64
                | Opcode::ListSize => {
                    // SAFETY: the verifier checked the instruction's
                    // registers against this frame's windows.
                    if !unsafe { list_element(i, regs, refs) } {
                        out_of_line!(i)
                    }
                }
                // `vm.list.resize` growing a list of values the register
                // alone holds within its capacity (an append loop's), in a
                // loop without fuel, stop word or hooks: nothing to charge
                // or ask. Anything else out of line, unchanged.
                //
                // And an append (`program::fuse::fuse_appends`) to such a
                // list within its capacity, in such a loop: all four
                // instructions at once. Anything else runs the append's
                // size alone and goes on to the other three, which stay in
                // place. (One arm for both: an arm of its own cost the
                // other instructions of the loop 1-4 % more host
                // instructions, and a place in the element arm cost
                // `vm.list.get/set` 6 %.)
                Opcode::ListResize | Opcode::ListSizeThenAppend => {
                    let max = ctx.limits.max_list_elements;
                    let plain = !HOOKED && LIMITS == PLAIN;
                    // SAFETY: the verifier checked the instruction's
                    // registers against this frame's windows (for a fused
                    // append, those of the four), and the pre-decoder
                    // fused an append only with the other three after it
                    // in the body.
                    match unsafe { list_resize_or_append(at, regs, refs, max, plain) } {
                        0 => out_of_line!(i),
                        // SAFETY: the append's set is not the last
                        // instruction of the code (the guard follows the
                        // body).
                        n => ip = unsafe { at.add(n) },
                    }
                }
                // Everything else: out of line.
                Opcode::GlobalLoadRef
                | Opcode::GlobalStoreRef
                | Opcode::GlobalLoadIndirectRef
                | Opcode::GlobalStoreIndirectRef
                | Opcode::ConstRefRodata
                | Opcode::ListAlloc
                | Opcode::ListReserve
                | Opcode::ListGetRef
                | Opcode::ListSetRef
                | Opcode::SelectRef
                | Opcode::SwitchI32
                | Opcode::SwitchI64
                | Opcode::SwitchRef
                | Opcode::CallVariadic
                | Opcode::Fail
                | Opcode::ImportResolved
                | Opcode::Yield
                | Opcode::Trace
                | Opcode::Print
                | Opcode::CondBreak
                | Opcode::Break
                | Opcode::BufferAlloc
                | Opcode::BufferClone
                | Opcode::BufferLength
                | Opcode::BufferCopy
                | Opcode::BufferCompare
                | Opcode::BufferFillI8
                | Opcode::BufferFillI16
                | Opcode::BufferFillI32
                | Opcode::BufferFillI64
                | Opcode::Block
                | Opcode::CastAnyRef
                | Opcode::BrTable
                | Opcode::BufferHash
                | Opcode::DiscardRefs
                | Opcode::CallYieldable
                | Opcode::CallVariadicYieldable
                | Opcode::SwitchF32
                | Opcode::BufferFillF32
                | Opcode::SwitchF64
                | Opcode::BufferFillF64 => out_of_line!(i),
            }
        }
    }
}

/// `vm.list.resize` (`i.a` the list, `i.b` the size) when the size is
/// within `max_list_elements` and the growth is one
/// `List::grow_held_within_capacity` makes; `false`, with nothing changed,
/// for everything else (a null list, a negative size among them).
///
/// # Safety
/// `regs` and `refs` are the frame's register windows and `i`'s registers
/// were verified in range for them (`program::compile`).
#[inline(never)]
unsafe fn list_grow_held(i: &Inst, regs: *mut u32, refs: *mut Ref, max_list_elements: u32) -> bool {
    // SAFETY: see `exec::regs`; register ordinal verified in range.
    let size = unsafe { *regs.add(i.b as usize) } as i32;
    let Ok(size) = u32::try_from(size) else {
        return false;
    };
    if size > max_list_elements {
        return false;
    }
    // SAFETY: the verifier checked `i.a` against the frame's ref window,
    // and nothing else borrows the frame's registers here.
    let reg = unsafe { &mut *refs.add((i.a & REF_INDEX_MASK) as usize) };
    reg.list_holder()
        .is_some_and(|l| List::grow_held_within_capacity(l, size))
}

/// `vm.list.resize` as [`list_grow_held`] does it, or a fused append
/// (`ListSizeThenAppend`) as [`list_append_held`] does it, both only when
/// `plain` (a loop without fuel, stop word or hooks); else the append's
/// `vm.list.size` as [`list_element`] does it. The number of instructions
/// done (1, or 4 for the whole append), or 0, with nothing changed, for
/// everything else.
///
/// # Safety
/// As [`list_append_held`] for a `ListSizeThenAppend` at `at`, as
/// [`list_grow_held`] for a `vm.list.resize`.
#[inline(never)]
unsafe fn list_resize_or_append(
    at: *const Inst,
    regs: *mut u32,
    refs: *mut Ref,
    max_list_elements: u32,
    plain: bool,
) -> usize {
    // SAFETY: per the contract, `at` is an instruction of the code.
    let i = unsafe { &*at };
    if i.op == Opcode::ListResize {
        // SAFETY: per the contract.
        return (plain && unsafe { list_grow_held(i, regs, refs, max_list_elements) }) as usize;
    }
    // SAFETY: per the contract.
    if plain && unsafe { list_append_held(at, regs, refs, max_list_elements) } {
        return 4;
    }
    // SAFETY: per the contract.
    unsafe { list_element(i, regs, refs) as usize }
}

/// The append `ListSizeThenAppend` at `at` starts (`vm.list.size`,
/// `vm.add.i32`, `vm.list.resize`, `vm.list.set.*`: see
/// `program::fuse::append_at`) when `List::append_held` does it at once:
/// the size and the new size written, the element set; `false`, with
/// nothing changed, for everything else.
///
/// # Safety
/// `at` is a `ListSizeThenAppend` that the pre-decoder fused, followed by
/// the three other instructions of its append; `regs` and `refs` are the
/// frame's register windows and the four instructions' registers were
/// verified in range for them (`program::compile`).
#[inline(always)]
#[expect(
    unused_macros,
    reason = "register_macros! defines every register accessor"
)]
unsafe fn list_append_held(
    at: *const Inst,
    regs: *mut u32,
    refs: *mut Ref,
    max_list_elements: u32,
) -> bool {
    register_macros!($, regs, refs);
    // SAFETY: per the contract, the append's instructions follow `at`.
    let (i, add, set) = unsafe { (&*at, &*at.add(1), &*at.add(3)) };
    let delta = if add.a == i.b { ri!(add.b) } else { ri!(add.a) };
    let (t, wide) = match set.op {
        Opcode::ListSetI32 => (ElementType::I32, false),
        Opcode::ListSetF32 => (ElementType::F32, false),
        Opcode::ListSetI64 => (ElementType::I64, true),
        _ => (ElementType::F64, true),
    };
    let bits = if wide {
        rl!(set.c) as u64
    } else {
        u64::from(ri!(set.c) as u32)
    };
    // SAFETY: the verifier checked `i.a` against the frame's ref window,
    // and nothing else borrows the frame's registers here.
    let holder = unsafe { &mut *refs.add((i.a & REF_INDEX_MASK) as usize) };
    let Some(n) = holder
        .list_holder()
        .and_then(|l| List::append_held(l, delta, max_list_elements, t, bits))
    else {
        return false;
    };
    wi!(i.b, n);
    wi!(add.c, n.wrapping_add(delta as u32));
    true
}

/// `vm.list.get.*`/`vm.list.set.*` of i32, i64, f32 and f64 when the
/// element is stored as (get) or the list holds exactly (set) the type the
/// instruction names, and `vm.list.size`; `false`, with nothing written,
/// for everything else (a null list among them).
///
/// # Safety
/// `regs` and `refs` are the frame's register windows and `i`'s registers
/// were verified in range for them (`program::compile`).
#[inline(never)]
pub(crate) unsafe fn list_element(i: &Inst, regs: *mut u32, refs: *mut Ref) -> bool {
    register_macros!($, regs, refs);
    let Some(list) = rref!(i.a).list_fast() else {
        return false;
    };
    let (t, get) = match i.op {
        Opcode::ListGetI32 => (ElementType::I32, true),
        Opcode::ListGetF32 => (ElementType::F32, true),
        Opcode::ListGetI64 => (ElementType::I64, true),
        Opcode::ListGetF64 => (ElementType::F64, true),
        Opcode::ListSetI32 => (ElementType::I32, false),
        Opcode::ListSetF32 => (ElementType::F32, false),
        Opcode::ListSetI64 => (ElementType::I64, false),
        Opcode::ListSize | Opcode::ListSizeThenAppend => {
            wi!(i.b, list.len() as u32);
            return true;
        }
        _ => (ElementType::F64, false),
    };
    let at = ri!(i.b) as u32;
    let wide = matches!(t, ElementType::I64 | ElementType::F64);
    if get {
        let Some(v) = list.get_bits(at, t) else {
            return false;
        };
        if wide {
            wl!(i.c, v as i64);
        } else {
            wi!(i.c, v as u32);
        }
        true
    } else {
        let v = if wide {
            rl!(i.c) as u64
        } else {
            u64::from(ri!(i.c) as u32)
        };
        // SAFETY: the verifier checked `i.a` against the frame's ref
        // window, and nothing else borrows the frame's registers here (the
        // shared borrow `list` ended above).
        let holder = unsafe { &mut *refs.add((i.a & REF_INDEX_MASK) as usize) };
        holder
            .list_holder()
            .is_some_and(|l| List::set_bits_held(l, at, t, v))
    }
}
