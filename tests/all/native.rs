//! Native (llvm-cpu) executables: the loader and dispatcher against a
//! hand-written executable library (`tests/data/native/testlib.c`, built
//! with the system C compiler; the tests that need it say so and skip
//! when there is none), the static reader against the real loader on the
//! llvm-cpu model corpus, and the CLI's device flags.

#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use irvm::{Buffer, ContextResources, HostRef, Ref, StatusCode};
use irvm_hal::native::elf;
use irvm_hal::{
    type_names, BoundRange, BufferRef, Command as HalCommand, CommandBuffer, DeviceConfig,
    DeviceKind, DeviceOptions, Dispatch, Executable, HalBuffer, Workgroups,
};

use crate::common::cli::irvm;
use crate::common::paths::repo;

const FORMAT: &str = "system-elf-x86_64";

/// Builds the test library with `defines`; `None` (after saying so) when
/// there is no C compiler.
fn testlib(defines: &[&str]) -> Option<Vec<u8>> {
    let out = tempfile::Builder::new().suffix(".so").tempfile().ok()?;
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-nostdlib", "-O1", "-o"])
        .arg(out.path())
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg(repo().join("tests/data/native/testlib.c"))
        .status();
    match status {
        Ok(s) if s.success() => Some(std::fs::read(out.path()).unwrap()),
        Ok(s) => panic!("cc failed on testlib.c ({s})"),
        Err(e) => {
            eprintln!("SKIPPED: no C compiler (`cc`: {e}) to build the test executable library");
            None
        }
    }
}

fn device(kind: DeviceKind) -> Arc<DeviceConfig> {
    DeviceConfig::new(DeviceOptions {
        kind,
        ..DeviceOptions::default()
    })
}

fn load(bytes: &[u8], constants: &[u32], kind: DeviceKind) -> Result<Executable, irvm::Trap> {
    Executable::load(
        FORMAT,
        bytes.to_vec(),
        constants,
        ContextResources::detached(),
        &device(kind),
    )
}

fn buffer(len: usize) -> Ref {
    Ref::from(Buffer::new(len).unwrap())
}

