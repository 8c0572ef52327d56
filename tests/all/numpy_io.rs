//! NumPy files as `irvm run` reads and writes them, as iree-run-module 3.13
//! does: every dtype it maps (booleans as 8-bit bools, unsigned integers
//! passing for the signless integers a function expects, signed ones as
//! `si*`), its refusals, and scalar results written as 0-d arrays.
//! `tests/data/npy_types.mlir` (compiled for vmvx beside it) has a function
//! per element type; the expected lines are the reference's output.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn module() -> PathBuf {
    common::paths::data("npy_types.vmfb")
}

/// A version 1.0 `.npy` file: `dict` padded as NumPy pads it, then `data`.
fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.to_string();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn array(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    npy(
        &format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({shape}), }}"),
        data,
    )
}

fn le<const N: usize, T>(values: &[T], bytes: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(bytes).collect()
}

/// The input files of the runs: name and bytes.
fn files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("b.npy", array("|b1", "4,", &[1, 0, 1, 1])),
        ("u1.npy", array("|u1", "2, 2", &[1, 255, 128, 3])),
        (
            "u2.npy",
            array("<u2", "3,", &le(&[1u16, 65535, 300], |v| v.to_le_bytes())),
        ),
        (
            "u4.npy",
            array(
                "<u4",
                "3,",
                &le(&[1u32, u32::MAX, 300], |v| v.to_le_bytes()),
            ),
        ),
        (
            "i4.npy",
            array("<i4", "3,", &le(&[1i32, -2, 300], |v| v.to_le_bytes())),
        ),
        (
            "u8.npy",
            array(
                "<u8",
                "3,",
                &le(&[1u64, u64::MAX, 300], |v| v.to_le_bytes()),
            ),
        ),
        (
            "f8.npy",
            array(
                "<f8",
                "3,",
                &le(&[1.5f64, -2.0, 1e300], |v| v.to_le_bytes()),
            ),
        ),
        // 1.5, -2, 65504 as f16.
        (
            "f2.npy",
            array(
                "<f2",
                "3,",
                &le(&[0x3E00u16, 0xC000, 0x7BFF], |v| v.to_le_bytes()),
            ),
        ),
        (
            "be.npy",
            array(">i4", "3,", &le(&[1i32, 2, 3], |v| v.to_be_bytes())),
        ),
        (
            "f4.npy",
            array("<f4", "3,", &le(&[1f32, 2.0, 3.0], |v| v.to_le_bytes())),
        ),
        (
            "fo.npy",
            npy(
                "{'descr': '|i1', 'fortran_order': True, 'shape': (2, 2), }",
                &[1, 3, 2, 4],
            ),
        ),
        ("us.npy", array("<U2", "2,", &[0; 16])),
        ("c8.npy", array("<c8", "2,", &[0; 16])),
        (
            "e_i4.npy",
            array("<i4", "3,", &le(&[2i32, -4, 600], |v| v.to_le_bytes())),
        ),
        ("e_b.npy", array("|b1", "4,", &[0, 1, 0, 0])),
    ]
}

/// Each run: function, inputs (one file, given to every parameter), extra
/// flags, exit status, the last line of stdout as the reference prints it.
const RUNS: &[(&str, &str, &str, i32, &str)] = &[
    ("not", "b.npy", "", 0, "4xi1=00 01 00 00"),
    ("add_i8", "u1.npy", "", 0, "2x2xi8=[2 -2][0 6]"),
    ("add_i16", "u2.npy", "", 0, "3xi16=2 -2 600"),
    ("add_i32", "u4.npy", "", 0, "3xi32=2 -2 600"),
    ("add_i32", "i4.npy", "", 0, "3xi32=2 -4 600"),
    ("add_i64", "u8.npy", "", 0, "3xi64=2 -2 600"),
    ("add_f64", "f8.npy", "", 0, "3xf64=3 -4 2E+300"),
    ("pass_f16", "f2.npy", "", 0, "3xf16=1.5 -2 65504"),
    // Refused while reading the file (big-endian, Fortran order, strings)
    // or by the function's type check (f32 for i32; complex for i64).
    ("add_i32", "be.npy", "", 1, ""),
    ("add_i8", "fo.npy", "", 1, ""),
    ("add_i32", "us.npy", "", 1, ""),
    ("add_i32", "f4.npy", "", 1, "EXEC @add_i32"),
    ("add_i64", "c8.npy", "", 1, "EXEC @add_i64"),
    // A '<i4' file is si32, which the reference's comparison does not
    // take for an i32 result; a bool file matches a bool result.
    (
        "add_i32",
        "i4.npy",
        "--expected_output=@e_i4.npy",
        1,
        "3xi32=2 -4 600",
    ),
    (
        "not",
        "b.npy",
        "--expected_output=@e_b.npy",
        0,
        "[SUCCESS] all function outputs matched their expected values.",
    ),
];

