//! The tensor-program corpora, replayed through `irvm run`: every recorded
//! iree-run-module run must match its stdout, exit status and written
//! files byte for byte. `tests/models/` (made by
//! `scripts/make-model-corpus`) holds hand-written and generated programs;
//! `tests/onnx/` (made by `scripts/make-onnx-corpus`) ONNX's own backend
//! test cases imported with iree-import-onnx. When the reference tools
//! are installed, each run is also compared against a live
//! `iree-run-module` on the same committed module.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models")
}

/// One recorded corpus: its folder and the module variants in it (each
/// with its own recorded output: float results may differ between
/// backends).
struct Corpus {
    dir: PathBuf,
    /// `""` for vmvx in the folder itself, else the subfolder of an
    /// llvm-cpu (native code) variant.
    variants: &'static [&'static str],
}

/// `tests/models/`: vmvx, and llvm-cpu in `embedded/` and `system/`.
fn models() -> Corpus {
    Corpus {
        dir: models_dir(),
        variants: &["", "embedded", "system"],
    }
}

/// `tests/onnx/`: vmvx, and llvm-cpu in `embedded/`.
fn onnx() -> Corpus {
    Corpus {
        dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/onnx"),
        variants: &["", "embedded"],
    }
}

/// One recorded run: the module, its arguments, the expected stdout and
/// exit status.
struct Case {
    name: String,
    /// Where the module and the recorded output are.
    dir: PathBuf,
    /// The corpus folder: its `.args`, `.differs` and `in--` files.
    inputs: PathBuf,
    /// The native variants also run on `--device=local-sync`.
    native: bool,
    module: PathBuf,
    args: Vec<String>,
    expected: Vec<u8>,
    status: i32,
    /// Recorded by hand where irvm differs from the reference on purpose
    /// (`CASE.differs` says why): not compared live.
    differs: bool,
}

fn cases(corpus: &Corpus) -> Vec<Case> {
    let mut cases: Vec<Case> = corpus
        .variants
        .iter()
        .flat_map(|v| variant_cases(&corpus.dir, v))
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

fn variant_cases(inputs: &Path, variant: &str) -> Vec<Case> {
    if !variant.is_empty() && !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return Vec::new(); // native code for x86-64 Linux only
    }
    let dir = inputs.join(variant);
    let mut cases = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(inputs)
        .expect("the corpus folder exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "args"))
        .collect();
    entries.sort();
    for args_path in entries {
        let case = args_path.file_stem().unwrap().to_string_lossy().to_string();
        let model = case.split('@').next().unwrap().to_string();
        if !dir.join(format!("{model}.vmfb")).exists() {
            continue;
        }
        let args = std::fs::read_to_string(&args_path)
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        let expected = std::fs::read(dir.join(format!("{case}.expected")))
            .unwrap_or_else(|_| panic!("{case}.expected missing"));
        let status = std::fs::read_to_string(dir.join(format!("{case}.status")))
            .unwrap_or_else(|_| panic!("{case}.status missing"))
            .trim()
            .parse()
            .unwrap();
        let differs = inputs.join(format!("{case}.differs")).exists();
        cases.push(Case {
            name: if variant.is_empty() {
                case
            } else {
                format!("{variant}/{case}")
            },
            native: !variant.is_empty(),
            module: dir.join(format!("{model}.vmfb")),
            dir: dir.clone(),
            inputs: inputs.to_path_buf(),
            args,
            expected,
            status,
            differs,
        });
    }
    cases
}

/// A corpus's input files (`in--NAME`, copied as `NAME` into the
/// directory of each run whose arguments name it).
fn input_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.strip_prefix("in--")?.to_string();
            Some((name, p))
        })
        .collect();
    v.sort();
    v
}

/// Input files written into a run's directory rather than committed, for
/// the runs whose arguments name them: the name and what writes it.
const GENERATED_INPUTS: &[(&str, WriteInput)] = &[("past_4gib.irpa", write_past_4gib)];

/// Writes a generated input file at the path given.
type WriteInput = fn(&Path);

