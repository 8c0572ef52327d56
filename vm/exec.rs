//! The interpreter: one `run` loop over pre-decoded [`Inst`]s with an
//! explicit frame stack (calls never recurse on the Rust stack), so deep
//! recursion fails cleanly and a yielded program can be resumed.
//!
//! Registers live in two stacks shared by all frames: `i32s` (i64/f64 use
//! two adjacent slots) and `refs`. Each frame owns a window of each, sized
//! by its function descriptor. The loop addresses the current window through
//! raw base pointers; the verifier in [`crate::program`] proved every
//! register operand lies inside its function's window.

use std::rc::Rc;

use crate::context::{kind_name, CallState, Context, ImportTarget, Registered};
use crate::host::HostOutcome;
use crate::isa::{Opcode, IMPORT_ORDINAL_BIT, REF_INDEX_MASK, REF_MOVE_BIT};
use crate::program::{
    aux_list, expand_variadic, flatten, Function, Inst, Signature, NONE, NO_REMAP,
};
use crate::refs::{Buffer, List, Ref, TypeDef};
use crate::trap::{StatusCode, Trap};
use crate::value::Value;

/// One activation record.
pub(crate) struct Frame {
    module: u32,
    func: Rc<Function>,
    /// Next instruction to run when this frame is resumed.
    pc: u32,
    i32_base: u32,
    ref_base: u32,
    /// Position in this frame's aux of the result-register list of the call
    /// in progress (NONE when not calling).
    ret: u32,
}

enum Suspended {
    /// `vm.yield`: resume the top frame at its saved pc.
    Yield,
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
    i32s: Vec<u32>,
    refs: Vec<Ref>,
    frames: Vec<Frame>,
    suspended: Option<Suspended>,
    entry_results: Vec<u8>,
}

impl Stack {
    pub(crate) fn is_suspended(&self) -> bool {
        self.suspended.is_some()
    }
    pub(crate) fn clear(&mut self) {
        self.frames.clear();
        self.i32s.clear();
        self.refs.clear();
        self.suspended = None;
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

fn push_frame(
    stack: &mut Stack,
    module: u32,
    func: Rc<Function>,
    max_depth: usize,
) -> Result<(), Trap> {
    if stack.frames.len() >= max_depth
        || stack.i32s.len() + func.i32_count as usize > MAX_REGISTER_SLOTS
    {
        return Err(Trap::new(
            StatusCode::ResourceExhausted,
            format!(
                "VM stack overflow: call depth exceeds {}",
                stack.frames.len()
            ),
        ));
    }
    let i32_base = stack.i32s.len();
    let ref_base = stack.refs.len();
    stack.i32s.resize(i32_base + func.i32_count as usize, 0);
    stack
        .refs
        .resize(ref_base + func.ref_count as usize, Ref::Null);
    stack.frames.push(Frame {
        module,
        func,
        pc: 0,
        i32_base: i32_base as u32,
        ref_base: ref_base as u32,
        ret: NONE,
    });
    Ok(())
}

fn pop_frame(stack: &mut Stack) {
    if let Some(f) = stack.frames.pop() {
        stack.i32s.truncate(f.i32_base as usize);
        stack.refs.truncate(f.ref_base as usize);
    }
}

/// Starts `ordinal` of bytecode module `module` with `args`.
pub(crate) fn begin(
    ctx: &mut Context,
    module: u32,
    ordinal: u32,
    sig: Signature,
    args: &[Value],
) -> Result<CallState, Trap> {
    let func = bytecode(&mut ctx.modules, module).funcs[ordinal as usize].clone();
    ctx.stack.clear();
    push_frame(&mut ctx.stack, module, func, ctx.max_depth)?;
    let (mut s, mut r) = (0usize, 0usize);
    let st = &mut ctx.stack;
    let (n32, nref) = (st.i32s.len(), st.refs.len());
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
                st.refs[r] = x.clone();
                r += 1;
            }
            Value::None => {}
        }
    }
    st.entry_results = sig.results;
    run_with_backtrace(ctx)
}

