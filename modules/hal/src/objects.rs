//! The HAL's objects as bytecode sees them (`!hal.device`, `!hal.allocator`,
//! `!hal.buffer`, `!hal.buffer_view`, `!hal.fence`) and the typed
//! [`BufferView`] constructors a Rust embedder uses.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use super::device::DeviceConfig;

use irvm::{Buffer, HostRef, Ref, StatusCode, Trap, Value};

use super::element::ElementType;

/// Ref type names the module defines.
pub mod type_names {
    /// `!hal.allocator`
    pub const ALLOCATOR: &str = "hal.allocator";
    /// `!hal.buffer`
    pub const BUFFER: &str = "hal.buffer";
    /// `!hal.buffer_view`
    pub const BUFFER_VIEW: &str = "hal.buffer_view";
    /// `!hal.channel`
    pub const CHANNEL: &str = "hal.channel";
    /// `!hal.command_buffer`
    pub const COMMAND_BUFFER: &str = "hal.command_buffer";
    /// `!hal.device`
    pub const DEVICE: &str = "hal.device";
    /// `!hal.event`
    pub const EVENT: &str = "hal.event";
    /// `!hal.executable`
    pub const EXECUTABLE: &str = "hal.executable";
    /// `!hal.fence`
    pub const FENCE: &str = "hal.fence";
    /// `!hal.file`
    pub const FILE: &str = "hal.file";
    /// `!hal.semaphore`
    pub const SEMAPHORE: &str = "hal.semaphore";
    /// Every name above.
    pub const ALL: &[&str] = &[
        ALLOCATOR,
        BUFFER,
        BUFFER_VIEW,
        CHANNEL,
        COMMAND_BUFFER,
        DEVICE,
        EVENT,
        EXECUTABLE,
        FENCE,
        FILE,
        SEMAPHORE,
    ];
}

/// A hal object type: its name and its registered id, looked up once (the
/// hal makes several objects per call; [`HostRef::new`] would look the
/// name up each time).
pub struct HalType {
    name: &'static str,
    id: std::sync::OnceLock<irvm::RefType>,
}

impl HalType {
    const fn new(name: &'static str) -> HalType {
        HalType {
            name,
            id: std::sync::OnceLock::new(),
        }
    }

    /// The type's id, registered on first use.
    pub fn id(&self) -> irvm::RefType {
        *self.id.get_or_init(|| irvm::RefType::named(self.name))
    }

    /// A new object of this type holding `value`.
    pub fn object<T: Send + Sync + 'static>(&self, value: T) -> HostRef<T> {
        HostRef::of_type(self.id(), value)
    }
}

/// The hal types objects are made of, per call.
pub mod hal_types {
    use super::{type_names, HalType};
    /// `!hal.allocator`
    pub static ALLOCATOR: HalType = HalType::new(type_names::ALLOCATOR);
    /// `!hal.buffer`
    pub static BUFFER: HalType = HalType::new(type_names::BUFFER);
    /// `!hal.buffer_view`
    pub static BUFFER_VIEW: HalType = HalType::new(type_names::BUFFER_VIEW);
    /// `!hal.channel`
    pub static CHANNEL: HalType = HalType::new(type_names::CHANNEL);
    /// `!hal.command_buffer`
    pub static COMMAND_BUFFER: HalType = HalType::new(type_names::COMMAND_BUFFER);
    /// `!hal.device`
    pub static DEVICE: HalType = HalType::new(type_names::DEVICE);
    /// `!hal.executable`
    pub static EXECUTABLE: HalType = HalType::new(type_names::EXECUTABLE);
    /// `!hal.fence`
    pub static FENCE: HalType = HalType::new(type_names::FENCE);
    /// `!hal.file`
    pub static FILE: HalType = HalType::new(type_names::FILE);
}

