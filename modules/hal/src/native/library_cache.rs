//! Native executables shared per process: loading the same library bytes
//! (with the same format and constants) again returns the library already
//! loaded instead of writing and `dlopen`ing a second copy. A context that
//! loads a module a second time, or a second context loading the same
//! module, then skips the system loader (a third of loading a small
//! llvm-cpu module, docs/PERFORMANCE.md "Python").
//!
//! Each entry holds its library by `Arc`: a library stays loaded while any
//! executable uses it, and while it is among the [`KEEP_RECENT`] libraries
//! loaded last (so load, call, drop, load again reuses it). Entries are
//! matched by the whole bytes, not only a hash, so two different libraries
//! never share an entry.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use irvm::Trap;

use super::NativeExecutable;

/// Libraries kept loaded after their last user is gone.
pub const KEEP_RECENT: usize = 8;

/// Libraries larger than this are loaded per executable, not kept.
const MAX_KEPT_BYTES: usize = 64 << 20;

struct Entry {
    hash: u64,
    format: String,
    constants: Box<[u32]>,
    data: Box<[u8]>,
    library: Arc<NativeExecutable>,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn hash_of(format: &str, data: &[u8], constants: &[u32]) -> u64 {
    let mut h = DefaultHasher::new();
    format.hash(&mut h);
    constants.hash(&mut h);
    data.hash(&mut h);
    h.finish()
}

/// The library of `data` (native `format`, executable-level `constants`):
/// one loaded before when it is still in the cache, else loaded now and
/// kept.
pub fn load_shared(
    format: &str,
    data: &[u8],
    constants: &[u32],
) -> Result<Arc<NativeExecutable>, Trap> {
    if data.len() > MAX_KEPT_BYTES {
        return NativeExecutable::load(format, data, constants).map(Arc::new);
    }
    let hash = hash_of(format, data, constants);
    let same = |e: &Entry| {
        e.hash == hash && e.format == format && *e.constants == *constants && *e.data == *data
    };
    {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = cache.iter().position(same) {
            // Most recent last.
            let entry = cache.remove(k);
            let library = entry.library.clone();
            cache.push(entry);
            return Ok(library);
        }
    }
    // Loaded outside the lock: two threads loading the same new library
    // both load it, and the second keeps the first's entry.
    let library = Arc::new(NativeExecutable::load(format, data, constants)?);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = cache.iter().find(|e| same(e)) {
        return Ok(e.library.clone());
    }
    cache.push(Entry {
        hash,
        format: format.to_string(),
        constants: constants.into(),
        data: data.into(),
        library: library.clone(),
    });
    // The oldest unused entries go beyond KEEP_RECENT; those in use stay
    // (their library is loaded anyway) until a later load finds them unused.
    let mut excess = cache.len().saturating_sub(KEEP_RECENT);
    cache.retain(|e| {
        let drop_it = excess > 0 && Arc::strong_count(&e.library) == 1;
        if drop_it {
            excess -= 1;
        }
        !drop_it
    });
    Ok(library)
}

/// How many libraries the cache holds now (tests).
pub fn cached_count() -> usize {
    CACHE.lock().unwrap_or_else(|e| e.into_inner()).len()
}
