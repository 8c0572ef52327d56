//! `irvm bench` as users drive it: the table, the default function set,
//! and errors.

use std::path::PathBuf;
use std::process::Command;

fn vm_bench() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/vm_bench.vmfb");
    p.exists().then_some(p)
}

fn irvm(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args(args)
        .output()
        .expect("irvm runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The rows of the table: (name, iterations).
fn rows(out: &str) -> Vec<(String, u64)> {
    out.lines()
        .filter(|l| l.starts_with("BM_"))
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols[0].to_string(), cols[5].parse().expect("iterations"))
        })
        .collect()
}

#[test]
fn times_named_functions_with_inputs_and_repetitions() {
    let Some(m) = vm_bench() else {
        eprintln!("skipping: ../shared/benchmarks not present");
        return;
    };
    let module = format!("--module={}", m.display());
    let (out, err, code) = irvm(&[
        "bench",
        &module,
        "--function=loop_sum",
        "--function=@fib",
        "--input=10",
        "--benchmark_min_time=0.02s",
        "--benchmark_repetitions=2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Benchmark") && out.contains("Iterations"),
        "{out}"
    );
    let r = rows(&out);
    let names: Vec<&str> = r.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "BM_loop_sum/process_time/real_time",
            "BM_loop_sum/process_time/real_time",
            "BM_fib/process_time/real_time",
            "BM_fib/process_time/real_time"
        ]
    );
    assert!(r.iter().all(|(_, n)| *n >= 1));
}

#[test]
fn without_function_times_every_export_without_arguments() {
    let Some(m) = vm_bench() else {
        eprintln!("skipping: ../shared/benchmarks not present");
        return;
    };
    let module = format!("--module={}", m.display());
    let (out, err, code) = irvm(&["bench", &module, "--benchmark_min_time=0.01"]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<String> = rows(&out).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["BM_empty_func/process_time/real_time"]);
}

#[test]
fn errors_name_the_problem_and_exit_1() {
    let Some(m) = vm_bench() else {
        eprintln!("skipping: ../shared/benchmarks not present");
        return;
    };
    let module = format!("--module={}", m.display());
    let (_, err, code) = irvm(&["bench", &module, "--function=nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("no function `nope`"), "{err}");
    let (_, err, code) = irvm(&["bench", &module, "--function=fib"]);
    assert_eq!(code, 1);
    assert!(err.contains("expects 1 arguments but 0"), "{err}");
    let (_, err, code) = irvm(&["bench", &module, "--benchmark_min_time=soon"]);
    assert_eq!(code, 1);
    assert!(err.contains("--benchmark_min_time"), "{err}");
    // A trapping benchmark reports the trap, compactly.
    let (_, err, code) = irvm(&[
        "bench",
        &module,
        "--function=fib",
        "--input=100000",
        "--benchmark_min_time=0.01",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("RESOURCE_EXHAUSTED"), "{err}");
    assert!(err.lines().count() < 10, "{err}");
}

#[test]
fn iteration_count_form_runs_exactly_that_many() {
    let Some(m) = vm_bench() else {
        eprintln!("skipping: ../shared/benchmarks not present");
        return;
    };
    let module = format!("--module={}", m.display());
    let (out, err, code) = irvm(&[
        "bench",
        &module,
        "--function=empty_func",
        "--benchmark_min_time=1234x",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [("BM_empty_func/process_time/real_time".to_string(), 1234)]
    );
}
