//! `irvm dump --output=assembly`: text `irvm as` reads back into a module
//! that loads, verifies and runs as the original does. Every module
//! iree-compile made for the corpora (`tests/onnx/`, `tests/models/`, both
//! backends; the light models when they are cached) goes through it and is
//! compared table by table, function bytecode byte for byte; a sample of
//! the recorded runs is replayed on reassembled modules in `models.rs`
//! (`onnx_sample_runs_identically_after_the_assembly_round_trip`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use irvm::bytecode::disasm::{disassemble_module, DisasmOptions, TextForm};
use irvm::loader::{DebugError, Location};
use irvm::Module;

/// The text of `module` in `form`.
pub(crate) fn text_of(module: &Module, form: TextForm) -> String {
    let options = DisasmOptions {
        form,
        ..Default::default()
    };
    disassemble_module(module, &options).expect("prints")
}

/// `module` printed in the assembly form and assembled again.
pub(crate) fn reassembled(module: &Module, name: &str) -> Module {
    assembled(&text_of(module, TextForm::Assembly), name)
}

/// The module `text` assembles to.
fn assembled(text: &str, name: &str) -> Module {
    let bytes = irvm::asm::assemble(text, name).unwrap_or_else(|e| panic!("{name}:\n{e}"));
    Module::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: reassembled module: {e}"))
}

/// Every `.vmfb` iree-compile made for the corpora.
fn compiled_modules() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut dirs: Vec<PathBuf> = ["onnx", "onnx/embedded", "models", "models/embedded"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    dirs.push(root.join("models/system"));
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "vmfb"))
        .collect();
    files.sort();
    files
}

fn location_text(debug: &irvm::loader::DebugDatabase<'_>, i: usize) -> String {
    match debug.location(i as i64) {
        Ok(location) => format!("{location:?}"),
        Err(DebugError::UnknownKind { tag, .. }) => format!("kind {tag}"),
        Err(e) => panic!("location {i}: {e}"),
    }
}

/// Asserts that `ours` holds what `theirs` holds, table by table.
pub(crate) fn assert_same_tables(name: &str, ours: &Module, theirs: &Module) {
    assert_eq!(ours.name(), theirs.name(), "{name}: name");
    assert_eq!(ours.version(), theirs.version(), "{name}: version");
    assert_eq!(
        ours.requirements(),
        theirs.requirements(),
        "{name}: requirements"
    );
    assert_eq!(ours.attrs(), theirs.attrs(), "{name}: attributes");
    assert_eq!(
        ours.dependencies(),
        theirs.dependencies(),
        "{name}: dependencies"
    );
    assert_eq!(ours.types(), theirs.types(), "{name}: types");
    assert_eq!(ours.imports(), theirs.imports(), "{name}: imports");
    assert_eq!(ours.exports(), theirs.exports(), "{name}: exports");
    assert_eq!(ours.rodata_count(), theirs.rodata_count(), "{name}: rodata");
    for i in 0..ours.rodata_count() {
        assert_eq!(ours.rodata(i), theirs.rodata(i), "{name}: rodata {i}");
        assert_eq!(
            ours.rodata_compression(i),
            theirs.rodata_compression(i),
            "{name}: rodata {i} compression"
        );
        let external = theirs.rodata_is_external(i);
        assert_eq!(
            ours.rodata_is_external(i),
            external,
            "{name}: rodata {i} external"
        );
        if external == Some(true) {
            let start = ours.rodata_range(i).expect("in range").start;
            assert_eq!(
                start % 64,
                0,
                "{name}: external rodata {i} is 64-byte aligned"
            );
        }
    }
    assert_eq!(
        (ours.global_bytes_capacity(), ours.global_ref_count()),
        (theirs.global_bytes_capacity(), theirs.global_ref_count()),
        "{name}: module state"
    );
    assert_eq!(ours.rwdata_sizes(), theirs.rwdata_sizes(), "{name}: rwdata");
    assert_eq!(
        ours.function_count(),
        theirs.function_count(),
        "{name}: functions"
    );
    for f in 0..ours.function_count() {
        assert_eq!(
            ours.function_descriptor(f),
            theirs.function_descriptor(f),
            "{name} fn{f}: descriptor"
        );
        assert_eq!(
            ours.function_bytecode(f),
            theirs.function_bytecode(f),
            "{name} fn{f}: bytecode"
        );
        assert_eq!(
            ours.function_signature(f),
            theirs.function_signature(f),
            "{name} fn{f}: signature"
        );
    }
    let (a, b) = (ours.debug_database(), theirs.debug_database());
    assert_eq!(a.is_some(), b.is_some(), "{name}: debug database");
    if let (Some(a), Some(b)) = (a, b) {
        assert_eq!(a.location_count(), b.location_count(), "{name}: locations");
        for i in 0..a.location_count() {
            assert_eq!(
                location_text(&a, i),
                location_text(&b, i),
                "{name}: location {i}"
            );
        }
        assert_eq!(
            a.source_map_count(),
            b.source_map_count(),
            "{name}: source maps"
        );
        for i in 0..a.source_map_count() {
            let (x, y) = (a.source_map(i).unwrap(), b.source_map(i).unwrap());
            assert_eq!(x.local_name(), y.local_name(), "{name}: source map {i}");
            assert!(
                x.entries().eq(y.entries()),
                "{name}: source map {i} entries"
            );
        }
    }
}

