//! Running native dispatches: the workgroups of a *region* (the dispatches
//! a command buffer recorded with no execution barrier between them, or
//! one dispatch alone) handed out to the device's workers from one shared
//! counter, with one join for the whole region.
//!
//! IREE's task executor gets the same effect from its ready-task
//! "wavefront": the dispatches of a region are ready together and their
//! workgroup tiles go to whichever worker is free. Here the region's
//! workgroups are numbered one after another (dispatch 0's, then dispatch
//! 1's, ...) and every worker takes the next few numbers from an atomic
//! counter until none is left, so a worker done with one dispatch's share
//! moves on to the next dispatch instead of waiting at a barrier. A region
//! of one workgroup ([`INLINE_WORKGROUPS`]) runs on the calling thread.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use irvm::{Buffer, ContextResources, RawBytes, StatusCode, Trap};

use super::abi::{self, DispatchState, WorkgroupState};
use super::NativeExecutable;
use crate::device::DeviceConfig;
use crate::fpu::FlushDenormals;
use crate::workers::Workers;

/// A region with at most this many workgroups in all runs on the calling
/// thread: one workgroup cannot be shared, so waking the workers would
/// only add their wake-up and join. (A larger threshold, from estimated
/// work, needs measuring on a quiet machine: docs/PERFORMANCE.md.)
pub const INLINE_WORKGROUPS: u64 = 1;

/// A native dispatch, checked ([`NativeExecutable::prepare`]) and ready to
/// run in a region.
pub struct PreparedDispatch<'a> {
    pub(super) code: &'a NativeExecutable,
    /// Index of the export in `code`.
    pub(super) export: usize,
    pub(super) counts: [u32; 3],
    pub(super) constants: &'a [u32],
    pub(super) buffers: Vec<Arc<Buffer>>,
    /// The loading context's resources: interrupt, deadline, memory.
    pub(super) resources: &'a ContextResources,
    /// The profile recording the dispatch, and its site there.
    pub(super) profile: Option<(&'a irvm::profile::Profile, u32)>,
}

impl PreparedDispatch<'_> {
    fn workgroups(&self) -> u64 {
        self.counts.iter().map(|&n| u64::from(n)).product()
    }

    fn local_memory(&self) -> usize {
        usize::from(self.code.exports[self.export].attrs.local_memory_pages)
            * abi::LOCAL_MEMORY_PAGE
    }
}

