//! `irvm dump` against the reference: the conformance modules' `.vmasm`
//! files are exactly what `iree-dump-module --output=disassembly` prints for
//! their `.vmfb`, so the disassembly must reproduce them byte for byte (no
//! reference tools needed). With the reference tools installed, every mode
//! is also compared with `iree-dump-module` on all shared modules
//! (conformance, benchmarks, examples) and on the modules compiled from
//! `tests/mlir/*.mlir`, which together hold every instruction of the table
//! that iree-compile 3.13 emits (`tests/mlir/isa_*.mlir`; checked by
//! `tests_mlir_covers_every_instruction_iree_compile_emits`). Where
//! iree-dump-module prints something wrong, `tests/mlir/dump_gaps/` holds
//! the case and `iree_dump_module_gaps_are_as_documented` checks both sides.
//!
//! Reads `../shared` and skips with a message when it is absent; the
//! comparisons with the reference need `~/.cache/irvm-iree-peer/bin` (or
//! `IREE_PEER_BIN`) and are skipped with a message without it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use irvm::bytecode::disasm::{disassemble_module, DisasmError, DisasmOptions, FunctionFilter};
use irvm::Module;

use crate::common;
use crate::common::paths::{repo, shared_dir};

/// `.vmfb` files in `dir`, sorted.
fn vmfbs_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "vmfb"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn irvm_dump(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("dump")
        .args(args)
        .arg(file)
        .output()
        .expect("run irvm dump")
}

fn iree_dump(peer: &Path, args: &[&str], file: &Path) -> Output {
    Command::new(peer.join("iree-dump-module"))
        .args(args)
        .arg(file)
        .output()
        .expect("run iree-dump-module")
}

/// The first line where `ours` and `want` differ, for failure messages.
fn first_difference(ours: &[u8], want: &[u8]) -> String {
    let ours = String::from_utf8_lossy(ours);
    let want = String::from_utf8_lossy(want);
    for (i, (a, b)) in ours.lines().zip(want.lines()).enumerate() {
        if a != b {
            return format!("line {}:\n  irvm: {a}\n  want: {b}", i + 1);
        }
    }
    format!(
        "one output is a prefix of the other ({} vs {} lines)",
        ours.lines().count(),
        want.lines().count()
    )
}

