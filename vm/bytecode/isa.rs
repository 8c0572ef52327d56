//! The instruction set of IREE VM bytecode 17.0, described once.
//!
//! Every instruction is one line of `for_each_instruction!`: its opcode set,
//! its opcode byte, its Rust name, its mnemonic (without the `vm.` prefix) and
//! its operand layout as a list of [`Field`]s. The [`Opcode`] enum, the
//! [`INSTRUCTIONS`] table, the opcode lookup tables, and through them the
//! decoder, disassembler, verifier, assembler and interpreter all derive from
//! that one list, so an instruction is added in exactly one place.
//!
//! # Encoding
//! An instruction is an opcode byte (core set), or a prefix byte (`0xE0` for
//! the f32 extension, `0xE1` for f64) followed by the opcode byte of that set,
//! followed by its fields in order, little-endian and unaligned:
//!
//! | field                 | bytes                                              |
//! |-----------------------|----------------------------------------------------|
//! | register              | u16 ordinal (refs: bit 15 = ref bank, bit 14 = move)|
//! | const i16             | u16                                                |
//! | const i32/f32, attrs  | u32 (global offset, function, rodata, type ordinal)|
//! | const i64/f64         | u64                                                |
//! | string                | u16 length, then that many bytes                   |
//! | register list         | pad to 2, u16 count, count × u16 ordinals          |
//! | segment sizes         | pad to 2, u16 count, count × u16 sizes             |
//! | branch target         | u32 bytecode offset of the destination block       |
//! | branch operands       | pad to 2, u16 count, count × (u16 src, u16 dst)    |
//! | branch table cases    | `table_size` × (branch target, branch operands)    |

/// The register bank of a register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bank {
    /// One i32 slot.
    I32,
    /// An aligned pair of i32 slots holding an i64.
    I64,
    /// One i32 slot holding an f32 bit pattern.
    F32,
    /// An aligned pair of i32 slots holding an f64 bit pattern.
    F64,
    /// A ref register (ordinal carries the ref-bank bit and maybe the move bit).
    Ref,
}

impl Bank {
    /// The type name used in mnemonics and assembly (`i32`, `i64`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Bank::I32 => "i32",
            Bank::I64 => "i64",
            Bank::F32 => "f32",
            Bank::F64 => "f64",
            Bank::Ref => "ref",
        }
    }

    /// How many i32 slots a value of this bank occupies (refs: 1 ref slot).
    pub const fn slots(self) -> usize {
        match self {
            Bank::I64 | Bank::F64 => 2,
            _ => 1,
        }
    }
}

/// Whether an instruction reads or writes a register field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// The register is an input.
    Read,
    /// The register is an output.
    Write,
}

/// The element type of a variadic register list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListKind {
    /// Registers of any bank (i32 ordinals or ref ordinals with bit 15 set).
    Any,
    /// Registers of one bank only.
    Of(Bank),
}

/// One encoded field of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// A register operand: bank and access. Ref registers here never carry
    /// the move bit.
    Reg(Bank, Access),
    /// A ref register operand that may carry the move bit (ownership
    /// transfer).
    RefMove(Access),
    /// An immediate u16 (the size of a branch table).
    ConstI16,
    /// An immediate constant of the bank's type (u32 or u64 bits).
    Const(Bank),
    /// A byte offset into global storage (or a global ref ordinal).
    GlobalAttr,
    /// A function ordinal; bit 31 set means an import.
    FuncAttr,
    /// A rodata segment ordinal.
    RodataAttr,
    /// A type table ordinal.
    TypeId,
    /// A length-prefixed UTF-8 string.
    StringAttr,
    /// A variadic list of operand registers.
    Operands(ListKind),
    /// A variadic list of result registers.
    Results(ListKind),
    /// The segment sizes of a variadic call (plain counts, not registers).
    SegmentSizes,
    /// The bytecode offset of a destination block.
    BranchTarget,
    /// Block-argument remapping of a branch: (source, destination) pairs.
    BranchOperands,
    /// The cases of `vm.br_table`, counted by the preceding [`Field::ConstI16`].
    BranchTableCases,
}

/// The opcode sets of bytecode 17.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpcodeSet {
    /// The core set (includes the i64 instructions).
    Core,
    /// The f32 extension behind prefix byte `0xE0`.
    ExtF32,
    /// The f64 extension behind prefix byte `0xE1`.
    ExtF64,
    /// irvm's own superinstructions, produced by the pre-decoder only.
    Internal,
}

impl OpcodeSet {
    /// The prefix byte that selects this set, if it is an extension.
    pub const fn prefix(self) -> Option<u8> {
        match self {
            OpcodeSet::Core => None,
            OpcodeSet::ExtF32 => Some(PREFIX_EXT_F32),
            OpcodeSet::ExtF64 => Some(PREFIX_EXT_F64),
            OpcodeSet::Internal => None,
        }
    }
}

/// Core opcode that introduces an f32 extension instruction.
pub const PREFIX_EXT_F32: u8 = 0xE0;
/// Core opcode that introduces an f64 extension instruction.
pub const PREFIX_EXT_F64: u8 = 0xE1;
/// Ref register ordinals carry this bit.
pub const REF_BANK_BIT: u16 = 0x8000;
/// Ref register operands that transfer ownership carry this bit.
pub const REF_MOVE_BIT: u16 = 0x4000;
/// Mask giving the ref register index of a ref ordinal.
pub const REF_INDEX_MASK: u16 = 0x3FFF;
/// Mask giving the i32 register index of an i32 ordinal.
pub const I32_INDEX_MASK: u16 = 0x7FFF;
/// Function ordinals with this bit set name imports.
pub const IMPORT_ORDINAL_BIT: u32 = 0x8000_0000;

use self::Access::{Read as R, Write as W};
use self::Bank::{Ref, F32, F64, I32, I64};
use self::Field::*;

