//! Reference-counted VM objects: byte buffers, lists, and objects of types
//! that host modules register. A [`Ref`] is a counted handle (or null);
//! cloning retains, dropping releases, and "move" operands transfer the
//! handle without touching the count.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::{Mutex, RwLockReadGuard};

use crate::loader::Module;
use crate::trap::{StatusCode, Trap};

/// Identity of a reference type. Built-in types have fixed ids; host types
/// get theirs from a process-wide registry by name ([`RefType::named`]),
/// so an id means the same type in every [`Instance`](crate::Instance).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefType(pub u32);

/// Names of the host-registered types, indexed by `id - FIRST_HOST`.
static HOST_TYPES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

impl RefType {
    /// `!vm.buffer`.
    pub const BUFFER: RefType = RefType(1);
    /// `!vm.list<...>`.
    pub const LIST: RefType = RefType(2);
    /// First id handed out to host-registered types.
    pub const FIRST_HOST: u32 = 16;

    /// The host type named `name` (without `!`, e.g. `env.counter`),
    /// registering it on first use.
    pub fn named(name: &str) -> RefType {
        if let Some(t) = RefType::lookup(name) {
            return t;
        }
        let mut types = HOST_TYPES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = types.iter().position(|t| t == name) {
            return RefType(RefType::FIRST_HOST + i as u32);
        }
        types.push(name.to_string());
        RefType(RefType::FIRST_HOST + types.len() as u32 - 1)
    }

    /// The type named `name` (without `!`), if built in or registered.
    pub fn lookup(name: &str) -> Option<RefType> {
        match name {
            "vm.buffer" => return Some(RefType::BUFFER),
            n if n.starts_with("vm.list") => return Some(RefType::LIST),
            _ => {}
        }
        let types = HOST_TYPES.lock().unwrap_or_else(|e| e.into_inner());
        types
            .iter()
            .position(|t| t == name)
            .map(|i| RefType(RefType::FIRST_HOST + i as u32))
    }

    /// The type's name (without `!`).
    pub fn name(self) -> String {
        match self {
            RefType::BUFFER => "vm.buffer".into(),
            RefType::LIST => "vm.list".into(),
            RefType(id) => {
                let types = HOST_TYPES.lock().unwrap_or_else(|e| e.into_inner());
                id.checked_sub(RefType::FIRST_HOST)
                    .and_then(|i| types.get(i as usize).cloned())
                    .unwrap_or_else(|| format!("type#{id}"))
            }
        }
    }
}

/// A primitive element type (of lists and variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// 8-bit integer.
    I8,
    /// 16-bit integer.
    I16,
    /// 32-bit integer.
    I32,
    /// 64-bit integer.
    I64,
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
}

/// What an entry of a module's type table denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeDef {
    /// A primitive type.
    Value(ValueType),
    /// A reference type.
    Ref(RefType),
    /// Any type (`!vm.opaque`, `?`): variant storage, no type checks.
    Any,
}

impl TypeDef {
    /// Whether `r` may be stored where this type is expected (null always
    /// may).
    #[inline]
    pub fn admits(self, r: &Ref) -> bool {
        match (self, r.ref_type()) {
            (_, None) | (TypeDef::Any, _) => true,
            (TypeDef::Ref(t), Some(u)) => t == u,
            _ => false,
        }
    }

    /// Checks that `r` may be stored where this type is expected (IREE's
    /// "retain or move checked": null always passes).
    #[inline]
    pub fn check_ref(self, r: &Ref) -> Result<(), Trap> {
        if self.admits(r) {
            Ok(())
        } else {
            Err(Trap::new(
                StatusCode::InvalidArgument,
                "source ref type mismatch",
            ))
        }
    }
}

/// A host object behind a reference of a host-registered type.
pub struct HostObject {
    ty: RefType,
    type_name: Arc<str>,
    value: Box<dyn Any + Send + Sync>,
}

impl HostObject {
    /// Wraps `value` as an object of registered type `ty` named `type_name`.
    /// Objects are shared by every holder of a ref, on any thread, hence
    /// `Send + Sync` (use atomics or a `Mutex` for state that changes).
    ///
    /// # Panics
    /// When `ty` is a built-in type (`!vm.buffer`, `!vm.list`): a host
    /// object must not pass type checks as one of those.
    pub fn new(
        ty: RefType,
        type_name: impl Into<Arc<str>>,
        value: Box<dyn Any + Send + Sync>,
    ) -> Self {
        let type_name = type_name.into();
        assert!(
            ty.0 >= RefType::FIRST_HOST,
            "a host object cannot have the built-in type `{type_name}`"
        );
        HostObject {
            ty,
            type_name,
            value,
        }
    }
    /// The object's type.
    pub fn ref_type(&self) -> RefType {
        self.ty
    }
    /// The registered name of the object's type.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }
    /// The wrapped value, if it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.value.downcast_ref()
    }
}

impl Ref {
    /// A new object of host type `type_name` (without `!`) holding `value`.
    ///
    /// # Panics
    /// When `type_name` names a built-in type (`vm.buffer`, `vm.list...`).
    pub fn host<T: Send + Sync + 'static>(type_name: &str, value: T) -> Ref {
        let ty = RefType::named(type_name);
        Ref::Host(Arc::new(HostObject::new(ty, type_name, Box::new(value))))
    }

    /// The host object's value, if this is a host object holding a `T`.
    pub fn downcast<T: 'static>(&self) -> Option<&T> {
        match self {
            Ref::Host(h) => h.downcast_ref(),
            _ => None,
        }
    }
}

/// A counted reference to a VM object, or null.
#[derive(Clone, Default)]
pub enum Ref {
    /// The null reference.
    #[default]
    Null,
    /// A `!vm.buffer`.
    Buffer(Arc<Buffer>),
    /// A `!vm.list`.
    List(Arc<List>),
    /// An object of a host-registered type.
    Host(Arc<HostObject>),
}

