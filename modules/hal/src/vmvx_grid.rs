//! Running a vmvx dispatch's workgroups on every worker of a `local-task`
//! device.
//!
//! Each worker has a context of its own holding the executable's module
//! ([`Instance`], made at the first shared dispatch and kept; worker 0, the
//! calling thread, has one too, not the context the executable made at
//! load, whose buffers a dispatch on the calling thread may have left
//! leased to the program's run), and takes
//! the next workgroup number from one atomic counter until none is left, as
//! native regions do (`native/region.rs`). The bindings are lent to the
//! workers for the dispatch with one region lease
//! ([`irvm::Buffer::lend_to_workers`]): every worker's interpreter reads and
//! writes them as if its thread held their lease, and the vmvx kernels
//! reach them through raw pointers only (`vmvx.rs`), so no slice of a
//! binding exists while the workgroups write their parts of it.
//!
//! Each worker runs its workgroups inside one
//! [`irvm::ContextResources::run_within`] of the loading context's
//! resources (its interrupt, deadline, memory budget and limits: no fuel,
//! since a fuel budget is spent in program order and such dispatches stay
//! on the calling thread), with its own local memory, constants buffer and
//! bindings list. The first failing workgroup in order is the dispatch's
//! error: workgroups are taken in increasing order and a worker finishes
//! the one it took, so every workgroup numbered below a failing one has
//! run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use irvm::{
    Buffer, Context, ContextResources, Func, List, Ref, RefType, StatusCode, Trap, TypeDef, Value,
};

use crate::fpu::FlushDenormals;
use crate::workers::Workers;

/// One context holding a vmvx executable's module, and its entry functions
/// in entry order.
pub struct Instance {
    pub context: Context,
    pub funcs: Vec<Func>,
}

/// One dispatch, as every worker runs it.
pub struct Grid<'a> {
    /// Entry index (into each instance's `funcs`) and name.
    pub entry: usize,
    pub name: &'a str,
    pub counts: [u32; 3],
    /// The push constants as bytes.
    pub constants: &'a [u8],
    pub bindings: &'a [Ref],
    /// Bytes of workgroup local memory per worker.
    pub local_memory: usize,
    /// The loading context's resources.
    pub resources: &'a ContextResources,
    /// The profile recording the dispatch, and its site there.
    pub profile: Option<(&'a irvm::profile::Profile, u32)>,
}

/// What the workers of one dispatch share while it runs.
struct Shared<'a> {
    grid: &'a Grid<'a>,
    instances: &'a [Arc<Mutex<Instance>>],
    total: u64,
    /// The next workgroup number not yet taken.
    next: AtomicU64,
    /// Set on the first failure: workers stop taking work.
    failed: AtomicBool,
    /// The failed workgroup with the lowest number, and its error.
    first_error: Mutex<Option<(u64, Trap)>>,
    /// The loading context's interrupt: a worker that takes it raises it
    /// again for the others.
    interrupt: irvm::InterruptHandle,
}

/// Runs every workgroup of `grid` on `pool`'s workers, worker `k` in
/// `instances[k]` (one per worker). Errors as the calling thread's
/// in-order run names them: `dispatch `NAME` workgroup (x, y, z): ...`.
pub fn run(
    grid: &Grid<'_>,
    pool: &Workers,
    instances: &[Arc<Mutex<Instance>>],
) -> Result<(), Trap> {
    let total = grid.counts.iter().map(|&n| u64::from(n)).product();
    let shared = Shared {
        grid,
        instances,
        total,
        next: AtomicU64::new(0),
        failed: AtomicBool::new(false),
        first_error: Mutex::new(None),
        interrupt: grid.resources.interrupt_handle(),
    };
    let lent: Vec<&Buffer> = grid
        .bindings
        .iter()
        .map(|r| r.buffer("binding").map(|b| &**b))
        .collect::<Result<_, _>>()?;
    Buffer::lend_to_workers(&lent, |region| {
        pool.run(&|k| {
            // SAFETY: the adopting threads run the workgroups of one vmvx
            // dispatch, which read and write the lent bindings through the
            // interpreter's bounds-checked loads and stores and the vmvx
            // kernels' raw element accesses (`vmvx.rs`), each touching
            // only the bytes its workgroup addresses. IREE's dispatch
            // contract gives every workgroup its own part of each output
            // and has none read what another writes; a program that breaks
            // it races here as it does on IREE's workers (and as native
            // code lent the same bytes by `Buffer::with_raw_parts` would).
            // The pool joins every thread before `run` returns, inside
            // this closure.
            unsafe { region.adopt(|| shared.work(k)) }
        })
    })?;
    let failure = shared
        .first_error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    match failure {
        Some((_, trap)) => {
            if trap.code == StatusCode::Cancelled {
                // The interrupt the last worker to stop raised again: the
                // dispatch has taken it.
                shared.interrupt.clear();
            }
            Err(trap)
        }
        None => Ok(()),
    }
}

