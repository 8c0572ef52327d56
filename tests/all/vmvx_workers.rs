//! vmvx dispatches on a `local-task` device: their workgroups run on
//! every worker (`modules/hal/src/vmvx_grid.rs`), each worker in a context
//! of its own, with the bindings lent to all of them by one region lease
//! (`vm/values/buffer/lease.rs`); results, errors, profiles, interrupts,
//! deadlines and fuel as on the calling thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use irvm::profile::{Profile, ProfileOptions};
use irvm::{Buffer, Context, Ref, StatusCode, Tier, TypeRegistry};
use irvm_hal::{
    BoundRange, DeviceConfig, DeviceKind, DeviceOptions, Dispatch, Executable, VMVX_FORMAT,
};

use crate::common::cli::irvm;
use crate::common::paths::repo;

/// A vmvx executable with one entry, `mark`, over bindings `out`, `copy`
/// and `filled` (N i32 elements each). Workgroup number
/// `n = x + cx * (y + cy * z)` spins `constants[0]` iterations, fails
/// (INVALID_ARGUMENT) when `n == constants[1]`, stores `n + 1` at
/// `out[n]` (an interpreter store), copies that element to `copy[n]`
/// (`vm.buffer.copy`) and fills `filled[n]` with `n + 1`
/// (`vm.buffer.fill.i32`): each workgroup touches only its own elements of
/// the bindings. It also stores `n + 1` into a 16-byte buffer of its
/// context's own, kept in a ref global (allocated by the first workgroup
/// a context runs): a buffer that outlives the dispatch.
const GRID: &str = r#"
vm.module @grid version 0
vm.type !vm.buffer
vm.type !vm.list<!vm.buffer>

vm.export @mark
vm.func @mark(%r0: !vm.buffer, %r1: !vm.buffer, %r2: !vm.list<!vm.buffer>, %i0: i32, %i1: i32, %i2: i32, %i3: i32, %i4: i32, %i5: i32, %i6: i32, %i7: i32, %i8: i32) -> () {
^bb0:
  %i9 = vm.mul.i32 %i7, %i2
  %i9 = vm.add.i32 %i9, %i1
  %i9 = vm.mul.i32 %i9, %i6
  %i9 = vm.add.i32 %i9, %i0
  %i10:11 = vm.const.i64.zero
  %i12 = vm.buffer.load.i32 %r1, %i10:11
  %i14:15 = vm.const.i64 1
  %i13 = vm.buffer.load.i32 %r1, %i14:15
  %i16 = vm.const.i32.zero
  %i17 = vm.const.i32 1
  vm.br ^bb1()
^bb1:
  %i18 = vm.cmp.lt.i32.s %i16, %i12
  vm.cond_br %i18, ^bb2(), ^bb3()
^bb2:
  %i16 = vm.add.i32 %i16, %i17
  vm.br ^bb1()
^bb3:
  %i18 = vm.cmp.eq.i32 %i9, %i13
  vm.cond_br %i18, ^bb4(), ^bb5()
^bb4:
  %i19 = vm.const.i32 3
  vm.fail %i19, "workgroup asked to fail"
^bb5:
  %i20 = vm.const.i32.zero
  %r3 = vm.list.get.ref %r2, %i20 : !vm.buffer
  %r4 = vm.list.get.ref %r2, %i17 : !vm.buffer
  %i21 = vm.const.i32 2
  %r5 = vm.list.get.ref %r2, %i21 : !vm.buffer
  %i22:23 = vm.ext.i32.i64.s %i9
  %i24 = vm.add.i32 %i9, %i17
  vm.buffer.store.i32 %i24, %r3, %i22:23
  %i26:27 = vm.const.i64 4
  %i28:29 = vm.mul.i64 %i22:23, %i26:27
  vm.buffer.copy %r3, %i28:29, %r4, %i28:29, %i26:27
  %i30:31 = vm.const.i64 1
  vm.buffer.fill.i32 %r5, %i22:23, %i30:31, %i24
  %r6 = vm.global.load.ref .refs[0] : !vm.buffer
  %i32 = vm.cmp.nz.ref %r6
  vm.cond_br %i32, ^bb7(), ^bb6()
^bb6:
  %i34:35 = vm.const.i64 16
  %i36 = vm.const.i32 16
  %r6 = vm.buffer.alloc %i34:35, %i36
  vm.global.store.ref %r6, .refs[0] : !vm.buffer
  vm.br ^bb7()
^bb7:
  vm.buffer.store.i32 %i24, %r6, %i10:11
  vm.return
}
"#;

