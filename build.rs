//! Regenerates the Rust bindings of `schema/bytecode_module_def.fbs` when a
//! `flatc` is available (the `FLATC` variable, or `flatc` on PATH).
//!
//! The generated file is committed, so a machine without flatc builds as is;
//! `.ci/check-schema` fails CI when the committed file is stale.

use std::path::{Path, PathBuf};
use std::process::Command;

const SCHEMA: &str = "schema/bytecode_module_def.fbs";
const GENERATED: &str = "schema/bytecode_module_def_generated.rs";

fn find_flatc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FLATC") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("flatc"))
        .find(|candidate| candidate.is_file())
}

fn main() {
    println!("cargo:rerun-if-changed={SCHEMA}");
    println!("cargo:rerun-if-env-changed=FLATC");
    let Some(flatc) = find_flatc() else {
        return; // use the committed bindings
    };
    let out_dir = match std::env::var_os("OUT_DIR") {
        Some(d) => PathBuf::from(d).join("flatc"),
        None => return,
    };
    let _ = std::fs::create_dir_all(&out_dir);
    let status = Command::new(&flatc)
        .arg("--rust")
        .arg("-o")
        .arg(&out_dir)
        .arg(SCHEMA)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            println!(
                "cargo:warning={} failed ({s}); keeping the committed {GENERATED}",
                flatc.display()
            );
            return;
        }
        Err(e) => {
            println!(
                "cargo:warning=could not run {}: {e}; keeping the committed {GENERATED}",
                flatc.display()
            );
            return;
        }
    }
    let fresh = match std::fs::read(out_dir.join("bytecode_module_def_generated.rs")) {
        Ok(b) => b,
        Err(e) => {
            println!("cargo:warning=flatc produced no bindings: {e}");
            return;
        }
    };
    let current = std::fs::read(Path::new(GENERATED)).unwrap_or_default();
    if fresh != current {
        if let Err(e) = std::fs::write(GENERATED, &fresh) {
            println!("cargo:warning=could not update {GENERATED}: {e}");
        }
    }
}