/// The CPU device: every queue operation runs when it is submitted;
/// dispatches of native executables run on the calling thread
/// (`local-sync`) or over a worker pool (`local-task`), as its
/// [`DeviceConfig`] says.
pub struct Device {
    /// The device's one allocator.
    pub allocator: HostRef<Allocator>,
    /// Sync or task, workers, and which executables it loads.
    pub config: Arc<DeviceConfig>,
}

impl Device {
    /// A device with its allocator.
    pub fn new(config: Arc<DeviceConfig>) -> HostRef<Device> {
        hal_types::DEVICE.object(Device {
            allocator: hal_types::ALLOCATOR.object(Allocator::new()),
            config,
        })
    }

    /// `hal.device.query.i64`: the value of `category`/`key`, if the device
    /// knows it.
    pub fn query_i64(&self, category: &str, key: &str) -> Option<i64> {
        match (category, key) {
            ("hal.device.id", pattern) => {
                Some(glob_match(pattern, self.config.options.identifier()) as i64)
            }
            ("hal.executable.format", format) => {
                Some(super::executable::supports_format(&self.config, format) as i64)
            }
            ("hal.device", "concurrency") => Some(1),
            ("hal.dispatch", "concurrency") => Some(self.config.options.concurrency() as i64),
            ("hal.cpu", feature) => super::native::cpu::feature(feature),
            _ => None,
        }
    }
}

