//! The interpreter: one `run` loop over pre-decoded [`Inst`]s with an
//! explicit frame stack (calls never recurse on the Rust stack), so deep
//! recursion fails cleanly and a yielded program can be resumed.
//!
//! Registers live in two stacks shared by all frames: `i32s` (i64/f64 use
//! two adjacent slots) and `refs`. Each frame owns a window of each, sized
//! by its function descriptor. The loop addresses the current window through
//! raw base pointers; the verifier in [`crate::program`] proved every
//! register operand lies inside its function's window.

use std::ptr::NonNull;
use std::sync::Arc;

use crate::budget::{Charge, MemoryBudget};

use crate::bytecode::isa::{REF_INDEX_MASK, REF_MOVE_BIT};
use crate::context::{kind_name, CallState, Context, Registered};
use crate::host::HostOutcome;
use crate::program::{aux_list, ArgSlot, Function, Signature, NONE};
use crate::trap::{StatusCode, Trap};
use crate::values::Ref;
use crate::values::Value;

#[macro_use]
mod regs;
mod call;
pub(crate) mod cmath;
mod dispatch;
mod frame_edit;
mod host_args;
#[cfg(feature = "jit")]
pub(crate) use dispatch::remap_ref;
pub(crate) mod hooks;
pub(crate) mod profiling;
mod slow;
mod tiered;

#[cfg(test)]
mod host_results_tests;
pub(crate) use tiered::TieredFunction;

/// The function of a frame: a pointer to a [`TieredFunction`] (the
/// [`Function`] and its compiled-code slot) that an `Arc` in the context's
/// module list (`BytecodeInstance::funcs`) owns.
///
/// Frames hold this instead of an `Arc` so that calls touch no reference
/// count (an atomic one since contexts are `Send`; see docs/PERFORMANCE.md).
/// Invariant: every pointee outlives every frame. Frames are created only
/// by `push_frame` from the context's own `funcs`; those vectors never
/// change after registration; a module is removed only when its `__init`
/// failed, after which no frame of it exists (`Context::register_module`
/// clears the stack first); `Context`'s drop releases the stack first.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct FuncRef(NonNull<TieredFunction>);

// SAFETY: a `FuncRef` is a shared reference to a `TieredFunction` (an
// immutable `Function`, plain data, and a `JitSlot` of atomics and a
// `OnceLock`: both `Send + Sync`) owned by the same context, which moves
// between threads as a whole.
unsafe impl Send for FuncRef {}

impl FuncRef {
    #[inline(always)]
    fn new(f: &Arc<TieredFunction>) -> FuncRef {
        FuncRef(NonNull::from(&**f))
    }

    /// The function, for as long as the caller needs it while the frame
    /// that held this exists (see the type's invariant).
    #[inline(always)]
    fn get<'a>(self) -> &'a TieredFunction {
        // SAFETY: the pointee is alive while any frame of this context
        // exists (the invariant above), and is never mutated (its slot
        // changes only through atomics and a `OnceLock`).
        unsafe { self.0.as_ref() }
    }
}

impl std::ops::Deref for FuncRef {
    type Target = TieredFunction;
    #[inline(always)]
    fn deref(&self) -> &TieredFunction {
        self.get()
    }
}

/// Where compiled code finds the fields of a [`Frame`] record (it writes
/// the records of the calls it makes when one leaves compiled code).
#[derive(Clone, Copy)]
#[cfg_attr(
    not(feature = "jit"),
    expect(
        dead_code,
        reason = "read by compiled code, which the jit feature builds"
    )
)]
pub(crate) struct FrameLayout {
    /// A record's size (the frame vector's stride).
    pub size: usize,
    /// `Frame::module` (u32).
    pub module: usize,
    /// `Frame::func` (a pointer to the `TieredFunction`).
    pub func: usize,
    /// `Frame::pc` (u32).
    pub pc: usize,
    /// `Frame::i32_base` (u32).
    pub i32_base: usize,
    /// `Frame::ref_base` (u32).
    pub ref_base: usize,
    /// `Frame::ret` (u32).
    pub ret: usize,
    /// `Frame::stack_end` (u64).
    pub stack_end: usize,
}

