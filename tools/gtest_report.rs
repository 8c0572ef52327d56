//! gtest's console output (`PrettyUnitTestResultPrinter`), as
//! iree-check-module prints it: one test suite (the module), one test per
//! exported function, the banner lines, a failure's text as it happens,
//! and the summary listing the failed tests.

use std::time::{Duration, Instant};

/// `n test`/`n tests`.
fn tests(n: usize) -> String {
    format!("{n} test{}", if n == 1 { "" } else { "s" })
}

/// `n test suite`/`n test suites`.
fn suites(n: usize) -> String {
    format!("{n} test suite{}", if n == 1 { "" } else { "s" })
}

/// Whole milliseconds, as gtest prints elapsed times.
fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// One test: an exported function of the module.
pub struct TestCase {
    /// The function's name.
    pub name: String,
    /// Its export ordinal (gtest's value parameter: `GetParam() = N`).
    pub ordinal: usize,
}

/// The report of one run of every test of a suite, printed as it goes.
pub struct Report {
    suite: String,
    to_run: usize,
    disabled: usize,
    started: Instant,
    suite_started: Instant,
    test_started: Instant,
    passed: usize,
    failed: Vec<String>,
}

impl Report {
    /// Prints the banner of a run of `to_run` tests of suite `suite`
    /// (`disabled` more are not run: gtest's `DISABLED_` prefix).
    pub fn begin(suite: &str, to_run: usize, disabled: usize) -> Report {
        let suite_count = usize::from(to_run > 0);
        outln!(
            "[==========] Running {} from {}.",
            tests(to_run),
            suites(suite_count)
        );
        outln!("[----------] Global test environment set-up.");
        if to_run > 0 {
            outln!("[----------] {} from {suite}", tests(to_run));
        }
        let now = Instant::now();
        Report {
            suite: suite.to_string(),
            to_run,
            disabled,
            started: now,
            suite_started: now,
            test_started: now,
            passed: 0,
            failed: Vec::new(),
        }
    }

    /// `[ RUN      ] suite.test`.
    pub fn start_test(&mut self, test: &TestCase) {
        outln!("[ RUN      ] {}.{}", self.suite, test.name);
        self.test_started = Instant::now();
    }

    /// A failure inside the running test, as gtest prints a test part
    /// result: the location line, then the message. irvm has no C++
    /// source location to give, so the location is gtest's
    /// `unknown file`.
    pub fn failure(message: &str) {
        outln!("unknown file: Failure\n{message}");
    }

    /// `[       OK ] suite.test (N ms)` or `[  FAILED  ] suite.test, where
    /// GetParam() = ORDINAL (N ms)`.
    pub fn end_test(&mut self, test: &TestCase, passed: bool) {
        let elapsed = ms(self.test_started.elapsed());
        if passed {
            self.passed += 1;
            outln!("[       OK ] {}.{} ({elapsed} ms)", self.suite, test.name);
        } else {
            let line = format!(
                "{}.{}, where GetParam() = {}",
                self.suite, test.name, test.ordinal
            );
            outln!("[  FAILED  ] {line} ({elapsed} ms)");
            self.failed.push(line);
        }
    }

    /// The summary; returns whether every test passed (gtest's exit
    /// status 0).
    pub fn finish(self) -> bool {
        if self.to_run > 0 {
            outln!(
                "[----------] {} from {} ({} ms total)\n",
                tests(self.to_run),
                self.suite,
                ms(self.suite_started.elapsed())
            );
        }
        outln!("[----------] Global test environment tear-down");
        outln!(
            "[==========] {} from {} ran. ({} ms total)",
            tests(self.to_run),
            suites(usize::from(self.to_run > 0)),
            ms(self.started.elapsed())
        );
        outln!("[  PASSED  ] {}.", tests(self.passed));
        let passed = self.failed.is_empty();
        if !passed {
            outln!("[  FAILED  ] {}, listed below:", tests(self.failed.len()));
            for line in &self.failed {
                outln!("[  FAILED  ] {line}");
            }
            let n = self.failed.len();
            outln!("\n{n:2} FAILED {}", if n == 1 { "TEST" } else { "TESTS" });
        }
        if self.disabled > 0 {
            if passed {
                outln!();
            }
            outln!(
                "  YOU HAVE {} DISABLED {}\n",
                self.disabled,
                if self.disabled == 1 { "TEST" } else { "TESTS" }
            );
        }
        passed
    }
}