#[test]
fn disassembly_reproduces_every_conformance_vmasm() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipping: ../shared is not present");
        return;
    };
    let conformance = shared.join("conformance");
    let mut modules = vmfbs_in(&conformance.join("iree-vm-tests"));
    assert_eq!(modules.len(), 30, "conformance modules in ../shared");
    modules.extend(vmfbs_in(&conformance));
    modules.extend(vmfbs_in(&shared.join("benchmarks")));
    let mut identical = 0;
    let mut failures = Vec::new();
    for vmfb in &modules {
        let vmasm = vmfb.with_extension("vmasm");
        let Ok(want) = std::fs::read(&vmasm) else {
            continue;
        };
        // Through the CLI ...
        let out = irvm_dump(&["--output=disassembly"], vmfb);
        assert!(out.status.success(), "{}: {:?}", vmfb.display(), out);
        // ... and through the library.
        let module = Module::from_file(vmfb).expect("load");
        let text = disassemble_module(&module, &DisasmOptions::default()).expect("disassemble");
        assert_eq!(text.as_bytes(), &out.stdout[..], "{}", vmfb.display());
        if out.stdout == want {
            identical += 1;
        } else {
            failures.push(format!(
                "{}: {}",
                vmfb.display(),
                first_difference(&out.stdout, &want)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{identical}/{} modules byte-identical to their .vmasm",
        modules.len()
    );
    assert!(identical >= 32, "only {identical} modules compared");
}

#[test]
fn every_mode_matches_iree_dump_module() {
    let Some(peer) = common::peer_bin(&["iree-dump-module", "iree-compile"]) else {
        common::report_missing_peer();
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut modules = compiled_tests_mlir(&peer, tmp.path(), false);
    assert!(!modules.is_empty());
    match shared_dir() {
        Some(shared) => {
            modules.extend(vmfbs_in(&shared.join("benchmarks")));
            modules.push(shared.join("conformance/module_benchmark.vmfb"));
            modules.extend(vmfbs_in(&shared.join("examples")));
            modules.extend(vmfbs_in(&shared.join("conformance/iree-vm-tests")));
        }
        None => eprintln!("../shared is not present: comparing tests/mlir modules only"),
    }
    let modes: [&[&str]; 8] = [
        &["--output=disassembly"],
        &["--output=metadata"],
        &[],
        &["--output=disassembly", "--bytecode_offsets"],
        &["--output=disassembly", "--function=0"],
        &["--output=flatbuffer-binary"],
        &["--output=flatbuffer-json"],
        &["--output=flatbuffer-json", "--pretty"],
    ];
    let mut failures = Vec::new();
    let mut identical_disassembly = 0;
    for module in &modules {
        for args in modes {
            let ours = irvm_dump(args, module);
            let want = iree_dump(&peer, args, module);
            assert!(want.status.success(), "reference failed: {want:?}");
            if !ours.status.success() || ours.stdout != want.stdout {
                failures.push(format!(
                    "{} {args:?}: {}",
                    module.display(),
                    first_difference(&ours.stdout, &want.stdout)
                ));
            } else if args == ["--output=disassembly"] {
                identical_disassembly += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{identical_disassembly}/{} modules byte-identical to iree-dump-module in every mode",
        modules.len()
    );
}

/// The `tests/mlir` modules (`tests/mlir/dump_gaps/` too when `gaps`)
/// compiled into `dir`.
fn compiled_tests_mlir(peer: &Path, dir: &Path, gaps: bool) -> Vec<PathBuf> {
    let mut folders = vec![repo().join("tests/mlir")];
    if gaps {
        folders.push(repo().join("tests/mlir/dump_gaps"));
    }
    let mut mlir_files: Vec<PathBuf> = folders
        .iter()
        .flat_map(|f| std::fs::read_dir(f).expect("tests/mlir"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mlir"))
        .collect();
    mlir_files.sort();
    mlir_files
        .iter()
        .map(|mlir| {
            let out = dir
                .join(mlir.file_stem().expect("stem"))
                .with_extension("vmfb");
            common::compile_mlir(peer, mlir, &out);
            out
        })
        .collect()
}

/// Instructions of the table that no `tests/mlir` module holds, and why:
/// iree-compile 3.13 does not emit them (its VM dialect has no such op, or
/// it writes them otherwise). The test fails when one shows up after all.
const NOT_EMITTED: &[(&str, &str)] = &[
    (
        "block",
        "the block marker: a byte at each block's start, printed as `^bbN:`",
    ),
    (
        "cast.f64.si32",
        "the VM dialect has no vm.cast.f64.si32 (\"custom op is unknown\")",
    ),
    ("cast.f64.ui32", "the VM dialect has no vm.cast.f64.ui32"),
    ("cast.si32.f64", "the VM dialect has no vm.cast.si32.f64"),
    ("cast.ui32.f64", "the VM dialect has no vm.cast.ui32.f64"),
    (
        "cond_break",
        "iree-compile writes an encoding both the reference's verifier and irvm reject",
    ),
    (
        "global.load.indirect.f32",
        "iree-compile writes vm.global.load.indirect.f32 with the f64 load's opcode",
    ),
    (
        "assign.ref",
        "no VM dialect input found that makes iree-compile emit it",
    ),
];

#[test]
fn tests_mlir_covers_every_instruction_iree_compile_emits() {
    let Some(peer) = common::peer_bin(&["iree-compile"]) else {
        common::report_missing_peer();
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut seen = std::collections::BTreeSet::new();
    for module in compiled_tests_mlir(&peer, tmp.path(), true) {
        let out = irvm_dump(&["--output=disassembly"], &module);
        assert!(out.status.success(), "irvm dump {}", module.display());
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            // `%a = vm.add.i32 ...` or `vm.return ...`: the first `vm.` word.
            let Some(at) = line.find("vm.") else { continue };
            let word = line[at + 3..].split([' ', '(']).next().unwrap_or("");
            seen.insert(word.to_string());
        }
    }
    let mut missing = Vec::new();
    for info in irvm::bytecode::isa::INSTRUCTIONS {
        if info.set == irvm::bytecode::isa::OpcodeSet::Internal {
            continue;
        }
        let excused = NOT_EMITTED.iter().any(|(m, _)| *m == info.mnemonic);
        match (seen.contains(info.mnemonic), excused) {
            (false, false) => {
                missing.push(format!("vm.{}: in no tests/mlir module", info.mnemonic))
            }
            (true, true) => missing.push(format!(
                "vm.{}: emitted after all; take it off NOT_EMITTED",
                info.mnemonic
            )),
            _ => {}
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// What irvm dump prints where iree-dump-module 3.13 is wrong
/// (`tests/mlir/dump_gaps/`, one module each), and what the reference
/// prints instead.
const DUMP_GAPS: &[(&str, &str, &str)] = &[
    (
        "cast_ui64_f32",
        "  %i2 = vm.cast.ui64.f32 %i0:1\n",
        "UNIMPLEMENTED; unhandled ext opcode",
    ),
    (
        "switch_ref",
        "  %r1 = vm.switch.ref %i0[%r0, %r1] else %r0\n",
        "  %r0 = vm.switch.ref %i0[] else %r1\n",
    ),
    (
        "odd_i64_argument",
        "vm.func @f(%i0: i32, %i2:3: i64) -> (i64, i32) {\n^bb0:\n  vm.return %i2, %i0\n",
        "vm.func @f(%i0: i32, %i1:2: i64) -> (i64, i32) {\n",
    ),
];

#[test]
fn iree_dump_module_gaps_are_as_documented() {
    let Some(peer) = common::peer_bin(&["iree-dump-module", "iree-compile"]) else {
        common::report_missing_peer();
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    for &(name, ours, theirs) in DUMP_GAPS {
        let mlir = repo().join(format!("tests/mlir/dump_gaps/{name}.mlir"));
        let module = tmp.path().join(format!("{name}.vmfb"));
        common::compile_mlir(&peer, &mlir, &module);
        let args = ["--output=disassembly"];
        let our_out = irvm_dump(&args, &module);
        let our_text = String::from_utf8_lossy(&our_out.stdout);
        assert!(our_out.status.success(), "{name}: irvm dump failed");
        assert!(
            our_text.contains(ours),
            "{name}: irvm dump printed\n{our_text}"
        );
        let want = iree_dump(&peer, &args, &module);
        let their_text = String::from_utf8_lossy(&want.stdout).into_owned()
            + &String::from_utf8_lossy(&want.stderr);
        assert!(
            their_text.contains(theirs),
            "{name}: iree-dump-module no longer prints {theirs:?} (fixed? then move the module to tests/mlir):\n{their_text}"
        );
    }
    assert_eq!(
        std::fs::read_dir(repo().join("tests/mlir/dump_gaps"))
            .expect("tests/mlir/dump_gaps")
            .count(),
        DUMP_GAPS.len(),
        "every module in tests/mlir/dump_gaps has its line in DUMP_GAPS"
    );
}

#[test]
fn function_filter_prints_one_function() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipping: ../shared is not present");
        return;
    };
    let vmfb = shared.join("conformance/iree-vm-tests/call_ops.vmfb");
    let vmasm = std::fs::read_to_string(vmfb.with_extension("vmasm")).expect("vmasm");
    // The header (up to the first blank line) and the block of `fn9`.
    let header = &vmasm[..vmasm.find("\n\n").expect("blank line") + 2];
    let start = vmasm.find("vm.func @fn9(").expect("fn9");
    let end = start + vmasm[start..].find("\n}\n").expect("end of fn9") + 3;
    let want = format!("{header}{}", &vmasm[start..end]);
    let by_name = irvm_dump(&["--output=disassembly", "--function=fn9"], &vmfb);
    assert!(by_name.status.success(), "{by_name:?}");
    assert_eq!(String::from_utf8_lossy(&by_name.stdout), want);
    let by_ordinal = irvm_dump(&["--output=disassembly", "--function=9"], &vmfb);
    assert_eq!(by_ordinal.stdout, by_name.stdout);

    let module = Module::from_file(&vmfb).expect("load");
    let options = DisasmOptions {
        bytecode_offsets: false,
        filter: FunctionFilter::Name("fn9"),
        ..Default::default()
    };
    assert_eq!(disassemble_module(&module, &options).expect("text"), want);
}

#[test]
fn metadata_names_exports_signatures_and_sections() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipping: ../shared is not present");
        return;
    };
    let out = irvm_dump(&["--output=metadata"], &shared.join("examples/fib.vmfb"));
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "// @module : version 0\n",
        "Required Types:\n  [  0] i32\n",
        "Exported Functions:\n  [  0] fib(i32) -> (i32)\n        iree.abi.declaration: sync func @fib(%input0: i32) -> (%output0: i32)\n",
        "  Bytecode: 88 bytes\n",
        "  0 | 00000000 |       86 |      4 |     6 |     0 |              | fib\n",
        "Locations: 17\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

/// A copy of the file bytes of `module` with `edit` applied to the bytecode
/// of its first function.
fn patched_bytecode(vmfb: &Path, edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let module = Module::from_file(vmfb).expect("load");
    let file = module.file_bytes();
    let code = module.function_bytecode(0).expect("function 0");
    let start = code.as_ptr() as usize - file.as_ptr() as usize;
    let mut bytes = file.to_vec();
    edit(&mut bytes[start..start + code.len()]);
    bytes
}

#[test]
fn bad_bytecode_is_reported_with_its_place() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipping: ../shared is not present");
        return;
    };
    let fib = shared.join("examples/fib.vmfb");
    // fib's bytecode: a block marker at 0x00, const.i32.zero at 0x01,
    // const.i32 at 0x04, then `vm.br` at 0x0B whose target (0x1A) starts at
    // 0x0C.
    let bad_target = patched_bytecode(&fib, |code| {
        assert_eq!(code[0x0B], 0x56, "vm.br opcode");
        code[0x0C] = 0x1B;
    });
    let module = Module::from_bytes(bad_target).expect("still a valid FlatBuffer");
    match disassemble_module(&module, &DisasmOptions::default()) {
        Err(
            e @ DisasmError::UndefinedBlock {
                offset: 0x0B,
                target: 0x1B,
                ..
            },
        ) => {
            assert!(e.to_string().contains("@fib"), "{e}");
        }
        other => panic!("expected an undefined block error, got {other:?}"),
    }
    let unknown_opcode = patched_bytecode(&fib, |code| code[0x01] = 0xFF);
    let module = Module::from_bytes(unknown_opcode).expect("still a valid FlatBuffer");
    let err = disassemble_module(&module, &DisasmOptions::default()).expect_err("bad opcode");
    assert!(matches!(err, DisasmError::Decode { .. }), "{err:?}");
    assert!(err.to_string().contains("0xFF"), "{err}");

    // Through the CLI: the header is printed, then the error, exit 1.
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("bad.vmfb");
    std::fs::write(&path, patched_bytecode(&fib, |code| code[0x01] = 0xFF)).expect("write");
    let out = irvm_dump(&["--output=disassembly"], &path);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("vm.module @module version 0\n"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown opcode 0xFF"), "{stderr}");
}

#[test]
fn cli_errors_exit_nonzero_with_a_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("missing.vmfb");
    let out = irvm_dump(&[], &missing);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("missing.vmfb"), "{stderr}");
    assert!(out.stdout.is_empty());

    let garbage = tmp.path().join("garbage.vmfb");
    std::fs::write(&garbage, b"this is not an IREE module at all, just text").expect("write");
    let out = irvm_dump(&["--output=metadata"], &garbage);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("garbage.vmfb"));
    assert!(out.stdout.is_empty());

    let Some(shared) = shared_dir() else {
        eprintln!("skipping the rest: ../shared is not present");
        return;
    };
    let fib = shared.join("examples/fib.vmfb");
    let truncated = tmp.path().join("truncated.vmfb");
    let bytes = std::fs::read(&fib).expect("fib");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).expect("write");
    let out = irvm_dump(&["--output=disassembly"], &truncated);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated.vmfb"));

    let out = irvm_dump(&["--output=disassembly", "--function=nope"], &fib);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no function named 'nope'"), "{stderr}");

    let out = irvm_dump(&["--output=disassembly", "--function=7"], &fib);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no function with ordinal 7"));

    let out = irvm_dump(&["--output=bogus"], &fib);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unrecognized --output= flag value 'bogus'")
    );
}

/// A module file over 16 MiB (mapped, not copied) is looked up and opened
/// once: the loader used to stat and open it a second time to map it (a
/// file swapped in between would have been the one mapped). Counted with
/// `strace`; skipped without it.
#[test]
fn a_large_module_file_is_looked_up_and_opened_once() {
    let traced = Command::new("strace").arg("-V").output();
    if !traced.is_ok_and(|o| o.status.success()) {
        eprintln!("skipping: no `strace`");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.vmfb");
    let mut bytes = std::fs::read(repo().join("tests/models/add.vmfb")).unwrap();
    // Bytes after the module's FlatBuffer are not looked at by `dump`.
    bytes.resize(bytes.len() + (17 << 20), 0);
    std::fs::write(&big, &bytes).unwrap();
    let log = dir.path().join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-e", "trace=%file,%desc", "-o"])
        .arg(&log)
        .arg(common::cli::irvm_bin())
        .args(["dump", "--output=metadata"])
        .arg(&big)
        .output()
        .unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("ptrace") {
        eprintln!("skipping: strace cannot trace here");
        return;
    }
    assert!(out.status.success(), "{out:?}");
    let log = std::fs::read_to_string(&log).unwrap();
    let path = big.display().to_string();
    let calls: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("\"{path}\"")) && !l.contains("execve("))
        .collect();
    let opens = calls.iter().filter(|l| l.contains("open")).count();
    let stats = calls.iter().filter(|l| l.contains("stat")).count();
    assert_eq!((stats, opens), (1, 1), "{calls:#?}");
}

#[test]
fn a_rodata_compression_tag_the_schema_does_not_know_dumps_as_its_number() {
    // flatcc (iree-dump-module) prints such a tag as "NONE" followed by a
    // `compression_type` field with no value, which is not JSON; irvm
    // printed the same. iree-run-module runs the module (neither runtime
    // reads the tag), so it is not refused at load either.
    let text = "vm.module @m version 0\nvm.rodata[0] compression(7) = 05\n\
                vm.rodata[1] compression(uncompressed) = 06\nvm.rodata[2] = 07\n\
                vm.export @f\nvm.func @f() -> () {\n^bb0:\n  vm.return\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tag7.vmfb");
    std::fs::write(
        &path,
        irvm::asm::assemble(text, "tag7.vmasm").expect("assembles"),
    )
    .unwrap();
    let out = irvm_dump(&["--output=flatbuffer-json"], &path);
    assert!(out.status.success(), "{out:?}");
    let json = String::from_utf8(out.stdout).unwrap();
    assert!(
        json.contains(
            "\"rodata_segments\":[{\"compression_type_type\":7,\"embedded_data\":[5]},\
             {\"compression_type_type\":\"UncompressedDataDef\",\"compression_type\":{},\
             \"embedded_data\":[6]},{\"embedded_data\":[7]}]"
        ),
        "{json}"
    );
    let value: serde_json::Value = serde_json::from_str(&json).expect("the dump is JSON");
    assert_eq!(value["rodata_segments"][0]["compression_type_type"], 7);
}