#[test]
fn every_compiled_module_round_trips_through_the_assembly_form() {
    let files = compiled_modules();
    assert!(
        files.len() >= 500,
        "the corpora hold {} modules",
        files.len()
    );
    let light = dirs_home()
        .map(|h| h.join(".cache/irvm-light-models"))
        .and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "vmfb"));
    let files: Vec<PathBuf> = files.into_iter().chain(light).collect();
    // Debug builds spend most of it writing FlatBuffers: one thread a core.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(path) =
                    files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    round_trip(path);
                }
            });
        }
    });
}

/// Prints `path` in the assembly form, assembles it, and compares.
fn round_trip(path: &Path) {
    let name = path.display().to_string();
    let original = Module::from_file(path).expect("loads");
    let text = text_of(&original, TextForm::Assembly);
    let ours = assembled(&text, &name);
    assert_same_tables(&name, &ours, &original);
    // Printed again, it reads the same: nothing was left behind.
    assert_eq!(
        text_of(&ours, TextForm::Assembly),
        text,
        "{name}: the reassembled module's text"
    );
}

/// `irvm as`'s own modules (the test fixtures, and the conformance sources
/// when `/work/shared` is there) come back byte for byte; the reference
/// assembler's modules beside the conformance sources, table for table.
#[test]
fn assembled_modules_come_back_byte_for_byte() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let conformance = repo.join("../shared/conformance/iree-vm-tests");
    let mut sources: Vec<PathBuf> = [repo.join("tests/data"), conformance]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "vmasm"))
        .collect();
    sources.sort();
    let mut compared = 0;
    for source in &sources {
        let name = source.display().to_string();
        let text = std::fs::read_to_string(source).unwrap();
        let Ok(bytes) = irvm::asm::assemble(&text, &name) else {
            continue; // a fixture of diagnostics
        };
        let module = Module::from_bytes(bytes.clone()).expect("loads");
        let again = irvm::asm::assemble(&text_of(&module, TextForm::Assembly), &name)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            again == bytes,
            "{name}: the assembly form reassembles to other bytes"
        );
        compared += 1;
        let reference = source.with_extension("vmfb");
        if let Ok(reference) = Module::from_file(&reference) {
            assert_same_tables(&name, &reassembled(&reference, &name), &reference);
        }
    }
    assert!(
        compared >= 5,
        "{compared} of {} sources assembled",
        sources.len()
    );
    eprintln!(
        "{compared} of {} sources came back byte for byte",
        sources.len()
    );
}

fn dirs_home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

#[test]
fn shared_names_and_quoted_strings_are_what_the_disassembly_could_not_round_trip() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/onnx/test_AvgPool1d.vmfb");
    let module = Module::from_file(&path).expect("loads");
    // IREE's text: two functions printed as @__init, a string holding
    // quotes printed as it is; the assembler refuses it.
    let disassembly = text_of(&module, TextForm::Disassembly);
    let errors = irvm::asm::assemble(&disassembly, "d.vmasm").expect_err("refused");
    assert!(
        errors
            .to_string()
            .contains("function @__init is defined twice"),
        "{errors}"
    );
    // The assembly form: the internal one is @__init.1, the exported one
    // keeps the export's name, the quotes are escaped.
    let text = text_of(&module, TextForm::Assembly);
    assert!(
        text.contains("\nvm.func @__init.1() -> (!vm.ref<?>)"),
        "{text}"
    );
    assert!(text.contains("\nvm.export @__init\n"), "{text}");
    assert!(
        text.contains("vm.export @\"torch-jit-export$async\"\n"),
        "{text}"
    );
    assert!(text.contains("#hal.device.target<\\\"local\\\""), "{text}");
    assert!(text.contains("vm.call @__init.1()"), "{text}");
    assert!(text.contains("\nvm.location[0] = none\n"), "{text}");
}