/// Resumes a suspended call.
pub(crate) fn resume(ctx: &mut Context) -> Result<CallState, Trap> {
    match ctx.stack.suspended.take() {
        None => Err(Trap::new(
            StatusCode::FailedPrecondition,
            "nothing to resume",
        )),
        Some(Suspended::Yield) => run_with_backtrace(ctx),
        Some(Suspended::HostCall {
            module,
            index,
            import_module,
            import,
            results,
        }) => {
            let outcome = match &mut ctx.modules[module as usize] {
                Registered::Host(h) => h.state.resume(index as usize),
                _ => Err(Trap::new(
                    StatusCode::Internal,
                    "resume of a non-host module",
                )),
            };
            match outcome {
                Err(e) => {
                    let e = with_backtrace(ctx, e);
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
                Ok(HostOutcome::Done(values)) => {
                    let kinds = bytecode(&mut ctx.modules, import_module).import_sigs
                        [import as usize]
                        .results
                        .clone();
                    let st = &mut ctx.stack;
                    let frame = st.frames.last().expect("suspended frame");
                    let dst = aux_list(&frame.func.aux, results, 0).to_vec();
                    let (ib, rb) = (frame.i32_base as usize, frame.ref_base as usize);
                    if let Err(e) = write_host_results(st, ib, rb, &dst, &kinds, values) {
                        let e = with_backtrace(ctx, e);
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
    match run(ctx) {
        Ok(s) => Ok(s),
        Err(e) => {
            let e = with_backtrace(ctx, e);
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
/// ABI registers (placed from 0 by kind; i64/f64 aligned to even slots).
fn marshal_args(
    st: &mut Stack,
    caller: (usize, usize),
    callee: (usize, usize),
    regs: &[u32],
    kinds: &[u8],
) {
    let (mut s, mut r) = (0usize, 0usize);
    // The callee's window is the top of both stacks; arguments that do not
    // fit (unused by its body) are dropped.
    let (n32, nref) = (st.i32s.len() - callee.0, st.refs.len() - callee.1);
    for (&reg, &k) in regs.iter().zip(kinds) {
        match k {
            b'r' if r >= nref => r += 1,
            b'I' | b'F' if s.div_ceil(2) * 2 + 2 > n32 => s = s.div_ceil(2) * 2 + 2,
            b'i' | b'f' if s >= n32 => s += 1,
            b'r' => {
                let src = caller.1 + (reg as u16 & REF_INDEX_MASK) as usize;
                let v = if reg as u16 & REF_MOVE_BIT != 0 {
                    std::mem::take(&mut st.refs[src])
                } else {
                    st.refs[src].clone()
                };
                st.refs[callee.1 + r] = v;
                r += 1;
            }
            b'I' | b'F' => {
                s = s.div_ceil(2) * 2;
                let v = read64(&st.i32s, caller.0 + reg as usize);
                write64(&mut st.i32s, callee.0 + s, v);
                s += 2;
            }
            _ => {
                st.i32s[callee.0 + s] = st.i32s[caller.0 + reg as usize];
                s += 1;
            }
        }
    }
}

/// Copies returned values from callee registers to caller registers.
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
                let v = if s as u16 & REF_MOVE_BIT != 0 {
                    std::mem::take(&mut st.refs[from])
                } else {
                    st.refs[from].clone()
                };
                st.refs[caller.1 + (d as u16 & REF_INDEX_MASK) as usize] = v;
            }
            b'I' | b'F' => {
                let v = read64(&st.i32s, callee.0 + s as usize);
                write64(&mut st.i32s, caller.0 + d as usize, v);
            }
            _ => st.i32s[caller.0 + d as usize] = st.i32s[callee.0 + s as usize],
        }
    }
}

/// Reads argument values for a host call.
fn read_values(st: &mut Stack, base: (usize, usize), regs: &[u32], kinds: &[u8]) -> Vec<Value> {
    regs.iter()
        .zip(kinds)
        .map(|(&reg, &k)| match k {
            b'i' => Value::I32(st.i32s[base.0 + reg as usize] as i32),
            b'f' => Value::F32(f32::from_bits(st.i32s[base.0 + reg as usize])),
            b'I' => Value::I64(read64(&st.i32s, base.0 + reg as usize) as i64),
            b'F' => Value::F64(f64::from_bits(read64(&st.i32s, base.0 + reg as usize))),
            _ => {
                let at = base.1 + (reg as u16 & REF_INDEX_MASK) as usize;
                Value::Ref(if reg as u16 & REF_MOVE_BIT != 0 {
                    std::mem::take(&mut st.refs[at])
                } else {
                    st.refs[at].clone()
                })
            }
        })
        .collect()
}

fn write_host_results(
    st: &mut Stack,
    i32_base: usize,
    ref_base: usize,
    dst: &[u32],
    kinds: &[u8],
    values: Vec<Value>,
) -> Result<(), Trap> {
    if values.len() != kinds.len() {
        return Err(Trap::new(
            StatusCode::Internal,
            format!(
                "host function returned {} values, expected {}",
                values.len(),
                kinds.len()
            ),
        ));
    }
    for ((v, &d), &k) in values.into_iter().zip(dst).zip(kinds) {
        if v.kind_char() as u8 != k {
            return Err(Trap::new(
                StatusCode::Internal,
                format!(
                    "host function returned {}, expected {}",
                    v.kind_char(),
                    kind_name(k)
                ),
            ));
        }
        match v {
            Value::I32(x) => st.i32s[i32_base + d as usize] = x as u32,
            Value::F32(x) => st.i32s[i32_base + d as usize] = x.to_bits(),
            Value::I64(x) => write64(&mut st.i32s, i32_base + d as usize, x as u64),
            Value::F64(x) => write64(&mut st.i32s, i32_base + d as usize, x.to_bits()),
            Value::Ref(r) => st.refs[ref_base + (d as u16 & REF_INDEX_MASK) as usize] = r,
            Value::None => {}
        }
    }
    Ok(())
}

fn div_zero() -> Trap {
    Trap::new(StatusCode::InvalidArgument, "integer division by zero")
}

fn cast_f32_si32(x: f32) -> i32 {
    // IREE: (int32_t)lroundf(x): round half away from zero via a 64-bit long.
    lround(x as f64) as i32
}
fn lround(x: f64) -> i64 {
    // x86-64 glibc returns LONG_MIN for NaN and out-of-range inputs.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let r = x.round();
    if r.is_nan() || !(-LIMIT..LIMIT).contains(&r) {
        i64::MIN
    } else {
        r as i64
    }
}
fn f_to_u64(x: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    // C's (uint64_t) conversion as x86-64 compilers emit it.
    if x.is_nan() {
        0x8000_0000_0000_0000
    } else if x >= TWO_63 {
        if x >= 2.0 * TWO_63 {
            0
        } else {
            (x - TWO_63) as u64 ^ 0x8000_0000_0000_0000
        }
    } else if x < -TWO_63 {
        0x8000_0000_0000_0000
    } else {
        x as i64 as u64
    }
}

/// Runs the top frame until the entry frame returns, the program yields, or
/// something fails.
#[allow(clippy::cognitive_complexity)]
fn run(ctx: &mut Context) -> Result<CallState, Trap> {
    let max_depth = ctx.max_depth;
    let modules = &mut ctx.modules;
    let st = &mut ctx.stack;

    let top = st.frames.last().expect("a frame to run");
    let mut cur = top.module;
    let mut func = top.func.clone();
    let (i32_base, ref_base) = (top.i32_base as usize, top.ref_base as usize);
    let mut code: *const Inst = func.code.as_ptr();
    // SAFETY: the saved pc is an instruction index of `func` (see the loop).
    let mut ip: *const Inst = unsafe { code.add(top.pc as usize) };
    // SAFETY (all register accesses below): the frame's windows
    // `i32s[i32_base..i32_base + i32_count]` and `refs[ref_base..ref_base +
    // ref_count]` exist while the frame is on the stack, and the verifier
    // (program::compile) proved every register operand of `func` indexes
    // inside them (i64/f64: both slots). The base pointers are refreshed
    // after every operation that may reallocate the stacks (calls, returns).
    let mut regs: *mut u32 = unsafe { st.i32s.as_mut_ptr().add(i32_base) };
    let mut refs: *mut Ref = unsafe { st.refs.as_mut_ptr().add(ref_base) };

    macro_rules! ri {
        ($r:expr) => {
            // SAFETY: see above; register ordinal verified in range.
            unsafe { *regs.add($r as usize) as i32 }
        };
    }
    macro_rules! wi {
        ($r:expr, $v:expr) => {{
            let v = $v as u32;
            // SAFETY: see above.
            unsafe { *regs.add($r as usize) = v }
        }};
    }
    macro_rules! rl {
        ($r:expr) => {
            // SAFETY: see above; both slots of the pair are in range.
            unsafe { (regs.add($r as usize) as *const i64).read_unaligned() }
        };
    }
    macro_rules! wl {
        ($r:expr, $v:expr) => {{
            let v: i64 = $v;
            // SAFETY: see above.
            unsafe { (regs.add($r as usize) as *mut i64).write_unaligned(v) }
        }};
    }
    macro_rules! rf {
        ($r:expr) => {
            f32::from_bits(ri!($r) as u32)
        };
    }
    macro_rules! wf {
        ($r:expr, $v:expr) => {
            wi!($r, f32::to_bits($v))
        };
    }
    macro_rules! rd {
        ($r:expr) => {
            f64::from_bits(rl!($r) as u64)
        };
    }
    macro_rules! wd {
        ($r:expr, $v:expr) => {
            wl!($r, f64::to_bits($v) as i64)
        };
    }
    macro_rules! rref {
        ($r:expr) => {
            // SAFETY: see above; ref ordinal verified in range.
            unsafe { &*refs.add(($r as u16 & REF_INDEX_MASK) as usize) }
        };
    }
    macro_rules! wref {
        ($r:expr, $v:expr) => {{
            let v: Ref = $v;
            // SAFETY: see above. No other reference into `refs` is live.
            unsafe { *refs.add(($r as u16 & REF_INDEX_MASK) as usize) = v }
        }};
    }
    // Retains, or moves when the operand carries the move bit.
    macro_rules! take_ref {
        ($r:expr) => {{
            let r = $r as u16;
            if r & REF_MOVE_BIT != 0 {
                // SAFETY: see above.
                unsafe { std::mem::take(&mut *refs.add((r & REF_INDEX_MASK) as usize)) }
            } else {
                rref!(r).clone()
            }
        }};
    }
    macro_rules! jump {
        ($t:expr) => {{
            let t = $t as usize;
            // SAFETY: branch targets were verified to be instruction indices
            // of this function.
            ip = unsafe { code.add(t) };
        }};
    }
    macro_rules! save_pc {
        () => {
            if let Some(f) = st.frames.last_mut() {
                // SAFETY: `ip` points into `func.code` (one past the current
                // instruction at most).
                f.pc = unsafe { ip.offset_from(code) } as u32;
            }
        };
    }
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => {
                    save_pc!();
                    return Err(e);
                }
            }
        };
    }
    macro_rules! reload {
        () => {{
            let top = st.frames.last().expect("frame");
            cur = top.module;
            func = top.func.clone();
            code = func.code.as_ptr();
            // SAFETY: saved pcs are instruction indices of the frame's function.
            ip = unsafe { code.add(top.pc as usize) };
            let (ib, rb) = (top.i32_base as usize, top.ref_base as usize);
            // SAFETY: bases index existing windows of the stacks.
            regs = unsafe { st.i32s.as_mut_ptr().add(ib) };
            refs = unsafe { st.refs.as_mut_ptr().add(rb) };
        }};
    }
    macro_rules! remap {
        ($at:expr) => {{
            let at = $at as usize;
            let n = func.aux[at] as usize;
            for k in 0..n {
                let w = func.aux[at + 1 + k];
                let (s, d) = (w as u16, (w >> 16) as u16);
                if s & 0x8000 != 0 {
                    let v = take_ref!(s);
                    wref!(d, v);
                } else {
                    wi!(d, ri!(s));
                }
            }
        }};
    }
    macro_rules! bin_i32 {
        ($i:ident, |$x:ident, $y:ident| $body:expr) => {{
            let $x = ri!($i.a);
            let $y = ri!($i.b);
            wi!($i.c, $body);
        }};
    }
    macro_rules! bin_i64 {
        ($i:ident, |$x:ident, $y:ident| $body:expr) => {{
            let $x = rl!($i.a);
            let $y = rl!($i.b);
            wl!($i.c, $body);
        }};
    }
    macro_rules! un_i32 {
        ($i:ident, |$x:ident| $body:expr) => {{
            let $x = ri!($i.a);
            wi!($i.b, $body);
        }};
    }
    macro_rules! un_i64 {
        ($i:ident, |$x:ident| $body:expr) => {{
            let $x = rl!($i.a);
            wl!($i.b, $body);
        }};
    }
    macro_rules! bin_f32 {
        ($i:ident, |$x:ident, $y:ident| $body:expr) => {{
            let $x = rf!($i.a);
            let $y = rf!($i.b);
            wf!($i.c, $body);
        }};
    }
    macro_rules! un_f32 {
        ($i:ident, |$x:ident| $body:expr) => {{
            let $x = rf!($i.a);
            wf!($i.b, $body);
        }};
    }
    macro_rules! bin_f64 {
        ($i:ident, |$x:ident, $y:ident| $body:expr) => {{
            let $x = rd!($i.a);
            let $y = rd!($i.b);
            wd!($i.c, $body);
        }};
    }
    macro_rules! un_f64 {
        ($i:ident, |$x:ident| $body:expr) => {{
            let $x = rd!($i.a);
            wd!($i.b, $body);
        }};
    }
    macro_rules! cmp_f32 {
        ($i:ident, |$x:ident, $y:ident| $body:expr) => {{
            let $x = rf!($i.a);
            let $y = rf!($i.b);
            wi!($i.c, ($body) as i32);
        }};
    }
    macro_rules! cmp_f64 {
        ($i:ident, |$x:ident, $y:ident| $body:expr) => {{
            let $x = rd!($i.a);
            let $y = rd!($i.b);
            wi!($i.c, ($body) as i32);
        }};
    }
    // Writes the comparison to `$dst`, then branches: true edge to `x`
    // (remapping by `d` when set), false edge to `y`.
    macro_rules! cmp_br {
        ($i:ident, $dst:expr, $cond:expr) => {{
            let v = $cond;
            wi!($dst, v as i32);
            if v {
                if $i.d != NO_REMAP {
                    remap!($i.d);
                }
                jump!($i.x);
            } else {
                jump!($i.y);
            }
        }};
    }
    macro_rules! state {
        () => {
            bytecode(modules, cur)
        };
    }
    macro_rules! buffer {
        ($r:expr, $what:expr) => {
            tri!(rref!($r).buffer($what))
        };
    }
    macro_rules! list {
        ($r:expr) => {
            tri!(rref!($r).list())
        };
    }
    macro_rules! global_slice {
        ($off:expr, $n:expr) => {{
            let off = $off as usize;
            let s = state!();
            let len = s.rwdata.len();
            tri!(s
                .rwdata
                .get_mut(off..off.wrapping_add($n))
                .filter(|_| off <= len)
                .ok_or_else(|| Trap::new(
                    StatusCode::OutOfRange,
                    format!(
                        "global byte_offset out of range: {} (rwdata={})",
                        off as i32, len
                    )
                )))
        }};
    }
    macro_rules! global_ref {
        ($ord:expr) => {{
            let ord = $ord as usize;
            let s = state!();
            let n = s.global_refs.len();
            tri!(s.global_refs.get_mut(ord).ok_or_else(|| Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "global ref ordinal out of range: {} (table={})",
                    ord as i32, n
                )
            )))
        }};
    }
    macro_rules! type_of {
        ($t:expr) => {
            state!().types[$t as usize]
        };
    }

    loop {
        // SAFETY: `pc` is always an instruction index of `func`: it starts at
        // 0 or a saved pc, branches go to verified targets, and falling
        // through stops at the guard instruction that ends every function.
        let i = unsafe { &*ip };
        // SAFETY: as above; at most one past the current instruction, which
        // is still inside `func.code` (the guard is never the last executed
        // instruction that advances, it traps).
        ip = unsafe { ip.add(1) };
        match i.op {
            // ---- globals ------------------------------------------------------------------------
            Opcode::GlobalLoadI32 | Opcode::GlobalLoadF32 => {
                let s = global_slice!(i.x, 4);
                let v = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                wi!(i.a, v);
            }
            Opcode::GlobalStoreI32 | Opcode::GlobalStoreF32 => {
                let v = ri!(i.a) as u32;
                global_slice!(i.x, 4).copy_from_slice(&v.to_le_bytes());
            }
            Opcode::GlobalLoadIndirectI32 | Opcode::GlobalLoadIndirectF32 => {
                let s = global_slice!(ri!(i.a) as u32, 4);
                let v = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                wi!(i.b, v);
            }
            Opcode::GlobalStoreIndirectI32 | Opcode::GlobalStoreIndirectF32 => {
                let v = ri!(i.b) as u32;
                global_slice!(ri!(i.a) as u32, 4).copy_from_slice(&v.to_le_bytes());
            }
            Opcode::GlobalLoadI64 | Opcode::GlobalLoadF64 => {
                let s = global_slice!(i.x, 8);
                let mut b = [0u8; 8];
                b.copy_from_slice(s);
                wl!(i.a, i64::from_le_bytes(b));
            }
            Opcode::GlobalStoreI64 | Opcode::GlobalStoreF64 => {
                let v = rl!(i.a);
                global_slice!(i.x, 8).copy_from_slice(&v.to_le_bytes());
            }
            Opcode::GlobalLoadIndirectI64 | Opcode::GlobalLoadIndirectF64 => {
                let s = global_slice!(ri!(i.a) as u32, 8);
                let mut b = [0u8; 8];
                b.copy_from_slice(s);
                wl!(i.b, i64::from_le_bytes(b));
            }
            Opcode::GlobalStoreIndirectI64 | Opcode::GlobalStoreIndirectF64 => {
                let v = rl!(i.b);
                global_slice!(ri!(i.a) as u32, 8).copy_from_slice(&v.to_le_bytes());
            }
            Opcode::GlobalLoadRef => {
                let ty = type_of!(i.y);
                let g = global_ref!(i.x);
                tri!(ty.check_ref(g));
                let v = if i.a & REF_MOVE_BIT != 0 {
                    std::mem::take(g)
                } else {
                    g.clone()
                };
                wref!(i.a, v);
            }
            Opcode::GlobalStoreRef => {
                let ty = type_of!(i.y);
                tri!(ty.check_ref(rref!(i.a)));
                let v = take_ref!(i.a);
                *global_ref!(i.x) = v;
            }
            Opcode::GlobalLoadIndirectRef => {
                let ty = type_of!(i.x);
                let g = global_ref!(ri!(i.a) as u32);
                tri!(ty.check_ref(g));
                let v = if i.b & REF_MOVE_BIT != 0 {
                    std::mem::take(g)
                } else {
                    g.clone()
                };
                wref!(i.b, v);
            }
            Opcode::GlobalStoreIndirectRef => {
                let ty = type_of!(i.x);
                tri!(ty.check_ref(rref!(i.b)));
                let v = take_ref!(i.b);
                *global_ref!(ri!(i.a) as u32) = v;
            }
            // ---- constants ----------------------------------------------------------------------
            Opcode::ConstI32Zero | Opcode::ConstF32Zero => wi!(i.a, 0),
            Opcode::ConstI32 | Opcode::ConstF32 => wi!(i.a, i.x),
            Opcode::ConstI64Zero | Opcode::ConstF64Zero => wl!(i.a, 0),
            Opcode::ConstI64 | Opcode::ConstF64 => {
                wl!(i.a, ((i.y as u64) << 32 | i.x as u64) as i64)
            }
            Opcode::ConstRefZero => wref!(i.a, Ref::Null),
            Opcode::ConstRefRodata => {
                let b = state!().rodata[i.x as usize].clone();
                wref!(i.a, Ref::Buffer(b));
            }
            // ---- lists --------------------------------------------------------------------------
            Opcode::ListAlloc => {
                let ty = type_of!(i.x);
                let l = tri!(List::new(ty, ri!(i.a) as u32));
                wref!(i.b, Ref::List(Rc::new(l)));
            }
            Opcode::ListReserve => tri!(list!(i.a).reserve(ri!(i.b) as u32)),
            Opcode::ListSize => {
                let n = list!(i.a).len();
                wi!(i.b, n as i32);
            }
            Opcode::ListResize => tri!(list!(i.a).resize(ri!(i.b) as u32)),
            Opcode::ListGetI32 => {
                let v = tri!(list!(i.a).get_i32(ri!(i.b) as u32));
                wi!(i.c, v);
            }
            Opcode::ListSetI32 => tri!(list!(i.a).set_i32(ri!(i.b) as u32, ri!(i.c))),
            Opcode::ListGetI64 => {
                let v = tri!(list!(i.a).get_i64(ri!(i.b) as u32));
                wl!(i.c, v);
            }
            Opcode::ListSetI64 => tri!(list!(i.a).set_i64(ri!(i.b) as u32, rl!(i.c))),
            Opcode::ListGetF32 => {
                let v = tri!(list!(i.a).get_f32(ri!(i.b) as u32));
                wf!(i.c, v);
            }
            Opcode::ListSetF32 => tri!(list!(i.a).set_f32(ri!(i.b) as u32, rf!(i.c))),
            Opcode::ListGetF64 => {
                let v = tri!(list!(i.a).get_f64(ri!(i.b) as u32));
                wd!(i.c, v);
            }
            Opcode::ListSetF64 => tri!(list!(i.a).set_f64(ri!(i.b) as u32, rd!(i.c))),
            Opcode::ListGetRef => {
                let ty = type_of!(i.x);
                let l = list!(i.a).clone();
                let v = tri!(l.get_ref(ri!(i.b) as u32, i.c & REF_MOVE_BIT != 0));
                let v = match (ty, v.ref_type()) {
                    (_, None) | (TypeDef::Any, _) => v,
                    (TypeDef::Ref(t), Some(u)) if t == u => v,
                    _ => Ref::Null,
                };
                wref!(i.c, v);
            }
            Opcode::ListSetRef => {
                let l = list!(i.a).clone();
                let v = take_ref!(i.c);
                tri!(l.set_ref(ri!(i.b) as u32, v));
            }
            // ---- select / switch ----------------------------------------------------------------
            Opcode::SelectI32 | Opcode::SelectF32 => {
                let v = if ri!(i.a) != 0 { ri!(i.b) } else { ri!(i.c) };
                wi!(i.d, v);
            }
            Opcode::SelectI64 | Opcode::SelectF64 => {
                let v = if ri!(i.a) != 0 { rl!(i.b) } else { rl!(i.c) };
                wl!(i.d, v);
            }
            Opcode::SelectRef => {
                let ty = type_of!(i.x);
                let (pick, other) = if ri!(i.a) != 0 {
                    (i.b, i.c)
                } else {
                    (i.c, i.b)
                };
                tri!(ty.check_ref(rref!(pick)));
                let v = take_ref!(pick);
                if other & REF_MOVE_BIT != 0 && (other & REF_INDEX_MASK) != (i.d & REF_INDEX_MASK) {
                    wref!(other, Ref::Null);
                }
                wref!(i.d, v);
            }
            Opcode::SwitchI32 | Opcode::SwitchF32 => {
                let idx = ri!(i.a);
                let list = aux_list(&func.aux, i.x, 0);
                let v = match usize::try_from(idx).ok().and_then(|k| list.get(k)) {
                    Some(&r) => ri!(r),
                    None => ri!(i.b),
                };
                wi!(i.c, v);
            }
            Opcode::SwitchI64 | Opcode::SwitchF64 => {
                let idx = ri!(i.a);
                let list = aux_list(&func.aux, i.x, 0);
                let v = match usize::try_from(idx).ok().and_then(|k| list.get(k)) {
                    Some(&r) => rl!(r),
                    None => rl!(i.b),
                };
                wl!(i.c, v);
            }
            Opcode::SwitchRef => {
                let ty = type_of!(i.x);
                let idx = ri!(i.a);
                let list = aux_list(&func.aux, i.y, 0);
                let src = match usize::try_from(idx).ok().and_then(|k| list.get(k)) {
                    Some(&r) => r as u16,
                    None => i.b,
                };
                tri!(ty.check_ref(rref!(src)));
                let v = take_ref!(src);
                wref!(i.c, v);
            }
            // ---- i32 arithmetic -----------------------------------------------------------------
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
            // ---- i64 arithmetic -----------------------------------------------------------------
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
            // ---- integer casts ------------------------------------------------------------------
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
            // ---- comparisons --------------------------------------------------------------------
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
            // ---- control flow -------------------------------------------------------------------
            Opcode::Br | Opcode::Break => {
                if i.y != NONE {
                    remap!(i.y);
                }
                jump!(i.x);
            }
            Opcode::CondBr => {
                if ri!(i.a) != 0 {
                    if i.c != NO_REMAP {
                        remap!(i.c);
                    }
                    jump!(i.x);
                } else {
                    if i.d != NO_REMAP {
                        remap!(i.d);
                    }
                    jump!(i.y);
                }
            }
            // Fused compare-and-branch (see program::fuse_compare_branches).
            Opcode::CmpEqI32Br => cmp_br!(i, i.c, ri!(i.a) == ri!(i.b)),
            Opcode::CmpNeI32Br => cmp_br!(i, i.c, ri!(i.a) != ri!(i.b)),
            Opcode::CmpLtI32SBr => cmp_br!(i, i.c, ri!(i.a) < ri!(i.b)),
            Opcode::CmpLtI32UBr => cmp_br!(i, i.c, (ri!(i.a) as u32) < (ri!(i.b) as u32)),
            Opcode::CmpNzI32Br => cmp_br!(i, i.b, ri!(i.a) != 0),
            Opcode::CmpEqI64Br => cmp_br!(i, i.c, rl!(i.a) == rl!(i.b)),
            Opcode::CmpNeI64Br => cmp_br!(i, i.c, rl!(i.a) != rl!(i.b)),
            Opcode::CmpLtI64SBr => cmp_br!(i, i.c, rl!(i.a) < rl!(i.b)),
            Opcode::CondBreak => {
                // Debug breaks are not trapped without a debugger attached.
                jump!(i.x);
            }
            Opcode::BrTable => {
                let idx = ri!(i.a);
                let n = func.aux[i.y as usize] as i64;
                jump!(if (idx as i64) >= 0 && (idx as i64) < n {
                    func.aux[i.y as usize + 1 + idx as usize]
                } else {
                    i.x
                });
            }
            Opcode::Call
            | Opcode::CallYieldable
            | Opcode::CallVariadic
            | Opcode::CallVariadicYieldable => {
                let callee = i.x;
                let variadic = matches!(i.op, Opcode::CallVariadic | Opcode::CallVariadicYieldable);
                let yieldable =
                    matches!(i.op, Opcode::CallYieldable | Opcode::CallVariadicYieldable);
                // Aux record: [sizes]? [args] [target]? [results].
                let rec = i.y as usize;
                let mut p = rec;
                let sizes: &[u32] = if variadic {
                    let n = func.aux[p] as usize;
                    let s = &func.aux[p + 1..p + 1 + n];
                    p += 1 + n;
                    s
                } else {
                    &[]
                };
                let nargs = func.aux[p] as usize;
                let args_at = p + 1;
                p += 1 + nargs;
                let next_pc = if yieldable {
                    let t = func.aux[p];
                    p += 1;
                    t
                } else {
                    // SAFETY: `ip` is inside `func.code`.
                    unsafe { ip.offset_from(code) as u32 }
                };
                let results_at = p as u32;
                let args = &func.aux[args_at..args_at + nargs];
                // Where does the call go?
                let (target_module, target) = if callee & IMPORT_ORDINAL_BIT != 0 {
                    let imp = (callee & !IMPORT_ORDINAL_BIT) as usize;
                    match &state!().imports[imp] {
                        ImportTarget::Unresolved => {
                            let name = state!().import_names[imp].clone();
                            tri!(Err(Trap::new(
                                StatusCode::NotFound,
                                format!("optional import `{name}` was not resolved and cannot be called")
                            )))
                        }
                        ImportTarget::Bytecode { module, ordinal } => (*module, Err(*ordinal)),
                        ImportTarget::Host { module, index } => (*module, Ok(*index)),
                    }
                } else {
                    (cur, Err(callee))
                };
                let caller_base = {
                    let f = st.frames.last_mut().expect("frame");
                    f.pc = next_pc;
                    f.ret = results_at;
                    (f.i32_base as usize, f.ref_base as usize)
                };
                match target {
                    Err(ordinal) => {
                        // A bytecode function (this module or another).
                        let callee_fn =
                            bytecode(modules, target_module).funcs[ordinal as usize].clone();
                        tri!(push_frame(st, target_module, callee_fn, max_depth));
                        let f = st.frames.last().expect("frame");
                        let callee_base = (f.i32_base as usize, f.ref_base as usize);
                        let kinds =
                            &bytecode(modules, target_module).signatures[ordinal as usize].args;
                        marshal_args(st, caller_base, callee_base, args, kinds);
                        reload!();
                    }
                    Ok(index) => {
                        let imp = (callee & !IMPORT_ORDINAL_BIT) as usize;
                        let sig = &bytecode(modules, cur).import_sigs[imp];
                        let values = if variadic {
                            let sizes16: Vec<u16> = sizes.iter().map(|&s| s as u16).collect();
                            let kinds = expand_variadic(sig, &sizes16).unwrap_or_default();
                            let flat = read_values(st, caller_base, args, &kinds);
                            insert_span_counts(sig, &sizes16, flat)
                        } else {
                            let kinds = sig.args.clone();
                            read_values(st, caller_base, args, &kinds)
                        };
                        let result_kinds = bytecode(modules, cur).import_sigs[imp].results.clone();
                        let outcome = match &mut modules[target_module as usize] {
                            Registered::Host(h) => h.state.call(index as usize, &values),
                            Registered::Bytecode(_) => {
                                Err(Trap::new(StatusCode::Internal, "bad import link"))
                            }
                        };
                        match tri!(outcome) {
                            HostOutcome::Done(vals) => {
                                let dst = aux_list(&func.aux, results_at, 0);
                                tri!(write_host_results(
                                    st,
                                    caller_base.0,
                                    caller_base.1,
                                    dst,
                                    &result_kinds,
                                    vals
                                ));
                                reload!();
                            }
                            HostOutcome::Deferred => {
                                if !yieldable {
                                    tri!(Err(Trap::new(
                                        StatusCode::FailedPrecondition,
                                        "host function yielded from a non-yieldable call (use vm.call.yieldable)"
                                    )))
                                }
                                st.suspended = Some(Suspended::HostCall {
                                    module: target_module,
                                    index,
                                    import_module: cur,
                                    import: imp as u32,
                                    results: results_at,
                                });
                                return Ok(CallState::Yielded);
                            }
                        }
                    }
                }
            }
            Opcode::Return => {
                let src = aux_list(&func.aux, i.x, 0);
                let ordinal = func.ordinal;
                if st.frames.len() == 1 {
                    // Back to the embedder.
                    let kinds = std::mem::take(&mut st.entry_results);
                    let f = st.frames.last().expect("frame");
                    let base = (f.i32_base as usize, f.ref_base as usize);
                    let values = read_values(st, base, src, &kinds);
                    pop_frame(st);
                    return Ok(CallState::Done(values));
                }
                let n = st.frames.len();
                let callee_base = (
                    st.frames[n - 1].i32_base as usize,
                    st.frames[n - 1].ref_base as usize,
                );
                let caller = &st.frames[n - 2];
                let caller_base = (caller.i32_base as usize, caller.ref_base as usize);
                let caller_func = caller.func.clone();
                let dst = aux_list(&caller_func.aux, caller.ret, 0);
                let kinds = &bytecode(modules, cur).signatures[ordinal as usize].results;
                marshal_results(st, callee_base, caller_base, src, dst, kinds);
                pop_frame(st);
                reload!();
            }
            Opcode::Fail => {
                let code = ri!(i.a) as u32;
                if code != 0 {
                    let msg = func.strings[i.x as usize].to_string();
                    tri!(Err(Trap::new(StatusCode::from_u32(code), msg)))
                }
            }
            Opcode::ImportResolved => {
                let imp = (i.x & !IMPORT_ORDINAL_BIT) as usize;
                let ok = !matches!(state!().imports[imp], ImportTarget::Unresolved);
                wi!(i.a, ok as i32);
            }
            Opcode::Yield => {
                jump!(i.x);
                save_pc!();
                st.suspended = Some(Suspended::Yield);
                return Ok(CallState::Yielded);
            }
            Opcode::Trace | Opcode::Print => {
                for &r in aux_list(&func.aux, i.y, 0) {
                    let r = r as u16;
                    if r & 0x8000 != 0 && r & REF_MOVE_BIT != 0 {
                        wref!(r, Ref::Null);
                    }
                }
            }
            // ---- buffers ------------------------------------------------------------------------
            Opcode::BufferLoadI8U => {
                let v = tri!(buffer!(i.a, "source_buffer").load::<1>(rl!(i.b) as u64));
                wi!(i.c, v[0] as i32);
            }
            Opcode::BufferLoadI8S => {
                let v = tri!(buffer!(i.a, "source_buffer").load::<1>(rl!(i.b) as u64));
                wi!(i.c, v[0] as i8 as i32);
            }
            Opcode::BufferLoadI16U => {
                let v = tri!(buffer!(i.a, "source_buffer").load::<2>(rl!(i.b) as u64));
                wi!(i.c, u16::from_le_bytes(v) as i32);
            }
            Opcode::BufferLoadI16S => {
                let v = tri!(buffer!(i.a, "source_buffer").load::<2>(rl!(i.b) as u64));
                wi!(i.c, i16::from_le_bytes(v) as i32);
            }
            Opcode::BufferLoadI32 | Opcode::BufferLoadF32 => {
                let v = tri!(buffer!(i.a, "source_buffer").load::<4>(rl!(i.b) as u64));
                wi!(i.c, u32::from_le_bytes(v));
            }
            Opcode::BufferLoadI64 | Opcode::BufferLoadF64 => {
                let v = tri!(buffer!(i.a, "source_buffer").load::<8>(rl!(i.b) as u64));
                wl!(i.c, i64::from_le_bytes(v));
            }
            Opcode::BufferStoreI8 => {
                let v = [ri!(i.c) as u8];
                tri!(buffer!(i.a, "target_buffer").store::<1>(rl!(i.b) as u64, v));
            }
            Opcode::BufferStoreI16 => {
                let v = (ri!(i.c) as u16).to_le_bytes();
                tri!(buffer!(i.a, "target_buffer").store::<2>(rl!(i.b) as u64, v));
            }
            Opcode::BufferStoreI32 | Opcode::BufferStoreF32 => {
                let v = (ri!(i.c) as u32).to_le_bytes();
                tri!(buffer!(i.a, "target_buffer").store::<4>(rl!(i.b) as u64, v));
            }
            Opcode::BufferStoreI64 | Opcode::BufferStoreF64 => {
                let v = rl!(i.c).to_le_bytes();
                tri!(buffer!(i.a, "target_buffer").store::<8>(rl!(i.b) as u64, v));
            }
            Opcode::BufferFillI8 => {
                let v = [ri!(i.d) as u8];
                tri!(buffer!(i.a, "buffer").fill::<1>(rl!(i.b) as u64, rl!(i.c) as u64, v));
            }
            Opcode::BufferFillI16 => {
                let v = (ri!(i.d) as u16).to_le_bytes();
                tri!(buffer!(i.a, "buffer").fill::<2>(rl!(i.b) as u64, rl!(i.c) as u64, v));
            }
            Opcode::BufferFillI32 | Opcode::BufferFillF32 => {
                let v = (ri!(i.d) as u32).to_le_bytes();
                tri!(buffer!(i.a, "buffer").fill::<4>(rl!(i.b) as u64, rl!(i.c) as u64, v));
            }
            Opcode::BufferFillI64 | Opcode::BufferFillF64 => {
                let v = rl!(i.d).to_le_bytes();
                tri!(buffer!(i.a, "buffer").fill::<8>(rl!(i.b) as u64, rl!(i.c) as u64, v));
            }
            Opcode::BufferAlloc => {
                let len = rl!(i.a);
                let align = ri!(i.b);
                tri!(check_alignment(align));
                let len = tri!(usize::try_from(len).map_err(|_| Trap::new(
                    StatusCode::InvalidArgument,
                    format!("buffer length {len} is negative")
                )));
                let b = tri!(Buffer::new(len));
                wref!(i.c, Ref::Buffer(Rc::new(b)));
            }
            Opcode::BufferClone => {
                let align = ri!(i.d);
                tri!(check_alignment(align));
                let b = tri!(buffer!(i.a, "source").clone_range(rl!(i.b) as u64, rl!(i.c) as u64));
                wref!(i.x, Ref::Buffer(Rc::new(b)));
            }
            Opcode::BufferLength => {
                let n = buffer!(i.a, "buffer").len();
                wl!(i.b, n as i64);
            }
            Opcode::BufferCopy => {
                let src = buffer!(i.a, "source_buffer").clone();
                let dst = buffer!(i.c, "target_buffer").clone();
                tri!(Buffer::copy(
                    &src,
                    rl!(i.b) as u64,
                    &dst,
                    rl!(i.d) as u64,
                    rl!(i.x) as u64
                ));
            }
            Opcode::BufferCompare => {
                let l = buffer!(i.a, "lhs_buffer").clone();
                let r = buffer!(i.c, "rhs_buffer").clone();
                let eq = tri!(Buffer::compare(
                    &l,
                    rl!(i.b) as u64,
                    &r,
                    rl!(i.d) as u64,
                    rl!(i.x) as u64
                ));
                wi!(i.y, eq as i32);
            }
            Opcode::BufferHash => {
                let h = tri!(buffer!(i.a, "source_buffer").hash(rl!(i.b) as u64, rl!(i.c) as u64));
                wl!(i.d, h);
            }
            // ---- refs ---------------------------------------------------------------------------
            Opcode::CastAnyRef => {
                let ty = type_of!(i.x);
                tri!(ty.check_ref(rref!(i.a)));
                let v = take_ref!(i.a);
                wref!(i.b, v);
            }
            Opcode::DiscardRefs => {
                for &r in aux_list(&func.aux, i.x, 0) {
                    wref!(r, Ref::Null);
                }
            }
            Opcode::AssignRef => {
                let v = take_ref!(i.a);
                wref!(i.b, v);
            }
            // ---- f32 ----------------------------------------------------------------------------
            Opcode::AddF32 => bin_f32!(i, |x, y| x + y),
            Opcode::SubF32 => bin_f32!(i, |x, y| x - y),
            Opcode::MulF32 => bin_f32!(i, |x, y| x * y),
            Opcode::DivF32 => bin_f32!(i, |x, y| x / y),
            Opcode::RemF32 => bin_f32!(i, |x, y| libm::remainderf(x, y)),
            Opcode::FmaF32 => wf!(i.d, rf!(i.a) * rf!(i.b) + rf!(i.c)),
            Opcode::AbsF32 => un_f32!(i, |x| x.abs()),
            Opcode::NegF32 => un_f32!(i, |x| -x),
            Opcode::CeilF32 => un_f32!(i, |x| x.ceil()),
            Opcode::FloorF32 => un_f32!(i, |x| x.floor()),
            Opcode::RoundF32 => un_f32!(i, |x| x.round()),
            Opcode::RoundF32Even => un_f32!(i, |x| x.round_ties_even()),
            Opcode::MinF32 => bin_f32!(i, |x, y| if y < x { y } else { x }),
            Opcode::MaxF32 => bin_f32!(i, |x, y| if x < y { y } else { x }),
            Opcode::AtanF32 => un_f32!(i, |x| x.atan()),
            Opcode::Atan2F32 => bin_f32!(i, |x, y| x.atan2(y)),
            Opcode::CosF32 => un_f32!(i, |x| x.cos()),
            Opcode::SinF32 => un_f32!(i, |x| x.sin()),
            Opcode::ExpF32 => un_f32!(i, |x| x.exp()),
            Opcode::Exp2F32 => un_f32!(i, |x| x.exp2()),
            Opcode::Expm1F32 => un_f32!(i, |x| x.exp_m1()),
            Opcode::LogF32 => un_f32!(i, |x| x.ln()),
            Opcode::Log10F32 => un_f32!(i, |x| x.log10()),
            Opcode::Log1pF32 => un_f32!(i, |x| x.ln_1p()),
            Opcode::Log2F32 => un_f32!(i, |x| x.log2()),
            Opcode::PowF32 => bin_f32!(i, |x, y| x.powf(y)),
            Opcode::RsqrtF32 => un_f32!(i, |x| 1.0 / x.sqrt()),
            Opcode::SqrtF32 => un_f32!(i, |x| x.sqrt()),
            Opcode::TanhF32 => un_f32!(i, |x| x.tanh()),
            Opcode::ErfF32 => un_f32!(i, |x| libm::erff(x)),
            Opcode::CastSI32F32 => wf!(i.b, ri!(i.a) as f32),
            Opcode::CastUI32F32 => wf!(i.b, ri!(i.a) as u32 as f32),
            Opcode::CastSI64F32 => wf!(i.b, rl!(i.a) as f32),
            Opcode::CastUI64F32 => wf!(i.b, rl!(i.a) as u64 as f32),
            Opcode::CastF32SI32 => wi!(i.b, cast_f32_si32(rf!(i.a))),
            Opcode::CastF32UI32 => wi!(i.b, lround(rf!(i.a) as f64) as u32),
            Opcode::CastF32SI64 => wl!(i.b, lround(rf!(i.a) as f64)),
            Opcode::CastF32UI64 => wl!(i.b, f_to_u64(rf!(i.a).round() as f64) as i64),
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
            // ---- f64 ----------------------------------------------------------------------------
            Opcode::AddF64 => bin_f64!(i, |x, y| x + y),
            Opcode::SubF64 => bin_f64!(i, |x, y| x - y),
            Opcode::MulF64 => bin_f64!(i, |x, y| x * y),
            Opcode::DivF64 => bin_f64!(i, |x, y| x / y),
            Opcode::RemF64 => bin_f64!(i, |x, y| libm::remainder(x, y)),
            Opcode::FmaF64 => wd!(i.d, rd!(i.a) * rd!(i.b) + rd!(i.c)),
            Opcode::AbsF64 => un_f64!(i, |x| x.abs()),
            Opcode::NegF64 => un_f64!(i, |x| -x),
            Opcode::CeilF64 => un_f64!(i, |x| x.ceil()),
            Opcode::FloorF64 => un_f64!(i, |x| x.floor()),
            Opcode::RoundF64 => un_f64!(i, |x| x.round()),
            Opcode::RoundF64Even => un_f64!(i, |x| x.round_ties_even()),
            Opcode::MinF64 => bin_f64!(i, |x, y| if y < x { y } else { x }),
            Opcode::MaxF64 => bin_f64!(i, |x, y| if x < y { y } else { x }),
            Opcode::AtanF64 => un_f64!(i, |x| x.atan()),
            Opcode::Atan2F64 => bin_f64!(i, |x, y| x.atan2(y)),
            Opcode::CosF64 => un_f64!(i, |x| x.cos()),
            Opcode::SinF64 => un_f64!(i, |x| x.sin()),
            Opcode::ExpF64 => un_f64!(i, |x| x.exp()),
            Opcode::Exp2F64 => un_f64!(i, |x| x.exp2()),
            Opcode::Expm1F64 => un_f64!(i, |x| x.exp_m1()),
            Opcode::LogF64 => un_f64!(i, |x| x.ln()),
            Opcode::Log10F64 => un_f64!(i, |x| x.log10()),
            Opcode::Log1pF64 => un_f64!(i, |x| x.ln_1p()),
            Opcode::Log2F64 => un_f64!(i, |x| x.log2()),
            Opcode::PowF64 => bin_f64!(i, |x, y| x.powf(y)),
            Opcode::RsqrtF64 => un_f64!(i, |x| 1.0 / x.sqrt()),
            Opcode::SqrtF64 => un_f64!(i, |x| x.sqrt()),
            Opcode::TanhF64 => un_f64!(i, |x| x.tanh()),
            Opcode::ErfF64 => un_f64!(i, |x| libm::erf(x)),
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
            // ---- the guard after the last instruction ---------------------------------------------
            Opcode::Block => {
                tri!(Err(Trap::new(
                    StatusCode::FailedPrecondition,
                    "execution ran past the end of the function (missing terminator)"
                )))
            }
        }
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

/// Inserts each span's element count before its elements, the layout host
/// functions receive for variadic arguments.
fn insert_span_counts(sig: &Signature, sizes: &[u16], flat: Vec<Value>) -> Vec<Value> {
    let Some(cc) = &sig.cconv else { return flat };
    let mut out = Vec::with_capacity(flat.len() + sizes.len());
    let mut it = flat.into_iter();
    let args = cc
        .args
        .iter()
        .filter(|k| **k != crate::modules::ValueKind::Void);
    for (k, &n) in args.zip(sizes) {
        match k {
            crate::modules::ValueKind::Span(inner) => {
                out.push(Value::I32(n as i32));
                let per = {
                    let mut v = Vec::new();
                    flatten(inner, &mut v);
                    v.len()
                };
                for _ in 0..(per * n as usize) {
                    if let Some(v) = it.next() {
                        out.push(v);
                    }
                }
            }
            _ => {
                if let Some(v) = it.next() {
                    out.push(v);
                }
            }
        }
    }
    out
}
