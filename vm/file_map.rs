//! Read-only file mappings that survive the file shrinking under them.
//!
//! A page of a mapping that is no longer backed by the file (another
//! process truncated it) raises SIGBUS on access, which kills the process.
//! A [`FileMap`] registers its address range with a process-wide SIGBUS
//! handler. When a fault lands in a registered range, the handler maps
//! zero pages over the rest of that mapping (from the faulting page to its
//! end) and the access that faulted runs again, reading zeros; the map
//! remembers the loss ([`FileMap::lost`]). Nothing unwinds: the code that
//! read goes on as if the file held zeros there, and its owner asks
//! [`FileMap::lost`] afterwards and discards what was computed (irvm's
//! tools report DATA_LOSS naming the file).
//!
//! Zeros are only safe where any bytes are: parameter archives' weights.
//! Module files are not mapped this way, since the loader's checks of
//! their bytes would no longer hold (see `loader::ModuleBytes`).
//!
//! A fault outside every registered range goes to the handler that was
//! installed before (Rust's own, which reports stack overflows), or kills
//! the process as SIGBUS always did. At most [`MAX_GUARDED`] maps are
//! guarded at once; a map beyond that is still mapped, unguarded
//! ([`FileMap::guarded`] says which).

use std::fs::File;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

use memmap2::{Mmap, MmapOptions};

/// How many maps the SIGBUS handler guards at once.
pub const MAX_GUARDED: usize = 1024;

/// One registered address range. `end == 0` means free; ranges are
/// published by storing `start` before `end` (both read by the handler).
struct Slot {
    claimed: AtomicBool,
    start: AtomicUsize,
    end: AtomicUsize,
    lost: AtomicBool,
}

static SLOTS: [Slot; MAX_GUARDED] = [const {
    Slot {
        claimed: AtomicBool::new(false),
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        lost: AtomicBool::new(false),
    }
}; MAX_GUARDED];
static INSTALL: Once = Once::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// The SIGBUS action in place before ours (written once, before ours is
/// installed; read by the handler).
static mut PREVIOUS: Option<libc::sigaction> = None;

/// A read-only mapping of a file whose pages, if the file shrinks, read as
/// zeros instead of killing the process.
#[derive(Debug)]
pub struct FileMap {
    map: Mmap,
    /// The registry slot, when guarded.
    slot: Option<usize>,
}

impl FileMap {
    /// Maps all of `file` read-only; with `populate`, reads it in now
    /// (`MAP_POPULATE`).
    pub fn new(file: &File, populate: bool) -> std::io::Result<FileMap> {
        let mut options = MmapOptions::new();
        if populate {
            options.populate();
        }
        // SAFETY: the mapping is read-only and nothing in irvm writes the
        // file. A file that shrinks later faults on the lost pages; the
        // handler registered below turns those faults into zero pages.
        let map = unsafe { options.map(file) }?;
        let slot = register(map.as_ptr() as usize, map.len());
        Ok(FileMap { map, slot })
    }

    /// Whether the SIGBUS handler guards this map (false only when
    /// [`MAX_GUARDED`] others are guarded, or the handler could not be
    /// installed).
    pub fn guarded(&self) -> bool {
        self.slot.is_some()
    }

    /// Whether a read found pages the file no longer has (they read as
    /// zeros): whatever was computed from this map since it was made is
    /// not what the file held.
    pub fn lost(&self) -> bool {
        self.slot
            .is_some_and(|i| SLOTS[i].lost.load(Ordering::Acquire))
    }
}

impl Deref for FileMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl AsRef<[u8]> for FileMap {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let slot = &SLOTS[i];
            slot.end.store(0, Ordering::Release);
            slot.start.store(0, Ordering::Release);
            slot.lost.store(false, Ordering::Release);
            slot.claimed.store(false, Ordering::Release);
        }
        // The mapping (with any zero pages put over its tail) is unmapped
        // by `Mmap`'s drop: munmap takes the whole range whatever backs it.
    }
}

/// Claims a slot for `[start, start + len)`, installing the handler on
/// first use.
fn register(start: usize, len: usize) -> Option<usize> {
    INSTALL.call_once(install);
    if !INSTALLED.load(Ordering::Acquire) || len == 0 {
        return None;
    }
    for (i, slot) in SLOTS.iter().enumerate() {
        if slot
            .claimed
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            slot.lost.store(false, Ordering::Release);
            slot.start.store(start, Ordering::Release);
            slot.end.store(start + len, Ordering::Release);
            return Some(i);
        }
    }
    None
}

