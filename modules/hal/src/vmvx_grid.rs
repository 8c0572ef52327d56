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
    Buffer, Context, ContextResources, Func, List, MemoryCharge, Ref, RefType, StatusCode, Trap,
    TypeDef, Value,
};

use crate::fpu::FlushDenormals;
use crate::workers::Workers;

/// One context holding a vmvx executable's module, and its entry functions
/// in entry order.
pub struct Instance {
    pub context: Context,
    pub funcs: Vec<Func>,
    /// The last dispatch's arguments, kept for the next one to fill again
    /// ([`Instance::arguments`]).
    kept: Option<KeptArguments>,
}

/// A dispatch's local memory, constants buffer and bindings list.
struct KeptArguments {
    local: Arc<Buffer>,
    constants: Arc<Buffer>,
    bindings: Arc<List>,
    /// The local memory's charge to the loading context's budget, held
    /// as long as the buffer is kept (between dispatches too).
    _local_charge: MemoryCharge,
}

impl Instance {
    /// An instance of `funcs` in `context`.
    pub fn new(context: Context, funcs: Vec<Func>) -> Instance {
        Instance {
            context,
            funcs,
            kept: None,
        }
    }

    /// A dispatch's local memory (`local_memory` bytes), push constants
    /// (`constants`) and bindings list (`bindings`), as its workgroups'
    /// entry function takes them. Those of the last dispatch on this
    /// instance are filled again when nothing else holds them (a kernel
    /// that kept one gets new ones) and their sizes match, so a dispatch
    /// allocates none of them; local memory, like IREE's, is not cleared
    /// between dispatches (a kernel writes what it reads). Local memory is
    /// charged to `resources` (the loading context's budget) for as long
    /// as it is kept, not only while a dispatch runs.
    pub fn arguments(
        &mut self,
        resources: &ContextResources,
        local_memory: usize,
        constants: &[u8],
        bindings: &[Ref],
    ) -> Result<[Ref; 3], Trap> {
        let reusable = |k: &mut KeptArguments| {
            Arc::get_mut(&mut k.local).is_some_and(|b| b.len() == local_memory)
                && Arc::get_mut(&mut k.constants).is_some_and(|b| b.len() == constants.len())
                && Arc::get_mut(&mut k.bindings).is_some()
        };
        let mut kept = self.kept.take();
        if kept.as_mut().is_some_and(|k| !reusable(k)) {
            kept = None;
        }
        let kept = match kept {
            Some(k) => {
                k.constants
                    .with_bytes_mut(|b| b.copy_from_slice(constants))?;
                k.bindings.resize(0)?;
                k
            }
            None => {
                let local_charge = resources
                    .charge_memory(local_memory as u64, "a dispatch's workgroup local memory")?;
                let list = List::new(
                    TypeDef::Ref(RefType::BUFFER),
                    u32::try_from(bindings.len()).unwrap_or(u32::MAX),
                )?;
                KeptArguments {
                    local: Arc::new(Buffer::new(local_memory)?),
                    constants: Arc::new(Buffer::from_vec(constants.to_vec())),
                    bindings: Arc::new(list),
                    _local_charge: local_charge,
                }
            }
        };
        for b in bindings {
            kept.bindings.push(Value::Ref(b.clone()))?;
        }
        let args = [
            Ref::Buffer(kept.local.clone()),
            Ref::Buffer(kept.constants.clone()),
            Ref::List(kept.bindings.clone()),
        ];
        self.kept = Some(kept);
        Ok(args)
    }

