//! `irvm check`: run every test function of a module with IREE's `check`
//! module registered, as iree-check-module does, printing gtest's output.
//!
//! The last `--module` is the module under test: each of its exported
//! functions (in export order, those starting with `__` or holding `$`
//! left out) is a test of the suite named after the module, and must take
//! and return nothing. Each test runs in a fresh context (the `check`
//! module, the `hal` module and the other `--module`s registered anew, their
//! `__init`s run), as iree-check-module's `SetUp` makes one per test. A
//! check that does not hold fails its test and the function goes on (gtest's
//! `EXPECT_*`); a trap ends the function and fails the test with the
//! trap's text. Exit status 0 when every test passed, 1 otherwise, and the
//! other way round with `--expect_failure`.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use irvm::dynamic::{DynamicModule, DynamicModuleSpec};
use irvm::{Context, Module, TypeRegistry};

use crate::gtest_report::{Report, TestCase};

/// Arguments of `irvm check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// A module to load: a `.vmfb` file (`-`: read from stdin), or a
    /// dynamic host module `lib.so[@entry][?key=value&...]`. Repeat to load
    /// several, in order; the tests are the exported functions of the last,
    /// which must be a bytecode module.
    #[arg(long = "module")]
    modules: Vec<String>,
    /// The run is expected to fail: exit 0 ("Test failed as expected")
    /// when a test fails or the module cannot be run, 1 ("Test passed but
    /// expected failure") when every test passes.
    #[arg(
        long = "expect_failure",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        default_value = "false"
    )]
    expect_failure: bool,
    #[command(flatten)]
    device: crate::tensor_io::DeviceArgs,
    #[command(flatten)]
    queries: crate::hal_query::HalQueryArgs,
    #[command(flatten)]
    parameters: crate::parameters::ParameterArgs,
    /// Limits, applied to each test's context (`--timeout` bounds each
    /// test: its context's modules, their `__init`s and the call).
    #[command(flatten)]
    limits: crate::cmd_run::LimitArgs,
}

/// A module given with `--module`, loaded once and registered in every
/// test's context.
enum Loaded {
    Bytecode(Module),
    Dynamic(DynamicModule),
}

/// Runs `irvm check`.
pub fn main(args: CheckArgs) -> ExitCode {
    if let Some(code) = args.queries.answer("check") {
        return code;
    }
    // gtest's exit status, or why no test could run (iree-check-module's
    // status from before `RUN_ALL_TESTS`).
    let outcome = run(&args);
    let all_passed = matches!(outcome, Ok(true));
    if args.expect_failure {
        if all_passed {
            outln!("Test passed but expected failure");
            return ExitCode::FAILURE;
        }
        if let Err(status) = &outcome {
            eprintln!("irvm check: {status}");
        }
        outln!("Test failed as expected");
        return ExitCode::SUCCESS;
    }
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        // As iree-check-module: the status is OK when tests failed.
        Ok(false) => {
            outln!("Test failed\nOK");
            ExitCode::FAILURE
        }
        Err(status) => {
            outln!("Test failed\n{status}");
            ExitCode::FAILURE
        }
    }
}

/// Loads the modules, runs every test; `Ok(true)` when all passed.
fn run(args: &CheckArgs) -> Result<bool, String> {
    crate::parameters::set(&args.parameters);
    crate::tensor_io::set_device(&args.device, false, false, args.limits.engine)?;
    let loaded = load(&args.modules, &args.limits)?;
    let Some(Loaded::Bytecode(main)) = loaded.last() else {
        return Err(
            "INVALID_ARGUMENT; the last --module must be a bytecode module: its exported \
             functions are the tests"
                .into(),
        );
    };
    let suite = main.name().to_string();
    let cases = test_cases(main)?;
    let disabled = |name: &str| name.starts_with("DISABLED_") || suite.starts_with("DISABLED_");
    let (to_run, skipped): (Vec<TestCase>, Vec<TestCase>) =
        cases.into_iter().partition(|c| !disabled(&c.name));
    let failures = Arc::new(AtomicUsize::new(0));
    let sink_count = failures.clone();
    let check = irvm_check::check_module(Arc::new(move |f: &irvm_check::CheckFailure| {
        sink_count.fetch_add(1, Ordering::Relaxed);
        Report::failure(&f.message);
    }))
    .map_err(|e| format!("INTERNAL; building the check module: {e}"))?;
    verify_modules(&loaded, &check, &args.limits)?;
    let mut report = Report::begin(&suite, to_run.len(), skipped.len());
    for case in &to_run {
        report.start_test(case);
        failures.store(0, Ordering::Relaxed);
        let ran = run_test(&loaded, &check, &args.limits, &suite, &case.name);
        if let Err(text) = &ran {
            Report::failure(text);
        }
        let passed = ran.is_ok() && failures.load(Ordering::Relaxed) == 0;
        report.end_test(case, passed);
    }
    Ok(report.finish())
}

