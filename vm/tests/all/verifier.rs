//! One test per load-time verifier check (the list is in ARCHITECTURE.md,
//! "Verifier checks"): each builds a module that violates exactly that
//! check — assembled from text, then patched where the assembler would not
//! write the violation — and expects registration to fail with a message
//! naming the module, the function and the bytecode offset.

use irvm::bytecode::disasm::Disassembler;
use irvm::{Context, Module, TypeRegistry};

/// Assembles `source` (module `v`, function `f` first).
fn assemble(source: &str) -> Vec<u8> {
    irvm::asm::assemble(source, "v.vmasm").unwrap_or_else(|e| panic!("{e}"))
}

/// File position of the instruction of function 0 whose text starts with
/// `prefix` (its first byte, the opcode), and its offset in the function.
fn locate(bytes: &[u8], prefix: &str) -> (usize, u32) {
    let module = Module::from_bytes(bytes.to_vec()).unwrap();
    let lines = Disassembler::new(&module).function_lines(0, None).unwrap();
    let (offset, _) = lines
        .iter()
        .find(|(_, text)| text.starts_with(prefix))
        .unwrap_or_else(|| panic!("no instruction {prefix:?} in {lines:?}"));
    let code_start =
        module.bytecode_data().as_ptr() as usize - module.file_bytes().as_ptr() as usize;
    let func = module.function_descriptor(0).unwrap().bytecode_offset;
    (code_start + func + *offset as usize, *offset)
}