fn install() {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        PAGE.store(page as usize, Ordering::Relaxed);
    }
    // SAFETY: the structs are zeroed and then filled; `PREVIOUS` is written
    // here only, inside `Once`, before our handler can run (it is
    // installed by the second sigaction call).
    unsafe {
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
            return;
        }
        PREVIOUS = Some(previous);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0 {
            INSTALLED.store(true, Ordering::Release);
        }
    }
}

/// The SIGBUS handler: async-signal-safe (atomics and `mmap` only).
extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &SLOTS {
        let end = slot.end.load(Ordering::Acquire);
        let start = slot.start.load(Ordering::Acquire);
        if end == 0 || addr < start || addr >= end {
            continue;
        }
        let from = addr & !(page - 1);
        let len = (end - from).div_ceil(page) * page;
        // SAFETY: `[from, from + len)` lies within the registered mapping,
        // which is alive (its slot is cleared before it is unmapped), read
        // only, and owned by its `FileMap`: replacing its lost tail with
        // private zero pages changes no other memory.
        let mapped = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped != libc::MAP_FAILED {
            slot.lost.store(true, Ordering::Release);
            return;
        }
        break;
    }
    // Not ours (or the zero pages could not be mapped): what would have
    // happened without this handler.
    // SAFETY: `PREVIOUS` was written before this handler was installed and
    // never again; the previous handler is called as the kernel would.
    unsafe {
        let previous = (*std::ptr::addr_of!(PREVIOUS)).as_ref();
        match previous {
            Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
                if p.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(p.sa_sigaction);
                    f(signal, info, context);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                    f(signal);
                }
            }
            _ => {
                // Back to the default action; the access faults again on
                // return and the process ends with SIGBUS.
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(len: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; len]).unwrap();
        (dir, path)
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not support file-backed memory mappings")]
    fn a_file_truncated_under_its_map_reads_zeros_and_says_so() {
        let (_dir, path) = file_of(64 << 10);
        let map = FileMap::new(&File::open(&path).unwrap(), false).unwrap();
        assert!(map.guarded());
        assert_eq!(map[100], 7);
        assert!(!map.lost());
        // Another writer cuts the file to one page and a half.
        let cut = 4096 + 2048;
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(cut as u64)
            .unwrap();
        let last = std::hint::black_box(&map[..])[map.len() - 1];
        assert_eq!(last, 0);
        assert!(map.lost());
        // The bytes the file still has are untouched.
        assert!(map[..cut].iter().all(|&b| b == 7));
        // A new map of the same file starts intact.
        let again = FileMap::new(&File::open(&path).unwrap(), false).unwrap();
        assert_eq!(again.len(), cut);
        assert!(!again.lost());
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not support file-backed memory mappings")]
    fn maps_that_are_dropped_free_their_slot() {
        let (_dir, path) = file_of(4096);
        for _ in 0..2 * MAX_GUARDED {
            let map = FileMap::new(&File::open(&path).unwrap(), true).unwrap();
            assert!(map.guarded());
        }
    }

    /// Run by `an_unguarded_lost_page_still_ends_the_process` in a child:
    /// installs the handler, then reads a lost page of a plain mapping.
    #[test]
    #[ignore = "run in a child process by the test below"]
    fn child_reads_an_unguarded_lost_page() {
        if std::env::var_os("IRVM_FILE_MAP_CHILD").is_none() {
            return;
        }
        let (_dir, path) = file_of(64 << 10);
        let guarded = FileMap::new(&File::open(&path).unwrap(), false).unwrap();
        assert!(guarded.guarded());
        // SAFETY: test only: the fault below is the point.
        let plain = unsafe { Mmap::map(&File::open(&path).unwrap()) }.unwrap();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        std::hint::black_box(plain[plain.len() - 1]);
        unreachable!("the read above must fault");
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not support file-backed memory mappings")]
    fn an_unguarded_lost_page_still_ends_the_process() {
        use std::os::unix::process::ExitStatusExt;
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "file_map::tests::child_reads_an_unguarded_lost_page",
                "--ignored",
                "--nocapture",
            ])
            .env("IRVM_FILE_MAP_CHILD", "1")
            .output()
            .unwrap()
            .status;
        assert_eq!(status.signal(), Some(libc::SIGBUS), "{status:?}");
    }
}
