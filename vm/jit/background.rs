//! Compiling off the calling thread: one worker thread per process, started
//! on first use, takes compile jobs in the order they come and leaves each
//! result in the job's [`Pending`], from where the interpreter moves it into
//! the function's slot at its next loop back edge.
//!
//! A job owns what it reads: a copy of the function, the context's memory
//! budget (an `Arc`), and only a weak handle on its `Pending`. A context
//! dropped while its function compiles drops the slot and the `Pending`
//! with it: a job not started yet is skipped, and the result of one that
//! is running is dropped when the worker lets go of it. The image a job
//! makes goes to the module's [`SharedCode`] too, where the module's other
//! contexts find it; its result is this context's copy of it, linked.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use crate::budget::MemoryBudget;
use crate::program::Function;

use super::bounds::Plan;
use super::{Outcome, Request, SharedCode};

/// A compile on the worker thread, and where its result lands.
#[derive(Default)]
pub(super) struct Pending {
    /// Set once `outcome` holds the result.
    done: AtomicBool,
    outcome: Mutex<Option<Outcome>>,
}

impl Pending {
    /// The compile's result, once it finished: given out once, `None`
    /// before and after.
    pub fn take(&self) -> Option<Outcome> {
        if !self.done.load(Ordering::Acquire) {
            return None;
        }
        self.outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn finish(&self, outcome: Outcome) {
        *self.outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
        self.done.store(true, Ordering::Release);
    }
}

/// One compile for the worker thread.
pub(super) struct Job {
    /// A copy of the function (its frames may be gone by the time the
    /// job runs).
    pub func: Function,
    pub request: Request,
    /// What the function's compiled calls need of their callees.
    pub callees: super::Callees,
    pub plan: Plan,
    /// The memory budget of the context that asked; the compile's memory
    /// is charged to it while the compile runs.
    pub budget: Arc<MemoryBudget>,
    /// Where the result goes, while the slot that waits for it exists.
    pub pending: Weak<Pending>,
    /// The module's shared images, and the copy's key there: the image
    /// goes there too, for the module's other contexts.
    pub shared: Arc<SharedCode>,
    pub key: usize,
}

/// Hands `job` to the worker thread, starting the thread on first use;
/// gives the job back when there is no worker (the thread could not be
/// started), for the caller to compile it itself.
pub(super) fn submit(job: Job) -> Result<(), Box<Job>> {
    static WORKER: OnceLock<Option<Sender<Box<Job>>>> = OnceLock::new();
    let worker = WORKER.get_or_init(|| {
        let (jobs, queue) = channel::<Box<Job>>();
        std::thread::Builder::new()
            .name("irvm-compile".into())
            .spawn(move || {
                for job in queue {
                    run(*job);
                }
            })
            .ok()?;
        Some(jobs)
    });
    let job = Box::new(job);
    match worker {
        Some(jobs) => jobs.send(job).map_err(|e| e.0),
        None => Err(job),
    }
}

/// Runs `job` on the worker thread, unless nobody waits for it any more
/// (then another context of the module may compile the function).
fn run(job: Job) {
    let Some(pending) = job.pending.upgrade() else {
        job.shared.abandon(job.key);
        return;
    };
    let image = super::compile_now(&job.func, job.request, &job.callees, &job.plan, &job.budget);
    job.shared.finish(job.key, &image);
    pending.finish(super::linked(&image, &job.callees));
}
