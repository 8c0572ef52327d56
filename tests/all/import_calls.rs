//! Calls through imports linked to another bytecode module
//! (`tests/data/import_app.vmasm` calling `tests/data/import_leaf.vmasm`):
//! the interpreter makes them (`exec::call::enter_import`), going on in the
//! callee as a call within a module does, and enters a callee's compiled
//! code at its entry when that code runs a loop from there. Whatever the
//! engine, results, traps and their backtraces, and the instruction fuel
//! runs out at are the interpreter's; the results are iree-run-module's.

use irvm::{Context, Module, Tier, TypeRegistry, Value};

use crate::common::cli::irvm;
use crate::common::paths::data;
use crate::common::{peer_bin, report_missing_peer};

/// A context with the leaf module and the module that imports from it.
fn context(engine: Tier) -> Context {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(engine);
    for name in ["import_leaf.vmasm", "import_app.vmasm"] {
        let module = Module::from_file(data(name)).expect("assembles");
        ctx.register_module(module).expect("registers");
    }
    ctx
}

/// `app.name(args)`: its results, or its trap with its backtrace.
fn outcome(ctx: &mut Context, name: &str, args: &[Value]) -> String {
    let f = ctx.function(&format!("app.{name}")).expect("exported");
    match ctx.invoke(&f, args) {
        Ok(v) => format!("{v:?}"),
        Err(t) => format!("{t} ({} frames)", t.backtrace.len()),
    }
}

#[test]
fn calls_through_imports_give_the_interpreters_results_in_every_engine() {
    let cases: [(&str, Vec<Value>); 3] = [
        ("run", vec![Value::I32(50_000)]),
        ("sums", vec![Value::I32(30_000)]),
        ("divide", vec![Value::I32(30_000), Value::I32(-1)]),
    ];
    for (name, args) in cases {
        let want = outcome(&mut context(Tier::Interp), name, &args);
        assert!(want.starts_with('['), "{name}: {want}");
        for engine in [Tier::Jit, Tier::Auto] {
            let mut ctx = context(engine);
            // Twice: the second call finds the callees compiled.
            for round in 0..2 {
                assert_eq!(
                    outcome(&mut ctx, name, &args),
                    want,
                    "{name} on {engine}, round {round}"
                );
            }
        }
    }
}

#[test]
fn a_trap_in_an_imported_callee_has_the_interpreters_backtrace() {
    // `ratio` divides by zero at iteration `k`: early, and after 30,000
    // calls, when Auto has compiled what it compiles.
    for k in [2, 30_000] {
        let args = [Value::I32(100_000), Value::I32(k)];
        let want = outcome(&mut context(Tier::Interp), "divide", &args);
        assert!(
            want.contains("division by zero")
                && want.contains("leaf.ratio+")
                && want.contains("app.divide+")
                && want.contains("(2 frames)"),
            "{want}"
        );
        for engine in [Tier::Jit, Tier::Auto] {
            assert_eq!(
                outcome(&mut context(engine), "divide", &args),
                want,
                "k = {k} on {engine}"
            );
        }
    }
}

struct Watch;

impl irvm::Observer for Watch {
    fn before_instruction(&mut self, _: &irvm::ExecView<'_>) -> irvm::Control {
        irvm::Control::Continue
    }
}

/// `app.name(args)` with `fuel`: its result or trap, and the fuel left.
fn with_fuel(ctx: &mut Context, fuel: u64, name: &str, args: &[Value]) -> (String, Option<u64>) {
    ctx.set_fuel(Some(fuel));
    (outcome(ctx, name, args), ctx.fuel())
}

#[test]
fn fuel_runs_out_at_the_same_instruction_through_imports() {
    for name in ["run", "sums"] {
        // An observer runs the hooked loop: fuel one instruction at a
        // time, the reference for the others.
        let mut reference = context(Tier::Interp);
        reference.set_observer(Some(Box::new(Watch)));
        // The others warmed up without fuel, past Auto's threshold: the
        // callees are compiled.
        let mut others: Vec<(Tier, Context)> = [Tier::Interp, Tier::Jit, Tier::Auto]
            .into_iter()
            .map(|engine| {
                let mut ctx = context(engine);
                outcome(&mut ctx, name, &[Value::I32(21_000)]);
                (engine, ctx)
            })
            .collect();
        let args = [Value::I32(40)];
        let (done, left) = with_fuel(&mut reference, 1 << 30, name, &args);
        assert!(done.starts_with('['), "{name}: {done}");
        let cost = (1 << 30) - left.expect("fuel set");
        let mut fuels: Vec<u64> = (0..24).collect();
        fuels.extend([cost / 3, cost / 2 + 1, cost - 1, cost, cost + 1]);
        for fuel in fuels {
            let want = with_fuel(&mut reference, fuel, name, &args);
            for (engine, ctx) in &mut others {
                assert_eq!(
                    with_fuel(ctx, fuel, name, &args),
                    want,
                    "{name}: fuel {fuel} (the call costs {cost}) on {engine}"
                );
            }
        }
    }
}

#[test]
fn calls_through_imports_print_what_iree_run_module_prints() {
    let leaf = data("import_leaf.vmasm");
    let app = data("import_app.vmasm");
    let modules = [
        format!("--module={}", leaf.display()),
        format!("--module={}", app.display()),
    ];
    let cases = [
        ["--function=run", "--input=20000", ""],
        ["--function=sums", "--input=5000", ""],
        ["--function=divide", "--input=100", "--input=200"],
    ];
    let mut expected = Vec::new();
    for case in &cases {
        let mut args = vec!["run".to_string()];
        args.extend(modules.iter().cloned());
        args.extend(case.iter().filter(|a| !a.is_empty()).map(|a| a.to_string()));
        let want = irvm(&[args.clone(), vec!["--engine=interp".into()]].concat());
        assert_eq!(want.2, 0, "{case:?}: {want:?}");
        for engine in ["jit", "auto"] {
            let got = irvm(&[args.clone(), vec![format!("--engine={engine}")]].concat());
            assert_eq!(got, want, "{case:?} on {engine}");
        }
        expected.push(want.0);
    }
    let Some(peer) = peer_bin(&["iree-run-module"]) else {
        report_missing_peer();
        return;
    };
    // The reference reads bytecode only: the modules assembled first.
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut vmfbs = Vec::new();
    for (source, name) in [(&leaf, "leaf.vmfb"), (&app, "app.vmfb")] {
        let out = dir.path().join(name);
        let (_, err, code) = irvm(&[
            "as".as_ref(),
            source.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert_eq!(code, 0, "{err}");
        vmfbs.push(format!("--module={}", out.display()));
    }
    for (case, want) in cases.iter().zip(&expected) {
        let out = std::process::Command::new(peer.join("iree-run-module"))
            .args(&vmfbs)
            .args(case.iter().filter(|a| !a.is_empty()))
            .output()
            .expect("run iree-run-module");
        assert!(out.status.success(), "{case:?}: {out:?}");
        assert_eq!(&String::from_utf8_lossy(&out.stdout), want, "{case:?}");
    }
}
