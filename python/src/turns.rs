//! Calls on one loaded module take turns: a call takes the module's turn
//! before it runs and gives it back after. A call that finds the module
//! busy (another thread's call runs) waits for its turn without holding the
//! GIL, and the wait can be given up (Ctrl-C on the main thread), which a
//! wait on the context's mutex could not. A call (or lookup) made on the
//! thread that holds the turn, from inside its own call (a trace callback),
//! would wait for itself: [`Turns::held_here`] tells it so. Waits across
//! threads that would never end (a call on module A whose Python host
//! function calls module B, while another thread's call on B calls A from
//! its host function) are found the same way: a wait that closes a cycle of
//! threads each waiting for a module the next one's call holds is given up
//! ([`GaveUp::WouldWaitForever`]), so that the other calls go on.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
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

/// The threads waiting for a turn now, each with the `holder` of the
/// module it waits for (few: one entry per waiting thread).
static WAITING: Mutex<Vec<(u64, Arc<AtomicU64>)>> = Mutex::new(Vec::new());

/// Why [`Turns::take`] gave up.
#[derive(Debug, PartialEq, Eq)]
pub enum GaveUp {
    /// Its `give_up` said so (Ctrl-C).
    Asked,
    /// The thread holding the turn waits, through other threads perhaps,
    /// for a module this thread's call holds: the wait would never end.
    WouldWaitForever,
}

/// This thread's entry in [`WAITING`] while it waits; removed when dropped.
struct Waiting {
    thread: u64,
}

impl Waiting {
    fn register(thread: u64, holder: Arc<AtomicU64>) -> Waiting {
        let mut waiting = WAITING.lock().unwrap_or_else(|e| e.into_inner());
        waiting.push((thread, holder));
        Waiting { thread }
    }

    /// Whether this wait closes a cycle of waits: the holder of the turn
    /// waited for waits for a turn whose holder waits ... for one this
    /// thread holds. Then this thread's entry is taken out at once (under
    /// the lock the other waiters look with), so that of the threads in
    /// the cycle this one alone gives up. A cycle found is one for good:
    /// this thread, blocked here, cannot give back what it holds, so the
    /// thread waiting for it stays waiting, and so on round the cycle.
    fn closes_a_cycle(&self) -> bool {
        let mut waiting = WAITING.lock().unwrap_or_else(|e| e.into_inner());
        let cell = |thread: u64| {
            waiting
                .iter()
                .find(|(t, _)| *t == thread)
                .map(|(_, holder)| holder.load(SeqCst))
        };
        let Some(mut holder) = cell(self.thread) else {
            return false;
        };
        // Each step goes to another waiting thread: at most all of them.
        for _ in 0..=waiting.len() {
            if holder == self.thread {
                waiting.retain(|(t, _)| *t != self.thread);
                return true;
            }
            match cell(holder) {
                Some(next) if holder != 0 => holder = next,
                _ => return false,
            }
        }
        false
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waiting = WAITING.lock().unwrap_or_else(|e| e.into_inner());
        waiting.retain(|(t, _)| *t != self.thread);
    }
}

/// Whose turn it is: `busy` while a call holds it (on thread `holder`,
/// which [`WAITING`] shares with the waits for it); waiters sleep on
/// `free`.
#[derive(Default)]
pub struct Turns {
    busy: AtomicBool,
    holder: Arc<AtomicU64>,
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

    /// Waits for the turn; gives up when `give_up` says so first (asked
    /// every [`GIVE_UP_POLL`] while waiting) or when the wait would never
    /// end (the thread holding the turn waits for one this thread holds).
    pub fn take(&self, give_up: impl Fn() -> bool) -> Result<Turn<'_>, GaveUp> {
        self.waiters.fetch_add(1, SeqCst);
        let waiting = Waiting::register(this_thread(), self.holder.clone());
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let turn = loop {
            if let Some(turn) = self.try_take() {
                break Ok(turn);
            }
            if give_up() {
                break Err(GaveUp::Asked);
            }
            if waiting.closes_a_cycle() {
                break Err(GaveUp::WouldWaitForever);
            }
            guard = self
                .free
                .wait_timeout(guard, GIVE_UP_POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(guard);
        drop(waiting);
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
