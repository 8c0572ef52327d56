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
//! moves on to the next dispatch instead of waiting at a barrier.
//!
//! Where a region runs (`Mode`):
//!
//! - `local-sync`, and on `local-task` a region of one workgroup
//!   ([`INLINE_WORKGROUPS`]) whose call cannot be stopped: on the calling
//!   thread.
//! - `local-task` when the call cannot be stopped: the calling thread and
//!   the workers together (`Workers::run`).
//! - `local-task` when the call can be stopped (the context handed out an
//!   interrupt handle or has a deadline, [`irvm::StopCheck::can_stop`]):
//!   on the workers only (`Workers::start_detached`), while the calling
//!   thread watches for the region's end and for the stop. On a stop, no
//!   workgroup is handed out any more and the call returns the stop's
//!   status at once; the workgroups already running end in the background.
//!   For that the region owns everything a workgroup touches (the
//!   executables, the constants, the bindings and their leases, local
//!   memory: `Held`), and until the last one ends the loading context
//!   stays busy ([`irvm::BackgroundWork`]: its next call waits) and the
//!   buffers stay leased to the region ([`irvm::NativeRegionLease`]: whoever
//!   touches them waits). When every thread of the pool still runs such
//!   workgroups (`Workers::detached_threads_busy`; a context sharing the
//!   device whose calls were stopped), the region runs on the calling
//!   thread instead, stoppable between workgroups as on `local-sync`,
//!   rather than wait for them to end.
//!
//! A region costs one heap allocation in the detached mode (the region,
//! with the tables of up to four dispatches inline) and none otherwise,
//! besides local memory for dispatches that declare some. A region of one
//! dispatch that runs on the calling thread, not profiled, is not built
//! at all (`run_one_here`: its tables on the stack, nothing made to be
//! shared).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use irvm::profile::Profile;
use irvm::{
    BackgroundWork, Buffer, ContextResources, MemoryCharge, NativeRegionLease, StatusCode,
    StopCheck, Trap,
};
use smallvec::SmallVec;

use super::abi::{self, DispatchState, WorkgroupState};
use super::NativeExecutable;
use crate::device::DeviceConfig;
use crate::executable::BoundRange;
use crate::fpu::FlushDenormals;
use crate::workers::{DetachedJob, Workers};

/// A region with at most this many workgroups in all runs on the calling
/// thread when its call cannot be stopped: one workgroup cannot be shared,
/// so waking the workers would only add their wake-up and join. (A larger
/// threshold, from estimated work, needs measuring on a quiet machine:
/// docs/PERFORMANCE.md.)
pub const INLINE_WORKGROUPS: u64 = 1;

/// How often a calling thread that waits for a detached region looks at
/// its stop word once it has stopped spinning: the latency of an interrupt
/// or deadline during a long workgroup.
pub const STOP_POLL: Duration = Duration::from_millis(5);

/// A native dispatch, checked ([`NativeExecutable::prepare`]) and ready to
/// run in a region.
pub struct PreparedDispatch<'a> {
    pub(super) code: &'a Arc<NativeExecutable>,
    /// Index of the export in `code`.
    pub(super) export: usize,
    pub(super) counts: [u32; 3],
    pub(super) constants: &'a [u32],
    /// The bindings, each checked to be a range of a buffer.
    pub(super) bindings: &'a [BoundRange<'a>],
    /// The loading context's resources: interrupt, deadline, memory.
    pub(super) resources: &'a ContextResources,
    /// The profile recording the dispatch, and its site there.
    pub(super) profile: Option<(&'a Arc<Profile>, u32)>,
}