impl Ref {
    /// Whether this is the null reference.
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, Ref::Null)
    }

    /// The object's type, or `None` for null.
    #[inline]
    pub fn ref_type(&self) -> Option<RefType> {
        match self {
            Ref::Null => None,
            Ref::Buffer(_) => Some(RefType::BUFFER),
            Ref::List(_) => Some(RefType::LIST),
            Ref::Host(h) => Some(h.ty),
        }
    }

    /// Whether both refer to the same object (or both are null).
    pub fn ptr_eq(&self, other: &Ref) -> bool {
        match (self, other) {
            (Ref::Null, Ref::Null) => true,
            (Ref::Buffer(a), Ref::Buffer(b)) => Arc::ptr_eq(a, b),
            (Ref::List(a), Ref::List(b)) => Arc::ptr_eq(a, b),
            (Ref::Host(a), Ref::Host(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The buffer, or an error naming `what` when null or not a buffer.
    #[inline(always)]
    pub fn buffer(&self, what: &'static str) -> Result<&Arc<Buffer>, Trap> {
        match self {
            Ref::Buffer(b) => Ok(b),
            other => Err(other.not_a_buffer(what)),
        }
    }

    #[cold]
    #[inline(never)]
    fn not_a_buffer(&self, what: &'static str) -> Trap {
        let problem = if self.is_null() {
            "is null"
        } else {
            "is not a !vm.buffer"
        };
        Trap::new(StatusCode::InvalidArgument, format!("{what} {problem}"))
    }

    /// The list this is, if it is one (the interpreter's fast path; the
    /// errors come from [`Ref::list`]).
    #[inline]
    pub(crate) fn list_fast(&self) -> Option<&List> {
        match self {
            Ref::List(l) => Some(l),
            _ => None,
        }
    }

    /// The list, or an error when null or not a list.
    #[inline]
    pub fn list(&self) -> Result<&Arc<List>, Trap> {
        match self {
            Ref::List(l) => Ok(l),
            Ref::Null => Err(Trap::new(StatusCode::InvalidArgument, "list is null")),
            _ => Err(Trap::new(
                StatusCode::InvalidArgument,
                "list is not a !vm.list",
            )),
        }
    }

    /// Number of strong handles to the object (0 for null).
    pub fn ref_count(&self) -> usize {
        match self {
            Ref::Null => 0,
            Ref::Buffer(b) => Arc::strong_count(b),
            Ref::List(l) => Arc::strong_count(l),
            Ref::Host(h) => Arc::strong_count(h),
        }
    }
}

impl From<Buffer> for Ref {
    /// A new counted handle to `buffer`.
    fn from(buffer: Buffer) -> Ref {
        Ref::Buffer(Arc::new(buffer))
    }
}

impl From<List> for Ref {
    /// A new counted handle to `list`.
    fn from(list: List) -> Ref {
        Ref::List(Arc::new(list))
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ref::Null => f.write_str("(null)"),
            Ref::Buffer(b) => write!(f, "!vm.buffer[{}]", b.len()),
            Ref::List(l) => write!(f, "!vm.list[{}]", l.len()),
            Ref::Host(h) => write!(f, "!{}", h.type_name),
        }
    }
}

impl fmt::Debug for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

// ---------------------------------------------------------------------------
// Buffers

/// Who keeps a buffer's bytes alive.
enum Owner {
    /// A heap allocation of exactly `len` bytes (align 1) that the buffer
    /// frees on drop; nothing when `len` is 0 (the pointer is dangling).
    Heap,
    /// A module's file bytes (a rodata segment borrowed from the mapping).
    Module(#[allow(dead_code)] Module),
    /// An anonymous mapping (large buffers), unmapped on drop.
    Mapped(#[allow(dead_code)] memmap2::MmapMut),
    /// A heap allocation of exactly `len` bytes aligned to
    /// [`BUFFER_ALIGNMENT`] (`Buffer::new`), freed on drop.
    Aligned,
    /// A range of another buffer's bytes ([`Buffer::view`]); holding the
    /// root buffer (never itself a view) keeps them alive.
    View(Arc<Buffer>),
    /// Memory of a [`BufferPool`], given back to it on drop.
    Pooled(#[allow(dead_code)] PoolSlot),
}

/// Memory a [`BufferPool`] hands out: `len` zero-initialized (when fresh)
/// bytes aligned to [`BUFFER_ALIGNMENT`], on the heap or, when large, an
/// anonymous mapping.
struct Block {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    /// Keeps a large block mapped; `None`: a heap allocation of exactly
    /// `len` bytes, aligned, freed on drop.
    map: Option<memmap2::MmapMut>,
}

// SAFETY: a block exclusively owns its memory (heap allocation or
// mapping); the pointer is only used by the buffer that holds the block,
// under that buffer's lease rules.
unsafe impl Send for Block {}
// SAFETY: as above; `&Block` gives no access to the bytes.
unsafe impl Sync for Block {}

impl Block {
    /// Fresh zeroed memory, as [`Buffer::new`] allocates it (`len > 0`).
    fn fresh(len: usize) -> Result<Block, Trap> {
        let too_big = || {
            Trap::new(
                StatusCode::ResourceExhausted,
                format!("cannot allocate a buffer of {len} bytes"),
            )
        };
        if len >= MAPPED_BUFFER_BYTES && cfg!(not(miri)) {
            let mut map = memmap2::MmapMut::map_anon(len).map_err(|_| too_big())?;
            #[cfg(target_os = "linux")]
            {
                // Only a hint: without huge pages the buffer works the same.
                let _ = map.advise(memmap2::Advice::HugePage);
            }
            let ptr = std::ptr::NonNull::new(map.as_mut_ptr()).ok_or_else(too_big)?;
            return Ok(Block {
                ptr,
                len,
                map: Some(map),
            });
        }
        let layout =
            std::alloc::Layout::from_size_align(len, BUFFER_ALIGNMENT).map_err(|_| too_big())?;
        // SAFETY: `layout` has non-zero size (callers pass len > 0).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(ptr).ok_or_else(too_big)?;
        Ok(Block {
            ptr,
            len,
            map: None,
        })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.map.is_none() {
            // SAFETY: a heap block came from `alloc_zeroed` in `fresh` with
            // exactly this layout (len > 0) and only this block owns it.
            unsafe {
                std::alloc::dealloc(
                    self.ptr.as_ptr(),
                    std::alloc::Layout::from_size_align_unchecked(self.len, BUFFER_ALIGNMENT),
                )
            }
        }
    }
}

/// A pooled buffer's block and where it goes back to.
struct PoolSlot {
    block: Option<Block>,
    pool: std::sync::Weak<PoolShared>,
}

impl Drop for PoolSlot {
    fn drop(&mut self) {
        if let (Some(block), Some(pool)) = (self.block.take(), self.pool.upgrade()) {
            pool.give_back(block);
        }
    }
}

struct PoolShared {
    free: Mutex<Vec<Block>>,
    /// Most bytes kept in `free`.
    max_bytes: usize,
}

impl PoolShared {
    fn give_back(&self, block: Block) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let held: usize = free.iter().map(|b| b.len).sum();
        if held.saturating_add(block.len) <= self.max_bytes {
            free.push(block);
        }
        // Otherwise `block` drops here and its memory is freed.
    }
}

/// Recycles the memory of dropped buffers for new buffers of the same
/// length, as a device allocator reuses freed blocks: a program that
/// allocates the same tensors on every call then touches no new pages and
/// zeroes nothing after the first call.
///
/// A recycled buffer is **not** zeroed: it holds what the dropped buffer
/// last held (initialized bytes, never uninitialized memory). That is the
/// contract of IREE's HAL allocations, whose contents are undefined until
/// written; give each context its own pool so that only its own data can
/// come back to it. Fresh buffers are zeroed as [`Buffer::new`]'s are.
///
/// ```
/// use irvm::BufferPool;
/// let pool = BufferPool::new(1 << 20);
/// let a = pool.allocate(4096)?;
/// a.with_bytes_mut(|b| b[0] = 7)?;
/// drop(a);
/// let b = pool.allocate(4096)?; // the same memory, not zeroed
/// assert_eq!(b.to_vec()[0], 7);
/// assert_eq!(pool.allocate(100)?.to_vec(), vec![0; 100]); // fresh
/// # Ok::<(), irvm::Trap>(())
/// ```
#[derive(Clone)]
pub struct BufferPool {
    shared: Arc<PoolShared>,
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPool")
            .field("max_bytes", &self.shared.max_bytes)
            .finish()
    }
}

impl BufferPool {
    /// A pool that keeps at most `max_bytes` of dropped buffers' memory.
    pub fn new(max_bytes: usize) -> BufferPool {
        BufferPool {
            shared: Arc::new(PoolShared {
                free: Mutex::new(Vec::new()),
                max_bytes,
            }),
        }
    }

    /// A mutable buffer of `len` bytes, [`BUFFER_ALIGNMENT`]-aligned: the
    /// memory of a dropped buffer of this length when the pool holds one
    /// (its old contents), else fresh zeroed memory.
    pub fn allocate(&self, len: usize) -> Result<Buffer, Trap> {
        if len == 0 {
            return Ok(Buffer::from_vec(Vec::new()));
        }
        let reused = {
            let mut free = self.shared.free.lock().unwrap_or_else(|e| e.into_inner());
            free.iter()
                .position(|b| b.len == len)
                .map(|i| free.swap_remove(i))
        };
        let block = match reused {
            Some(b) => b,
            None => Block::fresh(len)?,
        };
        Ok(Buffer {
            ptr: block.ptr,
            len,
            mutable: true,
            lease: new_lease(),
            owns_lease: true,
            owner: Owner::Pooled(PoolSlot {
                block: Some(block),
                pool: Arc::downgrade(&self.shared),
            }),
            charge: None,
        })
    }

    /// Bytes of dropped buffers the pool holds now.
    pub fn held_bytes(&self) -> usize {
        let free = self.shared.free.lock().unwrap_or_else(|e| e.into_inner());
        free.iter().map(|b| b.len).sum()
    }
}

/// Alignment of the bytes of every buffer [`Buffer::new`] allocates (IREE's
/// HAL allocates host memory 64-byte aligned; kernels may rely on it).
pub const BUFFER_ALIGNMENT: usize = 64;

/// Buffers at least this large are anonymous mappings that ask for
/// transparent huge pages: a 2 MiB page costs one fault instead of 512.
/// `vm_bench`'s 80 MB buffers spent a third of their run in the kernel's
/// page-fault path with 4 KiB pages.
const MAPPED_BUFFER_BYTES: usize = 2 << 20;

/// A buffer's bytes as [`Buffer::with_raw_parts`] lends them to native
/// code: where they start and how many there are.
#[derive(Clone, Copy, Debug)]
pub struct RawBytes {
    /// First byte ([`BUFFER_ALIGNMENT`]-aligned for a root buffer).
    pub ptr: *mut u8,
    /// Length in bytes.
    pub len: usize,
}

/// A `!vm.buffer`: a byte array, mutable or read-only.
///
/// The bytes are addressed through a raw pointer fixed at creation (heap
/// buffers never grow), so the interpreter's loads and stores are one
/// bounds check, one compare of the lease word and one unaligned access.
/// Closure access (`with_bytes`, `with_bytes_mut`) is tracked in the same
/// word like `RefCell`'s borrows; the interpreter refuses to touch a buffer
/// while a closure holds it mutably (or, for stores, at all), so an
/// embedder that runs the VM from inside such a closure gets a trap, not
/// aliased memory.
///
/// Buffers are `Send + Sync` so that refs move with their context and can
/// be shared between contexts on different threads. Every access to a
/// mutable buffer's bytes happens under a *thread lease* (one per
/// allocation, shared by its views): a context's run takes it when it
/// first touches the buffer and gives it back when the call returns to the
/// embedder; a closure borrow takes it for its duration and waits while
/// another thread holds it. A run that meets a buffer another thread's run
/// holds fails with `FAILED_PRECONDITION` ("in use by another thread")
/// rather than racing or waiting. Read-only buffers need no lease.
pub struct Buffer {
    /// Start of the bytes; never changes, valid for `len` bytes while
    /// `owner` lives.
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    mutable: bool,
    /// The thread lease and closure borrows of these bytes (see
    /// `vm/lease.rs`): a word a root buffer allocates (`Box::into_raw`,
    /// freed in `Drop`) and its views share (kept alive by `owner`). One
    /// pointer load away on the interpreter's path, with no branch.
    lease: std::ptr::NonNull<AtomicU64>,
    /// Whether this buffer allocated `lease` (a root, not a view).
    owns_lease: bool,
    owner: Owner,
    /// The context memory this buffer holds, when a program allocated it.
    charge: Option<crate::budget::Charge>,
}

// SAFETY: a buffer owns its bytes (or keeps the module mapping they live
// in alive through `owner`); the raw pointer is never reassigned and is only
// dereferenced for `len` bytes. Every access to the bytes of a mutable
// buffer is made by the thread that holds its lease word (shared by all
// views of one allocation; `vm/lease.rs`), taken with Acquire and given
// back with Release, so accesses from different threads are ordered; on
// the holding thread, the word's borrow field keeps a `&mut [u8]` from
// coexisting with any other slice or interpreter access. Read-only buffers
// are never written by anyone.
unsafe impl Send for Buffer {}
// SAFETY: as for `Send`.
unsafe impl Sync for Buffer {}

/// A fresh, free lease word (see `Buffer::lease`).
fn new_lease() -> std::ptr::NonNull<AtomicU64> {
    std::ptr::NonNull::from(Box::leak(Box::new(AtomicU64::new(0))))
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.owns_lease {
            // SAFETY: a root's `lease` came from `Box::leak` in `new_lease`
            // and is freed only here; its views, which share it, hold the
            // root alive (`Owner::View`), so none is left.
            drop(unsafe { Box::from_raw(self.lease.as_ptr()) });
        }
        if let Owner::Aligned = self.owner {
            // SAFETY: `ptr` came from `alloc_zeroed` in `new` with exactly
            // this layout (len > 0, checked there) and only this buffer owns it.
            unsafe {
                std::alloc::dealloc(
                    self.ptr.as_ptr(),
                    std::alloc::Layout::from_size_align_unchecked(self.len, BUFFER_ALIGNMENT),
                )
            }
        }
        if let Owner::Heap = self.owner {
            if self.len > 0 {
                // SAFETY: `ptr` came from an allocation of exactly `len`
                // bytes with align 1 (`new`, or a boxed slice in `from_vec`)
                // that only this buffer owns.
                unsafe {
                    std::alloc::dealloc(
                        self.ptr.as_ptr(),
                        std::alloc::Layout::from_size_align_unchecked(self.len, 1),
                    )
                }
            }
        }
    }
}

fn out_of_range(offset: usize, length: usize, align: usize, buffer_len: usize) -> Trap {
    Trap::new(
        StatusCode::OutOfRange,
        format!(
            "out-of-bounds access detected (offset={offset}, length={length}, \
             alignment={align}, buffer length={buffer_len})"
        ),
    )
}

fn read_only() -> Trap {
    Trap::new(
        StatusCode::PermissionDenied,
        "buffer is read-only and cannot be mapped for mutation",
    )
}

fn in_use() -> Trap {
    Trap::new(
        StatusCode::FailedPrecondition,
        "buffer is borrowed by the embedder (with_bytes) and cannot be accessed",
    )
}

fn conflict(c: crate::lease::Conflict) -> Trap {
    match c {
        crate::lease::Conflict::ThisThread => in_use(),
        crate::lease::Conflict::OtherThread => other_thread(),
    }
}

fn other_thread() -> Trap {
    Trap::new(
        StatusCode::FailedPrecondition,
        "buffer is in use by another thread (a context running there holds it until its call returns)",
    )
}

impl Buffer {
    /// A zero-filled mutable buffer of `len` bytes. Allocation failure is
    /// an error, not an abort; the pages come from the allocator already
    /// zeroed (no memset of large buffers).
    pub fn new(len: usize) -> Result<Buffer, Trap> {
        let too_big = || {
            Trap::new(
                StatusCode::ResourceExhausted,
                format!("cannot allocate a buffer of {len} bytes"),
            )
        };
        if len == 0 {
            return Ok(Buffer::from_vec(Vec::new()));
        }
        if len >= MAPPED_BUFFER_BYTES && cfg!(not(miri)) {
            let mut map = memmap2::MmapMut::map_anon(len).map_err(|_| too_big())?;
            #[cfg(target_os = "linux")]
            {
                // Only a hint: without huge pages the buffer works the same.
                let _ = map.advise(memmap2::Advice::HugePage);
            }
            let ptr = std::ptr::NonNull::new(map.as_mut_ptr()).ok_or_else(too_big)?;
            return Ok(Buffer {
                ptr,
                len,
                mutable: true,
                lease: new_lease(),
                owns_lease: true,
                owner: Owner::Mapped(map),
                charge: None,
            });
        }
        let layout =
            std::alloc::Layout::from_size_align(len, BUFFER_ALIGNMENT).map_err(|_| too_big())?;
        // SAFETY: `layout` has non-zero size (len > 0).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(ptr).ok_or_else(too_big)?;
        Ok(Buffer {
            ptr,
            len,
            mutable: true,
            lease: new_lease(),
            owns_lease: true,
            owner: Owner::Aligned,
            charge: None,
        })
    }

    /// A view of `length` bytes of `parent` from byte `offset`: no bytes
    /// are copied, writes through either buffer are seen by both, and the
    /// view is as mutable as its parent. (The HAL hands kernels their
    /// bindings this way.) A view shares its root buffer's lease and
    /// borrows, so a mutable borrow of either excludes every other access
    /// to the same bytes.
    pub fn view(parent: &Arc<Buffer>, offset: usize, length: usize) -> Result<Buffer, Trap> {
        if offset
            .checked_add(length)
            .is_none_or(|end| end > parent.len)
        {
            return Err(out_of_range(offset, length, 1, parent.len));
        }
        // SAFETY: offset + length <= parent.len (checked above), so the
        // pointer stays inside (or one past the end of) the parent's bytes.
        let ptr = unsafe { parent.ptr.as_ptr().add(offset) };
        Ok(Buffer {
            ptr: std::ptr::NonNull::new(ptr).unwrap_or(std::ptr::NonNull::dangling()),
            len: length,
            mutable: parent.mutable,
            lease: parent.lease,
            owns_lease: false,
            // A view of a view holds the root itself, so views never chain
            // (dropping one is never recursive) and the lease's owner is
            // one step away (`lease_root`).
            owner: Owner::View(match &parent.owner {
                Owner::View(root) => root.clone(),
                _ => parent.clone(),
            }),
            charge: None,
        })
    }

    /// A mutable buffer holding `bytes`.
    pub fn from_vec(bytes: Vec<u8>) -> Buffer {
        let boxed = bytes.into_boxed_slice();
        let len = boxed.len();
        let ptr = if len == 0 {
            std::ptr::NonNull::dangling()
        } else {
            // The allocation (len bytes, align 1) is freed in `Drop`.
            let raw = Box::into_raw(boxed) as *mut u8;
            std::ptr::NonNull::new(raw).unwrap_or(std::ptr::NonNull::dangling())
        };
        Buffer {
            ptr,
            len,
            mutable: true,
            lease: new_lease(),
            owns_lease: true,
            owner: Owner::Heap,
            charge: None,
        }
    }

    /// A read-only view of `range` of `module`'s file bytes (a rodata
    /// segment); no bytes are copied. An out-of-bounds range gives an empty
    /// buffer (the loader has already checked every segment's range).
    pub fn rodata(module: Module, range: Range<usize>) -> Buffer {
        let bytes = module.file_bytes().get(range).unwrap_or(&[]);
        let (ptr, len) = (bytes.as_ptr() as *mut u8, bytes.len());
        Buffer {
            ptr: std::ptr::NonNull::new(ptr).unwrap_or(std::ptr::NonNull::dangling()),
            len,
            mutable: false,
            lease: new_lease(),
            owns_lease: true,
            owner: Owner::Module(module),
            charge: None,
        }
    }

    /// Length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the buffer may be written.
    pub fn is_mutable(&self) -> bool {
        self.mutable
    }

    /// Whether the bytes are borrowed from a module's rodata (zero-copy).
    pub fn is_rodata(&self) -> bool {
        matches!(self.owner, Owner::Module(_))
    }

    /// The lease word of these bytes (the root buffer's, for a view).
    /// The buffer whose lease word this one uses: its root when it is a
    /// view, else itself.
    pub(crate) fn lease_root(self: &Arc<Self>) -> Arc<Buffer> {
        match &self.owner {
            Owner::View(root) => root.clone(),
            _ => self.clone(),
        }
    }

    #[inline(always)]
    pub(crate) fn lease_word(&self) -> &AtomicU64 {
        // SAFETY: `lease` came from `new_lease` in this buffer or in its
        // root, which `owner` (`Owner::View` of the root) keeps alive; it is
        // freed only when the root drops.
        unsafe { self.lease.as_ref() }
    }

    /// Runs `f` over the bytes.
    ///
    /// Waits while a context running on another thread, or a closure
    /// there, holds the buffer (until that call or closure ends). So a host
    /// function must not wait for a thread of its own that borrows a buffer
    /// the calling run holds (that thread would wait for the run): hand the
    /// thread the bytes instead, e.g. scoped threads over this closure's
    /// slice.
    ///
    /// # Panics
    /// When called from inside [`Buffer::with_bytes_mut`] on the same
    /// buffer, or one of its views, on this thread (like `RefCell::borrow`);
    /// and inside a context's run (a host function) when a context running
    /// on another thread holds the buffer, since a run must not wait.
    /// (Host functions made with `NativeModule` turn the panic into a trap.)
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self.read(f) {
            Ok(out) => out,
            Err(crate::lease::Conflict::ThisThread) => panic!("buffer already borrowed mutably"),
            Err(crate::lease::Conflict::OtherThread) => {
                panic!("buffer is in use by another thread's running context")
            }
        }
    }

    /// Runs `f` over the bytes under a shared closure borrow; a conflicting
    /// borrow is returned without calling `f`.
    fn read<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Result<R, crate::lease::Conflict> {
        let guard = if self.mutable {
            Some(crate::lease::borrow(self.lease_word(), true)?)
        } else {
            None
        };
        // SAFETY: `ptr` addresses `len` initialized bytes kept alive by
        // `owner`. A read-only buffer is never written. For a mutable one,
        // this thread holds the lease (no other thread touches the bytes)
        // and the borrow field rules out a live `&mut` and interpreter
        // stores until `guard` ends.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) };
        let out = f(bytes);
        drop(guard);
        Ok(out)
    }

    /// [`Buffer::with_bytes`] that fails (FAILED_PRECONDITION) where that
    /// one panics: for the interpreter's bulk reads (`vm.buffer.clone`,
    /// `copy`, `compare`, `hash`), which must trap, not panic, when the
    /// buffer is borrowed mutably here or held by another thread's run.
    pub(crate) fn try_with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Result<R, Trap> {
        self.read(f).map_err(conflict)
    }

    /// Runs `f` over the bytes mutably; read-only buffers, and buffers
    /// already borrowed by a closure on this thread, are an error. Waits
    /// while another thread holds the buffer, as [`Buffer::with_bytes`].
    pub fn with_bytes_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> Result<R, Trap> {
        if !self.mutable {
            return Err(read_only());
        }
        let guard = crate::lease::borrow(self.lease_word(), false).map_err(conflict)?;
        // SAFETY: as in `with_bytes`; the borrow field was 0 and is now
        // `MUT`, so no other slice of these bytes is live and the
        // interpreter does not touch them until `guard` ends.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) };
        let out = f(bytes);
        drop(guard);
        Ok(out)
    }

    /// Lends the bytes of `buffers` to native code (kernels compiled to
    /// machine code) as raw start pointers and lengths while `f` runs.
    ///
    /// Every distinct allocation among the mutable buffers (views of one
    /// allocation count once, so bindings may alias) is borrowed mutably
    /// for the whole call, as [`Buffer::with_bytes_mut`] would: no other
    /// slice, interpreter access or thread touches the bytes meanwhile, so
    /// `f` may hand the pointers to worker threads it joins before
    /// returning. Read-only buffers (rodata) are lent without a borrow and
    /// must not be written through their pointer.
    ///
    /// Fails (FAILED_PRECONDITION) when a closure on this thread already
    /// borrows one of the buffers, or, inside a context's run, when another
    /// thread's run holds one; outside a run it waits for that thread.
    ///
    /// ```
    /// use irvm::Buffer;
    /// let a = Buffer::new(8)?;
    /// let lent = Buffer::with_raw_parts(&[&a], |parts| {
    ///     // SAFETY: the pointer addresses `parts[0].len` bytes, mutably
    ///     // borrowed for this closure.
    ///     unsafe { *parts[0].ptr.add(3) = 7 };
    ///     parts[0].len
    /// })?;
    /// assert_eq!(lent, 8);
    /// assert_eq!(a.to_vec()[3], 7);
    /// # Ok::<(), irvm::Trap>(())
    /// ```
    pub fn with_raw_parts<R>(
        buffers: &[&Buffer],
        f: impl FnOnce(&[RawBytes]) -> R,
    ) -> Result<R, Trap> {
        // Each distinct allocation once: a word is borrowed by the first
        // mutable buffer that uses it (quadratic, for the few bindings a
        // dispatch has).
        let mut guards = Vec::with_capacity(buffers.len());
        for (k, b) in buffers.iter().enumerate() {
            let word = b.lease_word();
            let seen = buffers[..k]
                .iter()
                .any(|e| e.mutable && std::ptr::eq(e.lease_word(), word));
            if b.mutable && !seen {
                guards.push(crate::lease::borrow(word, false).map_err(conflict)?);
            }
        }
        let parts: Vec<RawBytes> = buffers
            .iter()
            .map(|b| RawBytes {
                ptr: b.ptr.as_ptr(),
                len: b.len,
            })
            .collect();
        let out = f(&parts);
        drop(guards);
        Ok(out)
    }

    /// A copy of the bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(|b| b.to_vec())
    }

    /// Loads the `N`-byte element at element index `index`.
    ///
    /// Inside a context's run (a host function), the run keeps the buffer's
    /// lease until it returns; outside, the load is one closure borrow.
    #[inline(always)]
    pub fn load<const N: usize>(self: &Arc<Self>, index: u64) -> Result<[u8; N], Trap> {
        self.load_as(crate::lease::token(), index)
    }

    /// [`Buffer::load`] for a caller that has read this thread's lease
    /// token once (the interpreter, per run).
    #[inline(always)]
    pub(crate) fn load_as<const N: usize>(
        self: &Arc<Self>,
        token: u64,
        index: u64,
    ) -> Result<[u8; N], Trap> {
        let w = self.lease_word().load(Ordering::Relaxed);
        if index < (self.len / N) as u64 && self.readable_with(w, token) {
            let mut out = [0u8; N];
            // SAFETY: `index * N + N <= len` (checked above), the bytes are
            // alive (`owner`); the buffer is read-only, or this thread
            // holds its lease with no `&mut` slice live (borrow field).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.ptr.as_ptr().add(index as usize * N),
                    out.as_mut_ptr(),
                    N,
                )
            };
            Ok(out)
        } else {
            self.load_slow(index)
        }
    }

    /// The bytes and their length when this thread may access them for
    /// the rest of the current run without further checks: reading when
    /// the buffer is read-only or this thread holds its lease, writing
    /// when it holds the lease with no closure borrow live (the checks
    /// `load_as`/`store_as` make per access). Takes the lease as their slow
    /// paths do; `None` when they would not take the fast path then (the
    /// caller falls back to them, to trap or wait as they do).
    ///
    /// The verdict holds until this thread's run ends or host code on this
    /// thread borrows the buffer: only then can the lease word change (other
    /// threads wait for or refuse a leased buffer, `vm/lease.rs`).
    /// Whether the thread with `token` may read the bytes without further
    /// checks when the lease word is `w`: it holds the lease (closure
    /// borrows of its own do not matter for reading), or the buffer is
    /// read-only.
    #[inline(always)]
    fn readable_with(&self, w: u64, token: u64) -> bool {
        (w ^ token) < crate::lease::MUT || !self.mutable
    }

    /// Whether it may write them: it holds the lease with no closure
    /// borrow live (a buffer is leased only when mutable).
    #[inline(always)]
    fn writable_with(&self, w: u64, token: u64) -> bool {
        w == token
    }

    #[cfg(feature = "jit")]
    pub(crate) fn run_access(
        self: &Arc<Self>,
        token: u64,
        write: bool,
    ) -> Option<(*mut u8, usize)> {
        let allowed = |w: u64| {
            if write {
                self.mutable && self.writable_with(w, token)
            } else {
                self.readable_with(w, token)
            }
        };
        let fast = allowed(self.lease_word().load(Ordering::Relaxed));
        // A mutable buffer this run does not hold yet: take it, as the
        // interpreter's slow paths do.
        let taken = || {
            self.mutable
                && crate::lease::in_run()
                && crate::lease::acquire_for_run(self)
                && allowed(self.lease_word().load(Ordering::Relaxed))
        };
        if fast || taken() {
            Some((self.ptr.as_ptr(), self.len))
        } else {
            None
        }
    }

    #[cold]
    #[inline(never)]
    fn load_slow<const N: usize>(self: &Arc<Self>, index: u64) -> Result<[u8; N], Trap> {
        if index >= (self.len / N) as u64 {
            return Err(self.access_error(index, N, false));
        }
        if !crate::lease::in_run() {
            // One shared closure borrow around the read (waits for other
            // threads); under it the fast path's check holds.
            let _guard = crate::lease::borrow(self.lease_word(), true).map_err(conflict)?;
            return self.load(index);
        }
        if !crate::lease::acquire_for_run(self) {
            return Err(other_thread());
        }
        let w = self.lease_word().load(Ordering::Relaxed);
        if (w ^ crate::lease::token()) < crate::lease::MUT {
            self.load(index)
        } else {
            Err(in_use())
        }
    }

    /// Stores the `N`-byte element at element index `index` (leases as
    /// [`Buffer::load`]).
    #[inline(always)]
    pub fn store<const N: usize>(self: &Arc<Self>, index: u64, value: [u8; N]) -> Result<(), Trap> {
        self.store_as(crate::lease::token(), index, value)
    }

    /// [`Buffer::store`] with this thread's token read by the caller.
    #[inline(always)]
    pub(crate) fn store_as<const N: usize>(
        self: &Arc<Self>,
        token: u64,
        index: u64,
        value: [u8; N],
    ) -> Result<(), Trap> {
        if index < (self.len / N) as u64
            && self.writable_with(self.lease_word().load(Ordering::Relaxed), token)
        {
            // SAFETY: in bounds as in `load`; this thread holds the lease
            // with no closure borrow live (the word is exactly its token),
            // and a buffer is leased only when mutable (`store_slow`).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    value.as_ptr(),
                    self.ptr.as_ptr().add(index as usize * N),
                    N,
                )
            };
            Ok(())
        } else {
            self.store_slow(index, value)
        }
    }

    #[cold]
    #[inline(never)]
    fn store_slow<const N: usize>(
        self: &Arc<Self>,
        index: u64,
        value: [u8; N],
    ) -> Result<(), Trap> {
        if index >= (self.len / N) as u64 || !self.mutable {
            return Err(self.access_error(index, N, true));
        }
        if !crate::lease::in_run() {
            let at = index as usize * N;
            return self.with_bytes_mut(|b| b[at..at + N].copy_from_slice(&value));
        }
        if !crate::lease::acquire_for_run(self) {
            return Err(other_thread());
        }
        if self.lease_word().load(Ordering::Relaxed) == crate::lease::token() {
            self.store(index, value)
        } else {
            Err(in_use())
        }
    }

    #[cold]
    #[inline(never)]
    fn access_error(&self, index: u64, n: usize, write: bool) -> Trap {
        if write && !self.mutable {
            read_only()
        } else if index < (self.len / n) as u64 {
            in_use()
        } else {
            out_of_range((index as usize).wrapping_mul(n), n, n, self.len)
        }
    }

    /// Fills `count` elements of `N` bytes starting at element `index`.
    pub fn fill<const N: usize>(&self, index: u64, count: u64, value: [u8; N]) -> Result<(), Trap> {
        self.with_bytes_mut(|b| {
            let len = b.len();
            let range = elem_range(index, count, N).filter(|r| r.end <= len);
            let Some(range) = range else {
                return Err(out_of_range(
                    (index as usize).wrapping_mul(N),
                    (count as usize).wrapping_mul(N),
                    N,
                    len,
                ));
            };
            for chunk in b[range].chunks_exact_mut(N) {
                chunk.copy_from_slice(&value);
            }
            Ok(())
        })?
    }

    /// The byte range `offset..offset+length`, checked against the length.
    fn byte_range(&self, offset: u64, length: u64) -> Result<Range<usize>, Trap> {
        let len = self.len();
        elem_range(offset, length, 1)
            .filter(|r| r.end <= len)
            .ok_or_else(|| out_of_range(offset as usize, length as usize, 1, len))
    }

    /// A new mutable buffer holding a copy of `length` bytes at `offset`.
    /// Allocation failure is an error, as for [`Buffer::new`].
    pub fn clone_range(&self, offset: u64, length: u64) -> Result<Buffer, Trap> {
        let r = self.byte_range(offset, length)?;
        let copy = Buffer::new(r.len())?;
        self.try_with_bytes(|src| copy.with_bytes_mut(|dst| dst.copy_from_slice(&src[r])))??;
        Ok(copy)
    }

    /// The buffer, holding `charge` of its context's memory budget until it
    /// is dropped.
    pub(crate) fn with_charge(mut self, charge: crate::budget::Charge) -> Buffer {
        self.charge = Some(charge);
        self
    }

    /// Copies `length` bytes from `src` at `src_offset` to `dst` at
    /// `dst_offset` (the two may be the same buffer).
    pub fn copy(
        src: &Arc<Buffer>,
        src_offset: u64,
        dst: &Arc<Buffer>,
        dst_offset: u64,
        length: u64,
    ) -> Result<(), Trap> {
        let s = src.byte_range(src_offset, length)?;
        if !dst.is_mutable() {
            return Err(read_only());
        }
        let d = dst.byte_range(dst_offset, length)?;
        if Arc::ptr_eq(src, dst) {
            dst.with_bytes_mut(|b| b.copy_within(s, d.start))
        } else {
            src.try_with_bytes(|sb| dst.with_bytes_mut(|db| db[d].copy_from_slice(&sb[s])))?
        }
    }

    /// Whether `length` bytes at the two offsets are equal.
    pub fn compare(
        lhs: &Buffer,
        lhs_offset: u64,
        rhs: &Buffer,
        rhs_offset: u64,
        length: u64,
    ) -> Result<bool, Trap> {
        let l = lhs.byte_range(lhs_offset, length)?;
        let r = rhs.byte_range(rhs_offset, length)?;
        lhs.try_with_bytes(|a| rhs.try_with_bytes(|b| a[l] == b[r]))?
    }

    /// SipHash-2-4 (key 00 01 .. 0f) of `length` bytes at `offset`, as IREE
    /// computes `vm.buffer.hash`.
    pub fn hash(&self, offset: u64, length: u64) -> Result<i64, Trap> {
        let r = self.byte_range(offset, length)?;
        Ok(self.try_with_bytes(|b| siphash24(&b[r]))? as i64)
    }
}

