//! IREE's VM conformance suite (`../shared/conformance/iree-vm-tests`), run
//! under its test_/fail_ convention through the public API: every exported
//! function takes no arguments; `fail_*` must fail, everything else must
//! succeed. `async_ops` gets the `yieldable_test` dynamic host module.
//! Skipped with a message when the suite is absent.

use std::path::{Path, PathBuf};

use irvm::dynamic::DynamicModule;
use irvm::{Context, Module, Tier, TypeRegistry};

use crate::common::cli::yieldable_plugin;

fn suite_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/iree-vm-tests");
    d.is_dir().then_some(d)
}

struct Outcome {
    passed: usize,
    failures: Vec<String>,
}

/// How a conformance function runs.
#[derive(Clone, Copy, PartialEq)]
enum Runner {
    /// The interpreter's plain loop.
    Plain,
    /// The hooked loop (a fuel budget), which runs fused instructions one
    /// at a time.
    Hooked,
    /// Compiled code (`Tier::Jit`: every function compiled at its first
    /// run, entered at its entry and loop heads).
    Compiled,
}

fn run_module(path: &Path, out: &mut Outcome, runner: Runner) {
    let name = path.file_stem().unwrap().to_string_lossy().to_string();
    let module = match Module::from_file(path) {
        Ok(m) => m,
        Err(e) => {
            out.failures.push(format!("{name}: load failed: {e}"));
            return;
        }
    };
    let exports: Vec<String> = module
        .exports()
        .iter()
        .map(|e| e.local_name.to_string())
        .collect();
    for export in &exports {
        // A fresh context per function, as IREE's runner does.
        let registry = TypeRegistry::new();
        let mut ctx = Context::new(&registry);
        if module
            .imports()
            .iter()
            .any(|i| i.full_name.starts_with("yieldable_test."))
        {
            let Some(lib) = yieldable_plugin() else {
                out.failures
                    .push(format!("{name}.{export}: libyieldable_test.so not built"));
                continue;
            };
            let host =
                DynamicModule::load_spec(lib.to_str().unwrap()).expect("load yieldable_test");
            ctx.register_host_module(&host)
                .expect("register yieldable_test");
        }
        if let Err(e) = ctx.register_module(module.clone()) {
            out.failures
                .push(format!("{name}.{export}: link failed: {e}"));
            continue;
        }
        ctx.set_tier(if runner == Runner::Compiled {
            Tier::Jit
        } else {
            Tier::Interp
        });
        if runner == Runner::Hooked {
            // A fuel budget switches to the hooked copy of the loop, which
            // runs fused instructions one at a time: same results expected.
            ctx.set_fuel(Some(u64::MAX));
        }
        let func = ctx.function(export).expect("export present");
        let result = ctx.invoke(&func, &[]);
        let expect_fail = export.starts_with("fail_");
        match (expect_fail, result) {
            (false, Ok(_)) | (true, Err(_)) => out.passed += 1,
            (false, Err(e)) => out
                .failures
                .push(format!("{name}.{export}: unexpected failure: {e}")),
            (true, Ok(_)) => out
                .failures
                .push(format!("{name}.{export}: expected a failure, succeeded")),
        }
    }
}

#[test]
fn iree_vm_conformance_suite() {
    let Some(dir) = suite_dir() else {
        eprintln!("skipping: ../shared/conformance/iree-vm-tests not present");
        return;
    };
    let mut modules: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "vmfb"))
        .collect();
    modules.sort();
    assert_eq!(modules.len(), 30, "expected the 30 conformance modules");
    let mut out = Outcome {
        passed: 0,
        failures: Vec::new(),
    };
    let runners = [Runner::Plain, Runner::Hooked, Runner::Compiled];
    for runner in runners {
        for m in &modules {
            run_module(m, &mut out, runner);
        }
    }
    let total = out.passed + out.failures.len();
    eprintln!(
        "conformance: {}/{} function runs (304 x plain loop, hooked loop, compiled) behave as the convention says",
        out.passed, total
    );
    for f in &out.failures {
        eprintln!("  {f}");
    }
    assert!(
        out.failures.is_empty(),
        "{} conformance failures",
        out.failures.len()
    );
    assert_eq!(total, 3 * 304, "304 functions, plain, hooked and compiled");
}

