//! `irvm check` (iree-check-module) and the `check` module: every check
//! function holding and failing for each element type family, on modules
//! iree-compile made for llvm-cpu and vmvx (`tests/data/check/*.mlir`,
//! recompiled by `tests/data/check/regenerate`), printed in gtest's format.

use crate::common::cli::irvm;
use crate::common::paths::data;

/// The two compiled forms of `tests/data/check/NAME.mlir`.
fn modules(name: &str) -> [String; 2] {
    ["llvm-cpu", "vmvx"].map(|target| {
        data(&format!("check/{name}.{target}.vmfb"))
            .display()
            .to_string()
    })
}

/// `text` with gtest's elapsed times (`(12 ms`) written `(N ms`.
fn without_times(text: &str) -> String {
    let re = regex::Regex::new(r"\(\d+ ms").expect("a valid pattern");
    re.replace_all(text, "(N ms").into_owned()
}

#[test]
fn every_check_that_holds_passes_on_both_targets_and_devices() {
    for module in modules("passing") {
        for device in ["local-task", "local-sync"] {
            let (out, err, code) = irvm(&[
                "check",
                &format!("--module={module}"),
                &format!("--device={device}"),
            ]);
            assert_eq!(code, 0, "{module} on {device}:\n{out}\n{err}");
            let passed: Vec<&str> = out
                .lines()
                .filter_map(|l| l.strip_prefix("[       OK ] module."))
                .map(|l| l.split(' ').next().unwrap_or(""))
                .collect();
            assert_eq!(
                passed,
                [
                    "true_of_nonzero",
                    "false_of_zero",
                    "all_true_ints",
                    "all_true_floats",
                    "all_true_of_a_view",
                    "all_true_unsigned",
                    "eq_ints",
                    "eq_floats_and_scalars",
                    "almost_eq_floats",
                    "almost_eq_f8",
                    "computed_sum_is_near_one",
                    "fresh_context_first",
                    "fresh_context_second",
                ],
                "{out}"
            );
            assert!(out.starts_with(
                "[==========] Running 13 tests from 1 test suite.\n\
                 [----------] Global test environment set-up.\n\
                 [----------] 13 tests from module\n\
                 [ RUN      ] module.true_of_nonzero\n"
            ));
            assert!(without_times(&out).ends_with(
                "[----------] 13 tests from module (N ms total)\n\n\
                 [----------] Global test environment tear-down\n\
                 [==========] 13 tests from 1 test suite ran. (N ms total)\n\
                 [  PASSED  ] 13 tests.\n"
            ));
            // `__`-prefixed exports are not tests.
            assert!(!out.contains("__internal"), "{out}");
        }
    }
}

#[test]
fn each_failing_check_is_reported_as_iree_check_module_reports_it() {
    let expected = std::fs::read_to_string(data("check/failing.expected"))
        .expect("tests/data/check/failing.expected");
    for module in modules("failing") {
        let (out, err, code) = irvm(&["check", &format!("--module={module}")]);
        assert_eq!(code, 1, "{module}:\n{out}\n{err}");
        assert_eq!(without_times(&out), expected, "{module}");
    }
}

#[test]
fn a_failed_check_fails_its_test_and_the_function_goes_on() {
    let [module, _] = modules("failing");
    let (out, _, _) = irvm(&["check", &format!("--module={module}")]);
    // Both failures of the first test are reported, each as gtest prints
    // a failed expectation; the test after it passes.
    let first = out
        .split("[ RUN      ] module.true_and_false_fail\n")
        .nth(1)
        .and_then(|rest| rest.split("[ RUN      ]").next())
        .unwrap_or("");
    assert_eq!(
        without_times(first),
        "unknown file: Failure\nValue of: operand\n  Actual: false\nExpected: true\n\
         Expected 0 to be nonzero.\n\
         unknown file: Failure\nValue of: operand\n  Actual: true\nExpected: false\n\
         Expected 3 to be zero.\n\
         [  FAILED  ] module.true_and_false_fail, where GetParam() = 0 (N ms)\n"
    );
    assert!(out.contains("[       OK ] module.passes_between_failures ("));
    assert!(out.contains("[       OK ] module.last_test_passes ("));
    // A trap ends its function (the check after it never runs) and fails
    // the test with the trap's text.
    assert!(out.contains(
        "Actual: (status), whose error code is NOT_FOUND: NOT_FOUND; the program gave up\n"
    ));
    assert!(out.ends_with("17 FAILED TESTS\nTest failed\nOK\n"), "{out}");
}

#[test]
fn expect_failure_turns_the_exit_status_around() {
    let [failing, _] = modules("failing");
    let (out, _, code) = irvm(&["check", &format!("--module={failing}"), "--expect_failure"]);
    assert_eq!(code, 0);
    assert!(
        out.ends_with("17 FAILED TESTS\nTest failed as expected\n"),
        "{out}"
    );
    let [_, passing] = modules("passing");
    let (out, _, code) = irvm(&[
        "check",
        &format!("--module={passing}"),
        "--expect_failure=true",
    ]);
    assert_eq!(code, 1);
    assert!(
        out.ends_with("[  PASSED  ] 13 tests.\nTest passed but expected failure\n"),
        "{out}"
    );
    let (_, _, code) = irvm(&[
        "check",
        &format!("--module={passing}"),
        "--expect_failure=false",
    ]);
    assert_eq!(code, 0);
}