#[test]
fn reflection_attributes_and_dependencies_survive_for_the_python_package_and_run() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models/params.vmfb");
    let module = Module::from_file(&path).expect("loads");
    let text = text_of(&module, TextForm::Assembly);
    assert!(
        text.contains("\nvm.dependency @io_parameters version 0\n"),
        "{text}"
    );
    assert!(text.contains("\nvm.dependency @hal version 7\n"), "{text}");
    assert!(
        text.contains("attributes {iree.abi.declaration = \"sync func @main(%input0: tensor<4xf32>) -> (%output0: tensor<4xf32>)\"}"),
        "{text}"
    );
    let ours = reassembled(&module, "params");
    let main = ours.export("main").expect("exported");
    let signature = ours.function_signature(main.internal_ordinal).unwrap();
    assert_eq!(signature.attrs.len(), 1);
    assert_eq!(signature.attrs[0].0, "iree.abi.declaration");
}

#[test]
fn the_assembly_form_reads_back_what_it_changed_names_and_strings_into() {
    // Odd names and strings, written by hand in the form's spelling.
    let source = r#"vm.module @"my mod" version 3 attributes {"odd key" = "v\"1\"", plain = "x\\y"}
vm.requires EXT_F32 | YIELD
vm.dependency optional @"dep-1" version 2
vm.rodata[0] external = 00112233
vm.rodata[1] = 44
vm.module_state global_bytes 16, global_refs 2
vm.export @"a.1" = @a
vm.export @"x-y\"z" = @"a.1"
vm.func @a() -> (i32) attributes {iree.abi.declaration = "sync func @a() -> (%o: i32)"} registers(i32: 8, ref: 1) requires(none) {
^bb0:
  %i0 = vm.call @"a.1"()
  vm.return %i0
}
vm.func @"a.1"() -> (i32) cconv "0v_i" {
^bb0:
  %i0 = vm.const.i32 7
  vm.fail %i0, "tab\there \"q\" \\ \00 end"
}
vm.location[0] = none
vm.location[1] = "f \"1\".mlir":2:3
vm.location[2] = callsite(loc[1] at loc[3])
vm.location[3] = fused<"m">[loc[1], loc[0]]
vm.location[4] = "n"(loc[2])
vm.source_map "a" = [1: loc[4]]
vm.source_map "" = []
"#;
    let bytes = irvm::asm::assemble(source, "odd.vmasm").unwrap_or_else(|e| panic!("{e}"));
    let module = Module::from_bytes(bytes).expect("loads");
    assert_eq!(module.name(), "my mod");
    assert_eq!(module.version(), 3);
    assert_eq!(module.attrs(), [("odd key", "v\"1\""), ("plain", "x\\y")]);
    assert_eq!(format!("{}", module.requirements()), "EXT_F32 | YIELD");
    let dependency = &module.dependencies()[0];
    assert_eq!(
        (
            dependency.name,
            dependency.minimum_version,
            dependency.optional
        ),
        ("dep-1", 2, true)
    );
    assert_eq!(module.rodata_is_external(0), Some(true));
    assert_eq!(module.rodata(0), Some(&[0x00, 0x11, 0x22, 0x33][..]));
    assert_eq!(module.rodata_is_external(1), Some(false));
    assert_eq!(
        (module.global_bytes_capacity(), module.global_ref_count()),
        (16, 2)
    );
    let exports = module.exports();
    assert_eq!(
        exports
            .iter()
            .map(|e| (e.local_name, e.internal_ordinal))
            .collect::<Vec<_>>(),
        [("a.1", 0), ("x-y\"z", 1)]
    );
    let descriptor = module.function_descriptor(0).unwrap();
    assert_eq!(
        (descriptor.i32_register_count, descriptor.ref_register_count),
        (8, 1)
    );
    assert!(descriptor.requirements.is_empty());
    let debug = module.debug_database().expect("written");
    assert!(matches!(
        debug.location(0),
        Err(DebugError::UnknownKind { tag: 0, .. })
    ));
    assert_eq!(
        debug.location(1).unwrap(),
        Location::FileLineCol {
            file: "f \"1\".mlir",
            line: 2,
            col: 3
        }
    );
    assert_eq!(
        debug.location(2).unwrap(),
        Location::CallSite {
            callee: 1,
            caller: 3
        }
    );
    assert_eq!(debug.source_map_count(), 2);
    // Printed again, the text reads back to the same module.
    let text = text_of(&module, TextForm::Assembly);
    assert!(
        text.contains("vm.fail %i0, \"tab\\there \\\"q\\\" \\\\ \\00 end\""),
        "{text}"
    );
    // Each function goes by its first export's name now.
    assert!(text.contains("\nvm.export @\"x-y\\\"z\"\n"), "{text}");
    assert!(text.contains("%i0 = vm.call @\"x-y\\\"z\"()"), "{text}");
    let again = Module::from_bytes(irvm::asm::assemble(&text, "again").unwrap()).unwrap();
    assert_same_tables("again", &again, &module);
}

