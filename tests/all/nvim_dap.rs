//! `irvm dap` under Neovim's nvim-dap, headless, with the README's
//! configuration: a breakpoint on a line of `fib.mlir` stops the session
//! there (`tests/nvim-dap/session.lua`).
//!
//! nvim-dap is published on GitHub only (no npm, PyPI or Debian package),
//! which CI cannot reach: the test runs where `IRVM_NVIM_DAP` names a
//! checkout of it, and skips with a message elsewhere.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::paths::data;

/// The Neovim to run: `IRVM_NVIM`, else `nvim` on PATH; with its version
/// (nvim-dap supports 0.11 and later).
fn neovim() -> Result<PathBuf, String> {
    let nvim = std::env::var_os("IRVM_NVIM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("nvim"));
    let out = Command::new(&nvim)
        .arg("--version")
        .output()
        .map_err(|e| format!("no Neovim ({}: {e}; set IRVM_NVIM)", nvim.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.lines().next().unwrap_or("").to_string();
    let minor = version
        .strip_prefix("NVIM v0.")
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    match minor {
        Some(m) if m >= 11 => Ok(nvim),
        _ => Err(format!(
            "{} is `{version}`; nvim-dap needs Neovim 0.11 or later (set IRVM_NVIM)",
            nvim.display()
        )),
    }
}

#[test]
fn a_breakpoint_through_nvim_dap_stops_the_session_on_its_line() {
    let Some(plugin) = std::env::var_os("IRVM_NVIM_DAP").map(PathBuf::from) else {
        eprintln!(
            "skipping: IRVM_NVIM_DAP does not name an nvim-dap checkout (it is on GitHub \
             only: github.com/mfussenegger/nvim-dap)"
        );
        return;
    };
    assert!(
        plugin.join("lua/dap.lua").is_file(),
        "IRVM_NVIM_DAP={} has no lua/dap.lua",
        plugin.display()
    );
    let nvim = match neovim() {
        Ok(n) => n,
        Err(why) => {
            eprintln!("skipping: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim-dap/session.lua");
    let out = Command::new(&nvim)
        .args(["--headless", "--clean", "--cmd"])
        .arg(format!("set rtp+={}", plugin.display()))
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("IRVM", env!("CARGO_BIN_EXE_irvm"))
        .env(
            "IRVM_TEST_DATA",
            data("fib.mlir").parent().expect("tests/data"),
        )
        .env("REPORT", &report)
        .output()
        .expect("nvim runs");
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| {
        panic!(
            "no report from the session ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let record: Value = serde_json::from_str(&text).expect("the report is JSON");
    eprintln!("in nvim-dap: {record}");
    assert_eq!(record["errors"], serde_json::json!([]), "{record}");
    assert_eq!(record["filetype"], "mlir", "{record}");
    // fib(6) runs the loop's body, and so the breakpoint's line, 6 times.
    assert_eq!(
        record["stops"],
        serde_json::json!(vec!["breakpoint"; 6]),
        "{record}"
    );
    let frames = record["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 6, "{record}");
    for frame in frames {
        assert_eq!(frame["name"], "module.fib", "{record}");
        assert_eq!(frame["line"], 12, "{record}");
        assert!(
            frame["source"]
                .as_str()
                .is_some_and(|p| p.ends_with("tests/data/fib.mlir")),
            "{record}"
        );
    }
    assert_eq!(
        record["output"],
        serde_json::json!(["EXEC @fib\n", "result[0]: i32=8\n"]),
        "{record}"
    );
    assert_eq!(record["exitCode"], 0, "{record}");
    assert_eq!(record["terminated"], true, "{record}");
}
