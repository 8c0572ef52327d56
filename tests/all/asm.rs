//! The assembler as users drive it: `irvm as`, `irvm::asm::assemble` and
//! `Module::from_file` on `.vmasm`.
//!
//! - every shared `.vmasm` (and this repo's fixtures) assembles, dumps back
//!   to its source byte for byte, and matches the reference-assembled
//!   `.vmfb` table for table, no larger in all;
//! - malformed inputs give the expected located diagnostics;
//! - random programs generated from the ISA table survive
//!   assemble → disassemble → assemble with identical bytes;
//! - `loc(...)` annotations fill a debug database that traps use.

use std::path::{Path, PathBuf};

use irvm::bytecode::disasm::{disassemble_module, DisasmOptions};
use irvm::bytecode::isa::{Bank, Field, ListKind, OpcodeSet, INSTRUCTIONS};
use irvm::Module;

use crate::common;
use crate::common::instruction_text::instruction_line;
use crate::common::paths::repo;

/// `.vmasm` files with their reference `.vmfb` beside them.
fn shared_sources() -> Option<Vec<PathBuf>> {
    let root = repo().join("../shared/conformance");
    if !root.is_dir() {
        return None;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("iree-vm-tests"))
        .ok()?
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "vmasm"))
        .collect();
    files.push(root.join("module_benchmark.vmasm"));
    files.sort();
    Some(files)
}

fn fixture_sources() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "vmasm"))
        .collect();
    files.sort();
    files
}

fn disassembly(module: &Module) -> String {
    disassemble_module(module, &DisasmOptions::default()).expect("disassembles")
}

/// Our module equals the reference's in every table the loader exposes;
/// register counts may only be higher where arguments need the room.
fn assert_same_layout(name: &str, ours: &Module, theirs: &Module) {
    assert_eq!(ours.name(), theirs.name(), "{name}: name");
    assert_eq!(ours.version(), theirs.version(), "{name}: version");
    assert_eq!(
        ours.requirements(),
        theirs.requirements(),
        "{name}: requirements"
    );
    assert_eq!(ours.types(), theirs.types(), "{name}: types");
    assert_eq!(ours.imports(), theirs.imports(), "{name}: imports");
    assert_eq!(ours.exports(), theirs.exports(), "{name}: exports");
    assert_eq!(ours.rodata_count(), theirs.rodata_count(), "{name}: rodata");
    for i in 0..ours.rodata_count() {
        assert_eq!(ours.rodata(i), theirs.rodata(i), "{name}: rodata {i}");
    }
    assert_eq!(
        ours.global_bytes_capacity(),
        theirs.global_bytes_capacity(),
        "{name}: rwdata"
    );
    assert_eq!(
        ours.global_ref_count(),
        theirs.global_ref_count(),
        "{name}: global refs"
    );
    assert_eq!(
        ours.function_count(),
        theirs.function_count(),
        "{name}: functions"
    );
    for f in 0..ours.function_count() {
        let (a, b) = (
            ours.function_descriptor(f).unwrap(),
            theirs.function_descriptor(f).unwrap(),
        );
        assert_eq!(a.bytecode_offset, b.bytecode_offset, "{name} fn{f}: offset");
        assert_eq!(a.bytecode_length, b.bytecode_length, "{name} fn{f}: length");
        assert_eq!(a.block_count, b.block_count, "{name} fn{f}: blocks");
        assert_eq!(a.requirements, b.requirements, "{name} fn{f}: requirements");
        assert_eq!(
            a.ref_register_count, b.ref_register_count,
            "{name} fn{f}: refs"
        );
        let cconv = ours.function_signature(f).unwrap().calling_convention;
        assert_eq!(
            cconv,
            theirs.function_signature(f).unwrap().calling_convention
        );
        // The reference leaves unused argument registers out of the count
        // (and its own runtime then rejects such a function); we count
        // them.
        let arg_slots: u16 = cconv
            .and_then(|c| c.strip_prefix('0'))
            .map(|c| c.split('_').next().unwrap_or(""))
            .unwrap_or("")
            .chars()
            .map(|k| match k {
                'i' | 'f' => 1,
                'I' | 'F' => 2,
                _ => 0,
            })
            .sum();
        assert_eq!(
            a.i32_register_count,
            b.i32_register_count.max(arg_slots),
            "{name} fn{f}: i32 registers"
        );
        assert_eq!(
            ours.function_bytecode(f),
            theirs.function_bytecode(f),
            "{name} fn{f}: bytecode"
        );
    }
}

#[test]
fn shared_sources_assemble_round_trip_and_match_the_reference() {
    let Some(sources) = shared_sources() else {
        eprintln!("skipping: ../shared/conformance not present");
        return;
    };
    assert_eq!(
        sources.len(),
        31,
        "30 conformance modules and module_benchmark"
    );
    let (mut ours_total, mut ref_total) = (0, 0);
    for source in &sources {
        let name = source.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(source).unwrap();
        let bytes = irvm::asm::assemble(&text, &source.display().to_string())
            .unwrap_or_else(|e| panic!("{name} does not assemble:\n{e}"));
        let reference = std::fs::read(source.with_extension("vmfb")).unwrap();
        // The FlatBuffer builders lay tables out differently (flatcc
        // clusters vtables at the end); ours tries a few write orders and
        // keeps the smallest, but the bytecode ends padded to 8 bytes as
        // iree-as-module pads it, which can cost a few bytes.
        assert!(
            bytes.len() <= reference.len() + 8,
            "{name}: {} bytes, reference {}",
            bytes.len(),
            reference.len()
        );
        ours_total += bytes.len();
        ref_total += reference.len();
        let ours = Module::from_bytes(bytes).expect("our output loads");
        assert_eq!(
            disassembly(&ours),
            text,
            "{name}: disassembly differs from the source"
        );
        let theirs = Module::from_bytes(reference).unwrap();
        assert_same_layout(&name, &ours, &theirs);
    }
    eprintln!("31 sources: {ours_total} bytes assembled, reference {ref_total}");
    assert!(
        ours_total <= ref_total,
        "{ours_total} bytes, reference {ref_total}"
    );
}

