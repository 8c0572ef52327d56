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
}

impl ModuleBytes {
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