/// Whether `text` matches `pattern` with `*` (any run) and `?` (any one
/// character), as IREE's device-id queries do.
fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|k| go(rest, &t[k..])),
            Some((b'?', rest)) => !t.is_empty() && go(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

/// The device allocator: host memory, 64-byte aligned
/// ([`irvm::BUFFER_ALIGNMENT`]), recycling the memory of freed buffers of
/// the same length ([`irvm::BufferPool`], up to [`Allocator::POOL_BYTES`]
/// kept): a program that allocates the same tensors on every call pays
/// for fresh zeroed pages once, as IREE's allocator reuses freed blocks.
pub struct Allocator {
    pool: irvm::BufferPool,
}

impl Default for Allocator {
    fn default() -> Allocator {
        Allocator::new()
    }
}

impl Allocator {
    /// Most bytes of freed buffers kept for reuse (not charged to the
    /// context's budget: the memory of buffers it no longer holds).
    pub const POOL_BYTES: usize = 256 << 20;

    /// An allocator with an empty pool (one per device: recycled memory
    /// holds only this device's own earlier data).
    pub fn new() -> Allocator {
        Allocator {
            pool: irvm::BufferPool::new(Self::POOL_BYTES),
        }
    }

    /// A buffer of `length` bytes, at most the context's
    /// `max_buffer_bytes`, charged to the context's memory budget
    /// ([`irvm::ContextResources::charge_memory`]). Its contents are
    /// undefined, as in IREE: zeros when fresh, a freed buffer's bytes
    /// when recycled.
    pub fn allocate(
        &self,
        length: i64,
        resources: &irvm::ContextResources,
    ) -> Result<HalBuffer, Trap> {
        let max_bytes = Some(resources.max_buffer_bytes());
        let len = usize::try_from(length).map_err(|_| {
            Trap::new(
                StatusCode::InvalidArgument,
                format!("failed to allocate buffer of length {length}"),
            )
        })?;
        if let Some(max) = max_bytes.filter(|&m| len as u64 > m) {
            return Err(Trap::new(
                StatusCode::ResourceExhausted,
                format!("hal buffer of {len} bytes exceeds the limit of {max} bytes"),
            ));
        }
        // (No formatted description: this runs on every allocation; the
        // error names the size itself.)
        let charge = resources.charge_memory(len as u64, "a hal allocation")?;
        let storage = Ref::from(self.pool.allocate(len)?);
        Ok(HalBuffer {
            storage,
            offset: 0,
            length: len as u64,
            charge: Some(std::sync::Arc::new(charge)),
        })
    }
}

/// A `!hal.buffer`: a byte range of a `!vm.buffer` (its own allocation, a
/// subspan of another buffer's, or imported rodata, zero-copy).
#[derive(Clone)]
pub struct HalBuffer {
    /// The memory (a `Ref::Buffer`).
    pub storage: Ref,
    /// Byte offset of this buffer inside `storage`.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// The allocation's charge to the context's memory budget (`None` for memory
    /// the hal did not allocate: imports, embedder tensors). It stays with
    /// the `!hal.buffer` and its subspans, not with the `!vm.buffer`: an
    /// embedder that keeps a result's storage past the call (the Python
    /// package's arrays) no longer counts against the context.
    pub charge: Option<std::sync::Arc<irvm::MemoryCharge>>,
}

impl HalBuffer {
    /// A buffer over all of `storage` (a `!vm.buffer`), not counted.
    pub fn over(storage: Ref) -> Result<HalBuffer, Trap> {
        let length = storage.buffer("hal buffer storage")?.len() as u64;
        Ok(HalBuffer {
            storage,
            offset: 0,
            length,
            charge: None,
        })
    }

    /// The bytes `offset..offset+length` of this buffer as a `!vm.buffer`
    /// view (no copy); `length` -1 means "to the end".
    pub fn vm_view(&self, offset: u64, length: i64) -> Result<Ref, Trap> {
        let (start, len) = self.range(offset, length)?;
        self.storage_view(start, len)
    }

    /// The bytes `start..start+len` of this buffer's storage (an absolute
    /// range [`HalBuffer::range`] checked) as a `!vm.buffer` view.
    pub fn storage_view(&self, start: u64, len: u64) -> Result<Ref, Trap> {
        let parent = self.storage.buffer("hal buffer storage")?;
        let view = Buffer::view(parent, start as usize, len as usize)?;
        Ok(Ref::from(view))
    }

    /// The absolute storage range of `offset..offset+length` (-1: to the
    /// end), checked against this buffer's length.
    pub fn range(&self, offset: u64, length: i64) -> Result<(u64, u64), Trap> {
        let (start, len) = span_within(self.length, offset, length)?;
        Ok((self.offset + start, len))
    }

    /// A subspan sharing this buffer's memory.
    pub fn subspan(&self, offset: u64, length: i64) -> Result<HalBuffer, Trap> {
        let (start, len) = self.range(offset, length)?;
        Ok(HalBuffer {
            storage: self.storage.clone(),
            offset: start,
            length: len,
            charge: self.charge.clone(),
        })
    }

    /// A copy of the buffer's bytes.
    pub fn to_vec(&self) -> Result<Vec<u8>, Trap> {
        let b = self.storage.buffer("hal buffer storage")?;
        let (s, l) = (self.offset as usize, self.length as usize);
        b.with_bytes(|bytes| bytes.get(s..s + l).map(|x| x.to_vec()))
            .ok_or_else(|| Trap::new(StatusCode::OutOfRange, "buffer storage too small"))
    }

    /// Runs `f` over the buffer's bytes, mutably (fails on read-only
    /// imported memory).
    pub fn with_bytes_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> Result<R, Trap> {
        let b = self.storage.buffer("hal buffer storage")?;
        let (s, l) = (self.offset as usize, self.length as usize);
        b.with_bytes_mut(|bytes| bytes.get_mut(s..s + l).map(f))?
            .ok_or_else(|| Trap::new(StatusCode::OutOfRange, "buffer storage too small"))
    }
}

/// `offset..offset+length` (-1: to the end) of a range of `total` bytes,
/// checked: the range's offset and length, relative to its start.
pub fn span_within(total: u64, offset: u64, length: i64) -> Result<(u64, u64), Trap> {
    let len = if length == -1 {
        total.checked_sub(offset)
    } else {
        u64::try_from(length).ok()
    };
    match len {
        Some(len) if offset.checked_add(len).is_some_and(|e| e <= total) => Ok((offset, len)),
        _ => Err(Trap::new(
            StatusCode::OutOfRange,
            format!(
                "byte range out of bounds (offset {offset}, length {length}) of a \
                 buffer of {total} bytes"
            ),
        )),
    }
}

/// A `!hal.buffer_view`: a buffer with a shape, an element type and an
/// encoding (1 = dense row-major).
#[derive(Clone)]
pub struct BufferView {
    /// The buffer (a `!hal.buffer` object).
    pub buffer: HostRef<HalBuffer>,
    /// Dimensions, outermost first.
    pub shape: Vec<i64>,
    /// Element type.
    pub element_type: ElementType,
    /// Encoding type.
    pub encoding: u32,
}

/// Rust element types a [`BufferView`] can be built from and read back as.
pub trait Element: Copy + 'static {
    /// The HAL element type.
    const TYPE: ElementType;
    /// Little-endian bytes.
    fn write(self, out: &mut Vec<u8>);
    /// From little-endian bytes (`TYPE.byte_size()` of them).
    fn read(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $e:expr) => {
        impl Element for $t {
            const TYPE: ElementType = $e;
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn read(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&bytes[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
        }
    };
}
element!(f32, ElementType::F32);
element!(f64, ElementType::F64);
element!(i8, ElementType::I8);
element!(i16, ElementType::I16);
element!(i32, ElementType::I32);
element!(i64, ElementType::I64);
element!(u8, ElementType::new(0x12, 8));
element!(u16, ElementType::new(0x12, 16));
element!(u32, ElementType::new(0x12, 32));
element!(u64, ElementType::new(0x12, 64));

impl BufferView {
    /// A view of `bytes` (dense row-major) with `shape` and `element_type`;
    /// the byte count must match.
    pub fn from_bytes(
        shape: &[i64],
        element_type: ElementType,
        bytes: Vec<u8>,
    ) -> Result<BufferView, Trap> {
        let want = view_byte_size(shape, element_type)?;
        if want != bytes.len() as u64 {
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "{} bytes given for a {} tensor of {want} bytes",
                    bytes.len(),
                    shape_text(shape, element_type)
                ),
            ));
        }
        BufferView::written_by(shape, element_type, |b| {
            b.copy_from_slice(&bytes);
            Ok(())
        })
    }

    /// A view of a new buffer of `shape` and `element_type` (64-byte
    /// aligned, zeroed) whose bytes `write` fills in place: a large input
    /// takes its own size in memory, not twice it. RESOURCE_EXHAUSTED when
    /// the buffer cannot be allocated; `write`'s error is returned as is.
    pub fn written_by(
        shape: &[i64],
        element_type: ElementType,
        write: impl FnOnce(&mut [u8]) -> Result<(), Trap>,
    ) -> Result<BufferView, Trap> {
        let total = usize::try_from(view_byte_size(shape, element_type)?)
            .map_err(|_| Trap::new(StatusCode::InvalidArgument, "shape too large"))?;
        let storage = Buffer::new(total).map_err(|_| {
            Trap::new(
                StatusCode::ResourceExhausted,
                format!(
                    "cannot allocate {total} bytes for a {} tensor",
                    shape_text(shape, element_type)
                ),
            )
        })?;
        storage.with_bytes_mut(write)??;
        Ok(BufferView {
            buffer: hal_types::BUFFER.object(HalBuffer::over(Ref::from(storage))?),
            shape: shape.to_vec(),
            element_type,
            encoding: 1,
        })
    }

    /// A view holding `data` with `shape` (`BufferView::from_slice(&[4, 8], &x)`).
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<BufferView, Trap> {
        let mut bytes = Vec::with_capacity(std::mem::size_of_val(data));
        for &x in data {
            x.write(&mut bytes);
        }
        BufferView::from_bytes(shape, T::TYPE, bytes)
    }

    /// The elements as `T`, which must be the view's element type.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, Trap> {
        if T::TYPE != self.element_type {
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "buffer view holds {} elements, not {}",
                    self.element_type.name(),
                    T::TYPE.name()
                ),
            ));
        }
        let bytes = self.buffer.to_vec()?;
        let size = T::TYPE.byte_size();
        Ok(bytes.chunks_exact(size).map(T::read).collect())
    }

    /// This view as a VM value (a `!hal.buffer_view` ref) to pass to a
    /// function.
    pub fn into_value(self) -> Value {
        Value::Ref(hal_types::BUFFER_VIEW.object(self).into_ref())
    }

    /// The buffer view a VM value holds, if it holds one.
    pub fn from_value(value: &Value) -> Option<&BufferView> {
        value.as_ref().and_then(|r| r.downcast::<BufferView>())
    }

    /// Number of elements (product of the shape).
    pub fn element_count(&self) -> Result<u64, Trap> {
        element_count(&self.shape)
    }
}

