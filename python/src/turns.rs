//! Calls on one loaded module take turns: a call takes the module's turn
//! before it runs and gives it back after. A call that finds the module
//! busy (another thread's call runs) waits for its turn without holding the
//! GIL, and the wait can be given up (Ctrl-C on the main thread), which a
//! wait on the context's mutex could not. A call (or lookup) made on the
//! thread that holds the turn, from inside its own call (a trace callback),
//! would wait for itself: [`Turns::held_here`] tells it so.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How often a waiting call asks whether to give up.
const GIVE_UP_POLL: Duration = Duration::from_millis(10);

/// A number for the calling thread, unique in the process (0 is none).
fn this_thread() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, SeqCst);
    }
    ID.with(|id| *id)
}

/// Whose turn it is: `busy` while a call holds it (on thread `holder`);
/// waiters sleep on `free`.
#[derive(Default)]
pub struct Turns {
    busy: AtomicBool,
    holder: AtomicU64,
    waiters: AtomicUsize,
    lock: Mutex<()>,
    free: Condvar,
}

/// A turn held; given back when dropped.
pub struct Turn<'a> {
    turns: &'a Turns,
}

impl Turns {
    /// The turn, when the module is free now (one atomic operation).
    pub fn try_take(&self) -> Option<Turn<'_>> {
        self.busy
            .compare_exchange(false, true, SeqCst, SeqCst)
            .ok()
            .map(|_| {
                self.holder.store(this_thread(), SeqCst);
                Turn { turns: self }
            })
    }

    /// Whether the calling thread holds the turn: a call from inside its
    /// own call, which waiting would never let run.
    pub fn held_here(&self) -> bool {
        self.busy.load(SeqCst) && self.holder.load(SeqCst) == this_thread()
    }

    /// Waits for the turn; `None` when `give_up` says so first (asked
    /// every [`GIVE_UP_POLL`] while waiting).
    pub fn take(&self, give_up: impl Fn() -> bool) -> Option<Turn<'_>> {
        self.waiters.fetch_add(1, SeqCst);
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let turn = loop {
            if let Some(turn) = self.try_take() {
                break Some(turn);
            }
            if give_up() {
                break None;
            }
            guard = self
                .free
                .wait_timeout(guard, GIVE_UP_POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(guard);
        self.waiters.fetch_sub(1, SeqCst);
        turn
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let turns = self.turns;
        turns.holder.store(0, SeqCst);
        turns.busy.store(false, SeqCst);
        // A waiter counted itself before it looked at `busy` under the
        // lock, so either it sees the turn free or it waits and this wakes
        // it (the lock is taken after it started waiting).
        if turns.waiters.load(SeqCst) > 0 {
            let _guard = turns.lock.lock().unwrap_or_else(|e| e.into_inner());
            turns.free.notify_all();
        }
    }
}