fn elem_range(index: u64, count: u64, size: usize) -> Option<Range<usize>> {
    let start = usize::try_from(index).ok()?.checked_mul(size)?;
    let len = usize::try_from(count).ok()?.checked_mul(size)?;
    Some(start..start.checked_add(len)?)
}

fn siphash24(data: &[u8]) -> u64 {
    let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
    let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
    let mut v = [
        0x736f6d6570736575 ^ k0,
        0x646f72616e646f6d ^ k1,
        0x6c7967656e657261 ^ k0,
        0x7465646279746573 ^ k1,
    ];
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
    let chunks = data.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        let m = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        v[3] ^= m;
        round(&mut v);
        round(&mut v);
        v[0] ^= m;
    }
    let mut b = (data.len() as u64) << 56;
    for (i, byte) in tail.iter().enumerate() {
        b |= (*byte as u64) << (8 * i);
    }
    v[3] ^= b;
    round(&mut v);
    round(&mut v);
    v[0] ^= b;
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

// ---------------------------------------------------------------------------
// Lists

/// One element of a list.
#[derive(Clone, Debug, Default)]
enum Slot {
    #[default]
    Empty,
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Ref(Ref),
}

impl Slot {
    fn value_type(&self) -> Option<ValueType> {
        Some(match self {
            Slot::I8(_) => ValueType::I8,
            Slot::I16(_) => ValueType::I16,
            Slot::I32(_) => ValueType::I32,
            Slot::I64(_) => ValueType::I64,
            Slot::F32(_) => ValueType::F32,
            Slot::F64(_) => ValueType::F64,
            _ => return None,
        })
    }

