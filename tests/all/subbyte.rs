//! Sub-byte element types (`i4`, `i2`, `ui4`) as IREE packs them: a view
//! of `4xi4` over the 2 bytes iree-compile allocates, element 0 in the low
//! bits of byte 0. `tests/data/subbyte/*.mlir` (compiled for llvm-cpu
//! beside each, `tests/data/subbyte/regenerate`): `checks` for `irvm check`,
//! `io` for `irvm run`'s inputs, printed results, `--expected_output` and
//! result files. Where iree-run-module 3.13 succeeds, its output is the
//! expected one (and compared live when the reference is installed); where
//! it fails (it cannot print a packed tensor, nor read one value per
//! element) irvm's behaviour is the deliberate difference of
//! docs/COMPATIBILITY.md.

use std::process::Command;

use crate::common::cli::irvm;
use crate::common::paths::data;
use crate::common::{peer_bin, report_missing_peer};

fn module(name: &str) -> String {
    data(&format!("subbyte/{name}.vmfb")).display().to_string()
}

/// `irvm run` of `io.vmfb`'s `function` with `args`: stdout, stderr, status.
fn run(function: &str, args: &[&str]) -> (String, String, i32) {
    let mut all = vec![
        "run".to_string(),
        format!("--module={}", module("io")),
        format!("--function={function}"),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    irvm(&all)
}

/// What iree-run-module prints for the same call, when installed.
fn reference(function: &str, args: &[&str]) -> Option<(String, i32)> {
    let bin = peer_bin(&["iree-run-module"])?;
    let out = Command::new(bin.join("iree-run-module"))
        .arg(format!("--module={}", module("io")))
        .arg(format!("--function={function}"))
        .args(args)
        .output()
        .expect("run iree-run-module");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    ))
}

#[test]
fn sub_byte_views_over_packed_buffers_pass_irvm_check() {
    let (out, err, code) = irvm(&["check", &format!("--module={}", module("checks"))]);
    assert_eq!(code, 1, "{out}\n{err}");
    for passing in ["i4_add", "i4_rows", "i2_widened"] {
        assert!(
            out.contains(&format!("[       OK ] module.{passing} (")),
            "{passing}:\n{out}\n{err}"
        );
    }
    // The failure prints each packed view element by element.
    assert!(
        out.contains(
            "Expected equality of these values. Contents does not match.\n  lhs:\n    \
             4xi4=1 2 3 4\n  rhs:\n    4xi4=1 2 3 5\n[  FAILED  ] module.i4_mismatch"
        ),
        "{out}\n{err}"
    );
    assert!(out.contains("[  PASSED  ] 3 tests."), "{out}");
}

#[test]
fn packed_inputs_read_as_iree_reads_them() {
    // IREE's form: each value one packed byte in hex (`21` is elements 1, 2).
    let cases: [(&str, &[&str], &str); 4] = [
        ("widen_i4", &["--input=4xi4=21,C4"], "4xi8=1 2 4 -4"),
        ("widen_i4", &["--input=4xi4=F1"], "4xi8=1 -1 1 -1"),
        ("widen_i4", &["--input=4xi4="], "4xi8=0 0 0 0"),
        ("widen_i2", &["--input=4xi2=E4"], "4xi8=0 1 -2 -1"),
    ];
    for (function, args, want) in cases {
        let (out, err, code) = run(function, args);
        let expected = format!("EXEC @{function}\nresult[0]: hal.buffer_view\n{want}\n");
        assert_eq!(
            (out.as_str(), code),
            (expected.as_str(), 0),
            "{args:?}: {err}"
        );
        match reference(function, args) {
            Some(reference) => assert_eq!(reference, (expected, 0), "{args:?}"),
            None => report_missing_peer(),
        }
    }
    // i1 is IREE's 8-bit boolean: one byte, two hex digits, per element.
    let (out, err, code) = run("widen_i1", &["--input=4xi1=01,00,01,01"]);
    assert_eq!(
        (out.as_str(), code),
        (
            "EXEC @widen_i1\nresult[0]: hal.buffer_view\n4xi8=1 0 1 1\n",
            0
        ),
        "{err}"
    );
    // As IREE: a value that is not two hex digits, or more values than bytes.
    for bad in ["--input=4xi4=1,2", "--input=4xi4=12,34,56"] {
        let (out, err, code) = run("widen_i4", &[bad]);
        assert_eq!(code, 1, "{bad}: {out}");
        assert!(err.contains("parsing input"), "{bad}: {err}");
        if let Some((_, code)) = reference("widen_i4", &[bad]) {
            assert_eq!(code, 1, "{bad}");
        }
    }
}