/// Runs `program` (`irvm run`, or iree-run-module with no prefix) in a
/// fresh directory holding the input files; returns stdout, status,
/// stderr and the files the run wrote.
fn run(
    program: &Path,
    prefix: &[&str],
    args: &[String],
) -> (String, i32, String, Vec<(String, Vec<u8>)>) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = files();
    for (name, bytes) in &inputs {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let out = Command::new(program)
        .current_dir(dir.path())
        .args(prefix)
        .arg(format!("--module={}", module().display()))
        .args(args)
        .output()
        .unwrap();
    let mut written: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !inputs.iter().any(|(n, _)| p.ends_with(n)))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    written.sort();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        written,
    )
}

fn args_of(function: &str, input: &str, extra: &str) -> Vec<String> {
    let mut args = vec![
        format!("--function={function}"),
        format!("--input=@{input}"),
    ];
    if function != "not" {
        args.push(format!("--input=@{input}"));
    }
    args.extend(extra.split_whitespace().map(str::to_string));
    args
}

#[test]
fn numpy_inputs_of_every_dtype_run_as_in_iree() {
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    for &(function, input, extra, status, last) in RUNS {
        let (stdout, code, stderr, _) = run(irvm, &["run"], &args_of(function, input, extra));
        assert_eq!(code, status, "{function} {input}: {stdout}{stderr}");
        assert_eq!(
            stdout.lines().last().unwrap_or(""),
            last,
            "{function} {input} {extra}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn numpy_refusals_name_the_file_and_the_reason() {
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    for (input, reason) in [
        ("be.npy", "big-endian data type '>i4' unsupported"),
        ("fo.npy", "fortran order arrays not supported"),
        ("us.npy", "unsupported data type U"),
    ] {
        let (_, code, stderr, _) = run(irvm, &["run"], &args_of("add_i32", input, ""));
        assert_eq!(code, 1);
        assert!(
            stderr.contains("UNIMPLEMENTED") && stderr.contains(reason) && stderr.contains(input),
            "{input}: {stderr}"
        );
    }
}

#[test]
fn scalar_results_are_written_as_0d_arrays() {
    // i32, i64, f32 and f64 results of `scalars(7)` appended to one file,
    // against the file iree-run-module 3.13 wrote for the same run
    // (`tests/data/npy_scalars.npy`), and raw bytes to a `.bin` file.
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let mut args = vec!["--function=scalars".to_string(), "--input=7".to_string()];
    args.push("--output=@s.npy".into());
    args.extend(std::iter::repeat_n("--output=+s.npy".to_string(), 3));
    let (stdout, code, stderr, written) = run(irvm, &["run"], &args);
    assert_eq!((code, stdout.as_str()), (0, "EXEC @scalars\n"), "{stderr}");
    let recorded = std::fs::read(common::paths::data("npy_scalars.npy")).unwrap();
    assert_eq!(written, vec![("s.npy".to_string(), recorded)]);
    let args: Vec<String> = [
        "--function=scalars",
        "--input=7",
        "--output=@a.bin",
        "--output=+a.bin",
        "--output=",
        "--output=-",
    ]
    .map(String::from)
    .to_vec();
    let (stdout, code, stderr, written) = run(irvm, &["run"], &args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "EXEC @scalars\nf64=7.5\n");
    let mut raw = 21i32.to_le_bytes().to_vec();
    raw.extend_from_slice(&21i64.to_le_bytes());
    assert_eq!(written, vec![("a.bin".to_string(), raw)]);
}

#[test]
fn numpy_io_matches_iree_run_module() {
    let Some(peer) = common::peer_bin(&["iree-run-module"]) else {
        common::report_missing_peer();
        return;
    };
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let mut runs: Vec<Vec<String>> = RUNS
        .iter()
        .map(|&(f, i, e, _, _)| args_of(f, i, e))
        .collect();
    // Every result written as NumPy, and the scalars.
    for &(f, i, _, status, _) in RUNS.iter().filter(|r| r.2.is_empty() && r.3 == 0) {
        let _ = status;
        runs.push(args_of(f, i, "--output=@o.npy"));
    }
    runs.push(
        [
            "--function=scalars",
            "--input=-3",
            "--output=@s.npy",
            "--output=+s.npy",
            "--output=+s.bin",
            "--output=+s.npy",
        ]
        .map(String::from)
        .to_vec(),
    );
    for args in runs {
        let (theirs, their_code, _, their_files) = run(&peer.join("iree-run-module"), &[], &args);
        let (ours, our_code, stderr, our_files) = run(irvm, &["run"], &args);
        assert_eq!(
            (ours.as_str(), our_code),
            (theirs.as_str(), their_code),
            "{args:?}: {stderr}"
        );
        assert!(our_files == their_files, "{args:?}: written files differ");
    }
}