// Operand layouts shared by many instructions (the "classes" of the ISA).
const fn unary(b: Bank) -> [Field; 2] {
    [Reg(b, R), Reg(b, W)]
}
const fn binary(b: Bank) -> [Field; 3] {
    [Reg(b, R), Reg(b, R), Reg(b, W)]
}
const fn ternary(b: Bank) -> [Field; 4] {
    [Reg(b, R), Reg(b, R), Reg(b, R), Reg(b, W)]
}
const fn shift(b: Bank) -> [Field; 3] {
    [Reg(b, R), Reg(I32, R), Reg(b, W)]
}
const fn select(b: Bank) -> [Field; 4] {
    [Reg(I32, R), Reg(b, R), Reg(b, R), Reg(b, W)]
}
const fn cmp1(b: Bank) -> [Field; 2] {
    [Reg(b, R), Reg(I32, W)]
}
const fn cmp2(b: Bank) -> [Field; 3] {
    [Reg(b, R), Reg(b, R), Reg(I32, W)]
}
const fn conv(from: Bank, to: Bank) -> [Field; 2] {
    [Reg(from, R), Reg(to, W)]
}
const fn gload(b: Bank) -> [Field; 2] {
    [GlobalAttr, Reg(b, W)]
}
const fn gstore(b: Bank) -> [Field; 2] {
    [GlobalAttr, Reg(b, R)]
}
const fn gload_ind(b: Bank) -> [Field; 2] {
    [Reg(I32, R), Reg(b, W)]
}
const fn gstore_ind(b: Bank) -> [Field; 2] {
    [Reg(I32, R), Reg(b, R)]
}
const fn constant(b: Bank) -> [Field; 2] {
    [Const(b), Reg(b, W)]
}
const fn zero(b: Bank) -> [Field; 1] {
    [Reg(b, W)]
}
const fn list_get(b: Bank) -> [Field; 3] {
    [Reg(Ref, R), Reg(I32, R), Reg(b, W)]
}
const fn list_set(b: Bank) -> [Field; 3] {
    [Reg(Ref, R), Reg(I32, R), Reg(b, R)]
}
const fn buf_load(b: Bank) -> [Field; 3] {
    [Reg(Ref, R), Reg(I64, R), Reg(b, W)]
}
const fn buf_store(b: Bank) -> [Field; 3] {
    [Reg(Ref, R), Reg(I64, R), Reg(b, R)]
}
const fn buf_fill(b: Bank) -> [Field; 4] {
    [Reg(Ref, R), Reg(I64, R), Reg(I64, R), Reg(b, R)]
}
const fn switch(b: Bank) -> [Field; 4] {
    [Reg(I32, R), Reg(b, R), Operands(ListKind::Of(b)), Reg(b, W)]
}
const BRANCH: [Field; 2] = [BranchTarget, BranchOperands];
const COND_BRANCH: [Field; 5] = [
    Reg(I32, R),
    BranchTarget,
    BranchOperands,
    BranchTarget,
    BranchOperands,
];
const CALL: [Field; 3] = [FuncAttr, Operands(ListKind::Any), Results(ListKind::Any)];
const TRACE: [Field; 2] = [StringAttr, Operands(ListKind::Any)];

/// Assembly syntax templates of the instructions whose operands are not
/// written as a plain comma-separated list in field order (see
/// [`InstrInfo::syntax`] for the template language).
pub mod syntax {
    /// `%v = vm.global.load.i32 .rwdata[8]` (also the indirect forms).
    pub const GLOBAL_LOAD: &str = ".rwdata[{0}]";
    /// `vm.global.store.i32 %v, .rwdata[8]` (also the indirect forms).
    pub const GLOBAL_STORE: &str = "{1}, .rwdata[{0}]";
    /// `%r = vm.global.load.ref .refs[0] : !vm.buffer`.
    pub const GLOBAL_LOAD_REF: &str = ".refs[{0}] : {1}";
    /// `vm.global.store.ref %r, .refs[0] : !vm.buffer`.
    pub const GLOBAL_STORE_REF: &str = "{2}, .refs[{0}] : {1}";
    /// `%r = vm.list.alloc %i : !vm.list<i32>`.
    pub const LIST_ALLOC: &str = "{1} : !vm.list<{0}>";
    /// `%r = vm.list.get.ref %l, %i : !vm.buffer`.
    pub const LIST_GET_REF: &str = "{0}, {1} : {2}";
    /// `%v = vm.select.i32 %c ? %a : %b`.
    pub const SELECT: &str = "{0} ? {1} : {2}";
    /// `%r = vm.select.ref %c ? %a : %b -> !vm.buffer`.
    pub const SELECT_REF: &str = "{0} ? {2} : {3} -> {1}";
    /// `%v = vm.switch.i32 %i[%a, %b] else %d`.
    pub const SWITCH: &str = "{0}[{2}] else {1}";
    /// `%r = vm.switch.ref %i[%a, %b] else %d`.
    pub const SWITCH_REF: &str = "{0}[{3}] else {2}";
    /// `%r = vm.cast.any.ref %a : !vm.ref<?> -> !vm.buffer`.
    pub const CAST_ANY_REF: &str = "{0} : !vm.ref<?> -> {1}";
    /// `vm.buffer.store.i32 %v, %buf, %offset`.
    pub const BUFFER_STORE: &str = "{2}, {0}, {1}";
    /// `vm.br ^bb1(%i0->%i1)` (also `vm.yield`, `vm.break`).
    pub const BRANCH: &str = "{0}({1})";
    /// `vm.cond_br %c, ^bb1(), ^bb2()`.
    pub const COND_BRANCH: &str = "{0}, {1}({2}), {3}({4})";
    /// `vm.cond_break %c, ^bb1()`.
    pub const COND_BREAK: &str = "{0}, {1}({2})";
    /// `vm.br_table %i { default: ^bb1(), 0: ^bb2(), 1: ^bb3() }`.
    pub const BR_TABLE: &str = "{0} {{ default: {1}({2}){4} }}";
    /// `%i0 = vm.call @m.f(%i1)`.
    pub const CALL: &str = "{0}({1})";
    /// `vm.call.variadic @m.f segments[1, 2](%i0, %i1, %i2)`.
    pub const CALL_VARIADIC: &str = "{0} segments[{1}]({2})";
    /// `vm.call.yieldable @m.f(%i0) -> ^bb1(%i1)`.
    pub const CALL_YIELDABLE: &str = "{0}({1}) -> {2}({3})";
    /// `vm.call.variadic.yieldable @m.f segments[2](%i0, %i1) -> ^bb1(%i2)`.
    pub const CALL_VARIADIC_YIELDABLE: &str = "{0} segments[{1}]({2}) -> {3}({4})";
    /// `vm.trace "event"(%i0, %r0)` (also `vm.print`).
    pub const TRACE: &str = "{0}({1})";
}