fn words(r: &Ref) -> Vec<u32> {
    let Ref::Buffer(b) = r else {
        panic!("not a buffer")
    };
    b.to_vec()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

const DEVICES: &[DeviceKind] = &[
    DeviceKind::Sync,
    DeviceKind::Task { workers: 1 },
    DeviceKind::Task { workers: 2 },
    DeviceKind::Task { workers: 4 },
];

#[test]
fn every_workgroup_runs_once_on_every_device() {
    let Some(lib) = testlib(&[]) else { return };
    let processor = irvm_hal::native::cpu::processor_data()[0] as u32;
    for &kind in DEVICES {
        let exe = load(&lib, &[], kind).unwrap();
        assert_eq!(exe.entry_names(), ["record", "fail", "step"]);
        assert_eq!(exe.name(), "irvm_testlib");
        let (cx, cy, cz) = (5u32, 3u32, 4u32);
        let n = (cx * cy * cz) as usize;
        let (out, info) = (buffer(n * 32), buffer(20));
        exe.dispatch(Dispatch {
            function: exe.lookup("record").unwrap(),
            workgroups: [cx, cy, cz],
            constants: &[77],
            bindings: BoundRange::each_whole(&[out.clone(), info.clone()]),
            location: None,
        })
        .unwrap();
        let w = words(&out);
        for i in 0..n {
            let r = &w[i * 8..i * 8 + 8];
            let (x, y, z) = (i as u32 % cx, (i as u32 / cx) % cy, i as u32 / (cx * cy));
            assert_eq!(r[..4], [1, x, y, z], "{kind:?}: workgroup {i}");
            assert_eq!(r[4], 1, "{kind:?}: workgroup {i}'s local memory was shared");
            assert_eq!(r[5], 77, "{kind:?}: push constant");
            assert_eq!(r[7], processor, "{kind:?}: processor data");
        }
        assert_eq!(words(&info), [cx, cy, cz, (n * 32) as u32, 20], "{kind:?}");
    }
}

#[test]
fn bindings_may_be_views_of_one_buffer() {
    let Some(lib) = testlib(&[]) else { return };
    let exe = load(&lib, &[], DeviceKind::Task { workers: 2 }).unwrap();
    let root = Arc::new(Buffer::new(64 + 32).unwrap());
    let a = Ref::from(Buffer::view(&root, 0, 64).unwrap());
    let b = Ref::from(Buffer::view(&root, 64, 32).unwrap());
    exe.dispatch(Dispatch {
        function: 0,
        workgroups: [2, 1, 1],
        constants: &[5],
        bindings: BoundRange::each_whole(&[a, b]),
        location: None,
    })
    .unwrap();
    let w: Vec<u32> = root
        .to_vec()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(w[0], 1);
    assert_eq!(w[8], 1);
    assert_eq!(w[16..21], [2, 1, 1, 64, 32]);
}

/// Bound ranges with offsets into a view (not its root): each binding
/// pointer is the view's start plus the range's offset, its length the
/// range's; a range ending at the buffer's last byte is accepted, one
/// past it refused before any workgroup runs (OUT_OF_RANGE, nothing
/// written), on every device.
#[test]
fn bound_ranges_at_offsets_of_a_view_reach_their_bytes_only() {
    let Some(lib) = testlib(&[]) else { return };
    for &kind in DEVICES {
        let exe = load(&lib, &[], kind).unwrap();
        let root = Arc::new(Buffer::new(256).unwrap());
        // The view starts 16 bytes in and ends at the root's last byte.
        let view = Ref::from(Buffer::view(&root, 16, 240).unwrap());
        let bindings = |info_offset: u64| {
            [
                BoundRange {
                    buffer: &view,
                    offset: 8,
                    length: 64,
                },
                BoundRange {
                    buffer: &view,
                    offset: info_offset,
                    length: 20,
                },
            ]
            .into_iter()
            .collect()
        };
        let dispatch = |info_offset| {
            exe.dispatch(Dispatch {
                function: exe.lookup("record").unwrap(),
                workgroups: [2, 1, 1],
                constants: &[9],
                bindings: bindings(info_offset),
                location: None,
            })
        };
        // One past the end: refused, nothing written.
        let e = dispatch(221).unwrap_err();
        assert_eq!(e.code, StatusCode::OutOfRange, "{kind:?}: {e}");
        assert!(root.to_vec().iter().all(|&b| b == 0), "{kind:?}");
        // Ending at the last byte.
        dispatch(220).unwrap();
        let w: Vec<u32> = root
            .to_vec()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // Records at byte 16 + 8 = word 6, 8 words each.
        assert!(w[..6].iter().all(|&x| x == 0), "{kind:?}: {w:?}");
        assert_eq!(w[6..10], [1, 0, 0, 0], "{kind:?}");
        assert_eq!(w[14..18], [1, 1, 0, 0], "{kind:?}");
        assert_eq!(w[11], 9, "{kind:?}: push constant");
        assert!(w[22..59].iter().all(|&x| x == 0), "{kind:?}: {w:?}");
        // Info at byte 16 + 220 = word 59: counts, then the two lengths.
        assert_eq!(w[59..64], [2, 1, 1, 64, 20], "{kind:?}");
    }
}

#[test]
fn executable_constants_reach_the_library() {
    let Some(lib) = testlib(&["CONSTANTS=1"]) else {
        return;
    };
    let exe = load(&lib, &[1234], DeviceKind::Sync).unwrap();
    let (out, info) = (buffer(32), buffer(20));
    exe.dispatch(Dispatch {
        function: 0,
        workgroups: [1, 1, 1],
        constants: &[0],
        bindings: BoundRange::each_whole(&[out.clone(), info]),
        location: None,
    })
    .unwrap();
    assert_eq!(words(&out)[6], 1234);
    let e = load(&lib, &[], DeviceKind::Sync).err().unwrap();
    assert_eq!(e.code, StatusCode::FailedPrecondition);
    assert!(
        e.message
            .contains("requires 1 constants but caller provided 0"),
        "{e}"
    );
}

/// A command buffer over views of one root buffer of `segments` segments
/// of `n` u32 each (as IREE packs transient buffers), on `exe`.
struct Recording {
    exe: HostRef<Executable>,
    root: Arc<Buffer>,
    n: usize,
    commands: CommandBuffer,
}

impl Recording {
    fn new(exe: Executable, segments: usize, n: usize) -> Recording {
        Recording {
            exe: HostRef::new(type_names::EXECUTABLE, exe),
            root: Arc::new(Buffer::new(segments * n * 4).unwrap()),
            n,
            commands: CommandBuffer::new(0),
        }
    }

    fn segment(&self, k: usize) -> BufferRef {
        let storage = Ref::Buffer(self.root.clone());
        let buffer = HostRef::new(type_names::BUFFER, HalBuffer::over(storage).unwrap());
        BufferRef {
            slot: 0,
            buffer: Some(buffer),
            offset: (k * self.n * 4) as u64,
            length: (self.n * 4) as i64,
        }
    }

    /// Records segment `k` = 0, 1, ..., n-1 plus `base`.
    fn fill(&self, k: usize, base: u32) {
        let data = (0..self.n as u32)
            .flat_map(|i| (base + i).to_le_bytes())
            .collect();
        let target = self.segment(k);
        self.commands
            .record(HalCommand::Update { target, data })
            .unwrap();
    }

    /// Records testlib's `step` from segment `from` to `to` with `constant`.
    fn step(&self, from: usize, to: usize, constant: u32) {
        self.dispatch("step", [self.n as u32, 1, 1], constant, vec![from, to]);
    }

    fn dispatch(&self, entry: &str, workgroups: [u32; 3], constant: u32, segments: Vec<usize>) {
        let command = HalCommand::Dispatch {
            executable: self.exe.clone(),
            function: self.exe.lookup(entry).unwrap(),
            workgroups: Workgroups::Static(workgroups),
            constants: vec![constant],
            bindings: segments.into_iter().map(|k| self.segment(k)).collect(),
            location: None,
        };
        self.commands.record(command).unwrap();
    }

    fn barrier(&self) {
        self.commands.record(HalCommand::Barrier).unwrap();
    }

    /// Executes the buffer; the root buffer's words after.
    fn run(&self) -> Result<Vec<u32>, irvm::Trap> {
        self.commands.finalize().unwrap();
        self.commands.execute(&[], &ContextResources::detached())?;
        Ok(words(&Ref::Buffer(self.root.clone())))
    }
}

/// What testlib's `step` computes from `input` with `constant`.
fn step(input: &[u32], constant: u32) -> Vec<u32> {
    let n = input.len();
    (0..n)
        .map(|i| input[(i + 1) % n].wrapping_mul(3).wrapping_add(constant))
        .collect()
}

const TASK_DEVICES: &[DeviceKind] = &[
    DeviceKind::Task { workers: 1 },
    DeviceKind::Task { workers: 2 },
    DeviceKind::Task { workers: 3 },
];

#[test]
fn independent_dispatches_between_barriers_give_local_syncs_results() {
    let Some(lib) = testlib(&[]) else { return };
    let n = 37;
    // One region of four dispatches over views of one buffer: three read
    // segment 0 and write their own segment, one writes records; then,
    // after a barrier, a region of two that read what the first wrote.
    let record = |kind| {
        let r = Recording::new(load(&lib, &[], kind).unwrap(), 12, n);
        r.fill(0, 100);
        r.barrier();
        r.step(0, 1, 1);
        r.step(0, 2, 2);
        // (Records of 8 words each: 2x2 workgroups fit in a segment of
        // 37 words; more would spill into segment 4, which workgroup 0
        // writes too, and the two would race.)
        r.dispatch("record", [2, 2, 1], 9, vec![3, 4]);
        r.step(0, 5, 5);
        r.barrier();
        r.step(1, 6, 6);
        r.step(2, 7, 7);
        r.run().unwrap()
    };
    let expected = record(DeviceKind::Sync);
    let seg = |w: &[u32], k: usize| w[k * n..(k + 1) * n].to_vec();
    let input: Vec<u32> = (100..100 + n as u32).collect();
    assert_eq!(seg(&expected, 1), step(&input, 1));
    assert_eq!(seg(&expected, 5), step(&input, 5));
    assert_eq!(seg(&expected, 6), step(&step(&input, 1), 6));
    assert_eq!(seg(&expected, 7), step(&step(&input, 2), 7));
    assert_eq!(
        seg(&expected, 4)[..5],
        [2, 2, 1, 4 * n as u32, 4 * n as u32]
    );
    for &kind in TASK_DEVICES {
        for round in 0..5 {
            assert!(record(kind) == expected, "{kind:?}, round {round}");
        }
    }
}

#[test]
fn a_dependent_chain_across_barriers_keeps_its_order() {
    let Some(lib) = testlib(&[]) else { return };
    let n = 64;
    for &kind in TASK_DEVICES {
        let r = Recording::new(load(&lib, &[], kind).unwrap(), 9, n);
        r.fill(0, 1);
        for k in 0..8 {
            r.barrier();
            r.step(k, k + 1, k as u32);
        }
        let words = r.run().unwrap();
        let mut want: Vec<u32> = (1..=n as u32).collect();
        for k in 0..8 {
            want = step(&want, k);
        }
        assert_eq!(words[8 * n..], want[..], "{kind:?}");
    }
}

#[test]
fn a_trap_in_one_dispatch_of_a_region_names_that_dispatch() {
    let Some(lib) = testlib(&[]) else { return };
    for &kind in [DeviceKind::Sync].iter().chain(TASK_DEVICES) {
        let r = Recording::new(load(&lib, &[], kind).unwrap(), 3, 16);
        r.step(0, 1, 1);
        r.dispatch("fail", [4, 1, 1], 7, vec![]);
        r.step(0, 2, 2);
        let e = r.run().unwrap_err();
        assert_eq!(e.code, StatusCode::Internal, "{kind:?}");
        assert!(e.message.contains("dispatch `fail`"), "{kind:?}: {e}");
        assert!(e.message.contains("catastrophic error 7"), "{kind:?}: {e}");
    }
}

#[test]
fn libraries_irvm_cannot_host_are_refused_by_name() {
    let Some(lib) = testlib(&["REQUIRE_IMPORT"]) else {
        return;
    };
    let e = load(&lib, &[], DeviceKind::Sync).err().unwrap();
    assert_eq!(e.code, StatusCode::NotFound);
    assert!(e.message.contains("`irvm_test_missing_v1`"), "{e}");
    // An optional import resolves to null and the library loads.
    let lib = testlib(&["OPTIONAL_IMPORT"]).unwrap();
    assert!(load(&lib, &[], DeviceKind::Sync).is_ok());
    let lib = testlib(&["SANITIZER=1"]).unwrap();
    let e = load(&lib, &[], DeviceKind::Sync).err().unwrap();
    assert_eq!(e.code, StatusCode::Unavailable);
    assert!(e.message.contains("sanitizer"), "{e}");
    let lib = testlib(&["VERSION=7"]).unwrap();
    let e = load(&lib, &[], DeviceKind::Sync).err().unwrap();
    assert!(e.message.contains("newer than the runtime"), "{e}");
    let lib = testlib(&["NO_LIBRARY"]).unwrap();
    let e = load(&lib, &[], DeviceKind::Sync).err().unwrap();
    assert!(
        e.message
            .contains("does not support this version of the runtime (00000006)"),
        "{e}"
    );
}

/// A library that hands the runtime pointers outside itself (its table,
/// a name, an export function into data) is refused before any of them
/// is followed (`Mapped` in modules/hal/src/native/mod.rs).
#[test]
fn pointers_outside_the_library_are_refused() {
    for (variant, message) in [
        ("HOSTILE=1", "library table points outside the library"),
        ("HOSTILE=2", "name points outside the library"),
        ("HOSTILE=3", "export `record` is not in the library's code"),
    ] {
        let Some(lib) = testlib(&[variant]) else {
            return;
        };
        let e = load(&lib, &[], DeviceKind::Sync).err().unwrap();
        assert_eq!(e.code, StatusCode::FailedPrecondition, "{variant}: {e}");
        assert!(e.message.contains(message), "{variant}: {e}");
    }
}

#[test]
fn failing_workgroups_and_mismatched_dispatches_are_errors() {
    let Some(lib) = testlib(&[]) else { return };
    for &kind in DEVICES {
        let exe = load(&lib, &[], kind).unwrap();
        let fail = exe.lookup("fail").unwrap();
        let e = exe
            .dispatch(Dispatch {
                function: fail,
                workgroups: [3, 2, 1],
                constants: &[3],
                bindings: BoundRange::each_whole(&[]),
                location: None,
            })
            .unwrap_err();
        assert_eq!(e.code, StatusCode::Internal, "{kind:?}");
        assert!(e.message.contains("catastrophic error 3"), "{e}");
        assert!(e.message.contains("dispatch `fail`"), "{e}");
        let e = exe
            .dispatch(Dispatch {
                function: 0,
                workgroups: [1, 1, 1],
                constants: &[1],
                bindings: BoundRange::each_whole(&[buffer(32)]),
                location: None,
            })
            .unwrap_err();
        assert_eq!(e.code, StatusCode::InvalidArgument);
        assert!(
            e.message
                .contains("binding count mismatch, expected 2 but was provided 1"),
            "{e}"
        );
        let e = exe
            .dispatch(Dispatch {
                function: 0,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: BoundRange::each_whole(&[buffer(32), buffer(20)]),
                location: None,
            })
            .unwrap_err();
        assert!(
            e.message
                .contains("constant count mismatch, expected 1 but was provided 0"),
            "{e}"
        );
        let e = exe
            .dispatch(Dispatch {
                function: 3,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: BoundRange::each_whole(&[]),
                location: None,
            })
            .unwrap_err();
        assert_eq!(e.code, StatusCode::OutOfRange);
        let e = exe
            .dispatch(Dispatch {
                function: 0,
                workgroups: [1 << 13, 1 << 13, 1],
                constants: &[1],
                bindings: BoundRange::each_whole(&[buffer(32), buffer(20)]),
                location: None,
            })
            .unwrap_err();
        assert_eq!(e.code, StatusCode::ResourceExhausted);
    }
}

#[test]
fn bad_native_bytes_are_clean_errors() {
    for bytes in [
        &b""[..],
        b"\x7fELF",
        b"not an elf at all, just text padding it out past sixty-four bytes.",
    ] {
        let e = load(bytes, &[], DeviceKind::Sync).err().unwrap();
        assert_eq!(e.code, StatusCode::InvalidArgument, "{e}");
    }
    let Some(lib) = testlib(&[]) else { return };
    // Cut short anywhere: refused before the system loader maps it (a
    // segment past the end of the file would be a SIGBUS when touched).
    // Cuts that only drop the section headers at the end still load.
    let mut refused = 0;
    for cut in (64..lib.len()).step_by(61).chain([lib.len() - 1]) {
        match load(&lib[..cut], &[], DeviceKind::Sync) {
            Err(e) => {
                assert_eq!(e.code, StatusCode::InvalidArgument, "cut at {cut}: {e}");
                refused += 1;
            }
            Ok(exe) => assert_eq!(
                exe.entry_names(),
                ["record", "fail", "step"],
                "cut at {cut}"
            ),
        }
    }
    assert!(refused > 10, "{refused} cuts refused");
}

#[test]
fn a_device_without_native_executables_refuses_them() {
    let config = DeviceConfig::new(DeviceOptions {
        native_executables: false,
        ..DeviceOptions::default()
    });
    assert!(!irvm_hal::supports_format(&config, FORMAT));
    assert!(!irvm_hal::supports_format(&config, "embedded-elf-x86_64"));
    assert!(irvm_hal::supports_format(&config, irvm_hal::VMVX_FORMAT));
    let e = Executable::load(
        FORMAT,
        vec![0; 8],
        &[],
        ContextResources::detached(),
        &config,
    )
    .err()
    .unwrap();
    assert_eq!(e.code, StatusCode::PermissionDenied);
    let all = DeviceConfig::new(DeviceOptions::default());
    assert!(irvm_hal::supports_format(&all, "embedded-elf-x86_64"));
    assert!(!irvm_hal::supports_format(&all, "embedded-elf-arm_64"));
}

/// The llvm-cpu modules of the model corpus.
fn corpus_native_modules() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for variant in ["embedded", "system"] {
        for e in std::fs::read_dir(repo().join("tests/models").join(variant)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "vmfb") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

#[test]
fn the_static_reader_agrees_with_the_loader_on_the_corpus() {
    let modules = corpus_native_modules();
    assert!(modules.len() >= 40, "{} llvm-cpu modules", modules.len());
    let mut libraries = 0;
    for path in modules {
        let module = irvm::Module::from_file(&path).unwrap();
        for i in 0..module.rodata_count() {
            let data = module.rodata(i).unwrap();
            if !data.starts_with(b"\x7fELF") {
                continue;
            }
            // The folder names the format (the rodata before the library
            // often does too, but not in every layout: an inline-dynamic
            // module puts it after, a multi-backend one another format).
            let format = if path.parent().is_some_and(|d| d.ends_with("system")) {
                "system-elf-x86_64"
            } else {
                "embedded-elf-x86_64"
            }
            .to_string();
            let image = elf::library_bytes(&format, data).unwrap();
            let info = elf::inspect(image).unwrap();
            let exe = Executable::load(
                &format,
                data.to_vec(),
                &[],
                ContextResources::detached(),
                &device(DeviceKind::Sync),
            )
            .unwrap();
            let names: Vec<String> = info.exports.iter().map(|e| e.name.clone()).collect();
            assert_eq!(names, exe.entry_names(), "{}", path.display());
            assert_eq!(info.name, exe.name(), "{}", path.display());
            assert!(info.imports.is_empty() && info.code_bytes > 0);
            libraries += 1;
        }
    }
    assert!(libraries >= 40);
}

fn model(variant: &str, name: &str) -> String {
    let p: &Path = &repo()
        .join("tests/models")
        .join(variant)
        .join(format!("{name}.vmfb"));
    p.display().to_string()
}

const MATMUL_INPUTS: [&str; 3] = [
    "--function=matmul",
    "--input=3x4xf32=1 2 3 4 5 6 7 8 9 10 11 12",
    "--input=4x5xf32=0.5",
];

#[test]
fn vmvx_only_refuses_native_modules_at_initialization() {
    let m = format!("--module={}", model("embedded", "matmul"));
    let mut args = vec!["run", "--vmvx_only", &m];
    args.extend(MATMUL_INPUTS);
    let (stdout, stderr, code) = irvm(&args);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("INCOMPATIBLE") && stderr.contains("embedded-elf-x86_64"),
        "{stderr}"
    );
    // vmvx modules still run.
    let m = format!("--module={}", model("", "matmul"));
    let mut args = vec!["run", "--vmvx_only", &m];
    args.extend(MATMUL_INPUTS);
    let (stdout, stderr, code) = irvm(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("3x5xf32=[5 5 5 5 5][13 13 13 13 13][21 21 21 21 21]"));
}

#[test]
fn devices_and_worker_counts_give_the_same_results() {
    let m = format!("--module={}", model("system", "conv2d"));
    let conv = std::fs::read_to_string(repo().join("tests/models/conv2d.args")).unwrap();
    let conv: Vec<&str> = conv.lines().filter(|l| !l.is_empty()).collect();
    let mut outputs = Vec::new();
    for flags in [
        &["--device=local-sync"][..],
        &["--device=local-task", "--task_topology_max_group_count=1"],
        &["--device=local-task", "--task_topology_max_group_count=3"],
        // As IREE, which reads a negative count as the largest size.
        &["--device=local-task", "--task_topology_max_group_count=-1"],
        &["--device=local-task://"],
        &[],
    ] {
        let mut args = vec!["run", &m];
        args.extend(flags);
        args.extend(&conv);
        let (stdout, stderr, code) = irvm(&args);
        assert_eq!(code, 0, "{flags:?}: {stderr}");
        outputs.push(stdout);
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{outputs:?}");
    let (_, stderr, code) = irvm(&["run", "--device=cuda", &m, "--function=conv2d"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("`cuda`") && stderr.contains("local-sync"),
        "{stderr}"
    );
    // As iree-run-module: a device path and a zero worker limit are
    // errors (with its messages), but only for a program that needs a hal
    // device; local-sync has no workers to limit.
    let mut add = vec![
        "run".to_string(),
        format!("--module={}", model("embedded", "add")),
    ];
    add.extend(["--function=add", "--input=2x3xf32=1", "--input=2x3xf32=2"].map(String::from));
    let fib = repo().join("examples/fib.vmasm").display().to_string();
    for (flag, message) in [
        ("--device=local-task://0", "NOT_FOUND; device paths not yet implemented; creating device 'local-task://0'"),
        ("--device=local-sync://x", "NOT_FOUND; device paths not yet implemented; creating device 'local-sync://x'"),
        ("--task_topology_max_group_count=0", "NOT_FOUND; --task_topology_nodes=current selected 1 node(s) but none contain any usable cores"),
        ("--device=cuda", "no HAL driver"),
    ] {
        let mut args: Vec<&str> = add.iter().map(String::as_str).collect();
        args.push(flag);
        let (_, stderr, code) = irvm(&args);
        assert_eq!(code, 1, "{flag}");
        assert!(stderr.contains(message), "{flag}: {stderr}");
        let (stdout, stderr, code) = irvm(&["run", &format!("--module={fib}"), "--function=fib", "--input=5", flag]);
        assert_eq!((code, stdout.as_str()), (0, "EXEC @fib\nresult[0]: i32=5\n"), "{flag}: {stderr}");
    }
    let mut args: Vec<&str> = add.iter().map(String::as_str).collect();
    args.extend(["--device=local-sync", "--task_topology_max_group_count=0"]);
    let (stdout, stderr, code) = irvm(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with("2x3xf32=[3 3 3][3 3 3]\n"), "{stdout}");
}

#[test]
fn vmvx_on_local_task_gives_local_syncs_results() {
    // The device's workers must not change what vmvx kernels compute
    // (tests/all/vmvx_workers.rs runs models whose dispatches they share).
    let m = format!("--module={}", model("", "conv2d"));
    let conv = std::fs::read_to_string(repo().join("tests/models/conv2d.args")).unwrap();
    let conv: Vec<&str> = conv.lines().filter(|l| !l.is_empty()).collect();
    let mut outputs = Vec::new();
    for flags in [
        &["--device=local-sync"][..],
        &["--device=local-task", "--task_topology_max_group_count=2"],
        &["--device=local-task", "--task_topology_max_group_count=3"],
    ] {
        let mut args = vec!["run", &m];
        args.extend(flags);
        args.extend(&conv);
        let (stdout, stderr, code) = irvm(&args);
        assert_eq!(code, 0, "{flags:?}: {stderr}");
        assert!(stdout.contains("xf32="), "{stdout}");
        outputs.push(stdout);
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{outputs:?}");
}

#[test]
fn tracing_shows_dispatches() {
    for (variant, format) in [
        ("embedded", "embedded-elf-x86_64"),
        ("", "vmvx-bytecode-fb"),
    ] {
        let m = format!("--module={}", model(variant, "matmul"));
        let mut args = vec!["run", "--trace-execution", &m];
        args.extend(MATMUL_INPUTS);
        let (_, stderr, code) = irvm(&args);
        assert_eq!(code, 0);
        let line = stderr
            .lines()
            .find(|l| l.starts_with("[hal.dispatch]"))
            .unwrap_or_else(|| panic!("no dispatch line: {stderr}"));
        assert!(
            line.contains("::matmul_dispatch_0_matmul_3x5x4_f32"),
            "{line}"
        );
        assert!(
            line.contains(&format!("({format})")) && line.ends_with("workgroups 1x1x1"),
            "{line}"
        );
    }
}

#[test]
fn dump_lists_executables() {
    let (stdout, _, code) = irvm(&["dump", "--output=executables", &model("system", "matmul")]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("Executables: 1\n"), "{stdout}");
    assert!(stdout.contains("system-elf-x86_64"), "{stdout}");
    assert!(
        stdout.contains("library `matmul_dispatch_0`, 1 entry point"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[0] matmul_dispatch_0_matmul_3x5x4_f32  bindings 3, constants 0"),
        "{stdout}"
    );
    let (stdout, _, _) = irvm(&["dump", "--output=executables", &model("", "matmul")]);
    assert!(
        stdout.contains("vmvx-bytecode-fb")
            && stdout.contains("[0] matmul_dispatch_0_matmul_3x5x4_f32"),
        "{stdout}"
    );
}

/// A module compiled for two backends
/// (`tests/data/native/multi_target_mlp.vmfb`, from `tests/models/mlp.mlir`
/// with `iree-compile --iree-hal-target-device=local
/// --iree-hal-local-target-device-backends=vmvx
/// --iree-hal-local-target-device-backends=llvm-cpu`) lists its format
/// names apart from its blobs: dump names each blob by what it is, and
/// the model runs with native code and, with `--vmvx_only`, on vmvx.
#[test]
fn a_module_for_two_backends_dumps_and_runs_either_way() {
    let module = repo().join("tests/data/native/multi_target_mlp.vmfb");
    let module = module.display().to_string();
    let (stdout, _, code) = irvm(&["dump", "--output=executables", &module]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("Executables: 2\n"), "{stdout}");
    assert!(
        stdout.contains("] embedded-elf-x86_64, 4128 bytes: library `predict_dispatch_0`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("] vmvx-bytecode-fb, 2613 bytes: module `module`"),
        "{stdout}"
    );
    let args = std::fs::read_to_string(repo().join("tests/models/mlp.args")).unwrap();
    let expected = std::fs::read_to_string(repo().join("tests/models/mlp.expected")).unwrap();
    for extra in [None, Some("--vmvx_only"), Some("--device=local-sync")] {
        let mut all = vec!["run".to_string(), format!("--module={module}")];
        all.extend(args.lines().map(str::to_string));
        all.extend(extra.map(str::to_string));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let (stdout, stderr, code) = irvm(&all);
        assert_eq!(
            (code, stdout.as_str()),
            (0, expected.as_str()),
            "{extra:?}: {stderr}"
        );
    }
}

/// The system loader knows libraries by path (`/proc/self/fd/N`): loading
/// two different libraries from many threads, each freed while the other
/// loads, must never hand one back for the other.
#[test]
fn concurrent_loads_get_their_own_library() {
    let (Some(plain), Some(with_constant)) = (testlib(&[]), testlib(&["CONSTANTS=1"])) else {
        return;
    };
    std::thread::scope(|s| {
        for t in 0..4 {
            let (plain, with_constant) = (&plain, &with_constant);
            s.spawn(move || {
                for i in 0..40 {
                    if (i + t) % 2 == 0 {
                        load(plain, &[], DeviceKind::Sync).unwrap();
                    } else {
                        load(with_constant, &[9], DeviceKind::Sync).unwrap();
                    }
                }
            });
        }
    });
}

/// Native workgroups cannot be cut short, but the context's deadline and
/// interrupt are checked before each one.
#[test]
fn deadline_and_interrupt_stop_native_dispatches_between_workgroups() {
    let Some(lib) = testlib(&[]) else { return };
    for &kind in DEVICES {
        let mut ctx = irvm::Context::new(&irvm::TypeRegistry::new());
        let exe = Executable::load(
            FORMAT,
            lib.clone(),
            &[],
            ctx.resources().clone(),
            &device(kind),
        )
        .unwrap();
        let run = |exe: &Executable| {
            exe.dispatch(Dispatch {
                function: 0,
                workgroups: [4, 1, 1],
                constants: &[0],
                bindings: BoundRange::each_whole(&[buffer(4 * 32), buffer(20)]),
                location: None,
            })
        };
        run(&exe).unwrap();
        ctx.interrupt_handle().interrupt();
        assert_eq!(
            run(&exe).unwrap_err().code,
            StatusCode::Cancelled,
            "{kind:?}"
        );
        run(&exe).unwrap(); // the interrupt is taken once
        ctx.set_deadline(Some(std::time::Instant::now()));
        let e = run(&exe).unwrap_err();
        assert_eq!(e.code, StatusCode::DeadlineExceeded, "{kind:?}: {e}");
    }
}

#[test]
fn the_debugger_shows_dispatches_in_its_transcript() {
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), "run\nquit\n").unwrap();
    let m = format!("--module={}", model("system", "matmul"));
    let batch = format!("--batch={}", script.path().display());
    let mut args = vec!["dbg", &m, &batch];
    args.extend(MATMUL_INPUTS);
    let (stdout, stderr, code) = irvm(&args);
    assert_eq!(code, 0, "{stderr}");
    let dispatch = stdout
        .find("[hal.dispatch] matmul_dispatch_0::matmul_dispatch_0_matmul_3x5x4_f32 (system-elf-x86_64) workgroups 1x1x1")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        dispatch < stdout.find("[matmul returned]").unwrap(),
        "{stdout}"
    );
}

/// The same library bytes with the same constants load once per process
/// (`library_cache`); other constants or other bytes are another library,
/// and a library in use outlives the cache's entry for it.
#[test]
fn equal_library_bytes_share_one_loaded_library() {
    use irvm_hal::native::library_cache::{load_shared, KEEP_RECENT};
    let (Some(with_constant), Some(plain)) = (testlib(&["CONSTANTS=1"]), testlib(&[])) else {
        return;
    };
    let a = load_shared(FORMAT, &with_constant, &[1]).unwrap();
    let b = load_shared(FORMAT, &with_constant.clone(), &[1]).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let c = load_shared(FORMAT, &with_constant, &[2]).unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    let d = load_shared(FORMAT, &plain, &[]).unwrap();
    assert!(!Arc::ptr_eq(&a, &d));
    // Push `a`'s entry out with other libraries (other constants); `a`
    // stays usable through the executable holding it.
    let others: Vec<_> = (0..2 * KEEP_RECENT as u32)
        .map(|k| load_shared(FORMAT, &with_constant, &[100 + k]).unwrap())
        .collect();
    drop(others);
    let exe = load(&with_constant, &[1], DeviceKind::Sync).unwrap();
    let (out, info) = (buffer(32), buffer(20));
    exe.dispatch(Dispatch {
        function: 0,
        workgroups: [1, 1, 1],
        constants: &[0],
        bindings: BoundRange::each_whole(&[out.clone(), info]),
        location: None,
    })
    .unwrap();
    assert_eq!(words(&out)[6], 1);
    assert_eq!(a.name(), b.name());
}

/// `tests/data/native/long_workgroup.vmfb`: `spin(x, n)` sums `x` `n`
/// times in one llvm-cpu workgroup (about a second per 10^9 on a quiet
/// machine).
fn long_workgroup() -> PathBuf {
    repo().join("tests/data/native/long_workgroup.vmfb")
}

/// Iterations of a workgroup of about 5 s (more under load): a stop that
/// waits for it is unmistakable, and one left running in the background
/// does not hold a core for long.
const ENDLESS: i64 = 5_000_000_000;

/// Longest a stop of an [`ENDLESS`] workgroup may take (the stop is seen
/// within a few milliseconds on a quiet machine).
const PROMPT: f64 = 2.5;

/// A context running `long_workgroup.vmfb` on `kind`, its `spin`, and an
/// interrupt handle.
fn spinning(kind: DeviceKind) -> (irvm::Context, irvm::Func, irvm::InterruptHandle) {
    use irvm::{Context, Module, TypeRegistry};
    let mut ctx = Context::new(&TypeRegistry::new());
    let options = DeviceOptions {
        kind,
        ..DeviceOptions::default()
    };
    ctx.register_host_module(&irvm_hal::hal_module_with(options).unwrap())
        .unwrap();
    ctx.register_module(Module::from_file(long_workgroup()).unwrap())
        .unwrap();
    let spin = ctx.function("module.spin").unwrap();
    let interrupt = ctx.interrupt_handle();
    (ctx, spin, interrupt)
}

fn spin_args(n: i64) -> [irvm::Value; 2] {
    let x = irvm_hal::BufferView::from_slice(&[1], &[1.0f32]).unwrap();
    [x.into_value(), irvm::Value::I64(n)]
}

fn spin_result(results: &[irvm::Value]) -> f32 {
    let view = irvm_hal::BufferView::from_value(&results[0]).unwrap();
    view.to_vec::<f32>().unwrap()[0]
}

/// An interrupt from the embedder during one workgroup of tens of seconds
/// on `local-task` returns CANCELLED at once (the workgroup ends in the
/// background); the context's next call waits for it, and that wait can be
/// interrupted too; then calls give the right results.
#[test]
fn an_interrupt_cuts_a_long_native_workgroup_on_local_task() {
    for workers in [1, 2] {
        let (mut ctx, spin, interrupt) = spinning(DeviceKind::Task { workers });
        let start = std::time::Instant::now();
        let stopper = {
            let interrupt = interrupt.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                interrupt.interrupt();
            })
        };
        let e = ctx.invoke(&spin, &spin_args(ENDLESS)).unwrap_err();
        let took = start.elapsed();
        stopper.join().unwrap();
        assert_eq!(e.code, StatusCode::Cancelled, "{e}");
        assert!(e.message.contains("spin_dispatch_0"), "{e}");
        assert!(!e.backtrace.is_empty(), "a backtrace: {e}");
        assert!(took.as_secs_f64() < PROMPT, "took {took:?}");
        // The workgroup still runs: the next call waits for it, and an
        // interrupt ends that wait.
        let stopper = {
            let interrupt = interrupt.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(200));
                interrupt.interrupt();
            })
        };
        let start = std::time::Instant::now();
        let e = ctx.invoke(&spin, &spin_args(1000)).unwrap_err();
        stopper.join().unwrap();
        assert_eq!(e.code, StatusCode::Cancelled, "{e}");
        assert!(
            e.message.contains("waiting for the native workgroups"),
            "{e}"
        );
        assert!(start.elapsed().as_secs_f64() < PROMPT);
        drop(ctx);
        // A fresh context on another device is not held up; dropping the
        // first one with its workgroup running was safe.
        let (mut ctx, spin, _) = spinning(DeviceKind::Task { workers });
        let r = ctx.invoke(&spin, &spin_args(1000)).unwrap();
        assert_eq!(spin_result(&r), 1000.0);
    }
}

