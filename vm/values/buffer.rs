//! `!vm.buffer`: byte buffers ([`Buffer`]), the pool that recycles their
//! memory ([`BufferPool`]), and the bytes lent to native code
//! ([`RawBytes`]). Every access to a mutable buffer's bytes happens under
//! its thread lease (the child module `lease`).

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

use crate::loader::Module;
use crate::trap::{StatusCode, Trap};

pub(crate) mod lease;

pub use lease::RegionLease;

/// Who keeps a buffer's bytes alive.
enum Owner {
    /// A heap allocation of exactly `len` bytes (align 1) that the buffer
    /// frees on drop; nothing when `len` is 0 (the pointer is dangling).
    Heap,
    /// A module's file bytes (a rodata segment borrowed from the mapping).
    Module(
        #[expect(
            dead_code,
            reason = "never read: held to keep the module's bytes alive"
        )]
        Module,
    ),
    /// Memory [`Buffer::new`] allocated: [`BUFFER_ALIGNMENT`]-aligned heap
    /// bytes or, when large, an anonymous mapping; freed on drop.
    Block(
        #[expect(
            dead_code,
            reason = "never read: held so that dropping the buffer frees it"
        )]
        Block,
    ),
    /// A range of another buffer's bytes ([`Buffer::view`]); holding the
    /// root buffer (never itself a view) keeps them alive.
    View(Arc<Buffer>),
    /// Read-only bytes an embedder lends ([`Buffer::borrowed`]): a file
    /// mapping of model weights, say.
    Borrowed(
        #[expect(dead_code, reason = "never read: held to keep the lent bytes alive")]
        Arc<dyn AsRef<[u8]> + Send + Sync>,
    ),
    /// Writable memory an embedder lends ([`Buffer::foreign_mut`]): a
    /// writable numpy array used in place, say.
    Foreign(
        #[expect(dead_code, reason = "never read: held to keep the lent memory alive")]
        Arc<dyn std::any::Any + Send + Sync>,
    ),
    /// Memory of a [`BufferPool`], given back to it on drop.
    Pooled(
        #[expect(
            dead_code,
            reason = "never read: held so that dropping the buffer returns the memory to the pool"
        )]
        PoolSlot,
    ),
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
            return Block::mapped(len).ok_or_else(too_big);
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

    /// `len` zeroed bytes of an anonymous mapping that starts on a huge-page
    /// boundary and asks for transparent huge pages; `None` when the
    /// mapping fails. The mapping reserves one huge page more than `len`
    /// so that the block can start on a boundary: without that, a 3 MiB
    /// buffer mapped at an arbitrary 4 KiB boundary would often hold no
    /// whole aligned 2 MiB range and get no huge page at all. The slack
    /// is address space only (never touched, so never backed by memory).
    fn mapped(len: usize) -> Option<Block> {
        let reserved = len.checked_add(HUGE_PAGE_BYTES)?;
        let mut map = memmap2::MmapMut::map_anon(reserved).ok()?;
        #[cfg(target_os = "linux")]
        {
            // Only a hint: without huge pages the buffer works the same.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        let start = map.as_mut_ptr();
        let skip = start.align_offset(HUGE_PAGE_BYTES);
        if skip > HUGE_PAGE_BYTES {
            return None;
        }
        // `skip + len <= reserved`: the block lies inside the mapping.
        let ptr = std::ptr::NonNull::new(start.wrapping_add(skip))?;
        Some(Block {
            ptr,
            len,
            map: Some(map),
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

/// A copy of `bytes` in a new [`BUFFER_ALIGNMENT`]-aligned buffer (mutable
/// or not) when they are not empty and start elsewhere; `None` when they
/// are aligned already, or when no aligned buffer of their size can be
/// allocated (the caller then uses them where they are).
fn aligned_copy(bytes: &[u8], mutable: bool) -> Option<Buffer> {
    if bytes.is_empty() || bytes.as_ptr() as usize % BUFFER_ALIGNMENT == 0 {
        return None;
    }
    let mut copy = Buffer::new(bytes.len()).ok()?;
    copy.with_bytes_mut(|b| b.copy_from_slice(bytes)).ok()?;
    copy.mutable = mutable;
    Some(copy)
}

/// Buffers at least this large are anonymous mappings that ask for
/// transparent huge pages: a 2 MiB page costs one fault instead of 512.
/// `vm_bench`'s 80 MB buffers spent a third of their run in the kernel's
/// page-fault path with 4 KiB pages.
const MAPPED_BUFFER_BYTES: usize = 2 << 20;

/// The boundary a mapped buffer starts on: x86-64's and AArch64's
/// (4 KiB granule) transparent huge page.
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// A buffer's bytes as [`Buffer::with_raw_parts`] lends them to native
/// code: where they start and how many there are.
#[derive(Clone, Copy, Debug)]
pub struct RawBytes {
    /// First byte ([`BUFFER_ALIGNMENT`]-aligned for a root buffer).
    pub ptr: *mut u8,
    /// Length in bytes.
    pub len: usize,
}

/// The lease of a buffer's allocation held by a region of native work
/// ([`Buffer::lease_for_native_region`]); dropping it frees the buffer for
/// anyone, [`NativeRegionLease::give_back`] hands it back to the thread it was
/// taken from, while that thread's run still goes on.
pub struct NativeRegionLease {
    root: Arc<Buffer>,
    /// The holder the lease was taken from: 0, or the lending thread's
    /// token (its run had touched the buffer); `None` once given back.
    lender: Option<u64>,
}

impl std::fmt::Debug for NativeRegionLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeRegionLease")
            .field("bytes", &self.root.len)
            .finish()
    }
}

impl NativeRegionLease {
    /// Gives the lease back to the thread it was taken from. Only for the
    /// lending thread while its run goes on (the region ended before its
    /// call did): a run that has ended gave back its leases already, and
    /// one given to it now would never be given back.
    pub fn give_back(mut self) {
        if let Some(lender) = self.lender.take() {
            lease::give_back_from_native_region(self.root.lease_word(), lender);
        }
    }

    /// Whether this is the lease of `buffer`'s allocation.
    pub fn covers(&self, buffer: &Buffer) -> bool {
        self.root.same_allocation(buffer)
    }
}

impl Drop for NativeRegionLease {
    fn drop(&mut self) {
        if self.lender.take().is_some() {
            lease::give_back_from_native_region(self.root.lease_word(), 0);
        }
    }
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
    /// `vm/values/buffer/lease.rs`): a word a root buffer allocates (`Box::into_raw`,
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
// views of one allocation; `vm/values/buffer/lease.rs`), taken with Acquire and given
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

fn conflict(c: lease::Conflict) -> Trap {
    match c {
        lease::Conflict::ThisThread => in_use(),
        lease::Conflict::OtherThread => other_thread(),
        lease::Conflict::AdoptedRegion => lent_to_region(),
        lease::Conflict::NativeRegion => Trap::new(
            StatusCode::FailedPrecondition,
            "buffer is in use by native workgroups still running for an earlier call",
        ),
    }
}

fn lent_to_region() -> Trap {
    Trap::new(
        StatusCode::FailedPrecondition,
        "buffer is lent to the workers of a dispatch region, which reach its bytes only through \
         raw pointers; it cannot be borrowed as a slice there",
    )
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
        if len == 0 {
            return Ok(Buffer::from_vec(Vec::new()));
        }
        let block = Block::fresh(len)?;
        Ok(Buffer {
            ptr: block.ptr,
            len,
            mutable: true,
            lease: new_lease(),
            owns_lease: true,
            owner: Owner::Block(block),
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

    /// A mutable buffer holding `bytes`: their allocation is taken over
    /// when it starts at a [`BUFFER_ALIGNMENT`] boundary, and copied once
    /// into an aligned one otherwise (a `Vec<u8>` promises one byte of
    /// alignment; kernels a hal binds the buffer to may read it with
    /// aligned vector instructions).
    pub fn from_vec(bytes: Vec<u8>) -> Buffer {
        if let Some(copy) = aligned_copy(&bytes, true) {
            return copy;
        }
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
    ///
    /// A segment the module's storage holds at an address that is not
    /// [`BUFFER_ALIGNMENT`]-aligned (a module file read into the heap, bytes
    /// an embedder lent) is copied once into an aligned, read-only buffer
    /// instead: compiled kernels read constants with aligned vector loads
    /// (an llvm-cpu executable built for an AVX2 host faulted on a
    /// 16-byte-aligned weight), and iree-compile aligns every segment to 64
    /// bytes within the file for that reason.
    pub fn rodata(module: Module, range: Range<usize>) -> Buffer {
        let bytes = module.file_bytes().get(range).unwrap_or(&[]);
        if let Some(copy) = aligned_copy(bytes, false) {
            return copy;
        }
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

    /// A read-only view of `range` of `bytes`, which the buffer keeps alive
    /// (no bytes are copied when the range starts at a
    /// [`BUFFER_ALIGNMENT`] boundary): how host modules hand programs
    /// memory they own, such as a memory-mapped parameter archive. A range
    /// starting elsewhere is copied once into an aligned read-only buffer,
    /// as [`Buffer::rodata`] does, since kernels may read it with aligned
    /// vector instructions. `bytes` must not change while the buffer lives
    /// (its `as_ref` must give the same slice every time). A range outside
    /// `bytes` is an `OUT_OF_RANGE` error.
    pub fn borrowed(
        bytes: Arc<dyn AsRef<[u8]> + Send + Sync>,
        range: Range<usize>,
    ) -> Result<Buffer, Trap> {
        let all = (*bytes).as_ref();
        let Some(slice) = all.get(range.clone()) else {
            return Err(out_of_range(
                range.start,
                range.end.saturating_sub(range.start),
                1,
                all.len(),
            ));
        };
        if let Some(copy) = aligned_copy(slice, false) {
            return Ok(copy);
        }
        let (ptr, len) = (slice.as_ptr() as *mut u8, slice.len());
        Ok(Buffer {
            ptr: std::ptr::NonNull::new(ptr).unwrap_or(std::ptr::NonNull::dangling()),
            len,
            mutable: false,
            lease: new_lease(),
            owns_lease: true,
            owner: Owner::Borrowed(bytes),
            charge: None,
        })
    }

    /// A mutable buffer over `len` bytes at `ptr` that an embedder lends
    /// (no bytes are copied): programs read and write them in place, as a
    /// writable numpy array passed to a function. `owner` is kept alive by
    /// the buffer (and its views) and dropped after the last of them.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes, and not
    /// move, for as long as `owner` lives. The buffer's thread lease orders
    /// the VM's own accesses (contexts on different threads, closure
    /// borrows) but does not cover the embedder: the caller must make sure
    /// nothing else reads or writes the bytes while a context may access
    /// them (a Python thread writing the array during a call is a data
    /// race the lease cannot see).
    pub unsafe fn foreign_mut(
        ptr: *mut u8,
        len: usize,
        owner: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Buffer {
        Buffer {
            ptr: std::ptr::NonNull::new(ptr).unwrap_or(std::ptr::NonNull::dangling()),
            len,
            mutable: true,
            lease: new_lease(),
            owns_lease: true,
            owner: Owner::Foreign(owner),
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

    /// This buffer, refused to every write from now on (a read-only
    /// buffer made fresh: [`Buffer::new`]'s zeroed bytes, so that its
    /// allocation fails as an error, never an abort).
    pub fn into_read_only(mut self) -> Buffer {
        self.mutable = false;
        self
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
    /// inside a context's run (a host function) when a context running
    /// on another thread holds the buffer, since a run must not wait; and
    /// on a thread that adopted a [`RegionLease`] the buffer is lent to
    /// (its threads reach it through raw pointers only).
    /// (Host functions made with `NativeModule` turn the panic into a trap.)
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self.read(f) {
            Ok(out) => out,
            Err(lease::Conflict::ThisThread) => panic!("buffer already borrowed mutably"),
            Err(lease::Conflict::OtherThread | lease::Conflict::NativeRegion) => {
                panic!("buffer is in use by another thread's running context")
            }
            Err(lease::Conflict::AdoptedRegion) => {
                panic!("buffer is lent to a dispatch region's workers (raw access only)")
            }
        }
    }

    /// Runs `f` over the bytes under a shared closure borrow; a conflicting
    /// borrow is returned without calling `f`.
    fn read<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Result<R, lease::Conflict> {
        let guard = if self.mutable {
            Some(lease::borrow(self.lease_word(), true)?)
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
        let guard = lease::borrow(self.lease_word(), false).map_err(conflict)?;
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
            // A buffer lent to the region this thread adopted is reached
            // through raw pointers by every adopting thread already: no
            // borrow to take (the region's lender holds it).
            if b.mutable && !seen && !lease::held_by_adopted_region(word) {
                guards.push(lease::borrow(word, false).map_err(conflict)?);
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

    /// Lends `buffers` to several threads at once for the duration of `f`:
    /// each thread that adopts the [`RegionLease`] `f` is given
    /// ([`RegionLease::adopt`], unsafe: the adopting threads must not race
    /// on a byte) runs interpreters that read and write the buffers as if
    /// it held their thread lease, side by side (how the hal runs the
    /// workgroups of a vmvx dispatch on every worker of a device).
    ///
    /// Every distinct mutable allocation among `buffers` (views of one
    /// count once) is first borrowed mutably, as by
    /// [`Buffer::with_raw_parts`] (so the same errors and waits), and
    /// then held by the region until `f` returns: no other thread, and no
    /// closure on this thread, touches the bytes meanwhile. `f` must join
    /// every thread it lets adopt the lease before it returns (the lease
    /// is borrowed, so scoped threads or a job that joins do).
    ///
    /// ```
    /// use irvm::Buffer;
    /// use std::sync::Arc;
    /// let out = Arc::new(Buffer::new(8)?);
    /// Buffer::lend_to_workers(&[&out], |region| {
    ///     std::thread::scope(|s| {
    ///         for k in 0..2u64 {
    ///             let out = &out;
    ///             // SAFETY: the two threads store to different bytes.
    ///             s.spawn(move || unsafe { region.adopt(|| out.store::<4>(k, [k as u8 + 1; 4])) });
    ///         }
    ///     })
    /// })?;
    /// assert_eq!(out.to_vec(), [1, 1, 1, 1, 2, 2, 2, 2]);
    /// # Ok::<(), irvm::Trap>(())
    /// ```
    pub fn lend_to_workers<R>(
        buffers: &[&Buffer],
        f: impl FnOnce(&RegionLease) -> R,
    ) -> Result<R, Trap> {
        let mut words: Vec<&AtomicU64> = Vec::with_capacity(buffers.len());
        for b in buffers {
            let word = b.lease_word();
            if b.mutable && !words.iter().any(|w| std::ptr::eq(*w, word)) {
                words.push(word);
            }
        }
        let (lent, region) = lease::Lent::lend(&words).map_err(conflict)?;
        let out = f(&region);
        drop(lent);
        Ok(out)
    }

    /// The bytes as a raw pointer when this thread adopted a region that
    /// holds them (or they are read-only and this thread adopted one):
    /// how the buffer operations reach region-held bytes without a slice
    /// (`vm/values/buffer/lease.rs`). `None` otherwise (the closure-borrow
    /// paths apply).
    fn region_raw(&self) -> Option<*mut u8> {
        let region = lease::adopted_region() != 0;
        let held = if self.mutable {
            lease::held_by_adopted_region(self.lease_word())
        } else {
            region
        };
        held.then_some(self.ptr.as_ptr())
    }

    /// Where the bytes are and how many there are, for native code that
    /// holds the buffer's lease ([`Buffer::lease_for_native_region`]) or only
    /// reads a read-only buffer; the pointer must not be used otherwise.
    pub fn raw_bytes(&self) -> RawBytes {
        RawBytes {
            ptr: self.ptr.as_ptr(),
            len: self.len,
        }
    }

    /// Whether `self` and `other` are views of one allocation (and share
    /// one lease).
    pub fn same_allocation(&self, other: &Buffer) -> bool {
        std::ptr::eq(self.lease_word(), other.lease_word())
    }

    /// Takes the lease on this buffer's allocation (shared by its views)
    /// for a *region* of native work: workgroups on a pool of threads that
    /// may go on after the call that started them returned (the hal stops
    /// handing out workgroups when a call is interrupted, and lets those
    /// running end in the background). While the [`NativeRegionLease`] lives,
    /// the bytes are the region's: every other borrow, every run's access,
    /// on any thread, waits for it to be given back (it cannot deadlock: a
    /// region waits for nothing). `None` for a read-only buffer, which
    /// needs no lease.
    ///
    /// When a closure or another thread's run holds the lease, the answer
    /// is as [`Buffer::with_raw_parts`]'s (FAILED_PRECONDITION, or a wait
    /// outside a run). While another region holds it, `wait` is called
    /// about every millisecond until the lease is free: its error (a stop)
    /// ends the wait and is returned.
    ///
    /// ```
    /// use irvm::Buffer;
    /// use std::sync::Arc;
    /// let a = Arc::new(Buffer::new(8)?);
    /// let lease = a.lease_for_native_region(&mut || Ok(()))?.expect("mutable");
    /// let raw = a.raw_bytes();
    /// // A worker thread writes through the pointer while the lease lives.
    /// let at = raw.ptr as usize;
    /// std::thread::spawn(move || {
    ///     // SAFETY: the region's lease makes the 8 bytes its own.
    ///     unsafe { *(at as *mut u8).add(3) = 7 }
    /// })
    /// .join()
    /// .unwrap();
    /// lease.give_back();
    /// assert_eq!(a.to_vec()[3], 7);
    /// # Ok::<(), irvm::Trap>(())
    /// ```
    pub fn lease_for_native_region(
        self: &Arc<Self>,
        wait: &mut dyn FnMut() -> Result<(), Trap>,
    ) -> Result<Option<NativeRegionLease>, Trap> {
        if !self.mutable {
            return Ok(None);
        }
        let root = self.lease_root();
        loop {
            match lease::take_for_native_region(root.lease_word()) {
                Ok(holder) => {
                    return Ok(Some(NativeRegionLease {
                        root,
                        lender: Some(holder),
                    }))
                }
                Err(lease::Conflict::NativeRegion) => {
                    wait()?;
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(c) => return Err(conflict(c)),
            }
        }
    }

    /// A copy of the bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        if let Some(ptr) = self.region_raw() {
            return self.region_read(ptr, 0..self.len);
        }
        self.with_bytes(|b| b.to_vec())
    }

    /// Loads the `N`-byte element at element index `index`.
    ///
    /// Inside a context's run (a host function), the run keeps the buffer's
    /// lease until it returns; outside, the load is one closure borrow.
    #[inline(always)]
    pub fn load<const N: usize>(self: &Arc<Self>, index: u64) -> Result<[u8; N], Trap> {
        self.load_as(lease::token(), index)
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
    /// threads wait for or refuse a leased buffer, `vm/values/buffer/lease.rs`).
    /// Whether the thread with `token` may read the bytes without further
    /// checks when the lease word is `w`: it holds the lease (closure
    /// borrows of its own do not matter for reading), or the buffer is
    /// read-only.
    #[inline(always)]
    fn readable_with(&self, w: u64, token: u64) -> bool {
        (w ^ token) < lease::MUT || !self.mutable
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
                && lease::in_run()
                && lease::acquire_for_run(self)
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
        if !lease::in_run() {
            // One shared closure borrow around the read (waits for other
            // threads); under it the fast path's check holds.
            let _guard = lease::borrow(self.lease_word(), true).map_err(conflict)?;
            return self.load(index);
        }
        if !lease::acquire_for_run(self) {
            return Err(other_thread());
        }
        let w = self.lease_word().load(Ordering::Relaxed);
        if (w ^ lease::token()) < lease::MUT {
            self.load(index)
        } else {
            Err(in_use())
        }
    }

    /// Stores the `N`-byte element at element index `index` (leases as
    /// [`Buffer::load`]).
    #[inline(always)]
    pub fn store<const N: usize>(self: &Arc<Self>, index: u64, value: [u8; N]) -> Result<(), Trap> {
        self.store_as(lease::token(), index, value)
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
        if !lease::in_run() {
            let at = index as usize * N;
            return self.with_bytes_mut(|b| b[at..at + N].copy_from_slice(&value));
        }
        if !lease::acquire_for_run(self) {
            return Err(other_thread());
        }
        if self.lease_word().load(Ordering::Relaxed) == lease::token() {
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
        if let (true, Some(ptr)) = (self.mutable, self.region_raw()) {
            let range = elem_range(index, count, N).filter(|r| r.end <= self.len);
            let Some(range) = range else {
                return Err(out_of_range(
                    (index as usize).wrapping_mul(N),
                    (count as usize).wrapping_mul(N),
                    N,
                    self.len,
                ));
            };
            for at in range.step_by(N) {
                // SAFETY: `at + N <= len` (the range is checked above and
                // steps by N from a multiple of N); the bytes are alive
                // (`owner`) and lent to this thread's region, whose threads
                // write disjoint bytes (`RegionLease::adopt`'s contract);
                // no slice of them exists on this thread.
                unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), ptr.add(at), N) };
            }
            return Ok(());
        }
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
        if let Some(src) = self.region_raw() {
            let bytes = self.region_read(src, r);
            copy.with_bytes_mut(|dst| dst.copy_from_slice(&bytes))?;
            return Ok(copy);
        }
        self.try_with_bytes(|src| copy.with_bytes_mut(|dst| dst.copy_from_slice(&src[r])))??;
        Ok(copy)
    }

    /// A copy of `range` (checked against the length by the caller) of
    /// region-held bytes at `ptr` (from [`Buffer::region_raw`]).
    fn region_read(&self, ptr: *mut u8, range: Range<usize>) -> Vec<u8> {
        debug_assert!(range.end <= self.len);
        let mut out = vec![0u8; range.len()];
        // SAFETY: `range` lies within the `len` bytes at `ptr` (callers
        // check it with `byte_range`), alive through `owner`; they are
        // read-only or lent to this thread's region, whose threads do not
        // write bytes another reads (`RegionLease::adopt`'s contract).
        unsafe { std::ptr::copy_nonoverlapping(ptr.add(range.start), out.as_mut_ptr(), out.len()) };
        out
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
        match (src.region_raw(), dst.region_raw()) {
            (Some(sp), Some(dp)) => {
                // SAFETY: both ranges are checked against their buffers'
                // lengths; the bytes are alive (`owner`), the destination
                // is mutable and lent to this thread's region (so is the
                // source, or it is read-only); `copy` is a memmove, so
                // overlapping views of one allocation are fine; the
                // region's threads do not race on these bytes
                // (`RegionLease::adopt`'s contract).
                unsafe { std::ptr::copy(sp.add(s.start), dp.add(d.start), d.len()) };
                return Ok(());
            }
            (Some(sp), None) => {
                let bytes = src.region_read(sp, s);
                return dst.with_bytes_mut(|db| db[d].copy_from_slice(&bytes));
            }
            (None, Some(dp)) => {
                // The source is another allocation (a view of the
                // destination's would be region-held too).
                return src.try_with_bytes(|sb| {
                    let from = &sb[s];
                    // SAFETY: `d` is checked against the destination's
                    // length, its bytes are alive, mutable and lent to this
                    // thread's region (no racing writer, by the region's
                    // contract), and `from` is a slice of a different
                    // allocation, `d.len()` bytes long.
                    unsafe {
                        std::ptr::copy_nonoverlapping(from.as_ptr(), dp.add(d.start), d.len())
                    }
                });
            }
            (None, None) => {}
        }
        // Buffers whose bytes may overlap in memory: two views of one
        // allocation (an IREE transient buffer's parts), or two allocations
        // an embedder lent over the same memory (`Buffer::foreign_mut`
        // twice). No slices of them (a shared and a mutable slice over the
        // same bytes alias, even where the copied ranges do not): raw
        // pointers and a memmove.
        let memory = |b: &Buffer| {
            let base = b.ptr.as_ptr() as usize;
            base..base + b.len
        };
        let (a, b) = (memory(src), memory(dst));
        let overlap = a.start < b.end && b.start < a.end;
        if !Arc::ptr_eq(src, dst) && (src.same_allocation(dst) || overlap) {
            return Buffer::with_raw_parts(&[src, dst], |p| {
                // SAFETY: both ranges are checked against their buffers'
                // lengths and the bytes are borrowed mutably for this
                // closure (one borrow per allocation; views share theirs;
                // a read-only source is only read); `copy` allows
                // overlap.
                unsafe { std::ptr::copy(p[0].ptr.add(s.start), p[1].ptr.add(d.start), d.len()) }
            });
        }
        if Arc::ptr_eq(src, dst) {
            dst.with_bytes_mut(|b| b.copy_within(s, d.start))
        } else {
            src.try_with_bytes(|sb| dst.with_bytes_mut(|db| db[d].copy_from_slice(&sb[s])))?
        }
    }

    /// [`Buffer::copy`] in pieces of `piece` bytes, calling `between`
    /// before each piece but the first (its error ends the work: how a copy
    /// of gigabytes stops at a deadline). Front to back, or back to front
    /// when the target starts inside the source in memory (views of one
    /// allocation, or two allocations lent over the same memory), so no
    /// piece overwrites bytes a later one still reads: the bytes move as one
    /// memmove would. Both ranges and the target's mutability are checked
    /// before the first piece: a copy refused for them writes nothing.
    pub fn copy_in_pieces(
        src: &Arc<Buffer>,
        src_offset: u64,
        dst: &Arc<Buffer>,
        dst_offset: u64,
        length: u64,
        piece: u64,
        mut between: impl FnMut() -> Result<(), Trap>,
    ) -> Result<(), Trap> {
        let in_range = |b: &Buffer, offset: u64| {
            offset
                .checked_add(length)
                .is_some_and(|end| end <= b.len() as u64)
        };
        if length <= piece
            || !in_range(src, src_offset)
            || !in_range(dst, dst_offset)
            || !dst.mutable
        {
            return Buffer::copy(src, src_offset, dst, dst_offset, length);
        }
        let start = |b: &Buffer, offset: u64| b.ptr.as_ptr() as u64 + offset;
        let (from, to) = (start(src, src_offset), start(dst, dst_offset));
        let backwards = to > from && to < from.saturating_add(length);
        let pieces = length.div_ceil(piece);
        for k in 0..pieces {
            if k > 0 {
                between()?;
            }
            let at = if backwards { pieces - 1 - k } else { k } * piece;
            let n = piece.min(length - at);
            Buffer::copy(src, src_offset + at, dst, dst_offset + at, n)?;
        }
        Ok(())
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
        match (lhs.region_raw(), rhs.region_raw()) {
            (Some(a), Some(b)) => Ok(lhs.region_read(a, l) == rhs.region_read(b, r)),
            (Some(a), None) => {
                let a = lhs.region_read(a, l);
                rhs.try_with_bytes(|b| a == b[r])
            }
            (None, Some(b)) => {
                let b = rhs.region_read(b, r);
                lhs.try_with_bytes(|a| a[l] == b)
            }
            (None, None) => lhs.try_with_bytes(|a| rhs.try_with_bytes(|b| a[l] == b[r]))?,
        }
    }

    /// SipHash-2-4 (key 00 01 .. 0f) of `length` bytes at `offset`, as IREE
    /// computes `vm.buffer.hash`.
    pub fn hash(&self, offset: u64, length: u64) -> Result<i64, Trap> {
        self.hash_in_pieces(offset, length, usize::MAX, || Ok(()))
    }

    /// [`Buffer::hash`] over pieces of `piece` bytes (a multiple of 8;
    /// `usize::MAX`: one piece),
    /// calling `between` before each piece but the first: its error ends
    /// the work (how the interpreter stops a hash of gigabytes at a
    /// deadline). The whole range is checked first.
    pub(crate) fn hash_in_pieces(
        &self,
        offset: u64,
        length: u64,
        piece: usize,
        mut between: impl FnMut() -> Result<(), Trap>,
    ) -> Result<i64, Trap> {
        debug_assert!(piece % 8 == 0 || piece == usize::MAX);
        let r = self.byte_range(offset, length)?;
        let mut hasher = SipHash24::new();
        let mut at = r.start;
        loop {
            if at > r.start {
                between()?;
            }
            let end = r.end.min(at.saturating_add(piece));
            if end == r.end {
                let whole = (end - at) / 8 * 8;
                let h = self.with_range(at..end, |b| {
                    let (blocks, tail) = b.split_at(whole);
                    hasher.blocks(blocks);
                    hasher.finish(tail)
                })?;
                return Ok(h as i64);
            }
            self.with_range(at..end, |b| hasher.blocks(b))?;
            at = end;
        }
    }

    /// Runs `f` over the bytes `range` (checked by the caller): a copy of
    /// them when the buffer is lent to this thread's region, else a shared
    /// borrow (FAILED_PRECONDITION where one cannot be had).
    fn with_range<R>(&self, range: Range<usize>, f: impl FnOnce(&[u8]) -> R) -> Result<R, Trap> {
        if let Some(ptr) = self.region_raw() {
            return Ok(f(&self.region_read(ptr, range)));
        }
        self.try_with_bytes(|b| f(&b[range]))
    }

    /// Whether `offset..offset+length` lies within the buffer
    /// (OUT_OF_RANGE naming the range when not).
    pub(crate) fn check_range(&self, offset: u64, length: u64) -> Result<(), Trap> {
        self.byte_range(offset, length).map(|_| ())
    }
}

fn elem_range(index: u64, count: u64, size: usize) -> Option<Range<usize>> {
    let start = usize::try_from(index).ok()?.checked_mul(size)?;
    let len = usize::try_from(count).ok()?.checked_mul(size)?;
    Some(start..start.checked_add(len)?)
}

/// SipHash-2-4 of `data` with the key 00 01 .. 0f, in one part.
#[cfg(test)]
fn siphash24(data: &[u8]) -> u64 {
    let whole = data.len() / 8 * 8;
    let mut hasher = SipHash24::new();
    hasher.blocks(&data[..whole]);
    hasher.finish(&data[whole..])
}

/// SipHash-2-4 (key 00 01 .. 0f) fed in parts: whole 8-byte blocks, then
/// the last 0 to 7 bytes.
struct SipHash24 {
    v: [u64; 4],
    /// Bytes fed so far.
    len: u64,
}

impl SipHash24 {
    fn new() -> SipHash24 {
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        SipHash24 {
            v: [
                0x736f6d6570736575 ^ k0,
                0x646f72616e646f6d ^ k1,
                0x6c7967656e657261 ^ k0,
                0x7465646279746573 ^ k1,
            ],
            len: 0,
        }
    }

    fn round(&mut self) {
        let v = &mut self.v;
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

    /// Feeds whole blocks (`data.len()` a multiple of 8).
    fn blocks(&mut self, data: &[u8]) {
        debug_assert!(data.len() % 8 == 0);
        for c in data.chunks_exact(8) {
            let m = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.v[3] ^= m;
            self.round();
            self.round();
            self.v[0] ^= m;
        }
        self.len = self.len.wrapping_add(data.len() as u64);
    }

    /// Feeds the last `tail` bytes (fewer than 8) and gives the hash.
    fn finish(&mut self, tail: &[u8]) -> u64 {
        debug_assert!(tail.len() < 8);
        let len = self.len.wrapping_add(tail.len() as u64);
        let mut b = len << 56;
        for (i, byte) in tail.iter().enumerate() {
            b |= (*byte as u64) << (8 * i);
        }
        self.v[3] ^= b;
        self.round();
        self.round();
        self.v[0] ^= b;
        self.v[2] ^= 0xff;
        for _ in 0..4 {
            self.round();
        }
        self.v[0] ^ self.v[1] ^ self.v[2] ^ self.v[3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    #[cfg_attr(miri, ignore = "large buffers are heap memory under Miri")]
    fn large_buffers_start_on_a_huge_page_boundary_and_are_whole() {
        // Three sizes: the threshold, one byte past a huge page, and an odd
        // size; from `Buffer::new` and from a pool. Each starts on a 2 MiB
        // boundary (so the kernel can back it with huge pages), reads as
        // zeros and takes writes up to its last byte.
        let pool = BufferPool::new(0);
        for len in [
            MAPPED_BUFFER_BYTES,
            HUGE_PAGE_BYTES + 1,
            5 * HUGE_PAGE_BYTES + 12345,
        ] {
            for b in [Buffer::new(len).unwrap(), pool.allocate(len).unwrap()] {
                assert_eq!(b.ptr.as_ptr() as usize % HUGE_PAGE_BYTES, 0, "{len} bytes");
                assert_eq!(b.len(), len);
                b.with_bytes_mut(|x| {
                    assert!(x[0] == 0 && x[len - 1] == 0);
                    x[len - 1] = 7;
                })
                .unwrap();
                assert_eq!(b.to_vec()[len - 1], 7);
            }
        }
        // Below the threshold: heap memory, 64-byte aligned.
        let small = Buffer::new(MAPPED_BUFFER_BYTES - 1).unwrap();
        assert_eq!(small.ptr.as_ptr() as usize % BUFFER_ALIGNMENT, 0);
    }

    #[test]
    fn embedder_bytes_start_aligned_however_they_were_held() {
        let raw = |b: &Buffer| Buffer::with_raw_parts(&[b], |p| p[0].ptr as usize).unwrap();
        // malloc gives 16-byte alignment: most of these start off a 64-byte
        // boundary.
        let vecs: Vec<Vec<u8>> = (0..16).map(|i| vec![i as u8 + 1; 100]).collect();
        let unaligned = vecs
            .into_iter()
            .find(|v| v.as_ptr() as usize % BUFFER_ALIGNMENT != 0)
            .expect("a Vec off a 64-byte boundary");
        let expected = unaligned.clone();
        let b = Buffer::from_vec(unaligned);
        assert_eq!(raw(&b) % BUFFER_ALIGNMENT, 0);
        assert!(b.is_mutable());
        assert_eq!(b.to_vec(), expected);

        let shared: Arc<Vec<u8>> = Arc::new((0..=255).collect());
        let base = shared.as_ptr() as usize;
        let start = (1..BUFFER_ALIGNMENT)
            .find(|k| (base + k) % BUFFER_ALIGNMENT != 0)
            .unwrap();
        let b = Buffer::borrowed(shared.clone(), start..start + 100).unwrap();
        assert_eq!(raw(&b) % BUFFER_ALIGNMENT, 0);
        assert!(!b.is_mutable());
        assert_eq!(b.to_vec(), shared[start..start + 100].to_vec());
        // An aligned range is lent in place.
        let start = (0..BUFFER_ALIGNMENT)
            .find(|k| (base + k) % BUFFER_ALIGNMENT == 0)
            .unwrap();
        let b = Buffer::borrowed(shared.clone(), start..start + 100).unwrap();
        assert_eq!(raw(&b), base + start);
    }

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
    fn a_region_lease_admits_its_adopting_threads_through_raw_access_only() {
        let all = Arc::new(Buffer::new(16).unwrap());
        let lo = Arc::new(Buffer::view(&all, 0, 8).unwrap());
        let hi = Arc::new(Buffer::view(&all, 8, 8).unwrap());
        let private = Arc::new(Buffer::new(4).unwrap());
        // A closure borrow on this thread refuses the lending.
        all.with_bytes(|_| {
            let e = Buffer::lend_to_workers(&[&lo], |_| ()).unwrap_err();
            assert_eq!(e.code, StatusCode::FailedPrecondition);
        });
        Buffer::lend_to_workers(&[&lo, &hi], |region| {
            std::thread::scope(|s| {
                for (k, part) in [&lo, &hi].into_iter().enumerate() {
                    let private = &private;
                    // SAFETY: each thread writes only its own view.
                    s.spawn(move || unsafe {
                        region.adopt(|| {
                            part.store::<4>(0, [k as u8 + 1; 4]).unwrap();
                            part.fill::<4>(1, 1, [k as u8 + 5; 4]).unwrap();
                            // No slice of a lent buffer on an adopting thread.
                            let e = part.with_bytes_mut(|_| ()).unwrap_err();
                            assert_eq!(e.code, StatusCode::FailedPrecondition);
                            assert!(part.try_with_bytes(|_| ()).is_err());
                            Buffer::with_raw_parts(&[part], |p| p[0].len).unwrap();
                            if k == 0 {
                                // A buffer the adopted run leases is given
                                // back when the adoption ends.
                                private.store::<4>(0, [9; 4]).unwrap();
                            }
                        })
                    });
                }
            })
        })
        .unwrap();
        // The words are back: this thread and others use the bytes again.
        assert_eq!(
            all.to_vec(),
            [1, 1, 1, 1, 5, 5, 5, 5, 2, 2, 2, 2, 6, 6, 6, 6]
        );
        std::thread::scope(|s| {
            s.spawn(|| private.with_bytes_mut(|b| b[0] = 7).unwrap());
        });
        assert_eq!(private.to_vec(), [7, 9, 9, 9]);
        all.with_bytes_mut(|b| b[0] = 3).unwrap();
        // Copies between two views of one allocation, outside any region.
        Buffer::copy(&lo, 0, &hi, 4, 4).unwrap();
        assert_eq!(all.to_vec()[12..], [3, 1, 1, 1]);
    }

    #[test]
    fn siphash_known_vector() {
        // SipHash-2-4 reference vector for the empty message with key 00..0f.
        assert_eq!(siphash24(&[]), 0x726fdb47dd0e0e31);
    }
}
