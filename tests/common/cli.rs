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

/// The `yieldable_test` plugin (a cdylib of this workspace) that the same
/// build put beside `irvm`, if present.
pub fn yieldable_plugin() -> Option<PathBuf> {
    let dir = irvm_bin().parent()?;
    [
        dir.join("libyieldable_test.so"),
        dir.join("deps").join("libyieldable_test.so"),
    ]
    .into_iter()
    .find(|p| p.exists())
}