impl PreparedDispatch<'_> {
    fn workgroups(&self) -> u64 {
        self.counts.iter().map(|&n| u64::from(n)).product()
    }

    /// Its workgroups' view of it, for a pool of `workers`: the dispatch
    /// state without its tables (null: the caller points them), at the
    /// start of the region's tables, held by no context.
    fn call(&self, stop: StopCheck, workers: usize) -> Call {
        let export = &self.code.exports[self.export];
        let attrs = &export.attrs;
        Call {
            environment: &*self.code.environment,
            state: DispatchState {
                workgroup_size_x: 1,
                workgroup_size_y: 1,
                workgroup_size_z: 1,
                constant_count: u16::from(attrs.constant_count),
                workgroup_count_x: self.counts[0],
                workgroup_count_y: self.counts[1],
                // Checked to fit by `prepare`.
                workgroup_count_z: self.counts[2] as u16,
                max_concurrency: u8::try_from(workers).unwrap_or(u8::MAX),
                binding_count: attrs.binding_count,
                constants: std::ptr::null(),
                binding_ptrs: std::ptr::null(),
                binding_lengths: std::ptr::null(),
            },
            function: export.function,
            export: self.export,
            counts: self.counts,
            first_binding: 0,
            first_constant: 0,
            stop,
            resources: None,
            profile: self.profile.map(|(p, site)| (p.clone(), site)),
        }
    }

    fn local_memory(&self) -> usize {
        usize::from(self.code.exports[self.export].attrs.local_memory_pages)
            * abi::LOCAL_MEMORY_PAGE
    }
}

/// When each dispatch of a region ended (ns of its profile), while
/// profiled; empty otherwise.
pub type DispatchEnds = SmallVec<[u64; 4]>;

/// Where a region's workgroups run (see the module doc).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// On the calling thread.
    Inline,
    /// On the calling thread and the workers.
    Pool,
    /// On the workers only, the calling thread watching for a stop.
    Detached,
}