#[test]
fn declared_tables_that_contradict_the_code_are_refused_by_line() {
    let refused = |body: &str| {
        let source =
            format!("vm.module @m\n{body}\nvm.func @f() -> () {{\n^bb0:\n  vm.return\n}}\n");
        irvm::asm::assemble(&source, "m.vmasm")
            .expect_err("refused")
            .to_string()
    };
    let e = refused("vm.location[1] = none");
    assert!(e.contains("expected vm.location[0]"), "{e}");
    let e = refused("vm.location[0] = callsite(loc[0] at loc[5])");
    assert!(
        e.contains("refers to loc[5], but the table has 1 entries"),
        "{e}"
    );
    let e = refused("vm.source_map \"f\" = [1: loc[0]]");
    assert!(
        e.contains("refers to loc[0], but the table has 0 entries"),
        "{e}"
    );
    // On the map's line, the caret under the loc that dangles (it was the
    // text's last line, column 1: the function's closing brace).
    assert!(e.contains("m.vmasm:2:25: error: source map"), "{e}");
    let e = refused("vm.requires FAST");
    assert!(e.contains("unknown feature 'FAST'"), "{e}");
    let e = refused("vm.module_state global_bytes 4");
    assert!(
        e.contains("expected 'vm.module_state global_bytes N, global_refs M'"),
        "{e}"
    );
    let e = refused("vm.dependency @hal");
    assert!(e.contains("expected 'version N'"), "{e}");
    let source = "vm.module @m\nvm.module_state global_bytes 0, global_refs 0\nvm.func @f() -> () {\n^bb0:\n  %r0 = vm.global.load.ref .refs[2] : !vm.buffer\n  vm.return\n}\n";
    let e = irvm::asm::assemble(source, "m.vmasm")
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains(
            "declares global_bytes 0, global_refs 0, but the code accesses 0 bytes and 3 refs"
        ),
        "{e}"
    );
}

#[test]
fn function_clauses_that_fall_short_of_the_code_are_refused_at_the_header() {
    let refused = |header: &str, body: &str| {
        let source =
            format!("vm.module @m\nvm.func @f(%i0: i32) -> (i32) {header} {{\n^bb0:\n{body}\n}}\n");
        irvm::asm::assemble(&source, "m.vmasm")
            .expect_err("refused")
            .to_string()
    };
    // irvm refuses %i2 in a function declaring one register at load; the
    // reference ran such a module (its verifier missed the operand).
    let e = refused(
        "registers(i32: 1, ref: 0)",
        "  %i2 = vm.const.i32 7\n  vm.return %i2",
    );
    assert!(
        e.contains("m.vmasm:2:31: error: registers(i32: 1, ref: 0) is fewer than the function uses (i32: 3, ref: 0)"),
        "{e}"
    );
    let e = refused("registers(i32: 1, ref: 16384)", "  vm.return %i0");
    assert!(e.contains("more than 16383 ref registers"), "{e}");
    // The reference verifier checks a function's instructions against the
    // function's own requirements.
    let e = refused(
        "requires(YIELD)",
        "  %i1 = vm.add.f32 %i0, %i0\n  vm.return %i1",
    );
    assert!(
        e.contains("m.vmasm:2:31: error: requires(YIELD) leaves out EXT_F32, which the function's instructions need"),
        "{e}"
    );
    // Declaring more than the code uses stays allowed.
    let source = "vm.module @m\nvm.func @f(%i0: i32) -> (i32) registers(i32: 9, ref: 2) requires(EXT_F32 | YIELD) {\n^bb0:\n  vm.return %i0\n}\n";
    irvm::asm::assemble(source, "m.vmasm").expect("assembles");
}