/// `past_4gib.irpa`, the bytes `tests/models/past_4gib.py` writes for
/// `scripts/make-model-corpus`: `in--wbc.irpa` with its storage segment
/// (at byte 384) grown to 2^32 + 256 bytes and its first entry, `w`, moved
/// to storage offset 2^32 + 64, where [3, -1, 0.5, 8] is written. Sparse:
/// 4 KiB of header and w's 16 bytes are written in a file of 4 GiB.
fn write_past_4gib(path: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let mut head = std::fs::read(models_dir().join("in--wbc.irpa")).unwrap();
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let storage = u64_at(&head, 72);
    head[80..88].copy_from_slice(&((1u64 << 32) + 256).to_le_bytes());
    head[96 + 60..96 + 68].copy_from_slice(&((1u64 << 32) + 64).to_le_bytes());
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(&head).unwrap();
    file.set_len(storage + (1 << 32) + 256).unwrap();
    file.seek(SeekFrom::Start(storage + (1 << 32) + 64))
        .unwrap();
    let w: Vec<u8> = [3f32, -1.0, 0.5, 8.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    file.write_all(&w).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let used = file.metadata().unwrap().blocks() * 512;
        assert!(
            used < 1 << 20,
            "{} takes {used} bytes on disk",
            path.display()
        );
    }
}

/// Whether `case` can run here: its generated inputs need sparse files,
/// which only Unix file systems are relied on to keep.
fn runs_here(case: &Case) -> bool {
    let generated = GENERATED_INPUTS
        .iter()
        .any(|(name, _)| case.args.iter().any(|a| a.contains(name)));
    if generated && !cfg!(unix) {
        eprintln!(
            "{}: skipped (its 4 GiB sparse archive needs Unix)",
            case.name
        );
        return false;
    }
    true
}

/// The input files `case`'s arguments name (a run reads no other).
fn inputs_of(case: &Case) -> Vec<(String, PathBuf)> {
    input_files(&case.inputs)
        .into_iter()
        .filter(|(name, _)| case.args.iter().any(|a| a.contains(name.as_str())))
        .collect()
}

fn run_in(program: &Path, prefix: &[&str], case: &Case, dir: &Path) -> (Vec<u8>, i32, String) {
    run_within(program, prefix, case, dir, None).expect("no time limit")
}

