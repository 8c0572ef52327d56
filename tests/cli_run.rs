//! `irvm run` as users drive it: output format, exit codes, error messages.

use std::path::PathBuf;
use std::process::Command;

fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel);
    p.exists().then_some(p)
}

fn irvm(args: &[String]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

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
    let (_, err, code) = irvm(&[
        "run".into(),
        "--module=/nonexistent.vmfb".into(),
        "--function=f".into(),
    ]);
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
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let lib = ["debug", "release"]
        .iter()
        .flat_map(|p| {
            [
                target.join(p).join("libnative_import_module.so"),
                target.join(p).join("deps/libnative_import_module.so"),
            ]
        })
        .find(|p| p.exists());
    let Some(lib) = lib else {
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
