//! `scripts/check-layers`, the import rule `.ci/run` enforces (ARCHITECTURE.md,
//! "Layers"): it passes on this repository, and fails on a tree that breaks
//! the rule in each way it names.

use std::path::Path;
use std::process::Command;

use crate::common::paths::repo_file;

/// Runs the checker on `root` (the repository when `None`): exit status and
/// standard output.
fn check(root: Option<&Path>) -> (bool, String) {
    let mut cmd = Command::new("python3");
    cmd.arg(repo_file("scripts/check-layers"));
    if let Some(root) = root {
        cmd.arg("--root").arg(root);
    }
    let out = cmd
        .output()
        .expect("python3 runs (it is on every CI machine)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A two-layer tree: `base` below `top`; `files` are the `vm/` files.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("vm/top")).unwrap();
    std::fs::create_dir_all(dir.path().join("vm/base")).unwrap();
    std::fs::write(
        dir.path().join("ARCHITECTURE.md"),
        "# x\n\n## Layers\n\n| layer | modules | what |\n| --- | --- | --- |\n\
         | base | `vm/base` | below |\n| top (cycle allowed) | `vm/top`, `vm/peer` | above |\n\n## Next\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("vm/lib.rs"),
        "pub use base::Thing;\npub use top::Up;\n",
    )
    .unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join("vm").join(name), text).unwrap();
    }
    dir
}

#[test]
fn this_repository_keeps_its_layers() {
    let (ok, out) = check(None);
    assert!(ok, "{out}");
    assert!(out.contains("the rule holds"), "{out}");
}

#[test]
fn an_import_from_a_layer_above_fails() {
    let dir = tree(&[
        ("base.rs", "use crate::top::Up;\n"),
        ("top/mod.rs", "use crate::base::Thing;\n"),
        ("peer.rs", ""),
    ]);
    let (ok, out) = check(Some(dir.path()));
    assert!(!ok, "{out}");
    assert!(out.contains("`base` (base) imports `top`"), "{out}");

    // The same import through the crate root's re-export of `top::Up`.
    let dir = tree(&[
        ("base.rs", "fn f(_: crate::Up) {}\n"),
        ("top/mod.rs", ""),
        ("peer.rs", ""),
    ]);
    let (ok, out) = check(Some(dir.path()));
    assert!(!ok, "{out}");
    assert!(out.contains("`base` (base) imports `top`"), "{out}");
}

#[test]
fn root_reexports_count_and_comments_and_tests_do_not() {
    // `crate::Thing` is base's (a lib.rs re-export): top may use it; a
    // comment or a test module in base naming `top` is no import.
    let dir = tree(&[
        (
            "base.rs",
            "// see crate::top::Up\n#[cfg(test)]\nmod tests {\n    use crate::top::Up;\n}\n",
        ),
        ("top/mod.rs", "fn f(_: crate::Thing) {}\n"),
        ("peer.rs", ""),
    ]);
    let (ok, out) = check(Some(dir.path()));
    assert!(ok, "{out}");
}

#[test]
fn cycles_only_where_the_row_allows_them() {
    let allowed = tree(&[
        ("base.rs", ""),
        ("top/mod.rs", "use crate::peer::P;\n"),
        ("peer.rs", "use crate::top::T;\n"),
    ]);
    let (ok, out) = check(Some(allowed.path()));
    assert!(ok, "{out}");

    let mut arch = std::fs::read_to_string(allowed.path().join("ARCHITECTURE.md")).unwrap();
    arch = arch.replace(" (cycle allowed)", "");
    std::fs::write(allowed.path().join("ARCHITECTURE.md"), arch).unwrap();
    let (ok, out) = check(Some(allowed.path()));
    assert!(!ok, "{out}");
    assert!(
        out.contains("import cycle outside an allowed layer: peer <-> top"),
        "{out}"
    );
}

#[test]
fn a_module_missing_from_the_table_fails() {
    let dir = tree(&[
        ("base.rs", ""),
        ("top/mod.rs", ""),
        ("peer.rs", ""),
        ("stray.rs", ""),
    ]);
    let (ok, out) = check(Some(dir.path()));
    assert!(!ok, "{out}");
    assert!(
        out.contains("vm/stray: not in ARCHITECTURE.md's layer table"),
        "{out}"
    );
}

/// Ways a path to a higher layer can be spelled, each caught: from
/// `vm/base/inner.rs` (module `base::inner`) to `top`.
#[test]
fn every_spelling_of_a_path_counts() {
    let spellings = [
        "use super::super::top::Up;\n",
        "use crate::{base::{x}, top::Up};\n",
        "const S: &str = \"vm/*\";\nuse crate::top::Up;\n/* note */\n",
        "#[cfg(test)]\nmod t {\n    const B: &str = \"{\";\n}\nuse crate::top::Up;\n",
        "fn f() { let _ = crate::up!(); }\n",
    ];
    for (i, inner) in spellings.iter().enumerate() {
        let dir = tree(&[
            ("base/mod.rs", "mod inner;\n"),
            ("base/inner.rs", inner),
            (
                "top/mod.rs",
                "#[macro_export]\nmacro_rules! up { () => { 1 } }\n",
            ),
            ("peer.rs", ""),
        ]);
        let (ok, out) = check(Some(dir.path()));
        assert!(!ok, "spelling {i} slipped through: {out}");
        assert!(
            out.contains("`base` (base) imports `top`"),
            "spelling {i}: {out}"
        );
    }
    // `super::` that stays inside the module is no import.
    let dir = tree(&[
        ("base/mod.rs", "mod inner;\npub struct Thing;\n"),
        ("base/inner.rs", "use super::Thing;\n"),
        ("top/mod.rs", ""),
        ("peer.rs", ""),
    ]);
    let (ok, out) = check(Some(dir.path()));
    assert!(ok, "{out}");
}

/// What would hide a file or a path from the check is refused outright.
#[test]
fn constructs_that_hide_paths_are_refused() {
    let cases: [(&str, &str, &str); 3] = [
        (
            "base.rs",
            "#[path = \"top/x.rs\"]\nmod x;\n",
            "a #[path] attribute",
        ),
        (
            "base.rs",
            "extern crate self as me;\n",
            "`extern crate self`",
        ),
        (
            "lib.rs",
            "mod glue { pub use crate::top::Up; }\n",
            "inline module `glue`",
        ),
    ];
    for (file, text, says) in cases {
        let mut files = vec![("top/mod.rs", ""), ("peer.rs", "")];
        if file != "base.rs" {
            files.push(("base.rs", ""));
        }
        let dir = tree(&files);
        let path = dir.path().join("vm").join(file);
        let mut old = std::fs::read_to_string(&path).unwrap_or_default();
        old.push_str(text);
        std::fs::write(&path, old).unwrap();
        let (ok, out) = check(Some(dir.path()));
        assert!(!ok, "{text}: {out}");
        assert!(out.contains(says), "{text}: {out}");
    }
}
