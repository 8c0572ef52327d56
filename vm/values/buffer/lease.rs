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
//! ## Region leases: one lease for a dispatch's workers
//!
//! The workgroups of one dispatch write disjoint parts of the same output
//! buffers, and the hal runs them on several threads at once, each in an
//! interpreter of its own (`RegionLease`). A thread lease admits one
//! thread; a *region lease* admits a set of threads for the duration of
//! one region:
//!
//! - The lender (`Buffer::lend_to_workers`) takes a mutable closure borrow
//!   on every distinct mutable allocation it lends, as
//!   `Buffer::with_raw_parts` does (so it waits for, or refuses, other
//!   holders exactly as that does), then replaces the word's value with a
//!   fresh *region token*, a token no thread owns. When the lending closure
//!   returns (or unwinds) the words go back to the borrow, and the borrow
//!   ends.
//! - A worker *adopts* the region token while it runs the region's work
//!   (`RegionLease::adopt`): its thread's token is the region's, inside a
//!   run of its own (`DEPTH` 1) with its own list of leased buffers, so the
//!   interpreter's fast paths (one compare against the token) pass for the
//!   lent buffers on every adopting thread. Buffers the worker's own runs
//!   take meanwhile (its executable context's globals, its temporaries) are
//!   taken with the region token and given back when the adoption ends;
//!   then the thread gets its own token, runs and leases back.
//! - An adopting thread forms no slice of a region-held buffer: closure
//!   borrows of a word that holds the region token are refused
//!   (`Conflict::AdoptedRegion`: a word holding a region token never has a borrow
//!   field), and the buffer operations that would use one (bulk fill,
//!   copy, compare, hash, clone; `Buffer::with_raw_parts`) go through raw
//!   pointers instead (`Buffer::region_raw`).
//!
//! What this relies on: threads sharing a region token make plain
//! (non-atomic) loads and stores through raw pointers to the same
//! allocation at once. That is sound as long as no two of them access the
//! same byte at once with one of them writing, which is the contract of a
//! dispatch's workgroups in IREE (each writes its own tile; a kernel whose
//! workgroups overlap races in IREE's runtime too). It is the same contract
//! `Buffer::with_raw_parts` leaves to the native code it lends pointers
//! to, which is why `RegionLease::adopt` is `unsafe`: its caller promises
//! it for the code the adopting threads run. No `&[u8]` or `&mut [u8]` of
//! a lent buffer exists on any adopting thread, so the aliasing rules of
//! Rust references are never in play, only the data-race rule.
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
    /// The region token this thread adopted (`RegionLease::adopt`; 0:
    /// none), which is then also its `TOKEN`.
    static REGION: Cell<u64> = const { Cell::new(0) };
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
    let t = fresh_token();
    TOKEN.with(|c| c.set(t));
    t
}

/// A token no thread or region has had, in the holder position.
fn fresh_token() -> u64 {
    let n = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    // 2^40 threads and regions cannot be made in a process's life (one a
    // nanosecond would take 13 days); refuse rather than reuse a token
    // (the last one is `NATIVE_REGION`'s).
    assert!(n < (1 << 40) - 1, "thread tokens exhausted");
    n << BORROW_BITS
}

/// The region token this thread adopted, when it did (0: none).
#[inline]
pub(crate) fn adopted_region() -> u64 {
    REGION.with(Cell::get)
}

/// Whether this thread adopted a region whose token `word` holds (with no
/// borrow field: a region-held word never has one).
#[inline]
pub(crate) fn held_by_adopted_region(word: &AtomicU64) -> bool {
    let region = adopted_region();
    region != 0 && word.load(Ordering::Relaxed) == region
}

/// A region token lent to worker threads (see the module doc): the words
/// of the lent buffers hold it until the lender's scope ends.
#[derive(Debug)]
pub struct RegionLease {
    token: u64,
}