/// The layout of [`Frame`].
#[cfg_attr(
    not(feature = "jit"),
    expect(
        dead_code,
        reason = "read by compiled code, which the jit feature builds"
    )
)]
pub(crate) const FRAME_LAYOUT: FrameLayout = FrameLayout {
    size: std::mem::size_of::<Frame>(),
    module: std::mem::offset_of!(Frame, module),
    func: std::mem::offset_of!(Frame, func),
    pc: std::mem::offset_of!(Frame, pc),
    i32_base: std::mem::offset_of!(Frame, i32_base),
    ref_base: std::mem::offset_of!(Frame, ref_base),
    ret: std::mem::offset_of!(Frame, ret),
    stack_end: std::mem::offset_of!(Frame, stack_end),
};

/// One activation record. Compiled code writes records too
/// ([`FRAME_LAYOUT`]): every field is plain data, `func` a pointer.
pub(crate) struct Frame {
    module: u32,
    func: FuncRef,
    /// Next instruction to run when this frame is resumed.
    pc: u32,
    i32_base: u32,
    ref_base: u32,
    /// Position in this frame's aux of the result-register list of the call
    /// in progress (NONE when not calling).
    ret: u32,
    /// Bytes of the reference's VM stack that this frame and the frames
    /// below it would occupy (see [`frame_bytes`](crate::program::frame_bytes)).
    stack_end: u64,
}

enum Suspended {
    /// `vm.yield`: resume the top frame at its saved pc.
    Yield,
    /// An observer paused before the instruction at the top frame's pc.
    Pause,
    /// A host import returned deferred from `call.yieldable`.
    HostCall {
        module: u32,
        index: u32,
        import_module: u32,
        import: u32,
        results: u32,
    },
}

/// The register and frame stacks of a context.
#[derive(Default)]
pub(crate) struct Stack {
    /// i32 register slots. Only `..i32_top` belongs to frames; the rest is
    /// kept (initialised) so that calls do not reallocate or shrink it.
    i32s: Vec<u32>,
    /// End of the top frame's i32 window.
    i32_top: usize,
    /// Ref registers. Slots at and above `ref_top` are always null, so a
    /// new frame's window needs no initialisation.
    refs: Vec<Ref>,
    /// End of the top frame's ref window.
    ref_top: usize,
    frames: Vec<Frame>,
    suspended: Option<Suspended>,
    entry_results: Vec<u8>,
    /// Result vector of host calls ([`crate::host::HostState::call_into`]),
    /// kept (empty) between calls like `host_args`.
    host_results: Vec<Value>,
    /// Argument vector of host calls, kept (empty) between calls so that
    /// a call allocates none; its refs are borrowed from the registers.
    host_args: host_args::HostArgs,
    /// The bytes of `i32s`, `refs` and `frames` charged to the context's
    /// memory budget (`None`: not charged, for stacks made without a
    /// context).
    memory: Option<Charge>,
    /// For a call made aside while another waits in a host call that
    /// yields ([`crate::Context::invoke_aside`]): that host module, which
    /// this call may not enter (its suspended call would see the entry).
    blocked_host: Option<u32>,
}

impl Stack {
    /// The host module a call aside of this stack may not enter: the one
    /// this (paused) stack waits in, if it waits in a host call that
    /// yields.
    pub(crate) fn waiting_host(&self) -> Option<u32> {
        match self.suspended {
            Some(Suspended::HostCall { module, .. }) => Some(module),
            _ => None,
        }
    }

    /// Keeps this stack's calls out of host module `module` (see
    /// [`Stack::waiting_host`]).
    pub(crate) fn block_host(&mut self, module: Option<u32>) {
        self.blocked_host = module;
    }

    /// An empty stack whose register storage is charged to `budget`.
    pub(crate) fn with_budget(budget: &Arc<MemoryBudget>) -> Stack {
        Stack {
            memory: Some(Charge::empty(budget)),
            ..Stack::default()
        }
    }

