//! The storage a [`Module`](super::Module) borrows everything from.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use super::error::LoadError;

/// Immutable backing bytes of a module: a file mapping, or memory.
#[derive(Debug)]
pub enum ModuleBytes {
    /// A read-only mapping of a module file.
    Mapped(Mmap),
    /// Shared heap bytes.
    Shared(Arc<[u8]>),
    /// Owned heap bytes.
    Owned(Vec<u8>),
    /// Bytes that live for the whole program (e.g. `include_bytes!`).
    Static(&'static [u8]),
    /// Bytes an embedder lends without a copy (a Python `bytes` object,
    /// say), kept alive by the module.
    Lent(LentBytes),
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

impl ModuleBytes {
    /// The bytes of the module file at `path`: a private copy when the file
    /// is at most [`PRIVATE_COPY_BYTES`], otherwise a read-only mapping
    /// ([`ModuleBytes::map_file`]).
    pub fn read_or_map_file(path: &Path) -> Result<Self, LoadError> {
        use std::io::Read;
        let io = |source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len > PRIVATE_COPY_BYTES {
            return ModuleBytes::map_file(path);
        }
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(len as usize)
            .map_err(|_| io(std::io::ErrorKind::OutOfMemory.into()))?;
        // At most one byte past the limit: a file that grew meanwhile is
        // mapped after all.
        (&mut file)
            .take(PRIVATE_COPY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > PRIVATE_COPY_BYTES {
            return ModuleBytes::map_file(path);
        }
        Ok(ModuleBytes::Owned(bytes))
    }

    /// Maps `path` read-only. Nothing is read eagerly; pages are faulted in
    /// on access.
    pub fn map_file(path: &Path) -> Result<Self, LoadError> {
        let io = |source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        // SAFETY: the mapping is read-only and we never hand out mutable
        // access. As with every file mapping, the caller must not truncate or
        // rewrite the file while the module is alive; that is documented on
        // `Module::from_file`.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        Ok(ModuleBytes::Mapped(map))
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            ModuleBytes::Mapped(map) => map,
            ModuleBytes::Shared(bytes) => bytes,
            ModuleBytes::Owned(bytes) => bytes,
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
        ModuleBytes::Mapped(map)
    }
}