/// Invokes `$m!` with the whole instruction table.
///
/// Each entry is `Set opcode Name "mnemonic" (fields[, syntax])`, in opcode
/// order per set. The field list is any constant expression of type
/// `[Field; N]`; the optional syntax is one of the [`syntax`] templates.
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_instruction {
    ($m:ident) => {
        $m! {
            // ---- core: globals -------------------------------------------------------------------
            Core 0x00 GlobalLoadI32 "global.load.i32" (gload(I32), syntax::GLOBAL_LOAD);
            Core 0x01 GlobalStoreI32 "global.store.i32" (gstore(I32), syntax::GLOBAL_STORE);
            Core 0x02 GlobalLoadIndirectI32 "global.load.indirect.i32" (gload_ind(I32), syntax::GLOBAL_LOAD);
            Core 0x03 GlobalStoreIndirectI32 "global.store.indirect.i32" (gstore_ind(I32), syntax::GLOBAL_STORE);
            Core 0x04 GlobalLoadI64 "global.load.i64" (gload(I64), syntax::GLOBAL_LOAD);
            Core 0x05 GlobalStoreI64 "global.store.i64" (gstore(I64), syntax::GLOBAL_STORE);
            Core 0x06 GlobalLoadIndirectI64 "global.load.indirect.i64" (gload_ind(I64), syntax::GLOBAL_LOAD);
            Core 0x07 GlobalStoreIndirectI64 "global.store.indirect.i64" (gstore_ind(I64), syntax::GLOBAL_STORE);
            Core 0x08 GlobalLoadRef "global.load.ref" ([GlobalAttr, TypeId, RefMove(W)], syntax::GLOBAL_LOAD_REF);
            Core 0x09 GlobalStoreRef "global.store.ref" ([GlobalAttr, TypeId, RefMove(R)], syntax::GLOBAL_STORE_REF);
            Core 0x0A GlobalLoadIndirectRef "global.load.indirect.ref" ([Reg(I32, R), TypeId, RefMove(W)], syntax::GLOBAL_LOAD_REF);
            Core 0x0B GlobalStoreIndirectRef "global.store.indirect.ref" ([Reg(I32, R), TypeId, RefMove(R)], syntax::GLOBAL_STORE_REF);
            // ---- core: constants -----------------------------------------------------------------
            Core 0x0C ConstI32Zero "const.i32.zero" (zero(I32));
            Core 0x0D ConstI32 "const.i32" (constant(I32));
            Core 0x0E ConstI64Zero "const.i64.zero" (zero(I64));
            Core 0x0F ConstI64 "const.i64" (constant(I64));
            Core 0x10 ConstRefZero "const.ref.zero" ([RefMove(W)]);
            Core 0x11 ConstRefRodata "const.ref.rodata" ([RodataAttr, RefMove(W)]);
            // ---- core: lists ---------------------------------------------------------------------
            Core 0x12 ListAlloc "list.alloc" ([TypeId, Reg(I32, R), RefMove(W)], syntax::LIST_ALLOC);
            Core 0x13 ListReserve "list.reserve" ([Reg(Ref, R), Reg(I32, R)]);
            Core 0x14 ListSize "list.size" ([Reg(Ref, R), Reg(I32, W)]);
            Core 0x15 ListResize "list.resize" ([Reg(Ref, R), Reg(I32, R)]);
            Core 0x16 ListGetI32 "list.get.i32" (list_get(I32));
            Core 0x17 ListSetI32 "list.set.i32" (list_set(I32));
            Core 0x18 ListGetI64 "list.get.i64" (list_get(I64));
            Core 0x19 ListSetI64 "list.set.i64" (list_set(I64));
            Core 0x1A ListGetRef "list.get.ref" ([Reg(Ref, R), Reg(I32, R), TypeId, RefMove(W)], syntax::LIST_GET_REF);
            Core 0x1B ListSetRef "list.set.ref" ([Reg(Ref, R), Reg(I32, R), RefMove(R)]);
            // ---- core: select / switch -----------------------------------------------------------
            Core 0x1C SelectI32 "select.i32" (select(I32), syntax::SELECT);
            Core 0x1D SelectI64 "select.i64" (select(I64), syntax::SELECT);
            Core 0x1E SelectRef "select.ref" ([Reg(I32, R), TypeId, RefMove(R), RefMove(R), RefMove(W)], syntax::SELECT_REF);
            Core 0x1F SwitchI32 "switch.i32" (switch(I32), syntax::SWITCH);
            Core 0x20 SwitchI64 "switch.i64" (switch(I64), syntax::SWITCH);
            Core 0x21 SwitchRef "switch.ref" ([Reg(I32, R), TypeId, RefMove(R), Operands(ListKind::Of(Ref)), RefMove(W)], syntax::SWITCH_REF);
            // ---- core: integer arithmetic --------------------------------------------------------
            Core 0x22 AddI32 "add.i32" (binary(I32));
            Core 0x23 SubI32 "sub.i32" (binary(I32));
            Core 0x24 MulI32 "mul.i32" (binary(I32));
            Core 0x25 DivI32S "div.i32.s" (binary(I32));
            Core 0x26 DivI32U "div.i32.u" (binary(I32));
            Core 0x27 RemI32S "rem.i32.s" (binary(I32));
            Core 0x28 RemI32U "rem.i32.u" (binary(I32));
            Core 0x29 FmaI32 "fma.i32" (ternary(I32));
            Core 0x2A AddI64 "add.i64" (binary(I64));
            Core 0x2B SubI64 "sub.i64" (binary(I64));
            Core 0x2C MulI64 "mul.i64" (binary(I64));
            Core 0x2D DivI64S "div.i64.s" (binary(I64));
            Core 0x2E DivI64U "div.i64.u" (binary(I64));
            Core 0x2F RemI64S "rem.i64.s" (binary(I64));
            Core 0x30 RemI64U "rem.i64.u" (binary(I64));
            Core 0x31 FmaI64 "fma.i64" (ternary(I64));
            // ---- core: bitwise and shifts --------------------------------------------------------
            Core 0x32 NotI32 "not.i32" (unary(I32));
            Core 0x33 AndI32 "and.i32" (binary(I32));
            Core 0x34 OrI32 "or.i32" (binary(I32));
            Core 0x35 XorI32 "xor.i32" (binary(I32));
            Core 0x36 NotI64 "not.i64" (unary(I64));
            Core 0x37 AndI64 "and.i64" (binary(I64));
            Core 0x38 OrI64 "or.i64" (binary(I64));
            Core 0x39 XorI64 "xor.i64" (binary(I64));
            Core 0x3A ShlI32 "shl.i32" (shift(I32));
            Core 0x3B ShrI32S "shr.i32.s" (shift(I32));
            Core 0x3C ShrI32U "shr.i32.u" (shift(I32));
            Core 0x3D ShlI64 "shl.i64" (shift(I64));
            Core 0x3E ShrI64S "shr.i64.s" (shift(I64));
            Core 0x3F ShrI64U "shr.i64.u" (shift(I64));
            // ---- core: integer casts -------------------------------------------------------------
            Core 0x40 TruncI32I8 "trunc.i32.i8" (unary(I32));
            Core 0x41 TruncI32I16 "trunc.i32.i16" (unary(I32));
            Core 0x42 TruncI64I32 "trunc.i64.i32" (conv(I64, I32));
            Core 0x43 ExtI8I32S "ext.i8.i32.s" (unary(I32));
            Core 0x44 ExtI8I32U "ext.i8.i32.u" (unary(I32));
            Core 0x45 ExtI16I32S "ext.i16.i32.s" (unary(I32));
            Core 0x46 ExtI16I32U "ext.i16.i32.u" (unary(I32));
            Core 0x47 ExtI32I64S "ext.i32.i64.s" (conv(I32, I64));
            Core 0x48 ExtI32I64U "ext.i32.i64.u" (conv(I32, I64));
            // ---- core: comparisons ---------------------------------------------------------------
            Core 0x49 CmpEqI32 "cmp.eq.i32" (cmp2(I32));
            Core 0x4A CmpNeI32 "cmp.ne.i32" (cmp2(I32));
            Core 0x4B CmpLtI32S "cmp.lt.i32.s" (cmp2(I32));
            Core 0x4C CmpLtI32U "cmp.lt.i32.u" (cmp2(I32));
            Core 0x4D CmpNzI32 "cmp.nz.i32" (cmp1(I32));
            Core 0x4E CmpEqI64 "cmp.eq.i64" (cmp2(I64));
            Core 0x4F CmpNeI64 "cmp.ne.i64" (cmp2(I64));
            Core 0x50 CmpLtI64S "cmp.lt.i64.s" (cmp2(I64));
            Core 0x51 CmpLtI64U "cmp.lt.i64.u" (cmp2(I64));
            Core 0x52 CmpNzI64 "cmp.nz.i64" (cmp1(I64));
            Core 0x53 CmpEqRef "cmp.eq.ref" (cmp2(Ref));
            Core 0x54 CmpNeRef "cmp.ne.ref" (cmp2(Ref));
            Core 0x55 CmpNzRef "cmp.nz.ref" (cmp1(Ref));
            // ---- core: control flow --------------------------------------------------------------
            Core 0x56 Br "br" (BRANCH, syntax::BRANCH);
            Core 0x57 CondBr "cond_br" (COND_BRANCH, syntax::COND_BRANCH);
            Core 0x58 Call "call" (CALL, syntax::CALL);
            Core 0x59 CallVariadic "call.variadic" ([FuncAttr, SegmentSizes, Operands(ListKind::Any), Results(ListKind::Any)], syntax::CALL_VARIADIC);
            Core 0x5A Return "return" ([Operands(ListKind::Any)]);
            Core 0x5B Fail "fail" ([Reg(I32, R), StringAttr]);
            Core 0x5C ImportResolved "import.resolved" ([FuncAttr, Reg(I32, W)]);
            Core 0x5D Yield "yield" (BRANCH, syntax::BRANCH);
            // ---- core: debugging -----------------------------------------------------------------
            Core 0x5E Trace "trace" (TRACE, syntax::TRACE);
            Core 0x5F Print "print" (TRACE, syntax::TRACE);
            Core 0x60 CondBreak "cond_break" ([Reg(I32, R), BranchTarget, BranchOperands], syntax::COND_BREAK);
            Core 0x61 Break "break" (BRANCH, syntax::BRANCH);
            // ---- core: buffers -------------------------------------------------------------------
            Core 0x62 BufferLoadI8U "buffer.load.i8.u" (buf_load(I32));
            Core 0x63 BufferLoadI8S "buffer.load.i8.s" (buf_load(I32));
            Core 0x64 BufferLoadI16U "buffer.load.i16.u" (buf_load(I32));
            Core 0x65 BufferLoadI16S "buffer.load.i16.s" (buf_load(I32));
            Core 0x66 BufferLoadI32 "buffer.load.i32" (buf_load(I32));
            Core 0x67 BufferLoadI64 "buffer.load.i64" (buf_load(I64));
            Core 0x68 BufferStoreI8 "buffer.store.i8" (buf_store(I32), syntax::BUFFER_STORE);
            Core 0x69 BufferStoreI16 "buffer.store.i16" (buf_store(I32), syntax::BUFFER_STORE);
            Core 0x6A BufferStoreI32 "buffer.store.i32" (buf_store(I32), syntax::BUFFER_STORE);
            Core 0x6B BufferStoreI64 "buffer.store.i64" (buf_store(I64), syntax::BUFFER_STORE);
            Core 0x6C BufferAlloc "buffer.alloc" ([Reg(I64, R), Reg(I32, R), RefMove(W)]);
            Core 0x6D BufferClone "buffer.clone" ([Reg(Ref, R), Reg(I64, R), Reg(I64, R), Reg(I32, R), RefMove(W)]);
            Core 0x6E BufferLength "buffer.length" ([Reg(Ref, R), Reg(I64, W)]);
            Core 0x6F BufferCopy "buffer.copy" ([Reg(Ref, R), Reg(I64, R), Reg(Ref, R), Reg(I64, R), Reg(I64, R)]);
            Core 0x70 BufferCompare "buffer.compare" ([Reg(Ref, R), Reg(I64, R), Reg(Ref, R), Reg(I64, R), Reg(I64, R), Reg(I32, W)]);
            Core 0x71 BufferFillI8 "buffer.fill.i8" (buf_fill(I32));
            Core 0x72 BufferFillI16 "buffer.fill.i16" (buf_fill(I32));
            Core 0x73 BufferFillI32 "buffer.fill.i32" (buf_fill(I32));
            Core 0x74 BufferFillI64 "buffer.fill.i64" (buf_fill(I64));
            // ---- core: more integer math ---------------------------------------------------------
            Core 0x75 CtlzI32 "ctlz.i32" (unary(I32));
            Core 0x76 CtlzI64 "ctlz.i64" (unary(I64));
            Core 0x77 AbsI32 "abs.i32" (unary(I32));
            Core 0x78 AbsI64 "abs.i64" (unary(I64));
            Core 0x79 Block "block" ([]);
            Core 0x7A MinI32S "min.i32.s" (binary(I32));
            Core 0x7B MinI32U "min.i32.u" (binary(I32));
            Core 0x7C MaxI32S "max.i32.s" (binary(I32));
            Core 0x7D MaxI32U "max.i32.u" (binary(I32));
            Core 0x7E MinI64S "min.i64.s" (binary(I64));
            Core 0x7F MinI64U "min.i64.u" (binary(I64));
            Core 0x80 MaxI64S "max.i64.s" (binary(I64));
            Core 0x81 MaxI64U "max.i64.u" (binary(I64));
            // ---- core: refs, tables, calls that yield --------------------------------------------
            Core 0x82 CastAnyRef "cast.any.ref" ([RefMove(R), TypeId, RefMove(W)], syntax::CAST_ANY_REF);
            Core 0x83 BrTable "br_table" ([Reg(I32, R), BranchTarget, BranchOperands, ConstI16, BranchTableCases], syntax::BR_TABLE);
            Core 0x84 BufferHash "buffer.hash" ([Reg(Ref, R), Reg(I64, R), Reg(I64, R), Reg(I64, W)]);
            Core 0x85 DiscardRefs "discard.refs" ([Operands(ListKind::Any)]);
            Core 0x86 AssignRef "assign.ref" ([RefMove(R), RefMove(W)]);
            Core 0x87 CallYieldable "call.yieldable" ([FuncAttr, Operands(ListKind::Any), BranchTarget, Results(ListKind::Any)], syntax::CALL_YIELDABLE);
            Core 0x88 CallVariadicYieldable "call.variadic.yieldable" ([FuncAttr, SegmentSizes, Operands(ListKind::Any), BranchTarget, Results(ListKind::Any)], syntax::CALL_VARIADIC_YIELDABLE);
            // ---- ext_f32 -------------------------------------------------------------------------
            ExtF32 0x00 GlobalLoadF32 "global.load.f32" (gload(F32), syntax::GLOBAL_LOAD);
            ExtF32 0x01 GlobalStoreF32 "global.store.f32" (gstore(F32), syntax::GLOBAL_STORE);
            ExtF32 0x02 GlobalLoadIndirectF32 "global.load.indirect.f32" (gload_ind(F32), syntax::GLOBAL_LOAD);
            ExtF32 0x03 GlobalStoreIndirectF32 "global.store.indirect.f32" (gstore_ind(F32), syntax::GLOBAL_STORE);
            ExtF32 0x04 ConstF32Zero "const.f32.zero" (zero(F32));
            ExtF32 0x05 ConstF32 "const.f32" (constant(F32));
            ExtF32 0x06 ListGetF32 "list.get.f32" (list_get(F32));
            ExtF32 0x07 ListSetF32 "list.set.f32" (list_set(F32));
            ExtF32 0x08 SelectF32 "select.f32" (select(F32), syntax::SELECT);
            ExtF32 0x09 SwitchF32 "switch.f32" (switch(F32), syntax::SWITCH);
            ExtF32 0x0A AddF32 "add.f32" (binary(F32));
            ExtF32 0x0B SubF32 "sub.f32" (binary(F32));
            ExtF32 0x0C MulF32 "mul.f32" (binary(F32));
            ExtF32 0x0D DivF32 "div.f32" (binary(F32));
            ExtF32 0x0E RemF32 "rem.f32" (binary(F32));
            ExtF32 0x0F FmaF32 "fma.f32" (ternary(F32));
            ExtF32 0x10 AbsF32 "abs.f32" (unary(F32));
            ExtF32 0x11 NegF32 "neg.f32" (unary(F32));
            ExtF32 0x12 CeilF32 "ceil.f32" (unary(F32));
            ExtF32 0x13 FloorF32 "floor.f32" (unary(F32));
            ExtF32 0x14 CastSI32F32 "cast.si32.f32" (conv(I32, F32));
            ExtF32 0x15 CastUI32F32 "cast.ui32.f32" (conv(I32, F32));
            ExtF32 0x16 CastF32SI32 "cast.f32.si32" (conv(F32, I32));
            ExtF32 0x17 CastF32UI32 "cast.f32.ui32" (conv(F32, I32));
            ExtF32 0x18 BitcastI32F32 "bitcast.i32.f32" (conv(I32, F32));
            ExtF32 0x19 BitcastF32I32 "bitcast.f32.i32" (conv(F32, I32));
            ExtF32 0x1A AtanF32 "atan.f32" (unary(F32));
            ExtF32 0x1B Atan2F32 "atan2.f32" (binary(F32));
            ExtF32 0x1C CosF32 "cos.f32" (unary(F32));
            ExtF32 0x1D SinF32 "sin.f32" (unary(F32));
            ExtF32 0x1E ExpF32 "exp.f32" (unary(F32));
            ExtF32 0x1F Exp2F32 "exp2.f32" (unary(F32));
            ExtF32 0x20 Expm1F32 "expm1.f32" (unary(F32));
            ExtF32 0x21 LogF32 "log.f32" (unary(F32));
            ExtF32 0x22 Log10F32 "log10.f32" (unary(F32));
            ExtF32 0x23 Log1pF32 "log1p.f32" (unary(F32));
            ExtF32 0x24 Log2F32 "log2.f32" (unary(F32));
            ExtF32 0x25 PowF32 "pow.f32" (binary(F32));
            ExtF32 0x26 RsqrtF32 "rsqrt.f32" (unary(F32));
            ExtF32 0x27 SqrtF32 "sqrt.f32" (unary(F32));
            ExtF32 0x28 TanhF32 "tanh.f32" (unary(F32));
            ExtF32 0x29 ErfF32 "erf.f32" (unary(F32));
            ExtF32 0x2A CmpEqF32O "cmp.eq.f32.o" (cmp2(F32));
            ExtF32 0x2B CmpEqF32U "cmp.eq.f32.u" (cmp2(F32));
            ExtF32 0x2C CmpNeF32O "cmp.ne.f32.o" (cmp2(F32));
            ExtF32 0x2D CmpNeF32U "cmp.ne.f32.u" (cmp2(F32));
            ExtF32 0x2E CmpLtF32O "cmp.lt.f32.o" (cmp2(F32));
            ExtF32 0x2F CmpLtF32U "cmp.lt.f32.u" (cmp2(F32));
            ExtF32 0x30 CmpLteF32O "cmp.lte.f32.o" (cmp2(F32));
            ExtF32 0x31 CmpLteF32U "cmp.lte.f32.u" (cmp2(F32));
            ExtF32 0x32 CmpNanF32 "cmp.nan.f32" (cmp1(F32));
            ExtF32 0x33 BufferLoadF32 "buffer.load.f32" (buf_load(F32));
            ExtF32 0x34 BufferStoreF32 "buffer.store.f32" (buf_store(F32), syntax::BUFFER_STORE);
            ExtF32 0x35 BufferFillF32 "buffer.fill.f32" (buf_fill(F32));
            ExtF32 0x36 RoundF32 "round.f32" (unary(F32));
            ExtF32 0x37 MinF32 "min.f32" (binary(F32));
            ExtF32 0x38 MaxF32 "max.f32" (binary(F32));
            ExtF32 0x39 RoundF32Even "round.f32.even" (unary(F32));
            ExtF32 0x3A CastF32SI64 "cast.f32.si64" (conv(F32, I64));
            ExtF32 0x3B CastF32UI64 "cast.f32.ui64" (conv(F32, I64));
            ExtF32 0x3C CastSI64F32 "cast.si64.f32" (conv(I64, F32));
            ExtF32 0x3D CastUI64F32 "cast.ui64.f32" (conv(I64, F32));
            ExtF32 0x3E FPowIF32 "fpowi.f32" ([Reg(F32, R), Reg(I64, R), Reg(F32, W)]);
            // ---- ext_f64 -------------------------------------------------------------------------
            ExtF64 0x00 GlobalLoadF64 "global.load.f64" (gload(F64), syntax::GLOBAL_LOAD);
            ExtF64 0x01 GlobalStoreF64 "global.store.f64" (gstore(F64), syntax::GLOBAL_STORE);
            ExtF64 0x02 GlobalLoadIndirectF64 "global.load.indirect.f64" (gload_ind(F64), syntax::GLOBAL_LOAD);
            ExtF64 0x03 GlobalStoreIndirectF64 "global.store.indirect.f64" (gstore_ind(F64), syntax::GLOBAL_STORE);
            ExtF64 0x04 ConstF64Zero "const.f64.zero" (zero(F64));
            ExtF64 0x05 ConstF64 "const.f64" (constant(F64));
            ExtF64 0x06 ListGetF64 "list.get.f64" (list_get(F64));
            ExtF64 0x07 ListSetF64 "list.set.f64" (list_set(F64));
            ExtF64 0x08 SelectF64 "select.f64" (select(F64), syntax::SELECT);
            ExtF64 0x09 SwitchF64 "switch.f64" (switch(F64), syntax::SWITCH);
            ExtF64 0x0A AddF64 "add.f64" (binary(F64));
            ExtF64 0x0B SubF64 "sub.f64" (binary(F64));
            ExtF64 0x0C MulF64 "mul.f64" (binary(F64));
            ExtF64 0x0D DivF64 "div.f64" (binary(F64));
            ExtF64 0x0E RemF64 "rem.f64" (binary(F64));
            ExtF64 0x0F FmaF64 "fma.f64" (ternary(F64));
            ExtF64 0x10 AbsF64 "abs.f64" (unary(F64));
            ExtF64 0x11 NegF64 "neg.f64" (unary(F64));
            ExtF64 0x12 CeilF64 "ceil.f64" (unary(F64));
            ExtF64 0x13 FloorF64 "floor.f64" (unary(F64));
            ExtF64 0x14 TruncF64F32 "trunc.f64.f32" (conv(F64, F32));
            ExtF64 0x15 ExtF32F64 "ext.f32.f64" (conv(F32, F64));
            ExtF64 0x16 CastSI32F64 "cast.si32.f64" (conv(I32, F64));
            ExtF64 0x17 CastUI32F64 "cast.ui32.f64" (conv(I32, F64));
            ExtF64 0x18 CastF64SI32 "cast.f64.si32" (conv(F64, I32));
            ExtF64 0x19 CastF64UI32 "cast.f64.ui32" (conv(F64, I32));
            ExtF64 0x1A CastSI64F64 "cast.si64.f64" (conv(I64, F64));
            ExtF64 0x1B CastUI64F64 "cast.ui64.f64" (conv(I64, F64));
            ExtF64 0x1C CastF64SI64 "cast.f64.si64" (conv(F64, I64));
            ExtF64 0x1D CastF64UI64 "cast.f64.ui64" (conv(F64, I64));
            ExtF64 0x1E BitcastI64F64 "bitcast.i64.f64" (conv(I64, F64));
            ExtF64 0x1F BitcastF64I64 "bitcast.f64.i64" (conv(F64, I64));
            ExtF64 0x20 AtanF64 "atan.f64" (unary(F64));
            ExtF64 0x21 Atan2F64 "atan2.f64" (binary(F64));
            ExtF64 0x22 CosF64 "cos.f64" (unary(F64));
            ExtF64 0x23 SinF64 "sin.f64" (unary(F64));
            ExtF64 0x24 ExpF64 "exp.f64" (unary(F64));
            ExtF64 0x25 Exp2F64 "exp2.f64" (unary(F64));
            ExtF64 0x26 Expm1F64 "expm1.f64" (unary(F64));
            ExtF64 0x27 LogF64 "log.f64" (unary(F64));
            ExtF64 0x28 Log10F64 "log10.f64" (unary(F64));
            ExtF64 0x29 Log1pF64 "log1p.f64" (unary(F64));
            ExtF64 0x2A Log2F64 "log2.f64" (unary(F64));
            ExtF64 0x2B PowF64 "pow.f64" (binary(F64));
            ExtF64 0x2C RsqrtF64 "rsqrt.f64" (unary(F64));
            ExtF64 0x2D SqrtF64 "sqrt.f64" (unary(F64));
            ExtF64 0x2E TanhF64 "tanh.f64" (unary(F64));
            ExtF64 0x2F ErfF64 "erf.f64" (unary(F64));
            ExtF64 0x30 CmpEqF64O "cmp.eq.f64.o" (cmp2(F64));
            ExtF64 0x31 CmpEqF64U "cmp.eq.f64.u" (cmp2(F64));
            ExtF64 0x32 CmpNeF64O "cmp.ne.f64.o" (cmp2(F64));
            ExtF64 0x33 CmpNeF64U "cmp.ne.f64.u" (cmp2(F64));
            ExtF64 0x34 CmpLtF64O "cmp.lt.f64.o" (cmp2(F64));
            ExtF64 0x35 CmpLtF64U "cmp.lt.f64.u" (cmp2(F64));
            ExtF64 0x36 CmpLteF64O "cmp.lte.f64.o" (cmp2(F64));
            ExtF64 0x37 CmpLteF64U "cmp.lte.f64.u" (cmp2(F64));
            ExtF64 0x38 CmpNanF64 "cmp.nan.f64" (cmp1(F64));
            ExtF64 0x39 BufferLoadF64 "buffer.load.f64" (buf_load(F64));
            ExtF64 0x3A BufferStoreF64 "buffer.store.f64" (buf_store(F64), syntax::BUFFER_STORE);
            ExtF64 0x3B BufferFillF64 "buffer.fill.f64" (buf_fill(F64));
            ExtF64 0x3C RoundF64 "round.f64" (unary(F64));
            ExtF64 0x3D MinF64 "min.f64" (binary(F64));
            ExtF64 0x3E MaxF64 "max.f64" (binary(F64));
            ExtF64 0x3F RoundF64Even "round.f64.even" (unary(F64));
            ExtF64 0x40 FPowIF64 "fpowi.f64" ([Reg(F64, R), Reg(I64, R), Reg(F64, W)]);
            // ---- internal: fused compare-and-branch superinstructions ------------------------------
            // Never in bytecode (no prefix selects this set): the pre-decoder
            // fuses `cmp.* %a, %b -> %c` followed by `cond_br %c` into one of
            // these, which writes %c and branches.
            Internal 0x00 CmpEqI32Br "cmp.eq.i32+cond_br" (cmp2(I32));
            Internal 0x01 CmpNeI32Br "cmp.ne.i32+cond_br" (cmp2(I32));
            Internal 0x02 CmpLtI32SBr "cmp.lt.i32.s+cond_br" (cmp2(I32));
            Internal 0x03 CmpLtI32UBr "cmp.lt.i32.u+cond_br" (cmp2(I32));
            Internal 0x04 CmpNzI32Br "cmp.nz.i32+cond_br" (cmp1(I32));
            Internal 0x05 CmpEqI64Br "cmp.eq.i64+cond_br" (cmp2(I64));
            Internal 0x06 CmpNeI64Br "cmp.ne.i64+cond_br" (cmp2(I64));
            Internal 0x07 CmpLtI64SBr "cmp.lt.i64.s+cond_br" (cmp2(I64));
            // ---- internal: instruction pairs run by one dispatch ----------------------------------
            // The pre-decoder turns the first instruction of a hot pair into
            // one of these; the second stays in place (and is what a branch
            // to it, or the hooked loop, executes on its own).
            Internal 0x10 AddI32ThenCmpLtI32SBr "add.i32;cmp.lt.i32.s+cond_br" (binary(I32));
            Internal 0x11 AddI64ThenCmpLtI64SBr "add.i64;cmp.lt.i64.s+cond_br" (binary(I64));
            Internal 0x12 BufferLoadI32ThenAddI32 "buffer.load.i32;add.i32" ([Reg(Ref, R), Reg(I64, R), Reg(I32, W)]);
            Internal 0x13 BufferLoadI32ThenAddI64 "buffer.load.i32;add.i64" ([Reg(Ref, R), Reg(I64, R), Reg(I32, W)]);
            Internal 0x14 AddI32ThenBr "add.i32;br" (binary(I32));
            Internal 0x15 AddI64ThenBr "add.i64;br" (binary(I64));
            Internal 0x16 AddI64ThenAddI64 "add.i64;add.i64" (binary(I64));
            Internal 0x17 FmaI64ThenAddI64 "fma.i64;add.i64" (ternary(I64));
            Internal 0x18 BufferLoadF32ThenBufferLoadF32 "buffer.load.f32;buffer.load.f32" ([Reg(Ref, R), Reg(I64, R), Reg(F32, W)]);
            Internal 0x19 FmaF32ThenBufferStoreF32 "fma.f32;buffer.store.f32" (ternary(F32));
            // A loop's back edge: the step, the branch and the loop head's
            // fused compare-branch at its target, in one dispatch.
            Internal 0x1A AddI32ThenBrToCmpLtI32SBr "add.i32;br;cmp.lt.i32.s+cond_br" (binary(I32));
            Internal 0x1B AddI64ThenBrToCmpLtI64SBr "add.i64;br;cmp.lt.i64.s+cond_br" (binary(I64));
            // A kernel's accumulate: load, multiply-add, store back.
            Internal 0x1C BufferLoadF32ThenFmaF32ThenStoreF32 "buffer.load.f32;fma.f32;buffer.store.f32" ([Reg(Ref, R), Reg(I64, R), Reg(F32, W)]);
            // An append to a list: its size, the size plus one, the resize
            // to that and the set of the new last element, in one dispatch
            // (program::fuse::fuse_appends says which quadruples qualify).
            Internal 0x1D ListSizeThenAppend "list.size;add.i32;list.resize;list.set" ([Reg(Ref, R), Reg(I32, W)]);
        }
    };
}