    /// Makes room for windows ending at `need_i` i32 slots and `need_r`
    /// refs, charging the register storage to the memory budget first:
    /// growing fails cleanly (RESOURCE_EXHAUSTED) instead of aborting the
    /// process on a failed allocation.
    #[cold]
    #[inline(never)]
    fn grow_windows(&mut self, need_i: usize, need_r: usize) -> Result<(), Trap> {
        let new_i = if need_i > self.i32s.len() {
            need_i.max(self.i32s.len() * 2).max(256)
        } else {
            self.i32s.len()
        };
        let new_r = if need_r > self.refs.len() {
            need_r.max(self.refs.len() * 2).max(64)
        } else {
            self.refs.len()
        };
        let bytes = self.charged_bytes(
            new_i.max(self.i32s.capacity()),
            new_r.max(self.refs.capacity()),
            self.frames.capacity(),
        );
        if let Some(charge) = &mut self.memory {
            charge.resize(bytes as u64, "growing the register stacks")?;
        }
        let failed = || {
            Trap::new(
                StatusCode::ResourceExhausted,
                format!("cannot allocate register stacks of {bytes} bytes"),
            )
        };
        self.i32s
            .try_reserve_exact(new_i - self.i32s.len())
            .map_err(|_| failed())?;
        self.refs
            .try_reserve_exact(new_r - self.refs.len())
            .map_err(|_| failed())?;
        self.i32s.resize(new_i, 0);
        self.refs.resize(new_r, Ref::Null);
        Ok(())
    }

    /// What register storage for `i32s` slots and `refs` refs and a frame
    /// vector of `frames` frames cost against the memory budget.
    fn charged_bytes(&self, i32s: usize, refs: usize, frames: usize) -> usize {
        (i32s * 4)
            .saturating_add(refs * std::mem::size_of::<Ref>())
            .saturating_add(frames * std::mem::size_of::<Frame>())
    }

    /// Makes room for one more frame, charging the frame vector's growth
    /// to the memory budget first (a deep recursion of small frames holds
    /// more in frames than in registers).
    #[cold]
    #[inline(never)]
    fn grow_frames(&mut self) -> Result<(), Trap> {
        let new_f = (self.frames.capacity() * 2).max(16);
        let bytes = self.charged_bytes(self.i32s.capacity(), self.refs.capacity(), new_f);
        if let Some(charge) = &mut self.memory {
            charge.resize(bytes as u64, "growing the call stack")?;
        }
        self.frames
            .try_reserve_exact(new_f - self.frames.len())
            .map_err(|_| {
                Trap::new(
                    StatusCode::ResourceExhausted,
                    format!("cannot allocate a call stack of {new_f} frames"),
                )
            })
    }

    pub(crate) fn is_suspended(&self) -> bool {
        self.suspended.is_some()
    }
    /// Module and function ordinal of the suspended call's entry frame.
    pub(crate) fn suspended_entry(&self) -> Option<(u32, u32)> {
        self.suspended.as_ref()?;
        self.frames.first().map(|f| (f.module, f.func.ordinal))
    }
    pub(crate) fn is_paused(&self) -> bool {
        matches!(self.suspended, Some(Suspended::Pause))
    }
    /// The i32 register window of frame `n` (0 = innermost) of a
    /// suspended call, to write (a debugger's `set var`); `None` when no
    /// call is suspended or there is no frame `n`.
    pub(crate) fn frame_i32s_mut(&mut self, n: usize) -> Option<&mut [u32]> {
        self.suspended.as_ref()?;
        let f = self.frames.iter().rev().nth(n)?;
        let (base, count) = (f.i32_base as usize, f.func.i32_count as usize);
        self.i32s.get_mut(base..base + count)
    }
    /// Each frame, innermost first: module, function, saved pc and its
    /// register windows.
    pub(crate) fn frame_windows(
        &self,
    ) -> impl Iterator<Item = (u32, &Function, usize, &[u32], &[Ref])> + '_ {
        self.frames.iter().rev().map(|f| {
            let (ib, rb) = (f.i32_base as usize, f.ref_base as usize);
            let i32s = self
                .i32s
                .get(ib..ib + f.func.i32_count as usize)
                .unwrap_or(&[]);
            let refs = self
                .refs
                .get(rb..rb + f.func.ref_count as usize)
                .unwrap_or(&[]);
            let func: &Function = f.func.get();
            (f.module, func, f.pc as usize, i32s, refs)
        })
    }
    pub(crate) fn clear(&mut self) {
        self.frames.clear();
        self.i32_top = 0;
        // Only the frames' windows hold refs (everything at and above
        // `ref_top` is null): nulling those releases what the last call
        // left, and the storage keeps its length, so the next call's
        // first frame opens its windows without growing it again.
        let top = self.ref_top.min(self.refs.len());
        for r in &mut self.refs[..top] {
            *r = Ref::Null;
        }
        debug_assert!(
            self.refs.iter().all(Ref::is_null),
            "a ref above the top frame's window"
        );
        self.ref_top = 0;
        self.suspended = None;
        // (A host state whose `call_into` panicked out of the interpreter
        // leaves what it appended to the results, and the arguments it was
        // given: the next call's host functions append to an empty vector.)
        self.host_results.clear();
        self.host_args.clear();
    }

    /// Opens the windows of a new top frame: `n` zeroed i32 slots and `nr`
    /// null refs above the current top. Returns their bases.
    #[inline(always)]
    fn open_windows(&mut self, n: usize, nr: usize) -> (usize, usize) {
        let (base, rbase) = (self.i32_top, self.ref_top);
        // Zeroed in chunks of four slots (which may run past the window
        // into free slots, harmlessly); small windows without a memset call.
        let padded = ((n + 3) & !3).max(4);
        if base + padded > self.i32s.len() {
            self.grow_i32s(base + padded);
        }
        if padded <= 12 {
            let p = self.i32s.as_mut_ptr();
            let zero4 = |k: usize| {
                // SAFETY: `k + 4 <= padded` and `base + padded <= i32s.len()`
                // (ensured above).
                unsafe { (p.add(base + k) as *mut [u32; 4]).write_unaligned([0; 4]) }
            };
            zero4(0);
            if padded > 4 {
                zero4(4);
            }
            if padded > 8 {
                zero4(8);
            }
        } else {
            self.i32s[base..base + padded].fill(0);
        }
        self.i32_top = base + n;
        if nr > 0 {
            if rbase + nr > self.refs.len() {
                self.grow_refs(rbase + nr);
            }
            self.ref_top = rbase + nr;
        }
        (base, rbase)
    }

    /// Closes the top frame's windows (bases `base`, `rbase`): releases its
    /// refs, so that everything above the new top is null again.
    #[inline(always)]
    fn close_windows(&mut self, base: usize, rbase: usize) {
        self.i32_top = base;
        if self.ref_top > rbase {
            for r in &mut self.refs[rbase..self.ref_top] {
                *r = Ref::Null;
            }
            self.ref_top = rbase;
        }
    }

    #[cold]
    #[inline(never)]
    fn grow_i32s(&mut self, need: usize) {
        let len = need.max(self.i32s.len() * 2).max(256);
        self.i32s.resize(len, 0);
    }

    #[cold]
    #[inline(never)]
    fn grow_refs(&mut self, need: usize) {
        let len = need.max(self.refs.len() * 2).max(64);
        self.refs.resize(len, Ref::Null);
    }
}

