//! Helpers shared by the integration tests of the `irvm` command line
//! (`tests/all`, `tests/hostile.rs`): where test files live, running the
//! `irvm` binary, bounded child processes, IREE's reference tools, and
//! printing generated instructions as VM assembly.
//!
//! `paths` and `instruction_text` use only the `irvm` library, so the
//! library's own tests (`vm/tests`) and the fuzz targets include those
//! files too (by `#[path]`).

#![expect(dead_code, reason = "each test binary uses part of it")]

pub mod bounded;
pub mod cli;
pub mod instruction_text;
pub mod paths;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding IREE's reference tools (`IREE_PEER_BIN`, else
/// `~/.cache/irvm-iree-peer/bin`, where `../shared/tools/setup-iree-peer`
/// installs them), if every one of `tools` is in it.
pub fn peer_bin(tools: &[&str]) -> Option<PathBuf> {
    let dir = std::env::var_os("IREE_PEER_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/irvm-iree-peer/bin"))
        })?;
    tools.iter().all(|t| dir.join(t).exists()).then_some(dir)
}

/// Says on stderr that a test is skipped because the reference tools are
/// missing.
pub fn report_missing_peer() {
    eprintln!("skipping: reference IREE tools not installed (run ../shared/tools/setup-iree-peer)");
}

/// Compiles `mlir` with the reference `iree-compile` in `peer` to a VMVX
/// module at `out` (the flags `tests/mlir`'s programs are compiled with);
/// panics when it fails.
pub fn compile_mlir(peer: &Path, mlir: &Path, out: &Path) {
    let status = Command::new(peer.join("iree-compile"))
        .args([
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=vmvx",
            "--iree-input-demote-f64-to-f32=false",
        ])
        .arg(mlir)
        .arg("-o")
        .arg(out)
        .status()
        .expect("run iree-compile");
    assert!(
        status.success(),
        "iree-compile failed on {}",
        mlir.display()
    );
}