fn put_u16(bytes: &mut [u8], at: usize, v: u16) {
    bytes[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Patches function 0's descriptor (found by its bytes in the file).
fn patch_descriptor(bytes: &mut [u8], edit: impl FnOnce(&mut [u8; 20])) {
    let module = Module::from_bytes(bytes.to_vec()).unwrap();
    let d = module.function_descriptor(0).unwrap();
    let mut want = Vec::new();
    want.extend_from_slice(&(d.bytecode_offset as i32).to_le_bytes());
    want.extend_from_slice(&(d.bytecode_length as i32).to_le_bytes());
    want.extend_from_slice(&d.requirements.bits().to_le_bytes());
    want.extend_from_slice(&0u16.to_le_bytes());
    want.extend_from_slice(&d.block_count.to_le_bytes());
    want.extend_from_slice(&d.i32_register_count.to_le_bytes());
    want.extend_from_slice(&d.ref_register_count.to_le_bytes());
    let at = bytes
        .windows(20)
        .position(|w| w == want.as_slice())
        .expect("descriptor bytes found");
    let mut desc: [u8; 20] = bytes[at..at + 20].try_into().unwrap();
    edit(&mut desc);
    bytes[at..at + 20].copy_from_slice(&desc);
}

/// Registers `bytes` and expects a verification error at `offset` whose
/// message contains `fragment`.
fn assert_rejected(bytes: Vec<u8>, offset: u32, fragment: &str) {
    let module = match Module::from_bytes(bytes) {
        Ok(m) => m,
        Err(e) => panic!("expected the verifier to reject, but the loader did: {e}"),
    };
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    let err = ctx
        .register_module(module)
        .err()
        .unwrap_or_else(|| panic!("module with {fragment:?} was accepted"))
        .to_string();
    let place = format!("module 'v', function 'f': function 0 at bytecode offset {offset}: ");
    assert!(err.contains(&place), "{err}\n(wanted {place:?})");
    assert!(err.contains(fragment), "{err}\n(wanted {fragment:?})");
}

const ARITH: &str = "vm.module @v version 0\nvm.type !vm.buffer\nvm.export @f\nvm.func @f(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.add.i32 %i0, %i0\n  %r0 = vm.const.ref.zero\n  %i2 = vm.cmp.nz.ref %r0\n  vm.return %i1\n}\n";

#[test]
fn i32_register_out_of_range() {
    let mut bytes = assemble(ARITH);
    let (at, offset) = locate(&bytes, "%i1 = vm.add.i32");
    put_u16(&mut bytes, at + 1, 200);
    assert_rejected(
        bytes,
        offset,
        "register %i200 (i32) out of range (function has 3 i32 registers)",
    );
}

#[test]
fn ref_register_out_of_range() {
    let mut bytes = assemble(ARITH);
    let (at, offset) = locate(&bytes, "%i2 = vm.cmp.nz.ref");
    put_u16(&mut bytes, at + 1, 0x8000 | 9);
    assert_rejected(
        bytes,
        offset,
        "ref register %r9 out of range (function has 1)",
    );
}

#[test]
fn i32_operand_in_the_ref_bank() {
    // IREE loads this and crashes: vm.add.i32 writing a ref register.
    let mut bytes = assemble(ARITH);
    let (at, offset) = locate(&bytes, "%i1 = vm.add.i32");
    put_u16(&mut bytes, at + 5, 0x8000);
    assert_rejected(bytes, offset, "register 0x8000 is not an i32 register");
}

#[test]
fn ref_operand_in_the_i32_bank() {
    let mut bytes = assemble(ARITH);
    let (at, offset) = locate(&bytes, "%i2 = vm.cmp.nz.ref");
    put_u16(&mut bytes, at + 1, 1);
    assert_rejected(bytes, offset, "register 0x1 is not a ref register");
}

#[test]
fn i64_pair_past_the_register_file() {
    let source = "vm.module @v version 0\nvm.export @f\nvm.func @f() -> (i64) {\n^bb0:\n  %i0:1 = vm.const.i64 7\n  vm.return %i0\n}\n";
    let mut bytes = assemble(source);
    let (at, offset) = locate(&bytes, "%i0:1 = vm.const.i64");
    // Destination %i2:3 needs 4 slots; the function has 2.
    put_u16(&mut bytes, at + 9, 2);
    assert_rejected(
        bytes,
        offset,
        "register %i2 (i64) out of range (function has 2 i32 registers)",
    );
}

#[test]
fn i64_pair_at_an_odd_register_is_refused_as_the_reference_refuses_it() {
    // IREE 3.13's verifier: "i64/f64 register ordinal 1 not 8-byte aligned",
    // for operands and for the register lists of calls and returns alike.
    let source = "vm.module @v version 0\nvm.export @f\nvm.func @f() -> (i64) {\n^bb0:\n  %i2:3 = vm.const.i64 7\n  %i4:5 = vm.add.i64 %i2:3, %i2:3\n  vm.return %i4:5\n}\n";
    let mut bytes = assemble(source);
    let (at, offset) = locate(&bytes, "%i2:3 = vm.const.i64");
    put_u16(&mut bytes, at + 9, 1);
    assert_rejected(
        bytes,
        offset,
        "register %i1:2 (i64) starts at an odd ordinal: i64/f64 registers start at even ones",
    );
    let mut bytes = assemble(source);
    let (at, offset) = locate(&bytes, "vm.return %i4");
    // The return's list (after its opcode, aligned to 2): one register, %i4.
    let list = (at + 1..at + 3)
        .find(|&i| bytes[i..i + 4] == [1, 0, 4, 0])
        .expect("the return's register list");
    put_u16(&mut bytes, list + 2, 5);
    assert_rejected(
        bytes,
        offset,
        "return values: register %i5:6 (i64) starts at an odd ordinal",
    );
}

#[test]
fn import_resolved_of_an_internal_function() {
    let source = "vm.module @v version 0\nvm.import optional @h.g cconv \"0v_v\"\nvm.export @f\nvm.func @f() -> (i32) {\n^bb0:\n  %i0 = vm.import.resolved @h.g\n  vm.return %i0\n}\n";
    let mut bytes = assemble(source);
    let (at, offset) = locate(&bytes, "%i0 = vm.import.resolved");
    put_u32(&mut bytes, at + 1, 0);
    assert_rejected(
        bytes,
        offset,
        "vm.import.resolved of function 0, which is not an import",
    );
}

#[test]
fn discarding_an_i32_register() {
    // Found by vm/tests/mutation.rs (a mutated list_ops module): the ISA types
    // the operand list as "any", so the assembler lets this through.
    let bytes = assemble(
        "vm.module @v version 0\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  \
         %i0 = vm.const.i32 1\n  %i4 = vm.const.i32 2\n  vm.discard.refs %i4\n  vm.return\n}\n",
    );
    let (_, offset) = locate(&bytes, "vm.discard.refs");
    let module = Module::from_bytes(bytes).unwrap();
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    let err = ctx.register_module(module).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "function 'f': function 0 at bytecode offset {offset}: vm.discard.refs operand %i4 is not a ref register"
        )),
        "{err}"
    );
}

