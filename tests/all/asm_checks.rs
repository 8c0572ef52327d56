//! What `irvm as` refuses or writes differently so that it never writes a
//! module both runtimes refuse: call sites against their callees' calling
//! conventions, source maps that name no function or one twice, and the
//! type names of lists (as iree-compile names them).

use std::path::Path;
use std::process::Command;

use irvm::{Context, Module, TypeRegistry, Value};

/// The diagnostics `irvm as` gives for `source` (it must refuse it).
fn refused(source: &str) -> String {
    irvm::asm::assemble(source, "c.vmasm")
        .expect_err("refused")
        .to_string()
}

#[test]
fn calls_that_disagree_with_the_callees_calling_convention_are_refused_at_the_call() {
    let source = r#"vm.module @c version 0
vm.import @m.f cconv "0iCrD_i"
vm.import @m.g
vm.import @m.h cconv "0i_i"
vm.export @g
vm.func @g(%r0: !vm.buffer, %i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call.variadic @m.f segments[1, 2](%i0, %r0, %r0)
  %i2 = vm.call.variadic @m.f segments[1, 2](%i0, %r0, %i0)
  %i3 = vm.call.variadic @m.f segments[1](%i0, %r0, %r0)
  %i4 = vm.call @m.f(%i0, %r0)
  vm.call @m.g()
  %i5 = vm.call @m.g()
  %i6 = vm.call.variadic @g segments[1](%i0)
  %i7 = vm.call @g(%r0, %i0, %i0)
  %i8 = vm.call @m.h(%r0)
  %r1 = vm.call @later(%i0)
  vm.return %i1
}
vm.func @later(%i0: i32) -> (i32) {
^bb0:
  vm.return %i0
}
"#;
    let errors = refused(source);
    for expected in [
        "c.vmasm:9:26: error: the call disagrees with import @m.f's calling convention \"0iCrD_i\": argument 2 is an i32-bank register, where the calling convention has a ref\n    %i2 = vm.call.variadic @m.f segments[1, 2](%i0, %r0, %i0)\n                           ^",
        "c.vmasm:10:26: error: segments[1] do not fit import @m.f's calling convention \"0iCrD_i\"",
        "c.vmasm:11:17: error: import @m.f's calling convention \"0iCrD_i\" is variadic: call it with vm.call.variadic",
        "c.vmasm:13:17: error: the call disagrees with the calling convention of import @m.g, which declares none (\"0v_v\"): 1 result given, 0 expected",
        "c.vmasm:14:26: error: vm.call.variadic calls imports only, and function @g is internal",
        "c.vmasm:15:17: error: the call disagrees with function @g's calling convention \"0ri_i\": 3 arguments given, 2 expected",
        "c.vmasm:16:17: error: the call disagrees with import @m.h's calling convention \"0i_i\": argument 0 is a ref register, where the calling convention has an i32",
        "c.vmasm:17:17: error: the call disagrees with function @later's calling convention \"0i_i\": result 0 is a ref register, where the calling convention has an i32",
    ] {
        assert!(errors.contains(expected), "wanted:\n{expected}\nin:\n{errors}");
    }
    // Lines 8 (a good variadic call) and 12 (a call of an import without
    // a signature, as linking takes it: `0v_v`) are not among them.
    assert!(errors.ends_with("\n8 errors"), "{errors}");
}

#[test]
fn returns_that_disagree_with_the_functions_calling_convention_are_refused_at_the_return() {
    let source = r#"vm.module @c version 0
vm.export @more
vm.func @more(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 7
  vm.return %i0, %i1
}
vm.func @fewer(%i0: i32) -> (i32, i32) {
^bb0:
  vm.return %i0
}
vm.func @bank(%r0: !vm.buffer) -> (i32) {
^bb0:
  vm.return %r0
}
vm.func @none() -> () cconv none {
^bb0:
  %i0 = vm.const.i32 1
  vm.return %i0
}
vm.func @fine(%i0: i32, %r0: !vm.buffer) -> (!vm.buffer, i32) {
^bb0:
  vm.return %r0, %i0
}
"#;
    let errors = refused(source);
    for expected in [
        "c.vmasm:6:3: error: vm.return disagrees with @more's calling convention \"0i_i\": 2 values given, 1 expected\n    vm.return %i0, %i1\n    ^",
        "c.vmasm:10:3: error: vm.return disagrees with @fewer's calling convention \"0i_ii\": 1 value given, 2 expected",
        "c.vmasm:14:3: error: vm.return disagrees with @bank's calling convention \"0r_i\": value 0 is a ref register, where the calling convention has an i32",
        "c.vmasm:19:3: error: vm.return disagrees with @none's calling convention \"0v_v\": 1 value given, 0 expected",
    ] {
        assert!(errors.contains(expected), "wanted:\n{expected}\nin:\n{errors}");
    }
    // @fine's return is not among them.
    assert!(errors.ends_with("\n4 errors"), "{errors}");
}

