//! `!hal.command_buffer`: commands recorded by bytecode, replayed
//! synchronously when a queue executes the buffer (with a binding table for
//! the commands whose buffers are table slots).

use std::sync::{Mutex, OnceLock};

use irvm::{HostRef, StatusCode, Trap};

use super::executable::{Bindings, BoundRange, Dispatch, Executable, RegionDispatches};
use super::objects::{span_within, HalBuffer};

/// A buffer operand: a buffer, or slot `slot` of the binding table given
/// at execution; `offset`/`length` are relative to it (`length` -1: to
/// the end).
#[derive(Clone)]
pub struct BufferRef {
    /// Binding-table slot, used when `buffer` is `None`.
    pub slot: u32,
    /// A direct buffer.
    pub buffer: Option<HostRef<HalBuffer>>,
    /// Byte offset.
    pub offset: u64,
    /// Byte length, or -1 for the rest.
    pub length: i64,
}

/// One entry of a binding table: a buffer range (the buffer borrowed from
/// the execution's arguments).
#[derive(Clone)]
pub struct Binding<'a> {
    /// The buffer (`None`: an unbound slot).
    pub buffer: Option<&'a HalBuffer>,
    /// Byte offset.
    pub offset: u64,
    /// Byte length, or -1 for the rest.
    pub length: i64,
}

impl BufferRef {
    /// `length` bytes (-1: to the end) at `offset` of `buffer` itself (no
    /// binding-table slot).
    pub fn direct(buffer: HostRef<HalBuffer>, offset: u64, length: i64) -> BufferRef {
        BufferRef {
            slot: 0,
            buffer: Some(buffer),
            offset,
            length,
        }
    }

    /// The buffer range this operand names, given the execution's table.
    fn resolve(&self, table: &[Binding]) -> Result<HalBuffer, Trap> {
        let (buffer, start, length) = self.resolve_range(table)?;
        Ok(HalBuffer {
            storage: buffer.storage.clone(),
            offset: start,
            length,
            charge: buffer.charge.clone(),
        })
    }

    /// [`BufferRef::resolve`] borrowed: the buffer and the absolute range
    /// of its storage this operand names (no counts taken: what a
    /// dispatch's bindings need, on every execution).
    fn resolve_range<'t>(
        &'t self,
        table: &[Binding<'t>],
    ) -> Result<(&'t HalBuffer, u64, u64), Trap> {
        match &self.buffer {
            Some(b) => {
                let (start, len) = b.range(self.offset, self.length)?;
                Ok((b, start, len))
            }
            None => {
                let entry = table.get(self.slot as usize).ok_or_else(|| {
                    Trap::new(
                        StatusCode::OutOfRange,
                        format!(
                            "binding table slot {} out of range (the table has {} entries)",
                            self.slot,
                            table.len()
                        ),
                    )
                })?;
                let b = entry.buffer.as_ref().ok_or_else(|| {
                    Trap::new(
                        StatusCode::InvalidArgument,
                        format!("binding table slot {} is null", self.slot),
                    )
                })?;
                let (start, len) = b.range(entry.offset, entry.length)?;
                let (within, len) = span_within(len, self.offset, self.length)?;
                Ok((b, start + within, len))
            }
        }
    }
}

/// A recorded command.
pub enum Command {
    /// Fill `target` with a repeated 1/2/4/8-byte `pattern`.
    Fill {
        /// Destination.
        target: BufferRef,
        /// Pattern bits (low `pattern_length` bytes).
        pattern: u64,
        /// 1, 2, 4 or 8.
        pattern_length: u32,
    },
    /// Copy bytes into `target` from a host-side copy of the source data.
    Update {
        /// Destination.
        target: BufferRef,
        /// The bytes.
        data: Vec<u8>,
    },
    /// Copy `source` into `target` (same length).
    Copy {
        /// Source.
        source: BufferRef,
        /// Destination.
        target: BufferRef,
    },
    /// Run an executable's function over a workgroup grid.
    Dispatch {
        /// The executable.
        executable: HostRef<Executable>,
        /// Entry index.
        function: i64,
        /// Static workgroup counts, or where to read them at execution.
        workgroups: Workgroups,
        /// Push constants.
        constants: Vec<u32>,
        /// Bindings.
        bindings: Vec<BufferRef>,
        /// Where the recording call is in the program's source, when the
        /// program is profiled ([`irvm::ContextResources::call_site`]).
        location: Option<String>,
    },
    /// An execution barrier: the commands after it start only once those
    /// before it have finished. Dispatches between two barriers may run
    /// at once (IREE's compiler leaves the barrier out between
    /// independent dispatches).
    Barrier,
}