#[test]
fn irvm_dump_assembly_pipes_into_irvm_as_and_runs_the_same() {
    let irvm = env!("CARGO_BIN_EXE_irvm");
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models");
    let original = models.join("add.vmfb");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("add.vmfb");
    let dump = Command::new(irvm)
        .args(["dump", "--output=assembly"])
        .arg(&original)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let mut assemble = Command::new(irvm)
        .args(["as", "-", "-o"])
        .arg(&copy)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    assemble
        .stdin
        .take()
        .unwrap()
        .write_all(&dump.stdout)
        .unwrap();
    let assembled = assemble.wait_with_output().unwrap();
    assert!(
        assembled.status.success(),
        "{}",
        String::from_utf8_lossy(&assembled.stderr)
    );
    let args: Vec<String> = std::fs::read_to_string(models.join("add.args"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let run = |module: &Path| {
        let out = Command::new(irvm)
            .arg("run")
            .arg(format!("--module={}", module.display()))
            .args(&args)
            .output()
            .unwrap();
        (out.status.code(), out.stdout)
    };
    let (status, stdout) = run(&copy);
    assert_eq!(status, Some(0));
    assert_eq!((status, stdout.clone()), run(&original));
    assert_eq!(stdout, std::fs::read(models.join("add.expected")).unwrap());
}

/// Mutated modules the loader accepts are printed or refused, and what
/// prints assembles or is refused: never a panic.
#[test]
fn mutated_modules_print_and_reassemble_without_panicking() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut printed, mut reassembled) = (0, 0);
    for file in ["tests/models/params.vmfb", "tests/onnx/test_AvgPool1d.vmfb"] {
        let original = std::fs::read(repo.join(file)).unwrap();
        for _ in 0..150 {
            let mut bytes = original.clone();
            for _ in 0..1 + next() % 3 {
                let at = (next() % bytes.len() as u64) as usize;
                bytes[at] ^= 1 << (next() % 8);
            }
            let Ok(module) = Module::from_bytes(bytes) else {
                continue;
            };
            let options = DisasmOptions {
                form: TextForm::Assembly,
                ..Default::default()
            };
            let Ok(text) = disassemble_module(&module, &options) else {
                continue;
            };
            printed += 1;
            if let Ok(bytes) = irvm::asm::assemble(&text, file) {
                reassembled += 1;
                let _ = Module::from_bytes(bytes);
            }
        }
    }
    assert!(
        printed > 50 && reassembled > 20,
        "{printed} printed, {reassembled} reassembled"
    );
}