/// After a stop, the next call on the context waits for the workgroup
/// left running, then runs: here the stopped one is a few seconds long.
#[test]
fn the_call_after_a_stop_waits_for_the_workgroup_left_running() {
    let (mut ctx, spin, interrupt) = spinning(DeviceKind::Task { workers: 2 });
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        interrupt.interrupt();
    });
    let start = std::time::Instant::now();
    let e = ctx.invoke(&spin, &spin_args(ENDLESS)).unwrap_err();
    let stopped = start.elapsed();
    stopper.join().unwrap();
    assert_eq!(e.code, StatusCode::Cancelled, "{e}");
    assert!(stopped.as_secs_f64() < PROMPT, "took {stopped:?}");
    let r = ctx.invoke(&spin, &spin_args(1000)).unwrap();
    assert_eq!(spin_result(&r), 1000.0);
    assert!(start.elapsed() > stopped * 2, "the next call did not wait");
    eprintln!(
        "stopped after {stopped:?}; the next call returned {:?} after the start",
        start.elapsed()
    );
}

/// `--timeout` cuts a long workgroup on `local-task` (DEADLINE_EXCEEDED
/// with the call's backtrace, and the process exits at once), while
/// `local-sync`, which runs workgroups on the calling thread, finishes
/// the one running (documented in docs/COMPATIBILITY.md).
#[test]
fn a_deadline_cuts_a_long_native_workgroup_on_local_task_only() {
    let m = format!("--module={}", long_workgroup().display());
    let endless = format!("--input={ENDLESS}");
    let start = std::time::Instant::now();
    let (stdout, stderr, code) = irvm(&[
        "run",
        &m,
        "--function=spin",
        "--input=1xf32=1",
        &endless,
        "--timeout=0.3",
    ]);
    let took = start.elapsed();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("DEADLINE_EXCEEDED"), "{stderr}");
    assert!(stderr.contains("module.spin+"), "{stderr}");
    assert!(took.as_secs_f64() < PROMPT, "took {took:?}");
    // About 1.5 s of work in one workgroup: local-sync ends it first.
    let start = std::time::Instant::now();
    let (_, stderr, code) = irvm(&[
        "run",
        &m,
        "--device=local-sync",
        "--function=spin",
        "--input=1xf32=1",
        "--input=1500000000",
        "--timeout=0.1",
    ]);
    let took = start.elapsed();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("DEADLINE_EXCEEDED"), "{stderr}");
    assert!(
        took.as_secs_f64() > 0.5,
        "local-sync cut the workgroup: {took:?}"
    );
}