/// The product of `shape`, checked.
pub fn element_count(shape: &[i64]) -> Result<u64, Trap> {
    shape.iter().try_fold(1u64, |acc, &d| {
        u64::try_from(d)
            .ok()
            .and_then(|d| acc.checked_mul(d))
            .ok_or_else(|| {
                Trap::new(
                    StatusCode::InvalidArgument,
                    format!("invalid shape {shape:?}"),
                )
            })
    })
}

/// Bytes a dense `shape` tensor of `element_type` takes, as IREE sizes a
/// buffer view (`iree_hal_buffer_compute_view_size`): sub-byte elements
/// packed (`4xi4` is 2 bytes, `3xi4` too), checked.
pub fn view_byte_size(shape: &[i64], element_type: ElementType) -> Result<u64, Trap> {
    element_type
        .packed_byte_count(element_count(shape)?)
        .ok_or_else(|| {
            Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "shape {} byte size overflows",
                    shape_text(shape, element_type)
                ),
            )
        })
}

/// `4x8xf32` (or `f32` for a scalar).
pub fn shape_text(shape: &[i64], element_type: ElementType) -> String {
    let mut s = String::new();
    for d in shape {
        s.push_str(&format!("{d}x"));
    }
    s.push_str(&element_type.name());
    s
}

/// A `!hal.fence`: signalled (or failed) once; the device is synchronous,
/// so every fence a queue operation signals is signalled before the
/// operation's call returns.
pub struct Fence {
    /// [`PENDING`], [`SIGNALLED`] or [`FAILED`] (then `failure` is set):
    /// read without a lock, since every host call that takes a fence asks
    /// (a mutex cost two atomic operations a query).
    state: AtomicU8,
    /// Why the fence failed.
    failure: OnceLock<(StatusCode, String)>,
    /// The timepoints IREE's fence would hold, one per semaphore: the
    /// semaphore this fence was made with, and for a join those of the
    /// joined fences besides (each semaphore once, as
    /// `iree_hal_fence_insert` merges them). Only their count is shown
    /// (iree.runtime prints a fence as `fence(N)`).
    semaphore: u64,
    joined: Vec<u64>,
}