    /// IREE's value conversion between list element types: integer widths
    /// convert by sign extension or truncation, f32 and f64 convert to each
    /// other, anything else reads as zero.
    fn convert(&self, to: ValueType) -> Slot {
        let from = match self.value_type() {
            Some(t) => t,
            None => return zero_slot(to),
        };
        if from == to {
            return self.clone();
        }
        let as_int = match *self {
            Slot::I8(v) => Some(v as i64),
            Slot::I16(v) => Some(v as i64),
            Slot::I32(v) => Some(v as i64),
            Slot::I64(v) => Some(v),
            _ => None,
        };
        match (as_int, to, self) {
            (Some(v), ValueType::I8, _) => Slot::I8(v as i8),
            (Some(v), ValueType::I16, _) => Slot::I16(v as i16),
            (Some(v), ValueType::I32, _) => Slot::I32(v as i32),
            (Some(v), ValueType::I64, _) => Slot::I64(v),
            (None, ValueType::F64, Slot::F32(f)) => Slot::F64(*f as f64),
            (None, ValueType::F32, Slot::F64(f)) => Slot::F32(*f as f32),
            _ => zero_slot(to),
        }
    }
}

fn zero_slot(t: ValueType) -> Slot {
    match t {
        ValueType::I8 => Slot::I8(0),
        ValueType::I16 => Slot::I16(0),
        ValueType::I32 => Slot::I32(0),
        ValueType::I64 => Slot::I64(0),
        ValueType::F32 => Slot::F32(0.0),
        ValueType::F64 => Slot::F64(0.0),
    }
}

