//! The worker threads of a `local-task` device: `n - 1` threads the
//! device owns plus the thread that submits the work, which takes part
//! too. A job ([`Workers::run`]) is one function every participant calls
//! with its index (the caller is 0); the job itself hands out the work
//! (a region's workgroups from one counter, `native/region.rs`).
//!
//! The threads stay hot between jobs: after one, each waits on the job
//! epoch, spinning and then yielding the processor ([`pause`]: at least
//! [`SPIN`] and 32 yields), before parking on a condition variable, so a
//! job that follows soon after (the next dispatch region of a command
//! buffer) starts without a wake-up. IREE's executor parks its workers at
//! once by default (`--task_worker_spin_us=0`) and wakes them per task.
//!
//! The join waits only for the threads that entered the job: the caller
//! closes the job when its own share is done, a thread that arrives
//! after that skips it, so a parked thread slow to wake never holds the
//! caller up. The threads end, and are joined, when the [`Workers`] drop.
//!
//! A *detached* job ([`Workers::start_detached`]) is run by threads only:
//! the `n - 1` threads and one more (index 0, started on the first such
//! job, parked otherwise, taking no other job), so that the submitter can
//! return before the job ends (a region whose call was stopped leaves its
//! running workgroups to end in the background). Each thread that takes
//! the job up holds it ([`DetachedJob`], in an `Arc`) while it runs its
//! share, outside the pool's count of threads inside the current job: the
//! next submission waits only until the detached job says it has nothing
//! left to hand out ([`DetachedJob::finished`]), and then runs on the
//! threads not still busy with it (a stopped region's last workgroups do
//! not hold up another context's regions, only the threads they run on).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle thread spins on the job epoch before it parks.
pub const SPIN: Duration = Duration::from_micros(100);

/// A job: called once per participant with its index.
type Job = dyn Fn(usize) + Sync;

/// A job the pool owns, run by its threads only ([`Workers::start_detached`]).
pub trait DetachedJob: Send + Sync {
    /// Participant `index`'s share (0 to [`Workers::count`] - 1).
    fn run(&self, index: usize);
    /// Whether the job has nothing left to hand out: a thread that enters
    /// it now does nothing, so it may be closed.
    fn finished(&self) -> bool;
}

/// The job the threads run now.
enum JobRef {
    None,
    /// [`Workers::run`]'s, valid while its epoch is open or threads are
    /// inside it.
    Borrowed(*const Job),
    /// [`Workers::start_detached`]'s, held until the next job replaces it.
    Owned(Arc<dyn DetachedJob>),
}

/// How often a submitter waiting for a detached job asks whether to give
/// up.
const GIVE_UP_POLL: Duration = Duration::from_millis(2);

/// `state`'s layout: bits 0-31 the threads inside the current job,
/// bit 32 set once the job is closed, bit 33 set for a detached job,
/// bits 34-63 the job's epoch.
const ACTIVE_MASK: u64 = 0xFFFF_FFFF;
const CLOSED: u64 = 1 << 32;
const DETACHED: u64 = 1 << 33;
const EPOCH_SHIFT: u32 = 34;

fn epoch_of(state: u64) -> u64 {
    state >> EPOCH_SHIFT
}

/// What the caller and the threads share.
struct Shared {
    /// Epoch, closed flag and count of threads inside the job.
    state: AtomicU64,
    /// The current job, valid while its epoch is open or threads are
    /// inside it.
    job: UnsafeCell<JobRef>,
    /// Threads parked (or about to park) on `wake`.
    sleepers: AtomicUsize,
    /// Set when the workers drop: threads leave their loop.
    shutdown: AtomicBool,
    /// Set when a job panicked on a thread.
    panicked: AtomicBool,
    /// Threads running a detached job (of any epoch).
    detached_inside: AtomicUsize,
    /// Guards parking on `wake` and `done`.
    lock: Mutex<()>,
    /// Signalled when a new job (or the shutdown) is published.
    wake: Condvar,
    /// Signalled when the last thread leaves a closed job.
    done: Condvar,
}