/// Runs every workgroup of `dispatches` (no barrier between them: their
/// workgroups may run in any order and at once) on `device`'s workers, or
/// on the calling thread for `local-sync` and small regions. Returns, when
/// profiled, when each dispatch's last workgroup ended (ns of its profile);
/// else nothing. An error names the dispatch and workgroup that failed
/// (the first in recording order when several do).
pub fn run_region(
    device: &DeviceConfig,
    dispatches: &[PreparedDispatch<'_>],
) -> Result<Vec<u64>, Trap> {
    let total: u64 = dispatches.iter().map(PreparedDispatch::workgroups).sum();
    if total == 0 {
        return Ok(Vec::new());
    }
    let pool = device.workers()?;
    let workers = pool.map_or(1, Workers::count);
    // One participant, or too little to share: all on the calling thread.
    let pool = pool.filter(|p| p.count() > 1 && total > INLINE_WORKGROUPS);
    // Each dispatch's local memory, a slot per worker, charged to its
    // loading context while the region runs.
    let mut charges = Vec::with_capacity(dispatches.len());
    let mut memories = Vec::with_capacity(dispatches.len());
    for d in dispatches {
        let bytes = d.local_memory();
        charges.push(d.resources.charge_memory(
            (bytes * workers) as u64,
            "a dispatch's workgroup local memory",
        )?);
        memories.push(LocalMemory::new(bytes, workers)?);
    }
    let slots: Vec<SlotTable> = memories.iter_mut().map(SlotTable::new).collect();
    // Every dispatch's buffers lent at once: views of one allocation (the
    // transient buffer several dispatches write parts of) borrow it once.
    let lent: Vec<&Buffer> = dispatches
        .iter()
        .flat_map(|d| d.buffers.iter().map(|b| &**b))
        .collect();
    let result = Buffer::with_raw_parts(&lent, |parts: &[RawBytes]| {
        let mut tables = Vec::with_capacity(dispatches.len());
        let mut at = 0;
        for d in dispatches {
            let n = d.buffers.len();
            let mine = &parts[at..at + n];
            at += n;
            let ptrs: Vec<*mut c_void> = mine.iter().map(|p| p.ptr.cast::<c_void>()).collect();
            let lengths: Vec<usize> = mine.iter().map(|p| p.len).collect();
            tables.push((ptrs, lengths));
        }
        let states: Vec<DispatchState> = dispatches
            .iter()
            .zip(&tables)
            .map(|(d, (ptrs, lengths))| {
                let attrs = &d.code.exports[d.export].attrs;
                DispatchState {
                    workgroup_size_x: 1,
                    workgroup_size_y: 1,
                    workgroup_size_z: 1,
                    constant_count: u16::from(attrs.constant_count),
                    workgroup_count_x: d.counts[0],
                    workgroup_count_y: d.counts[1],
                    // Checked to fit by `prepare`.
                    workgroup_count_z: d.counts[2] as u16,
                    max_concurrency: u8::try_from(workers).unwrap_or(u8::MAX),
                    binding_count: attrs.binding_count,
                    constants: if d.constants.is_empty() {
                        std::ptr::null()
                    } else {
                        d.constants.as_ptr()
                    },
                    binding_ptrs: ptrs.as_ptr(),
                    binding_lengths: lengths.as_ptr(),
                }
            })
            .collect();
        let mut starts = Vec::with_capacity(dispatches.len() + 1);
        let mut sum = 0u64;
        for d in dispatches {
            starts.push(sum);
            sum += d.workgroups();
        }
        starts.push(sum);
        let region = Region {
            calls: dispatches
                .iter()
                .zip(&states)
                .zip(&slots)
                .map(|((d, state), slots)| Call {
                    environment: &d.code.environment,
                    state,
                    function: d.code.exports[d.export].function,
                    counts: d.counts,
                    stop: d.resources.stop_check(),
                    profile: d.profile,
                    slots,
                })
                .collect(),
            starts,
            total,
            chunk: (total / (workers as u64 * 16)).clamp(1, 64),
            next: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            first_error: Mutex::new(None),
            ends: dispatches.iter().map(|_| AtomicU64::new(0)).collect(),
            idle_since: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        };
        let profile = dispatches.iter().find_map(|d| d.profile);
        match pool {
            None => region.work(0),
            Some(pool) => {
                pool.run(&|k| region.work(k));
                if let Some((profile, _)) = profile {
                    region.record_barrier(profile, workers);
                }
            }
        }
        region.finish(dispatches)
    })?;
    drop(charges);
    result
}

/// What the workers of one region share.
struct Region<'a> {
    calls: Vec<Call<'a>>,
    /// `starts[d]`: the region-wide number of dispatch `d`'s first
    /// workgroup; the last entry is `total`.
    starts: Vec<u64>,
    total: u64,
    /// Workgroups a worker takes at once.
    chunk: u64,
    /// The next workgroup number not yet taken.
    next: AtomicU64,
    /// Set on the first error: workers stop taking work.
    failed: AtomicBool,
    /// The failed workgroup with the lowest number, and its error.
    first_error: Mutex<Option<(u64, Trap)>>,
    /// While profiled: when each dispatch's last workgroup ended.
    ends: Vec<AtomicU64>,
    /// While profiled: when each worker ran out of work.
    idle_since: Vec<AtomicU64>,
}

/// One dispatch as its workgroups see it.
struct Call<'a> {
    environment: &'a abi::Environment,
    state: &'a DispatchState,
    function: abi::DispatchFn,
    counts: [u32; 3],
    /// The context's interrupt and deadline, checked before each workgroup.
    stop: irvm::StopCheck,
    profile: Option<(&'a irvm::profile::Profile, u32)>,
    /// Each worker's local memory for this dispatch.
    slots: &'a SlotTable,
}

