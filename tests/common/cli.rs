//! Running the `irvm` binary under test (`CARGO_BIN_EXE_irvm`) and finding
//! what the same build put beside it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `irvm` binary cargo built for these tests.
pub fn irvm_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_irvm"))
}

/// `irvm ARGS`: stdout, stderr and the exit code (-1 when a signal ended
/// it).
pub fn irvm<S: AsRef<OsStr>>(args: &[S]) -> (String, String, i32) {
    irvm_with_stdin(args, None)
}

/// `irvm ARGS` with stdin read from the file `stdin` when given: stdout,
/// stderr and the exit code (-1 when a signal ended it).
pub fn irvm_with_stdin<S: AsRef<OsStr>>(args: &[S], stdin: Option<&str>) -> (String, String, i32) {
    let mut cmd = Command::new(irvm_bin());
    cmd.args(args);
    if let Some(path) = stdin {
        cmd.stdin(std::fs::File::open(path).expect("open the stdin file"));
    }
    let out = cmd.output().expect("irvm runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The `yieldable_test` plugin (a cdylib of this workspace), built for the
/// profile `irvm` was built with ([`workspace_plugin`]).
pub fn yieldable_plugin() -> Option<PathBuf> {
    workspace_plugin("yieldable_test")
}

/// The shared library of the workspace's plugin crate `name` (a cdylib
/// under tests/plugins) beside `irvm`. `cargo test --test all` builds only
/// the root package, so a plugin may be missing (a profile it was never
/// built for) or stale (its source changed since): the first call for
/// each plugin runs `cargo build -p NAME` for the same profile and target
/// directory (a no-op when it is fresh). A build that fails panics with
/// cargo's message (in every test that asks, not only the first); `None`,
/// with the reason on stderr, only when cargo cannot be run and no earlier
/// build is there.
pub fn workspace_plugin(name: &str) -> Option<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static BUILT: OnceLock<Mutex<HashMap<String, Result<(), String>>>> = OnceLock::new();
    let dir = irvm_bin().parent()?;
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let outcome = built
        .entry(name.to_string())
        .or_insert_with(|| build_plugin(name, dir))
        .clone();
    drop(built);
    if let Err(message) = outcome {
        panic!("{message}");
    }
    let file = format!("lib{name}.so");
    [dir.join(&file), dir.join("deps").join(&file)]
        .into_iter()
        .find(|p| p.exists())
}

/// `cargo build -p NAME` into the profile directory `dir` (TARGET/PROFILE)
/// that `irvm` came from: cargo's message when the build fails (a
/// workspace crate that does not build is a failure of the tree, not a
/// reason to test an older build of it or to skip); `Ok` when it built, or
/// when cargo cannot be run here (said on stderr).
fn build_plugin(name: &str, dir: &Path) -> Result<(), String> {
    let (Some(profile), Some(target)) = (dir.file_name().and_then(|p| p.to_str()), dir.parent())
    else {
        return Ok(());
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet", "-p", name, "--target-dir"])
        .arg(target)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    // The `dev` profile's directory is `debug`.
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "building the {name} plugin ({profile}) failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )),
        Err(e) => {
            eprintln!("building the {name} plugin: cannot run cargo: {e}");
            Ok(())
        }
    }
}