const BRANCHY: &str = "vm.module @v version 0\nvm.export @f\nvm.func @f(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32 1\n  vm.br ^bb1()\n^bb1:\n  vm.return %i1\n}\n";

#[test]
fn branch_into_the_middle_of_a_block() {
    let mut bytes = assemble(BRANCHY);
    let (at, offset) = locate(&bytes, "vm.br");
    // Target the const instruction (offset 1), not a block marker.
    put_u32(&mut bytes, at + 1, 1);
    assert_rejected(bytes, offset, "branch target 1 is not the start of a block");
}

#[test]
fn block_count_differs_from_the_descriptor() {
    let mut bytes = assemble(BRANCHY);
    patch_descriptor(&mut bytes, |d| {
        d[14..16].copy_from_slice(&3i16.to_le_bytes())
    });
    assert_rejected(
        bytes,
        0,
        "descriptor declares 3 blocks but the bytecode has 2",
    );
}

#[test]
fn function_ends_inside_an_instruction() {
    let mut bytes = assemble(BRANCHY);
    let len = Module::from_bytes(bytes.clone())
        .unwrap()
        .function_descriptor(0)
        .unwrap()
        .bytecode_length;
    let (_, offset) = locate(&bytes, "vm.return");
    // Cut the last byte of vm.return's operand list.
    patch_descriptor(&mut bytes, |d| {
        d[4..8].copy_from_slice(&(len as i32 - 1).to_le_bytes())
    });
    assert_rejected(bytes, offset, "");
}

const CALLS: &str = "vm.module @v version 0\nvm.type !vm.buffer\nvm.import optional @h.g cconv \"0v_v\"\nvm.rodata[0] = 0102\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  vm.call @v:0()\n  vm.call @h.g()\n  %r0 = vm.const.ref.rodata 0\n  %r1 = vm.list.alloc %i0 : !vm.list<!vm.buffer>\n  vm.return\n}\n";

fn calls_module() -> Vec<u8> {
    assemble(CALLS)
}

#[test]
fn internal_call_ordinal_out_of_range() {
    let mut bytes = calls_module();
    let (at, offset) = locate(&bytes, "vm.call @v");
    put_u32(&mut bytes, at + 1, 5);
    assert_rejected(bytes, offset, "function 5 out of range");
}

#[test]
fn import_ordinal_out_of_range() {
    let mut bytes = calls_module();
    let (at, offset) = locate(&bytes, "vm.call @h.g");
    put_u32(&mut bytes, at + 1, 0x8000_0003);
    assert_rejected(bytes, offset, "import 3 out of range");
}

#[test]
fn rodata_ordinal_out_of_range() {
    let mut bytes = calls_module();
    let (at, offset) = locate(&bytes, "%r0 = vm.const.ref.rodata");
    put_u32(&mut bytes, at + 1, 7);
    assert_rejected(bytes, offset, "rodata segment 7 out of range");
}

#[test]
fn type_id_out_of_range() {
    let mut bytes = calls_module();
    let (at, offset) = locate(&bytes, "%r1 = vm.list.alloc");
    put_u32(&mut bytes, at + 1, 40);
    assert_rejected(bytes, offset, "type 40 out of range");
}

const GLOBALS: &str = "vm.module @v version 0\nvm.type !vm.buffer\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  %i0 = vm.global.load.i32 .rwdata[8]\n  %i2:3 = vm.const.i64.zero\n  vm.global.store.f64 %i2:3, .rwdata[0]\n  %r0 = vm.global.load.ref .refs[0] : !vm.buffer\n  vm.return\n}\n";

#[test]
fn f64_global_store_at_offset_8_of_12_bytes() {
    // The reference checks this access as 4 bytes wide and accepts it.
    let mut bytes = assemble(GLOBALS);
    assert_eq!(
        Module::from_bytes(bytes.clone())
            .unwrap()
            .global_bytes_capacity(),
        12
    );
    let (at, offset) = locate(&bytes, "vm.global.store.f64");
    put_u32(&mut bytes, at + 2, 8);
    assert_rejected(bytes, offset, "global 8 out of range");
}

