//! [`ContextResources`]: the handle through which a host module's
//! per-context state reaches the resources of the context it is registered
//! in: its memory budget ([`crate::Limits::max_memory_bytes`]), its
//! fuel, deadline and interrupt flag, and its stack, buffer and list
//! limits. A host module that allocates on a program's behalf charges the
//! program's budget; one that runs bytecode in a context of its own (the
//! hal's vmvx executables) runs it on the calling program's fuel,
//! deadline, interrupt, budget and limits with
//! [`ContextResources::run_within`].
//!
//! The fuel lives in the context's interpreter hooks while bytecode runs;
//! around each host call the context lends it here and takes back what is
//! left, so a host function sees and spends the caller's fuel.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::budget::{Charge, MemoryBudget};
use crate::context::Context;
use crate::stop::StopWord;
use crate::trap::Trap;

/// `fuel` value meaning "no fuel budget".
const NO_FUEL: u64 = u64::MAX;

/// A handle on one context's memory budget, fuel, deadline and interrupt
/// flag, for the host modules registered in it. Cheap to clone, `Send +
/// Sync`; it stays valid (and keeps the budget alive) after the context
/// drops. A host module gets it in its state factory
/// ([`crate::NativeModule::with_context_state`],
/// [`crate::HostModule::instantiate_in`]).
///
/// ```
/// use irvm::{Context, TypeRegistry, Limits, NativeModule, StatusCode, Value};
///
/// // A host module whose `grab` holds the bytes it is asked for, charged
/// // to the calling context's memory budget.
/// let pool = NativeModule::with_context_state("pool", 1, |res| (res.clone(), Vec::new()))
///     .func_with_state("grab", "0i_v", |(res, held), args| {
///         let Value::I32(n) = args[0] else { unreachable!() };
///         held.push(res.charge_memory(n as u64, "pool.grab")?);
///         Ok(vec![])
///     })?;
/// let limits = Limits { max_memory_bytes: 1000, ..Limits::default() };
/// let mut ctx = Context::with_limits(&TypeRegistry::new(), limits);
/// ctx.register_host_module(&pool)?;
/// let grab = ctx.function("pool.grab")?;
/// ctx.invoke(&grab, &[Value::I32(600)])?;
/// assert_eq!(ctx.memory_in_use(), 600);
/// let err = ctx.invoke(&grab, &[Value::I32(600)]).unwrap_err();
/// assert_eq!(err.code, StatusCode::ResourceExhausted);
/// assert!(err.message.contains("pool.grab"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ContextResources {
    share: Arc<Share>,
}

#[derive(Debug)]
struct Share {
    memory: Arc<MemoryBudget>,
    /// [`crate::Limits::max_buffer_bytes`] of the context.
    max_buffer_bytes: AtomicU64,
    /// [`crate::Limits::max_stack_depth`] of the context.
    max_stack_depth: AtomicU64,
    /// [`crate::Limits::max_stack_bytes`] of the context.
    max_stack_bytes: AtomicU64,
    /// [`crate::Limits::max_list_elements`] of the context.
    max_list_elements: AtomicU32,
    /// Fuel left while a host call runs ([`NO_FUEL`]: unlimited).
    fuel: AtomicU64,
    deadline: Mutex<Option<Instant>>,
    /// Whether `deadline`, `lent_stop` and `profile` are set (each written
    /// under its lock): the calls that ask on every dispatch find them
    /// unset without taking a lock (two atomic operations each).
    has_deadline: AtomicBool,
    stop_lent: AtomicBool,
    profiled: AtomicBool,
    /// The context's stop word (interrupt, deadline).
    stop: Arc<StopWord>,
    /// Whether the context handed out an interrupt handle.
    interruptible: AtomicBool,
    /// While [`ContextResources::run_within`] runs this context for
    /// another: that one's stop word and deadline, which
    /// [`ContextResources::stop_check`] then gives (so a host module of
    /// this context stops when the caller is interrupted).
    lent_stop: Mutex<Option<StopCheck>>,
    /// The profile recording the context ([`crate::Context::set_profile`]).
    profile: Mutex<Option<Arc<crate::profile::Profile>>>,
    /// While a host call made from bytecode runs under a profile: the
    /// source location of the call.
    call_site: Mutex<Option<Arc<str>>>,
    /// [`BackgroundWork`] held now: work a host module goes on doing for
    /// the context after the call that started it returned.
    background: AtomicUsize,
    /// Guards waiting for `background` to reach 0, on `background_done`.
    background_lock: Mutex<()>,
    background_done: Condvar,
}