#[test]
fn a_message_of_bytes_that_are_not_utf8_loads_fails_as_iree_prints_it_and_round_trips() {
    // iree-compile writes a `vm.fail` message's bytes as the source held
    // them (`"...\ff\fe"` in MLIR); IREE runs such a module, irvm refused
    // it at load ("string attribute ... is not valid UTF-8").
    let source = "vm.module @m version 0\nvm.type i32\n\nvm.export @boom\n\
                  vm.func @boom() -> () {\n^bb0:\n  %i0 = vm.const.i32 7\n  \
                  vm.fail %i0, \"bad \\\"q\\\"\\00nul\\FF\\FE end\"\n}\n";
    let bytes = irvm::asm::assemble(source, "m.vmasm").expect("assembles");
    let raw = b"bad \"q\"\0nul\xFF\xFE end";
    assert!(
        bytes.windows(raw.len()).any(|w| w == raw),
        "the message's bytes are written as they are"
    );
    let module = Module::from_bytes(bytes).expect("loads");
    // The message as IREE prints it (`%.*s`): up to the NUL.
    let registry = irvm::TypeRegistry::new();
    let mut ctx = irvm::Context::new(&registry);
    ctx.register_module(module.clone()).unwrap();
    let f = ctx.function("m.boom").unwrap();
    let trap = ctx.invoke(&f, &[]).expect_err("fails");
    assert_eq!(
        (trap.code, trap.message.as_str()),
        (irvm::StatusCode::PermissionDenied, "bad \"q\"")
    );
    // The assembly form keeps every byte; IREE's form stops at the NUL.
    let text = text_of(&module, TextForm::Assembly);
    assert!(
        text.contains(r#"vm.fail %i0, "bad \"q\"\00nul\FF\FE end""#),
        "{text}"
    );
    let again = reassembled(&module, "m");
    assert_eq!(again.function_bytecode(0), module.function_bytecode(0));
    let iree_form = text_of(&module, TextForm::default());
    assert!(
        iree_form.contains(r#"vm.fail %i0, "bad "q"""#),
        "{iree_form}"
    );
}

/// `text` assembled, printed in the assembly form, and assembled again:
/// the module, the form's text, and the reassembled module (whose tables
/// must equal the first's).
fn through_the_form(text: &str, name: &str) -> (Module, String) {
    let module = assembled(text, name);
    let form = text_of(&module, TextForm::Assembly);
    let again = assembled(&form, name);
    assert_same_tables(name, &again, &module);
    (module, form)
}

/// The FlatBuffer root of a module's bytes.
fn root(bytes: &[u8]) -> irvm::loader::schema::BytecodeModuleDef<'_> {
    flatbuffers::size_prefixed_root::<irvm::loader::schema::BytecodeModuleDef>(bytes)
        .expect("a module")
}

const ONE_FUNCTION: &str = "vm.export @f\nvm.func @f() -> () {\n^bb0:\n  vm.return\n}\n";

#[test]
fn a_debug_database_without_source_maps_survives_the_round_trip() {
    // Empty altogether, and with locations but no source maps: before,
    // the first came back without a database and the second with a
    // source map per function.
    for (tables, locations) in [("", 0), ("vm.location[0] = \"a.mlir\":1:2\n", 1)] {
        let text = format!("vm.module @m version 0\n{ONE_FUNCTION}vm.debug_database\n{tables}");
        let (module, form) = through_the_form(&text, "db.vmasm");
        let debug = module.debug_database().expect("a database");
        assert_eq!(
            (debug.location_count(), debug.source_map_count()),
            (locations, 0)
        );
        assert!(form.contains("\nvm.debug_database\n"), "{form}");
    }
    // Stated twice, or with trailing locations it would drop: refused.
    let twice =
        format!("vm.module @m version 0\n{ONE_FUNCTION}vm.debug_database\nvm.debug_database\n");
    let errors = irvm::asm::assemble(&twice, "t.vmasm").expect_err("refused");
    assert!(
        errors
            .to_string()
            .contains("t.vmasm:8:1: error: 'vm.debug_database' appears twice"),
        "{errors}"
    );
    let trailing = "vm.module @m version 0\nvm.debug_database\nvm.func @f() -> () {\n^bb0:\n  vm.return loc(\"a\":1:1)\n}\n";
    let errors = irvm::asm::assemble(trailing, "l.vmasm").expect_err("refused");
    assert!(
        errors.to_string().contains("takes no trailing loc(...)"),
        "{errors}"
    );
}

#[test]
fn an_import_without_a_signature_survives_the_round_trip() {
    let text = format!(
        "vm.module @m version 0\nvm.import @x.none\nvm.import optional @x.attrs attributes {{k = \"v\"}}\nvm.import @x.empty cconv \"\"\n{ONE_FUNCTION}"
    );
    let (module, form) = through_the_form(&text, "imports.vmasm");
    assert!(form.contains("\nvm.import @x.none\n"), "{form}");
    assert!(
        form.contains("\nvm.import optional @x.attrs attributes {k = \"v\"}\n"),
        "{form}"
    );
    assert!(form.contains("\nvm.import @x.empty cconv \"\"\n"), "{form}");
    let imports = module.imports();
    assert_eq!(
        imports
            .iter()
            .map(|i| i.calling_convention)
            .collect::<Vec<_>>(),
        [None, None, Some("")]
    );
    // No signature at all for the first (before: one with `cconv ""`).
    let bytes = irvm::asm::assemble(&form, "again").unwrap();
    let defs = root(&bytes).imported_functions().unwrap();
    assert!(defs.get(0).signature().is_none());
    assert!(defs
        .get(1)
        .signature()
        .unwrap()
        .calling_convention()
        .is_none());
    // What follows the name must be one of the clauses.
    let errors = irvm::asm::assemble(
        &format!("vm.module @m version 0\nvm.import @x.f \"0i_i\"\n{ONE_FUNCTION}"),
        "i.vmasm",
    )
    .expect_err("refused");
    assert!(
        errors.to_string().contains("i.vmasm:2:16: error: expected 'cconv \"...\"', 'attributes {...}', 'flags(...)' or nothing after the import name"),
        "{errors}"
    );
}

#[test]
fn dependency_flags_other_than_required_or_optional_survive_the_round_trip() {
    let text = format!(
        "vm.module @m version 0\nvm.dependency @a version 1 flags(none)\nvm.dependency @b version 2 flags(REQUIRED | OPTIONAL)\nvm.dependency @c version 3 flags(bit 4)\nvm.dependency optional @d version 4\nvm.dependency @e version 5\n{ONE_FUNCTION}"
    );
    let (module, form) = through_the_form(&text, "deps.vmasm");
    let flags: Vec<(&str, u32, bool)> = module
        .dependencies()
        .iter()
        .map(|d| (d.name, d.flags, d.optional))
        .collect();
    assert_eq!(
        flags,
        [
            ("a", 0, false),
            ("b", 3, true),
            ("c", 16, false),
            ("d", 2, true),
            ("e", 1, false)
        ]
    );
    for line in [
        "vm.dependency @a version 1 flags(none)",
        "vm.dependency @b version 2 flags(REQUIRED | OPTIONAL)",
        "vm.dependency @c version 3 flags(bit 4)",
        "vm.dependency optional @d version 4",
        "vm.dependency @e version 5",
    ] {
        assert!(form.contains(&format!("\n{line}\n")), "{line}\n{form}");
    }
    for (bad, message) in [
        (
            "vm.dependency optional @a version 1 flags(none)",
            "'optional' and 'flags(...)' both give the flags",
        ),
        (
            "vm.dependency @a version 1 flags(SOMETIMES)",
            "unknown flag 'SOMETIMES'",
        ),
        (
            "vm.dependency @a version 1 always",
            "expected 'flags(REQUIRED | OPTIONAL | bit N)' or nothing after the version",
        ),
    ] {
        let errors = irvm::asm::assemble(
            &format!("vm.module @m version 0\n{bad}\n{ONE_FUNCTION}"),
            "d.vmasm",
        )
        .expect_err(bad);
        assert!(errors.to_string().contains(message), "{errors}");
    }
}

#[test]
fn dependencies_link_by_their_flags_as_iree_links_them() {
    use irvm::{Context, TypeRegistry};
    // IREE checks a found module's version only under REQUIRED, and lets a
    // missing one pass only under OPTIONAL.
    let dependent = |flags: &str| {
        assembled(
            &format!(
                "vm.module @m version 0\nvm.dependency @d version 5 flags({flags})\n{ONE_FUNCTION}"
            ),
            "m.vmasm",
        )
    };
    let old_d = || {
        assembled(
            &format!("vm.module @d version 1\n{ONE_FUNCTION}"),
            "d.vmasm",
        )
    };
    let registry = TypeRegistry::new();
    let link = |flags: &str, with_d: bool| {
        let mut ctx = Context::new(&registry);
        if with_d {
            ctx.register_module(old_d()).expect("d registers");
        }
        ctx.register_module(dependent(flags))
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(link("none", true), Ok(()), "found, version not required");
    assert!(link("none", false).is_err(), "missing, not optional");
    assert_eq!(link("OPTIONAL", true), Ok(()));
    assert_eq!(link("OPTIONAL", false), Ok(()));
    let err = link("REQUIRED | OPTIONAL", true).expect_err("found in too old a version");
    assert!(err.contains("found version 1"), "{err}");
    assert_eq!(
        link("REQUIRED | OPTIONAL", false),
        Ok(()),
        "missing, optional"
    );
}

#[test]
fn a_stated_rodata_compression_survives_the_round_trip() {
    let text = format!(
        "vm.module @m version 0\nvm.rodata[0] compression(uncompressed) = 01\nvm.rodata[1] external compression(uncompressed) = 0203\nvm.rodata[2] = 04\nvm.rodata[3] compression(7) = 05\n{ONE_FUNCTION}"
    );
    let (module, form) = through_the_form(&text, "rodata.vmasm");
    assert_eq!(
        (0..4)
            .map(|i| module.rodata_compression(i))
            .collect::<Vec<_>>(),
        [Some(1), Some(1), Some(0), Some(7)]
    );
    assert_eq!(module.rodata(1), Some(&[2, 3][..]));
    assert!(
        form.contains("\nvm.rodata[0] compression(uncompressed) = 01\n"),
        "{form}"
    );
    assert!(
        form.contains("\nvm.rodata[1] external compression(uncompressed) = 0203\n"),
        "{form}"
    );
    assert!(
        form.contains("\nvm.rodata[3] compression(7) = 05\n"),
        "{form}"
    );
    let errors = irvm::asm::assemble(
        &format!("vm.module @m version 0\nvm.rodata[0] compression(zstd) = 01\n{ONE_FUNCTION}"),
        "r.vmasm",
    )
    .expect_err("refused");
    assert!(
        errors
            .to_string()
            .contains("r.vmasm:2:26: error: expected 'uncompressed' or a union tag"),
        "{errors}"
    );
}

#[test]
fn an_empty_type_name_is_refused_at_load_so_no_form_need_hold_it() {
    // IREE's verifier refuses it too ("types[0] missing name"), so the
    // assembly form never meets one.
    let mut bytes = irvm::asm::assemble(
        &format!("vm.module @m version 0\nvm.type !vm.buffer\n{ONE_FUNCTION}"),
        "t.vmasm",
    )
    .unwrap();
    let name = b"!vm.buffer";
    let at = bytes
        .windows(name.len())
        .position(|w| w == name)
        .expect("the type's name");
    bytes[at - 4..at].copy_from_slice(&0u32.to_le_bytes());
    bytes[at] = 0;
    let err = Module::from_bytes(bytes.clone())
        .expect_err("refused")
        .to_string();
    assert!(err.contains("types[0].full_name"), "{err}");
    let Some(peer) = crate::common::peer_bin(&["iree-run-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.vmfb");
    std::fs::write(&path, &bytes).unwrap();
    let out = Command::new(peer.join("iree-run-module"))
        .arg(format!("--module={}", path.display()))
        .arg("--function=f")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("types[0] missing name"), "{stderr}");
}

#[test]
fn fuzz_seeds_are_the_assembly_form_of_their_modules() {
    // fuzz/seeds/asm/NAME.vmasm seeds the assembler fuzz target with the
    // form of tests/models/NAME.vmfb; when the form changes, rewrite them
    // with `irvm dump --output=assembly tests/models/NAME.vmfb`.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = 0;
    for entry in std::fs::read_dir(repo.join("fuzz/seeds/asm")).expect("the seeds") {
        let seed = entry.expect("readable entry").path();
        let name = seed.file_stem().unwrap().to_string_lossy().to_string();
        let module =
            Module::from_file(repo.join(format!("tests/models/{name}.vmfb"))).expect("loads");
        let text = std::fs::read_to_string(&seed).unwrap();
        assert!(
            text == text_of(&module, TextForm::Assembly),
            "{} is not the assembly form of tests/models/{name}.vmfb",
            seed.display()
        );
        seeds += 1;
    }
    assert!(seeds >= 3, "{seeds} seeds");
}

#[test]
fn import_flags_other_than_required_or_optional_survive_the_round_trip() {
    let text = format!(
        "vm.module @m version 0\nvm.import @x.a cconv \"0v_v\" flags(none)\nvm.import @x.b attributes {{k = \"v\"}} flags(REQUIRED | OPTIONAL)\nvm.import @x.c flags(bit 5)\nvm.import optional @x.d\nvm.import @x.e\n{ONE_FUNCTION}"
    );
    let (module, form) = through_the_form(&text, "flags.vmasm");
    let flags: Vec<(&str, u32, bool)> = module
        .imports()
        .iter()
        .map(|i| (i.full_name, i.flags, i.optional))
        .collect();
    assert_eq!(
        flags,
        [
            ("x.a", 0, false),
            ("x.b", 3, true),
            ("x.c", 32, false),
            ("x.d", 2, true),
            ("x.e", 1, false)
        ]
    );
    for line in [
        "vm.import @x.a cconv \"0v_v\" flags(none)",
        "vm.import @x.b attributes {k = \"v\"} flags(REQUIRED | OPTIONAL)",
        "vm.import @x.c flags(bit 5)",
        "vm.import optional @x.d",
        "vm.import @x.e",
    ] {
        assert!(form.contains(&format!("\n{line}\n")), "{line}\n{form}");
    }
    for (bad, message) in [
        (
            "vm.import optional @x.a flags(none)",
            "'optional' and 'flags(...)' both give the flags",
        ),
        (
            "vm.import @x.a flags(none) cconv \"0v_v\"",
            "unexpected text after the import's clauses",
        ),
        ("vm.import @x.a flags(MAYBE)", "unknown flag 'MAYBE'"),
    ] {
        let errors = irvm::asm::assemble(
            &format!("vm.module @m version 0\n{bad}\n{ONE_FUNCTION}"),
            "i.vmasm",
        )
        .expect_err(bad);
        assert!(errors.to_string().contains(message), "{errors}");
    }
}

#[test]
fn a_function_without_a_calling_convention_survives_the_round_trip() {
    // Optional for internal functions in the schema; linking takes it as
    // `0v_v`. Before, the form printed nothing and it came back as `0v_v`.
    // (The module names @g nowhere, so the form calls it @fn1.)
    let text = "vm.module @m version 0\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  vm.call @g()\n  vm.return\n}\nvm.func @g() -> () cconv none {\n^bb0:\n  vm.return\n}\n";
    let (module, form) = through_the_form(text, "none.vmasm");
    assert_eq!(
        module.function_signature(1).unwrap().calling_convention,
        None
    );
    assert!(
        form.contains("\nvm.func @fn1() -> () cconv none registers("),
        "{form}"
    );
    let errors = irvm::asm::assemble(&text.replace("vm.call @g()", "vm.call @g(%i0)"), "n.vmasm")
        .expect_err("refused");
    assert!(
        errors.to_string().contains("n.vmasm:5:11: error: the call disagrees with the calling convention of function @g, which declares none (\"0v_v\"): 1 argument given, 0 expected"),
        "{errors}"
    );
}