#[test]
fn packed_results_print_element_by_element_and_read_back() {
    let cases: [(&str, &[&str], &str); 5] = [
        ("same_i4", &["--input=4xi4=21,C4"], "4xi4=1 2 4 -4"),
        ("narrow_i4", &["--input=4xi8=1,2,-3,4"], "4xi4=1 2 -3 4"),
        (
            "add_i4",
            &["--input=2x2xi4=1,2,3,4", "--input=2x2xi4=1,1,-1,7"],
            "2x2xi4=[2 3][2 -5]",
        ),
        ("same_ui4", &["--input=4xui4=1,2,15,0"], "4xui4=1 2 15 0"),
        ("narrow_i2", &["--input=4xi8=0,1,2,3"], "4xi2=0 1 -2 -1"),
    ];
    for (function, args, want) in cases {
        let (out, err, code) = run(function, args);
        assert_eq!(
            (out.as_str(), code),
            (
                format!("EXEC @{function}\nresult[0]: hal.buffer_view\n{want}\n").as_str(),
                0
            ),
            "{args:?}: {err}"
        );
    }
    // The printed form is an input (one decimal value per element), and
    // an expected output compared element by element.
    let (out, err, code) = run(
        "same_i4",
        &["--input=4xi4=1,2,-3,4", "--expected_output=4xi4=1,2,-3,4"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("[SUCCESS]"), "{out}");
    let (out, err, code) = run(
        "same_i4",
        &["--input=4xi4=1,2,-3,4", "--expected_output=4xi4=1,2,-3,5"],
    );
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("[FAILED] result[0]: element at index 3 (4) does not match the expected (5)"),
        "{out}"
    );
    // Out of the type's range.
    let (_, err, code) = run("same_i4", &["--input=4xi4=1,2,3,16"]);
    assert_eq!(code, 1);
    assert!(err.contains("failed to parse element '16' as i4"), "{err}");
}

#[test]
fn packed_results_are_written_as_iree_writes_them_and_npy_files_load() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let raw = dir.path().join("r.bin");
    let npy = dir.path().join("r.npy");
    let (out, err, code) = run(
        "narrow_i4",
        &[
            "--input=4xi8=1,2,-3,4",
            &format!("--output=@{}", raw.display()),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    // Raw: the packed bytes, as iree-run-module writes them.
    assert_eq!(std::fs::read(&raw).expect("the raw file"), [0x21, 0x4D]);
    if let Some(bin) = peer_bin(&["iree-run-module"]) {
        let theirs = dir.path().join("theirs.bin");
        let status = Command::new(bin.join("iree-run-module"))
            .arg(format!("--module={}", module("io")))
            .args(["--function=narrow_i4", "--input=4xi8=1,2,-3,4"])
            .arg(format!("--output=@{}", theirs.display()))
            .output()
            .expect("run iree-run-module");
        assert!(status.status.success());
        assert_eq!(
            std::fs::read(&theirs).expect("their raw file"),
            [0x21, 0x4D]
        );
    } else {
        report_missing_peer();
    }
    // A raw file reads back as the packed bytes (IREE's size: 2 bytes).
    let (out, err, code) = run("widen_i4", &[&format!("--input=4xi4=@{}", raw.display())]);
    assert_eq!(code, 0, "{err}");
    assert!(out.ends_with("4xi8=1 2 -3 4\n"), "{out}");
    // NumPy: IREE's header (`|i1`, shape (4,)) over one byte per element.
    let (out, err, code) = run(
        "narrow_i4",
        &[
            "--input=4xi8=1,2,-3,4",
            &format!("--output=@{}", npy.display()),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let bytes = std::fs::read(&npy).expect("the npy file");
    let header = String::from_utf8_lossy(&bytes[..128]);
    assert!(
        header.contains("{'descr': '|i1', 'fortran_order': False, 'shape': (4,), }"),
        "{header}"
    );
    assert_eq!(&bytes[128..], [1, 2, 0xFD, 4]);
}