fn grid_bytes() -> Vec<u8> {
    irvm::asm::assemble(GRID, "grid.vmasm").expect("assembles")
}

fn device(kind: DeviceKind) -> Arc<DeviceConfig> {
    DeviceConfig::new(DeviceOptions {
        kind,
        // Interpreted: the same speed on every worker from the first
        // workgroup (no compile under way on one of them).
        tier: Some(Tier::Interp),
        ..DeviceOptions::default()
    })
}

/// `out` and `copy` are views of one allocation (as IREE's transient
/// buffers are), `filled` another.
struct Bindings {
    out: Ref,
    copy: Ref,
    filled: Ref,
}

impl Bindings {
    fn new(n: usize) -> Bindings {
        let all = Arc::new(Buffer::new(8 * n).unwrap());
        Bindings {
            out: Ref::from(Buffer::view(&all, 0, 4 * n).unwrap()),
            copy: Ref::from(Buffer::view(&all, 4 * n, 4 * n).unwrap()),
            filled: Ref::from(Buffer::new(4 * n).unwrap()),
        }
    }

    fn ranges(&self) -> irvm_hal::Bindings<'_> {
        [&self.out, &self.copy, &self.filled]
            .into_iter()
            .map(BoundRange::whole)
            .collect()
    }

    fn words(&self) -> [Vec<u32>; 3] {
        [&self.out, &self.copy, &self.filled].map(|r| {
            r.buffer("b")
                .unwrap()
                .to_vec()
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }
}

/// Dispatches `mark` over `counts` on `exe` with `spin` iterations per
/// workgroup and workgroup `fail_at` failing (`u32::MAX`: none).
fn mark(
    exe: &Executable,
    counts: [u32; 3],
    spin: u32,
    fail_at: u32,
    b: &Bindings,
) -> Result<(), irvm::Trap> {
    exe.dispatch(Dispatch {
        function: 0,
        workgroups: counts,
        constants: &[spin, fail_at],
        bindings: b.ranges(),
        location: None,
    })
}

fn load(ctx: &Context, kind: DeviceKind) -> Executable {
    Executable::load(
        VMVX_FORMAT,
        grid_bytes(),
        &[],
        ctx.resources().clone(),
        &device(kind),
    )
    .expect("loads")
}

const KINDS: [DeviceKind; 4] = [
    DeviceKind::Sync,
    DeviceKind::Task { workers: 1 },
    DeviceKind::Task { workers: 2 },
    DeviceKind::Task { workers: 4 },
];

#[test]
fn every_workgroup_runs_once_whatever_the_worker_count() {
    let counts = [5, 3, 2];
    let n = 30;
    let expected: Vec<u32> = (1..=n as u32).collect();
    for kind in KINDS {
        let ctx = Context::new(&TypeRegistry::new());
        let exe = load(&ctx, kind);
        // Twice: the workers' contexts are made once and kept.
        for _ in 0..2 {
            let b = Bindings::new(n);
            mark(&exe, counts, 100, u32::MAX, &b).unwrap();
            let [out, copy, filled] = b.words();
            assert_eq!(out, expected, "{kind:?}");
            assert_eq!(copy, expected, "{kind:?}");
            assert_eq!(filled, expected, "{kind:?}");
        }
    }
}

/// Each thread's run of workgroups is a batch on its own track: with
/// workgroups of some milliseconds, a second worker takes some of them.
#[test]
fn a_vmvx_dispatch_runs_on_more_than_one_thread() {
    let mut ctx = Context::new(&TypeRegistry::new());
    let profile = Profile::new(ProfileOptions {
        timeline: true,
        ..ProfileOptions::default()
    });
    ctx.set_profile(Some(profile.clone()));
    let exe = load(&ctx, DeviceKind::Task { workers: 2 });
    let b = Bindings::new(16);
    mark(&exe, [16, 1, 1], 200_000, u32::MAX, &b).unwrap();
    assert_eq!(b.words()[0], (1..=16).collect::<Vec<u32>>());
    let data = profile.data();
    let busy: Vec<&str> = data
        .tracks
        .iter()
        .filter(|t| t.busy_ns > 0)
        .map(|t| t.name.as_str())
        .collect();
    assert!(busy.len() >= 2, "workgroups ran on {busy:?} only");
}

/// The first failing workgroup in order is the error, named as the
/// calling thread's in-order run names it, and every workgroup before it
/// has run.
#[test]
fn a_failing_workgroup_is_named_as_on_the_calling_thread() {
    let mut messages = Vec::new();
    for kind in KINDS {
        let ctx = Context::new(&TypeRegistry::new());
        let exe = load(&ctx, kind);
        let b = Bindings::new(24);
        // Workgroup 9 (x=1, y=2, z=0) fails.
        let e = mark(&exe, [4, 3, 2], 2000, 9, &b).unwrap_err();
        assert_eq!(e.code, StatusCode::InvalidArgument, "{kind:?}: {e}");
        let out = &b.words()[0];
        assert_eq!(out[..9], (1..=9).collect::<Vec<u32>>()[..], "{kind:?}");
        assert_eq!(out[9], 0, "{kind:?}");
        messages.push(e.message);
    }
    assert!(
        messages[0].starts_with("dispatch `mark` workgroup (1, 2, 0): workgroup asked to fail"),
        "{messages:?}"
    );
    assert!(messages.windows(2).all(|w| w[0] == w[1]), "{messages:?}");
}

/// An interrupt or a deadline stops a dispatch whose workgroups run on
/// several workers, within milliseconds, with the codes of the calling
/// thread's run; the next dispatch runs whole.
#[test]
fn interrupts_and_deadlines_stop_a_shared_vmvx_dispatch() {
    let mut ctx = Context::new(&TypeRegistry::new());
    let exe = load(&ctx, DeviceKind::Task { workers: 3 });
    // Workgroups of about forever: 2^31 iterations each.
    let endless = i32::MAX as u32;
    let handle = ctx.interrupt_handle();
    let b = Bindings::new(12);
    let started = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            handle.interrupt();
        });
        let e = mark(&exe, [12, 1, 1], endless, u32::MAX, &b).unwrap_err();
        eprintln!("interrupted after {:?}", started.elapsed());
        assert_eq!(e.code, StatusCode::Cancelled, "{e}");
        assert!(e.message.starts_with("dispatch `mark` workgroup ("), "{e}");
    });
    assert!(started.elapsed() < Duration::from_secs(20));
    // Taken once: the next dispatch runs whole.
    let b = Bindings::new(12);
    mark(&exe, [12, 1, 1], 10, u32::MAX, &b).unwrap();
    assert_eq!(b.words()[1], (1..=12).collect::<Vec<u32>>());

    ctx.set_deadline(Some(Instant::now() + Duration::from_millis(200)));
    let started = Instant::now();
    let e = mark(&exe, [12, 1, 1], endless, u32::MAX, &b).unwrap_err();
    eprintln!("deadline after {:?}: {e}", started.elapsed());
    assert_eq!(e.code, StatusCode::DeadlineExceeded, "{e}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// Dispatches from inside a program's run (as the hal's exports make
/// them), one on the calling thread (a single workgroup) and then shared
/// ones: the executable contexts' own buffers (a ref global) do not stay
/// leased to the calling thread's run between the two kinds.
#[test]
fn serial_and_shared_dispatches_mix_inside_one_run() {
    let ctx = Context::new(&TypeRegistry::new());
    let exe = Arc::new(load(&ctx, DeviceKind::Task { workers: 2 }));
    let outputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (e, o) = (exe.clone(), outputs.clone());
    let host = irvm::NativeModule::new("host", 0)
        .func("go", "0v_v", move |_| {
            for counts in [[1, 1, 1], [8, 1, 1], [1, 1, 1], [8, 1, 1]] {
                let b = Bindings::new(8);
                mark(&e, counts, 10, u32::MAX, &b)?;
                o.lock().unwrap().push(b.words()[0].clone());
            }
            Ok(Vec::new())
        })
        .unwrap();
    let mut ctx = ctx;
    ctx.register_host_module(&host).unwrap();
    let program = irvm::Module::from_assembly(
        "vm.module @prog version 0\nvm.import @host.go cconv \"0v_v\"\n\
         vm.export @main\nvm.func @main() -> () {\n^bb0:\n  vm.call @host.go()\n  vm.return\n}\n",
        "prog.vmasm",
    )
    .unwrap();
    ctx.register_module(program).unwrap();
    let main = ctx.function("prog.main").unwrap();
    ctx.invoke(&main, &[]).unwrap();
    let all: Vec<u32> = (1..=8).collect();
    let mut one = vec![0; 8];
    one[0] = 1;
    assert_eq!(
        *outputs.lock().unwrap(),
        [one.clone(), all.clone(), one, all]
    );
}

/// The bindings stay the program's between dispatches: after a shared
/// dispatch the calling thread and other threads use them as before.
#[test]
fn lent_bindings_come_back_after_the_dispatch() {
    let ctx = Context::new(&TypeRegistry::new());
    let exe = load(&ctx, DeviceKind::Task { workers: 2 });
    let b = Bindings::new(8);
    mark(&exe, [8, 1, 1], 10, u32::MAX, &b).unwrap();
    let out = b.out.buffer("out").unwrap().clone();
    out.with_bytes_mut(|bytes| bytes[0] = 42).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| out.with_bytes_mut(|bytes| bytes[1] = 43).unwrap());
    });
    assert_eq!(out.to_vec()[..2], [42, 43]);
}