/// The next semaphore identity a fence takes ([`Fence::semaphore`]).
static NEXT_SEMAPHORE: AtomicU64 = AtomicU64::new(1);

fn new_semaphore() -> u64 {
    NEXT_SEMAPHORE.fetch_add(1, Ordering::Relaxed)
}

const PENDING: u8 = 0;
const SIGNALLED: u8 = 1;
const FAILED: u8 = 2;

impl Fence {
    /// A pending fence (or a signalled one).
    pub fn new(signalled: bool) -> HostRef<Fence> {
        hal_types::FENCE.object(Fence {
            state: AtomicU8::new(if signalled { SIGNALLED } else { PENDING }),
            failure: OnceLock::new(),
            semaphore: new_semaphore(),
            joined: Vec::new(),
        })
    }

    /// A pending fence over the timepoints of `fences` (IREE's
    /// `hal.fence.join`: each semaphore once), and a semaphore of its own.
    pub fn joining(fences: &[HostRef<Fence>]) -> HostRef<Fence> {
        let mut joined: Vec<u64> = Vec::new();
        for f in fences {
            for s in f.semaphores() {
                if !joined.contains(&s) {
                    joined.push(s);
                }
            }
        }
        hal_types::FENCE.object(Fence {
            state: AtomicU8::new(PENDING),
            failure: OnceLock::new(),
            // (Never shown: a join's count is the joined fences' timepoints.)
            semaphore: 0,
            joined,
        })
    }