/// Static facts about one instruction.
#[derive(Clone, Copy, Debug)]
pub struct InstrInfo {
    /// The instruction.
    pub op: Opcode,
    /// The opcode set it belongs to.
    pub set: OpcodeSet,
    /// Its opcode byte within that set.
    pub code: u8,
    /// Its mnemonic without the `vm.` prefix (`add.i32`).
    pub mnemonic: &'static str,
    /// Its fields, in encoding order.
    pub fields: &'static [Field],
    /// How its operands are written in VM assembly, after the mnemonic.
    ///
    /// Empty for the common form: the fields that are not results, in
    /// encoding order, separated by `, `. Otherwise a template (one of
    /// [`syntax`]) where `{N}` stands for field `N` and `{{`/`}}` for
    /// braces. Either way the result fields the template does not mention
    /// come first, as `%a, %b = `.
    pub syntax: &'static str,
}

/// The `syntax` of a table entry: the given template, or "" (plain).
macro_rules! syntax_or_plain {
    () => {
        ""
    };
    ($syntax:expr) => {
        $syntax
    };
}

macro_rules! define_isa {
    ($($set:ident $code:literal $name:ident $mnemonic:literal ($fields:expr $(, $syntax:expr)?);)*) => {
        /// Every instruction of bytecode 17.0 (see [`INSTRUCTIONS`] for their facts).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Opcode {
            $(
                #[doc = concat!("`vm.", $mnemonic, "`")]
                $name,
            )*
        }

        /// The instruction table, indexed by `Opcode as usize`.
        pub static INSTRUCTIONS: &[InstrInfo] = &[
            $(
                InstrInfo {
                    op: Opcode::$name,
                    set: OpcodeSet::$set,
                    code: $code,
                    mnemonic: $mnemonic,
                    fields: &$fields,
                    syntax: syntax_or_plain!($($syntax)?),
                },
            )*
        ];
    };
}