/// Reads every `--module` once (their contexts are made per test).
fn load(specs: &[String], limits: &crate::cmd_run::LimitArgs) -> Result<Vec<Loaded>, String> {
    if specs.is_empty() {
        return Err(
            "INVALID_ARGUMENT; no user module specified; use --module=file.vmfb to load \
             from a file or --module=- to load from stdin"
                .into(),
        );
    }
    if specs.iter().filter(|m| *m == "-").count() > 1 {
        return Err(
            "INVALID_ARGUMENT; --module=- is given more than once: stdin holds one module".into(),
        );
    }
    let mut loaded = Vec::with_capacity(specs.len());
    for spec in specs {
        loaded.push(if DynamicModuleSpec::looks_dynamic(spec) {
            Loaded::Dynamic(DynamicModule::load_spec(spec).map_err(|e| e.to_string())?)
        } else if spec == "-" {
            let budget = limits.max_memory_bytes.unwrap_or(u64::MAX);
            Loaded::Bytecode(crate::cmd_run::module_from_stdin(None, budget)?)
        } else {
            Loaded::Bytecode(
                Module::from_file(spec).map_err(|e| crate::cmd_run::explain_load_error(spec, e))?,
            )
        });
    }
    Ok(loaded)
}

/// The tests of `module`: its exported functions in export order, less
/// the internal ones (`__` prefix, `$` inside); INVALID_ARGUMENT for one
/// that takes or returns values, as iree-check-module refuses it before
/// running any test.
fn test_cases(module: &Module) -> Result<Vec<TestCase>, String> {
    let mut cases = Vec::new();
    for (ordinal, export) in module.exports().into_iter().enumerate() {
        let name = export.local_name;
        if name.starts_with("__") || name.contains('$') {
            continue;
        }
        let cconv = module
            .function_signature(export.internal_ordinal)
            .and_then(|s| s.calling_convention)
            .unwrap_or("0v_v");
        let some = |kinds: &[irvm::loader::ValueKind]| {
            kinds.iter().any(|k| *k != irvm::loader::ValueKind::Void)
        };
        let takes_or_returns = irvm::loader::CallingConvention::parse(cconv)
            .map(|c| some(&c.args) || some(&c.results))
            .unwrap_or(true);
        if takes_or_returns {
            return Err(format!(
                "INVALID_ARGUMENT; expected function with no inputs or outputs, but export \
                 '{name}' has signature '{cconv}'"
            ));
        }
        cases.push(TestCase {
            name: name.to_string(),
            ordinal,
        });
    }
    Ok(cases)
}

/// Runs test `name` of module `suite` in a fresh context: `Err` with the
/// failure's text (gtest's, for the failed status) when the context
/// cannot be made or the call traps.
fn run_test(
    loaded: &[Loaded],
    check: &irvm::NativeModule<()>,
    limits: &crate::cmd_run::LimitArgs,
    suite: &str,
    name: &str,
) -> Result<(), String> {
    let status_failure = |code: String, text: String| {
        format!(
            "Value of: ::iree::internal::ConsumeForTest(status)\nExpected: error code OK\n  \
             Actual: (status), whose error code is {code}: {text}"
        )
    };
    let mut ctx =
        test_context(loaded, check, limits).map_err(|(code, text)| status_failure(code, text))?;
    let func = ctx
        .function(&format!("{suite}.{name}"))
        .map_err(|e| status_failure("NOT_FOUND".into(), e.to_string()))?;
    ctx.invoke(&func, &[])
        .map(|_| ())
        .map_err(|trap| status_failure(trap.code.to_string(), trap.to_string()))
}