/// How a dispatch gets its workgroup counts.
pub enum Workgroups {
    /// Fixed at recording.
    Static([u32; 3]),
    /// Three u32 read from a buffer when the dispatch runs.
    Indirect(BufferRef),
}

/// A command buffer: recorded, finalized, then executed any number of
/// times.
pub struct CommandBuffer {
    /// The commands while recording.
    recording: Mutex<Vec<Command>>,
    /// The commands once finalized: read without a lock by every execute.
    finalized: OnceLock<Vec<Command>>,
    /// Binding-table size the buffer was created for.
    pub binding_capacity: u32,
}

impl CommandBuffer {
    /// An empty command buffer.
    pub fn new(binding_capacity: u32) -> CommandBuffer {
        CommandBuffer {
            recording: Mutex::new(Vec::new()),
            finalized: OnceLock::new(),
            binding_capacity,
        }
    }

    /// Appends `command` (an error once finalized).
    pub fn record(&self, command: Command) -> Result<(), Trap> {
        let mut commands = self.recording.lock().unwrap_or_else(|e| e.into_inner());
        if self.finalized.get().is_some() {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                "command buffer is finalized and cannot record more commands",
            ));
        }
        commands.push(command);
        Ok(())
    }

    /// Ends recording.
    pub fn finalize(&self) -> Result<(), Trap> {
        // (Under the recording lock: a `record` racing with this one
        // either lands before or finds the buffer finalized.)
        let mut commands = self.recording.lock().unwrap_or_else(|e| e.into_inner());
        if self.finalized.set(std::mem::take(&mut *commands)).is_err() {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                "command buffer is already finalized",
            ));
        }
        Ok(())
    }

    /// Runs every command in order against binding table `table` (the
    /// commands of a finalized buffer do not change: no lock is taken).
    /// Fills, updates and copies are charged to the caller's fuel
    /// ([`irvm::ContextResources::charge_bulk`]) before they run.
    pub fn execute(
        &self,
        table: &[Binding],
        resources: &irvm::ContextResources,
    ) -> Result<(), Trap> {
        let Some(commands) = self.finalized.get() else {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                "command buffer must be finalized before it is executed",
            ));
        };
        let profile = resources.profile();
        // The dispatches since the last barrier or transfer: they run
        // together when the next one comes (transfers keep their place in
        // the order: they end a region as a barrier does).
        let mut region = Region::new();
        for command in commands {
            match (command, &profile, transfer_name(command)) {
                (Command::Dispatch { .. }, ..) => region.push(command),
                (Command::Barrier, ..) => run_region(&mut region, table)?,
                (_, Some(p), Some(name)) => {
                    run_region(&mut region, table)?;
                    let start = p.now_ns();
                    // On the track even when it fails or is stopped part
                    // way (a deadline in a fill of gigabytes): the time it
                    // took, no bytes counted.
                    let done = run_transfer(command, table, resources);
                    p.transfer(name, start, p.now_ns(), *done.as_ref().unwrap_or(&0));
                    done?;
                }
                _ => {
                    run_region(&mut region, table)?;
                    run_transfer(command, table, resources)?;
                }
            }
        }
        run_region(&mut region, table)
    }
}

/// The dispatches recorded since the last barrier or transfer: a few,
/// held inline.
type Region<'a> = smallvec::SmallVec<[&'a Command; 8]>;

