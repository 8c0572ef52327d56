//! `irvm run` as users drive it: output format, exit codes, error messages.

use std::process::Command;

use crate::common::cli::{irvm, irvm_with_stdin};
use crate::common::paths::{repo_file, shared};

#[test]
fn runs_examples_like_iree_run_module() {
    let Some(fib) = shared("examples/fib.vmfb") else {
        eprintln!("skipping: ../shared/examples not present");
        return;
    };
    let (out, _, code) = irvm(&[
        "run".into(),
        format!("--module={}", fib.display()),
        "--function=fib".into(),
        "--input=30".into(),
    ]);
    assert_eq!(code, 0);
    let expected = std::fs::read_to_string(shared("examples/fib.expected").unwrap()).unwrap();
    assert_eq!(out, expected);
}

#[test]
fn errors_exit_1_with_a_message() {
    let Some(bench) = shared("benchmarks/vm_bench.vmfb") else {
        eprintln!("skipping: ../shared/benchmarks not present");
        return;
    };
    let m = format!("--module={}", bench.display());
    let (_, err, code) = irvm(&["run".into(), m.clone(), "--function=nope".into()]);
    assert_eq!(code, 1);
    assert!(err.contains("no function `nope`"), "{err}");
    let (_, err, code) = irvm(&[
        "run".into(),
        m.clone(),
        "--function=fib".into(),
        "--input=x".into(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("parsing value `x` as i32"), "{err}");
    // A runtime trap names the function and bytecode offset.
    let (out, err, code) = irvm(&[
        "run".into(),
        m,
        "--function=buffer_reduce_unrolled".into(),
        "--input=20".into(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(out, "EXEC @buffer_reduce_unrolled\n");
    assert!(
        err.contains("OUT_OF_RANGE") && err.contains("vm_bench.buffer_reduce_unrolled+0x"),
        "{err}"
    );
    let (_, err, code) = irvm(&["run", "--module=/nonexistent.vmfb", "--function=f"]);
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent.vmfb"), "{err}");
}

#[test]
fn host_module_from_a_shared_library() {
    // module_benchmark imports native_import_module.add_1 (built by this workspace).
    let Some(module) = shared("conformance/module_benchmark.vmfb") else {
        eprintln!("skipping: ../shared/conformance not present");
        return;
    };
    let Some(lib) = crate::common::cli::workspace_plugin("native_import_module") else {
        eprintln!("skipping: libnative_import_module.so not built");
        return;
    };
    let (out, err, code) = irvm(&[
        "run".into(),
        format!("--module={}", lib.display()),
        format!("--module={}", module.display()),
        "--function=call_imported_func".into(),
        "--input=1".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("EXEC @call_imported_func\nresult[0]: i32="),
        "{out}"
    );
}

const ADD_OUT: &str = "EXEC @add\nresult[0]: hal.buffer_view\n2x3xf32=[3 3 3][3 3 3]\n";

#[test]
fn iree_flag_spellings_flagfiles_and_device_flags() {
    let module = format!("--module={}", repo_file("tests/models/add.vmfb"));
    let inputs = ["--input=2x3xf32=1".to_string(), "--input=2x3xf32=2".into()];
    // IREE's underscore spellings, a boolean with a value, device flags of
    // other drivers (ignored), and irvm's own dashed spellings.
    let mut args = vec!["run".to_string(), module.clone(), "--function=add".into()];
    args.extend(inputs.iter().cloned());
    args.extend(
        [
            "--trace_execution=false",
            "--output-max-element-count=1000",
            "--cuda_use_streams=true",
            "--task_topology_max_group_count=2",
            "--vulkan_validation_layers=false",
            "--module_mode=mmap",
            "--device=local-task",
        ]
        .map(String::from),
    );
    let (out, err, code) = irvm(&args);
    assert_eq!((out.as_str(), code), (ADD_OUT, 0), "{err}");
    // A flagfile is read where it stands; later flags override it.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flags");
    std::fs::write(&file, format!("# a comment\n{module}\n--function=nope\n")).unwrap();
    let mut args = vec![
        "run".to_string(),
        format!("--flagfile={}", file.display()),
        "--function=add".into(),
    ];
    args.extend(inputs.iter().cloned());
    let (out, err, code) = irvm(&args);
    assert_eq!((out.as_str(), code), (ADD_OUT, 0), "{err}");
    let (_, err, code) = irvm(&["run", "--flagfile=/nonexistent/flags"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read flagfile '/nonexistent/flags'"),
        "{err}"
    );
    // Unknown flags are still usage errors.
    let (_, err, code) = irvm(&["run".into(), module, "--no_such_flag=1".into()]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn timeout_covers_a_module_read_from_a_stdin_that_never_ends() {
    // `--timeout` counts loading: a writer that keeps stdin open without
    // sending the module is given up on at the deadline, not waited for.
    let started = std::time::Instant::now();
    let mut child = Command::new(crate::common::cli::irvm_bin())
        .args(["run", "--module=-", "--function=fib", "--timeout=0.3"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Held open (not dropped) until the command has exited.
    let stdin = child.stdin.take().unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("DEADLINE_EXCEEDED") && err.contains("loading module '-'"),
        "{err}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // Without a timeout the same module still loads from stdin.
    let args = [
        "run",
        "--module=-",
        "--function=fib",
        "--input=10",
        "--timeout=60",
    ];
    let (out, err, code) = irvm_with_stdin(&args, Some(&repo_file("examples/fib.vmasm")));
    assert_eq!(
        (out.as_str(), code),
        ("EXEC @fib\nresult[0]: i32=55\n", 0),
        "{err}"
    );
}

#[test]
fn a_module_path_that_is_a_fifo_is_refused_not_waited_for() {
    // Opening a FIFO blocks until a writer comes, before any deadline is
    // looked at: a module path that names one is refused at once (a pipe
    // is read with `--module=-`, which `--timeout` covers).
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("module.fifo");
    match Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("skipping: no `mkfifo`");
            return;
        }
    }
    let started = std::time::Instant::now();
    let mut child = Command::new(crate::common::cli::irvm_bin())
        .arg("run")
        .arg(format!("--module={}", fifo.display()))
        .args(["--function=fib", "--timeout=0.3"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!(
                "irvm still waiting on the FIFO after {:?}",
                started.elapsed()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("module.fifo") && err.contains("not a regular file"),
        "{err}"
    );
}

#[test]
fn an_empty_stdin_and_a_second_module_from_stdin_are_named_as_such() {
    // Not "truncated module: 0 bytes after the archive header".
    let (_, err, code) = irvm_with_stdin(
        &["run", "--module=-", "--function=fib", "--timeout=60"],
        Some("/dev/null"),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("loading module '-': stdin is empty"), "{err}");
    // stdin holds one module: a second `--module=-` would read nothing.
    let fib = repo_file("examples/fib.vmasm");
    let (_, err, code) = irvm_with_stdin(
        &["run", "--module=-", "--module=-", "--function=fib"],
        Some(&fib),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("INVALID_ARGUMENT; --module=- is given 2 times"),
        "{err}"
    );
}

#[test]
fn modules_from_stdin_and_the_function_chosen_as_iree_run_module_does() {
    // `--module=-` (bytecode or assembly), and no `--function` when the
    // module exports one runnable function (`__init` does not count).
    let args = [
        "run".to_string(),
        "--module=-".into(),
        "--input=2x3xf32=1".into(),
        "--input=2x3xf32=2".into(),
    ];
    let (out, err, code) = irvm_with_stdin(&args, Some(&repo_file("tests/models/add.vmfb")));
    assert_eq!((out.as_str(), code), (ADD_OUT, 0), "{err}");
    let args = [
        "run".to_string(),
        "--module=-".into(),
        "--function=fib".into(),
        "--input=10".into(),
    ];
    let (out, _, code) = irvm_with_stdin(&args, Some(&repo_file("examples/fib.vmasm")));
    assert_eq!((out.as_str(), code), ("EXEC @fib\nresult[0]: i32=55\n", 0));
    let (out, _, code) = irvm_with_stdin(
        &["dump", "--output=metadata", "-"],
        Some(&repo_file("tests/models/add.vmfb")),
    );
    assert_eq!(code, 0);
    assert!(out.contains("@module : version 0"), "{out}");
    // Several exports: the reference's message, and the list.
    let (_, err, code) = irvm(&[
        "run".into(),
        format!("--module={}", repo_file("tests/data/embedding.vmasm")),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "more than one exported function present; --function= must be specified explicitly"
        ),
        "{err}"
    );
    assert!(err.contains("add, mix, divmod"), "{err}");
}

#[test]
fn files_that_are_not_modules_get_plain_errors() {
    let (_, err, code) = irvm(&[
        "run".into(),
        format!("--module={}", repo_file("tests/models/add.mlir")),
        "--function=add".into(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("this is MLIR source, not a module; compile it with iree-compile"),
        "{err}"
    );
    let (_, err, code) = irvm(&["dump".into(), repo_file("tests/models/add.mlir")]);
    assert_eq!(code, 1);
    assert!(err.contains("this is MLIR source"), "{err}");
    let (_, err, code) = irvm(&[
        "run".into(),
        format!("--module={}", repo_file("tests")),
        "--function=f".into(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("Is a directory"), "{err}");
    let (out, _, code) = irvm(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.contains("bytecode 17.0"), "{out}");
}

/// `irvm as` with no `-o` does not write binary to a terminal (checked
/// through `script`, which gives the command a pseudo-terminal).
#[test]
fn irvm_as_refuses_a_terminal_stdout() {
    let Ok(out) = Command::new("script")
        .args([
            "-qec",
            &format!(
                "{} as {}",
                env!("CARGO_BIN_EXE_irvm"),
                repo_file("examples/fib.vmasm")
            ),
            "/dev/null",
        ])
        .output()
    else {
        eprintln!("skipping: no `script` to give irvm a terminal");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("refusing to write a binary module to a terminal"),
        "{text}"
    );
    assert!(!out.status.success());
}

#[test]
fn print_statistics_counts_the_run() {
    // fib(10), recursive: 177 calls, 10 frames deep.
    let (out, err, code) = irvm(&[
        "run".into(),
        format!("--module={}", repo_file("examples/fib.vmasm")),
        "--function=fib".into(),
        "--input=10".into(),
        "--print_statistics".into(),
    ]);
    assert_eq!(
        (out.as_str(), code),
        ("EXEC @fib\nresult[0]: i32=55\n", 0),
        "{err}"
    );
    for line in [
        "[[ irvm statistics ]]",
        "load time (modules, __init):",
        "run time (the call):",
        "instructions executed:       1500 ",
        "calls into bytecode:         177 (the entry call included)",
        "imports called:              0 ",
        "dispatches:                  0\n",
        "deepest call stack:          10 frames",
        "most memory held:",
    ] {
        assert!(err.contains(line), "missing {line:?} in\n{err}");
    }
    // Host calls (the hal's) are counted too.
    let (_, err, code) = irvm(&[
        "run".into(),
        format!("--module={}", repo_file("tests/models/add.vmfb")),
        "--input=2x3xf32=1".into(),
        "--input=2x3xf32=2".into(),
        "--print-statistics".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("imports called:              0 "), "{err}");
}

/// A trap in `__init`'s first instructions, which iree-compile 3.13 places
/// at a location without a kind (union tag NONE): the frame has no
/// location, not an error about one.
#[test]
fn an_unknown_location_is_no_location_in_a_backtrace() {
    let (_, err, code) = irvm(&[
        "run".into(),
        format!("--module={}", repo_file("tests/models/add.vmfb")),
        "--function=add".into(),
        "--fuel=1".into(),
        "--input=2x3xf32=1".into(),
        "--input=2x3xf32=2".into(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("  [0] module.__init+0x"), "{err}");
    assert!(!err.contains("<error"), "{err}");
}

#[test]
fn inputs_and_flagfiles_on_a_fifo_nobody_writes_end_at_the_timeout() {
    // `--input=@<(cmd)` is a pipe, so input files are not refused as module
    // paths are; a FIFO nobody opens for writing is given up on at the
    // deadline instead (before: waited for forever, whatever --timeout).
    use crate::common::bounded::bounded;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("never.npy");
    match Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("skipping: no `mkfifo`");
            return;
        }
    }
    let module = format!("--module={}", repo_file("tests/onnx/test_abs.vmfb"));
    let fifo = fifo.display().to_string();
    let cases: [(&str, Vec<String>, String); 5] = [
        (
            "run, NumPy input",
            vec!["run".into(), module.clone(), format!("--input=@{fifo}")],
            format!("parsing function inputs, input `@{fifo}`"),
        ),
        (
            "run, raw input",
            vec![
                "run".into(),
                module.clone(),
                format!("--input=3x4xf32=@{fifo}"),
            ],
            format!("parsing function inputs, input `3x4xf32=@{fifo}`"),
        ),
        (
            "bench",
            vec![
                "bench".into(),
                module.clone(),
                "--function=test_abs".into(),
                format!("--input=@{fifo}"),
            ],
            format!("parsing function inputs, input `@{fifo}`"),
        ),
        (
            "dbg",
            vec![
                "dbg".into(),
                "--batch=/dev/null".into(),
                module.clone(),
                "--function=test_abs".into(),
                format!("--input=@{fifo}"),
            ],
            format!("parsing function inputs, input `@{fifo}`"),
        ),
        (
            "flagfile",
            vec!["run".into(), module.clone(), format!("--flagfile={fifo}")],
            format!("reading flagfile '{fifo}'"),
        ),
    ];
    for (what, args, doing) in cases {
        let mut cmd = Command::new(crate::common::cli::irvm_bin());
        cmd.args(&args).arg("--timeout=0.3");
        let outcome = bounded(cmd, u64::MAX, std::time::Duration::from_secs(20));
        outcome.assert_error("DEADLINE_EXCEEDED");
        // The deadline names what was being read.
        assert!(outcome.stderr.contains(&doing), "{what}: {outcome:#?}");
    }
    // The same files, written, are read as before under a timeout.
    let npy = repo_file("tests/onnx/in--test_abs.0.npy");
    let (out, err, code) = irvm(&["run", &module, &format!("--input=@{}", npy), "--timeout=60"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("EXEC @test_abs\nresult[0]: hal.buffer_view\n3x4x5xf32="),
        "{out}"
    );
}

#[test]
fn an_expected_output_on_a_fifo_nobody_writes_ends_at_the_timeout() {
    // The expected outputs are read after the call (as iree-run-module
    // reads them): that read is bounded by --timeout as the inputs' is,
    // and the deadline names it, not the call that finished in time.
    use crate::common::bounded::bounded;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("never.npy");
    match Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("skipping: no `mkfifo`");
            return;
        }
    }
    let module = format!("--module={}", repo_file("tests/onnx/test_abs.vmfb"));
    let input = format!("--input=@{}", repo_file("tests/onnx/in--test_abs.0.npy"));
    let fifo = fifo.display().to_string();
    let doing =
        format!("DEADLINE_EXCEEDED; parsing expected function outputs, expected output `@{fifo}`");
    for (what, tool) in [
        ("run", vec!["run".to_string()]),
        (
            "bench",
            vec![
                "bench".into(),
                "--function=test_abs".into(),
                "--benchmark_min_time=1x".into(),
                "--enable_output_processing".into(),
            ],
        ),
    ] {
        let mut cmd = Command::new(crate::common::cli::irvm_bin());
        cmd.args(&tool)
            .args([&module, &input])
            .arg(format!("--expected_output=@{fifo}"))
            .arg("--timeout=2");
        let outcome = bounded(cmd, u64::MAX, std::time::Duration::from_secs(30));
        assert!(!outcome.timed_out, "{what}: {outcome:#?}");
        outcome.assert_error(&doing);
        if what == "run" {
            assert_eq!(outcome.stdout, "EXEC @test_abs\n", "{outcome:#?}");
        }
    }
}

#[test]
fn an_output_file_on_a_fifo_nobody_reads_ends_at_the_timeout() {
    // `--output=@FIFO`: opening a FIFO for writing waits for a reader, and
    // writing one waits while nobody drains it; both are bounded by
    // --timeout, and the deadline names the file.
    use crate::common::bounded::bounded;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("never_read.npy");
    match Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("skipping: no `mkfifo`");
            return;
        }
    }
    let fifo = fifo.display().to_string();
    let mut cmd = Command::new(crate::common::cli::irvm_bin());
    cmd.arg("run")
        .arg(format!(
            "--module={}",
            repo_file("tests/onnx/test_abs.vmfb")
        ))
        .arg(format!(
            "--input=@{}",
            repo_file("tests/onnx/in--test_abs.0.npy")
        ))
        .arg(format!("--output=@{fifo}"))
        .arg("--timeout=2");
    let outcome = bounded(cmd, u64::MAX, std::time::Duration::from_secs(30));
    assert!(!outcome.timed_out, "{outcome:#?}");
    outcome.assert_error(&format!(
        "DEADLINE_EXCEEDED; opening `{fifo}` for result 0: not done within --timeout"
    ));
    assert_eq!(outcome.stdout, "EXEC @test_abs\n", "{outcome:#?}");
}

/// An inline-dynamic module's dispatches (`hal_loader.executable.dispatch`)
/// are traced and counted as the hal module's are.
#[test]
fn inline_hal_dispatches_are_traced_and_counted() {
    let module = format!("--module={}", repo_file("tests/models/inline_dynamic.vmfb"));
    let base = [
        "run",
        module.as_str(),
        "--function=matmul",
        "--input=2x4xf32=1",
        "--input=4x3xf32=1",
    ];
    let with = |extra: &str| {
        let mut args = base.to_vec();
        args.push(extra);
        irvm(&args)
    };
    let (out, err, code) = with("--trace-execution");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2x3xf32=[4 4 4][4 4 4]"), "{out}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("[hal.dispatch]") && l.contains("matmul_dispatch_0")),
        "{err}"
    );
    let (_, err, code) = with("--print_statistics");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with("dispatches:") && l.trim_end().ends_with(" 1")),
        "{err}"
    );
}

/// A list that holds itself (`vm.list.set.ref %r0, %i1, %r0`) and a chain
/// of 100,000 nested lists as results: printing recursed into each nested
/// list, so both overflowed the stack (an abort; iree-run-module's printer
/// crashes the same way). The chain prints, line for line; the list that
/// holds itself is an error naming it.
#[test]
fn results_that_hold_themselves_or_nest_deep_print_without_recursion() {
    let program = b"vm.module @nest version 0
vm.type i32
vm.type !vm.list<?>
vm.export @selfish
vm.func @selfish() -> (!vm.list<?>) {
^bb0:
  %i0 = vm.const.i32 1
  %i1 = vm.const.i32 0
  %r0 = vm.list.alloc %i0 : !vm.list<?>
  vm.list.resize %r0, %i0
  vm.list.set.ref %r0, %i1, %r0
  vm.return %r0
}
vm.export @chain
vm.func @chain(%i0: i32) -> (!vm.list<?>) {
^bb0:
  %i1 = vm.const.i32 1
  %i2 = vm.const.i32 0
  %i4 = vm.const.i32 1
  %r0 = vm.list.alloc %i1 : !vm.list<?>
  vm.list.resize %r0, %i1
  vm.list.set.i32 %r0, %i2, %i0
  vm.br ^bb1()
^bb1:
  %i6 = vm.cmp.lt.i32.s %i4, %i0
  vm.cond_br %i6, ^bb2(), ^bb3()
^bb2:
  %r1 = vm.list.alloc %i1 : !vm.list<?>
  vm.list.resize %r1, %i1
  vm.list.set.ref %r1, %i2, %r0
  %i4 = vm.add.i32 %i4, %i1
  vm.br ^bb1(%r1->%r0)
^bb3:
  vm.return %r0
}
";
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("nest.vmasm");
    std::fs::write(&path, program).unwrap();
    let module = format!("--module={}", path.display());
    let (out, err, code) = irvm(&["run", &module, "--function=selfish"]);
    assert_eq!((out.as_str(), code), ("EXEC @selfish\n", 1), "{err}");
    assert!(
        err.contains("FAILED_PRECONDITION; the result list holds itself (element 0 of a list 0 level(s) down"),
        "{err}"
    );
    let (out, err, code) = irvm(&["run", &module, "--function=chain", "--input=100000"]);
    assert_eq!(code, 0, "{err}");
    let expected = format!(
        "EXEC @chain\nresult[0]: vm.list\n{}child_list[0]: i32=100000\n{}",
        "child_list[0]: vm.list\n".repeat(99_999),
        "\n".repeat(100_000)
    );
    assert!(
        out == expected,
        "{} bytes, not the {} expected",
        out.len(),
        expected.len()
    );
}

/// `irvm run` printing a 500x500 result (about 500 KB of text, more than a
/// pipe holds) with `--output=OUTPUT` and `--timeout=T` to a piped stdout.
fn large_result_to_a_pipe(output: Option<&str>, timeout: &str) -> std::process::Child {
    let mut cmd = Command::new(crate::common::cli::irvm_bin());
    cmd.arg("run")
        .arg(format!(
            "--module={}",
            repo_file("tests/models/dynamic.vmfb")
        ))
        .arg("--input=500x500xf32=1")
        .arg("--output_max_element_count=1000000")
        .arg(format!("--timeout={timeout}"));
    if let Some(output) = output {
        cmd.arg(format!("--output={output}"));
    }
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn irvm run")
}

#[test]
fn results_to_a_stdout_pipe_nobody_reads_end_at_the_timeout() {
    // `irvm run ... --timeout=1 | (sleep 100)`: the write to stdout blocks
    // once the pipe is full; it is bounded by --timeout as an output file
    // is, and the error names what was being written.
    for output in [Some("-"), None] {
        let mut child = large_result_to_a_pipe(output, "1");
        // Held open and never read.
        let _unread = child.stdout.take();
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for irvm") {
                break status;
            }
            if start.elapsed() > std::time::Duration::from_secs(30) {
                let _ = child.kill();
                panic!("--output={output:?}: irvm still writing after 30 s with --timeout=1");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(1), "--output={output:?}: {stderr}");
        assert!(
            stderr.contains(
                "DEADLINE_EXCEEDED; writing result 0 to stdout: not done within --timeout"
            ),
            "--output={output:?}: {stderr}"
        );
    }
}

#[test]
fn a_slow_reader_that_keeps_up_gets_every_result() {
    // The write is bounded by the deadline as a whole, not cut into timed
    // pieces: a reader taking small reads with pauses gets it all.
    for output in [Some("-"), None] {
        let mut child = large_result_to_a_pipe(output, "60");
        let mut stdout = child.stdout.take().unwrap();
        let mut text = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = std::io::Read::read(&mut stdout, &mut chunk).expect("read irvm's stdout");
            if n == 0 {
                break;
            }
            text.extend_from_slice(&chunk[..n]);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let status = child.wait().expect("wait for irvm");
        assert!(status.success(), "--output={output:?}: {status}");
        let text = String::from_utf8(text).unwrap();
        let header = match output {
            Some(_) => "EXEC @dynamic\nhal.buffer_view\n500x500xf32=",
            None => "EXEC @dynamic\nresult[0]: hal.buffer_view\n500x500xf32=",
        };
        assert!(
            text.starts_with(header),
            "--output={output:?}: {:?}",
            &text[..80.min(text.len())]
        );
        assert_eq!(text.matches('1').count(), 250_000, "--output={output:?}");
        assert!(text.ends_with("]\n"), "--output={output:?}");
    }
}

/// A module that creates a fence, fails it with the status code it is
/// given (`hal.fence.fail`) and returns what `hal.fence.query` says.
const FENCE_FAIL_MODULE: &str = "vm.module @fence_fail version 0
vm.type !hal.device
vm.type !hal.fence
vm.import @hal.devices.get cconv \"0i_r\"
vm.import @hal.fence.create cconv \"0rI_r\"
vm.import @hal.fence.fail cconv \"0ri_v\"
vm.import @hal.fence.query cconv \"0r_i\"

vm.export @main
vm.func @main(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2:3 = vm.const.i64.zero
  %r0 = vm.call @hal.devices.get(%i1)
  %r1 = vm.call @hal.fence.create(%r0, %i2:3)
  vm.call @hal.fence.fail(%r1, %i0)
  %i4 = vm.call @hal.fence.query(%r1)
  vm.return %i4
}
";

#[test]
fn a_fence_failed_with_status_0_is_refused_not_read_as_signalled() {
    // IREE makes an OK status of `hal.fence.fail(fence, 0)` and leaves the
    // fence pending; irvm marked it failed with code 0, which a query read
    // as signalled. Refused now (docs/COMPATIBILITY.md).
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("fence_fail.vmasm");
    std::fs::write(&module, FENCE_FAIL_MODULE).unwrap();
    let run = |code: &str| {
        irvm(&[
            "run",
            &format!("--module={}", module.display()),
            &format!("--input={code}"),
        ])
    };
    let (_, stderr, code) = run("0");
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("INVALID_ARGUMENT")
            && stderr.contains("hal.fence.fail: status 0 (OK) is not a failure"),
        "{stderr}"
    );
    // A failure's code is what a query reads (ABORTED: 10), masked to
    // IREE's five bits as IREE masks it (42 & 0x1F = 10).
    for status in ["10", "42"] {
        let (stdout, stderr, code) = run(status);
        assert_eq!(code, 0, "{status}: {stderr}");
        assert!(stdout.contains("result[0]: i32=10"), "{status}: {stdout}");
    }
    // 32 is 0 in those bits: refused as well.
    let (_, stderr, code) = run("32");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("status 0 (OK)"), "{stderr}");
}

#[test]
fn modules_held_in_memory_count_against_max_memory_bytes() {
    // dynamic.vmfb (6,522 bytes) is read into memory, from stdin or as a
    // file under 16 MiB: the budget counts it, and a module that does not
    // fit is refused naming it.
    let path = repo_file("tests/models/dynamic.vmfb");
    let len = std::fs::metadata(&path).unwrap().len();
    let (_, stderr, code) = irvm_with_stdin(
        &[
            "run",
            "--module=-",
            "--max-memory-bytes=1000",
            "--input=2x2xf32=1",
        ],
        Some(path.as_str()),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "RESOURCE_EXHAUSTED; loading module '-': the module read from stdin is over 1000 \
             bytes, more than --max-memory-bytes allows"
        ),
        "{stderr}"
    );
    let file = format!("--module={path}");
    let (_, stderr, code) = irvm(&["run", &file, "--max-memory-bytes=5000", "--input=2x2xf32=1"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "loading module '{path}': module 'module' does not fit the memory budget: \
             RESOURCE_EXHAUSTED; module 'module' (its bytes read into memory) needs {len} more \
             bytes"
        )),
        "{stderr}"
    );
    // With room for it (and the run) both load and run.
    let (stdout, stderr, code) = irvm_with_stdin(
        &[
            "run",
            "--module=-",
            "--max-memory-bytes=100000",
            "--input=2x2xf32=3",
        ],
        Some(path.as_str()),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("2x2xf32=[9 9][9 9]"), "{stdout}");
}

#[test]
fn a_join_of_fences_without_timepoints_is_a_null_fence() {
    // IREE 3.13's `hal.fence.join` counts the timepoints of the fences
    // given and answers a null fence (signalled by definition) when there
    // are none: no fences, only nulls, or joins of those. irvm made a new
    // signalled fence for them, which a program comparing the result with
    // null (or iree.runtime, printing `None`) tells apart.
    let module = repo_file("tests/data/fence_join.vmasm");
    let (stdout, stderr, code) = irvm(&["run", &format!("--module={module}"), "--function=joins"]);
    assert_eq!(code, 0, "{stderr}");
    // Nothing joined; two nulls; a null and a created fence; the first
    // two joins joined.
    assert_eq!(
        stdout,
        "EXEC @joins\nresult[0]: i32=0\nresult[1]: i32=0\nresult[2]: i32=1\nresult[3]: i32=0\n"
    );
}

#[test]
fn a_constant_written_in_place_by_a_dispatch_sorts_as_in_iree() {
    // iree-compile imports the constant from the module's rodata with
    // `hal.allocator.import` and sorts it in place before copying it out.
    // IREE's runtime reads modules into writable memory, so it runs; irvm's
    // import was a view of read-only memory: vmvx refused the write
    // (PERMISSION_DENIED) and a native kernel's write faulted when the
    // module file was mapped (over 16 MiB). Small read-only imports are now
    // private copies, and mapped module files copy-on-write.
    for backend in ["vmvx", "llvm-cpu"] {
        let module = repo_file(&format!("tests/data/inplace/sort_constant.{backend}.vmfb"));
        for device in ["local-sync", "local-task"] {
            let (stdout, stderr, code) = irvm(&[
                "run",
                &format!("--module={module}"),
                "--function=sorted",
                &format!("--device={device}"),
            ]);
            assert_eq!(code, 0, "{backend} on {device}: {stderr}");
            assert_eq!(
                stdout, "EXEC @sorted\nresult[0]: hal.buffer_view\n6xi32=-2 0 3 5 7 9\n",
                "{backend} on {device}"
            );
        }
    }
}
