//! Where the tests find their files: the repository, its `tests/data`
//! fixtures and the shared checkout `../shared` beside it.
//!
//! Part of `tests/common`; the `irvm` library's tests (`vm/tests`) include
//! this file by `#[path]`. Their manifests sit at different depths, so the
//! repository is found from the manifest directory upwards.

use std::path::{Path, PathBuf};

/// The repository root: the nearest directory at or above this package's
/// manifest that holds the workspace's `Cargo.lock`.
pub fn repo() -> &'static Path {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or(manifest)
}

/// `rel` in the repository, as text for a command line.
pub fn repo_file(rel: &str) -> String {
    format!("{}/{rel}", repo().display())
}

/// The fixture `name` in `tests/data`.
pub fn data(name: &str) -> PathBuf {
    repo().join("tests/data").join(name)
}

/// The shared checkout (`../shared`), if present.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = repo().join("../shared");
    dir.is_dir().then_some(dir)
}

/// `rel` in the shared checkout, if it exists.
pub fn shared(rel: &str) -> Option<PathBuf> {
    let p = repo().join("../shared").join(rel);
    p.exists().then_some(p)
}