impl Shared<'_> {
    /// Worker `k`'s share: workgroups from the counter until none is left
    /// or one failed.
    fn work(&self, k: usize) {
        let grid = self.grid;
        let Some(instance) = self.instances.get(k) else {
            return;
        };
        let mut instance = instance.lock().unwrap_or_else(|e| e.into_inner());
        let Instance { context, funcs } = &mut *instance;
        let Some(func) = funcs.get(grid.entry) else {
            return;
        };
        let args = match self.arguments() {
            Ok(args) => args,
            // Before any workgroup of this worker: named after all of them.
            Err(t) => {
                let t = Trap::new(t.code, format!("dispatch `{}`: {}", grid.name, t.message));
                return self.fail(self.total, t);
            }
        };
        let _flush = FlushDenormals::begin();
        let [cx, cy, cz] = grid.counts;
        let mut batch: Option<(u64, u64)> = None;
        let mut last_end = 0;
        grid.resources.run_within(context, |context| {
            while !self.failed.load(Ordering::Relaxed) {
                let i = self.next.fetch_add(1, Ordering::Relaxed);
                if i >= self.total {
                    break;
                }
                let x = (i % u64::from(cx)) as u32;
                let y = ((i / u64::from(cx)) % u64::from(cy)) as u32;
                let z = (i / (u64::from(cx) * u64::from(cy))) as u32;
                if let Some((profile, _)) = grid.profile {
                    batch.get_or_insert((profile.now_ns(), 0)).1 += 1;
                }
                let call = crate::executable::entry_args(
                    [&args[0], &args[1], &args[2]],
                    [x, y, z],
                    [cx, cy, cz],
                );
                let result = context.invoke(func, &call);
                if let Some((profile, _)) = grid.profile {
                    last_end = profile.now_ns();
                }
                if let Err(t) = result {
                    self.fail(
                        i,
                        Trap::new(
                            t.code,
                            format!(
                                "dispatch `{}` workgroup ({x}, {y}, {z}): {}",
                                grid.name, t.message
                            ),
                        ),
                    );
                    break;
                }
            }
        });
        if let (Some((profile, site)), Some((start, n))) = (grid.profile, batch) {
            // On this worker's track.
            profile.batch(site, start, last_end.max(start), n);
        }
    }

    /// This worker's local memory, constants and bindings list (the
    /// bindings themselves are shared).
    fn arguments(&self) -> Result<[Ref; 3], Trap> {
        let grid = self.grid;
        let local = Ref::from(Buffer::new(grid.local_memory)?);
        let constants = Ref::from(Buffer::from_vec(grid.constants.to_vec()));
        let bindings = List::new(
            TypeDef::Ref(RefType::BUFFER),
            u32::try_from(grid.bindings.len()).unwrap_or(u32::MAX),
        )?;
        for b in grid.bindings {
            bindings.push(Value::Ref(b.clone()))?;
        }
        Ok([local, constants, Ref::from(bindings)])
    }

    fn fail(&self, workgroup: u64, trap: Trap) {
        self.failed.store(true, Ordering::Relaxed);
        if trap.code == StatusCode::Cancelled {
            // This worker took the interrupt (it is taken once): pass it on
            // to the workers still inside a workgroup.
            self.interrupt.interrupt();
        }
        let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
        if first.as_ref().is_none_or(|(at, _)| workgroup < *at) {
            *first = Some((workgroup, trap));
        }
    }
}
