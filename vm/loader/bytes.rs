//! The storage a [`Module`](super::Module) borrows everything from.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::{Mmap, MmapMut, MmapOptions};

use super::error::LoadError;

/// Immutable backing bytes of a module: a file mapping, or memory.
#[derive(Debug)]
pub enum ModuleBytes {
    /// A mapping of a module file.
    Mapped(FileMapping),
    /// Shared heap bytes.
    Shared(Arc<[u8]>),
    /// Owned heap bytes.
    Owned(Vec<u8>),
    /// Heap bytes starting at a 64-byte boundary: a module file read into
    /// memory (so its rodata segments, 64-byte aligned within the file,
    /// stay aligned in memory and are used in place).
    Aligned(AlignedBytes),
    /// Bytes that live for the whole program (e.g. `include_bytes!`).
    Static(&'static [u8]),
    /// Bytes an embedder lends without a copy (a Python `bytes` object,
    /// say), kept alive by the module.
    Lent(LentBytes),
}

/// A module file's mapping ([`ModuleBytes::Mapped`]).
#[derive(Debug)]
pub enum FileMapping {
    /// A read-only mapping an embedder made: a write to its pages faults.
    ReadOnly(Mmap),
    /// A private copy-on-write mapping (what irvm maps a file as): pages
    /// are the file's until written, then this process's own. Nothing in
    /// irvm writes them, but a dispatch may: iree-compile imports a
    /// constant with `hal.allocator.import` and may then sort, scatter or
    /// copy into it in place (IREE's runtime reads modules into writable
    /// memory, so the program runs there). A read-only mapping made that
    /// a segmentation fault; the file itself is never changed.
    CopyOnWrite(MmapMut),
}

impl std::ops::Deref for FileMapping {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileMapping::ReadOnly(map) => map,
            FileMapping::CopyOnWrite(map) => map,
        }
    }
}

/// Owned heap bytes whose first byte sits at a [`AlignedBytes::ALIGNMENT`]
/// boundary ([`ModuleBytes::Aligned`]).
pub struct AlignedBytes {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: `AlignedBytes` owns its allocation exclusively, as a `Box<[u8]>`
// does; `&AlignedBytes` only reads it.
unsafe impl Send for AlignedBytes {}
// SAFETY: as above: shared references only read the bytes.
unsafe impl Sync for AlignedBytes {}

impl AlignedBytes {
    /// The alignment of the first byte: what iree-compile aligns rodata
    /// segments to within a module file.
    pub const ALIGNMENT: usize = 64;

    fn layout(len: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::from_size_align(len, Self::ALIGNMENT).ok()
    }

    /// `len` zero bytes; `None` when they cannot be allocated.
    pub fn zeroed(len: usize) -> Option<AlignedBytes> {
        if len == 0 {
            return Some(AlignedBytes {
                ptr: std::ptr::NonNull::dangling(),
                len: 0,
            });
        }
        let layout = Self::layout(len)?;
        // SAFETY: `layout` has a non-zero size (len > 0).
        let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(AlignedBytes { ptr, len })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is a live allocation of `len` initialised (zeroed,
        // then written) bytes owned by `self`, or dangling with len 0.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, to fill.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBytes {
    fn drop(&mut self) {
        if self.len > 0 {
            if let Some(layout) = Self::layout(self.len) {
                // SAFETY: allocated in `zeroed` with this same layout.
                unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
            }
        }
    }
}

impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

/// Immutable bytes owned elsewhere ([`ModuleBytes::Lent`]): `as_ref` must
/// give the same slice, with the same contents, every time and for as long
/// as the value lives (the module is verified once, then trusted).
#[derive(Clone)]
pub struct LentBytes(pub Arc<dyn AsRef<[u8]> + Send + Sync>);

impl std::fmt::Debug for LentBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LentBytes({} bytes)", (*self.0).as_ref().len())
    }
}

/// Module files up to this size are read into memory instead of mapped.
///
/// A mapping turns any later truncation of the file (another process
/// rewriting it while irvm runs) into SIGBUS on the next access to a lost
/// page: rodata, names, debug locations. A private copy cannot change.
/// Copying costs time and memory, so large files (weights) stay mapped:
/// reading a cached 16 MiB file took 2 ms on the development machine, 64
/// MiB 115 ms and 256 MiB 360 ms, against next to nothing for a mapping.
/// See docs/HOSTILE_INPUT.md.
pub const PRIVATE_COPY_BYTES: u64 = 16 << 20;

/// An error unless `path` names a regular file (after links): asked of
/// the file system without opening it, since opening a FIFO waits for a
/// writer (no deadline can cut that short), and a FIFO, socket or device
/// can be neither mapped nor sized.
fn refuse_unless_regular(path: &Path) -> std::io::Result<()> {
    let kind = std::fs::metadata(path)?.file_type();
    if kind.is_file() || kind.is_dir() {
        // A directory fails at its read with the system's own words.
        return Ok(());
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "not a regular file (a FIFO, socket or device): a module is read from a file, \
         or from a pipe through stdin",
    ))
}

