//! What running one native region allocates on the calling thread
//! (`native/region.rs`): nothing on `local-sync`, nothing on `local-task`
//! when the call cannot be stopped, and one allocation (the region, which
//! its workers own) when it can. Counted by a global allocator that counts
//! each thread's allocations: this test binary's own.

#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::process::Command;

use irvm::{Buffer, ContextResources, Ref};
use irvm_hal::{BoundRange, DeviceConfig, DeviceKind, DeviceOptions, Dispatch, Executable};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call goes to the system allocator with the caller's
// arguments; the count is a thread-local cell without a destructor.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as the caller's contract for `alloc`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller's contract for `dealloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// `tests/data/native/testlib.c` built with the system C compiler; `None`
/// (after saying so) when there is none.
fn testlib() -> Option<Vec<u8>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("irvm-region-alloc-{}.so", std::process::id()));
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-nostdlib", "-O1", "-o"])
        .arg(&out)
        .arg(repo.join("tests/data/native/testlib.c"))
        .status();
    match status {
        Ok(s) if s.success() => {
            let bytes = std::fs::read(&out).unwrap();
            let _ = std::fs::remove_file(&out);
            Some(bytes)
        }
        Ok(s) => panic!("cc failed on testlib.c ({s})"),
        Err(e) => {
            eprintln!("SKIPPED: no C compiler (`cc`: {e}) to build the test executable library");
            None
        }
    }
}

/// Allocations on this thread while one dispatch of `step` (8 workgroups,
/// no local memory) runs, the second of two (the first starts the
/// workers).
fn allocations_of_a_dispatch(lib: &[u8], kind: DeviceKind, resources: ContextResources) -> u64 {
    let device = DeviceConfig::new(DeviceOptions {
        kind,
        ..DeviceOptions::default()
    });
    let exe = Executable::load("system-elf-x86_64", lib.to_vec(), &[], resources, &device).unwrap();
    let step = exe.lookup("step").unwrap();
    let bindings = || {
        vec![
            Ref::from(Buffer::new(32).unwrap()),
            Ref::from(Buffer::new(32).unwrap()),
        ]
    };
    let dispatch = |bindings| Dispatch {
        function: step,
        workgroups: [8, 1, 1],
        constants: &[1],
        bindings,
        location: None,
    };
    let first = bindings();
    exe.dispatch(dispatch(BoundRange::each_whole(&first)))
        .unwrap();
    let second = bindings();
    let d = dispatch(BoundRange::each_whole(&second));
    let before = allocations();
    exe.dispatch(d).unwrap();
    allocations() - before
}

#[test]
fn a_region_allocates_once_when_its_call_can_be_stopped_and_never_else() {
    let Some(lib) = testlib() else { return };
    let detached = ContextResources::detached;
    assert_eq!(
        allocations_of_a_dispatch(&lib, DeviceKind::Sync, detached()),
        0
    );
    for workers in [1, 2, 4] {
        let kind = DeviceKind::Task { workers };
        assert_eq!(
            allocations_of_a_dispatch(&lib, kind, detached()),
            0,
            "{kind:?}"
        );
        // A context with an interrupt handle: its calls can be stopped.
        let mut ctx = irvm::Context::new(&irvm::TypeRegistry::new());
        let _handle = ctx.interrupt_handle();
        let resources = ctx.resources().clone();
        assert_eq!(
            allocations_of_a_dispatch(&lib, kind, resources),
            1,
            "{kind:?}"
        );
    }
}
