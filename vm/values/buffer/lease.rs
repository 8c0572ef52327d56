//! Thread leases on mutable buffers: what makes sharing a buffer between
//! threads sound.
//!
//! A buffer's bytes are read and written without locks by the interpreter
//! (one bounds check and one plain access) and lent to host code as slices
//! (`Buffer::with_bytes`). Two threads doing either at once on one buffer
//! would be a data race, and buffers are `Send + Sync` (refs move with
//! their context and can be handed to other contexts). So every access to
//! a mutable buffer happens under a *lease*: one word per buffer (shared by
//! all views of the same bytes) naming the thread allowed to touch it, plus
//! that thread's closure borrows.
//!
//! - The interpreter takes a lease the first time a run touches a buffer
//!   and keeps it until the outermost run on this thread returns to the
//!   embedder (`RunGuard`): after the first access, a load or store is one
//!   compare of the word against this thread's token.
//! - A closure borrow takes the lease for its own duration when no one
//!   holds it, and waits while another thread holds it (as a mutex would).
//! - An interpreter that meets a buffer another thread holds traps with
//!   `FAILED_PRECONDITION` instead of waiting, so two running contexts can
//!   never deadlock on each other's buffers.
//!
//! - A *region* of native work (the hal's workgroups on its worker pool)
//!   holds the leases of the buffers it was lent under [`NATIVE_REGION`], a holder
//!   that is no thread, for as long as one of its workgroups may still run,
//!   which can be after the call that started it returned (a stopped call
//!   leaves its running workgroups to end in the background). Whoever meets
//!   a buffer a region holds waits for it, inside a run too: a region waits
//!   for nothing, so the wait cannot deadlock.
//!
//! Read-only buffers (rodata) are never written, so they need no lease.
//!
//! Word layout: bits 63..24 the holder's thread token (0: free), bits
//! 23..0 the holder's closure borrows (0: none, `MUT`: one mutable, else
//! the number of shared ones).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::values::Buffer;

/// Bits of the borrow field.
pub(crate) const BORROW_BITS: u32 = 24;
/// Mask of the borrow field.
pub(crate) const BORROW_MASK: u64 = (1 << BORROW_BITS) - 1;
/// The borrow field of a mutable closure borrow.
pub(crate) const MUT: u64 = BORROW_MASK;

/// Tokens handed out so far; 40 bits of them outlast any process.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// The holder of a buffer lent to a region of native work (no thread's
/// token: those stay below it).
pub(crate) const NATIVE_REGION: u64 = ((1 << 40) - 1) << BORROW_BITS;

thread_local! {
    /// This thread's token shifted into place (0 until first asked).
    static TOKEN: Cell<u64> = const { Cell::new(0) };
    /// How many interpreter runs are active on this thread (nested runs:
    /// host functions that call back into a context).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Buffers the interpreter leased during the current outermost run.
    static LEASED: RefCell<Vec<Weak<Buffer>>> = const { RefCell::new(Vec::new()) };
    /// `LEASED.len()` at which dead entries are next swept out.
    static SWEEP_AT: Cell<usize> = const { Cell::new(64) };
}

/// This thread's token in the word's holder position (never 0).
#[inline(always)]
pub(crate) fn token() -> u64 {
    let t = TOKEN.with(Cell::get);
    if t != 0 {
        t
    } else {
        new_token()
    }
}

#[cold]
#[inline(never)]
fn new_token() -> u64 {
    let n = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    // 2^40 threads cannot be created in a process's life; refuse rather
    // than reuse a token.
    assert!(n < (1 << 40) - 1, "thread tokens exhausted");
    let t = n << BORROW_BITS;
    TOKEN.with(|c| c.set(t));
    t
}

/// Whether an interpreter run is active on this thread.
pub(crate) fn in_run() -> bool {
    DEPTH.with(Cell::get) > 0
}

/// Marks an interpreter run on this thread; when the outermost one ends
/// (also by unwinding), gives back every lease the runs took.
pub(crate) struct RunGuard(());

impl RunGuard {
    pub(crate) fn enter() -> RunGuard {
        DEPTH.with(|d| d.set(d.get() + 1));
        RunGuard(())
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        let depth = DEPTH.with(|d| {
            let v = d.get() - 1;
            d.set(v);
            v
        });
        if depth == 0 {
            release_all();
        }
    }
}

fn release_all() {
    LEASED.with(|l| {
        let mut l = l.borrow_mut();
        if l.is_empty() {
            return;
        }
        let me = token();
        // Draining keeps the allocation for the next run.
        for weak in l.drain(..) {
            if let Some(buffer) = weak.upgrade() {
                release(buffer.lease_word(), me);
            }
        }
    });
    SWEEP_AT.with(|s| s.set(64));
}

/// Gives `word` back if `me` holds it with no closure borrow left.
fn release(word: &AtomicU64, me: u64) {
    let _ = word.compare_exchange(me, 0, Ordering::Release, Ordering::Relaxed);
}

