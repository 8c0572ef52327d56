//! A context's stop word: the one word the fast loops read at loop back
//! edges and calls (and compiled code's callers each time it hands back
//! its slice of fuel) to learn that an invocation must stop (an interrupt
//! from another thread, or the deadline passed). Reading it
//! costs a load and a branch that is never taken; the work of deciding is
//! done elsewhere: [`crate::debug::InterruptHandle`] sets
//! [`INTERRUPT`], and the deadline watchdog (one thread for the process,
//! started with the first deadline) sets [`DEADLINE`] when a context's
//! deadline comes, so no loop reads the clock.
//!
//! Where no thread can be started, a deadline sets [`DEADLINE`] at once and
//! for good ([`StopWord::clock_polled`]): every check then reads the clock,
//! slower but just as exact.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Instant;

use crate::trap::{StatusCode, Trap};

/// [`StopWord`] bit: the embedder asked the invocation to stop.
pub(crate) const INTERRUPT: u32 = 1;
/// [`StopWord`] bit: the context's deadline may have passed.
pub(crate) const DEADLINE: u32 = 2;
/// [`StopWord`] bit: a profile's sampling thread asks for a sample of the
/// call stack (`crate::profile`); taken by the loop that answers it.
pub(crate) const SAMPLE: u32 = 4;

/// The stop word of a context (shared with the contexts that run on its
/// behalf, see `ContextResources::run_within`).
#[derive(Debug, Default)]
pub(crate) struct StopWord {
    bits: AtomicU32,
    /// Which arming of the deadline is current: the watchdog sets
    /// [`DEADLINE`] only for it.
    generation: AtomicU64,
    /// No watchdog: [`DEADLINE`] stays set while a deadline is, and every
    /// check reads the clock.
    clock_polled: AtomicBool,
}

impl StopWord {
    /// A word with nothing requested.
    pub fn new() -> Arc<StopWord> {
        Arc::new(StopWord::default())
    }

    /// The word compiled code with `Checks::Polled` loads (nonzero:
    /// something is requested).
    pub fn bits(&self) -> &AtomicU32 {
        &self.bits
    }

    /// Whether anything is requested (the fast loops' check).
    #[inline(always)]
    pub fn raised(&self) -> bool {
        self.bits.load(Ordering::Relaxed) != 0
    }

    /// Requests an interrupt.
    pub fn interrupt(&self) {
        self.bits.fetch_or(INTERRUPT, Ordering::Relaxed);
    }

    /// Whether an interrupt is pending.
    pub fn interrupt_pending(&self) -> bool {
        self.bits.load(Ordering::Relaxed) & INTERRUPT != 0
    }

    /// Asks the running loop for a sample of its call stack.
    pub fn request_sample(&self) {
        self.bits.fetch_or(SAMPLE, Ordering::Relaxed);
    }

    /// Takes a pending sample request: true when there was one.
    pub fn take_sample(&self) -> bool {
        self.bits.load(Ordering::Relaxed) & SAMPLE != 0
            && self.bits.fetch_and(!SAMPLE, Ordering::Relaxed) & SAMPLE != 0
    }

    /// Takes a pending interrupt: true when there was one.
    pub(crate) fn take_interrupt(&self) -> bool {
        self.bits.fetch_and(!INTERRUPT, Ordering::Relaxed) & INTERRUPT != 0
    }

    /// Makes `deadline` the one [`DEADLINE`] follows: raised now when it
    /// has passed, by the watchdog when it comes, never for `None`.
    pub fn arm(self: &Arc<StopWord>, deadline: Option<Instant>) {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        self.bits.fetch_and(!DEADLINE, Ordering::Relaxed);
        self.clock_polled.store(false, Ordering::Relaxed);
        let Some(at) = deadline else {
            if let Some(w) = watchdog() {
                w.forget(self);
            }
            return;
        };
        if at <= Instant::now() {
            self.bits.fetch_or(DEADLINE, Ordering::Relaxed);
            return;
        }
        match watchdog() {
            Some(w) => w.watch(self, at, generation),
            None => {
                self.clock_polled.store(true, Ordering::Relaxed);
                self.bits.fetch_or(DEADLINE, Ordering::Relaxed);
            }
        }
    }