// SAFETY: a `Region` only hands its pointers (bindings, constants, tables,
// local memory slots) to dispatch functions, which IREE's ABI lets run
// concurrently; the buffers stay borrowed by `Buffer::with_raw_parts`
// until every worker is joined (`Workers::run` returns after every thread
// that entered the job left it),
// and worker `k` only uses local memory slot `k`.
unsafe impl Sync for Region<'_> {}

/// A run of one dispatch's workgroups on one worker while profiled,
/// recorded as one batch when it ends.
struct Batch {
    /// The dispatch's index in the region.
    dispatch: usize,
    start: u64,
    workgroups: u64,
}

impl Region<'_> {
    /// Worker `worker`'s loop: takes workgroups until none is left or one
    /// failed.
    fn work(&self, worker: usize) {
        let _flush = FlushDenormals::begin();
        let processor = processor_id();
        let mut d = 0usize;
        let mut batch: Option<Batch> = None;
        let mut last_end = 0u64;
        'take: while !self.failed.load(Ordering::Relaxed) {
            let first = self.next.fetch_add(self.chunk, Ordering::Relaxed);
            if first >= self.total {
                break;
            }
            for i in first..(first + self.chunk).min(self.total) {
                // Numbers only grow, so the dispatch index only moves on.
                while i >= self.starts[d + 1] {
                    d += 1;
                }
                let call = &self.calls[d];
                let local = i - self.starts[d];
                let [cx, cy, _] = call.counts;
                let x = (local % u64::from(cx)) as u32;
                let y = ((local / u64::from(cx)) % u64::from(cy)) as u32;
                let z = (local / (u64::from(cx) * u64::from(cy))) as u32;
                if let Some((profile, _)) = call.profile {
                    if batch.as_ref().is_some_and(|b| b.dispatch != d) {
                        self.end_batch(batch.take(), last_end);
                    }
                    batch
                        .get_or_insert_with(|| Batch {
                            dispatch: d,
                            start: profile.now_ns(),
                            workgroups: 0,
                        })
                        .workgroups += 1;
                }
                let result = call.run_one([x, y, z], call.slots.get(worker), processor);
                if let Some((profile, _)) = call.profile {
                    last_end = profile.now_ns();
                    self.ends[d].fetch_max(last_end, Ordering::Relaxed);
                }
                if let Err(t) = result {
                    self.fail(i, t);
                    break 'take;
                }
            }
        }
        if last_end > 0 {
            self.end_batch(batch.take(), last_end);
            if let Some(slot) = self.idle_since.get(worker) {
                slot.store(last_end, Ordering::Relaxed);
            }
        }
    }

    /// Records `batch`, ended at `end`, on the calling thread's track.
    fn end_batch(&self, batch: Option<Batch>, end: u64) {
        if let Some(b) = batch {
            if let Some((profile, site)) = self.calls[b.dispatch].profile {
                profile.batch(site, b.start, end.max(b.start), b.workgroups);
            }
        }
    }

    fn fail(&self, workgroup: u64, trap: Trap) {
        self.failed.store(true, Ordering::Relaxed);
        let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
        if first.as_ref().is_none_or(|(at, _)| workgroup < *at) {
            *first = Some((workgroup, trap));
        }
    }

    /// The region's barrier while profiled: from the first worker out of
    /// work to now (the join), on the site of the dispatch that ended last.
    fn record_barrier(&self, profile: &irvm::profile::Profile, workers: usize) {
        let idle: Vec<u64> = self
            .idle_since
            .iter()
            .map(|e| e.load(Ordering::Relaxed))
            .filter(|&e| e > 0)
            .collect();
        let last = (0..self.calls.len())
            .max_by_key(|&d| self.ends[d].load(Ordering::Relaxed))
            .and_then(|d| self.calls[d].profile);
        if let (Some(&first_idle), Some((_, site))) = (idle.iter().min(), last) {
            let unused = workers.saturating_sub(idle.len()) as u64;
            profile.barrier(site, first_idle, profile.now_ns(), unused);
        }
    }

    /// The region's outcome: the first failure in recording order, named
    /// by its dispatch; else each dispatch's end while profiled.
    fn finish(&self, dispatches: &[PreparedDispatch<'_>]) -> Result<Vec<u64>, Trap> {
        let failure = self
            .first_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((workgroup, t)) = failure {
            let d = self.starts.partition_point(|&s| s <= workgroup) - 1;
            let name = &dispatches[d].code.exports[dispatches[d].export].name;
            return Err(Trap::new(
                t.code,
                format!("dispatch `{name}`: {}", t.message),
            ));
        }
        Ok(match dispatches.iter().any(|d| d.profile.is_some()) {
            true => self
                .ends
                .iter()
                .map(|e| e.load(Ordering::Relaxed))
                .collect(),
            false => Vec::new(),
        })
    }
}

