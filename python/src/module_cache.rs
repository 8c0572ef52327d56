//! Modules shared per process: loading the same module bytes again (the
//! same file, or equal bytes) returns the [`Module`] read before, which
//! keeps the functions its first context verified and lowered, so the next
//! context copies them instead of doing that work again. With the hal's
//! library cache (`irvm_hal::native::library_cache`) a second load of an
//! llvm-cpu module neither verifies its bytecode nor `dlopen`s its code.
//!
//! Modules are matched by their whole bytes (a hash finds the candidate),
//! and the [`KEEP_RECENT`] modules read last are kept.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::sync::Mutex;

use irvm::Module;

/// Modules kept for later loads.
pub const KEEP_RECENT: usize = 8;

static CACHE: Mutex<Vec<(u64, Module)>> = Mutex::new(Vec::new());

fn hash_of(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

/// A module read before from bytes equal to `bytes`.
pub fn cached(bytes: &[u8]) -> Option<Module> {
    let hash = hash_of(bytes);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let k = cache
        .iter()
        .position(|(h, m)| *h == hash && m.file_bytes() == bytes)?;
    // Most recent last.
    let entry = cache.remove(k);
    let module = entry.1.clone();
    cache.push(entry);
    Some(module)
}

/// Keeps `module` for later loads of its bytes, dropping the oldest beyond
/// [`KEEP_RECENT`].
pub fn keep(module: &Module) {
    let hash = hash_of(module.file_bytes());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.push((hash, module.clone()));
    if cache.len() > KEEP_RECENT {
        cache.remove(0);
    }
}