    /// What the word asks for, decided: CANCELLED for an interrupt (taken),
    /// DEADLINE_EXCEEDED when `deadline` has passed, else `Ok` (a
    /// [`DEADLINE`] left from an earlier deadline is cleared). A
    /// [`SAMPLE`] request is left for the loop to take.
    #[cold]
    #[inline(never)]
    pub fn check(&self, deadline: Option<Instant>) -> Result<(), Trap> {
        let bits = self.bits.load(Ordering::Relaxed);
        if bits & INTERRUPT != 0 && self.take_interrupt() {
            return Err(Trap::new(
                StatusCode::Cancelled,
                "interrupted by the embedder",
            ));
        }
        if bits & DEADLINE != 0 {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(Trap::new(StatusCode::DeadlineExceeded, "deadline exceeded"));
            }
            if !self.clock_polled.load(Ordering::Relaxed) {
                self.bits.fetch_and(!DEADLINE, Ordering::Relaxed);
            }
        }
        Ok(())
    }
}

/// The process's deadline thread: sleeps until the earliest armed
/// deadline, then raises [`DEADLINE`] in its word.
struct Watchdog {
    armed: Mutex<Vec<Armed>>,
    wake: Condvar,
}

struct Armed {
    at: Instant,
    generation: u64,
    word: Weak<StopWord>,
}

/// The watchdog, started on first use; `None` when no thread could be
/// started.
fn watchdog() -> Option<&'static Watchdog> {
    static WATCHDOG: OnceLock<Option<&'static Watchdog>> = OnceLock::new();
    *WATCHDOG.get_or_init(|| {
        let w: &'static Watchdog = Box::leak(Box::new(Watchdog {
            armed: Mutex::new(Vec::new()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("irvm-deadline".into())
            .stack_size(64 * 1024)
            .spawn(move || w.serve())
            .ok()
            .map(|_| w)
    })
}

impl Watchdog {
    fn watch(&self, word: &Arc<StopWord>, at: Instant, generation: u64) {
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        let me = Arc::downgrade(word);
        armed.retain(|a| !a.word.ptr_eq(&me) && a.word.strong_count() > 0);
        armed.push(Armed {
            at,
            generation,
            word: me,
        });
        self.wake.notify_one();
    }

    fn forget(&self, word: &Arc<StopWord>) {
        let me = Arc::downgrade(word);
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        armed.retain(|a| !a.word.ptr_eq(&me));
    }

    fn serve(&self) {
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            armed.retain(|a| {
                if a.at > now {
                    return true;
                }
                if let Some(word) = a.word.upgrade() {
                    if word.generation.load(Ordering::Relaxed) == a.generation {
                        word.bits.fetch_or(DEADLINE, Ordering::Relaxed);
                    }
                }
                false
            });
            armed = match armed.iter().map(|a| a.at).min() {
                None => self.wake.wait(armed).unwrap_or_else(|e| e.into_inner()),
                Some(next) => {
                    let wait = next.saturating_duration_since(Instant::now());
                    self.wake
                        .wait_timeout(armed, wait)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_watchdog_raises_the_deadline_bit_when_it_comes() {
        let w = StopWord::new();
        let at = Instant::now() + Duration::from_millis(30);
        w.arm(Some(at));
        assert!(!w.raised() || w.clock_polled.load(Ordering::Relaxed));
        let start = Instant::now();
        while !w.raised() {
            assert!(start.elapsed() < Duration::from_secs(10), "never raised");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(Instant::now() >= at);
        let e = w.check(Some(at)).unwrap_err();
        assert_eq!(e.code, StatusCode::DeadlineExceeded);
    }

    #[test]
    fn rearming_drops_the_old_deadline() {
        let w = StopWord::new();
        w.arm(Some(Instant::now()));
        assert!(w.raised(), "a passed deadline raises at once");
        let later = Instant::now() + Duration::from_secs(3600);
        w.arm(Some(later));
        assert!(w.check(Some(later)).is_ok());
        w.arm(None);
        assert!(!w.raised());
        assert!(w.check(None).is_ok());
    }

    #[test]
    fn interrupts_are_taken_once() {
        let w = StopWord::new();
        w.interrupt();
        assert!(w.interrupt_pending());
        assert_eq!(w.check(None).unwrap_err().code, StatusCode::Cancelled);
        assert!(!w.raised());
        assert!(w.check(None).is_ok());
    }
}