impl RegionLease {
    /// Runs `f` on this thread as a holder of the region's lease: the
    /// interpreter runs `f` makes on this thread read and write the lent
    /// buffers (and any buffer they lease meanwhile, given back when `f`
    /// returns) as if this thread held their thread lease, at the same time
    /// as the region's other adopting threads. Closure borrows of the lent
    /// buffers are refused inside `f` (FAILED_PRECONDITION, or a panic from
    /// the panicking [`crate::Buffer::with_bytes`]); raw access
    /// ([`crate::Buffer::with_raw_parts`], the interpreter's bulk buffer
    /// operations) works. The thread's own leases and runs are set aside
    /// meanwhile and restored afterwards, also when `f` unwinds.
    ///
    /// # Safety
    /// The code `f` runs on the adopting threads must not access one byte
    /// of a lent buffer from two threads at once where either access is a
    /// write (the contract of a dispatch's workgroups; see the module doc
    /// of `vm/values/buffer/lease.rs`): such a pair is a data race, which
    /// the region lease, unlike a thread lease, does not rule out.
    pub unsafe fn adopt<R>(&self, f: impl FnOnce() -> R) -> R {
        let _adopted = Adoption::begin(self.token);
        f()
    }
}

/// One thread's adoption of a region token; restores the thread's own
/// state on drop.
struct Adoption {
    token: u64,
    region: u64,
    depth: u32,
    leased: Vec<Weak<Buffer>>,
    sweep_at: usize,
}

impl Adoption {
    fn begin(region: u64) -> Adoption {
        let token = token();
        let saved = Adoption {
            token,
            region: REGION.with(|r| r.replace(region)),
            depth: DEPTH.with(|d| d.replace(1)),
            leased: LEASED.with(|l| std::mem::take(&mut *l.borrow_mut())),
            sweep_at: SWEEP_AT.with(|s| s.replace(64)),
        };
        TOKEN.with(|t| t.set(region));
        saved
    }
}

impl Drop for Adoption {
    fn drop(&mut self) {
        // What the adopted runs leased goes back with the region's token
        // still this thread's.
        release_all();
        TOKEN.with(|t| t.set(self.token));
        REGION.with(|r| r.set(self.region));
        DEPTH.with(|d| d.set(self.depth));
        LEASED.with(|l| *l.borrow_mut() = std::mem::take(&mut self.leased));
        SWEEP_AT.with(|s| s.set(self.sweep_at));
    }
}

/// The words of a lent region, turned from this thread's mutable borrows
/// into the region's token; turned back on drop (before the borrows end).
pub(crate) struct Lent<'a> {
    words: Vec<(&'a AtomicU64, u64)>,
    /// Kept until the words are turned back.
    _borrows: Vec<BorrowGuard<'a>>,
}

impl<'a> Lent<'a> {
    /// Turns each of `words` (distinct, mutable buffers' words) into a
    /// fresh region's: first a mutable closure borrow of each (waiting or
    /// refusing as [`borrow`] does), then the region token in its place.
    pub(crate) fn lend(words: &[&'a AtomicU64]) -> Result<(Lent<'a>, RegionLease), Conflict> {
        let mut borrows = Vec::with_capacity(words.len());
        for word in words {
            borrows.push(borrow(word, false)?);
        }
        let region = fresh_token();
        let mut lent = Lent {
            words: Vec::with_capacity(words.len()),
            _borrows: borrows,
        };
        for word in words {
            // This thread's mutable borrow holds the word, so nothing else
            // changes it: a plain swap, remembered to be swapped back.
            let was = word.swap(region, Ordering::AcqRel);
            lent.words.push((word, was));
        }
        Ok((lent, RegionLease { token: region }))
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        for (word, was) in &self.words {
            // Release: the adopting threads' writes, ordered before the
            // join, are ordered before whoever takes the word next.
            word.store(*was, Ordering::Release);
        }
    }
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
    /// The buffer is lent to the region this thread adopted, whose threads
    /// access it through raw pointers only (see the module doc).
    AdoptedRegion,
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
        if holder == me && adopted_region() == me {
            return Err(Conflict::AdoptedRegion);
        }
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