/// A `!vm.list`: a growable sequence of values of one element type, or of
/// variants.
pub struct List {
    element: TypeDef,
    items: crate::element_lock::ElementLock<Vec<Slot>>,
    /// The context memory the element storage holds, when a program
    /// allocated or grew the list (see [`List::reserve_charged`]).
    charge: std::sync::Mutex<Option<crate::budget::Charge>>,
}

/// What a list costs besides its elements: the `List` and the counts of
/// its `Arc`.
const LIST_OVERHEAD_BYTES: u64 = std::mem::size_of::<List>() as u64 + 16;

thread_local! {
    /// Refs whose release a [`List`] drop further up this thread's stack
    /// has taken over (`None`: no list drop in progress).
    static PENDING_RELEASES: RefCell<Option<Vec<Ref>>> = const { RefCell::new(None) };
}

/// Ends the drain of [`PENDING_RELEASES`] also when a host object's drop
/// panics (the refs still queued then leak rather than drop twice).
struct DrainGuard;

impl Drop for DrainGuard {
    fn drop(&mut self) {
        let _ = PENDING_RELEASES.try_with(|p| p.borrow_mut().take());
    }
}

impl Drop for List {
    /// Releases the elements without recursion: dropping a list of lists
    /// (or of host objects holding lists) a million deep would otherwise
    /// take a million nested drops and overflow the thread's stack. The
    /// outermost list drop on a thread drains a queue that every list
    /// dropped meanwhile appends its elements to, so the depth of nested
    /// drops stays constant.
    fn drop(&mut self) {
        let items = std::mem::take(self.items.get_mut());
        if !items
            .iter()
            .any(|s| matches!(s, Slot::Ref(Ref::List(_) | Ref::Host(_))))
        {
            return;
        }
        let mut refs: Vec<Ref> = items
            .into_iter()
            .filter_map(|s| match s {
                Slot::Ref(r) => Some(r),
                _ => None,
            })
            .collect();
        // Already draining on this thread: queue the elements and return.
        let queued = PENDING_RELEASES.try_with(|p| {
            let mut p = p.borrow_mut();
            match p.as_mut() {
                Some(queue) => {
                    queue.append(&mut refs);
                    true
                }
                None => {
                    *p = Some(Vec::new());
                    false
                }
            }
        });
        if queued != Ok(false) {
            // Queued, or the thread is exiting (no queue): plain drop.
            return;
        }
        let _guard = DrainGuard;
        loop {
            // Each list these release queues its own elements.
            drop(refs);
            refs = PENDING_RELEASES.with(|p| {
                p.borrow_mut()
                    .as_mut()
                    .map(std::mem::take)
                    .unwrap_or_default()
            });
            if refs.is_empty() {
                break;
            }
        }
    }
}

