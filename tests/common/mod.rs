//! Helpers shared by the integration tests that compare against IREE's
//! reference tools.

use std::path::PathBuf;

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