for_each_instruction!(define_isa);

/// Number of instructions in the table.
pub const INSTRUCTION_COUNT: usize = {
    let mut n = 0;
    macro_rules! count {
        ($($set:ident $code:literal $name:ident $mnemonic:literal ($fields:expr $(, $syntax:expr)?);)*) => {
            $( let _ = $code; n += 1; )*
        };
    }
    for_each_instruction!(count);
    n
};

const fn build_lookup(set: OpcodeSet) -> [Option<Opcode>; 256] {
    let mut table = [None; 256];
    let mut i = 0;
    while i < INSTRUCTIONS_CONST.len() {
        let info = &INSTRUCTIONS_CONST[i];
        if info.0 as u8 == set as u8 {
            table[info.1 as usize] = Some(info.2);
        }
        i += 1;
    }
    table
}

// A const copy of (set, code, op) triples, so lookup tables can be built at
// compile time.
const INSTRUCTIONS_CONST: [(OpcodeSet, u8, Opcode); INSTRUCTION_COUNT] = {
    macro_rules! triples {
        ($($set:ident $code:literal $name:ident $mnemonic:literal ($fields:expr $(, $syntax:expr)?);)*) => {
            [$((OpcodeSet::$set, $code, Opcode::$name),)*]
        };
    }
    for_each_instruction!(triples)
};