fn index_error(i: u32, n: usize) -> Trap {
    Trap::new(
        StatusCode::OutOfRange,
        format!("index {i} out of bounds ({n})"),
    )
}

impl List {
    /// An empty list with room for `capacity` elements.
    pub fn new(element: TypeDef, capacity: u32) -> Result<List, Trap> {
        let mut v = Vec::new();
        v.try_reserve(capacity as usize).map_err(|_| {
            Trap::new(
                StatusCode::ResourceExhausted,
                format!("cannot allocate a list of capacity {capacity}"),
            )
        })?;
        Ok(List {
            element,
            items: crate::element_lock::ElementLock::new(v),
            charge: std::sync::Mutex::new(None),
        })
    }

    /// The element type.
    pub fn element_type(&self) -> TypeDef {
        self.element
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items().len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ensures room for `capacity` elements.
    pub fn reserve(&self, capacity: u32) -> Result<(), Trap> {
        let mut items = self.items_mut();
        let extra = (capacity as usize).saturating_sub(items.len());
        items
            .try_reserve(extra)
            .map_err(|_| Trap::new(StatusCode::ResourceExhausted, "capacity overflow"))
    }

    /// [`List::reserve`] for a program: the element storage after it is
    /// charged to `budget` first (failing, unchanged, when the budget has
    /// not that much left), and grown exactly (no amortized slack a program
    /// could pile up uncharged).
    pub(crate) fn reserve_charged(
        &self,
        capacity: u32,
        budget: &std::sync::Arc<crate::budget::MemoryBudget>,
    ) -> Result<(), Trap> {
        let mut items = self.items_mut();
        let want = (capacity as usize).max(items.capacity());
        // The elements, and the list itself with its reference counts.
        let bytes = (want as u64)
            .saturating_mul(std::mem::size_of::<Slot>() as u64)
            .saturating_add(LIST_OVERHEAD_BYTES);
        let mut charge = self.charge.lock().unwrap_or_else(|e| e.into_inner());
        let charge = charge.get_or_insert_with(|| crate::budget::Charge::empty(budget));
        charge.resize(bytes, "a list")?;
        let extra = want.saturating_sub(items.len());
        items
            .try_reserve_exact(extra)
            .map_err(|_| Trap::new(StatusCode::ResourceExhausted, "capacity overflow"))
    }

    /// [`List::resize`] for a program, charged as [`List::reserve_charged`].
    pub(crate) fn resize_charged(
        &self,
        size: u32,
        budget: &std::sync::Arc<crate::budget::MemoryBudget>,
    ) -> Result<(), Trap> {
        self.reserve_charged(size, budget)?;
        self.resize(size)
    }

    /// Grows (with empty or zero elements) or truncates to `size`.
    pub fn resize(&self, size: u32) -> Result<(), Trap> {
        self.reserve(size)?;
        let fill = self.new_slot();
        // Dropped elements are released after the lock is given back.
        let dropped = {
            let mut items = self.items_mut();
            let keep = (size as usize).min(items.len());
            let tail = items.split_off(keep);
            items.resize(size as usize, fill);
            tail
        };
        drop(dropped);
        Ok(())
    }

    /// Whether elements of this list can be lists (`!vm.list<!vm.list<..>>`
    /// or variants): only such lists can be part of a reference cycle.
    pub(crate) fn may_hold_lists(&self) -> bool {
        matches!(self.element, TypeDef::Any | TypeDef::Ref(RefType::LIST))
    }

    /// Calls `f` with every list this list holds. Returns false (without
    /// calling `f`) when the contents are borrowed right now.
    pub(crate) fn for_each_list(&self, mut f: impl FnMut(&Arc<List>)) -> bool {
        let Some(items) = self.items.try_lock() else {
            return false;
        };
        for slot in items.iter() {
            if let Slot::Ref(Ref::List(l)) = slot {
                f(l);
            }
        }
        true
    }

    /// Removes and returns all elements (the cycle collector drops them
    /// after the borrow ends). Empty when the contents are borrowed.
    pub(crate) fn take_items(&self) -> Vec<impl Sized> {
        match self.items.try_lock() {
            Some(mut items) => std::mem::take(&mut *items),
            None => Vec::new(),
        }
    }

    /// The elements, locked (see `element_lock` for why not a `Mutex`). A
    /// panic while they are locked releases them; it cannot leave them
    /// inconsistent, every update being a single assignment or `Vec` call.
    #[inline]
    fn items(&self) -> crate::element_lock::ElementGuard<'_, Vec<Slot>> {
        self.items.lock()
    }