impl ModuleBytes {
    /// The bytes of the module file at `path`: a private copy when the file
    /// is at most [`PRIVATE_COPY_BYTES`], otherwise a private copy-on-write mapping
    /// ([`ModuleBytes::map_file`]). Only a regular file (or a link to one)
    /// is opened: a FIFO would block the open until a writer came, and
    /// neither it nor a device can be mapped.
    pub fn read_or_map_file(path: &Path) -> Result<Self, LoadError> {
        use std::io::Read;
        let io = |source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        };
        refuse_unless_regular(path).map_err(io)?;
        let mut file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len > PRIVATE_COPY_BYTES {
            // The file already checked and opened: not looked up again.
            return ModuleBytes::map_opened(&file).map_err(io);
        }
        let Some(mut bytes) = usize::try_from(len).ok().and_then(AlignedBytes::zeroed) else {
            return Err(io(std::io::ErrorKind::OutOfMemory.into()));
        };
        file.read_exact(bytes.as_mut_slice()).map_err(io)?;
        // A file that grew while it was read is mapped after all (as it is
        // now), rather than cut at the size it had.
        let mut more = [0u8; 1];
        if file.read(&mut more).map_err(io)? != 0 {
            return ModuleBytes::map_opened(&file).map_err(io);
        }
        Ok(ModuleBytes::Aligned(bytes))
    }

    /// Maps `path` privately, copy-on-write ([`FileMapping::CopyOnWrite`]).
    /// Nothing is read eagerly; pages are faulted in on access.
    pub fn map_file(path: &Path) -> Result<Self, LoadError> {
        let io = |source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        };
        refuse_unless_regular(path).map_err(io)?;
        let file = File::open(path).map_err(io)?;
        ModuleBytes::map_opened(&file).map_err(io)
    }

    /// Maps `file`, a regular file opened for reading, privately and
    /// copy-on-write.
    fn map_opened(file: &File) -> std::io::Result<Self> {
        // SAFETY: a private mapping: no write reaches the file, and irvm
        // hands out no mutable access (a native kernel's write lands in
        // this process's copy of the page). As with every file mapping, the caller must not truncate or
        // rewrite the file while the module is alive; that is documented on
        // `Module::from_file`.
        let map = unsafe { MmapOptions::new().map_copy(file) }?;
        Ok(ModuleBytes::Mapped(FileMapping::CopyOnWrite(map)))
    }

    /// How many of the bytes are memory the module keeps alive: heap bytes
    /// (a file read into memory, stdin, assembled text, a `Vec` or `Arc`
    /// handed over, bytes an embedder lends, such as a Python `bytes`)
    /// count in full; a file mapping (backed by the file, its pages
    /// reclaimable) and bytes of the program image count nothing. What a
    /// context charges its memory budget for the module
    /// ([`crate::Limits::max_memory_bytes`]).
    pub fn heap_bytes(&self) -> u64 {
        match self {
            ModuleBytes::Shared(_)
            | ModuleBytes::Owned(_)
            | ModuleBytes::Aligned(_)
            | ModuleBytes::Lent(_) => self.as_slice().len() as u64,
            ModuleBytes::Mapped(_) | ModuleBytes::Static(_) => 0,
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            ModuleBytes::Mapped(map) => map,
            ModuleBytes::Shared(bytes) => bytes,
            ModuleBytes::Owned(bytes) => bytes,
            ModuleBytes::Aligned(bytes) => bytes.as_slice(),
            ModuleBytes::Static(bytes) => bytes,
            ModuleBytes::Lent(bytes) => (*bytes.0).as_ref(),
        }
    }
}

impl From<Vec<u8>> for ModuleBytes {
    fn from(bytes: Vec<u8>) -> Self {
        ModuleBytes::Owned(bytes)
    }
}

impl From<Arc<[u8]>> for ModuleBytes {
    fn from(bytes: Arc<[u8]>) -> Self {
        ModuleBytes::Shared(bytes)
    }
}

impl From<&'static [u8]> for ModuleBytes {
    fn from(bytes: &'static [u8]) -> Self {
        ModuleBytes::Static(bytes)
    }
}

impl<const N: usize> From<&'static [u8; N]> for ModuleBytes {
    fn from(bytes: &'static [u8; N]) -> Self {
        ModuleBytes::Static(bytes)
    }
}

impl From<Mmap> for ModuleBytes {
    fn from(map: Mmap) -> Self {
        ModuleBytes::Mapped(FileMapping::ReadOnly(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_module_file_takes_writes_privately() {
        // A native kernel may write into an imported constant of a mapped
        // module (iree-compile's in-place sorts of constants): the page
        // becomes this process's, the file stays as it was.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.vmfb");
        std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
        let bytes = ModuleBytes::map_file(&path).unwrap();
        assert!(matches!(
            bytes,
            ModuleBytes::Mapped(FileMapping::CopyOnWrite(_))
        ));
        let slice = bytes.as_slice();
        let at = slice.as_ptr().wrapping_add(4096 + 5).cast_mut();
        // SAFETY: `at` lies inside the mapping, which is writable (private,
        // copy-on-write), and no reference reads the byte while it is
        // written; the test stands in for a kernel given the pointer.
        unsafe { at.write_volatile(42) };
        assert_eq!(bytes.as_slice()[4096 + 5], 42);
        assert_eq!(std::fs::read(&path).unwrap()[4096 + 5], 7);
    }
}
