//! vmvx executables' modules shared per process: loading the same bytes
//! again (the same model loaded twice, in one context or several, or by
//! Python's `irvm.load` after a drop) returns the [`Module`] loaded
//! before, so it is verified and lowered once and its kernels compiled
//! once: the contexts of one `Module` share its compiled code
//! (`irvm`'s `jit::SharedCode`). Entries are matched by the whole bytes,
//! not only a hash; the [`KEEP_RECENT`] loaded last are kept after their
//! executables are gone.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use irvm::loader::LoadError;
use irvm::Module;

/// Modules kept after their last executable is gone.
pub const KEEP_RECENT: usize = 8;

/// Modules larger than this are loaded per executable, not kept.
const MAX_KEPT_BYTES: usize = 64 << 20;

static CACHE: Mutex<Vec<(u64, Module)>> = Mutex::new(Vec::new());

fn hash_of(data: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

/// The module of `data`: one loaded before from equal bytes while it is
/// still kept, else loaded (verified) now and kept.
pub fn load(data: Vec<u8>) -> Result<Module, LoadError> {
    if data.len() > MAX_KEPT_BYTES {
        return Module::from_bytes(data);
    }
    let hash = hash_of(&data);
    {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = cache
            .iter()
            .position(|(h, m)| *h == hash && m.file_bytes() == &data[..])
        {
            // The most recent last.
            let entry = cache.remove(k);
            let module = entry.1.clone();
            cache.push(entry);
            return Ok(module);
        }
    }
    let module = Module::from_bytes(data)?;
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.push((hash, module.clone()));
    if cache.len() > KEEP_RECENT {
        cache.remove(0);
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two different modules of the repository's test data.
    const FIB: &[u8] = include_bytes!("../../../tests/data/fib.vmfb");
    const LIB_B: &[u8] = include_bytes!("../../../tests/data/lib_b.vmfb");

    #[test]
    fn equal_bytes_share_one_module_and_different_bytes_do_not() {
        let a = load(FIB.to_vec()).unwrap();
        let again = load(FIB.to_vec()).unwrap();
        assert!(std::ptr::eq(a.file_bytes(), again.file_bytes()));
        let b = load(LIB_B.to_vec()).unwrap();
        assert!(!std::ptr::eq(a.file_bytes(), b.file_bytes()));
        assert_ne!(a.name(), b.name());
        // Bad bytes are the loader's error, and nothing is kept for them.
        assert!(load(vec![1, 2, 3]).is_err());
    }
}