// SAFETY: `job` is written only by a submitter (`Workers::run`,
// `Workers::start_detached`; one at a time, `Workers::submit` serializes
// them) while no thread is inside a job, before it publishes the epoch
// with a release store, and read by threads only after they entered that
// epoch with an acquire CAS; the next submitter waits until every thread
// that entered has left before writing it again. A detached job is
// `Send + Sync`. Everything else is atomics and std's synchronization
// types.
unsafe impl Sync for Shared {}
// SAFETY: as above; the raw pointer is only dereferenced under that
// protocol.
unsafe impl Send for Shared {}

/// A device's worker threads (see the module doc).
pub struct Workers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    /// The thread that takes part in detached jobs only (index 0), started
    /// with the first.
    extra: Mutex<Option<JoinHandle<()>>>,
    /// One submission at a time.
    submit: Mutex<()>,
    count: usize,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("count", &self.count)
            .finish()
    }
}

impl Workers {
    /// `count` participants (at least 1): `count - 1` threads named
    /// `irvm-hal-worker-K`, started now, and the caller of each job.
    pub fn start(count: usize) -> std::io::Result<Workers> {
        let count = count.max(1);
        let shared = Arc::new(Shared {
            state: AtomicU64::new(CLOSED),
            job: UnsafeCell::new(JobRef::None),
            sleepers: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            detached_inside: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            done: Condvar::new(),
        });
        let mut workers = Workers {
            shared: shared.clone(),
            threads: Vec::with_capacity(count - 1),
            extra: Mutex::new(None),
            submit: Mutex::new(()),
            count,
        };
        for index in 1..count {
            let shared = shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("irvm-hal-worker-{index}"))
                .spawn(move || worker_loop(&shared, index, false))?;
            // On an error, `workers` drops here and joins those started.
            workers.threads.push(thread);
        }
        Ok(workers)
    }

    /// Participants in each job: the threads and the caller.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Runs `job` on every participant, the caller as index 0, and
    /// returns when every thread that took part has returned from it. A
    /// thread that comes to the job after the caller's own call returned
    /// does not run it. A panic in `job` on a thread panics here.
    pub fn run(&self, job: &(dyn Fn(usize) + Sync)) {
        if self.threads.is_empty() {
            job(0);
            return;
        }
        let _one = self.submit.lock().unwrap_or_else(|e| e.into_inner());
        let shared = &*self.shared;
        drain(shared, &mut || false);
        // SAFETY: the lifetime is erased only for the time the job is
        // published: `Close` below waits, even while unwinding, until no
        // thread is inside it, and closed jobs are never entered.
        let erased: *const Job =
            unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const Job>(job) };
        publish(shared, JobRef::Borrowed(erased));
        let close = Close(shared);
        job(0);
        drop(close);
        if shared.panicked.swap(false, Ordering::Relaxed) {
            panic!("a local-task worker thread panicked while running a job");
        }
    }

    /// Whether every thread that runs detached jobs (the `count - 1`
    /// threads and the one started for them) is inside one now, as when
    /// stopped calls left that many workgroups running: a detached job
    /// started now would wait for one of them to end.
    pub fn detached_threads_busy(&self) -> bool {
        self.shared.detached_inside.load(Ordering::SeqCst) >= self.count
    }

    /// [`Workers::detached_threads_busy`], asked again while the calling
    /// thread yields, up to 64 times: a thread whose detached job has just
    /// ended (its caller already told) leaves it a moment later, and only
    /// threads that stay inside should send a call to run inline.
    pub fn detached_threads_stay_busy(&self) -> bool {
        for _ in 0..64 {
            if !self.detached_threads_busy() {
                return false;
            }
            std::thread::yield_now();
        }
        self.detached_threads_busy()
    }

    /// Hands `job` to the threads (indices 0 to [`Workers::count`] - 1:
    /// the `count - 1` threads and one more, started now on first use) and
    /// returns at once; the job runs until it returns on every thread that
    /// entered it, after the caller has gone if need be. First waits until
    /// the job before (a detached one may still run) is done, asking
    /// `give_up` every few milliseconds: `Ok(false)` when it said so (the
    /// job was not handed out). Err when the extra thread cannot start.
    pub fn start_detached(
        &self,
        job: Arc<dyn DetachedJob>,
        give_up: &mut dyn FnMut() -> bool,
    ) -> std::io::Result<bool> {
        self.start_extra()?;
        let _one = loop {
            match self.submit.try_lock() {
                Ok(g) => break g,
                Err(std::sync::TryLockError::Poisoned(e)) => break e.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {
                    if give_up() {
                        return Ok(false);
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        };
        let shared = &*self.shared;
        if !drain(shared, give_up) {
            return Ok(false);
        }
        publish(shared, JobRef::Owned(job));
        Ok(true)
    }

    /// Starts the thread that takes part in detached jobs only, once.
    fn start_extra(&self) -> std::io::Result<()> {
        let mut extra = self.extra.lock().unwrap_or_else(|e| e.into_inner());
        if extra.is_none() {
            let shared = self.shared.clone();
            *extra = Some(
                std::thread::Builder::new()
                    .name("irvm-hal-worker-0".into())
                    .spawn(move || worker_loop(&shared, 0, true))?,
            );
        }
        Ok(())
    }
}

/// Makes `job` the current job under a new epoch and wakes the threads;
/// the submitter holds `submit` and no thread is inside a job.
fn publish(shared: &Shared, job: JobRef) {
    let detached = matches!(job, JobRef::Owned(_));
    // SAFETY: no thread is inside a job (the caller drained the last one
    // and holds `submit`), so nothing reads `job` now; the old one (a
    // detached job's `Arc`) is dropped here.
    unsafe { *shared.job.get() = job };
    let epoch = epoch_of(shared.state.load(Ordering::Relaxed)).wrapping_add(1);
    let mut open = (epoch << EPOCH_SHIFT) & !(CLOSED | DETACHED | ACTIVE_MASK);
    if detached {
        open |= DETACHED;
    }
    shared.state.store(open, Ordering::SeqCst);
    if shared.sleepers.load(Ordering::SeqCst) > 0 {
        let _g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
        shared.wake.notify_all();
    }
}

/// Waits until the current job may be replaced: a detached one finished
/// ([`DetachedJob::finished`]; threads still running it hold it), then
/// closed with no thread inside. Asks
/// `give_up` every [`GIVE_UP_POLL`] while it waits; false when it gave up.
fn drain(shared: &Shared, give_up: &mut dyn FnMut() -> bool) -> bool {
    let state = shared.state.load(Ordering::Acquire);
    if state & CLOSED != 0 && state & ACTIVE_MASK == 0 {
        return true;
    }
    // SAFETY: the caller holds `submit`, so `job` is not written meanwhile;
    // a detached job stays valid until replaced.
    let detached = match unsafe { &*shared.job.get() } {
        JobRef::Owned(job) => Some(job.clone()),
        _ => None,
    };
    if let Some(job) = detached {
        let start = Instant::now();
        let mut spins = 0u32;
        while !job.finished() {
            spins += 1;
            if pause(spins, start) {
                if give_up() {
                    return false;
                }
                std::thread::sleep(GIVE_UP_POLL);
            }
        }
    }
    let state = shared.state.fetch_or(CLOSED, Ordering::AcqRel) | CLOSED;
    if state & ACTIVE_MASK == 0 {
        return true;
    }
    let mut g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
    while shared.state.load(Ordering::Acquire) & ACTIVE_MASK != 0 {
        if give_up() {
            return false;
        }
        g = shared
            .done
            .wait_timeout(g, GIVE_UP_POLL)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    true
}

/// Closes the current job when dropped and waits until no thread is
/// inside it (as a thread waits for a job: [`pause`], then parked).
struct Close<'a>(&'a Shared);

impl Drop for Close<'_> {
    fn drop(&mut self) {
        let shared = self.0;
        let state = shared.state.fetch_or(CLOSED, Ordering::AcqRel) | CLOSED;
        if state & ACTIVE_MASK == 0 {
            return;
        }
        let start = Instant::now();
        let mut spins = 0u32;
        while shared.state.load(Ordering::Acquire) & ACTIVE_MASK != 0 {
            spins += 1;
            if pause(spins, start) {
                let mut g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
                while shared.state.load(Ordering::Acquire) & ACTIVE_MASK != 0 {
                    g = shared.done.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                return;
            }
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        {
            let _g = self.shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.wake.notify_all();
        }
        // Threads still running a detached job (workgroups a stopped call
        // left running) are not waited for: they hold what they use, and
        // end when their share does.
        let busy = self.shared.detached_inside.load(Ordering::SeqCst) != 0
            || self.shared.state.load(Ordering::SeqCst) & ACTIVE_MASK != 0;
        let extra = self
            .extra
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        for thread in self.threads.drain(..).chain(extra) {
            if !busy {
                let _ = thread.join();
            }
        }
    }
}

/// A thread's loop: wait for a new epoch, enter its job if still open
/// (a detached one only, for the thread that takes only those), run it,
/// leave; until shutdown.
fn worker_loop(shared: &Shared, index: usize, detached_only: bool) {
    // Epoch 0 is the state `Workers::start` made, before any job: a
    // thread that starts after the first job was published still enters.
    let mut seen = 0;
    loop {
        let Some(state) = next_job(shared, seen) else {
            return;
        };
        seen = epoch_of(state);
        if (detached_only && state & DETACHED == 0) || !enter(shared, state) {
            continue;
        }
        // SAFETY: entered an open job: the submitter keeps `job` valid and
        // unchanged until this thread leaves (see `Shared`'s Sync).
        let ran = match unsafe { &*shared.job.get() } {
            JobRef::Borrowed(job) => {
                let job = *job;
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    // SAFETY: as above, the job outlives this call.
                    unsafe { (*job)(index) }
                }));
                // Before leaving: the submitter looks once all have left.
                if ran.is_err() {
                    shared.panicked.store(true, Ordering::Relaxed);
                }
                leave(shared);
                Ok(())
            }
            JobRef::Owned(job) => {
                // Held by this thread from here: it leaves the count of
                // threads inside the current job at once.
                let job = job.clone();
                shared.detached_inside.fetch_add(1, Ordering::SeqCst);
                leave(shared);
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.run(index)));
                drop(job);
                shared.detached_inside.fetch_sub(1, Ordering::SeqCst);
                ran
            }
            JobRef::None => {
                leave(shared);
                Ok(())
            }
        };
        if ran.is_err() {
            shared.panicked.store(true, Ordering::Relaxed);
        }
    }
}