#[test]
fn fixtures_assemble_and_round_trip() {
    for source in fixture_sources() {
        let text = std::fs::read_to_string(&source).unwrap();
        let module = Module::from_file(&source)
            .unwrap_or_else(|e| panic!("{} does not load: {e}", source.display()));
        // Hand-written sources need not be in the printer's canonical form
        // (pairs in lists, say); their disassembly must be a fixed point.
        let listing = disassembly(&module);
        let again = Module::from_assembly(&listing, "listing.vmasm").unwrap();
        assert_eq!(disassembly(&again), listing, "{}", source.display());
        let _ = text;
        let reference = source.with_extension("vmfb");
        if reference.exists() {
            let theirs = Module::from_file(&reference).unwrap();
            assert_eq!(disassembly(&theirs), listing, "{}", source.display());
            assert_same_layout(&source.display().to_string(), &module, &theirs);
        }
    }
}

#[test]
fn irvm_as_writes_a_module_and_reads_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo().join("tests/data/limits.vmasm");
    let out = dir.path().join("m.vmfb");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args(["as", "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&source).unwrap();
    assert_eq!(
        disassembly(&Module::from_file(&out).unwrap()),
        disassembly(&Module::from_file(&source).unwrap())
    );

    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args(["as", "--output=-", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout, std::fs::read(&out).unwrap());
}

/// (source, [(line, column, message fragment)]): every listed diagnostic
/// must be reported, each at its place.
/// A diagnostic expected at (line, column) containing the text.
type Expected = (usize, usize, &'static str);

const MALFORMED: &[(&str, &[Expected])] = &[
    (
        "vm.module @m version 0\nvm.func @f() -> () {\n^bb0:\n  %i1 = vm.cmp.lte.i32.s %i0, %i0\n  vm.return\n}\n",
        &[(4, 9, "unknown instruction 'vm.cmp.lte.i32.s'; did you mean 'vm.cmp.lt.i32.s'?")],
    ),
    (
        "vm.module @m version 0\nvm.func @f() -> () {\n^bb0:\n  vm.br ^bb9()\n}\n",
        &[(4, 9, "branch to undefined block ^bb9")],
    ),
    (
        "vm.module @m version 0\nvm.func @f() -> () {\n^bb0:\n  %i0 = vm.add.i32 %i1, %r0\n  %i0:1 = vm.add.i32 %i1, %i2\n  vm.return\n}\n",
        &[
            (4, 25, "expected a register like %i0 (i32 operand), found '%r0'"),
            (5, 3, "i32 operands are single registers: write %i0"),
        ],
    ),
    (
        "vm.module @m version 0\nvm.func @f() -> () {\n^bb0:\n  %i0:2 = vm.const.i64 1\n  %i0 = vm.const.i32 99999999999999999\n  vm.fail %i0\n  vm.return\n}\n",
        &[
            (4, 3, "register pair must name adjacent registers: %i0:1"),
            (5, 22, "expected an i32 constant, found '99999999999999999'"),
            (6, 11, "vm.fail expects 2 operands (i32 register, string), found 1"),
        ],
    ),
    (
        "vm.module @m version 0\nvm.func @f() -> () {\n^bb0:\n  vm.call @nope.g()\n  %r0 = vm.const.ref.rodata 3\n  vm.return\n}\n",
        &[
            (4, 11, "call to undefined function @nope.g"),
            (5, 29, "rodata segment 3 is not declared (the module has 0)"),
        ],
    ),
    (
        "vm.module @m version 0\nvm.export @g\nvm.func @f(%i1: i32) -> () {\n^bb0:\n  vm.return\n^bb1:\n}\n",
        &[
            (3, 12, "arguments take registers in order: expected %i0 here"),
            (2, 11, "export @g names function @g, which the module does not define"),
        ],
    ),
    (
        "vm.module @m version 0\nvm.func @f() -> () {\n^bb0:\n  vm.return\n^bb1:\n}\n",
        &[(5, 1, "block ^bb1 is empty")],
    ),
    (
        "vm.module @m version 0\nvm.funky @f\nvm.func @f() -> () {\n^bb0:\n  vm.return loc(\"a.mlir\":x:1)\n",
        &[
            (2, 1, "unknown directive 'vm.funky'"),
            (5, 17, "bad location: expected \"file\":LINE:COLUMN"),
            (3, 1, "function @f is not closed"),
        ],
    ),
    (
        "vm.func @f() -> () {\n}\n",
        &[(1, 1, "expected 'vm.module @name' before anything else")],
    ),
    (
        "vm.module @m version 0\nvm.type i32\nvm.func @f() -> () {\n^bb0:\n  %r0 = vm.list.alloc %i0 : !vm.lst<i32>\n  %i0 = vm.select.i32 %i1 ? %i2 %i3\n  vm.return\n}\n",
        &[(5, 27, "expected ': !vm.list<'"), (6, 29, "expected ':'")],
    ),
];

#[test]
fn malformed_inputs_give_located_diagnostics() {
    for (source, expected) in MALFORMED {
        let errors = irvm::asm::assemble(source, "bad.vmasm")
            .expect_err("malformed input must not assemble")
            .0;
        for &(line, column, fragment) in *expected {
            assert!(
                errors
                    .iter()
                    .any(|e| e.line == line && e.column == column && e.message.contains(fragment)),
                "missing {line}:{column} {fragment:?} in:\n{}",
                errors
                    .iter()
                    .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            let shown = errors.iter().find(|e| e.line == line).unwrap().to_string();
            assert!(shown.starts_with(&format!("bad.vmasm:{line}:")), "{shown}");
            assert!(shown.contains('^'), "caret under the column: {shown}");
        }
    }
}

#[test]
fn irvm_as_reports_errors_with_a_caret_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.vmasm");
    std::fs::write(&bad, MALFORMED[0].0).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args(["as", "-o"])
        .arg(dir.path().join("x.vmfb"))
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.vmasm:4:9: error: unknown instruction 'vm.cmp.lte.i32.s'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("  %i1 = vm.cmp.lte.i32.s %i0, %i0\n          ^"),
        "{stderr}"
    );
    assert!(!dir.path().join("x.vmfb").exists());
    // `irvm run` on a broken source reports the same diagnostics.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("run")
        .arg(format!("--module={}", bad.display()))
        .arg("--function=f")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown instruction"));
}

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const TYPES: &[&str] = &["i32", "!vm.buffer", "!vm.list<i32>"];

/// The text of one operand for `field`, chosen at random but valid.
fn random_operand(rng: &mut Rng, field: &Field, blocks: usize, functions: usize) -> String {
    let i32_reg = |rng: &mut Rng| format!("%i{}", rng.below(12));
    let reg = |rng: &mut Rng, bank: Bank, can_move: bool| match bank {
        Bank::I32 | Bank::F32 => i32_reg(rng),
        Bank::I64 | Bank::F64 => {
            let n = 2 * rng.below(6);
            format!("%i{n}:{}", n + 1)
        }
        Bank::Ref => {
            let prefix = if can_move && rng.below(2) == 0 {
                'R'
            } else {
                'r'
            };
            format!("%{prefix}{}", rng.below(6))
        }
    };
    let any = |rng: &mut Rng| {
        if rng.below(3) == 0 {
            reg(rng, Bank::Ref, true)
        } else {
            i32_reg(rng)
        }
    };
    let list = |rng: &mut Rng, kind: &ListKind| {
        let n = rng.below(4);
        (0..n)
            .map(|_| match kind {
                ListKind::Of(Bank::Ref) => reg(rng, Bank::Ref, true),
                ListKind::Of(_) => i32_reg(rng),
                ListKind::Any => any(rng),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let remap = |rng: &mut Rng| {
        (0..rng.below(3))
            .map(|_| {
                if rng.below(2) == 0 {
                    format!("{}->{}", i32_reg(rng), i32_reg(rng))
                } else {
                    format!(
                        "{}->{}",
                        reg(rng, Bank::Ref, true),
                        reg(rng, Bank::Ref, false)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let label = |rng: &mut Rng| format!("^bb{}", rng.below(blocks as u64));
    match field {
        Field::Reg(bank, _) => reg(rng, *bank, false),
        Field::RefMove(_) => reg(rng, Bank::Ref, true),
        // random_instruction writes these itself.
        Field::ConstI16 | Field::SegmentSizes => {
            unreachable!("random_instruction writes {field:?}")
        }
        Field::Const(Bank::I32) => (rng.next() as i32).to_string(),
        Field::Const(Bank::I64) => (rng.next() as i64).to_string(),
        Field::Const(Bank::F32) => {
            let v = f32::from_bits(rng.next() as u32);
            if v.is_finite() { v } else { 1.5 }.to_string()
        }
        Field::Const(_) => {
            let v = f64::from_bits(rng.next());
            format!("{:e}", if v.is_finite() { v } else { -0.25 })
        }
        Field::GlobalAttr => (4 * rng.below(8)).to_string(),
        Field::FuncAttr => match rng.below(3) {
            0 => "@env.f".to_string(),
            _ => format!("@prop:{}", rng.below(functions as u64)),
        },
        Field::RodataAttr => rng.below(2).to_string(),
        Field::TypeId => TYPES[rng.below(TYPES.len() as u64) as usize].to_string(),
        Field::StringAttr => {
            let n = rng.below(6);
            let s: String = (0..n)
                .map(|_| (b'a' + rng.below(26) as u8) as char)
                .collect();
            format!("\"{s}\"")
        }
        Field::Operands(kind) | Field::Results(kind) => list(rng, kind),
        Field::BranchTarget => label(rng),
        Field::BranchOperands => remap(rng),
        Field::BranchTableCases => (0..rng.below(4))
            .map(|i| format!(", {i}: {}({})", label(rng), remap(rng)))
            .collect(),
    }
}

/// One instruction line in the canonical syntax: results, mnemonic, then
/// the operands (plain list or the table's syntax template).
fn random_instruction(rng: &mut Rng, blocks: usize, functions: usize) -> String {
    let candidates: Vec<_> = INSTRUCTIONS
        .iter()
        .filter(|i| i.set != OpcodeSet::Internal && i.mnemonic != "block")
        .collect();
    let info = candidates[rng.below(candidates.len() as u64) as usize];
    // Every callee here takes and returns one i32 (`0i_i`), and the
    // assembler checks calls against that: a call passes one i32 and
    // receives one, and only the import is called variadically.
    // A return gives one i32 too (each function's convention: the
    // assembler checks returns as well).
    let call = info.mnemonic.starts_with("call") || info.mnemonic == "return";
    let variadic = info.fields.contains(&Field::SegmentSizes);
    let operands: Vec<String> = info
        .fields
        .iter()
        .map(|f| match f {
            Field::ConstI16 => String::new(),
            Field::FuncAttr if variadic => "@env.f".to_string(),
            Field::Operands(_) | Field::Results(_) if call => format!("%i{}", rng.below(12)),
            Field::SegmentSizes => rng.below(4).to_string(),
            _ => random_operand(rng, f, blocks, functions),
        })
        .collect();
    instruction_line(info, &operands)
}

fn random_program(rng: &mut Rng) -> String {
    let functions = 1 + rng.below(3) as usize;
    let mut text = String::from("vm.module @prop version 0\n");
    for t in TYPES {
        text.push_str(&format!("vm.type {t}\n"));
    }
    text.push_str("vm.import @env.f cconv \"0i_i\"\nvm.rodata[0] = 0102\nvm.rodata[1] = \n\n");
    for f in 0..functions {
        let blocks = 1 + rng.below(4) as usize;
        text.push_str(&format!("vm.func @fn{f}(%i0: i32) -> (i32) {{\n"));
        for b in 0..blocks {
            text.push_str(&format!("^bb{b}:\n"));
            for _ in 0..1 + rng.below(8) {
                text.push_str("  ");
                text.push_str(&random_instruction(rng, blocks, functions));
                text.push('\n');
            }
        }
        text.push_str("  vm.return %i0\n}\n\n");
    }
    text
}

#[test]
fn random_programs_from_the_isa_table_reassemble_to_identical_bytes() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut instructions = 0;
    for case in 0..400 {
        let text = random_program(&mut rng);
        instructions += text.lines().filter(|l| l.starts_with("  ")).count();
        let first = irvm::asm::assemble(&text, "prop.vmasm")
            .unwrap_or_else(|e| panic!("case {case} does not assemble:\n{e}\n{text}"));
        let module = Module::from_bytes(first.clone())
            .unwrap_or_else(|e| panic!("case {case} does not load: {e}\n{text}"));
        let listing = disassembly(&module);
        let second = irvm::asm::assemble(&listing, "listing.vmasm")
            .unwrap_or_else(|e| panic!("case {case}: listing does not assemble:\n{e}\n{listing}"));
        assert!(
            first == second,
            "case {case}: bytes differ after a round trip\n{text}\n---\n{listing}"
        );
    }
    eprintln!(
        "400 random programs, {instructions} instructions: identical bytes after a round trip"
    );
}

#[test]
fn locations_fill_the_debug_database_and_locate_traps() {
    let source = repo().join("examples/fib.vmasm");
    let module = Module::from_file(&source).unwrap();
    let db = module
        .debug_database()
        .expect("locations make a debug database");
    assert_eq!(db.location_count(), 16);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("run")
        .arg(format!("--module={}", source.display()))
        .args(["--function=fib", "--input=50"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Line 33 of examples/fib.vmasm is the vm.fail.
    let line33 = std::fs::read_to_string(&source)
        .unwrap()
        .lines()
        .nth(32)
        .unwrap()
        .to_string();
    assert!(line33.contains("vm.fail"), "{line33}");
    assert!(
        stderr.contains("fib.vmasm:33:3: error: OUT_OF_RANGE: fib(n) overflows i32 for n > 46"),
        "{stderr}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("run")
        .arg(format!("--module={}", source.display()))
        .args(["--function=fib", "--input=20"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "EXEC @fib\nresult[0]: i32=6765\n"
    );
}

/// With the reference tools installed, they read what we write: the
/// debug database's location count and the function results.
#[test]
fn reference_tools_read_our_output() {
    let Some(bin) = common::peer_bin(&["iree-dump-module"]) else {
        common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("examples/fib.vmasm")).unwrap();
    let path = dir.path().join("fib.vmfb");
    std::fs::write(&path, irvm::asm::assemble(&text, "fib.vmasm").unwrap()).unwrap();
    let dump = std::process::Command::new(bin.join("iree-dump-module"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&dump.stdout).contains("Locations: 16"));
    let run = std::process::Command::new(bin.join("iree-run-module"))
        .arg(format!("--module={}", path.display()))
        .args(["--function=fib", "--input=20"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&run.stdout).contains("i32=6765"));
}

#[test]
fn named_globals_are_laid_out_like_the_reference() {
    let source = "vm.module @g version 0\nvm.type !vm.buffer\nvm.global.i64 private mutable @wide\nvm.global.i32 mutable @counter = 0 : i32\nvm.global.ref @buf : !vm.buffer\n\nvm.export @bump\nvm.func @bump() -> (i32) {\n^bb0:\n  %i0 = vm.global.load.i32 @counter\n  %i1 = vm.const.i32 1\n  %i0 = vm.add.i32 %i0, %i1\n  vm.global.store.i32 %i0, @counter\n  %i2:3 = vm.global.load.i64 @wide\n  %r0 = vm.global.load.ref @buf : !vm.buffer\n  vm.return %i0\n}\n";
    let module = Module::from_assembly(source, "g.vmasm").unwrap();
    // Sizes ascending from offset 0, each group aligned to its size; refs
    // numbered in order.
    let listing = disassembly(&module);
    assert!(
        listing.contains("%i0 = vm.global.load.i32 .rwdata[0]"),
        "{listing}"
    );
    assert!(
        listing.contains("vm.global.store.i32 %i0, .rwdata[0]"),
        "{listing}"
    );
    assert!(
        listing.contains("%i2:3 = vm.global.load.i64 .rwdata[8]"),
        "{listing}"
    );
    assert!(
        listing.contains("%r0 = vm.global.load.ref .refs[0] : !vm.buffer"),
        "{listing}"
    );
    assert_eq!(module.global_bytes_capacity(), 16);
    assert_eq!(module.global_ref_count(), 1);
    let wrong = source.replace("vm.global.load.i64 @wide", "vm.global.load.i64 @counter");
    let errors = irvm::asm::assemble(&wrong, "g.vmasm").unwrap_err();
    assert!(
        errors
            .to_string()
            .contains("global '@counter' holds 4 bytes but is accessed as 8 bytes"),
        "{errors}"
    );
}

/// Inputs the assembler fuzz target once crashed on: each must now give
/// diagnostics or a module, never a panic.
#[test]
fn fuzz_regressions_do_not_panic() {
    let dir = repo().join("tests/data/asm_regressions");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_string();
        let _ = irvm::asm::assemble(&text, &path.display().to_string());
    }
}

/// stdout and exit code of `program [pre...] --module=M --function=F --input=V`.
fn run_tool(
    program: &Path,
    pre: &[&str],
    module: &Path,
    function: &str,
    input: &str,
) -> (String, i32) {
    let mut cmd = std::process::Command::new(program);
    cmd.args(pre)
        .arg(format!("--module={}", module.display()))
        .arg(format!("--function={function}"));
    if !input.is_empty() {
        cmd.arg(format!("--input={input}"));
    }
    let out = cmd.output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn irvm_as(source: &Path, out: &Path) {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args(["as", "-o"])
        .arg(out)
        .arg(source)
        .status()
        .unwrap();
    assert!(status.success(), "irvm as {}", source.display());
}

#[test]
fn reference_spellings_assemble_and_run() {
    let source = repo().join("tests/data/reference_syntax.vmasm");
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.vmfb");
    irvm_as(&source, &ours);
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    // 7 stored at offset 4 by the plain spelling, read back, stored again by
    // the disassembler's spelling and read: 7 + 7.
    let expected = ("EXEC @indirect\nresult[0]: i32=14\n".to_string(), 0);
    assert_eq!(run_tool(irvm, &["run"], &ours, "indirect", "7"), expected);
    let Some(peer) = common::peer_bin(&["iree-run-module", "iree-as-module"]) else {
        eprintln!("skipping the reference half: IREE tools not installed");
        return;
    };
    // iree-as-module takes only the plain spellings.
    let plain = dir.path().join("plain.vmasm");
    let text = std::fs::read_to_string(&source).unwrap();
    let text: String = text
        .lines()
        .filter(|l| !l.contains(".rwdata[%") && !l.contains("vm.add.i32"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("vm.return %i3", "vm.return %i2");
    std::fs::write(&plain, text).unwrap();
    let theirs = dir.path().join("theirs.vmfb");
    let status = std::process::Command::new(peer.join("iree-as-module"))
        .arg(format!("--output={}", theirs.display()))
        .arg(&plain)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "iree-as-module refuses the plain spellings"
    );
    let ours_plain = dir.path().join("ours_plain.vmfb");
    irvm_as(&plain, &ours_plain);
    let reference = run_tool(&peer.join("iree-run-module"), &[], &theirs, "indirect", "7");
    assert_eq!(
        reference,
        ("EXEC @indirect\nresult[0]: i32=7\n".to_string(), 0)
    );
    assert_eq!(
        run_tool(irvm, &["run"], &ours_plain, "indirect", "7"),
        reference
    );
    assert_eq!(
        run_tool(
            &peer.join("iree-run-module"),
            &[],
            &ours_plain,
            "indirect",
            "7"
        ),
        reference
    );
}

#[test]
fn switch_ref_records_the_operand_type() {
    let source = repo().join("tests/data/switch_ref.vmasm");
    let module = Module::from_file(&source).unwrap();
    assert!(
        !module.types().iter().any(|t| t.contains("vm.ref<?>")),
        "types: {:?}",
        module.types()
    );
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.vmfb");
    irvm_as(&source, &ours);
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    for (input, picked) in [("0", "0"), ("1", "1"), ("2", "0")] {
        let expected = (format!("EXEC @pick\nresult[0]: i32={picked}\n"), 0);
        assert_eq!(run_tool(irvm, &["run"], &ours, "pick", input), expected);
        if let Some(peer) = common::peer_bin(&["iree-run-module", "iree-as-module"]) {
            assert_eq!(
                run_tool(&peer.join("iree-run-module"), &[], &ours, "pick", input),
                expected
            );
        }
    }
}

/// Constant spellings and what iree-as-module makes of them (recorded from
/// iree-as-module + iree-run-module 3.13; `None`: it refuses the text).
/// Integers read as `strtol` with base 0 in a 16/32-byte buffer (octal,
/// hex, trailing text ignored, i32 keeps the low bits); floats as
/// `strtof`/`strtod` reading the whole text and refusing `ERANGE`.
const CONSTANT_SPELLINGS: &[(&str, &str, Option<&str>)] = &[
    ("i32", "4294967296", Some("i32=0")),
    ("i32", "4294967297", Some("i32=1")),
    ("i32", "1.5", Some("i32=1")),
    ("i32", "1e3", Some("i32=1")),
    ("i32", "017", Some("i32=15")),
    ("i32", "5abc", Some("i32=5")),
    ("i32", "-2147483649", Some("i32=2147483647")),
    ("i32", "99999999999", Some("i32=1215752191")),
    ("i32", "99999999999999999", None),
    ("i32", "-0x8", Some("i32=-8")),
    ("i64", "18446744073709551615", None),
    ("i64", "9223372036854775808", None),
    (
        "i64",
        "-9223372036854775808",
        Some("i64=-9223372036854775808"),
    ),
    ("i64", "12abc", Some("i64=12")),
    ("f32", "0x1p3", Some("f32=8")),
    ("f32", "1e3", Some("f32=1000")),
    ("f32", "0x1.8p1", Some("f32=3")),
    ("f32", "INF", Some("f32=inf")),
    ("f32", "1.0e-40", None),
    ("f32", "1e-45", None),
    ("f32", "1e39", None),
    ("f32", "1.5x", None),
    ("f64", "1.0e-320", None),
    ("f64", "1e309", None),
    ("f64", "0x1p-1074", Some("f64=4.94066e-324")),
    ("f64", ".5", Some("f64=0.5")),
    ("f64", "5.", Some("f64=5")),
    ("f64", "1e", None),
];

fn constant_module(ty: &str, literal: &str) -> String {
    let reg = if ty.ends_with("64") { "%i0:1" } else { "%i0" };
    format!(
        "vm.module @p version 0\nvm.type i32\n\nvm.export @main\nvm.func @main() -> ({ty}) {{\n^bb0:\n  {reg} = vm.const.{ty} {literal}\n  vm.return {reg}\n}}\n"
    )
}

#[test]
fn constant_spellings_read_as_the_reference_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let peer = common::peer_bin(&["iree-run-module", "iree-as-module"]);
    for (k, &(ty, literal, expected)) in CONSTANT_SPELLINGS.iter().enumerate() {
        let source = dir.path().join(format!("c{k}.vmasm"));
        std::fs::write(&source, constant_module(ty, literal)).unwrap();
        let ours = dir.path().join(format!("c{k}.vmfb"));
        let assembled = std::process::Command::new(irvm)
            .args(["as", "-o"])
            .arg(&ours)
            .arg(&source)
            .output()
            .unwrap();
        assert_eq!(
            assembled.status.success(),
            expected.is_some(),
            "vm.const.{ty} {literal}: {}",
            String::from_utf8_lossy(&assembled.stderr)
        );
        let Some(value) = expected else { continue };
        let want = (format!("EXEC @main\nresult[0]: {value}\n"), 0);
        assert_eq!(
            run_tool(irvm, &["run"], &ours, "main", ""),
            want,
            "{ty} {literal}"
        );
        if let Some(peer) = &peer {
            let theirs = dir.path().join(format!("c{k}.ref.vmfb"));
            let status = std::process::Command::new(peer.join("iree-as-module"))
                .arg(format!("--output={}", theirs.display()))
                .arg(&source)
                .output()
                .unwrap()
                .status;
            assert!(status.success(), "iree-as-module: vm.const.{ty} {literal}");
            let run = |m: &Path| run_tool(&peer.join("iree-run-module"), &[], m, "main", "");
            assert_eq!(run(&theirs), want, "reference on its own: {ty} {literal}");
            assert_eq!(run(&ours), want, "reference on irvm as: {ty} {literal}");
        }
    }
    if peer.is_none() {
        common::report_missing_peer();
    }
}

/// An i64/f64 argument after an odd number of i32 slots starts at the next
/// even slot, where the runtime puts it (IREE's rule); the assembler
/// expects it there and the value arrives.
#[test]
fn wide_arguments_take_even_slots() {
    let source = "vm.module @m version 0\nvm.export @f\nvm.export @g\n\
        vm.func @f(%i0: i32, %i2:3: i64) -> (i64) {\n^bb0:\n  vm.return %i2:3\n}\n\
        vm.func @g(%i0: i32, %i2:3: f64, %i4: i32) -> (i32) {\n^bb0:\n  %i5 = vm.add.i32 %i0, %i4\n  vm.return %i5\n}\n";
    let module = Module::from_assembly(source, "wide.vmasm").expect("assembles");
    let mut ctx = irvm::Context::new(&irvm::TypeRegistry::new());
    ctx.register_module(module).expect("registers");
    let f = ctx.function("f").unwrap();
    let out = ctx
        .invoke(&f, &[irvm::Value::I32(7), irvm::Value::I64(100_000)])
        .unwrap();
    assert_eq!(format!("{out:?}"), "[I64(100000)]");
    let g = ctx.function("g").unwrap();
    let out = ctx
        .invoke(
            &g,
            &[
                irvm::Value::I32(7),
                irvm::Value::F64(1.5),
                irvm::Value::I32(5),
            ],
        )
        .unwrap();
    assert_eq!(format!("{out:?}"), "[I32(12)]");
    // The disassembly names the slots the runtime reads (iree-dump-module
    // prints the packed `%i1:2` here, which would read the wrong slots).
    let text = disassemble_module(
        &Module::from_assembly(source, "wide.vmasm").expect("assembles"),
        &DisasmOptions::default(),
    )
    .expect("disassembles");
    assert!(text.contains("@f(%i0: i32, %i2:3: i64)"), "{text}");
    assert!(
        text.contains("@g(%i0: i32, %i2:3: f64, %i4: i32)"),
        "{text}"
    );
    // The packed spelling is refused with the slot it should use.
    let packed = source.replace("%i2:3: i64", "%i1:2: i64");
    let errors = irvm::asm::assemble(&packed, "wide.vmasm").unwrap_err().0;
    assert!(
        errors
            .iter()
            .any(|e| e.message.contains("expected %i2:3 here")),
        "{errors:?}"
    );
}

#[test]
fn a_br_table_past_its_16_bit_case_count_is_refused_by_name() {
    // 65,535 cases fit the 16-bit count field; one more would wrap it to 0.
    let table = |n: usize| {
        let cases: Vec<String> = (0..n).map(|i| format!("{i}: ^bb1()")).collect();
        format!(
            "vm.module @bt version 0
vm.export @f
vm.func @f(%i0: i32) -> (i32) {{
^bb0:
  vm.br_table %i0 {{ default: ^bb1(), {} }}
^bb1:
  vm.return %i0
}}",
            cases.join(", ")
        )
    };
    let most = u16::MAX as usize;
    if let Err(e) = Module::from_assembly(&table(most), "bt.vmasm") {
        panic!("65,535 cases must assemble: {}", &e.to_string()[..300]);
    }
    for n in [most + 1, most + 2] {
        let e = Module::from_assembly(&table(n), "bt.vmasm").expect_err("too many cases");
        assert!(
            e.to_string()
                .contains("too many cases: a br_table has at most 65535"),
            "{n} cases: {}",
            &e.to_string()[..200.min(e.to_string().len())]
        );
    }
}

#[test]
fn a_refused_function_header_is_one_error_and_the_rest_still_checked() {
    // The body of a function whose header is refused is skipped to its
    // '}' (no error per body line), exports of it and calls to it add
    // nothing, and the functions after it are still checked.
    let source = "vm.module @m version 0
vm.type i32

vm.export @f
vm.func @f(%i0 i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 1
  %i2 = vm.add.i32 %i0, %i1
  vm.return %i2
}

vm.export @g
vm.func @g(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call @f(%i0)
  %i2 = vm.nope.i32 %i1
  vm.return %i2
}
";
    let errors = irvm::asm::assemble(source, "bad.vmasm").unwrap_err().0;
    let seen: Vec<String> = errors
        .iter()
        .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
        .collect();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(
        seen[0].starts_with("5:12: expected an argument like"),
        "{seen:#?}"
    );
    assert!(
        seen[1].starts_with("16:") && seen[1].contains("vm.nope.i32"),
        "{seen:#?}"
    );
}

#[test]
fn a_call_with_mlirs_function_type_is_told_to_drop_it() {
    let source = "vm.module @m version 0
vm.type i32
vm.type i64

vm.func @make(%i0:1: i64) -> (i32) {
^bb0:
  %i2 = vm.trunc.i64.i32 %i0:1
  vm.return %i2
}

vm.export @f
vm.func @f(%i0:1: i64) -> (i32) {
^bb0:
  %i2 = vm.call @make(%i0:1) : (i64) -> (i32)
  vm.return %i2
}
";
    let errors = irvm::asm::assemble(source, "bad.vmasm").unwrap_err().0;
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!((e.line, e.column), (14, 30), "{e}");
    assert!(
        e.message.contains("takes no function type") && e.message.contains("': (i64) -> (i32)'"),
        "{e}"
    );
}

#[test]
fn a_calling_convention_that_does_not_parse_is_refused_where_it_is_declared() {
    // Neither is called: both were refused only at a call site before.
    let source = "vm.module @m version 0
vm.import @env.f cconv \"0i_q\"

vm.export @g
vm.func @g(%i0: i32) -> (i32) cconv \"0ii\" {
^bb0:
  vm.return %i0
}
";
    let errors = irvm::asm::assemble(source, "bad.vmasm").unwrap_err().0;
    let seen: Vec<String> = errors
        .iter()
        .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
        .collect();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(
        seen[0].starts_with("2:24: calling convention \"0i_q\" does not parse"),
        "{seen:#?}"
    );
    assert!(
        seen[1].starts_with("5:37: calling convention \"0ii\" does not parse"),
        "{seen:#?}"
    );
}

#[test]
fn a_type_field_takes_only_a_type_name() {
    // Text after a wrong separator was entered in the type table as a
    // type named `%i0 -> !vm.buffer`.
    for (operands, found) in [
        ("%r0, %i0 : %i0 -> !vm.buffer", "%i0 -> !vm.buffer"),
        (
            "%r0, %i0 : !vm.buffer -> !vm.buffer",
            "!vm.buffer -> !vm.buffer",
        ),
        ("%r0, %i0 : (%i0) -> !vm.buffer", "(%i0) -> !vm.buffer"),
        ("%r0, %i0 : !vm.list<i32", "!vm.list<i32"),
    ] {
        let source = format!(
            "vm.module @m version 0\nvm.type !vm.buffer\nvm.export @f\n\
             vm.func @f(%r0: !vm.list<!vm.buffer>, %i0: i32) -> (!vm.buffer) {{\n^bb0:\n  \
             %r1 = vm.list.get.ref {operands}\n  vm.return %r1\n}}\n"
        );
        let errors = irvm::asm::assemble(&source, "t.vmasm").unwrap_err().0;
        assert_eq!(errors.len(), 1, "{operands}: {errors:#?}");
        assert_eq!(
            errors[0].message,
            format!("expected a type (such as i32, !vm.buffer or !vm.list<?>), found '{found}'"),
            "{operands}"
        );
        assert_eq!(errors[0].line, 6, "{operands}");
    }
    // Type names of every shape still assemble.
    for ty in [
        "!vm.buffer",
        "vm.buffer",
        "!vm.list<!vm.list<i32>>",
        "!vm.ref<?>",
    ] {
        let source = format!(
            "vm.module @m version 0\nvm.type !vm.buffer\nvm.export @f\n\
             vm.func @f(%r0: !vm.list<!vm.buffer>, %i0: i32) -> (!vm.ref<?>) {{\n^bb0:\n  \
             %r1 = vm.list.get.ref %r0, %i0 : {ty}\n  vm.return %r1\n}}\n"
        );
        irvm::asm::assemble(&source, "t.vmasm").unwrap_or_else(|e| panic!("{ty}: {e}"));
    }
}

#[test]
fn a_variadic_calling_convention_is_refused_on_a_function_definition() {
    // `irvm as` wrote the module, which every loader then refused (irvm:
    // "internal functions cannot have variadic (`C...D`) arguments";
    // iree-run-module: "internal functions cannot accept variadic
    // arguments"). An import may still be variadic.
    let source = "vm.module @m version 0
vm.import @env.f cconv \"0CiD_i\"

vm.export @g
vm.func @g(%i0: i32) -> () cconv \"0CiD_v\" {
^bb0:
  vm.return
}
";
    let errors = irvm::asm::assemble(source, "variadic.vmasm").unwrap_err().0;
    let seen: Vec<String> = errors
        .iter()
        .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
        .collect();
    assert_eq!(
        seen,
        ["5:34: calling convention \"0CiD_v\" is variadic: only imports may take variadic (`C...D`) arguments"]
    );
}

/// A module of many functions assembles in time linear in their count:
/// each function's name is looked up (a second definition, every call, an
/// export) by name, not by scanning those defined before. Before session
/// 18 they were scanned: 40,000 functions that each call the next took 38
/// s in a debug build (80,000 without calls 15 s in release); now under 2.
#[test]
fn a_module_of_many_functions_assembles_in_linear_time() {
    const COUNT: usize = 40_000;
    let mut text = String::from("vm.module @chain version 0\nvm.export @f0\n");
    for i in 0..COUNT {
        let call = if i + 1 < COUNT {
            format!("  %i0 = vm.call @f{}(%i0)\n", i + 1)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "vm.func @f{i}(%i0: i32) -> (i32) {{\n^bb0:\n{call}  vm.return %i0\n}}\n"
        ));
    }
    let started = std::time::Instant::now();
    let module = Module::from_assembly(&text, "chain.vmasm").expect("assembles");
    let took = started.elapsed();
    assert_eq!(module.function_count(), COUNT);
    assert!(
        took < std::time::Duration::from_secs(15),
        "{COUNT} functions took {took:?} to assemble"
    );
}

/// An internal function's name is kept only in a debug database, which
/// `iree-as-module` never writes (its `iree-dump-module` shows no name for
/// the function; iree-run-module's backtrace says `m@0`). `irvm as` writes
/// one when the text has a `loc(...)` or `vm.source_map`s, and then traps
/// name the function as written; without one irvm's tools name it as the
/// disassembler does, by its ordinal (`fn1`).
#[test]
fn internal_function_names_survive_only_in_a_debug_database() {
    let plain = "vm.module @m version 0
vm.export @main
vm.func @main(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call @odd(%i0)
  vm.return %i1
}
vm.func @odd(%i0: i32) -> (i32) {
^bb0:
  vm.fail %i0, \"trap inside odd\"
}
";
    let with_loc = plain.replace(
        "\"trap inside odd\"",
        "\"trap inside odd\" loc(\"odd.mlir\":12:3)",
    );
    let with_maps = format!("{plain}vm.source_map \"main\" = []\nvm.source_map \"odd\" = []\n");
    let dir = tempfile::tempdir().unwrap();
    for (name, text, innermost) in [
        ("plain", plain.to_string(), "[0] m.fn1+0x00000001\n"),
        ("loc", with_loc, "[0] m.odd+0x00000001 odd.mlir:12:3\n"),
        ("maps", with_maps, "[0] m.odd+0x00000001\n"),
    ] {
        let path = dir.path().join(format!("{name}.vmasm"));
        std::fs::write(&path, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
            .arg("run")
            .arg(format!("--module={}", path.display()))
            .args(["--function=main", "--input=7"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(innermost) && stderr.contains("[1] m.main+0x00000001"),
            "{name}: {stderr}"
        );
    }
    let Some(bin) = common::peer_bin(&["iree-as-module", "iree-dump-module", "iree-run-module"])
    else {
        common::report_missing_peer();
        return;
    };
    let source = dir.path().join("plain.vmasm");
    let theirs = dir.path().join("theirs.vmfb");
    let status = std::process::Command::new(bin.join("iree-as-module"))
        .arg(format!("--output={}", theirs.display()))
        .arg(&source)
        .status()
        .unwrap();
    assert!(status.success());
    let dump = std::process::Command::new(bin.join("iree-dump-module"))
        .arg(&theirs)
        .output()
        .unwrap();
    let dump = String::from_utf8_lossy(&dump.stdout);
    // No debug database: the function table names only the export, and
    // the disassembly calls the internal function by its ordinal.
    assert!(
        !dump.contains("odd\n") && dump.contains("vm.func @fn1("),
        "{dump}"
    );
    let run = std::process::Command::new(bin.join("iree-run-module"))
        .arg(format!("--module={}", theirs.display()))
        .args(["--function=main", "--input=7"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("bytecode m@0:"), "{stderr}");
}
