//! The per-instruction hook of the hooked copy of the dispatch loop
//! (observers, and fuel counted one instruction at a time when a fast path
//! finds too little left for a whole run), and the limits every loop
//! shares: fuel, deadline, interrupt and pause.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::context::{Context, Registered};
use crate::debug::{Control, ExecView, Observer};
use crate::program::Inst;
use crate::stop::StopWord;
use crate::trap::{StatusCode, Trap};

/// Limits and observers of a context's invocations.
#[derive(Default)]
pub(crate) struct Hooks {
    /// Instructions left to execute (`None`: unlimited).
    pub fuel: Option<u64>,
    /// Wall-clock limit of an invocation, as an instant.
    pub deadline: Option<Instant>,
    /// The word the loops poll at back edges and calls (`crate::stop`):
    /// the context's own, or while it runs on another's behalf, that one's.
    pub stop: Arc<StopWord>,
    /// Whether an [`crate::debug::InterruptHandle`] was handed out, so the
    /// word must be polled even without a deadline.
    pub interruptible: bool,
    pub observer: Option<Box<dyn Observer>>,
    /// Set to ask for a pause ([`crate::Context::set_pause_flag`]), polled
    /// with the stop word.
    pub pause: Option<Arc<AtomicBool>>,
    /// The next instruction is the one a pause stopped at: do not ask the
    /// observer about it again.
    pub resume_quietly: bool,
    /// The profile recording this context ([`crate::Context::set_profile`]).
    pub profile: Option<super::profiling::ProfileHook>,
}

/// Which loop a context's invocations need.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LoopKind {
    /// No limit, observer or pause flag: nothing is checked.
    Plain,
    /// The stop word and pause flag are polled at back edges and calls.
    Polled,
    /// Polled, and fuel is charged per straight run (`program::runs`).
    Fueled,
    /// An observer sees every instruction (the hooked loop).
    Hooked,
}

impl Hooks {
    /// The loop the current settings need.
    pub fn loop_kind(&self) -> LoopKind {
        if self.observer.is_some() {
            LoopKind::Hooked
        } else if self.fuel.is_some() {
            LoopKind::Fueled
        } else if self.deadline.is_some()
            || self.interruptible
            || self.pause.is_some()
            || self.profile.as_ref().is_some_and(|p| p.sampled)
        {
            LoopKind::Polled
        } else {
            LoopKind::Plain
        }
    }

    /// Takes `n` units of fuel if that many are left (always, without a
    /// fuel budget).
    #[inline(always)]
    pub fn take_fuel(&mut self, n: u64) -> bool {
        match &mut self.fuel {
            Some(f) if *f >= n => {
                *f -= n;
                true
            }
            Some(_) => false,
            None => true,
        }
    }

    /// Gives back `n` units taken for instructions that did not run.
    #[cold]
    pub fn return_fuel(&mut self, n: u64) {
        if let Some(f) = &mut self.fuel {
            *f = f.saturating_add(n);
        }
    }

    /// What a raised stop word asks for (see [`StopWord::check`]).
    #[cold]
    #[inline(never)]
    pub fn check_stop(&self) -> Result<(), Trap> {
        self.stop.check(self.deadline)
    }
}

/// Bytes of bulk work (buffer fill, copy, compare, hash, clone and
/// allocation; list growth) that cost one unit of fuel on top of the
/// instruction's own.
pub(crate) const BULK_BYTES_PER_FUEL: u64 = 64;

/// Bulk work of at least this many bytes reads the clock before it starts.
pub(crate) const BULK_CLOCK_BYTES: u64 = 1 << 20;

impl Hooks {
    /// Charges `bytes` of bulk work before it is done: fuel in proportion
    /// (RESOURCE_EXHAUSTED, and the work is not done, when it is not
    /// there), and a deadline check now and again at the next instruction
    /// when the work is large. Nothing to do without hooks.
    #[inline]
    /// Whether [`Hooks::charge_bulk`] can refuse anything (fuel or a
    /// deadline is set): work whose size costs a look to learn asks first.
    pub(crate) fn charges_bulk(&self) -> bool {
        self.fuel.is_some() || self.deadline.is_some()
    }

    pub(crate) fn charge_bulk(&mut self, bytes: u64) -> Result<(), Trap> {
        if bytes < BULK_BYTES_PER_FUEL || (self.fuel.is_none() && self.deadline.is_none()) {
            return Ok(());
        }
        self.charge_bulk_slow(bytes)
    }

