//! Modules IREE 3.13 refuses at load, found by `scripts/load-differential`
//! (mutants of `tests/data/fib.vmfb`, kept in `tests/data/refused/`; see
//! the README there): irvm must refuse each at load too, naming the table
//! or field and the byte. With the reference tools installed, each is
//! checked to be refused by `iree-dump-module` (flatcc's verifier) with
//! the reason given here.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::cli::irvm;
use crate::common::{peer_bin, report_missing_peer};

/// (file in tests/data/refused, irvm's message, flatcc's message).
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "table_size_past_end.vmfb",
        "table BytecodeModuleDef.types[0] (TypeDef) at byte 548: table size 65535 runs past \
         the end of the buffer (344 bytes left)",
        "table size out of range",
    ),
    (
        "field_outside_table.vmfb",
        "field BytecodeModuleDef.types[0].full_name at byte 552: field at table offset 4 \
         (4 bytes) lies outside the table's 2 bytes",
        "table field out of range",
    ),
    (
        "zero_offset.vmfb",
        "field BytecodeModuleDef.exported_functions at byte 20: offset is 0 (points at itself)",
        "vector header out of range or unaligned",
    ),
    (
        "vtable_too_small.vmfb",
        "table BytecodeModuleDef.debug_database (DebugDatabaseDef) at byte 834: vtable is 2 \
         bytes; it needs at least 4 (its size and the table's)",
        "vtable header too small",
    ),
    (
        "location_string_unterminated.vmfb",
        "string BytecodeModuleDef.debug_database.location_table[0].filename at byte 508: is \
         not NUL-terminated",
        "string not zero terminated",
    ),
    (
        "location_type_none_with_value.vmfb",
        "element BytecodeModuleDef.debug_database.location_table[0] at byte 100: union type \
         NONE with a value present",
        "union element present with type NONE",
    ),
    (
        "location_of_another_kind.vmfb",
        "field BytecodeModuleDef.debug_database.location_table[4].filename at byte 444: \
         offset 3 points at byte 447, not 4-byte aligned",
        "string header out of range or unaligned",
    ),
];

fn refused(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/refused")
        .join(name)
}

#[test]
fn modules_flatcc_refuses_are_refused_at_load_naming_the_table_and_byte() {
    for (name, message, _) in REFUSED {
        let path = refused(name);
        let (out, err, code) = irvm(&[
            "dump".as_ref(),
            "--output=metadata".as_ref(),
            path.as_os_str(),
        ]);
        assert_eq!(code, 1, "{name}: {out}{err}");
        assert!(out.is_empty(), "{name}: {out}");
        assert!(
            err.contains(&format!("FlatBuffer verification failed: {message}")),
            "{name}: {err}"
        );
        let (out, err, code) = irvm(&[
            "run".to_string(),
            format!("--module={}", path.display()),
            "--function=fib".to_string(),
            "--input=5".to_string(),
        ]);
        assert_eq!(code, 1, "{name}: {out}{err}");
        assert!(err.contains(message), "{name}: {err}");
    }
    // The module they were made from loads and runs.
    let (out, err, code) = irvm(&[
        "run".to_string(),
        format!(
            "--module={}",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/fib.vmfb")
                .display()
        ),
        "--function=fib".to_string(),
        "--input=10".to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("i32=55"), "{out}");
}

#[test]
fn the_reference_refuses_the_same_modules_for_the_same_reason() {
    let Some(peer) = peer_bin(&["iree-dump-module"]) else {
        report_missing_peer();
        return;
    };
    for (name, _, reason) in REFUSED {
        let out = Command::new(peer.join("iree-dump-module"))
            .arg("--output=metadata")
            .arg(refused(name))
            .output()
            .expect("run iree-dump-module");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains(&format!("FlatBuffer verification failed: {reason}")),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_name_that_is_not_utf8_is_refused_at_load_where_iree_runs_it() {
    // fib.vmfb with its export named `f\xFFb` (byte 577 of the file).
    // flatcc checks no encoding: iree-run-module runs the function by that
    // name. irvm's names are text (docs/COMPATIBILITY.md).
    let path = refused("export_name_not_utf8.vmfb");
    let (out, err, code) = irvm(&[
        "dump".as_ref(),
        "--output=metadata".as_ref(),
        path.as_os_str(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("FlatBuffer verification failed: Utf8 error for string in 576..579")
            && err.contains("while verifying table field `local_name` at position 568")
            && err.contains("while verifying table field `exported_functions` at position 20"),
        "{err}"
    );
    let Some(peer) = peer_bin(&["iree-run-module"]) else {
        report_missing_peer();
        return;
    };
    use std::os::unix::ffi::OsStrExt;
    let mut function = std::ffi::OsString::from("--function=");
    function.push(std::ffi::OsStr::from_bytes(b"f\xFFb"));
    let out = Command::new(peer.join("iree-run-module"))
        .arg(format!("--module={}", path.display()))
        .arg(function)
        .arg("--input=10")
        .output()
        .expect("run iree-run-module");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("result[0]: i32=55"), "{stdout}");
}

#[test]
fn a_negative_register_count_is_refused_at_load_where_iree_fails_the_call() {
    // fib.vmfb with its function's ref_register_count -2 (file byte 794).
    // IREE's verifier takes max(1, count) and loads the module; a call
    // then asks the stack for the count as an unsigned size.
    let path = refused("negative_register_count.vmfb");
    let (out, err, code) = irvm(&[
        "run".to_string(),
        format!("--module={}", path.display()),
        "--function=fib".to_string(),
        "--input=10".to_string(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("function descriptor 0 is invalid: ref_register_count -2 outside 0..=16383"),
        "{err}"
    );
    let Some(peer) = peer_bin(&["iree-run-module"]) else {
        report_missing_peer();
        return;
    };
    let out = Command::new(peer.join("iree-run-module"))
        .arg(format!("--module={}", path.display()))
        .args(["--function=fib", "--input=10"])
        .output()
        .expect("run iree-run-module");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("RESOURCE_EXHAUSTED; new stack size would exceed maximum size"),
        "{stderr}"
    );
}