    /// The elements, locked for a change. For a list that may hold lists,
    /// the change also holds the cycle collector off (`cycles::EDGES`):
    /// the collector must not see edges between lists move while it works.
    fn items_mut(&self) -> ItemsMut<'_> {
        let edges = self.may_hold_lists().then(crate::cycles::edge_change);
        ItemsMut {
            items: self.items(),
            _edges: edges,
        }
    }

    fn get_slot(&self, i: u32, as_type: ValueType) -> Result<Slot, Trap> {
        let items = self.items();
        let slot = items
            .get(i as usize)
            .ok_or_else(|| index_error(i, items.len()))?;
        match slot {
            Slot::Ref(_) | Slot::Empty if !matches!(self.element, TypeDef::Value(_)) => {
                Err(Trap::new(
                    StatusCode::FailedPrecondition,
                    format!("variant at index {i} is not a value type"),
                ))
            }
            s => Ok(s.convert(as_type)),
        }
    }

    /// The bits of element `i` when it is stored as exactly `as_type`, one
    /// of i32, i64, f32, f64 (the common case of `vm.list.get.*`, taken by
    /// the interpreter's fast path); `None` for anything that needs a
    /// conversion or an error, which the full getters handle.
    #[inline]
    pub(crate) fn get_bits(&self, i: u32, as_type: ValueType) -> Option<u64> {
        match (self.items().get(i as usize)?, as_type) {
            (Slot::I32(v), ValueType::I32) => Some(*v as u32 as u64),
            (Slot::I64(v), ValueType::I64) => Some(*v as u64),
            (Slot::F32(v), ValueType::F32) => Some(v.to_bits() as u64),
            (Slot::F64(v), ValueType::F64) => Some(v.to_bits()),
            _ => None,
        }
    }

    /// Sets element `i` of a list whose element type is exactly `as_type`
    /// (i32, i64, f32 or f64) to `bits` (the common case of
    /// `vm.list.set.*`); `false`, with nothing changed, for anything else,
    /// which the full setters handle.
    #[inline]
    pub(crate) fn set_bits(&self, i: u32, as_type: ValueType, bits: u64) -> bool {
        if self.element != TypeDef::Value(as_type) {
            return false;
        }
        let value = match as_type {
            ValueType::I32 => Slot::I32(bits as u32 as i32),
            ValueType::I64 => Slot::I64(bits as i64),
            ValueType::F32 => Slot::F32(f32::from_bits(bits as u32)),
            ValueType::F64 => Slot::F64(f64::from_bits(bits)),
            _ => return false,
        };
        // A list of values holds no refs: no edge for the cycle collector
        // moves, and the old element needs no release.
        match self.items().get_mut(i as usize) {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
        }
    }

    /// Element `i` as an i32 (converted like IREE does).
    pub fn get_i32(&self, i: u32) -> Result<i32, Trap> {
        match self.get_slot(i, ValueType::I32)? {
            Slot::I32(v) => Ok(v),
            _ => Ok(0),
        }
    }
    /// Element `i` as an i64.
    pub fn get_i64(&self, i: u32) -> Result<i64, Trap> {
        match self.get_slot(i, ValueType::I64)? {
            Slot::I64(v) => Ok(v),
            _ => Ok(0),
        }
    }
    /// Element `i` as an f32.
    pub fn get_f32(&self, i: u32) -> Result<f32, Trap> {
        match self.get_slot(i, ValueType::F32)? {
            Slot::F32(v) => Ok(v),
            _ => Ok(0.0),
        }
    }
    /// Element `i` as an f64.
    pub fn get_f64(&self, i: u32) -> Result<f64, Trap> {
        match self.get_slot(i, ValueType::F64)? {
            Slot::F64(v) => Ok(v),
            _ => Ok(0.0),
        }
    }

    /// A new element: zero in a list of values, empty otherwise.
    fn new_slot(&self) -> Slot {
        match self.element {
            TypeDef::Value(t) => zero_slot(t),
            _ => Slot::Empty,
        }
    }

    /// `value` as this list stores it: converted to the element type, or
    /// refused by a list of refs.
    fn value_slot(&self, value: Slot) -> Result<Slot, Trap> {
        match self.element {
            TypeDef::Value(t) => Ok(value.convert(t)),
            TypeDef::Any => Ok(value),
            TypeDef::Ref(_) => Err(Trap::new(
                StatusCode::FailedPrecondition,
                "list cannot store values",
            )),
        }
    }

    /// `r` as this list stores it: type-checked, or refused by a list of
    /// values.
    fn ref_slot(&self, r: Ref) -> Result<Slot, Trap> {
        match self.element {
            TypeDef::Value(_) => Err(Trap::new(
                StatusCode::FailedPrecondition,
                "list cannot store refs",
            )),
            t => {
                t.check_ref(&r)?;
                Ok(Slot::Ref(r))
            }
        }
    }

    /// Replaces element `i` with `slot` (already checked).
    fn replace(&self, i: u32, slot: Slot) -> Result<(), Trap> {
        let mut items = self.items_mut();
        let n = items.len();
        let dst = items.get_mut(i as usize).ok_or_else(|| index_error(i, n))?;
        let old = std::mem::replace(dst, slot);
        drop(items);
        drop(old); // released outside the lock (it may be a list)
        Ok(())
    }

    fn set_slot(&self, i: u32, value: Slot) -> Result<(), Trap> {
        self.replace(i, self.value_slot(value)?)
    }

    /// Sets element `i` to an i32.
    pub fn set_i32(&self, i: u32, v: i32) -> Result<(), Trap> {
        self.set_slot(i, Slot::I32(v))
    }
    /// Sets element `i` to an i64.
    pub fn set_i64(&self, i: u32, v: i64) -> Result<(), Trap> {
        self.set_slot(i, Slot::I64(v))
    }
    /// Sets element `i` to an f32.
    pub fn set_f32(&self, i: u32, v: f32) -> Result<(), Trap> {
        self.set_slot(i, Slot::F32(v))
    }
    /// Sets element `i` to an f64.
    pub fn set_f64(&self, i: u32, v: f64) -> Result<(), Trap> {
        self.set_slot(i, Slot::F64(v))
    }

    /// Element `i` as a reference; `take` moves it out (leaving the slot
    /// empty) instead of retaining.
    pub fn get_ref(&self, i: u32, take: bool) -> Result<Ref, Trap> {
        let mut items = self.items_mut();
        let n = items.len();
        let slot = items.get_mut(i as usize).ok_or_else(|| index_error(i, n))?;
        match self.element {
            TypeDef::Value(_) => Err(Trap::new(
                StatusCode::FailedPrecondition,
                "list does not store refs",
            )),
            _ => match slot {
                Slot::Ref(r) => Ok(if take { std::mem::take(r) } else { r.clone() }),
                Slot::Empty => Ok(Ref::Null),
                _ => Err(Trap::new(
                    StatusCode::FailedPrecondition,
                    format!("variant at index {i} is not a ref"),
                )),
            },
        }
    }

    /// Sets element `i` to a reference (type-checked for typed ref lists).
    pub fn set_ref(&self, i: u32, r: Ref) -> Result<(), Trap> {
        self.replace(i, self.ref_slot(r)?)
    }

    /// Element `i` as a [`Value`](crate::Value).
    pub fn get(&self, i: u32) -> Result<crate::Value, Trap> {
        use crate::Value;
        let items = self.items();
        let slot = items
            .get(i as usize)
            .ok_or_else(|| index_error(i, items.len()))?;
        Ok(match slot {
            Slot::Empty => Value::None,
            Slot::I8(v) => Value::I32(*v as i32),
            Slot::I16(v) => Value::I32(*v as i32),
            Slot::I32(v) => Value::I32(*v),
            Slot::I64(v) => Value::I64(*v),
            Slot::F32(v) => Value::F32(*v),
            Slot::F64(v) => Value::F64(*v),
            Slot::Ref(r) => Value::Ref(r.clone()),
        })
    }

    /// Appends a value (converted to the element type for typed lists).
    ///
    /// One step under the list's lock: pushes from several threads each
    /// land in their own element.
    pub fn push(&self, v: crate::Value) -> Result<(), Trap> {
        use crate::Value;
        let slot = match v {
            Value::I32(x) => self.value_slot(Slot::I32(x))?,
            Value::I64(x) => self.value_slot(Slot::I64(x))?,
            Value::F32(x) => self.value_slot(Slot::F32(x))?,
            Value::F64(x) => self.value_slot(Slot::F64(x))?,
            Value::Ref(r) => self.ref_slot(r)?,
            Value::None => self.new_slot(),
        };
        let mut items = self.items_mut();
        if items.len() >= u32::MAX as usize {
            return Err(Trap::new(StatusCode::ResourceExhausted, "list is full"));
        }
        items
            .try_reserve(1)
            .map_err(|_| Trap::new(StatusCode::ResourceExhausted, "capacity overflow"))?;
        items.push(slot);
        Ok(())
    }
}