    /// Empties the kept bindings list once the dispatch has ended, so that
    /// no binding outlives its call here (an embedder's borrowed memory, a
    /// transient buffer going back to the pool).
    pub fn end_dispatch(&mut self) {
        if let Some(k) = &self.kept {
            // (Shrinking a list cannot fail.)
            let _ = k.bindings.resize(0);
        }
    }
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
        if instance.funcs.get(grid.entry).is_none() {
            // (Entries are checked before the dispatch; and no arguments
            // are taken that `end_dispatch` would have to empty.)
            return;
        }
        let args = instance.arguments(
            grid.resources,
            grid.local_memory,
            grid.constants,
            grid.bindings,
        );
        let Instance { context, funcs, .. } = &mut *instance;
        let Some(func) = funcs.get(grid.entry) else {
            return;
        };
        let mut args = match args {
            Ok(args) => crate::executable::EntryArgs::new(args, grid.counts),
            // Before any workgroup of this worker: named after all of them.
            Err(t) => {
                let t = Trap::new(t.code, format!("dispatch `{}`: {}", grid.name, t.message));
                return self.fail(self.total, t);
            }
        };
        let _flush = FlushDenormals::begin();
        let [cx, cy, _] = grid.counts;
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
                let result = context.invoke(func, args.for_workgroup([x, y, z]));
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
        drop(args);
        instance.end_dispatch();
        if let (Some((profile, site)), Some((start, n))) = (grid.profile, batch) {
            // On this worker's track.
            profile.batch(site, start, last_end.max(start), n);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use irvm::TypeRegistry;

    fn list_of(r: &Ref) -> Arc<List> {
        match r {
            Ref::List(l) => l.clone(),
            _ => panic!("a list"),
        }
    }

    #[test]
    fn a_dispatch_refills_the_last_ones_arguments_unless_something_kept_them() {
        let mut inst = Instance::new(Context::new(&TypeRegistry::new()), Vec::new());
        let res = ContextResources::detached();
        let binding = Ref::from(Buffer::from_vec(vec![9; 8]));
        let first = inst
            .arguments(&res, 64, &[1, 2, 3, 4], std::slice::from_ref(&binding))
            .unwrap();
        assert_eq!(list_of(&first[2]).len(), 1);
        let first_buffers: Vec<*const Buffer> = first[..2]
            .iter()
            .map(|r| Arc::as_ptr(r.buffer("b").unwrap()))
            .collect();
        let first_list = Arc::as_ptr(&list_of(&first[2]));
        drop(first);
        inst.end_dispatch();
        assert!(
            inst.kept.as_ref().unwrap().bindings.is_empty(),
            "no binding outlives its dispatch"
        );
        // Same sizes, nothing holding them: the same objects, refilled.
        let second = inst
            .arguments(&res, 64, &[5, 6, 7, 8], std::slice::from_ref(&binding))
            .unwrap();
        assert_eq!(
            Arc::as_ptr(second[0].buffer("b").unwrap()),
            first_buffers[0]
        );
        assert_eq!(
            Arc::as_ptr(second[1].buffer("b").unwrap()),
            first_buffers[1]
        );
        assert_eq!(Arc::as_ptr(&list_of(&second[2])), first_list);
        assert_eq!(second[1].buffer("b").unwrap().to_vec(), [5, 6, 7, 8]);
        assert_eq!(list_of(&second[2]).len(), 1);
        // A kernel kept the constants: the next dispatch gets new ones.
        let kept_constants = second[1].clone();
        drop(second);
        inst.end_dispatch();
        let third = inst.arguments(&res, 64, &[0; 4], &[]).unwrap();
        assert_ne!(Arc::as_ptr(third[1].buffer("b").unwrap()), first_buffers[1]);
        assert_eq!(kept_constants.buffer("b").unwrap().to_vec(), [5, 6, 7, 8]);
        assert_eq!(list_of(&third[2]).len(), 0);
        drop(third);
        // Another size of local memory: new.
        let fourth = inst.arguments(&res, 128, &[0; 4], &[]).unwrap();
        assert_eq!(fourth[0].buffer("b").unwrap().len(), 128);
    }
    /// Kept local memory is the program's memory between dispatches too:
    /// it stays charged to the loading context's budget while kept (it
    /// was charged only while a dispatch ran, so a program could hold its
    /// whole budget besides the local memory every executable instance
    /// kept), once (a refill charges nothing more), and is given back when
    /// replaced or dropped.
    #[test]
    fn kept_local_memory_stays_charged_to_the_budget_until_dropped() {
        let loader = Context::with_limits(
            &TypeRegistry::new(),
            irvm::Limits {
                max_memory_bytes: 1 << 20,
                ..irvm::Limits::default()
            },
        );
        let res = loader.resources().clone();
        let before = res.memory_in_use();
        let mut inst = Instance::new(Context::new(&TypeRegistry::new()), Vec::new());
        let args = inst.arguments(&res, 256 << 10, &[0; 4], &[]).unwrap();
        drop(args);
        inst.end_dispatch();
        assert_eq!(
            res.memory_in_use() - before,
            256 << 10,
            "the kept local memory is charged between dispatches"
        );
        // Refilled: charged once.
        drop(inst.arguments(&res, 256 << 10, &[0; 4], &[]).unwrap());
        inst.end_dispatch();
        assert_eq!(res.memory_in_use() - before, 256 << 10);
        // Over the budget with what is kept: refused, naming it.
        let e = inst
            .arguments(&res, 2 << 20, &[0; 4], &[])
            .expect_err("over the budget");
        assert_eq!(e.code, StatusCode::ResourceExhausted, "{e}");
        assert!(e.message.contains("workgroup local memory"), "{e}");
        // Another size replaces it; dropping the instance gives it back.
        drop(inst.arguments(&res, 128 << 10, &[0; 4], &[]).unwrap());
        assert_eq!(res.memory_in_use() - before, 128 << 10);
        drop(inst);
        assert_eq!(res.memory_in_use(), before);
    }
}