impl Call<'_> {
    /// Runs workgroup (x, y, z) with local memory `scratch` on processor
    /// `processor`.
    fn run_one(
        &self,
        [x, y, z]: [u32; 3],
        scratch: (*mut u8, usize),
        processor: u32,
    ) -> Result<(), Trap> {
        self.stop.check()?;
        let workgroup = WorkgroupState {
            workgroup_id_x: x,
            workgroup_id_y: y,
            workgroup_id_z: z as u16,
            reserved: 0,
            processor_id: processor,
            local_memory: if scratch.1 == 0 {
                std::ptr::null_mut()
            } else {
                scratch.0.cast()
            },
            local_memory_size: u32::try_from(scratch.1).unwrap_or(u32::MAX),
        };
        // SAFETY: the function is an export of the loaded library, called
        // with its environment, a dispatch state whose binding pointers
        // and lengths describe borrowed buffers, and workgroup state with
        // exclusive local memory of the declared size.
        let ret = unsafe { (self.function)(self.environment, self.state, &workgroup) };
        if ret == 0 {
            Ok(())
        } else {
            Err(Trap::new(
                StatusCode::Internal,
                format!(
                    "workgroup ({x}, {y}, {z}): executable entry point returned catastrophic \
                     error {ret}"
                ),
            ))
        }
    }
}

/// The logical processor running this thread.
fn processor_id() -> u32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and only reads.
        let cpu = unsafe { libc::sched_getcpu() };
        u32::try_from(cpu).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// 64-byte-aligned workgroup local memory, one slot per worker.
struct LocalMemory {
    lines: Vec<Line>,
    per_slot: usize,
    slot_bytes: usize,
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

impl LocalMemory {
    fn new(bytes: usize, slots: usize) -> Result<LocalMemory, Trap> {
        let per_slot = bytes.div_ceil(64);
        let n = per_slot.checked_mul(slots).ok_or_else(|| {
            Trap::new(
                StatusCode::ResourceExhausted,
                "workgroup local memory overflows",
            )
        })?;
        Ok(LocalMemory {
            lines: vec![Line([0; 64]); n],
            per_slot,
            slot_bytes: bytes,
        })
    }
}

/// Each worker's local memory slot, found by its pool index.
struct SlotTable {
    base: *mut u8,
    stride: usize,
    bytes: usize,
    slots: usize,
}

impl SlotTable {
    fn new(memory: &mut LocalMemory) -> SlotTable {
        let slots = memory.lines.len().checked_div(memory.per_slot).unwrap_or(0);
        SlotTable {
            base: memory.lines.as_mut_ptr().cast(),
            stride: memory.per_slot * 64,
            bytes: memory.slot_bytes,
            slots,
        }
    }

    fn get(&self, k: usize) -> (*mut u8, usize) {
        if self.bytes == 0 || k >= self.slots {
            return (std::ptr::null_mut(), 0);
        }
        // SAFETY: `k < slots`, so the slot lies within the allocation.
        (unsafe { self.base.add(k * self.stride) }, self.bytes)
    }
}