/// `irvm run` of `tests/models/NAME.vmfb` with its `.args` and `flags`:
/// stdout, stderr, exit code.
fn run_model(name: &str, flags: &[&str]) -> (String, String, i32) {
    let m = format!(
        "--module={}",
        repo().join(format!("tests/models/{name}.vmfb")).display()
    );
    let f = format!(
        "--flagfile={}",
        repo().join(format!("tests/models/{name}.args")).display()
    );
    let mut all = vec!["run", &m, &f];
    all.extend(flags);
    irvm(&all)
}

const WORKER_COUNTS: [&[&str]; 4] = [
    &["--device=local-sync"],
    &["--device=local-task", "--task_topology_max_group_count=1"],
    &["--device=local-task", "--task_topology_max_group_count=2"],
    &["--device=local-task", "--task_topology_max_group_count=4"],
];

/// vmvx models give the same results on one worker and several:
/// `vmvx_tiles` has dispatches of 80, 96 and 2 workgroups (elementwise
/// kernels, a data-tiled matmul through the vmvx microkernels, `vmvx.rs`,
/// which reach the lent bindings through raw pointers, and a reduction).
#[test]
fn vmvx_models_give_the_same_results_on_every_worker_count() {
    for name in ["vmvx_tiles", "conv2d"] {
        let mut outputs = Vec::new();
        for flags in WORKER_COUNTS {
            let (stdout, stderr, code) = run_model(name, flags);
            assert_eq!(code, 0, "{name} {flags:?}: {stderr}");
            outputs.push(stdout);
        }
        assert!(
            outputs.windows(2).all(|w| w[0] == w[1]),
            "{name}: {outputs:?}"
        );
    }
    let expected =
        std::fs::read_to_string(repo().join("tests/models/vmvx_tiles.expected")).unwrap();
    let (stdout, _, _) = run_model("vmvx_tiles", WORKER_COUNTS[3]);
    assert_eq!(stdout, expected);
}

