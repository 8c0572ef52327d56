//! Differential tests against the reference: our `.mlir` programs (compiled
//! by the peer `iree-compile`), the shared examples and `vm_bench` are run
//! through `irvm run` and IREE's `iree-run-module` with the same flags;
//! stdout and the exit status must match exactly.
//!
//! Needs the reference tools (`../shared/tools/setup-iree-peer` installs
//! them into `~/.cache/irvm-iree-peer/bin`, or set `IREE_PEER_BIN`);
//! skipped with a message when they are absent.

use std::path::PathBuf;
use std::process::Command;

use crate::common;
use crate::common::paths::repo;

fn run(cmd: &mut Command) -> (String, i32) {
    let out = cmd.output().expect("run");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn irvm_run_matches_iree_run_module() {
    let Some(peer) = common::peer_bin(&["iree-run-module", "iree-compile"]) else {
        common::report_missing_peer();
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut modules = std::collections::HashMap::new();
    for name in [
        "scalar_i32",
        "scalar_i64",
        "scalar_f32",
        "scalar_f64",
        "loops",
        "globals",
        "fpowi",
    ] {
        let out = tmp.path().join(format!("{name}.vmfb"));
        common::compile_mlir(
            &peer,
            &repo().join("tests/mlir").join(format!("{name}.mlir")),
            &out,
        );
        modules.insert(name, out);
    }
    let shared = repo().join("../shared");
    let mut cases: Vec<(PathBuf, &str, Vec<&str>)> = vec![
        (modules["scalar_i32"].clone(), "arith", vec!["17", "-5"]),
        (
            modules["scalar_i32"].clone(),
            "arith",
            vec!["2147483647", "3"],
        ),
        (modules["scalar_i32"].clone(), "unsigned", vec!["-7", "3"]),
        (modules["scalar_i32"].clone(), "bits", vec!["-123456", "35"]),
        (modules["scalar_i32"].clone(), "compare", vec!["4", "9"]),
        (
            modules["scalar_i64"].clone(),
            "arith",
            vec!["9000000000", "-7"],
        ),
        (modules["scalar_i64"].clone(), "widen", vec!["-42"]),
        (
            modules["scalar_i64"].clone(),
            "narrow",
            vec!["81985529216486895"],
        ),
        (modules["scalar_f32"].clone(), "arith", vec!["1.5", "-0.25"]),
        (modules["scalar_f32"].clone(), "math", vec!["2.5"]),
        (modules["scalar_f32"].clone(), "convert", vec!["-3.75", "7"]),
        (modules["scalar_f32"].clone(), "compare", vec!["1e30", "3"]),
        (modules["scalar_f64"].clone(), "arith", vec!["1.5", "3.25"]),
        (modules["scalar_f64"].clone(), "math", vec!["0.5"]),
        (modules["scalar_f64"].clone(), "compare", vec!["-2", "2"]),
        (modules["fpowi"].clone(), "powi_f32", vec!["123", "1.1"]),
        (modules["fpowi"].clone(), "powi_f32", vec!["-41", "-1.3"]),
        (
            modules["fpowi"].clone(),
            "powi_f64",
            vec!["4294967297", "1.0000001"],
        ),
        (modules["fpowi"].clone(), "powi_f64", vec!["-777", "0.999"]),
        (modules["loops"].clone(), "gcd", vec!["1071", "462"]),
        (modules["loops"].clone(), "collatz", vec!["27"]),
        (modules["loops"].clone(), "harmonic", vec!["1000"]),
        (modules["globals"].clone(), "bump", vec!["5"]),
        // Errors: unknown function, wrong argument count, bad input text.
        (modules["scalar_i32"].clone(), "nope", vec!["1"]),
        (modules["scalar_i32"].clone(), "arith", vec!["1"]),
        (modules["scalar_i32"].clone(), "arith", vec!["x", "1"]),
    ];
    if shared.is_dir() {
        cases.push((shared.join("examples/fib.vmfb"), "fib", vec!["30"]));
        cases.push((shared.join("examples/loop.vmfb"), "loop_sum", vec!["1000"]));
        let bench = shared.join("benchmarks/vm_bench.vmfb");
        for (f, n) in [
            ("loop_sum", "1000"),
            ("buffer_reduce", "64"),
            ("buffer_reduce_unrolled", "64"),
            ("buffer_reduce_unrolled", "20"),
            ("call_internal_func", "3"),
            ("fib", "15"),
        ] {
            cases.push((bench.clone(), f, vec![n]));
        }
    }
    let irvm = env!("CARGO_BIN_EXE_irvm");
    let mut failed = Vec::new();
    for (module, function, inputs) in &cases {
        let flags = |c: &mut Command| {
            c.arg(format!("--module={}", module.display()))
                .arg(format!("--function={function}"));
            for i in inputs {
                c.arg(format!("--input={i}"));
            }
        };
        let mut ours = Command::new(irvm);
        ours.arg("run");
        flags(&mut ours);
        let mut theirs = Command::new(peer.join("iree-run-module"));
        flags(&mut theirs);
        let a = run(&mut ours);
        let b = run(&mut theirs);
        if a != b {
            failed.push(format!(
                "{} @{function} {inputs:?}:\n  irvm (exit {}):\n{}\n  iree (exit {}):\n{}",
                module.display(),
                a.1,
                a.0,
                b.1,
                b.0
            ));
        }
    }
    eprintln!(
        "differential: {} passed, {} failed",
        cases.len() - failed.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