/// Contexts sharing one `local-task` device, as the Python package's
/// modules do: once stopped calls left a workgroup running on every thread
/// of the pool (one here), another context's stoppable call runs its
/// workgroups on its own thread instead of waiting for those to end (it
/// waited, and its deadline passed, until the stopped workgroup ended).
#[test]
fn a_stoppable_call_runs_while_stopped_workgroups_hold_every_worker() {
    use irvm::{Context, Module, TypeRegistry};
    let options = DeviceOptions {
        kind: DeviceKind::Task { workers: 1 },
        ..DeviceOptions::default()
    };
    let hal = irvm_hal::hal_module_sharing(DeviceConfig::new(options)).unwrap();
    let context = || {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_host_module(&hal).unwrap();
        ctx.register_module(Module::from_file(long_workgroup()).unwrap())
            .unwrap();
        let spin = ctx.function("module.spin").unwrap();
        (ctx, spin)
    };
    let (mut stopped, spin) = context();
    let deadline = |s: f64| std::time::Instant::now() + std::time::Duration::from_secs_f64(s);
    stopped.set_deadline(Some(deadline(0.2)));
    let e = stopped.invoke(&spin, &spin_args(ENDLESS)).unwrap_err();
    assert_eq!(e.code, StatusCode::DeadlineExceeded, "{e}");
    // The stopped workgroup runs on for seconds on the pool's one thread.
    let (mut other, spin) = context();
    let start = std::time::Instant::now();
    other.set_deadline(Some(deadline(PROMPT)));
    let r = other.invoke(&spin, &spin_args(1000)).unwrap();
    assert_eq!(spin_result(&r), 1000.0);
    assert!(
        start.elapsed().as_secs_f64() < PROMPT,
        "{:?}",
        start.elapsed()
    );
}