/// `module` as bytes written to `dir/name`.
fn write_module(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_call_both_runtimes_refuse_was_what_irvm_as_wrote_before() {
    // The module the old assembler wrote for a mismatched call, made here
    // by patching a good one: both runtimes' verifiers refuse it, which is
    // why the assembler now does.
    let good = "vm.module @c version 0\nvm.export @g\nvm.func @g(%r0: !vm.buffer, %i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.call @h(%i0)\n  vm.return %i1\n}\nvm.func @h(%i0: i32) -> (i32) {\n^bb0:\n  vm.return %i0\n}\n";
    assert!(refused(&good.replace("@h(%i0)", "@h(%r0)")).contains("c.vmasm:5:17: error"));
    let mut bytes = irvm::asm::assemble(good, "c.vmasm").unwrap();
    // vm.call @h: the opcode, ordinal 1, (a pad byte to an even offset,)
    // then the argument list, count 1 and register 0 (%i0): make it %r0.
    let at = bytes
        .windows(5)
        .position(|w| w == [0x58, 1, 0, 0, 0])
        .expect("the call")
        + 5;
    let list = at + (bytes[at..at + 2] != [1, 0]) as usize;
    assert_eq!(bytes[list..list + 4], [1, 0, 0, 0], "one argument, %i0");
    bytes[list + 2..list + 4].copy_from_slice(&0x8000u16.to_le_bytes());
    let registry = TypeRegistry::new();
    let err = Context::new(&registry)
        .register_module(Module::from_bytes(bytes.clone()).unwrap())
        .expect_err("refused")
        .to_string();
    assert!(err.contains("call arguments"), "{err}");
    let Some(peer) = crate::common::peer_bin(&["iree-run-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write_module(dir.path(), "c.vmfb", &bytes);
    let out = Command::new(peer.join("iree-run-module"))
        .arg(format!("--module={}", path.display()))
        .args(["--function=g", "--input=&1xi8", "--input=1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("register required but ref register"),
        "{stderr}"
    );
}

#[test]
fn source_maps_past_the_functions_or_named_twice_are_refused() {
    let functions = "vm.module @s version 0\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  vm.return\n}\nvm.func @g() -> () {\n^bb0:\n  vm.return\n}\nvm.location[0] = \"a.mlir\":1:1\n";
    let errors = refused(&format!(
        "{functions}vm.source_map \"f\" = [0: loc[0]]\nvm.source_map \"f\" = []\n"
    ));
    assert!(
        errors.contains("c.vmasm:13:15: error: a source map for \"f\" is given twice (one map per function)\n  vm.source_map \"f\" = []\n                ^"),
        "{errors}"
    );
    let errors = refused(&format!(
        "{functions}vm.source_map \"f\" = []\nvm.source_map \"g\" = []\nvm.source_map \"nothing\" = [0: loc[0]]\n"
    ));
    assert!(
        errors.contains("c.vmasm:14:15: error: source map \"nothing\" names no function: maps belong to functions by position (the first to the first function), and the module defines 2"),
        "{errors}"
    );
    // Unnamed maps may repeat (functions without debug names), and one map
    // per function, or fewer (iree-compile 3.13 writes one), is accepted.
    for maps in [
        "vm.source_map \"\" = []\nvm.source_map \"\" = [0: loc[0]]\n",
        "vm.source_map \"g\" = [0: loc[0]]\n",
    ] {
        irvm::asm::assemble(&format!("{functions}{maps}"), "ok.vmasm")
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `source` assembled, registered, and `f(3)` called.
fn run_f(source: &str) -> Result<Vec<Value>, String> {
    let module = Module::from_assembly(source, "l.vmasm").map_err(|e| e.to_string())?;
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_module(module).map_err(|e| e.to_string())?;
    let f = ctx.function("l.f").map_err(|e| e.to_string())?;
    ctx.invoke(&f, &[Value::I32(3)]).map_err(|e| e.to_string())
}

#[test]
fn list_and_ref_types_are_named_as_iree_compile_names_them() {
    // `!vm.list<?>` holds `?`, the "any" type, which the type table names
    // `!vm.opaque` (iree-compile 3.13's table for a variant list holds
    // `!vm.list<?>` and `!vm.opaque`, and the allocation names the
    // latter); a `!vm.ref<T>` wrapper is not part of a table name. Before,
    // `?` and `!vm.ref<?>` went into the table as written and both
    // runtimes refused the module ("no type registered with name '?'").
    let source = "vm.module @l version 0\nvm.export @f\nvm.func @f(%i0: i32) -> (i32) {\n^bb0:\n  \
                  %r0 = vm.list.alloc %i0 : !vm.list<?>\n  vm.list.resize %r0, %i0\n  \
                  %r1 = vm.list.alloc %i0 : !vm.list<!vm.ref<?>>\n  \
                  %r2 = vm.list.alloc %i0 : !vm.list<!vm.list<?>>\n  \
                  %r3 = vm.list.alloc %i0 : !vm.list<!vm.ref<!vm.list<i32>>>\n  \
                  %i2 = vm.const.i32.zero\n  vm.list.set.ref %r0, %i2, %r1\n  \
                  %r4 = vm.list.get.ref %r0, %i2 : !vm.ref<?>\n  \
                  %i1 = vm.list.size %r0\n  vm.return %i1\n}\n";
    let bytes = irvm::asm::assemble(source, "l.vmasm").unwrap_or_else(|e| panic!("{e}"));
    let module = Module::from_bytes(bytes.clone()).unwrap();
    // Only the element types an allocation names are entered, as
    // iree-as-module enters them (iree-compile's tables also hold each
    // list type; the assembly form declares those with `vm.type`).
    assert_eq!(
        module.types(),
        ["!vm.opaque", "!vm.list<?>", "!vm.list<i32>"]
    );
    let results = run_f(source).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(results[..], [Value::I32(3)]), "{results:?}");
    // A table entry the text declares is used as declared.
    let declared = format!(
        "vm.module @l version 0\nvm.type ?\n{}",
        &source["vm.module @l version 0\n".len()..]
    );
    let err = run_f(&declared).expect_err("refused at load");
    assert!(err.contains("no type registered with name '?'"), "{err}");
    let Some(peer) = crate::common::peer_bin(&["iree-run-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write_module(dir.path(), "l.vmfb", &bytes);
    let out = Command::new(peer.join("iree-run-module"))
        .arg(format!("--module={}", path.display()))
        .args(["--function=f", "--input=3"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "EXEC @f\nresult[0]: i32=3\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_function_whose_requirements_leave_out_its_f32_instructions_is_refused_by_both() {
    // `irvm as` refuses the clause; a module that has it anyway (the
    // function's descriptor patched to `none`, the module's requirements
    // still EXT_F32) is refused by both runtimes' verifiers.
    let source = "vm.module @r version 0\nvm.requires EXT_F32\nvm.export @f\nvm.func @f() -> (f32) requires(none) {\n^bb0:\n  %i0 = vm.const.f32 1.5\n  vm.return %i0\n}\n";
    assert!(refused(source).contains(
        "c.vmasm:4:23: error: requires(none) leaves out EXT_F32, which the function's instructions need"
    ));
    let mut bytes = irvm::asm::assemble(&source.replace("requires(none) ", ""), "r.vmasm").unwrap();
    let module = Module::from_bytes(bytes.clone()).unwrap();
    let descriptor = module.function_descriptor(0).unwrap();
    // The descriptor: offset, length, then the requirements (EXT_F32 = 1).
    let mut pattern = Vec::new();
    pattern.extend_from_slice(&(descriptor.bytecode_offset as u32).to_le_bytes());
    pattern.extend_from_slice(&(descriptor.bytecode_length as u32).to_le_bytes());
    pattern.extend_from_slice(&1u32.to_le_bytes());
    let at = bytes
        .windows(pattern.len())
        .position(|w| w == pattern)
        .expect("the descriptor")
        + 8;
    bytes[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
    let module = Module::from_bytes(bytes.clone()).unwrap();
    assert!(module
        .function_descriptor(0)
        .unwrap()
        .requirements
        .is_empty());
    let registry = TypeRegistry::new();
    let err = Context::new(&registry)
        .register_module(module)
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("vm.const.f32 needs the EXT_F32 feature, which the function's requirements do not include"),
        "{err}"
    );
    let Some(peer) = crate::common::peer_bin(&["iree-run-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write_module(dir.path(), "r.vmfb", &bytes);
    let out = Command::new(peer.join("iree-run-module"))
        .arg(format!("--module={}", path.display()))
        .arg("--function=f")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("required module features [EXT_F32] are not available"),
        "{stderr}"
    );
}

#[test]
fn a_backslash_before_two_hex_digits_is_a_byte_escape_in_either_text() {
    // IREE's disassembly prints strings as they are and iree-as-module
    // reads them so (no escapes: `"C:\de\q"` is those 7 bytes). irvm as
    // reads MLIR's escapes in both texts, so `\de` is the byte 0xDE; a
    // backslash before anything else stays one. The assembly form writes a
    // backslash as `\\`, so its round trip is exact; IREE's text holding
    // `\` and two hex digits is read differently (docs/COMPATIBILITY.md).
    let source = "vm.module @b version 0\nvm.export @f\nvm.func @f(%i0: i32) -> () {\n^bb0:\n  vm.fail %i0, \"C:\\de\\q\"\n}\n";
    let bytes = irvm::asm::assemble(source, "b.vmasm").unwrap();
    let message = |bytes: &[u8]| {
        let module = Module::from_bytes(bytes.to_vec()).unwrap();
        let text = irvm::bytecode::disasm::disassemble_module(
            &module,
            &irvm::bytecode::disasm::DisasmOptions {
                form: irvm::bytecode::disasm::TextForm::Assembly,
                ..Default::default()
            },
        )
        .unwrap();
        text.lines()
            .find(|l| l.contains("vm.fail"))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(message(&bytes), "vm.fail %i0, \"C:\\DE\\\\q\"");
    let Some(peer) = crate::common::peer_bin(&["iree-as-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source_path = dir.path().join("b.vmasm");
    std::fs::write(&source_path, source).unwrap();
    let theirs = dir.path().join("b.vmfb");
    let status = Command::new(peer.join("iree-as-module"))
        .arg(format!("--output={}", theirs.display()))
        .arg(&source_path)
        .status()
        .unwrap();
    assert!(status.success());
    let theirs = std::fs::read(&theirs).unwrap();
    assert_eq!(message(&theirs), "vm.fail %i0, \"C:\\\\de\\\\q\"");
    // The form of the reference's module reads back to the same message.
    let form = irvm::bytecode::disasm::disassemble_module(
        &Module::from_bytes(theirs).unwrap(),
        &irvm::bytecode::disasm::DisasmOptions {
            form: irvm::bytecode::disasm::TextForm::Assembly,
            ..Default::default()
        },
    )
    .unwrap();
    let again = irvm::asm::assemble(&form, "again.vmasm").unwrap();
    assert_eq!(message(&again), "vm.fail %i0, \"C:\\\\de\\\\q\"");
}

#[test]
fn an_operands_mlir_type_annotation_is_refused_naming_the_annotation() {
    // MLIR's generic form ends an op with its types; VM assembly has none
    // (iree-as-module 3.13 refuses these lines too, reading the annotation
    // as part of the register: `ref register ordinal out of range: 0 :
    // (!vm.list<i32>) -> i32`).
    let source = r#"vm.module @c version 0
vm.type !vm.list<i32>
vm.export @f
vm.func @f() -> (i32) {
^bb0:
  %i0 = vm.const.i32 3
  %r0 = vm.list.alloc %i0 : !vm.list<i32>
  %i1 = vm.list.size %r0 : (!vm.list<i32>) -> i32
  %i2 = vm.add.i32 %i0, %i1 : i32
  %i4:5 = vm.ext.i32.i64.s %i2 : i32 -> i64
  vm.return %i1
}
"#;
    let errors = refused(source);
    for expected in [
        "c.vmasm:8:26: error: unexpected type annotation ': (!vm.list<i32>) -> i32' after the register %r0: VM assembly writes no operand or result types (remove it)\n    %i1 = vm.list.size %r0 : (!vm.list<i32>) -> i32\n                           ^",
        "c.vmasm:9:29: error: unexpected type annotation ': i32' after the register %i1",
        "c.vmasm:10:32: error: unexpected type annotation ': i32 -> i64' after the register %i2",
    ] {
        assert!(errors.contains(expected), "wanted:\n{expected}\nin:\n{errors}");
    }
    assert!(errors.ends_with("\n3 errors"), "{errors}");
}