const MAX_REGISTER_SLOTS: usize = 64 << 20;

fn bytecode(modules: &mut [Registered], m: u32) -> &mut crate::context::BytecodeInstance {
    match &mut modules[m as usize] {
        Registered::Bytecode(b) => b,
        // Frames are only ever created for bytecode modules.
        Registered::Host(_) => unreachable!("frame of a host module"),
    }
}

/// Pushes a frame for `func` with fresh register windows; returns the
/// windows' bases.
#[inline(always)]
fn push_frame(
    stack: &mut Stack,
    module: u32,
    func: &Arc<TieredFunction>,
    limit: StackLimit,
) -> Result<(usize, usize), Trap> {
    let below = stack.frames.last().map_or(0, |f| f.stack_end);
    let stack_end = below + u64::from(func.frame_bytes);
    if stack.frames.len() >= limit.frames
        || stack_end > limit.bytes
        || stack.i32_top + func.i32_count as usize > MAX_REGISTER_SLOTS
    {
        return Err(stack_overflow(stack, below, func, limit));
    }
    if stack.frames.len() == stack.frames.capacity() {
        stack.grow_frames()?;
    }
    let (n, nr) = (func.i32_count as usize, func.ref_count as usize);
    // Windows that do not fit the storage grow it, fallibly and charged
    // (open_windows pads i32 windows the same way).
    let need_i = stack.i32_top + ((n + 3) & !3).max(4);
    if need_i > stack.i32s.len() || stack.ref_top + nr > stack.refs.len() {
        stack.grow_windows(need_i, stack.ref_top + nr)?;
    }
    let (i32_base, ref_base) = stack.open_windows(n, nr);
    stack.frames.push(Frame {
        module,
        func: FuncRef::new(func),
        pc: 0,
        i32_base: i32_base as u32,
        ref_base: ref_base as u32,
        ret: NONE,
        stack_end,
    });
    Ok((i32_base, ref_base))
}

/// The bounds of a call stack: frames, and bytes of the reference's stack.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StackLimit {
    pub frames: usize,
    pub bytes: u64,
}

