//! The VS Code extension in a real VS Code: code-server (VS Code's server
//! build, from npm) with `editors/vscode` and a test driver extension
//! installed, opened by headless Chromium; the driver sets a breakpoint in
//! `fib.mlir`, starts the workspace's `irvm` launch configuration through
//! the VS Code API and records the session (`tests/vscode-session`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::paths::data;

/// The code-server script: `IRVM_CODE_SERVER`, else the one `npm ci` puts
/// in `tests/vscode-session` (`.ci/run` does with
/// `IRVM_VSCODE_TEST=1`).
fn code_server(suite: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("IRVM_CODE_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| suite.join("node_modules/.bin/code-server"));
    path.exists().then_some(path)
}

#[test]
fn a_breakpoint_in_real_vs_code_stops_the_session_on_its_line() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vscode-session");
    let Some(server) = code_server(&suite) else {
        eprintln!(
            "skipping: no code-server (run `npm ci` in tests/vscode-session, or set \
             IRVM_CODE_SERVER; .ci/run does with IRVM_VSCODE_TEST=1)"
        );
        return;
    };
    let node_works = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_works {
        eprintln!("skipping: no node on PATH (code-server and the test's driver run on it)");
        return;
    }
    let chromium = std::env::var_os("IRVM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.exists() {
        eprintln!(
            "skipping: no Chromium at {} (set IRVM_CHROMIUM)",
            chromium.display()
        );
        return;
    }
    let work = tempfile::tempdir().expect("a temporary directory");
    let out = Command::new("node")
        .arg(suite.join("run.js"))
        .env("CODE_SERVER", &server)
        .env("IRVM", env!("CARGO_BIN_EXE_irvm"))
        .env("CHROMIUM", &chromium)
        .env("IRVM_TEST_DATA", data(""))
        .env("WORK", work.path())
        .output()
        .expect("node runs");
    let logs = || {
        let read = |name: &str| std::fs::read_to_string(work.path().join(name)).unwrap_or_default();
        format!(
            "stderr: {}\ncode-server log: {}",
            String::from_utf8_lossy(&out.stderr),
            read("code-server.log")
        )
    };
    assert!(out.status.success(), "the VS Code run failed: {}", logs());
    let record: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the driver's record is not JSON ({e}): {}", logs()));
    eprintln!("in VS Code: {record}");
    assert_eq!(record["errors"], serde_json::json!([]), "{record}");
    assert_eq!(record["extensionFound"], true, "{record}");
    assert_eq!(record["launched"], true, "{record}");
    // fib.mlir is in the extension's language, and the editor's
    // breakpoint command set a breakpoint there.
    assert_eq!(record["languageId"], "mlir", "{record}");
    assert_eq!(
        record["breakpointLines"],
        serde_json::json!([12]),
        "{record}"
    );
    // VS Code says "read error" when the adapter's stdout closes: only
    // its exit after the session.
    for e in record["adapterErrors"].as_array().expect("adapter errors") {
        assert_eq!(
            *e,
            serde_json::json!({"error": "read error", "after": "terminated"}),
            "{record}"
        );
    }
    // fib(6) runs the loop's body, and so the breakpoint's line, 6 times.
    let stops = record["stops"].as_array().expect("stops");
    assert_eq!(stops.len(), 6, "{record}");
    assert_eq!(
        record["frames"].as_array().map(Vec::len),
        Some(6),
        "{record}"
    );
    assert!(
        stops.iter().all(|s| s["reason"] == "breakpoint"),
        "{record}"
    );
    for frame in record["frames"].as_array().expect("frames") {
        assert_eq!(frame["name"], "module.fib", "{record}");
        assert_eq!(frame["line"], 12, "{record}");
        assert!(
            frame["source"]
                .as_str()
                .is_some_and(|p| p.ends_with("fib.mlir")),
            "{record}"
        );
    }
    assert!(
        !record["stackItems"]
            .as_array()
            .expect("stack items")
            .is_empty(),
        "VS Code never focused a frame: {record}"
    );
    let events = record["events"].as_array().expect("events");
    assert!(events.iter().any(|e| e == "exited"), "{record}");
    assert!(events.iter().any(|e| e == "terminated"), "{record}");
    assert_eq!(record["ended"], true, "{record}");
}