/// Takes the lease on `buffer` for the current interpreter run (the
/// caller saw that this thread does not hold it, and a run is active); the
/// lease is given back when the outermost run ends. Returns false when
/// another thread holds it.
#[cold]
#[inline(never)]
pub(crate) fn acquire_for_run(buffer: &Arc<Buffer>) -> bool {
    let me = token();
    let word = buffer.lease_word();
    let mut rounds = 0u32;
    loop {
        match word.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => {
                remember(buffer);
                return true;
            }
            Err(cur) if cur & !BORROW_MASK == NATIVE_REGION => {
                rounds += 1;
                wait_round(rounds);
            }
            Err(cur) => return cur & !BORROW_MASK == me,
        }
    }
}

/// One round of waiting for a lease held elsewhere: spinning, then
/// yielding, then sleeping a millisecond at a time (a region's workgroup
/// may run for seconds).
fn wait_round(rounds: u32) {
    if rounds < 64 {
        std::hint::spin_loop();
    } else if rounds < 256 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn remember(buffer: &Arc<Buffer>) {
    LEASED.with(|l| {
        let mut l = l.borrow_mut();
        // The root, which owns the lease word: a view touched by the run
        // may die before the run ends while the root lives on.
        l.push(Arc::downgrade(&buffer.lease_root()));
        // Buffers that died during the run need no release; drop their
        // entries whenever the list has doubled, so a run that allocates
        // and touches buffers in a loop keeps the list bounded.
        let at = SWEEP_AT.with(Cell::get);
        if l.len() >= at {
            l.retain(|w| w.strong_count() > 0);
            SWEEP_AT.with(|s| s.set((l.len() * 2).max(64)));
        }
    });
}

/// Why a closure borrow could not start.
pub(crate) enum Conflict {
    /// This thread's own borrows conflict (a mutable borrow inside another
    /// borrow, or the reverse).
    ThisThread,
    /// Another thread holds the lease and this thread is inside a run, which
    /// must not wait (two runs waiting on each other's buffers would
    /// deadlock).
    OtherThread,
    /// A region of native work holds the lease (until its last workgroup
    /// ends).
    NativeRegion,
}

/// Holds the lease for a closure borrow: `shared` (several may coexist on
/// the holding thread) or mutable. Outside a run it waits while another
/// thread holds the lease, as a mutex would.
pub(crate) fn borrow(word: &AtomicU64, shared: bool) -> Result<BorrowGuard<'_>, Conflict> {
    let me = token();
    let mut spins = 0u32;
    loop {
        let cur = word.load(Ordering::Relaxed);
        let holder = cur & !BORROW_MASK;
        let borrows = cur & BORROW_MASK;
        if holder != 0 && holder != me {
            if in_run() && holder != NATIVE_REGION {
                return Err(Conflict::OtherThread);
            }
            spins += 1;
            wait_round(spins);
            continue;
        }
        let next = if shared {
            if borrows == MUT || borrows + 1 == MUT {
                return Err(Conflict::ThisThread);
            }
            me | (borrows + 1)
        } else {
            if borrows != 0 {
                return Err(Conflict::ThisThread);
            }
            me | MUT
        };
        if word
            .compare_exchange_weak(cur, next, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return Ok(BorrowGuard {
                word,
                shared,
                took_lease: holder == 0,
            });
        }
    }
}

/// Takes `word` for a region of native work (as [`NATIVE_REGION`], mutably
/// borrowed) from no one or from this thread's own run (`Ok` with the
/// holder it had: 0 or this thread's token). Waits while another thread
/// holds it outside a run; while a region holds it, or another thread and
/// a run is active here, returns the conflict for the caller to wait or
/// fail as it chooses ([`Conflict::NativeRegion`], [`Conflict::OtherThread`]).
pub(crate) fn take_for_native_region(word: &AtomicU64) -> Result<u64, Conflict> {
    let me = token();
    let mut spins = 0u32;
    loop {
        let cur = word.load(Ordering::Relaxed);
        let holder = cur & !BORROW_MASK;
        if holder == NATIVE_REGION {
            return Err(Conflict::NativeRegion);
        }
        if holder != 0 && holder != me {
            if in_run() {
                return Err(Conflict::OtherThread);
            }
            spins += 1;
            wait_round(spins);
            continue;
        }
        if cur & BORROW_MASK != 0 {
            return Err(Conflict::ThisThread);
        }
        if word
            .compare_exchange_weak(
                cur,
                NATIVE_REGION | MUT,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            return Ok(holder);
        }
    }
}

/// Gives `word`, taken by [`take_for_native_region`], to `holder` (0: free; the
/// token it was taken from, while that thread's run still goes on).
pub(crate) fn give_back_from_native_region(word: &AtomicU64, holder: u64) {
    // The region is the only holder: nothing else writes the word now
    // (everyone else only compares and swaps from 0 or their own token).
    word.store(holder, Ordering::Release);
}

/// Ends a closure borrow (also on unwind); the borrow that took the lease
/// gives it back when it ends.
pub(crate) struct BorrowGuard<'a> {
    word: &'a AtomicU64,
    shared: bool,
    took_lease: bool,
}

impl Drop for BorrowGuard<'_> {
    fn drop(&mut self) {
        let mut cur = self.word.load(Ordering::Relaxed);
        loop {
            let holder = cur & !BORROW_MASK;
            let borrows = cur & BORROW_MASK;
            let left = if self.shared { borrows - 1 } else { 0 };
            let next = if left == 0 && self.took_lease {
                0
            } else {
                holder | left
            };
            match self
                .word
                .compare_exchange_weak(cur, next, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }
}