/// The names of the compiles a Chrome trace shows (`compile function N
/// (M instructions)`, one per compile), in the order they ended.
fn compile_events(trace: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(trace).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .filter(|n| n.starts_with("compile function "))
        .map(str::to_owned)
        .collect()
}

/// The contexts of a vmvx executable (the loading one and one per worker)
/// share its compiled kernels (`jit::SharedCode`): with `--engine=jit`,
/// where each context would otherwise compile every kernel it runs, each
/// kernel compiles once whatever the worker count.
#[test]
fn each_vmvx_kernel_compiles_once_whatever_the_worker_count() {
    if !Tier::compiler_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for flags in WORKER_COUNTS {
        let trace = dir.path().join("compiles.json");
        let profile = format!("--profile={}", trace.display());
        let mut all = flags.to_vec();
        all.extend(["--engine=jit", &profile]);
        let (_, stderr, code) = run_model("vmvx_tiles", &all);
        assert_eq!(code, 0, "{flags:?}: {stderr}");
        let compiles = compile_events(&trace);
        let mut once = compiles.clone();
        once.sort();
        once.dedup();
        // The program's functions and the executable's kernels.
        assert!(once.len() >= 4, "{flags:?}: {compiles:?}");
        assert_eq!(compiles.len(), once.len(), "{flags:?}: {compiles:?}");
    }
}

/// The names of the threads a Chrome trace shows workgroup batches on.
fn batch_threads(trace: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(trace).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let name_of = |tid: &serde_json::Value| {
        events
            .iter()
            .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == *tid)
            .and_then(|e| e["args"]["name"].as_str())
            .unwrap_or("?")
            .to_owned()
    };
    let mut names: Vec<String> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "workgroups")
        .map(|e| name_of(&e["tid"]))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// With a fuel limit (one budget, spent in program order) vmvx workgroups