/// A context's interrupt flag and deadline, taken by
/// [`ContextResources::stop_check`]; cheap to check from several threads.
#[derive(Clone, Debug)]
pub struct StopCheck {
    stop: Arc<StopWord>,
    deadline: Option<Instant>,
    /// Whether the context handed out an interrupt handle.
    interruptible: bool,
}

impl StopCheck {
    /// CANCELLED when the context was interrupted (taking the interrupt),
    /// DEADLINE_EXCEEDED past the deadline, else `Ok`.
    #[inline]
    pub fn check(&self) -> Result<(), Trap> {
        if self.stop.interrupt_pending() {
            self.stop.check(None)?;
        }
        if let Some(deadline) = self.deadline {
            if Instant::now() >= deadline {
                return Err(Trap::new(
                    crate::trap::StatusCode::DeadlineExceeded,
                    "deadline exceeded",
                ));
            }
        }
        Ok(())
    }

    /// Whether anything can stop the context's calls: it handed out an
    /// interrupt handle ([`crate::Context::interrupt_handle`]) or has a
    /// deadline. Host code that can answer a stop sooner at some cost (the
    /// hal leaves native workgroups to its worker threads and watches for
    /// the stop meanwhile) pays that cost only then.
    #[inline]
    pub fn can_stop(&self) -> bool {
        self.interruptible || self.deadline.is_some()
    }
}

/// Work a host module goes on doing for a context after the call that
/// started it returned ([`ContextResources::begin_background`]): while one
/// is held, the context's next call waits for it to be dropped before it
/// runs anything. Dropped on any thread.
#[derive(Debug)]
pub struct BackgroundWork {
    share: Arc<Share>,
}

impl Drop for BackgroundWork {
    fn drop(&mut self) {
        let share = &*self.share;
        if share.background.fetch_sub(1, Ordering::SeqCst) == 1 {
            let _g = share
                .background_lock
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            share.background_done.notify_all();
        }
    }
}

/// How often a call waiting for background work looks at its stop word.
const BACKGROUND_POLL: Duration = Duration::from_millis(5);

/// Bytes charged to a context's memory budget through
/// [`ContextResources::charge_memory`]; given back when dropped (on any
/// thread).
#[derive(Debug)]
pub struct MemoryCharge {
    _charge: Charge,
}

impl ContextResources {
    pub(crate) fn new(memory: &Arc<MemoryBudget>, stop: &Arc<StopWord>) -> ContextResources {
        ContextResources {
            share: Arc::new(Share {
                memory: memory.clone(),
                max_buffer_bytes: AtomicU64::new(u64::MAX),
                max_stack_depth: AtomicU64::new(u64::MAX),
                max_stack_bytes: AtomicU64::new(u64::MAX),
                max_list_elements: AtomicU32::new(u32::MAX),
                fuel: AtomicU64::new(NO_FUEL),
                deadline: Mutex::new(None),
                stop: stop.clone(),
                interruptible: AtomicBool::new(false),
                lent_stop: Mutex::new(None),
                profile: Mutex::new(None),
                has_deadline: AtomicBool::new(false),
                stop_lent: AtomicBool::new(false),
                profiled: AtomicBool::new(false),
                call_site: Mutex::new(None),
                background: AtomicUsize::new(0),
                background_lock: Mutex::new(()),
                background_done: Condvar::new(),
            }),
        }
    }

    /// Marks work that goes on for the context after the current call
    /// returns (native workgroups that were running when the call was
    /// stopped): until the returned value is dropped, the context's next
    /// call (`invoke`, `begin_call`, `resume`) waits before it runs
    /// anything, as [`ContextResources::wait_for_background`].
    pub fn begin_background(&self) -> BackgroundWork {
        self.share.background.fetch_add(1, Ordering::SeqCst);
        BackgroundWork {
            share: self.share.clone(),
        }
    }