/// Counts this thread out of the current job; the last one out of a closed
/// job wakes its submitter.
fn leave(shared: &Shared) {
    let left = shared.state.fetch_sub(1, Ordering::AcqRel) - 1;
    if left & ACTIVE_MASK == 0 && left & CLOSED != 0 {
        let _g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
        shared.done.notify_all();
    }
}

/// Waits for an epoch other than `seen` (spinning, then parked); its
/// state, or `None` on shutdown.
fn next_job(shared: &Shared, seen: u64) -> Option<u64> {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        if shared.shutdown.load(Ordering::Relaxed) {
            return None;
        }
        let state = shared.state.load(Ordering::Acquire);
        if epoch_of(state) != seen {
            return Some(state);
        }
        spins += 1;
        if pause(spins, start) {
            break;
        }
    }
    let mut g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
    shared.sleepers.fetch_add(1, Ordering::SeqCst);
    let state = loop {
        let state = shared.state.load(Ordering::SeqCst);
        if shared.shutdown.load(Ordering::SeqCst) || epoch_of(state) != seen {
            break state;
        }
        g = shared.wake.wait(g).unwrap_or_else(|e| e.into_inner());
    };
    shared.sleepers.fetch_sub(1, Ordering::SeqCst);
    drop(g);
    match shared.shutdown.load(Ordering::SeqCst) {
        true => None,
        false => Some(state),
    }
}