/// Runs every workgroup of `dispatches` (no barrier between them: their
/// workgroups may run in any order and at once) on `device` (see the
/// module doc for where). Returns, when profiled, when each dispatch's
/// last workgroup ended. An error names the dispatch and workgroup that
/// failed (the first in recording order when several do); a stop names
/// the dispatch whose workgroups were being handed out.
pub fn run_region(
    device: &DeviceConfig,
    dispatches: &[PreparedDispatch<'_>],
) -> Result<DispatchEnds, Trap> {
    let total: u64 = dispatches.iter().map(PreparedDispatch::workgroups).sum();
    if total == 0 {
        return Ok(DispatchEnds::new());
    }
    let pool = device.workers()?;
    // (Each a lock and a count: made once per dispatch, here.)
    let stops: SmallVec<[StopCheck; 4]> = dispatches
        .iter()
        .map(|d| d.resources.stop_check())
        .collect();
    let stoppable = stops.iter().any(StopCheck::can_stop);
    let (mode, pool) = match pool {
        None => (Mode::Inline, None),
        // Every thread still runs workgroups that stopped calls (of any
        // context on this device) left behind: the calling thread runs
        // this region itself, stoppable between workgroups, rather than
        // wait for them, which could be forever.
        Some(p) if stoppable && p.detached_threads_stay_busy() => (Mode::Inline, Some(p)),
        Some(p) if stoppable => (Mode::Detached, Some(p)),
        Some(p) if p.count() > 1 && total > INLINE_WORKGROUPS => (Mode::Pool, Some(p)),
        Some(p) => (Mode::Inline, Some(p)),
    };
    // Every participant that may run a workgroup has its slot of local
    // memory; `max_concurrency` tells the kernels the pool's size.
    let workers = pool.map_or(1, Workers::count);
    let slots = if mode == Mode::Inline { 1 } else { workers };
    if let ([d], Mode::Inline, [_]) = (dispatches, mode, &stops[..]) {
        if d.profile.is_none() {
            let Some(stop) = stops.into_iter().next() else {
                unreachable!("one dispatch, one stop check")
            };
            return run_one_here(d, stop, workers).map(|()| DispatchEnds::new());
        }
    }
    match (mode, pool) {
        (Mode::Detached, Some(pool)) => {
            let mut region = Arc::new(Region::empty(total, workers, true));
            let Some(fixed) = Arc::get_mut(&mut region) else {
                unreachable!("a region just made has one owner");
            };
            fixed.take(dispatches, stops, workers, slots)?;
            fixed.point_tables();
            run_detached(pool, region)
        }
        (mode, pool) => {
            let mut region = Region::empty(total, workers, false);
            region.take(dispatches, stops, workers, slots)?;
            region.point_tables();
            match pool.filter(|_| mode == Mode::Pool) {
                None => region.work(0),
                Some(pool) => {
                    pool.run(&|k| region.work(k));
                    region.record_barrier(workers);
                }
            }
            let outcome = region.finish();
            region.release_here();
            outcome
        }
    }
}

/// One dispatch, not profiled, on the calling thread: what a region does
/// for it (bindings checked and leased, local memory charged, workgroups
/// in order, each after a look at the stop word, the first failure named
/// by the dispatch), without a region: nothing is shared with another
/// thread, so nothing is built to be (the small model's one dispatch per
/// call; docs/PERFORMANCE.md, "Per-call overhead").
fn run_one_here(d: &PreparedDispatch<'_>, stop: StopCheck, workers: usize) -> Result<(), Trap> {
    let export = &d.code.exports[d.export];
    let mut leases: SmallVec<[NativeRegionLease; 4]> = SmallVec::new();
    let mut ptrs: SmallVec<[*mut c_void; 8]> = SmallVec::new();
    let mut lengths: SmallVec<[usize; 8]> = SmallVec::new();
    let mut bind = || -> Result<(), Trap> {
        for (i, r) in d.bindings.iter().enumerate() {
            // (`prepare` checked them: this fails on nothing.)
            let (b, offset, length) = r.checked(i)?;
            if b.is_mutable() && !leases.iter().any(|l| l.covers(b)) {
                let mut wait = || stop.check();
                if let Some(lease) = b.lease_for_native_region(&mut wait)? {
                    leases.push(lease);
                }
            }
            let raw = b.raw_bytes();
            // SAFETY: `checked` proved `offset + length` within the
            // buffer's `raw.len` bytes.
            ptrs.push(unsafe { raw.ptr.add(offset) }.cast::<c_void>());
            lengths.push(length);
        }
        Ok(())
    };
    let bound = bind();
    let outcome = bound.and_then(|()| {
        let bytes = d.local_memory();
        let _charge = (bytes > 0)
            .then(|| {
                d.resources
                    .charge_memory(bytes as u64, "a dispatch's workgroup local memory")
            })
            .transpose()?;
        let local = LocalMemory::new(bytes, 1)?;
        let mut call = d.call(stop, workers);
        call.state.constants = if d.constants.is_empty() {
            std::ptr::null()
        } else {
            d.constants.as_ptr()
        };
        call.state.binding_ptrs = ptrs.as_ptr();
        call.state.binding_lengths = lengths.as_ptr();
        let _flush = FlushDenormals::begin();
        let processor = processor_id();
        let [cx, cy, cz] = d.counts;
        for z in 0..cz {
            for y in 0..cy {
                for x in 0..cx {
                    call.run_one([x, y, z], local.slot(0), processor)
                        .map_err(|t| {
                            Trap::new(t.code, format!("dispatch `{}`: {}", export.name, t.message))
                        })?;
                }
            }
        }
        Ok(())
    });
    for lease in leases {
        lease.give_back();
    }
    outcome
}

/// Hands `region` to the workers and waits for its end or a stop (see the
/// module doc).
fn run_detached(pool: &Workers, region: Arc<Region>) -> Result<DispatchEnds, Trap> {
    let mut stopped: Option<Trap> = None;
    let started = pool
        .start_detached(region.clone(), &mut || {
            stopped = region.stop_requested();
            stopped.is_some()
        })
        .map_err(|e| {
            Trap::new(
                StatusCode::Unavailable,
                format!("starting a local-task worker thread: {e}"),
            )
        });
    let started = match started {
        Ok(s) => s,
        Err(t) => {
            region.release_here();
            return Err(t);
        }
    };
    if !started {
        // Never handed out: nothing ran, the caller gives everything back.
        let t = stopped.unwrap_or_else(|| Trap::new(StatusCode::Cancelled, "stopped"));
        let t = region.stop_error(t);
        region.release_here();
        return Err(t);
    }
    let mut spins = 0u32;
    loop {
        if region.ending.load(Ordering::Acquire) == DONE {
            region.record_barrier(region.idle_since.len());
            let outcome = region.finish();
            region.release_here();
            return outcome;
        }
        // A stop seen here, or one a worker took (it failed the region):
        // return at once, leaving running workgroups to end.
        let stop = region.stop_requested();
        if stop.is_some() || region.failed.load(Ordering::Acquire) {
            return region.leave(stop);
        }
        spins += 1;
        // A few rounds of spinning, then parked: the workers are as many
        // as the cores, and a caller spinning or yielding for longer takes
        // one from them (measured in docs/PERFORMANCE.md).
        if spins > WATCH_SPINS {
            let g = region.end_lock.lock().unwrap_or_else(|e| e.into_inner());
            if region.ending.load(Ordering::Acquire) != DONE {
                region.parked.store(true, Ordering::SeqCst);
                drop(
                    region
                        .end
                        .wait_timeout(g, STOP_POLL)
                        .unwrap_or_else(|e| e.into_inner()),
                );
            }
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Rounds the calling thread of a detached region spins before it parks
/// (then it is woken by the region's end, or every [`STOP_POLL`] to look at
/// the stop word).
const WATCH_SPINS: u32 = 64;

/// [`Region::ending`]: the caller waits for the region.
const WAITING: u8 = 0;
/// Every workgroup ended while the caller waited: it gives back what the
/// region held.
const DONE: u8 = 1;
/// The caller returned (stopped): the last worker out gives back.
const GONE: u8 = 2;
/// Given back.
const RELEASED: u8 = 3;

/// A region: what its workgroups read, and what the workers share.
struct Region {
    calls: SmallVec<[Call; 4]>,
    /// `starts[d]`: the region-wide number of dispatch `d`'s first
    /// workgroup; the last entry is `total`.
    starts: SmallVec<[u64; 5]>,
    total: u64,
    /// Workgroups a worker takes at once.
    chunk: u64,
    /// The next workgroup number not yet taken.
    next: AtomicU64,
    /// Set on the first error or stop: workers stop taking work.
    failed: AtomicBool,
    /// The failed workgroup with the lowest number, and its error.
    first_error: Mutex<Option<(u64, Trap)>>,
    /// While profiled: when each dispatch's last workgroup ended.
    ends: SmallVec<[AtomicU64; 4]>,
    /// While profiled: when each worker ran out of work.
    idle_since: SmallVec<[AtomicU64; 8]>,
    /// Every dispatch's binding pointers and lengths, one after another
    /// (each dispatch state points at its own).
    ptrs: SmallVec<[*mut c_void; 16]>,
    lengths: SmallVec<[usize; 16]>,
    /// Every dispatch's push constants, one after another.
    constants: SmallVec<[u32; 32]>,
    /// Each dispatch's local memory, a slot per participant.
    local: SmallVec<[LocalMemory; 4]>,
    /// Whether the caller does not take part (detached mode).
    detached: bool,
    /// Threads inside [`Region::work`] now.
    running: AtomicUsize,
    /// Who gives back what the region holds: [`WAITING`], [`DONE`],
    /// [`GONE`], [`RELEASED`]; changed under `end_lock`.
    ending: AtomicU8,
    end_lock: Mutex<Option<Held>>,
    /// Signalled when the region is [`DONE`], if the caller `parked`.
    end: Condvar,
    parked: AtomicBool,
}

/// What the region owns so that its workgroups may outlive the call:
/// given back when the last one ends.
struct Held {
    /// Each dispatch's executable (its code and environment).
    code: SmallVec<[Arc<NativeExecutable>; 4]>,
    /// Every binding (the binding pointers point into them), in a
    /// detached region: any other region ends before its call returns,
    /// and the call's command buffer keeps the bindings until then.
    buffers: SmallVec<[Arc<Buffer>; 16]>,
    /// The leases of the mutable bindings' allocations.
    leases: SmallVec<[NativeRegionLease; 8]>,
    /// Local memory charged to the loading contexts.
    charges: SmallVec<[MemoryCharge; 4]>,
    /// The loading contexts kept busy (detached mode, after a stop).
    background: SmallVec<[BackgroundWork; 1]>,
}

impl Held {
    /// Gives the leases back to the thread they were taken from (the
    /// calling thread, whose run goes on).
    fn give_back(self) {
        for lease in self.leases {
            lease.give_back();
        }
    }
}

/// One dispatch as its workgroups see it.
struct Call {
    environment: *const abi::Environment,
    /// Its binding and constant pointers are set by
    /// [`Region::point_tables`] once the region is in place.
    state: DispatchState,
    function: abi::DispatchFn,
    export: usize,
    counts: [u32; 3],
    /// Where its bindings and constants start in the region's tables.
    first_binding: usize,
    first_constant: usize,
    /// The context's interrupt and deadline, checked before each workgroup.
    stop: StopCheck,
    /// The loading context's resources (kept busy after a stop), for a
    /// detached region only.
    resources: Option<ContextResources>,
    profile: Option<(Arc<Profile>, u32)>,
}

// SAFETY: a `Region` only hands its pointers (bindings, constants, tables,
// local memory slots, environments) to dispatch functions, which IREE's ABI
// lets run concurrently. What they point into is owned by the region
// (`Held`: executables, buffers with their leases; its tables and local
// memory; a region that is not detached holds no buffers, whose call keeps
// them and does not return before every workgroup has ended) and given
// back only once no workgroup runs or will run (`Region::end_work`,
// `release_here`), and participant `k` only uses local memory slot `k`.
unsafe impl Sync for Region {}
// SAFETY: as above; the raw pointers are into memory the region owns or
// holds, valid from any thread.
unsafe impl Send for Region {}

/// A run of one dispatch's workgroups on one worker while profiled,
/// recorded as one batch when it ends.
struct Batch {
    /// The dispatch's index in the region.
    dispatch: usize,
    start: u64,
    workgroups: u64,
}

impl Region {
    /// An empty region of `total` workgroups for a pool of `workers`
    /// (filled in place by [`Region::take`]: it is large, and a region
    /// made and then moved would be copied each time).
    fn empty(total: u64, workers: usize, detached: bool) -> Region {
        Region {
            calls: SmallVec::new(),
            starts: SmallVec::new(),
            total,
            chunk: (total / (workers as u64 * 16)).clamp(1, 64),
            next: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            first_error: Mutex::new(None),
            ends: SmallVec::new(),
            idle_since: SmallVec::new(),
            ptrs: SmallVec::new(),
            lengths: SmallVec::new(),
            constants: SmallVec::new(),
            local: SmallVec::new(),
            detached,
            running: AtomicUsize::new(0),
            ending: AtomicU8::new(WAITING),
            end_lock: Mutex::new(Some(Held {
                code: SmallVec::new(),
                buffers: SmallVec::new(),
                leases: SmallVec::new(),
                charges: SmallVec::new(),
                background: SmallVec::new(),
            })),
            end: Condvar::new(),
            parked: AtomicBool::new(false),
        }
    }

    /// Takes `dispatches` into this empty region, for a pool of `workers`
    /// with local memory for `slots` participants: their executables,
    /// constants and bindings taken, the bindings' leases taken, local
    /// memory charged and allocated. On an error what was taken is given
    /// back.
    fn take(
        &mut self,
        dispatches: &[PreparedDispatch<'_>],
        stops: SmallVec<[StopCheck; 4]>,
        workers: usize,
        slots: usize,
    ) -> Result<(), Trap> {
        let result = self.fill(dispatches, stops, workers, slots);
        if result.is_err() {
            let held = self.end_lock.get_mut().unwrap_or_else(|e| e.into_inner());
            if let Some(h) = held.take() {
                h.give_back();
            }
        }
        result
    }

    fn fill(
        &mut self,
        dispatches: &[PreparedDispatch<'_>],
        stops: SmallVec<[StopCheck; 4]>,
        workers: usize,
        slots: usize,
    ) -> Result<(), Trap> {
        let profiled = dispatches.iter().any(|d| d.profile.is_some());
        let region = self;
        let held = region
            .end_lock
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .ok_or_else(|| Trap::new(StatusCode::Internal, "a region filled twice"))?;
        if profiled {
            region
                .ends
                .extend((0..dispatches.len()).map(|_| AtomicU64::new(0)));
            region
                .idle_since
                .extend((0..slots).map(|_| AtomicU64::new(0)));
        }
        let mut sum = 0u64;
        let detached = region.detached;
        for (d, stop) in dispatches.iter().zip(stops) {
            region.starts.push(sum);
            sum += d.workgroups();
            // Bindings: kept alive, leased (each allocation once: views of
            // one transient buffer several dispatches write parts of), and
            // their bytes' places recorded.
            let first_binding = region.ptrs.len();
            for (i, r) in d.bindings.iter().enumerate() {
                // (`prepare` checked them: this fails on nothing.)
                let (b, offset, length) = r.checked(i)?;
                if b.is_mutable() && !held.leases.iter().any(|l| l.covers(b)) {
                    let mut wait = || stop.check();
                    if let Some(lease) = b.lease_for_native_region(&mut wait)? {
                        held.leases.push(lease);
                    }
                }
                let raw = b.raw_bytes();
                // SAFETY: `checked` proved `offset + length` within the
                // buffer's `raw.len` bytes.
                region
                    .ptrs
                    .push(unsafe { raw.ptr.add(offset) }.cast::<c_void>());
                region.lengths.push(length);
                if detached {
                    // (Else the caller's command buffer keeps it for the
                    // region's length.)
                    held.buffers.push(b.clone());
                }
            }
            let first_constant = region.constants.len();
            region.constants.extend_from_slice(d.constants);
            let bytes = d.local_memory();
            if bytes > 0 {
                held.charges.push(d.resources.charge_memory(
                    (bytes * slots) as u64,
                    "a dispatch's workgroup local memory",
                )?);
            }
            region.local.push(LocalMemory::new(bytes, slots)?);
            let mut call = d.call(stop, workers);
            call.first_binding = first_binding;
            call.first_constant = first_constant;
            call.resources = detached.then(|| d.resources.clone());
            region.calls.push(call);
            held.code.push(d.code.clone());
        }
        region.starts.push(sum);
        Ok(())
    }

    /// Points each dispatch state at its bindings and constants in the
    /// region's tables, once the region is where it stays (they may be
    /// inline in it).
    fn point_tables(&mut self) {
        let ptrs = self.ptrs.as_ptr();
        let lengths = self.lengths.as_ptr();
        let constants = self.constants.as_ptr();
        for call in &mut self.calls {
            // SAFETY: `first_binding` and `first_constant` are offsets of
            // this dispatch's entries in the tables (at most their length,
            // pointing one past the end only for a dispatch with none).
            unsafe {
                call.state.binding_ptrs = ptrs.add(call.first_binding);
                call.state.binding_lengths = lengths.add(call.first_binding);
                call.state.constants = if call.state.constant_count == 0 {
                    std::ptr::null()
                } else {
                    constants.add(call.first_constant)
                };
            }
        }
    }

    /// The stop the caller should answer now: an interrupt (taken) or a
    /// deadline past, on any dispatch's context.
    fn stop_requested(&self) -> Option<Trap> {
        self.calls.iter().find_map(|c| c.stop.check().err())
    }

    /// `t` (a stop) naming the dispatch whose workgroups were being handed
    /// out.
    fn stop_error(&self, t: Trap) -> Trap {
        let at = self.next.load(Ordering::Relaxed).min(self.total - 1);
        let d = self.starts.partition_point(|&s| s <= at) - 1;
        let held = self.end_lock.lock().unwrap_or_else(|e| e.into_inner());
        match held.as_ref() {
            Some(h) => {
                let name = &h.code[d].exports[self.calls[d].export].name;
                Trap::new(t.code, format!("dispatch `{name}`: {}", t.message))
            }
            None => t,
        }
    }

    /// The caller's return on a stop (`stop`, or the error a worker
    /// recorded): no workgroup is handed out any more, and those running
    /// end in the background with the loading contexts kept busy.
    fn leave(&self, stop: Option<Trap>) -> Result<DispatchEnds, Trap> {
        self.failed.store(true, Ordering::SeqCst);
        let error = match stop {
            Some(t) => self.stop_error(t),
            None => match self.finish() {
                Err(t) => t,
                Ok(_) => Trap::new(StatusCode::Cancelled, "stopped"),
            },
        };
        let mut held = self.end_lock.lock().unwrap_or_else(|e| e.into_inner());
        match self.ending.load(Ordering::Acquire) {
            WAITING if self.running.load(Ordering::SeqCst) > 0 => {
                // The last worker out gives back (`end_work`).
                if let Some(h) = held.as_mut() {
                    h.background.extend(self.calls.iter().filter_map(|c| {
                        c.resources.as_ref().map(ContextResources::begin_background)
                    }));
                }
                self.ending.store(GONE, Ordering::Release);
            }
            _ => {
                // Nothing runs: a thread that enters now sees `failed` and
                // touches nothing. Given back here, on the lending thread.
                self.ending.store(RELEASED, Ordering::Release);
                if let Some(h) = held.take() {
                    drop(held);
                    h.give_back();
                }
            }
        }
        Err(error)
    }

    /// Gives back what the region holds, on the calling thread (its run
    /// goes on): the region ended, or never started.
    fn release_here(&self) {
        let mut held = self.end_lock.lock().unwrap_or_else(|e| e.into_inner());
        self.ending.store(RELEASED, Ordering::Release);
        // Given back and dropped where it is (it is large: moving it out
        // copied it).
        if let Some(h) = held.as_mut() {
            for lease in h.leases.drain(..) {
                lease.give_back();
            }
        }
        *held = None;
    }

    /// A participant leaves [`Region::work`]: the last one out of a
    /// detached region ends it (tells the waiting caller, or gives back
    /// what the region holds when the caller has gone).
    fn end_work(&self) {
        if self.running.fetch_sub(1, Ordering::SeqCst) != 1 || !self.detached {
            return;
        }
        let mut held = self.end_lock.lock().unwrap_or_else(|e| e.into_inner());
        match self.ending.load(Ordering::Acquire) {
            WAITING => {
                self.ending.store(DONE, Ordering::Release);
                // A syscall: only when the caller has parked (it sets
                // `parked` under the lock before it waits).
                if self.parked.load(Ordering::SeqCst) {
                    self.end.notify_all();
                }
            }
            GONE => {
                self.ending.store(RELEASED, Ordering::Release);
                // Dropped: leases freed (the caller's run is over or no
                // longer counts on them), contexts no longer busy.
                let h = held.take();
                drop(held);
                drop(h);
            }
            _ => {}
        }
    }

    /// Participant `worker`'s loop: takes workgroups until none is left or
    /// one failed (or the call stopped).
    fn work(&self, worker: usize) {
        self.running.fetch_add(1, Ordering::SeqCst);
        let _flush = FlushDenormals::begin();
        let processor = processor_id();
        let mut d = 0usize;
        let mut batch: Option<Batch> = None;
        let mut last_end = 0u64;
        'take: while !self.failed.load(Ordering::SeqCst) {
            let first = self.next.fetch_add(self.chunk, Ordering::SeqCst);
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
                if let Some((profile, _)) = &call.profile {
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
                let result = call.run_one([x, y, z], self.local[d].slot(worker), processor);
                if let Some((profile, _)) = &call.profile {
                    last_end = profile.now_ns();
                    self.ends[d].fetch_max(last_end, Ordering::Relaxed);
                }
                if let Err(t) = result {
                    self.fail(i, t);
                    break 'take;
                }
                if self.failed.load(Ordering::Relaxed) {
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
        self.end_work();
    }

    /// Records `batch`, ended at `end`, on the calling thread's track.
    fn end_batch(&self, batch: Option<Batch>, end: u64) {
        if let Some(b) = batch {
            if let Some((profile, site)) = &self.calls[b.dispatch].profile {
                profile.batch(*site, b.start, end.max(b.start), b.workgroups);
            }
        }
    }

    fn fail(&self, workgroup: u64, trap: Trap) {
        self.failed.store(true, Ordering::SeqCst);
        let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
        if first.as_ref().is_none_or(|(at, _)| workgroup < *at) {
            *first = Some((workgroup, trap));
        }
    }

    /// The region's barrier while profiled: from the first worker out of
    /// work to now (the join), on the site of the dispatch that ended last.
    fn record_barrier(&self, workers: usize) {
        if self.ends.is_empty() {
            return;
        }
        let mut first_idle = u64::MAX;
        let mut idle = 0usize;
        for e in &self.idle_since {
            let at = e.load(Ordering::Relaxed);
            if at > 0 {
                first_idle = first_idle.min(at);
                idle += 1;
            }
        }
        let last = (0..self.calls.len())
            .max_by_key(|&d| self.ends[d].load(Ordering::Relaxed))
            .and_then(|d| self.calls[d].profile.as_ref());
        if let (true, Some((profile, site))) = (idle > 0, last) {
            let unused = workers.saturating_sub(idle) as u64;
            profile.barrier(*site, first_idle, profile.now_ns(), unused);
        }
    }

    /// The region's outcome: the first failure in recording order, named
    /// by its dispatch; else each dispatch's end while profiled.
    fn finish(&self) -> Result<DispatchEnds, Trap> {
        let failure = self
            .first_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((workgroup, t)) = failure {
            let d = self.starts.partition_point(|&s| s <= workgroup) - 1;
            let held = self.end_lock.lock().unwrap_or_else(|e| e.into_inner());
            let message = match held.as_ref() {
                Some(h) => format!(
                    "dispatch `{}`: {}",
                    h.code[d].exports[self.calls[d].export].name, t.message
                ),
                None => t.message,
            };
            return Err(Trap::new(t.code, message));
        }
        Ok(self
            .ends
            .iter()
            .map(|e| e.load(Ordering::Relaxed))
            .collect())
    }
}

impl DetachedJob for Region {
    fn run(&self, index: usize) {
        self.work(index);
    }

    fn finished(&self) -> bool {
        self.failed.load(Ordering::SeqCst) || self.next.load(Ordering::SeqCst) >= self.total
    }
}

impl Call {
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
        // SAFETY: the function is an export of a loaded library the region
        // holds, called with its environment, a dispatch state whose
        // binding pointers and lengths describe buffers the region holds
        // and has leased, and workgroup state with exclusive local memory
        // of the declared size.
        let ret = unsafe { (self.function)(self.environment, &self.state, &workgroup) };
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

/// 64-byte-aligned workgroup local memory of one dispatch, one slot per
/// participant (no allocation when the dispatch declares none).
struct LocalMemory {
    lines: Vec<Line>,
    /// `lines`' first byte (the heap allocation does not move).
    base: *mut u8,
    stride: usize,
    bytes: usize,
    slots: usize,
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
        let mut lines = vec![Line([0; 64]); n];
        let base = lines.as_mut_ptr().cast::<u8>();
        Ok(LocalMemory {
            lines,
            base,
            stride: per_slot * 64,
            bytes,
            slots,
        })
    }

    /// Participant `k`'s slot.
    fn slot(&self, k: usize) -> (*mut u8, usize) {
        if self.bytes == 0 || k >= self.slots || self.lines.is_empty() {
            return (std::ptr::null_mut(), 0);
        }
        // SAFETY: `k < slots`, so the slot lies within the allocation.
        (unsafe { self.base.add(k * self.stride) }, self.bytes)
    }
}