/// A list's elements locked for a change (`List::items_mut`); field order
/// releases the elements before the collector's guard.
struct ItemsMut<'a> {
    items: crate::element_lock::ElementGuard<'a, Vec<Slot>>,
    _edges: Option<RwLockReadGuard<'static, ()>>,
}

impl std::ops::Deref for ItemsMut<'_> {
    type Target = Vec<Slot>;
    fn deref(&self) -> &Vec<Slot> {
        &self.items
    }
}

impl std::ops::DerefMut for ItemsMut<'_> {
    fn deref_mut(&mut self) -> &mut Vec<Slot> {
        &mut self.items
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pools_recycle_by_length_within_their_cap() {
        let pool = BufferPool::new(3000);
        let a = pool.allocate(1000).unwrap();
        let b = pool.allocate(2500).unwrap();
        a.with_bytes_mut(|x| x.fill(9)).unwrap();
        let a_ptr = a.ptr;
        // A view keeps the memory out of the pool until it is dropped too.
        let a = Arc::new(a);
        let view = Buffer::view(&a, 10, 10).unwrap();
        drop(a);
        assert_eq!(pool.held_bytes(), 0);
        drop(view);
        assert_eq!(pool.held_bytes(), 1000);
        drop(b); // 1000 + 2500 > 3000: freed, not kept
        assert_eq!(pool.held_bytes(), 1000);
        let c = pool.allocate(1000).unwrap();
        assert_eq!(c.ptr, a_ptr);
        assert_eq!(c.to_vec(), vec![9; 1000]);
        assert_eq!(c.ptr.as_ptr() as usize % BUFFER_ALIGNMENT, 0);
        // Buffers outliving their pool free their memory.
        drop(pool);
        drop(c);
        // Large blocks are mappings; they are recycled the same way.
        let pool = BufferPool::new(8 << 20);
        let big = pool.allocate(MAPPED_BUFFER_BYTES).unwrap();
        assert!(big.to_vec().iter().all(|&x| x == 0));
        drop(big);
        assert_eq!(pool.held_bytes(), MAPPED_BUFFER_BYTES);
        assert_eq!(pool.allocate(0).unwrap().len(), 0);
    }

    use super::*;

    #[test]
    fn buffer_bounds_and_fill() {
        let b = Arc::new(Buffer::new(8).unwrap());
        b.fill::<2>(1, 2, 0xBEEFu16.to_le_bytes()).unwrap();
        assert_eq!(b.to_vec(), vec![0, 0, 0xEF, 0xBE, 0xEF, 0xBE, 0, 0]);
        assert!(b.load::<4>(2).is_err());
        assert_eq!(b.load::<4>(1).unwrap(), [0xEF, 0xBE, 0, 0]);
        assert!(b.fill::<8>(1, u64::MAX, [0; 8]).is_err());
        Buffer::copy(&b, 2, &b, 0, 4).unwrap();
        assert_eq!(&b.to_vec()[..4], &[0xEF, 0xBE, 0xEF, 0xBE]);
    }

    #[test]
    fn buffer_closure_borrows_fence_the_interpreter_paths() {
        let b = Arc::new(Buffer::from_vec(vec![1, 0, 0, 0, 2, 0, 0, 0]));
        assert_eq!(b.load::<4>(1).unwrap(), [2, 0, 0, 0]);
        // While a closure reads, loads work and stores are refused.
        b.with_bytes(|bytes| {
            assert_eq!(bytes[0], 1);
            assert_eq!(b.load::<4>(0).unwrap(), [1, 0, 0, 0]);
            let e = b.store::<4>(0, [9; 4]).unwrap_err();
            assert_eq!(e.code, StatusCode::FailedPrecondition);
            assert!(b.with_bytes_mut(|_| ()).is_err());
        });
        // While a closure writes, both are refused.
        b.with_bytes_mut(|bytes| {
            bytes[0] = 7;
            assert!(b.load::<4>(0).is_err());
            assert!(b.store::<1>(0, [1]).is_err());
        })
        .unwrap();
        // Afterwards everything works again; out of range is OUT_OF_RANGE.
        b.store::<4>(1, [5, 0, 0, 0]).unwrap();
        assert_eq!(b.to_vec(), vec![7, 0, 0, 0, 5, 0, 0, 0]);
        assert_eq!(b.load::<4>(2).unwrap_err().code, StatusCode::OutOfRange);
        assert_eq!(
            b.load::<8>(u64::MAX).unwrap_err().code,
            StatusCode::OutOfRange
        );
        // Empty buffers have no elements.
        let empty = Arc::new(Buffer::new(0).unwrap());
        assert!(empty.load::<1>(0).is_err());
        assert!(empty.with_bytes(|x| x.is_empty()));
    }

    #[test]
    fn list_conversions() {
        let l = List::new(TypeDef::Value(ValueType::I8), 0).unwrap();
        l.resize(2).unwrap();
        l.set_i32(0, 0x1FF).unwrap();
        assert_eq!(l.get_i32(0).unwrap(), -1);
        assert!(l.get_i32(2).is_err());
        assert!(l.set_ref(0, Ref::Null).is_err());
    }

    #[test]
    fn siphash_known_vector() {
        // SipHash-2-4 reference vector for the empty message with key 00..0f.
        assert_eq!(siphash24(&[]), 0x726fdb47dd0e0e31);
    }
}