/// One round of waiting that began at `start`: a CPU spin hint for the
/// first [`SPIN_ONLY`] rounds, then a yield of the processor (so that on
/// a machine with more runnable threads than cores the thread waited for
/// can run); `true` when the waiter should park: once [`SPIN`] has passed
/// and it has yielded at least [`YIELDS`] times. On a quiet machine a
/// yield returns at once and the wait is about [`SPIN`]; on a loaded one
/// each yield lets other threads run for a while, so the waiter stays
/// awake as long as the machine is busy rather than parking and being
/// woken late (a parked thread waits for a time slice after its wake-up).
fn pause(round: u32, start: Instant) -> bool {
    if round <= SPIN_ONLY {
        std::hint::spin_loop();
        return false;
    }
    std::thread::yield_now();
    round > SPIN_ONLY + YIELDS && start.elapsed() > SPIN
}

/// Rounds of [`pause`] that only spin before it starts yielding.
const SPIN_ONLY: u32 = 1024;

/// Fewest yields before a waiter parks.
const YIELDS: u32 = 32;

/// Counts this thread into the job `state` names, unless it was closed
/// or replaced meanwhile.
fn enter(shared: &Shared, mut state: u64) -> bool {
    let epoch = epoch_of(state);
    loop {
        if state & CLOSED != 0 || epoch_of(state) != epoch {
            return false;
        }
        match shared.state.compare_exchange_weak(
            state,
            state + 1,
            Ordering::Acquire,
            Ordering::Acquire,
        ) {
            Ok(_) => return true,
            Err(now) => state = now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_participant_can_take_part_and_the_join_sees_their_work() {
        for count in [1, 2, 3, 5] {
            let workers = Workers::start(count).unwrap();
            for round in 0..200u64 {
                let next = AtomicU64::new(0);
                let sum = AtomicU64::new(0);
                workers.run(&|_| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= 1000 {
                        break;
                    }
                    sum.fetch_add(i + round, Ordering::Relaxed);
                });
                assert_eq!(sum.load(Ordering::Relaxed), 999 * 500 + 1000 * round);
            }
        }
    }

    #[test]
    fn parked_threads_wake_for_a_later_job() {
        let workers = Workers::start(3).unwrap();
        let seen = Mutex::new(Vec::new());
        std::thread::sleep(SPIN * 20);
        // Each participant waits (bounded) until all three have come, so
        // the parked threads must wake for this job.
        let arrived = AtomicUsize::new(0);
        workers.run(&|k| {
            arrived.fetch_add(1, Ordering::SeqCst);
            let start = Instant::now();
            while arrived.load(Ordering::SeqCst) < 3 && start.elapsed() < Duration::from_secs(10) {
                std::thread::yield_now();
            }
            seen.lock().unwrap().push(k);
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2]);
    }

    #[test]
    fn dropping_parked_workers_ends_every_thread() {
        let workers = Workers::start(4).unwrap();
        workers.run(&|_| {});
        // Every thread stops spinning and parks (waited for: on a loaded
        // machine a thread may not run for a while).
        let start = Instant::now();
        while workers.shared.sleepers.load(Ordering::SeqCst) < 3
            && start.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(SPIN);
        }
        assert_eq!(workers.shared.sleepers.load(Ordering::SeqCst), 3);
        // Each thread holds the shared state until it returns; `drop`
        // joins them, so none is left when it returns.
        let shared = Arc::downgrade(&workers.shared);
        drop(workers);
        assert!(shared.upgrade().is_none());
    }

    #[test]
    fn a_panic_on_a_thread_reaches_the_caller_and_the_workers_go_on() {
        let workers = Workers::start(2).unwrap();
        let arrived = AtomicUsize::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            workers.run(&|k| {
                arrived.fetch_add(1, Ordering::SeqCst);
                while arrived.load(Ordering::SeqCst) < 2 {
                    std::thread::yield_now();
                }
                assert_eq!(k, 0, "a worker's failure");
            })
        }));
        assert!(r.is_err());
        let ran = AtomicUsize::new(0);
        workers.run(&|_| {
            ran.fetch_add(1, Ordering::SeqCst);
        });
        assert!(ran.load(Ordering::SeqCst) >= 1);
    }

    /// A detached job that records who ran it; participant 0 holds on
    /// until released (a long workgroup).
    struct Holding {
        ran: Mutex<Vec<(usize, std::thread::ThreadId)>>,
        release: AtomicBool,
        finished: AtomicBool,
    }

    impl DetachedJob for Holding {
        fn run(&self, index: usize) {
            self.ran
                .lock()
                .unwrap()
                .push((index, std::thread::current().id()));
            self.finished.store(true, Ordering::SeqCst);
            let start = Instant::now();
            while index == 0
                && !self.release.load(Ordering::SeqCst)
                && start.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        }

        fn finished(&self) -> bool {
            self.finished.load(Ordering::SeqCst)
        }
    }

    fn holding() -> Arc<Holding> {
        Arc::new(Holding {
            ran: Mutex::new(Vec::new()),
            release: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        })
    }

    /// Waits (bounded) until `job` was run by `n` participants.
    fn ran_by(job: &Holding, n: usize) -> Vec<(usize, std::thread::ThreadId)> {
        let start = Instant::now();
        while job.ran.lock().unwrap().len() < n && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(1));
        }
        job.ran.lock().unwrap().clone()
    }

    #[test]
    fn a_detached_job_runs_on_threads_only_and_its_submitter_returns_at_once() {
        for count in [1, 3] {
            let workers = Workers::start(count).unwrap();
            let job = holding();
            assert!(workers.start_detached(job.clone(), &mut || false).unwrap());
            let mut ran = ran_by(&job, count);
            ran.sort_by_key(|r| r.0);
            let indices: Vec<usize> = ran.iter().map(|r| r.0).collect();
            assert_eq!(indices, (0..count).collect::<Vec<_>>());
            assert!(ran.iter().all(|r| r.1 != std::thread::current().id()));
            job.release.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_finished_detached_job_holds_up_only_the_thread_still_in_it() {
        let workers = Workers::start(2).unwrap();
        let job = holding();
        assert!(workers.start_detached(job.clone(), &mut || false).unwrap());
        ran_by(&job, 2);
        // Participant 0 (the extra thread) is still in it; a plain job
        // runs on the caller and the other thread meanwhile.
        let sum = AtomicU64::new(0);
        workers.run(&|k| {
            sum.fetch_add(k as u64 + 1, Ordering::SeqCst);
        });
        assert!(sum.load(Ordering::SeqCst) >= 1);
        assert!(!job.release.load(Ordering::SeqCst));
        // And another detached job: it gives up waiting for nothing.
        let next = holding();
        assert!(workers.start_detached(next.clone(), &mut || false).unwrap());
        next.release.store(true, Ordering::SeqCst);
        job.release.store(true, Ordering::SeqCst);
        assert_eq!(ran_by(&next, 2).len(), 2);
    }

    #[test]
    fn a_submitter_may_give_up_waiting_for_an_unfinished_detached_job() {
        let workers = Workers::start(2).unwrap();
        let job = Arc::new(Holding {
            ran: Mutex::new(Vec::new()),
            release: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        });
        // Never finished while participant 0 holds on.
        struct Unfinished(Arc<Holding>);
        impl DetachedJob for Unfinished {
            fn run(&self, index: usize) {
                self.0.run(index);
            }
            fn finished(&self) -> bool {
                self.0.release.load(Ordering::SeqCst)
            }
        }
        assert!(workers
            .start_detached(Arc::new(Unfinished(job.clone())), &mut || false)
            .unwrap());
        let mut asked = 0;
        let started = workers
            .start_detached(holding(), &mut || {
                asked += 1;
                asked > 3
            })
            .unwrap();
        assert!(!started);
        job.release.store(true, Ordering::SeqCst);
        let next = holding();
        next.release.store(true, Ordering::SeqCst);
        assert!(workers.start_detached(next.clone(), &mut || false).unwrap());
        assert_eq!(ran_by(&next, 2).len(), 2);
    }
}
