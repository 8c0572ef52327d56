//! `irvm bench` as users drive it: the table, the default function set,
//! and errors.

use std::path::PathBuf;

use crate::common::cli::irvm;
use crate::common::paths::shared;

fn vm_bench() -> Option<PathBuf> {
    shared("benchmarks/vm_bench.vmfb")
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
    let family = |f: &str| {
        let base = format!("BM_{f}/process_time/real_time");
        vec![
            base.clone(),
            base.clone(),
            format!("{base}_mean"),
            format!("{base}_median"),
            format!("{base}_stddev"),
            format!("{base}_cv"),
        ]
    };
    let mut expected = family("loop_sum");
    expected.extend(family("fib"));
    assert_eq!(names, expected);
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
    // After Google Benchmark's context lines (date .. load average).
    let report = err.split("Load Average:").nth(1).unwrap_or(&err);
    assert!(report.lines().count() < 10, "{err}");
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

/// The add model of tests/models, timed as CI systems read
/// iree-benchmark-module: JSON, CSV, a file, a filter, a time unit.
#[test]
fn speaks_google_benchmark_formats() {
    let module = format!(
        "--module={}/tests/models/add.vmfb",
        env!("CARGO_MANIFEST_DIR")
    );
    let base = [
        "bench",
        module.as_str(),
        "--function=add",
        "--input=2x3xf32=1",
        "--input=2x3xf32=2",
        "--benchmark_min_time=5x",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        irvm(&args)
    };
    // Console: IREE's unit (ms) and aggregates after repetitions.
    let (out, err, code) = with(&["--benchmark_repetitions=3"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("Run on (") && err.contains("Load Average:"),
        "{err}"
    );
    let r = rows(&out);
    assert_eq!(r.len(), 7, "{out}");
    assert!(
        out.lines()
            .filter(|l| l.starts_with("BM_"))
            .take(6)
            .all(|l| l.contains(" ms ")),
        "{out}"
    );
    assert!(out.contains("real_time_cv") && out.contains(" %"), "{out}");
    // JSON with the reference's fields.
    let (out, err, code) = with(&["--benchmark_format=json", "--benchmark_repetitions=2"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    for key in [
        "date",
        "num_cpus",
        "mhz_per_cpu",
        "caches",
        "load_avg",
        "library_build_type",
    ] {
        assert!(doc["context"].get(key).is_some(), "context.{key}: {out}");
    }
    let b = doc["benchmarks"].as_array().unwrap();
    assert_eq!(b.len(), 6);
    assert_eq!(b[0]["name"], "BM_add/process_time/real_time");
    assert_eq!(b[0]["run_type"], "iteration");
    assert_eq!(b[0]["iterations"], 5);
    assert_eq!(b[0]["time_unit"], "ms");
    assert_eq!(b[5]["aggregate_name"], "cv");
    assert_eq!(b[5]["aggregate_unit"], "percentage");
    // CSV, another unit, and a JSON file beside the console table.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.json");
    let out_flag = format!("--benchmark_out={}", file.display());
    let (out, err, code) = with(&[
        "--benchmark_format=csv",
        "--benchmark_time_unit=us",
        &out_flag,
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("name,iterations,real_time,cpu_time,time_unit"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("\"BM_add/process_time/real_time\",5,") && lines[1].contains(",us,"),
        "{out}"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["benchmarks"][0]["time_unit"], "us");
    // Filters: a match, an exclusion, a bad expression.
    assert_eq!(with(&["--benchmark_filter=BM_add"]).2, 0);
    let (_, err, code) = with(&["--benchmark_filter=-add"]);
    assert_eq!(code, 1);
    assert!(err.contains("no benchmark matches"), "{err}");
    let (_, err, code) = with(&["--benchmark_filter=("]);
    assert_eq!(code, 1);
    assert!(err.contains("not a regular expression"), "{err}");
    let (_, err, code) = with(&["--benchmark_time_unit=h"]);
    assert_eq!(code, 1);
    assert!(err.contains("ns, us, ms, s"), "{err}");
}

/// A function compiled with `--iree-execution-model=async-external` takes a
/// wait and a signal fence after its inputs; each timed call passes them
/// (a null wait fence and a fresh signal fence, checked after the call), as
/// iree-benchmark-module does, so only the inputs are given.
#[test]
fn times_async_external_functions_passing_their_fences() {
    let module = format!(
        "--module={}/tests/models/async_external.vmfb",
        env!("CARGO_MANIFEST_DIR")
    );
    let (out, err, code) = irvm(&[
        "bench",
        &module,
        "--function=scale",
        "--input=4xf32=1 2 3 4",
        "--input=2",
        "--benchmark_min_time=3x",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [("BM_scale/process_time/real_time".to_string(), 3)]
    );
    // The fences are not inputs: giving one more is refused.
    let (_, err, code) = irvm(&[
        "bench",
        &module,
        "--function=scale",
        "--input=4xf32=1 2 3 4",
        "--input=2",
        "--input=3",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("expects 2 arguments but 3"), "{err}");
}

/// Without `--function`, the exports of an async-external module that take
/// only their wait and signal fences are timed (each call passes them), as
/// iree-benchmark-module picks them; one with an input is left out.
#[test]
fn without_function_times_async_external_exports_taking_only_fences() {
    let vmfb = format!("{}/tests/data/async_bench.vmfb", env!("CARGO_MANIFEST_DIR"));
    let module = format!("--module={vmfb}");
    let (out, err, code) = irvm(&["bench", &module, "--benchmark_min_time=2x"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [
            ("BM_tick/process_time/real_time".to_string(), 2),
            ("BM_nothing/process_time/real_time".to_string(), 2)
        ]
    );
    // The reference, when installed, lists the same benchmarks.
    let (listed, err, code) = irvm(&["bench", &module, "--benchmark_list_tests"]);
    assert_eq!(code, 0, "{err}");
    let Some(dir) = crate::common::peer_bin(&["iree-benchmark-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    let theirs = std::process::Command::new(dir.join("iree-benchmark-module"))
        .args([&module, "--device=local-task", "--benchmark_list_tests"])
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{theirs:?}");
    assert_eq!(listed, String::from_utf8_lossy(&theirs.stdout));
}

/// The `dispatches:` figure `--print_statistics` prints on stderr.
fn dispatches(err: &str) -> u64 {
    err.lines()
        .find_map(|l| l.trim().strip_prefix("dispatches:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no dispatch count in: {err}"))
}

/// `iree.benchmark`-marked exports, as iree-benchmark-module 3.13 runs
/// them: a dispatch benchmark (`iree.benchmark = "dispatch"`) is timed
/// without `--function` although it takes an argument, gets the batch size
/// as its repeat count (one call per batch) and reports in microseconds; an
/// `entry` wrapper is one call per batch too. `--batch_size` counts
/// iterations, not calls.
#[test]
fn benchmark_wrappers_run_as_iree_benchmark_module_runs_them() {
    let data = format!("{}/tests/data", env!("CARGO_MANIFEST_DIR"));
    let dispatch = format!("--module={data}/bench_dispatch.vmfb");
    let name = "add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32";
    let (out, err, code) = irvm(&[
        "bench",
        &dispatch,
        "--batch_size=4",
        "--benchmark_min_time=8x",
        "--print_statistics",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [(format!("BM_{name}/process_time/real_time"), 8)]
    );
    assert!(out.contains(" us "), "microseconds by default: {out}");
    // A warm-up batch and two timed ones, each one call repeating the
    // dispatch 4 times.
    assert_eq!(dispatches(&err), 12, "{err}");
    // Its argument is the batch size: an --input is refused.
    let (_, err, code) = irvm(&[
        "bench",
        &dispatch,
        &format!("--function={name}"),
        "--input=5",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("INVALID_ARGUMENT; dispatch wrappers take --batch_size, not --input"),
        "{err}"
    );
    // An entry wrapper: one call (one dispatch) per batch of 3.
    let entry = format!("--module={data}/bench_entry.vmfb");
    let (out, err, code) = irvm(&[
        "bench",
        &entry,
        "--batch_size=3",
        "--benchmark_min_time=6x",
        "--print_statistics",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [("BM_add_benchmark/process_time/real_time".to_string(), 6)]
    );
    assert!(out.contains(" ms "), "milliseconds by default: {out}");
    assert_eq!(dispatches(&err), 3, "{err}");
    // The reference, when installed, times the same benchmarks as often.
    let Some(dir) = crate::common::peer_bin(&["iree-benchmark-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    for (module, batch, want) in [
        (&dispatch, "--batch_size=4", 8),
        (&entry, "--batch_size=3", 6),
    ] {
        let min_time = format!("--benchmark_min_time={want}x");
        let args = [module.as_str(), batch, min_time.as_str()];
        let theirs = std::process::Command::new(dir.join("iree-benchmark-module"))
            .args(args)
            .arg("--device=local-sync")
            .output()
            .unwrap();
        assert!(theirs.status.success(), "{theirs:?}");
        let mut ours_args = vec!["bench"];
        ours_args.extend(args);
        let (ours, err, _) = irvm(&ours_args);
        assert_eq!(
            rows(&ours),
            rows(&String::from_utf8_lossy(&theirs.stdout)),
            "{err}"
        );
    }
}

/// `--batch_concurrency` spreads an async-external function's calls in a
/// batch over that many fence timelines (each call waits for the one
/// before it on its timeline) and rounds the batch up to a multiple of it,
/// as iree-benchmark-module does; it is no longer accepted and ignored.
#[test]
fn batch_concurrency_rounds_async_batches_and_is_checked() {
    let module = format!(
        "--module={}/tests/models/async_external.vmfb",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = |concurrency: &str| {
        irvm(&[
            "bench",
            &module,
            "--function=scale",
            "--input=4xf32=1 2 3 4",
            "--input=2",
            "--batch_size=5",
            concurrency,
            "--benchmark_min_time=12x",
            "--print_statistics",
        ])
    };
    // Batches of 5 calls: 15 iterations, and a warm-up batch (one
    // dispatch a call).
    let (out, err, code) = run("--batch_concurrency=1");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [("BM_scale/process_time/real_time".to_string(), 15)]
    );
    assert_eq!(dispatches(&err), 20, "{err}");
    // Over 2 timelines a batch is 6 calls.
    let (out, err, code) = run("--batch_concurrency=2");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [("BM_scale/process_time/real_time".to_string(), 12)]
    );
    assert_eq!(dispatches(&err), 18, "{err}");
    let (_, err, code) = run("--batch_concurrency=0");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("INVALID_ARGUMENT; batch size and concurrency must be positive"),
        "{err}"
    );
}

/// Where `irvm bench` reads a command line differently from
/// iree-benchmark-module 3.13 on purpose (docs/COMPATIBILITY.md's
/// "Command lines" table): what asks for nothing to be timed, or for a
/// count that is not one, is an error or runs once, never a silent success.
#[test]
fn differences_from_iree_benchmark_module() {
    let Some(m) = vm_bench() else {
        eprintln!("skipping: ../shared/benchmarks not present");
        return;
    };
    let module = format!("--module={}", m.display());
    // A filter matching nothing: the reference says so and exits 0.
    let (_, err, code) = irvm(&[
        "bench",
        &module,
        "--function=empty_func",
        "--benchmark_filter=no_such_benchmark",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no benchmark matches"), "{err}");
    // Zero repetitions: the reference prints no row; irvm times once.
    let (out, err, code) = irvm(&[
        "bench",
        &module,
        "--function=empty_func",
        "--benchmark_min_time=3x",
        "--benchmark_repetitions=0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rows(&out),
        [("BM_empty_func/process_time/real_time".to_string(), 3)]
    );
    // No iterations, or negative seconds: the reference runs 0 or 1.
    for min_time in ["0x", "-1"] {
        let (_, err, code) = irvm(&[
            "bench",
            &module,
            "--function=empty_func",
            &format!("--benchmark_min_time={min_time}"),
        ]);
        assert_eq!(code, 1, "{min_time}: {err}");
        assert!(err.contains(min_time), "{min_time}: {err}");
    }
}