#[cold]
#[inline(never)]
fn stack_overflow(stack: &Stack, used: u64, func: &TieredFunction, limit: StackLimit) -> Trap {
    let depth = stack.frames.len();
    let frame = func.frame_bytes;
    let message = if depth >= limit.frames {
        format!("VM stack overflow: call depth exceeds {depth}")
    } else if used + u64::from(frame) > limit.bytes {
        format!(
            "VM stack overflow: a frame of {frame} bytes on {used} bytes in use \
             exceeds the stack's {} bytes (Limits::max_stack_bytes)",
            limit.bytes
        )
    } else {
        format!(
            "VM stack overflow: a frame of {} i32 registers on {} in use (in {depth} frames) \
             exceeds the {MAX_REGISTER_SLOTS} i32 register slots all frames may hold together",
            func.i32_count, stack.i32_top
        )
    };
    Trap::new(StatusCode::ResourceExhausted, message)
}

#[inline(always)]
fn pop_frame(stack: &mut Stack) {
    if let Some(f) = stack.frames.pop() {
        stack.close_windows(f.i32_base as usize, f.ref_base as usize);
    }
}

/// Starts `ordinal` of bytecode module `module` with `args`.
pub(crate) fn begin(
    ctx: &mut Context,
    module: u32,
    ordinal: u32,
    sig: &Signature,
    args: &[Value],
) -> Result<CallState, Trap> {
    ctx.stack.clear();
    if let Some(p) = ctx.hooks.profile.as_mut() {
        p.restart();
    }
    let limit = ctx.stack_limit();
    let func = &bytecode(&mut ctx.modules, module).funcs[ordinal as usize];
    push_frame(&mut ctx.stack, module, func, limit)?;
    let (mut s, mut r) = (0usize, 0usize);
    let st = &mut ctx.stack;
    let (n32, nref) = (st.i32_top, st.ref_top);
    for a in args {
        let wide = matches!(a, Value::I64(_) | Value::F64(_));
        let fits = match a {
            Value::Ref(_) => r < nref,
            _ if wide => s.div_ceil(2) * 2 + 2 <= n32,
            _ => s < n32,
        };
        if !fits {
            match a {
                Value::Ref(_) => r += 1,
                _ if wide => s = s.div_ceil(2) * 2 + 2,
                _ => s += 1,
            }
            continue;
        }
        match a {
            Value::I32(v) => {
                st.i32s[s] = *v as u32;
                s += 1;
            }
            Value::F32(v) => {
                st.i32s[s] = v.to_bits();
                s += 1;
            }
            Value::I64(v) => {
                s = s.div_ceil(2) * 2;
                write64(&mut st.i32s, s, *v as u64);
                s += 2;
            }
            Value::F64(v) => {
                s = s.div_ceil(2) * 2;
                write64(&mut st.i32s, s, v.to_bits());
                s += 2;
            }
            Value::Ref(x) => {
                st.refs[r].assign_clone_of(x);
                r += 1;
            }
            Value::None => {}
        }
    }
    st.entry_results.clone_from(&sig.results);
    run_with_backtrace(ctx)
}

/// Resumes a suspended call.
pub(crate) fn resume(ctx: &mut Context) -> Result<CallState, Trap> {
    match ctx.stack.suspended.take() {
        None => Err(Trap::new(
            StatusCode::FailedPrecondition,
            "nothing to resume",
        )),
        Some(Suspended::Yield | Suspended::Pause) => run_with_backtrace(ctx),
        Some(Suspended::HostCall {
            module,
            index,
            import_module,
            import,
            results,
        }) => {
            // Each resumption costs fuel and sees the deadline, like an
            // instruction: a host function that yields forever is bounded.
            if let Err(e) = ctx.hooks.charge_resume() {
                let e = with_backtrace(ctx, e);
                ctx.record_trap_frames();
                ctx.stack.clear();
                return Err(e);
            }
            let outcome = match &mut ctx.modules[module as usize] {
                Registered::Host(h) => {
                    ctx.resources.lend_fuel(ctx.hooks.fuel);
                    let outcome = h.state.resume(index as usize);
                    ctx.resources.reclaim_fuel(&mut ctx.hooks.fuel);
                    outcome
                }
                _ => Err(Trap::new(
                    StatusCode::Internal,
                    "resume of a non-host module",
                )),
            };
            match outcome {
                Err(e) => {
                    let e = with_backtrace(ctx, e);
                    ctx.record_trap_frames();
                    ctx.stack.clear();
                    Err(e)
                }
                Ok(HostOutcome::Deferred) => {
                    ctx.stack.suspended = Some(Suspended::HostCall {
                        module,
                        index,
                        import_module,
                        import,
                        results,
                    });
                    Ok(CallState::Yielded)
                }
                Ok(HostOutcome::Done(mut values)) => {
                    let kinds = bytecode(&mut ctx.modules, import_module).import_sigs
                        [import as usize]
                        .results
                        .clone();
                    let st = &mut ctx.stack;
                    let frame = st.frames.last().expect("suspended frame");
                    let dst = aux_list(&frame.func.aux, results, 0).to_vec();
                    let (ib, rb) = (frame.i32_base as usize, frame.ref_base as usize);
                    if let Err(e) = write_host_results(
                        (&mut st.i32s, &mut st.refs),
                        ib,
                        rb,
                        &dst,
                        &kinds,
                        &mut values,
                    ) {
                        let e = with_backtrace(ctx, e);
                        ctx.record_trap_frames();
                        ctx.stack.clear();
                        return Err(e);
                    }
                    run_with_backtrace(ctx)
                }
            }
        }
    }
}