    #[cold]
    #[inline(never)]
    fn charge_bulk_slow(&mut self, bytes: u64) -> Result<(), Trap> {
        if let Some(fuel) = self.fuel.as_mut() {
            let cost = bytes / BULK_BYTES_PER_FUEL;
            if *fuel < cost {
                *fuel = 0;
                return Err(Trap::new(
                    StatusCode::ResourceExhausted,
                    format!(
                        "fuel exhausted: the invocation ran out of its instruction budget \
                         (a bulk operation of {bytes} bytes costs {cost})"
                    ),
                ));
            }
            *fuel -= cost;
        }
        if bytes >= BULK_CLOCK_BYTES {
            if let Some(deadline) = self.deadline {
                if Instant::now() >= deadline {
                    return Err(Trap::new(StatusCode::DeadlineExceeded, "deadline exceeded"));
                }
            }
        }
        Ok(())
    }

    /// Checks fuel (one unit), interrupt and deadline before a deferred
    /// host call is resumed: a host function that yields again and again
    /// is bounded like a loop.
    pub(crate) fn charge_resume(&mut self) -> Result<(), Trap> {
        if let Some(fuel) = self.fuel.as_mut() {
            if *fuel == 0 {
                return Err(Trap::new(
                    StatusCode::ResourceExhausted,
                    "fuel exhausted: the invocation ran out of its instruction budget \
                     (resuming a yielding host call costs 1)",
                ));
            }
            *fuel -= 1;
        }
        if self.stop.raised() {
            self.check_stop()?;
        }
        Ok(())
    }
}

/// Runs the hooks for the instruction at `at` of the top frame: `Ok(true)`
/// asks to pause before it.
#[inline(never)]
pub(super) fn before(ctx: &mut Context, at: *const Inst) -> Result<bool, Trap> {
    let hooks = &mut ctx.hooks;
    // SAFETY: `at` is an instruction of the top frame's code (the loop's
    // `ip`).
    let free = crate::program::runs::is_stub(unsafe { &*at });
    if let (Some(fuel), false) = (hooks.fuel.as_mut(), free) {
        if *fuel == 0 {
            return Err(Trap::new(
                StatusCode::ResourceExhausted,
                "fuel exhausted: the invocation ran out of its instruction budget",
            ));
        }
        *fuel -= 1;
    }
    if hooks.stop.raised() {
        hooks.check_stop()?;
        if hooks.stop.take_sample() {
            super::profiling::take_sample(ctx, Some(at));
        }
    }
    let hooks = &mut ctx.hooks;
    if let Some(p) = &hooks.pause {
        if p.load(Ordering::Relaxed) {
            p.store(false, Ordering::Relaxed);
            // The instruction does not run now: its unit is taken again
            // when it does.
            if !free {
                hooks.return_fuel(1);
            }
            return Ok(true);
        }
    }
    if hooks.observer.is_none() {
        return Ok(false);
    }
    if std::mem::take(&mut hooks.resume_quietly) {
        return Ok(false);
    }
    let Some(mut observer) = hooks.observer.take() else {
        return Ok(false);
    };
    let control = {
        let st = &ctx.stack;
        let Some(top) = st.frames.last() else {
            ctx.hooks.observer = Some(observer);
            return Ok(false);
        };
        // SAFETY: `at` points into the top frame's code (the loop's `ip`).
        let pc = unsafe { at.offset_from(top.func.code.as_ptr()) } as usize;
        if pc >= top.func.guard as usize {
            // A remap stub (or the guard): part of the branch just shown.
            ctx.hooks.observer = Some(observer);
            return Ok(false);
        }
        let offset = top.func.offsets.get(pc).copied().unwrap_or(0);
        let (ib, rb) = (top.i32_base as usize, top.ref_base as usize);
        let i32s = st
            .i32s
            .get(ib..ib + top.func.i32_count as usize)
            .unwrap_or(&[]);
        let refs = st
            .refs
            .get(rb..rb + top.func.ref_count as usize)
            .unwrap_or(&[]);
        match ctx.modules.get(top.module as usize) {
            Some(Registered::Bytecode(b)) => {
                let view = ExecView {
                    module: &b.module,
                    module_name: &b.name,
                    module_index: top.module as usize,
                    function: top.func.ordinal,
                    offset,
                    depth: st.frames.len(),
                    i32s,
                    refs,
                };
                observer.before_instruction(&view)
            }
            _ => Control::Continue,
        }
    };
    ctx.hooks.observer = Some(observer);
    if control == Control::Pause && !free {
        ctx.hooks.return_fuel(1);
    }
    Ok(control == Control::Pause)
}