/// The suite again from its `.vmasm` sources: `Module::from_file`
/// assembles them in memory, and every function must behave as it does
/// from the reference-assembled `.vmfb`.
#[test]
fn iree_vm_conformance_suite_from_assembly_source() {
    let Some(dir) = suite_dir() else {
        eprintln!("skipping: ../shared/conformance/iree-vm-tests not present");
        return;
    };
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "vmasm"))
        .collect();
    sources.sort();
    assert_eq!(sources.len(), 30, "expected the 30 conformance sources");
    let mut out = Outcome {
        passed: 0,
        failures: Vec::new(),
    };
    for m in &sources {
        run_module(m, &mut out, Runner::Plain);
    }
    eprintln!(
        "conformance from .vmasm: {}/{} functions behave as the convention says",
        out.passed,
        out.passed + out.failures.len()
    );
    for f in &out.failures {
        eprintln!("  {f}");
    }
    assert!(out.failures.is_empty(), "{} failures", out.failures.len());
    assert_eq!(out.passed, 304);
}

/// The same suite through the command line, one `irvm run` process per
/// function: exit 0 for functions that must succeed, exit 1 (with a message
/// on stderr) for `fail_*`, never a signal.
#[test]
fn iree_vm_conformance_suite_through_irvm_run() {
    let Some(dir) = suite_dir() else {
        eprintln!("skipping: ../shared/conformance/iree-vm-tests not present");
        return;
    };
    let mut jobs: Vec<(PathBuf, String)> = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "vmfb"))
        .collect();
    paths.sort();
    for p in &paths {
        let module = Module::from_file(p).expect("conformance module loads");
        for e in module.exports() {
            jobs.push((p.clone(), e.local_name.to_string()));
        }
    }
    assert_eq!(jobs.len(), 304);
    let yieldable = yieldable_plugin();
    let run_one = |(path, export): &(PathBuf, String)| -> Option<String> {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"));
        cmd.arg("run");
        if path.file_stem().is_some_and(|s| s == "async_ops") {
            let Some(lib) = yieldable.as_ref() else {
                return Some(format!(
                    "async_ops.{export}: libyieldable_test.so not built"
                ));
            };
            cmd.arg(format!("--module={}", lib.display()));
        }
        cmd.arg(format!("--module={}", path.display()))
            .arg(format!("--function={export}"));
        let out = cmd.output().expect("irvm runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want = if export.starts_with("fail_") { 1 } else { 0 };
        match out.status.code() {
            // Failures name the failing frame's function and offset.
            Some(c)
                if c == want && (c == 0 || (stderr.contains("[0] ") && stderr.contains("+0x"))) =>
            {
                None
            }
            other => Some(format!(
                "{}.{export}: exit {other:?} (want {want}): {stderr}",
                path.file_stem().unwrap().to_string_lossy()
            )),
        }
    };
    // Two workers: the suite is ~300 short processes.
    let (a, b) = jobs.split_at(jobs.len() / 2);
    let failures: Vec<String> = std::thread::scope(|s| {
        let h = s.spawn(|| a.iter().filter_map(run_one).collect::<Vec<_>>());
        let mut f: Vec<String> = b.iter().filter_map(run_one).collect();
        f.extend(h.join().expect("worker"));
        f
    });
    eprintln!(
        "conformance through irvm run: {}/{} functions behave as the convention says",
        jobs.len() - failures.len(),
        jobs.len()
    );
    for f in &failures {
        eprintln!("  {f}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
}