fn with_backtrace(ctx: &Context, mut e: Trap) -> Trap {
    if e.backtrace.is_empty() {
        for f in ctx.stack.frames.iter().rev() {
            let pc = f.pc.saturating_sub(1) as usize;
            let offset = f.func.offsets.get(pc).copied().unwrap_or(0);
            e.backtrace
                .push(ctx.describe(f.module, f.func.ordinal, offset));
        }
    }
    e
}

fn run_with_backtrace(ctx: &mut Context) -> Result<CallState, Trap> {
    match dispatch::run(ctx) {
        Ok(s) => Ok(s),
        Err(e) => {
            let e = with_backtrace(ctx, e);
            ctx.record_trap_frames();
            ctx.stack.clear();
            Err(e)
        }
    }
}

#[inline]
fn write64(slots: &mut [u32], at: usize, v: u64) {
    slots[at] = v as u32;
    slots[at + 1] = (v >> 32) as u32;
}

#[inline]
fn read64(slots: &[u32], at: usize) -> u64 {
    slots[at] as u64 | ((slots[at + 1] as u64) << 32)
}

/// Copies call arguments from the caller's registers into the callee's
/// windows, each where the callee's argument plan puts it
/// ([`crate::program::ArgSlot`]: by bank from 0, i64/f64 at even slots,
/// those past its register file dropped).
#[inline(never)]
fn marshal_args(
    st: &mut Stack,
    caller: (usize, usize),
    callee: (usize, usize),
    regs: &[u32],
    plan: &[ArgSlot],
) {
    for (&reg, &slot) in regs.iter().zip(plan) {
        match slot {
            ArgSlot::I32(s) => st.i32s[callee.0 + s as usize] = st.i32s[caller.0 + reg as usize],
            ArgSlot::I64(s) => {
                let v = read64(&st.i32s, caller.0 + reg as usize);
                write64(&mut st.i32s, callee.0 + s as usize, v);
            }
            ArgSlot::Ref(r) => {
                let src = caller.1 + (reg as u16 & REF_INDEX_MASK) as usize;
                let take = reg as u16 & REF_MOVE_BIT != 0;
                Ref::copy_within(&mut st.refs, src, callee.1 + r as usize, take);
            }
            ArgSlot::Dropped => {}
        }
    }
}

/// Copies returned values from callee registers to caller registers.
#[inline(never)]
fn marshal_results(
    st: &mut Stack,
    callee: (usize, usize),
    caller: (usize, usize),
    src: &[u32],
    dst: &[u32],
    kinds: &[u8],
) {
    for ((&s, &d), &k) in src.iter().zip(dst).zip(kinds) {
        match k {
            b'r' => {
                let from = callee.1 + (s as u16 & REF_INDEX_MASK) as usize;
                let to = caller.1 + (d as u16 & REF_INDEX_MASK) as usize;
                Ref::copy_within(&mut st.refs, from, to, s as u16 & REF_MOVE_BIT != 0);
            }
            b'I' | b'F' => {
                let v = read64(&st.i32s, callee.0 + s as usize);
                write64(&mut st.i32s, caller.0 + d as usize, v);
            }
            _ => st.i32s[caller.0 + d as usize] = st.i32s[callee.0 + s as usize],
        }
    }
}