#[test]
fn disabled_tests_are_counted_and_not_run() {
    let [module, _] = modules("misc");
    let (out, _, code) = irvm(&["check", &format!("--module={module}")]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        without_times(&out),
        "[==========] Running 1 test from 1 test suite.\n\
         [----------] Global test environment set-up.\n\
         [----------] 1 test from module\n\
         [ RUN      ] module.runs\n\
         [       OK ] module.runs (N ms)\n\
         [----------] 1 test from module (N ms total)\n\n\
         [----------] Global test environment tear-down\n\
         [==========] 1 test from 1 test suite ran. (N ms total)\n\
         [  PASSED  ] 1 test.\n\n  YOU HAVE 1 DISABLED TEST\n\n"
    );
}

#[test]
fn an_export_taking_arguments_is_refused_before_any_test_runs() {
    let [module, _] = modules("with_arguments");
    let (out, _, code) = irvm(&["check", &format!("--module={module}")]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "Test failed\nINVALID_ARGUMENT; expected function with no inputs or outputs, but \
         export 'takes_one' has signature '0i_v'\n"
    );
}

#[test]
fn a_module_that_cannot_be_loaded_fails_the_run() {
    let (out, _, code) = irvm(&["check", "--module=/nonexistent/tests.vmfb"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Test failed\nloading module '/nonexistent/tests.vmfb'"),
        "{out}"
    );
    let (out, err, code) = irvm(&[
        "check",
        "--module=/nonexistent/tests.vmfb",
        "--expect_failure",
    ]);
    assert_eq!(code, 0);
    assert_eq!(out, "Test failed as expected\n");
    assert!(err.contains("/nonexistent/tests.vmfb"), "{err}");
}

#[test]
fn a_module_read_from_stdin_is_checked() {
    let [module, _] = modules("misc");
    let (out, _, code) =
        crate::common::cli::irvm_with_stdin(&["check", "--module=-"], Some(module.as_str()));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("[       OK ] module.runs ("), "{out}");
}

#[test]
fn irvm_run_leaves_the_check_module_unresolved() {
    // As iree-run-module: `check` is an optional import no one provides,
    // so the failing check is skipped.
    let [module, _] = modules("failing");
    let (out, err, code) = irvm(&[
        "run",
        &format!("--module={module}"),
        "--function=true_and_false_fail",
    ]);
    assert_eq!(
        (out.as_str(), code),
        ("EXEC @true_and_false_fail\n", 0),
        "{err}"
    );
}

#[test]
fn limits_bound_each_test_and_a_context_that_fails_fails_only_its_test() {
    let [_, module] = modules("passing");
    // One instruction of fuel: every test's `__init` runs out, so every
    // test fails with the status, and the run goes on to the next.
    let (out, _, code) = irvm(&["check", &format!("--module={module}"), "--fuel=1"]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "[ RUN      ] module.true_of_nonzero\nunknown file: Failure\n\
         Value of: ::iree::internal::ConsumeForTest(status)\nExpected: error code OK\n  \
         Actual: (status), whose error code is RESOURCE_EXHAUSTED: module 'module' failed to \
         initialize: RESOURCE_EXHAUSTED; fuel exhausted"
        ),
        "{out}"
    );
    assert!(
        out.contains("[  FAILED  ] 13 tests, listed below:\n"),
        "{out}"
    );
    // Enough for any one test (each needs over 350 instructions and at
    // most 550, `__init` and kernels included), not for the thirteen
    // together: each test's context has its own fuel.
    let (out, _, code) = irvm(&["check", &format!("--module={module}"), "--fuel=1000"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn gtest_flags_are_a_usage_error() {
    let [module, _] = modules("misc");
    let (_, err, code) = irvm(&[
        "check",
        &format!("--module={module}"),
        "--gtest_filter=runs",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--gtest_filter"), "{err}");
}

#[test]
fn a_module_failing_verification_fails_the_run_before_any_test() {
    // IREE's verifier refuses the module when iree-check-module loads it
    // (`Test failed` and the status, no test run); irvm verifies when it
    // links, which before this made every test fail with the same status.
    for module in modules("unverifiable") {
        let (out, _, code) = irvm(&["check", &format!("--module={module}")]);
        assert_eq!(code, 1);
        assert_eq!(
            out,
            "Test failed\nINVALID_ARGUMENT; module 'module', function \
             'calls_with_too_few_arguments': function 1 at bytecode offset 351: call \
             arguments: 1 values given, calling convention expects 2\n"
        );
        let (out, err, code) = irvm(&["check", &format!("--module={module}"), "--expect_failure"]);
        assert_eq!((out.as_str(), code), ("Test failed as expected\n", 0));
        assert!(err.contains("calls_with_too_few_arguments"), "{err}");
    }
}