    /// The semaphores of this fence's timepoints.
    fn semaphores(&self) -> impl Iterator<Item = u64> + '_ {
        (self.semaphore != 0)
            .then_some(self.semaphore)
            .into_iter()
            .chain(self.joined.iter().copied())
    }

    /// How many timepoints IREE's fence would hold: 1 for a created
    /// fence, the distinct semaphores of the fences joined for a join
    /// (what iree.runtime prints, `fence(1)`).
    pub fn timepoint_count(&self) -> usize {
        self.semaphores().count()
    }

    /// Makes the fence pending again (through `&mut`: only a fence no one
    /// else holds is reset, for reuse).
    pub fn reset(&mut self) {
        *self.state.get_mut() = PENDING;
        self.failure = OnceLock::new();
        // A new fence's semaphore: joins of the old one keep the old.
        self.semaphore = new_semaphore();
        self.joined.clear();
    }

    /// Marks the fence signalled (a failed fence stays failed).
    pub fn signal(&self) {
        let _ =
            self.state
                .compare_exchange(PENDING, SIGNALLED, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Marks the fence failed with `code` (the first failure's message is
    /// the one kept).
    pub fn fail(&self, code: StatusCode, message: String) {
        let _ = self.failure.set((code, message));
        // (After the failure is set: a reader that sees FAILED finds it.)
        self.state.store(FAILED, Ordering::Release);
    }

    /// What this fence says once the async-external call that was to
    /// signal it has returned: signalled, failed (its status), or still
    /// pending, an error (a device here has finished all work before the
    /// call returns, so nothing will signal it later; IREE's tools would
    /// wait forever). Messages end as IREE's tools end theirs ("waiting on
    /// finish fence").
    pub fn outcome_after_call(&self) -> Result<(), (StatusCode, String)> {
        match self.status() {
            Some(Ok(())) => Ok(()),
            Some(Err((code, message))) => {
                Err((code, format!("{message}; waiting on finish fence")))
            }
            None => Err((
                StatusCode::FailedPrecondition,
                "the function returned without signalling its finish fence, and nothing else \
                 will; waiting on finish fence"
                    .into(),
            )),
        }
    }

    /// The outcome so far.
    pub fn status(&self) -> Option<Result<(), (StatusCode, String)>> {
        match self.state.load(Ordering::Acquire) {
            PENDING => None,
            SIGNALLED => Some(Ok(())),
            _ => Some(Err(self.failure.get().cloned().unwrap_or_else(|| {
                (StatusCode::Internal, "fence failed without a reason".into())
            }))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_count_their_timepoints_as_iree_does() {
        // A created fence has one timepoint (its semaphore at 1); a join
        // has those of the fences joined, each semaphore once
        // (`iree_hal_fence_insert` merges them).
        let a = Fence::new(false);
        let b = Fence::new(true);
        assert_eq!(a.timepoint_count(), 1);
        let both = Fence::joining(&[a.clone(), b.clone()]);
        assert_eq!(both.timepoint_count(), 2);
        assert_eq!(Fence::joining(&[a.clone(), a.clone()]).timepoint_count(), 1);
        assert_eq!(
            Fence::joining(&[both.clone(), b.clone()]).timepoint_count(),
            2
        );
        assert_eq!(Fence::joining(&[]).timepoint_count(), 0);
        // A fence made pending again is a new semaphore: a join of it and
        // of a join holding its old one counts both.
        let mut reused = Fence::new(false);
        let old = Fence::joining(&[reused.clone()]);
        reused.get_mut().expect("no one else holds it").reset();
        assert_eq!(Fence::joining(&[old, reused]).timepoint_count(), 2);
    }

    #[test]
    fn a_fence_failed_twice_keeps_the_first_failure_as_iree_does() {
        // (IREE's semaphores keep the first failure status and drop later
        // ones: `iree_hal_task_semaphore_fail`.)
        let fence = Fence::new(false);
        fence.fail(StatusCode::Aborted, "first".into());
        fence.fail(StatusCode::DataLoss, "second".into());
        fence.signal();
        assert_eq!(
            fence.status(),
            Some(Err((StatusCode::Aborted, "first".into())))
        );
        // A signalled fence failed later is failed.
        let fence = Fence::new(true);
        fence.fail(StatusCode::Cancelled, "late".into());
        assert_eq!(
            fence.status(),
            Some(Err((StatusCode::Cancelled, "late".into())))
        );
    }

    #[test]
    fn fences_signalled_failed_and_queried_from_many_threads_stay_consistent() {
        let codes = [
            StatusCode::Aborted,
            StatusCode::Cancelled,
            StatusCode::DataLoss,
            StatusCode::Internal,
        ];
        for round in 0..if cfg!(miri) { 4 } else { 200 } {
            let fence = Fence::new(false);
            std::thread::scope(|s| {
                for (i, code) in codes.iter().enumerate() {
                    let fence = &fence;
                    s.spawn(move || {
                        if (i + round) % 2 == 0 {
                            fence.signal();
                        }
                        fence.fail(*code, format!("{code:?}"));
                    });
                }
                // A reader sees pending, signalled, then failed, and every
                // failure it sees carries its own message.
                let fence = &fence;
                s.spawn(move || {
                    let mut failed = false;
                    for _ in 0..if cfg!(miri) { 20 } else { 1000 } {
                        match fence.status() {
                            None => assert!(!failed),
                            Some(Ok(())) => assert!(!failed, "failed, then signalled"),
                            Some(Err((code, message))) => {
                                failed = true;
                                assert_eq!(message, format!("{code:?}"));
                            }
                        }
                    }
                });
            });
            let Some(Err((code, message))) = fence.status() else {
                panic!("round {round}: not failed");
            };
            assert!(codes.contains(&code));
            assert_eq!(message, format!("{code:?}"), "round {round}");
        }
    }

    #[test]
    fn device_id_patterns() {
        assert!(glob_match("local*", "local-sync"));
        assert!(!glob_match("cuda*", "local-sync"));
        assert!(glob_match("*", ""));
    }

    #[test]
    fn from_slice_round_trips() {
        let v = BufferView::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(v.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert!(v.to_vec::<i32>().is_err());
        assert!(BufferView::from_slice(&[3], &[1.0f32]).is_err());
    }

    #[test]
    fn subspans_are_checked() {
        let limits = irvm::Limits {
            max_buffer_bytes: 24,
            max_memory_bytes: 40,
            ..irvm::Limits::default()
        };
        let ctx = irvm::Context::with_limits(&irvm::TypeRegistry::new(), limits);
        let memory = ctx.resources();
        let b = Allocator::new().allocate(16, memory).unwrap();
        assert!(Allocator::new().allocate(25, memory).is_err());
        let c = Allocator::new().allocate(24, memory).unwrap();
        assert_eq!(memory.memory_in_use(), 40);
        let Err(err) = Allocator::new().allocate(1, memory) else {
            panic!("allocation past the budget succeeded");
        };
        assert_eq!(err.code, StatusCode::ResourceExhausted);
        assert!(
            err.message.contains("a hal allocation needs 1 more bytes"),
            "{err}"
        );
        drop(c);
        assert_eq!(memory.memory_in_use(), 16);
        assert!(b.subspan(8, 8).is_ok());
        assert!(b.subspan(8, 9).is_err());
        assert_eq!(b.subspan(4, -1).unwrap().length, 12);
    }
}