/// `run_in` killed after `wall` (with everything it started: the
/// reference's `bin/` tools are Python wrappers around the binaries):
/// `None` when it ran out of time.
fn run_within(
    program: &Path,
    prefix: &[&str],
    case: &Case,
    dir: &Path,
    wall: Option<std::time::Duration>,
) -> Option<(Vec<u8>, i32, String)> {
    let inputs = inputs_of(case);
    for (name, path) in &inputs {
        std::fs::copy(path, dir.join(name)).unwrap();
    }
    let generated: Vec<PathBuf> = GENERATED_INPUTS
        .iter()
        .filter(|(name, _)| case.args.iter().any(|a| a.contains(name)))
        .map(|(name, write)| {
            let path = dir.join(name);
            write(&path);
            path
        })
        .collect();
    let mut command = Command::new(program);
    command
        .current_dir(dir)
        .args(prefix)
        .arg(format!("--module={}", case.module.display()))
        .args(&case.args);
    let out = match wall {
        None => command.output().unwrap(),
        Some(wall) => output_within(command, wall)?,
    };
    for path in generated {
        std::fs::remove_file(path).unwrap();
    }
    // Parameter archives are read, never written (a mutable global
    // initialized from one works on a copy).
    for (name, path) in &inputs {
        assert!(
            std::fs::read(dir.join(name)).ok() == std::fs::read(path).ok(),
            "{}: the run changed its input {name}",
            case.name
        );
    }
    Some((
        out.stdout,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Runs `command` (its stdout and stderr captured) in a process group of
/// its own, and kills the whole group after `wall`: `None` then.
fn output_within(mut command: Command, wall: std::time::Duration) -> Option<std::process::Output> {
    use std::process::Stdio;
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    // Drained on threads so that a chatty child cannot block on a pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(std::process::Output {
                status,
                stdout: out.join().unwrap(),
                stderr: err.join().unwrap(),
            });
        }
        if start.elapsed() > wall {
            #[cfg(unix)]
            {
                let group = libc::pid_t::try_from(child.id()).expect("a pid");
                // SAFETY: signals the process group the child leads (made
                // above), which holds only what this run started.
                unsafe { libc::kill(-group, libc::SIGKILL) };
            }
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Replays every run of `cases` through `irvm run` (the native variants
/// on `local-task` and `local-sync`), on `threads` threads; returns what
/// differs from the recording.
fn replay(cases: &[Case], threads: usize) -> Vec<String> {
    let runs: Vec<(&Case, &'static str)> = cases
        .iter()
        .filter(|c| runs_here(c))
        .flat_map(|c| {
            let devices: &[&'static str] = if c.native {
                &["--device=local-task", "--device=local-sync"]
            } else {
                &["--device=local-task"]
            };
            devices.iter().map(move |d| (c, *d))
        })
        .collect();
    on_threads(&runs, threads, |&(case, device)| replay_one(case, device))
}

/// `check` on every item on `threads` threads; what they found, sorted.
fn on_threads<T: Sync>(
    items: &[T],
    threads: usize,
    check: impl Fn(&T) -> Vec<String> + Sync,
) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(k) else {
                    break;
                };
                let found = check(item);
                failures.lock().unwrap().extend(found);
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    failures
}

/// One run of `case` on `device` against its recording.
fn replay_one(case: &Case, device: &str) -> Vec<String> {
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let mut failures = Vec::new();
    let work = tempfile::tempdir().unwrap();
    let (stdout, status, stderr) = run_in(irvm, &["run", device], case, work.path());
    // Files the run wrote (--output=@FILE) against the recorded CASE--FILE.
    let inputs: Vec<String> = inputs_of(case).into_iter().map(|(n, _)| n).collect();
    let mut written: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !inputs.contains(n))
        .collect();
    written.sort();
    let stem = case.name.rsplit('/').next().unwrap_or(&case.name);
    let prefix = format!("{stem}--");
    let mut recorded: Vec<String> = std::fs::read_dir(&case.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_prefix(&prefix).map(str::to_string))
        .collect();
    recorded.sort();
    if written != recorded {
        failures.push(format!(
            "{} ({device}): wrote {written:?}, expected {recorded:?}\n--- stderr\n{stderr}",
            case.name
        ));
    }
    for f in &recorded {
        let ours = std::fs::read(work.path().join(f)).unwrap_or_default();
        let theirs = std::fs::read(case.dir.join(format!("{prefix}{f}"))).unwrap();
        if ours != theirs {
            failures.push(format!(
                "{} ({device}): {f} differs from the recorded file",
                case.name
            ));
        }
    }
    if stdout != case.expected || status != case.status {
        failures.push(format!(
            "{} ({device}): exit {status} (want {})\n--- irvm stdout\n{}--- expected\n{}--- stderr\n{stderr}",
            case.name,
            case.status,
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&case.expected)
        ));
    }
    if case.status != 0 && case.name.contains("wrong_") {
        assert!(
            stderr.contains("hal.buffer_view.assert") && !stderr.contains("panicked"),
            "{}: failure should be the module's own assertion, got: {stderr}",
            case.name
        );
    }
    failures
}

/// About 20 cases of each backend of the ONNX corpus, replayed on their
/// module printed with `irvm dump --output=assembly`'s text form and
/// assembled again: the same stdout, status and files as recorded.
#[test]
fn onnx_sample_runs_identically_after_the_assembly_round_trip() {
    let all = cases(&onnx());
    let work = tempfile::tempdir().unwrap();
    let mut sample = Vec::new();
    for native in [false, true] {
        let variant: Vec<&Case> = all.iter().filter(|c| c.native == native).collect();
        let step = (variant.len() / 20).max(1);
        for case in variant.into_iter().step_by(step).take(20) {
            let original = irvm::Module::from_file(&case.module).expect("loads");
            let module = crate::assembly_form::reassembled(&original, &case.name);
            let path = work
                .path()
                .join(format!("{}.vmfb", case.name.replace(['/', '@'], "_")));
            std::fs::write(&path, module.file_bytes()).unwrap();
            sample.push(Case {
                name: case.name.clone(),
                dir: case.dir.clone(),
                inputs: case.inputs.clone(),
                native: case.native,
                module: path,
                args: case.args.clone(),
                expected: case.expected.clone(),
                status: case.status,
                differs: case.differs,
            });
        }
    }
    assert!(sample.len() >= 38, "{} cases sampled", sample.len());
    let failures = on_threads(&sample, 2, |case| replay_one(case, "--device=local-task"));
    assert!(
        failures.is_empty(),
        "reassembled modules:\n{}",
        failures.join("\n")
    );
    // The reference runtime loads what `irvm as` wrote (its verifier is
    // stricter than ours in places: a NONE location pointing at a table)
    // and prints the same.
    let Some(peer) = common::peer_bin(&["iree-run-module"]) else {
        common::report_missing_peer();
        return;
    };
    let failures = on_threads(&sample, 2, |case| compare_one_live(&peer, case));
    assert!(
        failures.is_empty(),
        "reassembled modules under iree-run-module:\n{}",
        failures.join("\n")
    );
}

#[test]
fn corpus_matches_the_recorded_reference_output() {
    let cases = cases(&models());
    assert!(cases.len() >= 10, "corpus has {} runs", cases.len());
    let failures = replay(&cases, 1);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every case of the ONNX corpus has the MLIR its modules were compiled
/// from beside it, defining the function its runs call.
#[test]
fn onnx_corpus_cases_keep_their_mlir_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/onnx");
    let mut cases = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "args") {
            continue;
        }
        cases += 1;
        let args = std::fs::read_to_string(&path).unwrap();
        let function = args
            .lines()
            .find_map(|l| l.strip_prefix("--function="))
            .unwrap_or_else(|| panic!("{}: no --function", path.display()));
        let mlir = path.with_extension("mlir");
        let source =
            std::fs::read_to_string(&mlir).unwrap_or_else(|e| panic!("{}: {e}", mlir.display()));
        // MLIR quotes names that are not identifiers (`@"torch-jit-export"`).
        assert!(
            source.contains(&format!("func.func @{function}("))
                || source.contains(&format!("func.func @\"{function}\"(")),
            "{} does not define @{function}",
            mlir.display()
        );
    }
    assert!(cases > 200, "only {cases} cases in {}", dir.display());
}