static CORE_LOOKUP: [Option<Opcode>; 256] = build_lookup(OpcodeSet::Core);
static EXT_F32_LOOKUP: [Option<Opcode>; 256] = build_lookup(OpcodeSet::ExtF32);
static EXT_F64_LOOKUP: [Option<Opcode>; 256] = build_lookup(OpcodeSet::ExtF64);

impl Opcode {
    /// The static facts about this instruction.
    #[inline]
    pub fn info(self) -> &'static InstrInfo {
        &INSTRUCTIONS[self as usize]
    }

    /// The mnemonic without the `vm.` prefix.
    #[inline]
    pub fn mnemonic(self) -> &'static str {
        self.info().mnemonic
    }

    /// The instruction with opcode byte `code` in `set`, if any.
    #[inline]
    pub fn from_code(set: OpcodeSet, code: u8) -> Option<Opcode> {
        match set {
            OpcodeSet::Core => CORE_LOOKUP[code as usize],
            OpcodeSet::ExtF32 => EXT_F32_LOOKUP[code as usize],
            OpcodeSet::ExtF64 => EXT_F64_LOOKUP[code as usize],
            OpcodeSet::Internal => None,
        }
    }

    /// The instruction whose mnemonic (with or without `vm.`) is `name`.
    pub fn from_mnemonic(name: &str) -> Option<Opcode> {
        let name = name.strip_prefix("vm.").unwrap_or(name);
        use std::collections::HashMap;
        use std::sync::OnceLock;
        static BY_NAME: OnceLock<HashMap<&'static str, Opcode>> = OnceLock::new();
        BY_NAME
            .get_or_init(|| INSTRUCTIONS.iter().map(|i| (i.mnemonic, i.op)).collect())
            .get(name)
            .copied()
    }

    /// The feature an instruction needs beyond the core set, if any.
    pub fn required_extension(self) -> OpcodeSet {
        self.info().set
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "vm.{}", self.mnemonic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_opcode() {
        for (i, info) in INSTRUCTIONS.iter().enumerate() {
            assert_eq!(info.op as usize, i, "{}", info.mnemonic);
        }
        assert_eq!(INSTRUCTIONS.len(), INSTRUCTION_COUNT);
    }

    #[test]
    fn codes_are_unique_per_set_and_round_trip() {
        for info in INSTRUCTIONS.iter().filter(|i| i.set != OpcodeSet::Internal) {
            assert_eq!(Opcode::from_code(info.set, info.code), Some(info.op));
            assert_eq!(Opcode::from_mnemonic(info.mnemonic), Some(info.op));
        }
        // The prefix bytes are not instructions; 0x79 is the block marker.
        assert_eq!(Opcode::from_code(OpcodeSet::Core, PREFIX_EXT_F32), None);
        assert_eq!(Opcode::from_code(OpcodeSet::Core, PREFIX_EXT_F64), None);
        assert_eq!(
            Opcode::from_code(OpcodeSet::Core, 0x79),
            Some(Opcode::Block)
        );
    }

    #[test]
    fn set_sizes_match_bytecode_17() {
        // As iree-compile 3.13 emits it: the older isa.json's sets plus
        // `vm.fpowi.f32` (ExtF32 0x3E) and `vm.fpowi.f64` (ExtF64 0x40).
        let count = |s| INSTRUCTIONS.iter().filter(|i| i.set == s).count();
        assert_eq!(count(OpcodeSet::Core), 137);
        assert_eq!(count(OpcodeSet::ExtF32), 63);
        assert_eq!(count(OpcodeSet::ExtF64), 65);
    }
}