#[test]
fn global_offset_that_would_wrap_in_32_bits() {
    let mut bytes = assemble(GLOBALS);
    let (at, offset) = locate(&bytes, "vm.global.store.f64");
    put_u32(&mut bytes, at + 2, u32::MAX - 3);
    assert_rejected(
        bytes,
        offset,
        &format!("global {} out of range", u32::MAX - 3),
    );
}

#[test]
fn global_ref_ordinal_out_of_range() {
    let mut bytes = assemble(GLOBALS);
    let (at, offset) = locate(&bytes, "%r0 = vm.global.load.ref");
    put_u32(&mut bytes, at + 1, 1);
    assert_rejected(bytes, offset, "global 1 out of range");
}

#[test]
fn f32_instruction_without_the_feature() {
    let source = "vm.module @v version 0\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  %i0 = vm.const.f32 1.5\n  vm.return\n}\n";
    let mut bytes = assemble(source);
    let (_, offset) = locate(&bytes, "%i0 = vm.const.f32");
    // Clear the function's EXT_F32 bit: the module's (still set) does not
    // stand in for it, as in IREE's verifier.
    patch_descriptor(&mut bytes, |d| {
        d[8..12].copy_from_slice(&0u32.to_le_bytes())
    });
    assert_eq!(
        format!(
            "{}",
            Module::from_bytes(bytes.clone()).unwrap().requirements()
        ),
        "EXT_F32"
    );
    assert_rejected(
        bytes,
        offset,
        "vm.const.f32 needs the EXT_F32 feature, which the function's requirements do not include",
    );
}

const THREE_ARGS: &str = "vm.module @v version 0\nvm.export @f\nvm.func @f(%i0: i32, %i1: i32, %i2: i32) -> (i32) {\n^bb0:\n  vm.return %i0\n}\n";

#[test]
fn registers_too_few_for_the_arguments() {
    // As the reference verifier: the count rounded up to a power of two
    // (2 here) must hold the 3 argument registers.
    let mut bytes = assemble(THREE_ARGS);
    patch_descriptor(&mut bytes, |d| {
        d[16..18].copy_from_slice(&2u16.to_le_bytes())
    });
    assert_rejected(
        bytes,
        0,
        "insufficient register storage for function arguments/results",
    );
}

#[test]
fn rounded_register_count_holds_the_arguments() {
    // 3 rounds up to 4: the reference accepts 3 registers for 3 arguments,
    // and so does irvm (the frame simply has room for them).
    let mut bytes = assemble(THREE_ARGS);
    patch_descriptor(&mut bytes, |d| {
        d[16..18].copy_from_slice(&3u16.to_le_bytes())
    });
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_module(Module::from_bytes(bytes).unwrap())
        .expect("accepted");
}

#[test]
fn register_count_over_the_limit() {
    // 16,385 i32 registers round up to 32,768, past the bank's 0x7FFF.
    let mut bytes = assemble(ARITH);
    patch_descriptor(&mut bytes, |d| {
        d[16..18].copy_from_slice(&16_385u16.to_le_bytes())
    });
    assert_rejected(bytes, 0, "register count overflow");
}

#[test]
fn list_of_unknown_element_type_is_refused_at_load() {
    // The reference registers `!vm.opaque` as the "any" type; `?` and
    // `!vm.ref<?>` are unknown. (`irvm as` names `!vm.list<?>`'s element
    // `!vm.opaque`, as iree-compile does, unless the text declares the
    // type table entry, as here.)
    for element in ["?", "!vm.ref<?>"] {
        let source = format!(
            "vm.module @v version 0\nvm.type {element}\nvm.export @f\nvm.func @f(%i0: i32) -> (i32) {{\n^bb0:\n  \
             %r0 = vm.list.alloc %i0 : !vm.list<{element}>\n  %i1 = vm.list.size %r0\n  vm.return %i1\n}}\n"
        );
        let module = Module::from_assembly(&source, "v.vmasm").unwrap();
        let registry = TypeRegistry::new();
        let mut ctx = Context::new(&registry);
        let err = ctx
            .register_module(module)
            .expect_err("refused")
            .to_string();
        assert!(
            err.contains(&format!("no type registered with name '{element}'")),
            "{err}"
        );
    }
}