    /// Waits until no [`BackgroundWork`] of the context is held; the
    /// context's interrupt and deadline end the wait (CANCELLED,
    /// DEADLINE_EXCEEDED), looked at every few milliseconds. One atomic
    /// load when there is none.
    #[inline]
    pub fn wait_for_background(&self) -> Result<(), Trap> {
        if self.share.background.load(Ordering::SeqCst) == 0 {
            return Ok(());
        }
        self.wait_for_background_slow()
    }

    #[cold]
    fn wait_for_background_slow(&self) -> Result<(), Trap> {
        let stop = self.stop_check();
        let share = &*self.share;
        let mut g = share
            .background_lock
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        while share.background.load(Ordering::SeqCst) != 0 {
            if let Err(t) = stop.check() {
                return Err(Trap::new(
                    t.code,
                    format!(
                        "{} while waiting for the native workgroups an earlier call left \
                         running",
                        t.message
                    ),
                ));
            }
            g = share
                .background_done
                .wait_timeout(g, BACKGROUND_POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(())
    }

    /// Resources of no context: an unlimited budget, no fuel, deadline or
    /// interrupt (for host states made outside a context).
    pub fn detached() -> ContextResources {
        ContextResources::new(&MemoryBudget::new(u64::MAX), &StopWord::new())
    }

    /// Charges `bytes` for `what` to the context's memory budget; fails
    /// with RESOURCE_EXHAUSTED naming `what` when the budget has not that
    /// much left.
    pub fn charge_memory(&self, bytes: u64, what: &str) -> Result<MemoryCharge, Trap> {
        Ok(MemoryCharge {
            _charge: Charge::new(&self.share.memory, bytes, what)?,
        })
    }

    /// Bytes the context holds now against its memory budget.
    pub fn memory_in_use(&self) -> u64 {
        self.share.memory.used()
    }

    /// The context's largest buffer ([`crate::Limits::max_buffer_bytes`]).
    pub fn max_buffer_bytes(&self) -> u64 {
        self.share.max_buffer_bytes.load(Ordering::Relaxed)
    }

    /// The context's deepest call stack, in frames
    /// ([`crate::Limits::max_stack_depth`]).
    pub fn max_stack_depth(&self) -> usize {
        usize::try_from(self.share.max_stack_depth.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }

    /// The context's largest call stack, in bytes
    /// ([`crate::Limits::max_stack_bytes`]).
    pub fn max_stack_bytes(&self) -> u64 {
        self.share.max_stack_bytes.load(Ordering::Relaxed)
    }

    /// The context's largest list, in elements
    /// ([`crate::Limits::max_list_elements`]).
    pub fn max_list_elements(&self) -> u32 {
        self.share.max_list_elements.load(Ordering::Relaxed)
    }

    /// Records the context's limits that [`ContextResources::run_within`]
    /// applies to another context (`max_memory_bytes` is the budget's).
    pub(crate) fn set_limits(&self, limits: &crate::Limits) {
        let share = &self.share;
        share
            .max_buffer_bytes
            .store(limits.max_buffer_bytes, Ordering::Relaxed);
        share
            .max_stack_depth
            .store(limits.max_stack_depth as u64, Ordering::Relaxed);
        share
            .max_stack_bytes
            .store(limits.max_stack_bytes, Ordering::Relaxed);
        share
            .max_list_elements
            .store(limits.max_list_elements, Ordering::Relaxed);
    }

    /// The caller's fuel left during a host call (`None`: unlimited).
    pub fn fuel(&self) -> Option<u64> {
        match self.share.fuel.load(Ordering::Relaxed) {
            NO_FUEL => None,
            f => Some(f),
        }
    }

    /// Charges bulk work of `bytes` bytes that a host call is about to do
    /// for the caller (a fill or copy of the hal's, say) as the interpreter
    /// charges `vm.buffer.fill`: one unit of fuel per 64 bytes, taken
    /// before the work, which must not be done when this fails
    /// (RESOURCE_EXHAUSTED, the fuel then spent); from 1 MiB the deadline
    /// and interrupt are checked too.
    pub fn charge_bulk(&self, bytes: u64) -> Result<(), Trap> {
        use crate::exec::hooks::{BULK_BYTES_PER_FUEL, BULK_CLOCK_BYTES};
        let cost = bytes / BULK_BYTES_PER_FUEL;
        if cost > 0 {
            let fuel = &self.share.fuel;
            let mut left = fuel.load(Ordering::Relaxed);
            while left != NO_FUEL {
                let next = left.saturating_sub(cost);
                match fuel.compare_exchange_weak(left, next, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) if left < cost => {
                        return Err(Trap::new(
                            crate::StatusCode::ResourceExhausted,
                            format!(
                                "fuel exhausted: the invocation ran out of its instruction \
                                 budget (a bulk operation of {bytes} bytes costs {cost})"
                            ),
                        ))
                    }
                    Ok(_) => break,
                    Err(now) => left = now,
                }
            }
        }
        if bytes >= BULK_CLOCK_BYTES {
            self.check_stop()?;
        }
        Ok(())
    }

    /// The profile recording the context, if any
    /// ([`crate::Context::set_profile`]): a host module records what it
    /// does on the program's behalf in it (the `hal` module records its
    /// dispatches).
    pub fn profile(&self) -> Option<Arc<crate::profile::Profile>> {
        if !self.share.profiled.load(Ordering::Acquire) {
            return None;
        }
        self.share
            .profile
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn set_profile(&self, profile: Option<Arc<crate::profile::Profile>>) {
        replace_flagged(&self.share.profile, &self.share.profiled, profile);
    }

    /// While the context is profiled and a host function called from
    /// bytecode runs: the source location (`file:line:col`) of the call,
    /// when the calling module has debug information.
    pub fn call_site(&self) -> Option<Arc<str>> {
        self.share
            .call_site
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn set_call_site(&self, location: Option<Arc<str>>) {
        *self
            .share
            .call_site
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = location;
    }

    /// The context's deadline, if any.
    pub fn deadline(&self) -> Option<Instant> {
        if !self.share.has_deadline.load(Ordering::Acquire) {
            return None;
        }
        *self
            .share
            .deadline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the caller should stop now: CANCELLED when its context was
    /// interrupted (the interrupt is taken, as the interpreter takes it),
    /// DEADLINE_EXCEEDED past its deadline. For host code that runs long
    /// without bytecode, such as native kernels between workgroups; see
    /// [`ContextResources::stop_check`] for a check made many times.
    pub fn check_stop(&self) -> Result<(), Trap> {
        self.stop_check().check()
    }

    /// A handle on this context's interrupt: what runs on its resources
    /// (its invocations, and the contexts [`ContextResources::run_within`]
    /// runs for it) stops at the next check. For host code that runs one
    /// call on several threads: the first to take an interrupt raises it
    /// again so that the others stop too, and the leftover is cleared once
    /// they are joined ([`crate::InterruptHandle::clear`]).
    pub fn interrupt_handle(&self) -> crate::debug::InterruptHandle {
        crate::debug::InterruptHandle {
            stop: self.share.stop.clone(),
        }
    }

    /// The interrupt flag and deadline as they are now, for host code that
    /// checks them many times (`StopCheck::check` reads no lock). While
    /// another context runs this one ([`ContextResources::run_within`]),
    /// they are that context's.
    pub fn stop_check(&self) -> StopCheck {
        if !self.share.stop_lent.load(Ordering::Acquire) {
            return StopCheck {
                stop: self.share.stop.clone(),
                deadline: self.deadline(),
                interruptible: self.share.interruptible.load(Ordering::Relaxed),
            };
        }
        let lent = self
            .share
            .lent_stop
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(lent) = lent {
            return lent;
        }
        StopCheck {
            stop: self.share.stop.clone(),
            deadline: self.deadline(),
            interruptible: self.share.interruptible.load(Ordering::Relaxed),
        }
    }

    /// Runs `f` on `other` (a context the host module owns) with the
    /// caller's fuel, deadline, interrupt flag and memory budget: the
    /// instructions `other` runs are taken from the caller's fuel, `other`
    /// stops at the caller's deadline and when the caller is interrupted,
    /// and the buffers and lists it allocates meanwhile are charged to the
    /// caller's budget (and held against it for as long as they live).
    /// Within `f`, `other` also runs under the smaller of the two
    /// contexts' [`crate::Limits`] for the largest buffer
    /// (`max_buffer_bytes`), the deepest and largest call stack
    /// (`max_stack_depth`, `max_stack_bytes`: counted on `other`'s own
    /// stack, whose frames are not added to the caller's) and the largest
    /// list (`max_list_elements`). This holds for whatever `f` runs,
    /// including the `__init` of a module `f` registers in `other` (whose
    /// globals are then charged to the caller's budget too).
    /// `other`'s own settings are restored afterwards. (The register
    /// stacks of `other` stay charged to its own budget.)
    ///
    /// ```
    /// use irvm::{Context, TypeRegistry, Limits, Module, NativeModule, StatusCode, Value};
    /// use std::sync::Mutex;
    ///
    /// // A host module that runs bytecode of its own (which allocates a
    /// // buffer) in a context it owns, on the caller's resources.
    /// let inner = Module::from_assembly(
    ///     "vm.module @inner version 0\nvm.type !vm.buffer\nvm.export @alloc\n\
    ///      vm.func @alloc(%i0:1: i64) -> (!vm.buffer) {\n^bb0:\n  %i2 = vm.const.i32 16\n\
    ///        %r0 = vm.buffer.alloc %i0:1, %i2\n  vm.return %r0\n}\n",
    ///     "inner.vmasm",
    /// )?;
    /// let runner = NativeModule::with_context_state("runner", 1, move |res| {
    ///     let mut own = Context::new(&TypeRegistry::new());
    ///     own.register_module(inner.clone()).expect("registers");
    ///     (res.clone(), Mutex::new(own))
    /// })
    /// .func_with_state("alloc", "0I_v", |(res, own), args| {
    ///     let mut own = own.lock().unwrap();
    ///     let f = own.function("inner.alloc").expect("exported");
    ///     res.run_within(&mut own, |own| own.invoke(&f, args))?;
    ///     Ok(vec![])
    /// })?;
    /// let limits = Limits { max_memory_bytes: 1 << 20, ..Limits::default() };
    /// let mut ctx = Context::with_limits(&TypeRegistry::new(), limits);
    /// ctx.register_host_module(&runner)?;
    /// let alloc = ctx.function("runner.alloc")?;
    /// ctx.invoke(&alloc, &[Value::I64(1000)])?;
    /// let e = ctx.invoke(&alloc, &[Value::I64(2 << 20)]).unwrap_err();
    /// assert_eq!(e.code, StatusCode::ResourceExhausted, "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_within<R>(&self, other: &mut Context, f: impl FnOnce(&mut Context) -> R) -> R {
        let saved_fuel = other.hooks.fuel;
        let saved_deadline = other.hooks.deadline;
        let saved_stop = std::mem::replace(&mut other.hooks.stop, self.share.stop.clone());
        let saved_interruptible = other.hooks.interruptible;
        let saved_memory = std::mem::replace(&mut other.memory, self.share.memory.clone());
        let saved_max_buffer = other.limits.max_buffer_bytes;
        other.limits.max_buffer_bytes = saved_max_buffer.min(self.max_buffer_bytes());
        let saved_max_stack_depth = other.limits.max_stack_depth;
        other.limits.max_stack_depth = saved_max_stack_depth.min(self.max_stack_depth());
        let saved_max_stack_bytes = other.limits.max_stack_bytes;
        other.limits.max_stack_bytes = saved_max_stack_bytes.min(self.max_stack_bytes());
        let saved_max_list = other.limits.max_list_elements;
        other.limits.max_list_elements = saved_max_list.min(self.max_list_elements());
        let fuel = self.fuel();
        other.hooks.fuel = fuel;
        other.hooks.deadline = self.deadline();
        other.hooks.interruptible = self.share.interruptible.load(Ordering::Relaxed);
        let saved_lent_stop = other.resources.lend_stop(Some(self.stop_check()));
        // `other` gets its own settings back even when `f` panics.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut *other)));
        if fuel.is_some() {
            let left = other.hooks.fuel.unwrap_or(0);
            self.share.fuel.store(left, Ordering::Relaxed);
        }
        other.hooks.fuel = saved_fuel;
        other.hooks.deadline = saved_deadline;
        other.hooks.stop = saved_stop;
        other.resources.lend_stop(saved_lent_stop);
        other.hooks.interruptible = saved_interruptible;
        other.memory = saved_memory;
        other.limits.max_buffer_bytes = saved_max_buffer;
        other.limits.max_stack_depth = saved_max_stack_depth;
        other.limits.max_stack_bytes = saved_max_stack_bytes;
        other.limits.max_list_elements = saved_max_list;
        match result {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Sets the stop word and deadline [`ContextResources::stop_check`]
    /// gives (`None`: the context's own); returns the previous ones.
    fn lend_stop(&self, lent: Option<StopCheck>) -> Option<StopCheck> {
        replace_flagged(&self.share.lent_stop, &self.share.stop_lent, lent)
    }

    /// Lends the context's fuel to a host call (see the module doc).
    #[inline]
    pub(crate) fn lend_fuel(&self, fuel: Option<u64>) {
        if let Some(f) = fuel {
            self.share.fuel.store(f, Ordering::Relaxed);
        }
    }

    /// Takes back what a host call left of the fuel lent to it.
    #[inline]
    pub(crate) fn reclaim_fuel(&self, fuel: &mut Option<u64>) {
        if let Some(f) = fuel.as_mut() {
            *f = self.share.fuel.swap(NO_FUEL, Ordering::Relaxed);
        }
    }

    pub(crate) fn set_deadline(&self, deadline: Option<Instant>) {
        replace_flagged(&self.share.deadline, &self.share.has_deadline, deadline);
    }

    pub(crate) fn set_interruptible(&self) {
        self.share.interruptible.store(true, Ordering::Relaxed);
    }
}

/// Puts `value` in `slot` and says in `is_set` whether it is `Some`
/// (under the slot's lock, so that a reader that finds the flag set and
/// then takes the lock sees the value); returns the previous value.
fn replace_flagged<T>(slot: &Mutex<Option<T>>, is_set: &AtomicBool, value: Option<T>) -> Option<T> {
    let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
    is_set.store(value.is_some(), Ordering::Release);
    std::mem::replace(&mut *held, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_work_of_a_host_call_is_paid_from_the_fuel_it_was_lent() {
        let r = ContextResources::detached();
        // No fuel lent: free.
        r.charge_bulk(1 << 20).expect("unlimited");
        r.lend_fuel(Some(10));
        r.charge_bulk(63).expect("under 64 bytes is free");
        r.charge_bulk(64 * 4).expect("4 of 10");
        assert_eq!(r.fuel(), Some(6));
        let e = r.charge_bulk(64 * 7).expect_err("7 of 6");
        assert_eq!(e.code, crate::StatusCode::ResourceExhausted);
        assert_eq!(r.fuel(), Some(0));
    }

    #[test]
    fn background_work_holds_up_the_next_call_until_dropped_or_stopped() {
        let mut ctx = crate::Context::new(&crate::TypeRegistry::new());
        let r = ctx.resources().clone();
        assert!(!r.stop_check().can_stop());
        r.wait_for_background().expect("none held");
        let work = r.begin_background();
        let dropper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(work);
        });
        r.wait_for_background().expect("waits for the drop");
        dropper.join().unwrap();
        // A stop ends the wait.
        let handle = ctx.interrupt_handle();
        assert!(r.stop_check().can_stop());
        let _held = r.begin_background();
        handle.interrupt();
        let e = r.wait_for_background().unwrap_err();
        assert_eq!(e.code, crate::StatusCode::Cancelled);
        assert!(e.message.contains("earlier call"), "{e}");
    }
}
