//! The benchmark corpus (`benchmarks/corpus/`): every program listed in
//! `programs.txt` has its source and compiled module, and `irvm run` prints
//! exactly what IREE's `iree-run-module` prints for it (at 1/10000 of the
//! benchmark size, so the suite stays quick), from both interpreter loops:
//! the plain one (with the fused instructions it runs in place) and the
//! hooked one that `--fuel` selects, which runs every instruction alone.
//!
//! The comparison needs the reference tools (`../shared/tools/setup-iree-peer`
//! installs them into `~/.cache/irvm-iree-peer/bin`, or set `IREE_PEER_BIN`)
//! and is skipped with a message when they are absent.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/corpus")
}

/// `(name, benchmark input)` for each line of `programs.txt`.
fn programs() -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(corpus_dir().join("programs.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let name = parts.next().unwrap().to_string();
            let input = parts.next().unwrap().parse().unwrap();
            (name, input)
        })
        .collect()
}

#[test]
fn corpus_has_at_least_twelve_compiled_programs() {
    let programs = programs();
    assert!(programs.len() >= 12, "{} programs", programs.len());
    for (name, _) in &programs {
        for ext in ["mlir", "vmfb"] {
            let path = corpus_dir().join(format!("{name}.{ext}"));
            assert!(path.is_file(), "missing {}", path.display());
        }
    }
}

#[test]
fn corpus_programs_match_iree_run_module() {
    let Some(peer) = common::peer_bin(&["iree-run-module"]) else {
        common::report_missing_peer();
        return;
    };
    for (name, input) in programs() {
        let module = corpus_dir().join(format!("{name}.vmfb"));
        let args = [
            format!("--module={}", module.display()),
            format!("--function={name}"),
            format!("--input={}", (input / 10000).max(1)),
        ];
        let ours = Command::new(env!("CARGO_BIN_EXE_irvm"))
            .arg("run")
            .args(&args)
            .output()
            .unwrap();
        let hooked = Command::new(env!("CARGO_BIN_EXE_irvm"))
            .arg("run")
            .args(&args)
            .arg("--fuel=1000000000000")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&hooked.stdout),
            "{name}: plain and hooked loops differ"
        );
        let theirs = Command::new(peer.join("iree-run-module"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            ours.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_eq!(ours.status.code(), theirs.status.code(), "{name}");
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "{name}"
        );
    }
}