/// Runs the dispatches of `region` together
/// ([`super::executable::dispatch_region`]) and empties it.
fn run_region(region: &mut Region, table: &[Binding]) -> Result<(), Trap> {
    if region.is_empty() {
        return Ok(());
    }
    let mut dispatches = RegionDispatches::with_capacity(region.len());
    for command in region.drain(..) {
        if let Command::Dispatch {
            executable,
            function,
            workgroups,
            constants,
            bindings,
            location,
        } = command
        {
            let workgroups = match workgroups {
                Workgroups::Static(w) => *w,
                Workgroups::Indirect(r) => {
                    let bytes = r.resolve(table)?.subspan(0, 12)?.to_vec()?;
                    let at = |i: usize| {
                        u32::from_le_bytes([
                            bytes[4 * i],
                            bytes[4 * i + 1],
                            bytes[4 * i + 2],
                            bytes[4 * i + 3],
                        ])
                    };
                    [at(0), at(1), at(2)]
                }
            };
            // Pushed first and filled where it stays (the inline binding
            // list is a few hundred bytes: built apart, it was copied in).
            dispatches.push((
                &**executable,
                Dispatch {
                    function: *function,
                    workgroups,
                    constants,
                    bindings: Bindings::new(),
                    location: location.as_deref(),
                },
            ));
            let Some((_, dispatch)) = dispatches.last_mut() else {
                unreachable!("a dispatch was just pushed")
            };
            for (i, b) in bindings.iter().enumerate() {
                let (buf, offset, length) = b.resolve_range(table).map_err(|t| {
                    Trap::new(t.code, format!("dispatch binding {i}: {}", t.message))
                })?;
                dispatch.bindings.push(BoundRange {
                    buffer: &buf.storage,
                    offset,
                    length,
                });
            }
        }
    }
    super::executable::dispatch_region(&dispatches)
}

/// Fills `target` (a multiple of the pattern's length) with `pattern`
/// repeated: a `memset` when every byte of it is the same, else 64-byte
/// blocks of it copied (a copy per element made fills of zeros run at
/// 0.2 GB/s).
pub(crate) fn fill_pattern(target: &mut [u8], pattern: &[u8]) {
    if let Some(&first) = pattern.first() {
        if pattern.iter().all(|&b| b == first) {
            target.fill(first);
            return;
        }
    }
    let mut block = [0u8; 64];
    for chunk in block.chunks_exact_mut(pattern.len().max(1)) {
        chunk.copy_from_slice(pattern);
    }
    let mut blocks = target.chunks_exact_mut(64);
    for b in &mut blocks {
        b.copy_from_slice(&block);
    }
    let rest = blocks.into_remainder();
    let k = rest.len();
    rest.copy_from_slice(&block[..k]);
}

/// Copies `source`'s bytes over `target` (the same length) as memmove
/// (their storages may be one allocation, or two lent over the same
/// memory), without a copy of the whole source: in pieces, stopping
/// between them at the context's deadline or interrupt
/// ([`irvm::Buffer::copy_in_pieces`]).
fn copy_between(
    source: &HalBuffer,
    target: &HalBuffer,
    resources: &irvm::ContextResources,
) -> Result<(), Trap> {
    let from = source.storage.buffer("hal buffer storage")?;
    let to = target.storage.buffer("hal buffer storage")?;
    irvm::Buffer::copy_in_pieces(
        from,
        source.offset,
        to,
        target.offset,
        source.length,
        TRANSFER_CHUNK_BYTES as u64,
        || resources.check_stop(),
    )
}

/// Bytes a fill or copy moves between two looks at the context's
/// deadline and interrupt: one look per 8 MiB (about a millisecond of
/// memory bandwidth), so a single transfer of gigabytes stops within
/// milliseconds of its deadline. A multiple of 64, so the pieces of a fill
/// keep its pattern's phase.
const TRANSFER_CHUNK_BYTES: usize = 8 << 20;

/// Runs `work` over `0..len` in pieces of [`TRANSFER_CHUNK_BYTES`],
/// asking `stop` before each piece after the first (the caller asked
/// before the whole): its first error stops the rest.
fn in_stoppable_chunks(
    len: usize,
    mut stop: impl FnMut() -> Result<(), Trap>,
    mut work: impl FnMut(std::ops::Range<usize>),
) -> Result<(), Trap> {
    let mut start = 0;
    while start < len {
        if start > 0 {
            stop()?;
        }
        let end = len.min(start + TRANSFER_CHUNK_BYTES);
        work(start..end);
        start = end;
    }
    Ok(())
}

/// The profile's name of a transfer command (`None` for dispatches,
/// which the executable records itself).
fn transfer_name(command: &Command) -> Option<&'static str> {
    match command {
        Command::Fill { .. } => Some("fill"),
        Command::Update { .. } => Some("update"),
        Command::Copy { .. } => Some("copy"),
        Command::Dispatch { .. } | Command::Barrier => None,
    }
}

