//! Build script: keeps the committed FlatBuffer bindings in sync with the
//! schema when a `flatc` is available.
//!
//! `schema/bytecode_module_def_generated.rs` is committed, so a plain
//! `cargo build` needs no flatc. When `FLATC` is set, or `flatc` is on `PATH`,
//! the bindings are regenerated and the file is rewritten only if its content
//! changed. Any flatc problem becomes a cargo warning, never a build failure.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCHEMA: &str = "../schema/bytecode_module_def.fbs";
const GENERATED: &str = "../schema/bytecode_module_def_generated.rs";
const GENERATED_NAME: &str = "bytecode_module_def_generated.rs";
/// The flatc release whose output is committed; other versions would churn it.
const EXPECTED_FLATC_VERSION: &str = "25.12.19";

fn main() {
    println!("cargo:rerun-if-changed={SCHEMA}");
    println!("cargo:rerun-if-env-changed=FLATC");
    println!("cargo:rerun-if-changed=../build.rs");

    let Some(flatc) = find_flatc() else {
        return;
    };
    if let Err(message) = regenerate(&flatc) {
        println!("cargo:warning=schema bindings not regenerated: {message}");
    }
}

/// `FLATC` wins; otherwise the first `flatc` found on `PATH`.
fn find_flatc() -> Option<PathBuf> {
    if let Some(explicit) = env::var_os("FLATC") {
        if !explicit.is_empty() {
            return Some(PathBuf::from(explicit));
        }
    }
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join("flatc"))
        .find(|candidate| candidate.is_file())
}

fn regenerate(flatc: &Path) -> Result<(), String> {
    let version = Command::new(flatc)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", flatc.display()))?;
    let version = String::from_utf8_lossy(&version.stdout);
    if !version.contains(EXPECTED_FLATC_VERSION) {
        return Err(format!(
            "{} reports `{}`, expected flatc {EXPECTED_FLATC_VERSION}",
            flatc.display(),
            version.trim()
        ));
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let gen_dir = out_dir.join("flatc");
    fs::create_dir_all(&gen_dir)
        .map_err(|e| format!("cannot create {}: {e}", gen_dir.display()))?;
    let output = Command::new(flatc)
        .arg("--rust")
        .arg("-o")
        .arg(&gen_dir)
        .arg(SCHEMA)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", flatc.display()))?;
    if !output.status.success() {
        return Err(format!(
            "flatc failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }

    let fresh_path = gen_dir.join(GENERATED_NAME);
    let fresh =
        fs::read(&fresh_path).map_err(|e| format!("cannot read {}: {e}", fresh_path.display()))?;
    let committed = fs::read(GENERATED).unwrap_or_default();
    if fresh != committed {
        fs::write(GENERATED, &fresh).map_err(|e| format!("cannot write {GENERATED}: {e}"))?;
        println!("cargo:warning=regenerated {GENERATED} from {SCHEMA}");
    }
    Ok(())
}