#[test]
fn onnx_corpus_matches_the_recorded_reference_output() {
    // Hundreds of short runs: on as many threads as the machine has cores.
    let cases = cases(&onnx());
    assert!(
        cases.len() >= 100,
        "the ONNX corpus has {} runs",
        cases.len()
    );
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let failures = replay(&cases, threads);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs every case of `corpus` with a live `iree-run-module` and with
/// `irvm run` on `threads` threads, and compares stdout, exit status and
/// written files.
fn compare_live(corpus: &Corpus, threads: usize) {
    let Some(peer) = common::peer_bin(&["iree-run-module"]) else {
        common::report_missing_peer();
        return;
    };
    let cases: Vec<Case> = cases(corpus).into_iter().filter(runs_here).collect();
    let failures = on_threads(&cases, threads, |case| {
        if case.differs {
            eprintln!(
                "{}: not compared (irvm differs on purpose: {}.differs)",
                case.name,
                case.name.rsplit('/').next().unwrap_or(&case.name)
            );
            return Vec::new();
        }
        compare_one_live(&peer, case)
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How long a live reference run may take (the longest takes about a
/// second).
const LIVE_WALL: std::time::Duration = std::time::Duration::from_secs(10);

/// One case run by the reference and by irvm: what differs.
fn compare_one_live(peer: &Path, case: &Case) -> Vec<String> {
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let (their_dir, our_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // iree-run-module 3.13 now and then hangs (test_bernoulli on llvm-cpu
    // waits on a futex forever; tests/onnx/README.md): such a run is not
    // compared.
    // The native binary where setup-iree-peer linked one (`native/` beside
    // `bin/`): the `bin/` tool is a Python wrapper that costs a Python
    // start per run.
    let reference = peer
        .parent()
        .map(|d| d.join("native/iree-run-module"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| peer.join("iree-run-module"));
    let Some((theirs, their_status, _)) =
        run_within(&reference, &[], case, their_dir.path(), Some(LIVE_WALL))
    else {
        eprintln!(
            "{}: iree-run-module hung (over {LIVE_WALL:?}): not compared",
            case.name
        );
        return Vec::new();
    };
    let (ours, our_status, stderr) = run_in(irvm, &["run"], case, our_dir.path());
    let mut failures = Vec::new();
    if (&ours, our_status) != (&theirs, their_status) {
        failures.push(format!(
            "{}: exit {our_status} (iree-run-module {their_status})\n--- irvm stdout\n{}--- iree-run-module stdout\n{}--- irvm stderr\n{stderr}",
            case.name,
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
        ));
    }
    let files = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    if files(our_dir.path()) != files(their_dir.path()) {
        failures.push(format!("{}: written files differ", case.name));
    }
    failures
}

#[test]
fn corpus_matches_a_live_reference_run() {
    compare_live(&models(), 1);
}

#[test]
fn onnx_corpus_matches_a_live_reference_run() {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    compare_live(&onnx(), threads);
}

#[test]
fn malformed_tensor_input_fails_cleanly() {
    // A tensor literal with too few elements is refused while parsing,
    // with IREE's message and exit status 1, never a panic.
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let module = models_dir().join("mlp.vmfb");
    let out = Command::new(irvm)
        .args(["run", &format!("--module={}", module.display())])
        .args(["--function=predict", "--input=4x8xf32=1,2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("input data string underflow"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn library_api_runs_a_model_and_reads_the_tensor_back() {
    use irvm::{Context, Module, TypeRegistry};
    use irvm_hal::{hal_module, BufferView};

    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module().unwrap()).unwrap();
    ctx.register_module(Module::from_file(models_dir().join("matmul.vmfb")).unwrap())
        .unwrap();
    let matmul = ctx.function("module.matmul").unwrap();
    let a: Vec<f32> = (1..=12).map(|v| v as f32).collect();
    let b = vec![0.5f32; 20];
    let args = [
        BufferView::from_slice(&[3, 4], &a).unwrap().into_value(),
        BufferView::from_slice(&[4, 5], &b).unwrap().into_value(),
    ];
    let out = ctx.invoke(&matmul, &args).unwrap();
    let view = BufferView::from_value(&out[0]).unwrap();
    assert_eq!(view.shape, vec![3, 5]);
    // Row sums of `a` times 0.5.
    let want: Vec<f32> = [10.0f32, 26.0, 42.0]
        .iter()
        .flat_map(|s| std::iter::repeat_n(s * 0.5, 5))
        .collect();
    assert_eq!(view.to_vec::<f32>().unwrap(), want);
    // Two calls on one context reuse the executables and command buffer.
    let again = ctx.invoke(&matmul, &args).unwrap();
    assert_eq!(
        BufferView::from_value(&again[0])
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        want
    );
}

#[test]
fn a_wrong_ref_type_from_the_host_traps_with_a_message() {
    use irvm::{Context, Module, TypeRegistry, Value};
    use irvm_hal::hal_module;

    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module().unwrap()).unwrap();
    ctx.register_module(Module::from_file(models_dir().join("add.vmfb")).unwrap())
        .unwrap();
    let add = ctx.function("module.add").unwrap();
    let buffer = Value::Ref(irvm::Ref::from(irvm::Buffer::from_vec(vec![0; 24])));
    let trap = ctx.invoke(&add, &[buffer.clone(), buffer]).unwrap_err();
    assert!(
        trap.message.contains("hal.buffer_view.assert") && trap.message.contains("!vm.buffer"),
        "{trap}"
    );
}

/// `tests/models/misuse/mlp.vmasm` (the MLP's module as `irvm dump`
/// prints it; its internal `__init` renamed `make_commands` and its long
/// `vm.fail` messages shortened so it assembles) with each `from` replaced
/// by its `to`, run on a 4x8 input: the trap it ends in.
fn misuse(edits: &[(&str, &str)]) -> irvm::Trap {
    use irvm::{Context, Module, TypeRegistry};
    use irvm_hal::{hal_module, BufferView};

    let path = models_dir().join("misuse/mlp.vmasm");
    let mut source = std::fs::read_to_string(&path).unwrap();
    for (from, to) in edits {
        assert!(source.contains(from), "{from} not in the module");
        source = source.replacen(from, to, 1);
    }
    let module = Module::from_assembly(&source, "mlp.vmasm").unwrap();
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module().unwrap()).unwrap();
    let trap = match ctx.register_module(module) {
        Err(irvm::errors::LinkError::Init { trap, .. }) => return trap,
        Err(e) => panic!("{e}"),
        Ok(()) => {
            let predict = ctx.function("module.predict").unwrap();
            let x = BufferView::from_slice(&[4, 8], &[1.0f32; 32]).unwrap();
            ctx.invoke(&predict, &[x.into_value()]).unwrap_err()
        }
    };
    assert!(!trap.message.contains("panicked"), "{trap}");
    trap
}

const DISPATCH: &str =
    "(%r3, %R2, %i12, %i2, %i2, %i2, %i10, %i5, %i5, %r0, %i10, %i8, %i5, %i2, %R0, %i10, %i6)";

#[test]
fn the_unchanged_misuse_fixture_runs() {
    use irvm::{Context, Module, TypeRegistry};
    use irvm_hal::{hal_module, BufferView};

    let path = models_dir().join("misuse/mlp.vmasm");
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module().unwrap()).unwrap();
    ctx.register_module(Module::from_file(&path).unwrap())
        .unwrap();
    let predict = ctx.function("module.predict").unwrap();
    let x = BufferView::from_slice(&[4, 8], &[1.0f32; 32]).unwrap();
    let out = ctx.invoke(&predict, &[x.into_value()]).unwrap();
    let y = BufferView::from_value(&out[0])
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(&y[..3], &[4.1, 3.8, 4.3]);
}

#[test]
fn absurd_workgroup_counts_trap() {
    // %i1 (28 in the fixture) becomes the workgroup count in x, y and z.
    let trap = misuse(&[
        ("%i1 = vm.const.i32 28", "%i1 = vm.const.i32 100000"),
        (
            DISPATCH,
            "(%r3, %R2, %i12, %i1, %i1, %i1, %i10, %i5, %i5, %r0, %i10, %i8, %i5, %i2, %R0, %i10, %i6)",
        ),
    ]);
    assert!(
        trap.code == irvm::StatusCode::ResourceExhausted
            && trap.message.contains("100000x100000x100000 workgroups"),
        "{trap}"
    );
}

#[test]
fn a_binding_slot_past_the_table_traps() {
    let trap = misuse(&[(
        DISPATCH,
        "(%r3, %R2, %i12, %i2, %i2, %i2, %i10, %i5, %i5, %r0, %i10, %i8, %i5, %i4, %R0, %i10, %i6)",
    )]);
    assert!(
        trap.message.contains("binding table slot 3 out of range"),
        "{trap}"
    );
}

#[test]
fn a_binding_longer_than_its_buffer_traps() {
    let trap = misuse(&[(
        DISPATCH,
        "(%r3, %R2, %i12, %i2, %i2, %i2, %i10, %i5, %i5, %r0, %i10, %i8, %i5, %i2, %R0, %i10, %i8)",
    )]);
    assert!(
        trap.message.contains("dispatch binding 1") && trap.message.contains("out of bounds"),
        "{trap}"
    );
}

#[test]
fn a_wrong_ref_type_from_bytecode_traps() {
    let trap = misuse(&[(
        DISPATCH,
        "(%r3, %r3, %i12, %i2, %i2, %i2, %i10, %i5, %i5, %r0, %i10, %i8, %i5, %i2, %R0, %i10, %i6)",
    )]);
    assert!(
        trap.message
            .contains("hal.command_buffer.dispatch: argument 1: expected a !hal.executable"),
        "{trap}"
    );
}

#[test]
fn limits_cover_dispatches_and_hal_allocations() {
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let module = models_dir().join("matmul.vmfb");
    let args = std::fs::read_to_string(models_dir().join("matmul.args")).unwrap();
    let run = |limit: &str| {
        let out = Command::new(irvm)
            .args(["run", &format!("--module={}", module.display()), limit])
            .args(args.lines())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run("--fuel=300");
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("RESOURCE_EXHAUSTED") && stderr.contains("dispatch `matmul_dispatch_0"),
        "{stderr}"
    );
    let (code, stderr) = run("--max-buffer-bytes=40");
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("hal buffer of 60 bytes exceeds the limit of 40 bytes"),
        "{stderr}"
    );
    // Some budget past what the module and its vmvx executable (both held
    // in memory: charged), the register and frame stacks and globals take
    // (about 5 KiB more than the module) leaves too little for the 60-byte
    // result the hal allocates.
    let module_bytes = std::fs::metadata(&module).unwrap().len();
    let hal_refused = (module_bytes + 2000..module_bytes + 8000)
        .step_by(40)
        .any(|m| {
            let (code, stderr) = run(&format!("--max-memory-bytes={m}"));
            code == Some(1)
                && stderr.contains("RESOURCE_EXHAUSTED")
                && stderr.contains("a hal allocation needs 60 more bytes")
        });
    assert!(
        hal_refused,
        "the hal's allocation was not charged to the budget"
    );
    let (code, stderr) = run("--fuel=100000");
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn one_fuel_figure_bounds_program_and_dispatches() {
    use irvm::{Context, Module, TypeRegistry};
    use irvm_hal::{hal_module, BufferView};

    let run = |fuel: u64| {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_host_module(&hal_module().unwrap()).unwrap();
        ctx.register_module(Module::from_file(models_dir().join("matmul.vmfb")).unwrap())
            .unwrap();
        ctx.set_fuel(Some(fuel));
        let matmul = ctx.function("module.matmul").unwrap();
        let args = [
            BufferView::from_slice(&[3, 4], &[1.0f32; 12])
                .unwrap()
                .into_value(),
            BufferView::from_slice(&[4, 5], &[1.0f32; 20])
                .unwrap()
                .into_value(),
        ];
        let result = ctx.invoke(&matmul, &args).map(|_| ());
        (result, ctx.fuel().unwrap())
    };
    let (ok, left) = run(1_000_000);
    ok.unwrap();
    let spent = 1_000_000 - left;
    // Exactly the instructions counted suffice, one fewer does not: the
    // dispatched kernel's instructions come out of the program's fuel.
    let (ok, left) = run(spent);
    ok.unwrap();
    assert_eq!(left, 0);
    let (err, _) = run(spent - 1);
    assert_eq!(err.unwrap_err().code, irvm::StatusCode::ResourceExhausted);
    // Most of the work is the kernel's: a budget that covers the program's
    // own instructions up to the first dispatch fails inside it.
    let (err, _) = run(spent / 2);
    let err = err.unwrap_err();
    assert!(err.message.contains("dispatch `"), "{err}");
}

#[test]
fn a_buffer_view_shape_beyond_its_buffer_traps_at_create() {
    // The output view's second dimension (3 in the fixture) made absurd:
    // overflowing, larger than the buffer, negative.
    for (dim, code) in [
        ("1152921504606846976", irvm::StatusCode::InvalidArgument),
        ("4611686018427387904", irvm::StatusCode::InvalidArgument),
        ("-1", irvm::StatusCode::InvalidArgument),
        ("4", irvm::StatusCode::OutOfRange),
    ] {
        let trap = misuse(&[(
            "%i18:19 = vm.const.i64 3",
            &format!("%i18:19 = vm.const.i64 {dim}"),
        )]);
        assert!(
            trap.code == code && trap.message.contains("hal.buffer_view.create"),
            "{dim}: {trap}"
        );
    }
}

#[test]
fn expected_outputs_read_numpy_and_raw_files_as_inputs_do() {
    // `--expected_output` takes every spelling `--input` takes: `@f.npy`
    // (the file's first array), `+f.npy` (its next), `SHAPExTYPE=@f.bin`
    // (raw bytes). The results of `add` are written with `--output`, then
    // checked against the files: the right file matches, another fails.
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let module = models_dir().join("add.vmfb");
    let dir = std::env::temp_dir().join(format!("irvm-expected-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[String]| {
        let out = Command::new(irvm)
            .arg("run")
            .arg(format!("--module={}", module.display()))
            .args(["--function=add", "--input=2x3xf32=1,2,3,4,5,6"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let npy = dir.join("r.npy");
    let raw = dir.join("r.bin");
    let (_, _, err) = run(&[
        "--input=2x3xf32=10".into(),
        format!("--output=@{}", npy.display()),
    ]);
    assert!(err.is_empty(), "{err}");
    let (_, _, err) = run(&[
        "--input=2x3xf32=20".into(),
        format!("--output=+{}", npy.display()),
    ]);
    assert!(err.is_empty(), "{err}");
    let (_, _, err) = run(&[
        "--input=2x3xf32=10".into(),
        format!("--output=@{}", raw.display()),
    ]);
    assert!(err.is_empty(), "{err}");
    let ok = "[SUCCESS] all function outputs matched their expected values.";
    for (input, expected) in [
        ("10", format!("@{}", npy.display())),
        ("10", format!("2x3xf32=@{}", raw.display())),
        // `+` on a file not yet opened reads from its start.
        ("10", format!("+{}", npy.display())),
    ] {
        let (code, out, err) = run(&[
            format!("--input=2x3xf32={input}"),
            format!("--expected_output={expected}"),
        ]);
        assert_eq!(code, Some(0), "{expected}: {out}{err}");
        assert!(out.contains(ok), "{expected}: {out}");
    }
    // The file's first array is not the result of other inputs.
    let (code, out, err) = run(&[
        "--input=2x3xf32=20".into(),
        format!("--expected_output=@{}", npy.display()),
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("[FAILED] result[0]"), "{out}");
    // A missing file names itself.
    let (code, _, err) = run(&[
        "--input=2x3xf32=10".into(),
        format!("--expected_output=@{}", dir.join("none.npy").display()),
    ]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("none.npy") && err.contains("parsing expected"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_huge_worker_count_is_clamped_as_in_iree() {
    // iree-run-module clamps --task_topology_max_group_count to 256; so
    // does irvm, instead of starting 20,000 threads.
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let module = models_dir().join("embedded/add.vmfb");
    let started = std::time::Instant::now();
    let out = Command::new(irvm)
        .arg("run")
        .arg(format!("--module={}", module.display()))
        .args(["--function=add", "--input=2x3xf32=1", "--input=2x3xf32=2"])
        .arg("--task_topology_max_group_count=20000")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.ends_with("2x3xf32=[3 3 3][3 3 3]\n"), "{stdout}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// `hal.buffer_view.trace` reaches `DeviceOptions::on_trace` with its key
/// and the traced views (`python/tests/data/trace.mlir`, vmvx); an error
/// from the hook fails the call.
#[test]
fn buffer_view_traces_reach_the_trace_hook() {
    use std::sync::{Arc, Mutex};

    use irvm::{Context, Module, Ref, StatusCode, Trap, TypeRegistry};
    use irvm_hal::{hal_module_with, BufferView, DeviceOptions, ElementType, TraceHook};

    let path = common::paths::repo().join("python/tests/data/trace.vmfb");
    let run = |hook: TraceHook| {
        let options = DeviceOptions {
            on_trace: Some(hook),
            ..DeviceOptions::default()
        };
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_host_module(&hal_module_with(options).unwrap())
            .unwrap();
        ctx.register_module(Module::from_file(&path).unwrap())
            .unwrap();
        let traced = ctx.function("module.traced").unwrap();
        let x = BufferView::from_slice(&[4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let n = BufferView::from_slice(&[2, 3], &[0i32, 1, 2, 3, 4, 5]).unwrap();
        ctx.invoke(&traced, &[x.into_value(), n.into_value()])
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    run(TraceHook(Arc::new(move |key: &str, views: &[Ref]| {
        let shapes: Vec<(Vec<i64>, ElementType)> = views
            .iter()
            .map(|r| {
                let v = r.downcast::<BufferView>().expect("a buffer view");
                (v.shape.to_vec(), v.element_type)
            })
            .collect();
        record.lock().unwrap().push((key.to_string(), shapes));
        Ok(())
    })))
    .unwrap();
    let seen = seen.lock().unwrap();
    let keys: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["doubled", "inputs"]);
    assert_eq!(seen[0].1, [(vec![4], ElementType::F32)]);
    assert_eq!(
        seen[1].1,
        [(vec![4], ElementType::F32), (vec![2, 3], ElementType::I32)]
    );
    let trap = run(TraceHook(Arc::new(|key: &str, _: &[Ref]| {
        Err(Trap::new(
            StatusCode::Unknown,
            format!("sink refused {key}"),
        ))
    })))
    .unwrap_err();
    assert_eq!(trap.code, StatusCode::Unknown);
    assert!(trap.message.contains("sink refused doubled"), "{trap}");
}