/// A test's context ([`link_modules`], every module's `__init` run), or
/// why not: the status code's name and the text.
fn test_context(
    loaded: &[Loaded],
    check: &irvm::NativeModule<()>,
    limits: &crate::cmd_run::LimitArgs,
) -> Result<Context, (String, String)> {
    link_modules(loaded, check, limits, |ctx, module| {
        ctx.register_module(module)
    })
    .map_err(|failure| match failure {
        LinkFailure::Link(e) => status_of_link(e),
        LinkFailure::Text(text) => status_of_text(text),
    })
}

/// Links every module once in a context whose `__init`s never run, so
/// that a function failing verification fails the run before any test
/// (`INVALID_ARGUMENT; module 'M', function 'F': ...`), as IREE's bytecode
/// verifier refuses the module when iree-check-module loads it; irvm
/// verifies when it links a module. Another failure to link is left to
/// each test's context, which reports it as that test's failure.
fn verify_modules(
    loaded: &[Loaded],
    check: &irvm::NativeModule<()>,
    limits: &crate::cmd_run::LimitArgs,
) -> Result<(), String> {
    let verified = link_modules(loaded, check, limits, |ctx, module| {
        ctx.register_module_deferring_init(module).map(|_| ())
    });
    match verified {
        Err(LinkFailure::Link(e @ irvm::errors::LinkError::Verify { .. })) => {
            Err(format!("INVALID_ARGUMENT; {e}"))
        }
        _ => Ok(()),
    }
}

/// Why a context could not be made: linking a module failed, or adding
/// the modules a module needs (`hal`, `io_parameters`, ...) or applying the
/// limits did (a `CODE; ...` text).
enum LinkFailure {
    Link(irvm::errors::LinkError),
    Text(String),
}

/// A context holding the `check` module, then every loaded module in
/// order (with the `hal`, inline HAL and `io_parameters` modules before
/// the first that needs them, as `irvm run` adds them), its limits set
/// first; each bytecode module registered by `register`.
fn link_modules(
    loaded: &[Loaded],
    check: &irvm::NativeModule<()>,
    limits: &crate::cmd_run::LimitArgs,
    register: impl Fn(&mut Context, Module) -> Result<(), irvm::errors::LinkError>,
) -> Result<Context, LinkFailure> {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    limits.apply(&mut ctx).map_err(LinkFailure::Text)?;
    ctx.register_host_module(check).map_err(LinkFailure::Link)?;
    for module in loaded {
        match module {
            Loaded::Dynamic(m) => ctx.register_host_module(m).map_err(LinkFailure::Link)?,
            Loaded::Bytecode(m) => {
                if irvm_hal::module_needs_hal(m) {
                    crate::tensor_io::ensure_hal(&mut ctx).map_err(LinkFailure::Text)?;
                }
                if irvm_hal::module_needs_inline_hal(m) {
                    crate::tensor_io::ensure_inline_hal(&mut ctx).map_err(LinkFailure::Text)?;
                }
                if crate::parameters::needs_io_parameters(m) {
                    crate::parameters::ensure_io_parameters(&mut ctx).map_err(LinkFailure::Text)?;
                }
                register(&mut ctx, m.clone()).map_err(LinkFailure::Link)?;
            }
        }
    }
    Ok(ctx)
}

/// A linking failure's status code (the trap's, for a failed `__init`) and
/// text.
fn status_of_link(e: irvm::errors::LinkError) -> (String, String) {
    match &e {
        irvm::errors::LinkError::Init { trap, .. }
        | irvm::errors::LinkError::ModuleMemory { trap, .. } => {
            (trap.code.to_string(), e.to_string())
        }
        _ => status_of_text(e.to_string()),
    }
}

/// The status code a message `CODE; ...` starts with (`UNKNOWN` when it
/// starts with none), and the message.
fn status_of_text(text: String) -> (String, String) {
    let code = text
        .split_once(';')
        .map(|(c, _)| c)
        .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
        .unwrap_or("UNKNOWN")
        .to_string();
    (code, text)
}