/// Runs one transfer command (fill, update, copy); returns the bytes it
/// wrote (0 for any other command, which is not run here).
fn run_transfer(
    command: &Command,
    table: &[Binding],
    resources: &irvm::ContextResources,
) -> Result<u64, Trap> {
    match command {
        Command::Fill {
            target,
            pattern,
            pattern_length,
        } => {
            let t = target.resolve(table)?;
            let n = *pattern_length as usize;
            if !matches!(n, 1 | 2 | 4 | 8) || t.length % n as u64 != 0 {
                return Err(Trap::new(
                    StatusCode::InvalidArgument,
                    format!(
                        "fill pattern length {n} must be 1, 2, 4 or 8 and divide the \
                         target length {}",
                        t.length
                    ),
                ));
            }
            let bytes = pattern.to_le_bytes();
            resources.charge_bulk(t.length)?;
            t.with_bytes_mut(|b| {
                in_stoppable_chunks(
                    b.len(),
                    || resources.check_stop(),
                    |range| fill_pattern(&mut b[range], &bytes[..n]),
                )
            })??;
            Ok(t.length)
        }
        Command::Update { target, data } => {
            let t = target.resolve(table)?.subspan(0, data.len() as i64)?;
            resources.charge_bulk(t.length)?;
            t.with_bytes_mut(|b| b.copy_from_slice(data))?;
            Ok(t.length)
        }
        Command::Copy { source, target } => {
            let s = source.resolve(table)?;
            resources.charge_bulk(s.length)?;
            let t = target.resolve(table)?.subspan(0, s.length as i64)?;
            copy_between(&s, &t, resources)?;
            Ok(t.length)
        }
        Command::Dispatch { .. } | Command::Barrier => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::{fill_pattern, Command, CommandBuffer};
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_buffer_recorded_and_finalized_from_several_threads_keeps_every_accepted_command() {
        let resources = irvm::ContextResources::detached();
        for round in 0..if cfg!(miri) { 3 } else { 100 } {
            let buffer = CommandBuffer::new(0);
            let accepted = AtomicUsize::new(0);
            let finalized = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..3 {
                    s.spawn(|| {
                        for _ in 0..if cfg!(miri) { 5 } else { 50 } {
                            if buffer.record(Command::Barrier).is_ok() {
                                accepted.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    });
                }
                for _ in 0..2 {
                    s.spawn(|| {
                        // Executing before the finalize is refused, never
                        // half-read.
                        let _ = buffer.execute(&[], &resources);
                        if buffer.finalize().is_ok() {
                            finalized.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                }
            });
            assert_eq!(finalized.load(Ordering::SeqCst), 1, "round {round}");
            let kept = buffer.finalized.get().map(Vec::len);
            assert_eq!(kept, Some(accepted.load(Ordering::SeqCst)), "round {round}");
            assert!(buffer.record(Command::Barrier).is_err());
            assert!(buffer.finalize().is_err());
            assert_eq!(
                buffer.finalized.get().map(Vec::len),
                kept,
                "a second finalize changed the commands"
            );
            buffer.execute(&[], &resources).unwrap();
        }
        let unfinished = CommandBuffer::new(0);
        unfinished.record(Command::Barrier).unwrap();
        let e = unfinished.execute(&[], &resources).unwrap_err();
        assert!(e.message.contains("must be finalized"), "{e}");
    }

    #[test]
    fn copies_between_buffers_and_within_one_buffer_overlapping() {
        use super::{BufferRef, HalBuffer};
        use irvm::{Buffer, HostRef, Ref};
        let resources = irvm::ContextResources::detached();
        let buffer_of = |bytes: Vec<u8>| {
            HostRef::new(
                "hal.buffer",
                HalBuffer::over(Ref::from(Buffer::from_vec(bytes))).unwrap(),
            )
        };
        let range = |b: &HostRef<HalBuffer>, offset: u64, length: i64| {
            BufferRef::direct(b.clone(), offset, length)
        };
        let run = |source: BufferRef, target: BufferRef| {
            let cb = CommandBuffer::new(0);
            cb.record(Command::Copy { source, target }).unwrap();
            cb.finalize().unwrap();
            cb.execute(&[], &resources)
        };
        // Two buffers: the source's range lands at the target's offset.
        let a = buffer_of((0..16).collect());
        let b = buffer_of(vec![0xEE; 16]);
        run(range(&a, 4, 8), range(&b, 2, 8)).unwrap();
        let mut want = vec![0xEE; 16];
        want[2..10].copy_from_slice(&(4..12).collect::<Vec<u8>>());
        assert_eq!(b.to_vec().unwrap(), want);
        // One buffer, overlapping ranges, both directions: as memmove.
        for (from, to) in [(0u64, 3u64), (5, 1)] {
            let c = buffer_of((0..16).collect());
            run(range(&c, from, 10), range(&c, to, 10)).unwrap();
            let mut want: Vec<u8> = (0..16).collect();
            want.copy_within(from as usize..from as usize + 10, to as usize);
            assert_eq!(c.to_vec().unwrap(), want, "{from} -> {to}");
        }
        // Past one piece: a fill keeps its pattern's phase across the
        // pieces, a copy lands whole.
        let len = super::TRANSFER_CHUNK_BYTES + 24;
        let big = buffer_of(vec![0; len]);
        let fill = CommandBuffer::new(0);
        fill.record(Command::Fill {
            target: range(&big, 0, -1),
            pattern: 0x0807_0605_0403_0201,
            pattern_length: 8,
        })
        .unwrap();
        fill.finalize().unwrap();
        fill.execute(&[], &resources).unwrap();
        let filled = big.to_vec().unwrap();
        assert!(filled
            .iter()
            .enumerate()
            .all(|(i, &b)| b as usize == i % 8 + 1));
        let copy = buffer_of(vec![0; len]);
        run(range(&big, 0, -1), range(&copy, 0, -1)).unwrap();
        assert!(copy.to_vec().unwrap() == filled);
        // A target shorter than the source is refused, nothing written.
        let d = buffer_of(vec![1; 4]);
        assert!(run(range(&a, 0, 8), range(&d, 0, -1)).is_err());
        assert_eq!(d.to_vec().unwrap(), vec![1; 4]);
    }

    #[test]
    fn copies_within_one_allocation_go_in_pieces_as_memmove_and_stop_between_them() {
        use super::{BufferRef, HalBuffer, TRANSFER_CHUNK_BYTES as C};
        use irvm::{Buffer, HostRef, Ref};
        let range = |b: &HostRef<HalBuffer>, offset: u64, length: i64| {
            BufferRef::direct(b.clone(), offset, length)
        };
        let run = |source: BufferRef, target: BufferRef, resources: &irvm::ContextResources| {
            let cb = CommandBuffer::new(0);
            cb.record(Command::Copy { source, target }).unwrap();
            cb.finalize().unwrap();
            cb.execute(&[], resources)
        };
        let numbered =
            |len: usize| -> Vec<u8> { (0..len).map(|i| (i * 7 + i / 251) as u8).collect() };
        let len = 3 * C + 100;
        let n = 2 * C + 37;
        let resources = irvm::ContextResources::detached();
        // Subspans of one buffer, overlapping, either way, past piece
        // boundaries: as memmove.
        for (from, to) in [(0, 4097), (4097, 0), (1, C + 3), (C + 3, 1), (9, 9)] {
            let b = HostRef::new(
                "hal.buffer",
                HalBuffer::over(Ref::from(Buffer::from_vec(numbered(len)))).unwrap(),
            );
            run(
                range(&b, from as u64, n as i64),
                range(&b, to as u64, n as i64),
                &resources,
            )
            .unwrap();
            let mut want = numbered(len);
            want.copy_within(from..from + n, to);
            assert!(b.to_vec().unwrap() == want, "{from} -> {to}");
        }
        // Two views of one allocation as the storages of two hal buffers.
        let root = std::sync::Arc::new(Buffer::from_vec(numbered(len)));
        let over_view = |at: usize| {
            let view = Buffer::view(&root, at, len - at).unwrap();
            HostRef::new("hal.buffer", HalBuffer::over(Ref::from(view)).unwrap())
        };
        let (sv, tv) = (over_view(1), over_view(9));
        run(range(&sv, 0, n as i64), range(&tv, 0, n as i64), &resources).unwrap();
        let mut want = numbered(len);
        want.copy_within(1..1 + n, 9);
        assert!(root.to_vec() == want);
        // An interrupt raised before the copy (after the caller's look,
        // `charge_bulk`): the first piece is done, the look before the
        // second stops it. The ranges are apart: front to back.
        let stopped = irvm::ContextResources::detached();
        stopped.interrupt_handle().interrupt();
        let mut bytes = vec![0xAB; n];
        bytes.resize(2 * n, 0);
        let b = HalBuffer::over(Ref::from(Buffer::from_vec(bytes))).unwrap();
        let (s, t) = (
            b.subspan(0, n as i64).unwrap(),
            b.subspan(n as u64, n as i64).unwrap(),
        );
        let e = super::copy_between(&s, &t, &stopped).unwrap_err();
        assert_eq!(e.code, irvm::StatusCode::Cancelled, "{e}");
        let got = t.to_vec().unwrap();
        assert!(got[..C].iter().all(|&x| x == 0xAB));
        assert!(got[C..].iter().all(|&x| x == 0));
    }

    #[test]
    fn copies_between_two_buffers_lent_over_the_same_memory_move_as_memmove() {
        // An embedder may lend one memory twice (the Python package makes
        // one buffer per argument, so `f(x, x)` or overlapping views of one
        // array are two allocations over the same bytes): a copy between
        // them, past piece boundaries, must still move as memmove does.
        use super::{HalBuffer, TRANSFER_CHUNK_BYTES as C};
        use irvm::{Buffer, Ref};
        use std::sync::{Arc, Mutex};
        let len = 3 * C + 256;
        let numbered =
            |len: usize| -> Vec<u8> { (0..len).map(|i| (i * 7 + i / 251) as u8).collect() };
        for (from, to) in [(0usize, 64usize), (64, 0)] {
            let memory = Arc::new(Mutex::new(numbered(len)));
            let ptr = memory.lock().unwrap().as_mut_ptr();
            let lend = |at: usize| {
                let owner: Arc<dyn std::any::Any + Send + Sync> = memory.clone();
                // SAFETY: `ptr + at` addresses `len - at` bytes of the vector,
                // which `owner` keeps alive and nothing else touches while
                // the buffers live (the test reads it after the copy).
                let b = unsafe { Buffer::foreign_mut(ptr.add(at), len - at, owner) };
                HalBuffer::over(Ref::from(b)).unwrap()
            };
            let n = len - 64;
            let (s, t) = (lend(from), lend(to));
            let (s, t) = (
                s.subspan(0, n as i64).unwrap(),
                t.subspan(0, n as i64).unwrap(),
            );
            super::copy_between(&s, &t, &irvm::ContextResources::detached()).unwrap();
            drop((s, t));
            let mut want = numbered(len);
            want.copy_within(from..from + n, to);
            assert!(*memory.lock().unwrap() == want, "{from} -> {to}");
        }
    }

    #[test]
    fn long_transfers_look_at_the_stop_between_pieces_and_end_at_the_first_no() {
        use super::{in_stoppable_chunks, TRANSFER_CHUNK_BYTES as C};
        let stopped = || Err(irvm::Trap::new(irvm::StatusCode::DeadlineExceeded, "late"));
        for (len, pieces) in [(0, 0), (1, 1), (C, 1), (C + 1, 2), (3 * C, 3)] {
            let mut seen = Vec::new();
            let mut asked = 0;
            in_stoppable_chunks(
                len,
                || {
                    asked += 1;
                    Ok(())
                },
                |r| seen.push(r),
            )
            .unwrap();
            assert_eq!(seen.len(), pieces, "{len}");
            assert_eq!(asked, pieces.saturating_sub(1), "{len}");
            // The pieces cover the range in order, each but the last whole.
            let mut next = 0;
            for r in &seen {
                assert_eq!(r.start, next);
                assert!(r.end - r.start == C || r.end == len);
                next = r.end;
            }
            assert_eq!(next, len);
        }
        // A stop on the second look: two pieces done, the rest not.
        let mut done = 0;
        let mut looks = 0;
        let e = in_stoppable_chunks(
            5 * C,
            || {
                looks += 1;
                if looks == 2 {
                    stopped()
                } else {
                    Ok(())
                }
            },
            |_| done += 1,
        )
        .unwrap_err();
        assert_eq!((done, e.code), (2, irvm::StatusCode::DeadlineExceeded));
    }

    #[test]
    fn fills_repeat_the_pattern_to_the_last_byte() {
        for pattern in [
            &[7u8][..],
            &[1, 2],
            &[0, 0, 0, 0],
            &[1, 2, 3, 4],
            &[9; 8],
            &[1, 2, 3, 4, 5, 6, 7, 8],
        ] {
            for len in [0usize, 8, 64, 72, 200, 1024] {
                let mut t = vec![0xAAu8; len];
                fill_pattern(&mut t, pattern);
                for (i, b) in t.iter().enumerate() {
                    assert_eq!(*b, pattern[i % pattern.len()], "{pattern:?} {len} at {i}");
                }
            }
        }
    }
}