/// stay on the calling thread: fuel runs out at the same workgroup as on
/// `local-sync`, and a run with enough fuel shows workgroups on the main
/// thread only; without a limit they run on the workers too.
#[test]
fn fuel_keeps_vmvx_workgroups_on_the_calling_thread() {
    let mut errors = Vec::new();
    for flags in [WORKER_COUNTS[0], WORKER_COUNTS[3]] {
        let mut all = flags.to_vec();
        all.push("--fuel=100000");
        let (_, stderr, code) = run_model("vmvx_tiles", &all);
        assert_eq!(code, 1, "{flags:?}: {stderr}");
        let at = stderr
            .find("RESOURCE_EXHAUSTED")
            .unwrap_or_else(|| panic!("{stderr}"));
        errors.push(stderr[at..].lines().next().unwrap().to_owned());
    }
    assert!(
        errors[0].contains("workgroup (12, 0, 0): fuel exhausted"),
        "{errors:?}"
    );
    assert_eq!(errors[0], errors[1]);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    let profile = format!("--profile={}", trace.display());
    let (_, stderr, code) = run_model(
        "vmvx_tiles",
        &[
            WORKER_COUNTS[3][0],
            WORKER_COUNTS[3][1],
            "--fuel=100000000",
            &profile,
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(batch_threads(&trace), ["VM (main thread)"]);
    // A worker slow to wake may find a dispatch's workgroups all taken:
    // a few runs, one of which must show both threads.
    let mut seen = Vec::new();
    for _ in 0..5 {
        let flags = [WORKER_COUNTS[2][0], WORKER_COUNTS[2][1], &profile];
        let (_, stderr, code) = run_model("vmvx_tiles", &flags);
        assert_eq!(code, 0, "{stderr}");
        seen = batch_threads(&trace);
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
}

/// A kernel that keeps its bindings list (and constants buffer) in ref
/// globals: the list is emptied when the dispatch ends, so the caller's
/// buffers are not kept past the call, and the kernel's later read of the
/// kept list is a clean OUT_OF_RANGE trap naming the workgroup; the next
/// dispatch gets a new list and constants (the kept ones are held), and
/// its results are right, on every device.
#[test]
fn a_kernel_keeping_its_bindings_list_keeps_no_binding_past_the_call() {
    const KEEPER: &str = r#"
vm.module @keeper version 0
vm.type !vm.buffer
vm.type !vm.list<!vm.buffer>

vm.export @keep
vm.func @keep(%r0: !vm.buffer, %r1: !vm.buffer, %r2: !vm.list<!vm.buffer>, %i0: i32, %i1: i32, %i2: i32, %i3: i32, %i4: i32, %i5: i32, %i6: i32, %i7: i32, %i8: i32) -> () {
^bb0:
  %i10:11 = vm.const.i64.zero
  %i12 = vm.buffer.load.i32 %r1, %i10:11
  %i13 = vm.const.i32.zero
  %r3 = vm.global.load.ref .refs[0] : !vm.list<!vm.buffer>
  %i14 = vm.cmp.nz.ref %r3
  vm.cond_br %i14, ^bb2(), ^bb1()
^bb1:
  vm.global.store.ref %r2, .refs[0] : !vm.list<!vm.buffer>
  vm.global.store.ref %r1, .refs[1] : !vm.buffer
  vm.br ^bb3()
^bb2:
  %r4 = vm.list.get.ref %r3, %i13 : !vm.buffer
  vm.buffer.store.i32 %i12, %r4, %i10:11
  vm.br ^bb3()
^bb3:
  %r5 = vm.list.get.ref %r2, %i13 : !vm.buffer
  %i16:17 = vm.ext.i32.i64.s %i0
  vm.buffer.store.i32 %i12, %r5, %i16:17
  vm.return
}
"#;
    for kind in KINDS {
        let ctx = Context::new(&TypeRegistry::new());
        let bytes = irvm::asm::assemble(KEEPER, "keeper.vmasm").expect("assembles");
        let exe = Executable::load(
            VMVX_FORMAT,
            bytes,
            &[],
            ctx.resources().clone(),
            &device(kind),
        )
        .expect("loads");
        let run = |out: &Ref, value: u32, groups: u32| {
            exe.dispatch(Dispatch {
                function: 0,
                workgroups: [groups, 1, 1],
                constants: &[value],
                bindings: [BoundRange::whole(out)].into_iter().collect(),
                location: None,
            })
        };
        // One workgroup: the first instance keeps its list.
        let first = Ref::from(Buffer::new(16).unwrap());
        run(&first, 7, 1).unwrap();
        assert_eq!(
            first.ref_count(),
            1,
            "{kind:?}: a kept list held the caller's buffer"
        );
        assert_eq!(first.buffer("b").unwrap().to_vec()[..4], [7, 0, 0, 0]);
        // Its next workgroup reads the kept (emptied) list.
        let second = Ref::from(Buffer::new(16).unwrap());
        let e = run(&second, 8, 1).unwrap_err();
        assert_eq!(e.code, StatusCode::OutOfRange, "{kind:?}: {e}");
        assert!(e.message.contains("workgroup (0, 0, 0)"), "{kind:?}: {e}");
        assert_eq!(second.ref_count(), 1, "{kind:?}");
        // Several workgroups (on the workers where there are several).
        let third = Ref::from(Buffer::new(16).unwrap());
        let r = run(&third, 9, 4);
        assert_eq!(third.ref_count(), 1, "{kind:?}");
        if let Err(e) = r {
            assert_eq!(e.code, StatusCode::OutOfRange, "{kind:?}: {e}");
        }
    }
}

/// A kernel whose workgroup 0 copies `constants[0]` bytes from binding 0
/// to binding 1 (`vm.buffer.copy`); the others do nothing.
const SHIFT: &str = r#"
vm.module @shift version 0
vm.type !vm.buffer
vm.type !vm.list<!vm.buffer>

vm.export @shift
vm.func @shift(%r0: !vm.buffer, %r1: !vm.buffer, %r2: !vm.list<!vm.buffer>, %i0: i32, %i1: i32, %i2: i32, %i3: i32, %i4: i32, %i5: i32, %i6: i32, %i7: i32, %i8: i32) -> () {
^bb0:
  vm.cond_br %i0, ^bb2(), ^bb1()
^bb1:
  %i9 = vm.const.i32.zero
  %i10 = vm.const.i32 1
  %i12:13 = vm.const.i64.zero
  %i11 = vm.buffer.load.i32 %r1, %i12:13
  %i14:15 = vm.ext.i32.i64.u %i11
  %r3 = vm.list.get.ref %r2, %i9 : !vm.buffer
  %r4 = vm.list.get.ref %r2, %i10 : !vm.buffer
  vm.buffer.copy %r3, %i12:13, %r4, %i12:13, %i14:15
  vm.br ^bb2()
^bb2:
  vm.return
}
"#;

/// A copy of more than one 8 MiB piece between overlapping bindings (two
/// views of one allocation, lent to the workers as a region) moves as
/// memmove does, in either direction, whether or not the context can be
/// stopped (in pieces, with looks at its stop word between them, or in
/// one).
#[test]
fn a_kernel_copy_in_pieces_between_overlapping_bindings_moves_as_memmove() {
    let len = 3 * (8 << 20) + 100;
    let total = len + 4097;
    let numbered = |n: usize| -> Vec<u8> { (0..n).map(|i| (i * 7 + i / 251) as u8).collect() };
    for (from, to) in [(0usize, 4097usize), (4097, 0)] {
        for stoppable in [false, true] {
            for kind in [DeviceKind::Sync, DeviceKind::Task { workers: 2 }] {
                let mut ctx = Context::new(&TypeRegistry::new());
                let exe = Executable::load(
                    VMVX_FORMAT,
                    irvm::asm::assemble(SHIFT, "shift.vmasm").expect("assembles"),
                    &[],
                    ctx.resources().clone(),
                    &device(kind),
                )
                .expect("loads");
                if stoppable {
                    ctx.set_deadline(Some(Instant::now() + Duration::from_secs(600)));
                }
                let all = Arc::new(Buffer::from_vec(numbered(total)));
                let source = Ref::from(Buffer::view(&all, from, len).unwrap());
                let target = Ref::from(Buffer::view(&all, to, len).unwrap());
                exe.dispatch(Dispatch {
                    function: 0,
                    workgroups: [2, 1, 1],
                    constants: &[len as u32],
                    bindings: [&source, &target]
                        .into_iter()
                        .map(BoundRange::whole)
                        .collect(),
                    location: None,
                })
                .unwrap();
                let mut want = numbered(total);
                want.copy_within(from..from + len, to);
                assert!(
                    all.to_vec() == want,
                    "{from} -> {to}, stoppable {stoppable}, {kind:?}"
                );
            }
        }
    }
}