/// A stack's register storage, borrowed apart from its other fields (so
/// that a host call's arguments are read straight into the stack's own
/// argument vector, and its results written from the stack's own result
/// vector).
pub(super) type Registers<'a> = (&'a [u32], &'a mut [Ref]);

/// Appends the values of registers `regs` of the frame at `base`, read as
/// `kinds`, to `out` (a ref operand with the move bit is taken).
pub(super) fn read_values_into(
    regs_of: Registers<'_>,
    base: (usize, usize),
    regs: &[u32],
    kinds: &[u8],
    out: &mut Vec<Value>,
) {
    let (i32s, refs) = regs_of;
    for (&reg, &k) in regs.iter().zip(kinds) {
        let v = read_value(i32s, refs, base, reg, k);
        out.push(v);
    }
}

/// Register `reg` of the frame at `base` as a value of kind `k`
/// (`i I f F r`); a ref operand with the move bit is taken.
#[inline(always)]
fn read_value(i32s: &[u32], refs: &mut [Ref], base: (usize, usize), reg: u32, k: u8) -> Value {
    match k {
        b'i' => Value::I32(i32s[base.0 + reg as usize] as i32),
        b'f' => Value::F32(f32::from_bits(i32s[base.0 + reg as usize])),
        b'I' => Value::I64(read64(i32s, base.0 + reg as usize) as i64),
        b'F' => Value::F64(f64::from_bits(read64(i32s, base.0 + reg as usize))),
        _ => {
            let at = base.1 + (reg as u16 & REF_INDEX_MASK) as usize;
            Value::Ref(if reg as u16 & REF_MOVE_BIT != 0 {
                std::mem::take(&mut refs[at])
            } else {
                refs[at].clone()
            })
        }
    }
}

/// Moves a host call's results (`values`, left empty) into the caller's
/// registers `dst`, checking each against the import's result `kinds`.
pub(super) fn write_host_results(
    (i32s, refs): (&mut [u32], &mut [Ref]),
    i32_base: usize,
    ref_base: usize,
    dst: &[u32],
    kinds: &[u8],
    values: &mut Vec<Value>,
) -> Result<(), Trap> {
    if values.len() != kinds.len() {
        let n = values.len();
        values.clear();
        return Err(Trap::new(
            StatusCode::Internal,
            format!(
                "host function returned {} values, expected {}",
                n,
                kinds.len()
            ),
        ));
    }
    // (Read in place and the refs taken out, not drained: a drained value
    // goes through a local written in two pieces and read back across
    // them, a failed store forward per result.)
    for ((v, &d), &k) in values.iter_mut().zip(dst).zip(kinds) {
        if v.kind_char() as u8 != k {
            let found = v.kind_char();
            values.clear();
            return Err(Trap::new(
                StatusCode::Internal,
                format!("host function returned {found}, expected {}", kind_name(k)),
            ));
        }
        match v {
            Value::I32(x) => i32s[i32_base + d as usize] = *x as u32,
            Value::F32(x) => i32s[i32_base + d as usize] = x.to_bits(),
            Value::I64(x) => write64(i32s, i32_base + d as usize, *x as u64),
            Value::F64(x) => write64(i32s, i32_base + d as usize, x.to_bits()),
            Value::Ref(r) => {
                refs[ref_base + (d as u16 & REF_INDEX_MASK) as usize] = std::mem::take(r)
            }
            Value::None => {}
        }
    }
    values.clear();
    Ok(())
}

fn div_zero() -> Trap {
    Trap::new(StatusCode::InvalidArgument, "integer division by zero")
}

pub(crate) fn cast_f32_si32(x: f32) -> i32 {
    // IREE: (int32_t)lroundf(x): round half away from zero via a 64-bit long.
    lround(x as f64) as i32
}
pub(crate) fn lround(x: f64) -> i64 {
    // x86-64 glibc returns LONG_MIN for NaN and out-of-range inputs.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let r = x.round();
    if r.is_nan() || !(-LIMIT..LIMIT).contains(&r) {
        i64::MIN
    } else {
        r as i64
    }
}

fn check_alignment(align: i32) -> Result<(), Trap> {
    if align < 0 || (align != 0 && (align as u32).count_ones() != 1) {
        return Err(Trap::new(
            StatusCode::InvalidArgument,
            format!("alignment {align} is not a power of two"),
        ));
    }
    Ok(())
}
