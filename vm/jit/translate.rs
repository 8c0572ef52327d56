//! Pre-decoded instructions to Cranelift IR to machine code.
//!
//! Registers: every i32 slot the function uses is a Cranelift variable
//! (`S`), and so is each typed view the code reads: `F` (an f32 in a slot),
//! `W` (an i64 starting at a slot) and `D` (an f64). A write defines the
//! written view and every other view over the same slots (bit casts,
//! splits, joins: pure values that Cranelift drops when nothing reads
//! them); the translator records the slots each instruction writes. Every
//! way out is an exit block (`Tx::exit`) that stores the slots
//! `writeback::plan` names for that instruction, then returns its index.
//! Block arguments are variable copies (two slot copies of an i64 become
//! one 64-bit copy).
//!
//! The instruction set translated is the interpreter's hot loop minus calls
//! of imports and of functions with refs, and most ref instructions (`vm.list.get.ref` and
//! `vm.discard.refs`, which start and end every vmvx kernel, and
//! `vm.list.set.ref` call `helpers`). Buffer elements are loaded and stored inline: the
//! first access to a register's buffer asks `helpers::buffer_access` (the
//! interpreter's lease checks), later ones check only bounds. List
//! elements, `vm.list.size`, `vm.list.resize`, `vm.list.reserve` and
//! `vm.list.alloc` of lists that cannot hold lists (`Tx::alone_helper`:
//! the list limit and memory budget in the helper,
//! fuel as the interpreter's fueled loop charges an instruction that
//! stands alone, bulk work left to the interpreter by the copies with
//! limits), math functions (`exp`, `tanh`, ...), rounding and
//! float-to-int casts call `helpers`, which run the interpreter's own
//! functions. Semantics follow
//! `exec/dispatch.rs` operation for operation: `fma.f32` is a multiply then
//! an add (as in the interpreter and the reference, not a fused
//! multiply-add), `min`/`max` are the same compare-and-select, signed
//! division of MIN by -1 wraps. Everything else, and everything that could
//! trap, leaves for the interpreter.
//!
//! Calls and returns (`Tx::inline_call`, `Tx::inline_return`): a call of
//! a function of the module with numbers only (`jit::callable_inline`)
//! checks the frame vector's capacity and the depth, byte, slot and native
//! stack limits (and, polled, the stop word; counting fuel, pays the
//! call's unit and the callee's first run, and after the return the
//! return's unit and the run after the call),
//! zeroes the callee's window above the caller's, stores the arguments
//! there and calls the entry its slot holds, with the callee's frame
//! record's address and stack end. A `vm.return` puts its results in
//! `JitEnv::ret` and returns its index with `RETURNED_BIT`; the caller
//! reads them into its variables and goes on. The caller's registers stay
//! in its variables across the call (the callee's window lies above its
//! own): nothing is stored unless the call leaves compiled code.

use std::collections::HashMap;
use std::sync::OnceLock;

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Imm64;
use cranelift_codegen::ir::{
    types, AbiParam, Block, ExtFuncData, ExternalName, FuncRef, GlobalValueData, InstBuilder,
    JumpTableData, MemFlags, Signature, Type, UserExternalName, UserFuncName, Value,
};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::FinalizedRelocTarget;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};

use super::{
    callable_inline, helpers, writeback, AddressReloc, Callee, CalleeAddress, Callees, Checks,
    CodeImage, JitCode, JitEnv, LEFT_IN_CALLEE, RETURNED_BIT,
};

/// Cranelift's block (the ISA has a `Block` opcode too).
type ClBlock = Block;
use crate::bytecode::isa::{
    Bank, Field, Opcode, IMPORT_ORDINAL_BIT, REF_BANK_BIT, REF_INDEX_MASK, REF_MOVE_BIT,
};
use crate::exec::FRAME_LAYOUT;
use crate::program::{aux_list, Function, Inst, NONE, NO_REMAP};

/// The host's code generator, built once.
pub(super) fn isa() -> Option<&'static OwnedTargetIsa> {
    static ISA: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    ISA.get_or_init(|| host_isa("speed")).as_ref()
}

/// A code generator for this host at Cranelift's `opt_level` (`speed`,
/// `none`), without the IR verifier.
pub(super) fn host_isa(opt_level: &str) -> Option<OwnedTargetIsa> {
    let mut flags = settings::builder();
    flags.set("opt_level", opt_level).ok()?;
    flags.set("enable_verifier", "false").ok()?;
    let builder = cranelift_native::builder().ok()?;
    builder.finish(settings::Flags::new(flags)).ok()
}

/// The instruction whose semantics a (possibly fused) instruction starts
/// with: a fused pair runs its first half here and its second half as the
/// next instruction, which stays in place; a fused compare-branch writes
/// its comparison and the `cond_br` after it branches.
pub(super) fn first_half(op: Opcode) -> Opcode {
    match op {
        Opcode::CmpEqI32Br => Opcode::CmpEqI32,
        Opcode::CmpNeI32Br => Opcode::CmpNeI32,
        Opcode::CmpLtI32SBr => Opcode::CmpLtI32S,
        Opcode::CmpLtI32UBr => Opcode::CmpLtI32U,
        Opcode::CmpNzI32Br => Opcode::CmpNzI32,
        Opcode::CmpEqI64Br => Opcode::CmpEqI64,
        Opcode::CmpNeI64Br => Opcode::CmpNeI64,
        Opcode::CmpLtI64SBr => Opcode::CmpLtI64S,
        Opcode::AddI32ThenCmpLtI32SBr
        | Opcode::AddI32ThenBr
        | Opcode::AddI32ThenBrToCmpLtI32SBr => Opcode::AddI32,
        Opcode::AddI64ThenCmpLtI64SBr
        | Opcode::AddI64ThenBr
        | Opcode::AddI64ThenAddI64
        | Opcode::AddI64ThenBrToCmpLtI64SBr => Opcode::AddI64,
        Opcode::BufferLoadI32ThenAddI32 | Opcode::BufferLoadI32ThenAddI64 => Opcode::BufferLoadI32,
        Opcode::FmaI64ThenAddI64 => Opcode::FmaI64,
        Opcode::BufferLoadF32ThenBufferLoadF32 | Opcode::BufferLoadF32ThenFmaF32ThenStoreF32 => {
            Opcode::BufferLoadF32
        }
        Opcode::FmaF32ThenBufferStoreF32 => Opcode::FmaF32,
        Opcode::ListSizeThenAppend => Opcode::ListSize,
        other => other,
    }
}

// View bits per slot.
const S: u8 = 1;
const F: u8 = 2;
const W: u8 = 4;
const D: u8 = 8;

fn var(view: u8, slot: usize) -> Variable {
    let k = match view {
        S => 0,
        F => 1,
        W => 2,
        _ => 3,
    };
    Variable::from_u32((slot * 4 + k) as u32)
}

/// The register operands of `op` (the fields `a, b, c, d` in order), with
/// their banks, from the ISA table.
fn reg_fields(op: Opcode) -> impl Iterator<Item = Bank> {
    op.info().fields.iter().filter_map(|f| match f {
        Field::Reg(bank, _) => Some(*bank),
        Field::RefMove(_) => Some(Bank::Ref),
        _ => None,
    })
}

/// Target instruction index of a relative branch field of the branch at `k`.
fn target(k: usize, rel: u32) -> usize {
    let size = std::mem::size_of::<Inst>() as i64;
    (k as i64 + i64::from(rel as i32) / size) as usize
}

/// The (source, destination) pairs of the remap record at `rec`.
fn remap_pairs(code: &[Inst], rec: usize) -> Option<Vec<(u16, u16)>> {
    let n = code.get(rec)?.x as usize;
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let e = code.get(rec + k / 2)?;
        out.push(if k & 1 == 0 { (e.a, e.b) } else { (e.c, e.d) });
    }
    Some(out)
}

/// One outgoing edge of a branch: target and block arguments.
pub(super) struct Edge {
    pub to: usize,
    pub remap: Option<Vec<(u16, u16)>>,
}

/// The edges of a translated branch at `k`, if it is one.
pub(super) fn edges(code: &[Inst], k: usize) -> Option<Vec<Edge>> {
    let i = &code[k];
    let rec = |rel: usize| remap_pairs(code, k + rel);
    Some(match i.op {
        Opcode::Br => vec![Edge {
            to: target(k, i.x),
            remap: if i.y == NONE {
                None
            } else {
                Some(rec(i.y as usize)?)
            },
        }],
        Opcode::CondBr => vec![
            Edge {
                to: target(k, i.x),
                remap: if i.c == NO_REMAP {
                    None
                } else {
                    Some(rec(i.c as usize)?)
                },
            },
            Edge {
                to: target(k, i.y),
                remap: if i.d == NO_REMAP {
                    None
                } else {
                    Some(rec(i.d as usize)?)
                },
            },
        ],
        _ => return None,
    })
}

/// A buffer element load or store that compiled code performs inline: its
/// buffer is ref register `a`, its element index the i64 register `b`, the
/// value register `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BufferElement {
    /// The element's size in bytes.
    bytes: usize,
    /// Whether it stores `c` (else it loads into `c`).
    store: bool,
    /// Whether a load narrower than 32 bits sign-extends (else it
    /// zero-extends).
    signed: bool,
}

/// What `op` (after [`first_half`]) does to a buffer element, if it loads
/// or stores one: the one list of the buffer accesses compiled code makes
/// inline (a unit test checks it against the ISA table).
fn buffer_element(op: Opcode) -> Option<BufferElement> {
    use Opcode::*;
    let (bytes, store, signed) = match op {
        BufferLoadI8U => (1, false, false),
        BufferLoadI8S => (1, false, true),
        BufferLoadI16U => (2, false, false),
        BufferLoadI16S => (2, false, true),
        BufferLoadI32 | BufferLoadF32 => (4, false, false),
        BufferLoadI64 | BufferLoadF64 => (8, false, false),
        BufferStoreI8 => (1, true, false),
        BufferStoreI16 => (2, true, false),
        BufferStoreI32 | BufferStoreF32 => (4, true, false),
        BufferStoreI64 | BufferStoreF64 => (8, true, false),
        _ => return None,
    };
    Some(BufferElement {
        bytes,
        store,
        signed,
    })
}

/// The variables caching a ref register's buffer for direct access (after
/// every slot's views): its bytes, the length that may be read and the
/// length that may be written (each 0 until resolved, so an unresolved
/// access fails the bounds check and takes the resolving path).
fn buffer_vars(n32: usize, r: u16) -> [Variable; 3] {
    let base = (n32 + 2) * 4 + (r & REF_INDEX_MASK) as usize * 3;
    [0, 1, 2].map(|j| Variable::from_u32((base + j) as u32))
}

/// The Cranelift type of a register of `bank` (not refs).
fn bank_type(bank: Bank) -> Type {
    match bank {
        Bank::I64 => types::I64,
        Bank::F32 => types::F32,
        Bank::F64 => types::F64,
        _ => types::I32,
    }
}

/// The integer type of `n` bytes.
fn int_type(n: usize) -> Type {
    match n {
        1 => types::I8,
        2 => types::I16,
        4 => types::I32,
        _ => types::I64,
    }
}

/// Whether the translator handles `op` (after [`first_half`]) itself;
/// everything else leaves for the interpreter.
pub(super) fn translated(op: Opcode) -> bool {
    use Opcode::*;
    helpers::pure_op(op).is_some()
        || buffer_element(op).is_some()
        || matches!(
            op,
            ConstI32Zero
                | ConstF32Zero
                | ConstI32
                | ConstF32
                | ConstI64Zero
                | ConstF64Zero
                | ConstI64
                | ConstF64
                | SelectI32
                | SelectF32
                | SelectI64
                | SelectF64
                | AddI32
                | SubI32
                | MulI32
                | DivI32S
                | DivI32U
                | RemI32S
                | RemI32U
                | FmaI32
                | AbsI32
                | MinI32S
                | MinI32U
                | MaxI32S
                | MaxI32U
                | NotI32
                | AndI32
                | OrI32
                | XorI32
                | CtlzI32
                | ShlI32
                | ShrI32S
                | ShrI32U
                | AddI64
                | SubI64
                | MulI64
                | DivI64S
                | DivI64U
                | RemI64S
                | RemI64U
                | FmaI64
                | AbsI64
                | MinI64S
                | MinI64U
                | MaxI64S
                | MaxI64U
                | NotI64
                | AndI64
                | OrI64
                | XorI64
                | CtlzI64
                | ShlI64
                | ShrI64S
                | ShrI64U
                | TruncI32I8
                | TruncI32I16
                | TruncI64I32
                | ExtI8I32S
                | ExtI8I32U
                | ExtI16I32S
                | ExtI16I32U
                | ExtI32I64S
                | ExtI32I64U
                | CmpEqI32
                | CmpNeI32
                | CmpLtI32S
                | CmpLtI32U
                | CmpNzI32
                | CmpEqI64
                | CmpNeI64
                | CmpLtI64S
                | CmpLtI64U
                | CmpNzI64
                | Br
                | CondBr
                | ListGetI32
                | ListGetF32
                | ListGetI64
                | ListGetF64
                | ListSetI32
                | ListSetF32
                | ListSetI64
                | ListSetF64
                | ListGetRef
                | ListSetRef
                | ListAlloc
                | ListSize
                | ListResize
                | ListReserve
                | DiscardRefs
                | GlobalLoadI32
                | GlobalLoadF32
                | GlobalStoreI32
                | GlobalStoreF32
                | GlobalLoadIndirectI32
                | GlobalLoadIndirectF32
                | GlobalStoreIndirectI32
                | GlobalStoreIndirectF32
                | GlobalLoadI64
                | GlobalLoadF64
                | GlobalStoreI64
                | GlobalStoreF64
                | GlobalLoadIndirectI64
                | GlobalLoadIndirectF64
                | GlobalStoreIndirectI64
                | GlobalStoreIndirectF64
                | AddF32
                | SubF32
                | MulF32
                | DivF32
                | FmaF32
                | AbsF32
                | NegF32
                | MinF32
                | MaxF32
                | SqrtF32
                | RsqrtF32
                | CastSI32F32
                | CastUI32F32
                | CastSI64F32
                | BitcastI32F32
                | BitcastF32I32
                | CmpEqF32O
                | CmpEqF32U
                | CmpNeF32O
                | CmpNeF32U
                | CmpLtF32O
                | CmpLtF32U
                | CmpLteF32O
                | CmpLteF32U
                | CmpNanF32
                | AddF64
                | SubF64
                | MulF64
                | DivF64
                | FmaF64
                | AbsF64
                | NegF64
                | MinF64
                | MaxF64
                | SqrtF64
                | RsqrtF64
                | TruncF64F32
                | ExtF32F64
                | CastSI32F64
                | CastUI32F64
                | CastSI64F64
                | BitcastI64F64
                | BitcastF64I64
                | CmpEqF64O
                | CmpEqF64U
                | CmpNeF64O
                | CmpNeF64U
                | CmpLtF64O
                | CmpLtF64U
                | CmpLteF64O
                | CmpLteF64U
                | CmpNanF64
        )
}

/// Compiles `func` into an image that [`link`] makes runnable in any
/// context of its module; `None` when it has nothing worth compiling or
/// the code generator refuses it (the interpreter then runs it). With `eager` the
/// code can be entered at the function's entry and every branch target
/// (`Tier::Jit`); otherwise only at the loop heads `Tier::Auto` enters,
/// and the code nothing else reaches is left out. `isa` is the code
/// generator `bounds::Plan` chose (with or without the optimizer).
pub(super) fn compile(
    func: &Function,
    request: &super::Request,
    callees: &Callees,
    isa: &OwnedTargetIsa,
) -> Option<CodeImage> {
    let (eager, checks) = (request.eager, request.checks);
    let code = &func.code[..];
    let guard = func.guard as usize;
    let starts = block_starts(code, guard)?;
    let calls = Calls {
        callees,
        returns: callable_inline(func),
    };
    if !worth_compiling(code, guard, calls) {
        return None;
    }
    let heads = auto_entries(code, guard, calls);
    // Compiled callers call the entry when compiled code goes on from
    // there to a loop, a call or the return before it leaves.
    let callable = calls.returns
        && entry_leads_into(code, guard, calls, |k| {
            heads[k] || calls.inline(&code[k]).is_some() || code[k].op == Opcode::Return
        });
    // Where compiled code may start.
    let mut entries: Vec<bool> = if eager {
        starts[..guard].to_vec()
    } else {
        heads.clone()
    };
    if callable {
        entries[0] = true;
    }
    // A callable copy calls itself directly: its code is the one its cell
    // publishes (the slot's copy is set once, and only it runs).
    let own_cell = (callable && DIRECT_SELF_CALLS).then_some(request.own_cell);
    let clif = emit_ir(func, isa, &starts, &entries, checks, calls, own_cell);
    let (bytes, relocs) = emit_machine_code(clif, isa)?;
    Some(CodeImage {
        bytes: bytes.into_boxed_slice(),
        relocs: relocs.into_boxed_slice(),
        entries: entries.into_boxed_slice(),
        has_loop_heads: heads.contains(&true),
        callable,
        loop_heads: heads.into_boxed_slice(),
    })
}

/// The calls and returns one compile makes in compiled code.
#[derive(Clone, Copy)]
pub(super) struct Calls<'c> {
    /// The functions called from compiled code, by ordinal.
    callees: &'c Callees,
    /// Whether `vm.return` hands its results back through the env.
    returns: bool,
}

impl Calls<'_> {
    /// The callee of `i` when it is a call compiled code makes itself.
    pub(super) fn inline(&self, i: &Inst) -> Option<&Callee> {
        if i.op == Opcode::Call && i.x & IMPORT_ORDINAL_BIT == 0 {
            self.callees.get(&i.x)
        } else {
            None
        }
    }

    /// Whether compiled code runs `i` without leaving: a translated
    /// instruction or a call it makes.
    pub(super) fn stays(&self, i: &Inst) -> bool {
        translated(first_half(i.op)) || self.inline(i).is_some()
    }
}

/// Which of the body's instructions start a block (the entry and every
/// branch target), with one more entry for `guard`; `None` when a branch
/// leads into the remap stubs after the guard (a huge function's, which
/// are not translated).
fn block_starts(code: &[Inst], guard: usize) -> Option<Vec<bool>> {
    let mut starts = vec![false; guard + 1];
    starts[0] = true;
    for k in 0..guard {
        for e in edges(code, k).unwrap_or_default() {
            if e.to >= guard {
                return None;
            }
            starts[e.to] = true;
        }
    }
    Some(starts)
}

/// Whether the body has any translated instruction but a plain `br`:
/// otherwise compiled code would only ever leave again.
fn worth_compiling(code: &[Inst], guard: usize, calls: Calls) -> bool {
    code[..guard]
        .iter()
        .any(|i| calls.stays(i) && i.op != Opcode::Br)
}

/// Where `Tier::Auto` enters: the heads of the loops that run round
/// entirely in compiled code ([`clean_loop_heads`]), and the function's
/// entry when compiled code leads from there into one (a kernel's set-up
/// before its loop: the set-up then runs compiled too, instead of once per
/// call in the interpreter before the loop head is reached) or into a call
/// compiled code makes (a recursion without loops then runs compiled from
/// its outermost call).
fn auto_entries(code: &[Inst], guard: usize, calls: Calls) -> Vec<bool> {
    let mut heads = clean_loop_heads(code, guard, calls);
    if entry_leads_into(code, guard, calls, |k| {
        heads[k] || calls.inline(&code[k]).is_some()
    }) {
        heads[0] = true;
    }
    heads
}

/// The targets of back edges: where code with [`Checks::Polled`] reads
/// the stop word.
fn loop_heads(code: &[Inst], guard: usize) -> Vec<bool> {
    let mut heads = vec![false; guard];
    for k in 0..guard {
        for e in edges(code, k).unwrap_or_default() {
            if e.to <= k {
                heads[e.to] = true;
            }
        }
    }
    heads
}

/// The targets of back edges whose loop body (the instructions from the
/// head to the back edge) is all translated. A loop that leaves for the
/// interpreter on its way round (a call, a list access) would pay an entry
/// and an exit per iteration, so its head is not one.
fn clean_loop_heads(code: &[Inst], guard: usize, calls: Calls) -> Vec<bool> {
    let mut heads = vec![false; guard];
    let mut dirty = vec![false; guard];
    for k in 0..guard {
        for e in edges(code, k).unwrap_or_default() {
            if e.to <= k {
                let clean = code[e.to..=k].iter().all(|i| calls.stays(i));
                heads[e.to] = true;
                dirty[e.to] |= !clean;
            }
        }
    }
    for (h, d) in heads.iter_mut().zip(&dirty) {
        *h &= !*d;
    }
    heads
}

/// Whether the function's entry is an instruction `target` accepts, or
/// compiled code reaches one from the entry through the instructions it
/// runs.
fn entry_leads_into(
    code: &[Inst],
    guard: usize,
    calls: Calls,
    target: impl Fn(usize) -> bool,
) -> bool {
    let mut seen = vec![false; guard];
    let mut todo = vec![0usize];
    while let Some(k) = todo.pop() {
        if k >= guard || seen[k] {
            continue;
        }
        seen[k] = true;
        if target(k) {
            return true;
        }
        if calls.stays(&code[k]) {
            match edges(code, k) {
                Some(es) => todo.extend(es.iter().map(|e| e.to)),
                None => todo.push(k + 1),
            }
        }
    }
    false
}

/// The views (`S`, `F`, `W`, `D` bits) each of the `n32` i32 slots needs:
/// those of the register operands of translated instructions, and a plain
/// slot for both ends of every i32 block argument (one more entry past the
/// last slot, never set).
fn slot_views(code: &[Inst], aux: &[u32], func: &Function, calls: Calls) -> Vec<u8> {
    let guard = func.guard as usize;
    let n32 = func.i32_count as usize;
    let mut views = vec![0u8; n32 + 1];
    let mut mark = |slot: u16, bank: Bank| {
        let s = slot as usize;
        let (bits, wide) = match bank {
            Bank::I32 => (S, false),
            Bank::F32 => (S | F, false),
            Bank::I64 => (S | W, true),
            Bank::F64 => (S | W | D, true),
            Bank::Ref => return,
        };
        if s < n32 {
            views[s] |= bits;
            if wide && s + 1 < n32 {
                views[s + 1] |= S;
            }
        }
    };
    let kind_bank = |k: u8| {
        if matches!(k, b'I' | b'F') {
            Bank::I64
        } else {
            Bank::I32
        }
    };
    for k in 0..guard {
        let i = &code[k];
        let op = first_half(i.op);
        if let Some(c) = calls.inline(i) {
            for (&r, &kind) in aux_list(aux, i.y, 0).iter().zip(&c.arg_kinds) {
                mark(r as u16, kind_bank(kind));
            }
            for (&r, &kind) in aux_list(aux, i.y, 1).iter().zip(&c.result_kinds) {
                mark(r as u16, kind_bank(kind));
            }
            continue;
        }
        if op == Opcode::Return && calls.returns {
            for (&r, &kind) in aux_list(aux, i.x, 0).iter().zip(&func.result_kinds) {
                mark(r as u16, kind_bank(kind));
            }
            continue;
        }
        if !translated(op) {
            continue;
        }
        for (bank, r) in reg_fields(op).zip([i.a, i.b, i.c, i.d]) {
            mark(r, bank);
        }
        if let Some(es) = edges(code, k) {
            for e in es {
                for (s, d) in e.remap.unwrap_or_default() {
                    if s & REF_BANK_BIT == 0 {
                        mark(s, Bank::I32);
                        mark(d, Bank::I32);
                    }
                }
            }
        }
    }
    views
}

/// The ref registers (indices, sorted, once each) whose buffers compiled
/// code accesses directly.
fn buffer_registers(code: &[Inst], guard: usize) -> Vec<u16> {
    let mut buffers: Vec<u16> = code[..guard]
        .iter()
        .filter(|i| buffer_element(first_half(i.op)).is_some())
        .map(|i| i.a & REF_INDEX_MASK)
        .collect();
    buffers.sort_unstable();
    buffers.dedup();
    buffers
}

/// The signature of compiled code ([`super::EntryFn`]): `(i32 window, env,
/// start index, frame record, stack end) -> next index`, in the platform's
/// C calling convention.
fn entry_signature(isa: &OwnedTargetIsa) -> Signature {
    let ptr = isa.pointer_type();
    let mut sig = Signature::new(isa.default_call_conv());
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(types::I32));
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// The Cranelift IR of `func`: the entry's set-up, a dispatch on the start
/// index to the blocks that are `entries`, the translated body, and its
/// exits with their write-backs.
fn emit_ir(
    func: &Function,
    isa: &OwnedTargetIsa,
    starts: &[bool],
    entries: &[bool],
    checks: Checks,
    calls: Calls,
    own_cell: Option<usize>,
) -> cranelift_codegen::ir::Function {
    let code = &func.code[..];
    let guard = func.guard as usize;
    let n32 = func.i32_count as usize;
    let views = slot_views(code, &func.aux, func, calls);
    let buffers = buffer_registers(code, guard);
    let ptr = isa.pointer_type();
    let mut clif = cranelift_codegen::ir::Function::with_name_signature(
        UserFuncName::default(),
        entry_signature(isa),
    );
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut clif, &mut fctx);
    declare_slot_vars(&mut b, &views[..n32]);

    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let regs = b.block_params(entry)[0];
    let env = b.block_params(entry)[1];
    let start = b.block_params(entry)[2];
    let frame = b.block_params(entry)[3];
    let stack_end = b.block_params(entry)[4];
    clear_buffer_vars(&mut b, &buffers, n32, ptr);
    let (rwdata, rwdata_len) = load_globals(&mut b, env, ptr);
    let limits = (checks == Checks::Limits).then(|| load_limits(&mut b, env, n32));
    let blocks = create_blocks(&mut b, &starts[..guard]);
    let window = Window {
        regs,
        views: &views[..n32],
        at_entry: &entry_views(&views[..n32], &super::entry_live_slots(func)),
    };
    dispatch_on_start(&mut b, &blocks, &entries[..guard], start, &window);

    let mut t = Tx {
        b,
        regs,
        env,
        ptr,
        views: &views,
        exits: HashMap::new(),
        n32,
        buffers: &buffers,
        cur: 0,
        writes: Vec::new(),
        aux: &func.aux,
        limits,
        runs: &func.runs,
        short_exits: Vec::new(),
        polled: checks == Checks::Polled,
        calls,
        frame,
        stack_end,
        result_kinds: &func.result_kinds,
        special_exits: Vec::new(),
        checked_call: None,
        skip_to: 0,
        own_cell,
        own_ref: None,
    };
    t.body(code, guard, &blocks, rwdata, rwdata_len);
    t.fill_exits(func);
    t.b.seal_all_blocks();
    t.b.finalize();
    clif
}

/// Declares a variable for each view a slot needs (`views`: one entry per
/// slot).
fn declare_slot_vars(b: &mut FunctionBuilder, views: &[u8]) {
    for (s, &v) in views.iter().enumerate() {
        for (bit, ty) in [
            (S, types::I32),
            (F, types::F32),
            (W, types::I64),
            (D, types::F64),
        ] {
            if v & bit != 0 {
                b.declare_var(var(bit, s), ty);
            }
        }
    }
}

/// The register window a function's entry loads its slots from.
struct Window<'v> {
    regs: Value,
    /// The views each slot needs anywhere in the function.
    views: &'v [u8],
    /// The views to load when the code starts at the function's entry:
    /// only the slots read there before they are written
    /// ([`entry_views`]).
    at_entry: &'v [u8],
}

/// `views` cut to the slots of `live` (the slots the function may read
/// before writing them, [`super::entry_live_slots`]): an entry at the
/// function's start loads nothing else. A 64-bit view of slot `s` covers
/// `s` and `s + 1`, so it stays when either is live. Every other slot's
/// variable reads as zero until written (Cranelift's value for a variable
/// with no definition), which no instruction observes.
fn entry_views(views: &[u8], live: &[u16]) -> Vec<u8> {
    let mut is_live = vec![false; views.len() + 1];
    for &s in live {
        if let Some(l) = is_live.get_mut(s as usize) {
            *l = true;
        }
    }
    views
        .iter()
        .enumerate()
        .map(|(s, &v)| {
            let narrow = if is_live[s] { v & (S | F) } else { 0 };
            let wide = if is_live[s] || is_live[s + 1] {
                v & (W | D)
            } else {
                0
            };
            narrow | wide
        })
        .collect()
}

/// Loads every view a slot needs from the register window at `regs`.
fn load_window(b: &mut FunctionBuilder, regs: Value, views: &[u8]) {
    let window = MemFlags::trusted();
    let unaligned = MemFlags::new().with_notrap();
    for (s, &v) in views.iter().enumerate() {
        let off = (s * 4) as i32;
        if v & S != 0 {
            let x = b.ins().load(types::I32, window, regs, off);
            b.def_var(var(S, s), x);
        }
        if v & F != 0 {
            let x = b.ins().load(types::F32, window, regs, off);
            b.def_var(var(F, s), x);
        }
        if v & W != 0 {
            let x = b.ins().load(types::I64, unaligned, regs, off);
            b.def_var(var(W, s), x);
        }
        if v & D != 0 {
            let x = b.ins().load(types::F64, unaligned, regs, off);
            b.def_var(var(D, s), x);
        }
    }
}

/// Declares the cache variables of each of `buffers` ([`buffer_vars`]),
/// none resolved yet: a null pointer and lengths of 0.
fn clear_buffer_vars(b: &mut FunctionBuilder, buffers: &[u16], n32: usize, ptr: Type) {
    for &r in buffers {
        let [p, rl, wl] = buffer_vars(n32, r);
        b.declare_var(p, ptr);
        b.declare_var(rl, types::I64);
        b.declare_var(wl, types::I64);
        let zp = b.ins().iconst(ptr, 0);
        let zl = b.ins().iconst(types::I64, 0);
        b.def_var(p, zp);
        b.def_var(rl, zl);
        b.def_var(wl, zl);
    }
}

/// Loads the module's global storage and its length from the [`JitEnv`]
/// at `env`.
fn load_globals(b: &mut FunctionBuilder, env: Value, ptr: Type) -> (Value, Value) {
    // Fixed while compiled code runs: pure loads, dropped by Cranelift
    // when a function touches no global.
    let env_flags = MemFlags::trusted().with_readonly().with_can_move();
    let rwdata = b.ins().load(
        ptr,
        env_flags,
        env,
        std::mem::offset_of!(JitEnv, rwdata) as i32,
    );
    let rwdata_len = b.ins().load(
        types::I64,
        env_flags,
        env,
        std::mem::offset_of!(JitEnv, rwdata_len) as i32,
    );
    (rwdata, rwdata_len)
}

/// A Cranelift block for each instruction that starts one.
fn create_blocks(b: &mut FunctionBuilder, starts: &[bool]) -> HashMap<usize, Block> {
    let mut blocks = HashMap::new();
    for (k, &s) in starts.iter().enumerate() {
        if s {
            blocks.insert(k, b.create_block());
        }
    }
    blocks
}

/// The entry's dispatch on the start index: a jump table to the block of
/// each of `entries`; any other index is returned as it is.
fn dispatch_on_start(
    b: &mut FunctionBuilder,
    blocks: &HashMap<usize, Block>,
    entries: &[bool],
    start: Value,
    window: &Window,
) {
    let not_entry = b.create_block();
    let table: Vec<_> = (0..entries.len())
        .map(|k| {
            let blk = match blocks.get(&k) {
                Some(&blk) if entries[k] => blk,
                _ => not_entry,
            };
            b.func.dfg.block_call(blk, &[])
        })
        .collect();
    let default = b.func.dfg.block_call(not_entry, &[]);
    let jt = b.create_jump_table(JumpTableData::new(default, &table));
    // The entry (where calls start) without the table's look-up, and
    // loading only the slots live there (most of a callee's window is not).
    if let (Some(&first), Some(true)) = (blocks.get(&0), entries.first()) {
        let indexed = b.create_block();
        let called = b.create_block();
        b.ins().brif(start, indexed, &[], called, &[]);
        b.switch_to_block(called);
        load_window(b, window.regs, window.at_entry);
        b.ins().jump(first, &[]);
        b.switch_to_block(indexed);
    }
    load_window(b, window.regs, window.views);
    b.ins().br_table(start, jt);
    b.switch_to_block(not_entry);
    b.ins().return_(&[start]);
}

/// The name a function's code calls itself by (`Tx::own_ref`).
const SELF_NAME: UserExternalName = UserExternalName {
    namespace: 0,
    index: 0,
};

/// The namespace of the names [`Tx::callee_address`] gives callees'
/// addresses (index: the callee's ordinal times two, plus the
/// [`CalleeAddress`]).
const ADDRESS_NAMESPACE: u32 = 1;

fn address_name(ordinal: u32, what: CalleeAddress) -> UserExternalName {
    UserExternalName {
        namespace: ADDRESS_NAMESPACE,
        index: ordinal.wrapping_mul(2) | what as u32,
    }
}

/// Whether compiled code calls itself directly: on x86-64, whose call
/// relocation `emit_machine_code` resolves (elsewhere through the cell).
const DIRECT_SELF_CALLS: bool = cfg!(target_arch = "x86_64");

/// Generates machine code for `clif`: its bytes, with the calls of its
/// own start resolved (relative, so they hold wherever the bytes are
/// mapped), and the places of the callee addresses [`link`] fills in;
/// `None` when the code generator refuses the function or the code needs
/// any other relocation.
fn emit_machine_code(
    clif: cranelift_codegen::ir::Function,
    isa: &OwnedTargetIsa,
) -> Option<(Vec<u8>, Vec<AddressReloc>)> {
    let names = clif.params.user_named_funcs().clone();
    let mut ctx = cranelift_codegen::Context::for_function(clif);
    let compiled = ctx.compile(&**isa, &mut ControlPlane::default()).ok()?;
    let mut bytes = compiled.code_buffer().to_vec();
    let mut addresses = Vec::new();
    for reloc in compiled.buffer.relocs() {
        let FinalizedRelocTarget::ExternalName(ExternalName::User(name)) = reloc.target else {
            return None;
        };
        let name = names.get(name)?;
        let at = reloc.offset as usize;
        match (name.namespace, reloc.kind) {
            // A callee's address: 8 bytes, filled in per context.
            (ADDRESS_NAMESPACE, Reloc::Abs8) if at + 8 <= bytes.len() => {
                addresses.push(AddressReloc {
                    offset: reloc.offset,
                    callee: name.index >> 1,
                    what: if name.index & 1 == CalleeAddress::EntryCell as u32 {
                        CalleeAddress::EntryCell
                    } else {
                        CalleeAddress::Function
                    },
                    addend: reloc.addend,
                });
            }
            // A call of the code's own start (offset 0): the 32-bit
            // displacement from the relocated field, plus its addend.
            _ if *name == SELF_NAME
                && matches!(reloc.kind, Reloc::X86CallPCRel4 | Reloc::X86PCRel4) =>
            {
                let displacement = i32::try_from(reloc.addend - at as i64).ok()?;
                bytes
                    .get_mut(at..at + 4)?
                    .copy_from_slice(&displacement.to_le_bytes());
            }
            _ => return None,
        }
    }
    Some((bytes, addresses))
}

/// `image` made runnable in one context: mapped executable with the
/// addresses of that context's callees (`callees`, as the context gave
/// them for the compile) filled in; `None` when a callee is missing or no
/// mapping could be made.
pub(super) fn link(image: &CodeImage, callees: &Callees) -> Option<JitCode> {
    let mut mem = memmap2::MmapMut::map_anon(image.bytes.len().max(1)).ok()?;
    mem[..image.bytes.len()].copy_from_slice(&image.bytes);
    for r in image.relocs.iter() {
        let c = callees.get(&r.callee)?;
        let address = match r.what {
            CalleeAddress::EntryCell => c.entry,
            CalleeAddress::Function => c.func,
        };
        let value = (address as i64).wrapping_add(r.addend);
        let at = r.offset as usize;
        mem.get_mut(at..at + 8)?
            .copy_from_slice(&value.to_le_bytes());
    }
    let mem = mem.make_exec().ok()?;
    // SAFETY: the mapping holds the code Cranelift generated for the
    // signature `(ptr, ptr, i32) -> i32` in the platform's C calling
    // convention, its relocations applied (calls of its own start,
    // relative; its callees' addresses, absolute, from this context's
    // callees, which outlive the code: `Callee`); it lives as long as the
    // `JitCode` that holds both.
    let entry = unsafe { std::mem::transmute::<*const u8, super::EntryFn>(mem.as_ptr()) };
    Some(JitCode {
        _mem: mem,
        entry,
        entries: image.entries.clone(),
        has_loop_heads: image.has_loop_heads,
        callable: image.callable,
        loop_heads: image.loop_heads.clone(),
        size: image.bytes.len(),
    })
}

/// The translator's state while emitting one function.
struct Tx<'a, 'v> {
    b: FunctionBuilder<'a>,
    regs: Value,
    env: Value,
    ptr: Type,
    views: &'v [u8],
    /// Blocks that leave for the interpreter at an instruction index.
    exits: HashMap<usize, Block>,
    /// The function's i32 slot count (numbering the buffer variables).
    n32: usize,
    /// The ref registers with cached buffers (sorted).
    buffers: &'v [u16],
    /// The instruction being translated.
    cur: usize,
    /// Every (instruction, slot) the code writes (`writeback::plan`).
    writes: Vec<(usize, u16)>,
    /// The function's aux records (`vm.discard.refs` lists).
    aux: &'v [u32],
    /// With [`Checks::Limits`]: the fuel variable.
    limits: Option<Limits>,
    /// The function's run lengths (`program::runs`), the fuel each edge
    /// charges.
    runs: &'v [u32],
    /// Exits that set `JitEnv::fuel_short` first, with their index.
    short_exits: Vec<(Block, usize)>,
    /// [`Checks::Polled`]: back edges load the stop word.
    polled: bool,
    /// The calls and returns made in compiled code.
    calls: Calls<'v>,
    /// The frame's record (in the interpreter's frame vector).
    frame: Value,
    /// The frame's stack end (bytes of the reference's stack).
    stack_end: Value,
    /// The function's result kinds.
    result_kinds: &'v [u8],
    /// Exits that store the registers as for an exit at an index but
    /// return another value: a return's index with [`RETURNED_BIT`], or
    /// [`LEFT_IN_CALLEE`] after a call.
    special_exits: Vec<(Block, usize, u32)>,
    /// The instructions before this index were translated with an
    /// earlier one (an append: [`Tx::list_append`]).
    skip_to: usize,
    /// The largest callee (frame bytes, padded window slots) whose
    /// capacity checks an earlier call of the current bytecode block
    /// passed. Their inputs (this frame's record, stack end and window,
    /// the env's bounds, the native stack pointer) are the same everywhere
    /// in the function, and every path to a later call of the block went
    /// through the earlier call's success, so a later call to a callee no
    /// larger needs none of them. Reset at each block start.
    checked_call: Option<(u32, usize)>,
    /// This function's own entry cell when its code is callable: a call
    /// to it is a direct `call` of this code's start ([`SELF_NAME`]).
    own_cell: Option<usize>,
    /// The function reference such a call uses, once made.
    own_ref: Option<FuncRef>,
}

/// What code with [`Checks::Limits`] keeps of the limits: the fuel it
/// may spend (loaded at entry, stored back at every exit). The interpreter
/// gives it at most a slice of the fuel left (`exec::dispatch::SLICE`),
/// so running out of it is also how compiled code comes back to have the
/// stop word read: no load on any edge.
#[derive(Clone, Copy)]
struct Limits {
    fuel: Variable,
}

/// Loads what [`Limits`] keeps from the env at the entry; the fuel
/// variable is numbered after the slot views (in the gap before the
/// buffer variables).
fn load_limits(b: &mut FunctionBuilder, env: Value, n32: usize) -> Limits {
    let fuel = Variable::from_u32((n32 * 4) as u32);
    b.declare_var(fuel, types::I64);
    let f = b.ins().load(
        types::I64,
        MemFlags::trusted(),
        env,
        std::mem::offset_of!(JitEnv, fuel) as i32,
    );
    b.def_var(fuel, f);
    Limits { fuel }
}

impl Tx<'_, '_> {
    fn has(&self, slot: usize, view: u8) -> bool {
        self.views.get(slot).is_some_and(|v| v & view != 0)
    }

    fn i32(&mut self, r: u16) -> Value {
        self.b.use_var(var(S, r as usize))
    }
    fn f32(&mut self, r: u16) -> Value {
        self.b.use_var(var(F, r as usize))
    }
    fn i64(&mut self, r: u16) -> Value {
        self.b.use_var(var(W, r as usize))
    }
    fn f64(&mut self, r: u16) -> Value {
        self.b.use_var(var(D, r as usize))
    }

    /// Register `r` read as `bank`.
    fn get(&mut self, r: u16, bank: Bank) -> Value {
        match bank {
            Bank::I64 => self.i64(r),
            Bank::F32 => self.f32(r),
            Bank::F64 => self.f64(r),
            _ => self.i32(r),
        }
    }

    /// Writes `v` to register `r` as `bank`.
    fn put(&mut self, r: u16, bank: Bank, v: Value) {
        match bank {
            Bank::I64 => self.set_i64(r, v),
            Bank::F32 => self.set_f32(r, v),
            Bank::F64 => self.set_f64(r, v),
            _ => self.set_i32(r, v),
        }
    }

    /// Redefines the wide views starting at `base` from its two slots.
    fn rejoin(&mut self, base: usize) {
        if !(self.has(base, W) || self.has(base, D)) {
            return;
        }
        let lo = self.b.use_var(var(S, base));
        let hi = self.b.use_var(var(S, base + 1));
        let lo = self.b.ins().uextend(types::I64, lo);
        let hi = self.b.ins().uextend(types::I64, hi);
        let hi = self.b.ins().ishl_imm(hi, 32);
        let w = self.b.ins().bor(lo, hi);
        if self.has(base, W) {
            self.b.def_var(var(W, base), w);
        }
        if self.has(base, D) {
            let d = self.b.ins().bitcast(types::F64, MemFlags::new(), w);
            self.b.def_var(var(D, base), d);
        }
    }

    /// Writes one slot, given as an i32 and/or an f32 value.
    fn set32(&mut self, r: u16, iv: Option<Value>, fv: Option<Value>) {
        let s = r as usize;
        let iv = match (iv, fv) {
            (Some(iv), _) => iv,
            (None, Some(fv)) => self.b.ins().bitcast(types::I32, MemFlags::new(), fv),
            (None, None) => unreachable!("a write of no value"),
        };
        self.writes.push((self.cur, r));
        self.def32(s, iv, fv);
    }

    /// Defines the views over slot `s` after it became `iv` (`fv`: the
    /// same bits as an f32, when at hand).
    fn def32(&mut self, s: usize, iv: Value, fv: Option<Value>) {
        self.b.def_var(var(S, s), iv);
        if self.has(s, F) {
            let fv = match fv {
                Some(fv) => fv,
                None => self.b.ins().bitcast(types::F32, MemFlags::new(), iv),
            };
            self.b.def_var(var(F, s), fv);
        }
        if s > 0 {
            self.rejoin(s - 1);
        }
        self.rejoin(s);
    }

    fn set_i32(&mut self, r: u16, v: Value) {
        self.set32(r, Some(v), None);
    }
    fn set_f32(&mut self, r: u16, v: Value) {
        self.set32(r, None, Some(v));
    }

    /// Writes two slots, given as an i64 and/or an f64 value.
    fn set64(&mut self, r: u16, wv: Option<Value>, dv: Option<Value>) {
        let s = r as usize;
        let wv = match (wv, dv) {
            (Some(wv), _) => wv,
            (None, Some(dv)) => self.b.ins().bitcast(types::I64, MemFlags::new(), dv),
            (None, None) => unreachable!("a write of no value"),
        };
        self.writes.push((self.cur, r));
        self.writes.push((self.cur, r + 1));
        self.def64(s, wv, dv);
    }

    /// Defines the views over slots `s` and `s + 1` after they became `wv`
    /// (`dv`: the same bits as an f64, when at hand).
    fn def64(&mut self, s: usize, wv: Value, dv: Option<Value>) {
        if self.has(s, W) {
            self.b.def_var(var(W, s), wv);
        }
        if self.has(s, D) {
            let dv = match dv {
                Some(dv) => dv,
                None => self.b.ins().bitcast(types::F64, MemFlags::new(), wv),
            };
            self.b.def_var(var(D, s), dv);
        }
        let lo = self.b.ins().ireduce(types::I32, wv);
        let hi = self.b.ins().ushr_imm(wv, 32);
        let hi = self.b.ins().ireduce(types::I32, hi);
        for (slot, v) in [(s, lo), (s + 1, hi)] {
            self.b.def_var(var(S, slot), v);
            if self.has(slot, F) {
                let f = self.b.ins().bitcast(types::F32, MemFlags::new(), v);
                self.b.def_var(var(F, slot), f);
            }
        }
        if s > 0 {
            self.rejoin(s - 1);
        }
        self.rejoin(s + 1);
    }

    fn set_i64(&mut self, r: u16, v: Value) {
        self.set64(r, Some(v), None);
    }
    fn set_f64(&mut self, r: u16, v: Value) {
        self.set64(r, None, Some(v));
    }

    /// A block that returns `k` (leaves for the interpreter before it);
    /// filled by [`Tx::fill_exits`] once everything else is emitted.
    fn exit(&mut self, k: usize) -> Block {
        if let Some(&blk) = self.exits.get(&k) {
            return blk;
        }
        let blk = self.b.create_block();
        self.b.set_cold_block(blk);
        self.exits.insert(k, blk);
        blk
    }

    /// Translates the body (the instructions before `guard`) block by
    /// block: code no branch reaches after a block that does not fall
    /// through is skipped, and a body that runs off its end leaves at the
    /// guard.
    fn body(
        &mut self,
        code: &[Inst],
        guard: usize,
        blocks: &HashMap<usize, Block>,
        rwdata: Value,
        rwdata_len: Value,
    ) {
        let mut open = false;
        let heads = if self.polled {
            loop_heads(code, guard)
        } else {
            Vec::new()
        };
        for k in 0..guard {
            if let Some(&blk) = blocks.get(&k) {
                if open {
                    self.b.ins().jump(blk, &[]);
                }
                self.b.switch_to_block(blk);
                self.checked_call = None;
                open = true;
                if heads.get(k) == Some(&true) {
                    self.poll(k);
                }
            }
            if !open || k < self.skip_to {
                continue;
            }
            self.cur = k;
            open = self.inst(code, k, blocks, rwdata, rwdata_len);
        }
        if open {
            let out = self.exit(guard);
            self.b.ins().jump(out, &[]);
        }
    }

    /// Emits every exit: the stores of the registers the interpreter
    /// needs from there (`writeback::plan`), then the return of its index.
    fn fill_exits(&mut self, func: &Function) {
        for (blk, k) in std::mem::take(&mut self.short_exits) {
            self.b.switch_to_block(blk);
            let one = self.b.ins().iconst(types::I32, 1);
            self.b.ins().store(
                MemFlags::trusted(),
                one,
                self.env,
                std::mem::offset_of!(JitEnv, fuel_short) as i32,
            );
            let out = self.exits[&k];
            self.b.ins().jump(out, &[]);
        }
        let mut exits: Vec<(usize, Block)> = self.exits.drain().collect();
        exits.sort_unstable();
        let special = std::mem::take(&mut self.special_exits);
        let mut at: Vec<usize> = exits.iter().map(|e| e.0).collect();
        at.extend(special.iter().map(|e| e.1));
        at.sort_unstable();
        at.dedup();
        let calls = self.calls;
        let plan = writeback::plan(
            &func.code,
            &func.aux,
            func.guard as usize,
            self.n32,
            &self.writes,
            &at,
            &|i: &Inst| calls.stays(i),
        );
        for (blk, k, value) in special {
            self.b.switch_to_block(blk);
            let slots = plan.get(&k).map(Vec::as_slice).unwrap_or_default();
            self.store_slots(slots);
            let v = self.b.ins().iconst(types::I32, i64::from(value as i32));
            self.b.ins().return_(&[v]);
        }
        for (k, blk) in exits {
            self.b.switch_to_block(blk);
            let slots = plan.get(&k).map(Vec::as_slice).unwrap_or_default();
            self.store_slots(slots);
            if let Some(l) = self.limits {
                let fuel = self.b.use_var(l.fuel);
                self.fuel_to_env(fuel);
            }
            let v = self.b.ins().iconst(types::I32, k as i64);
            self.b.ins().return_(&[v]);
        }
    }

    /// Stores `slots` (ascending) to the register window.
    fn store_slots(&mut self, slots: &[u16]) {
        {
            let mut j = 0;
            while j < slots.len() {
                // Each slot from the widest view the code keeps of it, so
                // that the values derived for the narrower views (halves,
                // bit casts) are needed nowhere and vanish.
                let s = slots[j] as usize;
                let off = (s * 4) as i32;
                if slots.get(j + 1) == Some(&(slots[j] + 1)) && self.has(s, W) {
                    let v = self.b.use_var(var(W, s));
                    self.b
                        .ins()
                        .store(MemFlags::new().with_notrap(), v, self.regs, off);
                    j += 2;
                    continue;
                }
                let v = if self.has(s, F) {
                    self.b.use_var(var(F, s))
                } else {
                    self.b.use_var(var(S, s))
                };
                self.b.ins().store(MemFlags::trusted(), v, self.regs, off);
                j += 1;
            }
        }
    }

    /// A block that stores the registers as for an exit at `k`, then
    /// returns `value`.
    fn special_exit(&mut self, k: usize, value: u32) -> Block {
        let blk = self.b.create_block();
        self.b.set_cold_block(blk);
        self.special_exits.push((blk, k, value));
        blk
    }

    /// The address of field `offset` of the env.
    fn env_load(&mut self, ty: Type, offset: usize) -> Value {
        self.b
            .ins()
            .load(ty, MemFlags::trusted(), self.env, offset as i32)
    }

    /// Field `offset` of the env, one that nothing writes while compiled
    /// code runs (the bounds, the stop word's address, the module's
    /// number, the storage's base: set before `JitCode::run`): a pure
    /// load, which Cranelift merges with an earlier one of the same field
    /// (the second call of a function reuses the first's) and hoists.
    fn env_fixed(&mut self, ty: Type, offset: usize) -> Value {
        self.b.ins().load(
            ty,
            MemFlags::trusted().with_readonly().with_can_move(),
            self.env,
            offset as i32,
        )
    }

    /// `vm.return` at `k` from a function compiled callers call: the
    /// results go to `JitEnv::ret` and the code returns `k` with
    /// [`RETURNED_BIT`], storing nothing to the window (a compiled caller
    /// reads `ret`; when the interpreter entered the code, it puts `ret`
    /// into the return's registers before running the return itself:
    /// `exec::dispatch::put_returned`).
    fn inline_return(&mut self, k: usize, i: &Inst) {
        if let Some(l) = self.limits {
            // The return stands alone: its unit is paid by whoever
            // performs it (a compiled caller, or the interpreter running
            // it after `put_returned`), so it is only checked here; when
            // the fuel does not reach, the interpreter runs it and runs
            // out there.
            let fuel = self.b.use_var(l.fuel);
            let short = self.b.ins().icmp_imm(IntCC::UnsignedLessThan, fuel, 1);
            self.exit_if(short, k);
            let fuel = self.b.use_var(l.fuel);
            self.fuel_to_env(fuel);
        }
        let ret = std::mem::offset_of!(JitEnv, ret);
        let kinds = self.result_kinds;
        for (j, (&r, &kind)) in aux_list(self.aux, i.x, 0).iter().zip(kinds).enumerate() {
            let v = if matches!(kind, b'I' | b'F') {
                self.i64(r as u16)
            } else {
                self.i32(r as u16)
            };
            self.b
                .ins()
                .store(MemFlags::trusted(), v, self.env, (ret + 8 * j) as i32);
        }
        let v = self
            .b
            .ins()
            .iconst(types::I32, i64::from((k as u32 | RETURNED_BIT) as i32));
        self.b.ins().return_(&[v]);
    }

    /// `vm.call` at `k` of `c`, made in compiled code (see the module's
    /// documentation); it leaves before the call for the interpreter when
    /// a limit or capacity check fails or the callee has no code to call,
    /// and with [`LEFT_IN_CALLEE`] when the callee left part-way.
    fn inline_call(&mut self, k: usize, i: &Inst, c: &Callee) {
        let lay = FRAME_LAYOUT;
        let ptr = self.ptr;
        let n = c.i32_count as usize;
        let padded = ((n + 3) & !3).max(4);
        let before = self.exit(k);
        // The limits and capacities, one compare and branch each (none
        // when an earlier call of this block checked them for a callee at
        // least as large: `checked_call`).
        let callee_frame = self.b.ins().iadd_imm(self.frame, lay.size as i64);
        let callee_end = self
            .b
            .ins()
            .iadd_imm(self.stack_end, i64::from(c.frame_bytes));
        let callee_regs = self.b.ins().iadd_imm(self.regs, (self.n32 * 4) as i64);
        let covered = self
            .checked_call
            .is_some_and(|(bytes, slots)| c.frame_bytes <= bytes && padded <= slots);
        if !covered {
            let callee_frame_end = self.b.ins().iadd_imm(self.frame, 2 * lay.size as i64);
            let frames_end = self.env_fixed(ptr, std::mem::offset_of!(JitEnv, frames_end));
            let deep = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThan, callee_frame_end, frames_end);
            self.exit_if(deep, k);
            let stack_bytes = self.env_fixed(types::I64, std::mem::offset_of!(JitEnv, stack_bytes));
            let big = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThan, callee_end, stack_bytes);
            self.exit_if(big, k);
            let window_end = self
                .b
                .ins()
                .iadd_imm(self.regs, ((self.n32 + padded) * 4) as i64);
            let i32_end = self.env_fixed(ptr, std::mem::offset_of!(JitEnv, i32_end));
            let wide = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThan, window_end, i32_end);
            self.exit_if(wide, k);
            let sp = self.b.ins().get_stack_pointer(ptr);
            let floor = self.env_fixed(ptr, std::mem::offset_of!(JitEnv, native_floor));
            let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, floor);
            self.exit_if(low, k);
        }
        if self.polled {
            let stop = self.env_fixed(ptr, std::mem::offset_of!(JitEnv, stop));
            let word = self.b.ins().load(types::I32, MemFlags::trusted(), stop, 0);
            self.exit_if(word, k);
        }
        // A call of the function itself needs no look-up: this code is
        // there. Any other callee's entry is read from its cell (0 until
        // its code lands).
        let entry = if self.own_cell == Some(c.entry) {
            None
        } else {
            let cell = self.callee_address(i.x, CalleeAddress::EntryCell);
            let entry = self.b.ins().load(ptr, MemFlags::trusted(), cell, 0);
            let go = self.b.create_block();
            self.b.ins().brif(entry, go, &[], before, &[]);
            self.b.switch_to_block(go);
            Some(entry)
        };
        // The callee's window: the arguments, placed as the interpreter
        // places them (`exec::marshal_args`), and zero in every other slot
        // the callee may read before writing it.
        let mut filled = vec![false; n];
        let mut s = 0usize;
        for &kind in &c.arg_kinds {
            if matches!(kind, b'I' | b'F') {
                s = s.div_ceil(2) * 2;
                if s + 2 <= n {
                    filled[s] = true;
                    filled[s + 1] = true;
                }
                s += 2;
            } else {
                if s < n {
                    filled[s] = true;
                }
                s += 1;
            }
        }
        let zero = self.b.ins().iconst(types::I32, 0);
        for &z in &c.zeroed {
            let z = z as usize;
            if z < n && !filled[z] {
                self.b
                    .ins()
                    .store(MemFlags::trusted(), zero, callee_regs, (z * 4) as i32);
            }
        }
        let mut s = 0usize;
        for (&r, &kind) in aux_list(self.aux, i.y, 0).iter().zip(&c.arg_kinds) {
            let r = r as u16;
            if matches!(kind, b'I' | b'F') {
                s = s.div_ceil(2) * 2;
                if s + 2 <= n {
                    let v = self.i64(r);
                    self.b.ins().store(
                        MemFlags::new().with_notrap(),
                        v,
                        callee_regs,
                        (s * 4) as i32,
                    );
                }
                s += 2;
            } else {
                if s < n {
                    let v = self.i32(r);
                    self.b
                        .ins()
                        .store(MemFlags::trusted(), v, callee_regs, (s * 4) as i32);
                }
                s += 1;
            }
        }
        // Counting fuel: the call's own unit and the callee's first run
        // are paid here, as the interpreter pays them; when the fuel does
        // not reach, the interpreter makes the call and runs out where it
        // does. The callee spends from the env's fuel and leaves there what
        // is left.
        if let Some(l) = self.limits {
            let cost = 1 + i64::from(c.first_run);
            let fuel = self.b.use_var(l.fuel);
            let short = self.b.ins().icmp_imm(IntCC::UnsignedLessThan, fuel, cost);
            self.exit_if(short, k);
            let fuel = self.b.use_var(l.fuel);
            let left = self.b.ins().iadd_imm(fuel, -cost);
            self.fuel_to_env(left);
        }
        let start = self.b.ins().iconst(types::I32, 0);
        let args = [callee_regs, self.env, start, callee_frame, callee_end];
        let call = match entry {
            Some(entry) => {
                let sig = self.b.import_signature(self.b.func.signature.clone());
                self.b.ins().call_indirect(sig, entry, &args)
            }
            None => {
                let own = self.own_ref();
                self.b.ins().call(own, &args)
            }
        };
        let r = self.b.inst_results(call)[0];
        self.fuel_from_env();
        let returned = self.b.ins().band_imm(r, i64::from(RETURNED_BIT as i32));
        let done = self.b.create_block();
        let left = self.b.create_block();
        self.b.set_cold_block(left);
        self.b.ins().brif(returned, done, &[], left, &[]);

        // The callee left compiled code: its record, then this frame's
        // pc and result list, and out with the marker.
        self.b.switch_to_block(left);
        let f = MemFlags::trusted();
        let module = self.env_fixed(types::I32, std::mem::offset_of!(JitEnv, module));
        self.b
            .ins()
            .store(f, module, callee_frame, lay.module as i32);
        let func = self.callee_address(i.x, CalleeAddress::Function);
        self.b.ins().store(f, func, callee_frame, lay.func as i32);
        let i32s = self.env_fixed(ptr, std::mem::offset_of!(JitEnv, i32s));
        let base = self.b.ins().isub(callee_regs, i32s);
        let base = self.b.ins().ushr_imm(base, 2);
        let base = if ptr == types::I32 {
            base
        } else {
            self.b.ins().ireduce(types::I32, base)
        };
        self.b
            .ins()
            .store(f, base, callee_frame, lay.i32_base as i32);
        let ref_top = self.env_fixed(types::I32, std::mem::offset_of!(JitEnv, ref_top));
        self.b
            .ins()
            .store(f, ref_top, callee_frame, lay.ref_base as i32);
        self.b
            .ins()
            .store(f, callee_end, callee_frame, lay.stack_end as i32);
        let marker = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, r, i64::from(LEFT_IN_CALLEE as i32));
        let innermost = self.b.create_block();
        let own = self.b.create_block();
        self.b.set_cold_block(innermost);
        self.b.set_cold_block(own);
        self.b.ins().brif(marker, own, &[], innermost, &[]);
        self.b.switch_to_block(innermost);
        self.b.ins().store(f, r, callee_frame, lay.pc as i32);
        let none = self.b.ins().iconst(types::I32, i64::from(NONE as i32));
        self.b.ins().store(f, none, callee_frame, lay.ret as i32);
        self.b.ins().store(
            f,
            callee_frame,
            self.env,
            std::mem::offset_of!(JitEnv, innermost) as i32,
        );
        self.b.ins().jump(own, &[]);
        self.b.switch_to_block(own);
        let pc = self.b.ins().iconst(types::I32, (k + 1) as i64);
        self.b.ins().store(f, pc, self.frame, lay.pc as i32);
        let nargs = aux_list(self.aux, i.y, 0).len();
        let ret_at = self
            .b
            .ins()
            .iconst(types::I32, (i.y as usize + 1 + nargs) as i64);
        self.b.ins().store(f, ret_at, self.frame, lay.ret as i32);
        let out = self.special_exit(k, LEFT_IN_CALLEE);
        self.b.ins().jump(out, &[]);

        // Returned: the results into this frame's registers.
        self.b.switch_to_block(done);
        let ret = std::mem::offset_of!(JitEnv, ret);
        for (j, (&d, &kind)) in aux_list(self.aux, i.y, 1)
            .iter()
            .zip(&c.result_kinds)
            .enumerate()
        {
            let d = d as u16;
            if matches!(kind, b'I' | b'F') {
                let v = self.env_load(types::I64, ret + 8 * j);
                self.set_i64(d, v);
            } else {
                let v = self.env_load(types::I32, ret + 8 * j);
                self.set_i32(d, v);
            }
        }
        // The callee's return (checked there to be paid for), then the run
        // after the call, as the interpreter's return pays them.
        self.pay_unit_then_next_run(k);
        // Each check depends on one of the two sizes only, so passing for
        // two callees is passing for their larger sizes.
        let (bytes, slots) = self.checked_call.unwrap_or((0, 0));
        self.checked_call = Some((bytes.max(c.frame_bytes), slots.max(padded)));
    }

    /// An address of callee `ordinal` (`what`) as a relocated constant:
    /// the code is made once per module and linked into each context
    /// with that context's addresses ([`link`]).
    fn callee_address(&mut self, ordinal: u32, what: CalleeAddress) -> Value {
        let name = self
            .b
            .func
            .declare_imported_user_function(address_name(ordinal, what));
        let gv = self.b.create_global_value(GlobalValueData::Symbol {
            name: ExternalName::user(name),
            offset: Imm64::new(0),
            colocated: false,
            tls: false,
        });
        self.b.ins().symbol_value(self.ptr, gv)
    }

    /// The reference a call of this function itself uses: a colocated
    /// function named [`SELF_NAME`], whose one relocation
    /// `emit_machine_code` resolves to the code's start.
    fn own_ref(&mut self) -> FuncRef {
        if let Some(f) = self.own_ref {
            return f;
        }
        let sig = self.b.import_signature(self.b.func.signature.clone());
        let name = self.b.func.declare_imported_user_function(SELF_NAME);
        let f = self.b.import_function(ExtFuncData {
            name: ExternalName::user(name),
            signature: sig,
            colocated: true,
        });
        self.own_ref = Some(f);
        f
    }

    /// Leaves for the interpreter at `k` when `cond` is nonzero.
    fn exit_if(&mut self, cond: Value, k: usize) {
        let out = self.exit(k);
        let cont = self.b.create_block();
        self.b.ins().brif(cond, out, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// The block arguments of an edge, in order, as the interpreter's
    /// remap does them (one slot or ref at a time).
    fn remap(&mut self, pairs: &[(u16, u16)]) {
        let mut k = 0;
        while k < pairs.len() {
            let (s, d) = pairs[k];
            if s & REF_BANK_BIT != 0 {
                let f = self
                    .b
                    .ins()
                    .iconst(self.ptr, helpers::remap_ref as *const () as usize as i64);
                let mut sig = Signature::new(self.b.func.signature.call_conv);
                sig.params.push(AbiParam::new(self.ptr));
                sig.params.push(AbiParam::new(types::I32));
                sig.params.push(AbiParam::new(types::I32));
                let sig = self.b.import_signature(sig);
                let sv = self.b.ins().iconst(types::I32, i64::from(s));
                let dv = self.b.ins().iconst(types::I32, i64::from(d));
                self.b.ins().call_indirect(sig, f, &[self.env, sv, dv]);
                // Both registers may hold another ref now (a move empties
                // the source): their cached buffers are gone.
                self.forget_buffer(s);
                self.forget_buffer(d);
                k += 1;
                continue;
            }
            // An i64/f64 moved as its two slots, when the second copy does
            // not read what the first wrote.
            if let Some(&(s2, d2)) = pairs.get(k + 1) {
                let (su, du) = (s as usize, d as usize);
                if s2 == s + 1 && d2 == d + 1 && d != s + 1 && self.has(su, W) {
                    let wv = self.i64(s);
                    let dv = (self.has(su, D) && self.has(du, D)).then(|| self.f64(s));
                    self.set64(d, Some(wv), dv);
                    k += 2;
                    continue;
                }
            }
            let iv = self.i32(s);
            let fv = (self.has(s as usize, F) && self.has(d as usize, F)).then(|| self.f32(s));
            self.set32(d, Some(iv), fv);
            k += 1;
        }
    }

    /// Emits the jump of an edge (with its block arguments). With `pay`,
    /// the edge then checks what its copy checks: with [`Checks::Limits`]
    /// it pays for the run at its target (a `cond_br` pays before it
    /// branches), or leaves there unpaid when the fuel it was given does
    /// not (for the interpreter to pay, read the stop word, or go on one
    /// instruction at a time when the fuel has run out); with
    /// [`Checks::Polled`], a back edge leaves there when the stop word is
    /// raised.
    fn edge(&mut self, e: &Edge, blocks: &HashMap<usize, Block>, pay: bool) {
        if let Some(pairs) = &e.remap {
            self.remap(pairs);
        }
        if pay {
            let cost = i64::from(self.runs.get(e.to).copied().unwrap_or(0));
            self.pay_or_leave(cost, e.to);
        }
        let blk = blocks[&e.to];
        self.b.ins().jump(blk, &[]);
    }

    /// With [`Checks::Polled`], at the head of a loop: leaves there when
    /// the stop word is raised (the state is the instruction's own, so the
    /// interpreter reads the word and goes on from there).
    fn poll(&mut self, k: usize) {
        let at = std::mem::offset_of!(JitEnv, stop) as i32;
        // The env's pointer to the word does not change during a call:
        // read-only and movable, so this load is hoisted out of the loop
        // (one load a pass instead of two: loop_sum's pass went from 10
        // host instructions to 9; 6 without the poll).
        let word = self.b.ins().load(
            self.ptr,
            MemFlags::trusted().with_readonly().with_can_move(),
            self.env,
            at,
        );
        // Atomic, so that no load of the word itself is merged with
        // another or hoisted: the watchdog thread writes it.
        let bits = self
            .b
            .ins()
            .atomic_load(types::I32, MemFlags::trusted(), word);
        let out = self.fuel_short_exit(k);
        let on = self.b.create_block();
        self.b.ins().brif(bits, out, &[], on, &[]);
        self.b.switch_to_block(on);
    }

    /// With [`Checks::Limits`]: pays `cost` from the fuel, or leaves at
    /// `k` unpaid with `JitEnv::fuel_short` set when the fuel given does not
    /// reach (for the interpreter to pay, read the stop word, or go on one
    /// instruction at a time).
    fn pay_or_leave(&mut self, cost: i64, k: usize) {
        let Some(l) = self.limits else {
            return;
        };
        let fuel = self.b.use_var(l.fuel);
        let short = self.b.ins().icmp_imm(IntCC::UnsignedLessThan, fuel, cost);
        let out = self.fuel_short_exit(k);
        let paid = self.b.create_block();
        self.b.ins().brif(short, out, &[], paid, &[]);
        self.b.switch_to_block(paid);
        let left = self.b.ins().iadd_imm(fuel, -cost);
        self.b.def_var(l.fuel, left);
    }

    /// With [`Checks::Limits`], after instruction `k` that stands alone
    /// (`program::runs`) and whose unit the fuel is known to hold: takes
    /// that unit, then pays for the run at `k + 1` or leaves there unpaid.
    fn pay_unit_then_next_run(&mut self, k: usize) {
        let Some(l) = self.limits else {
            return;
        };
        let fuel = self.b.use_var(l.fuel);
        let fuel = self.b.ins().iadd_imm(fuel, -1);
        self.b.def_var(l.fuel, fuel);
        let next = k + 1;
        let cost = i64::from(self.runs.get(next).copied().unwrap_or(0));
        self.pay_or_leave(cost, next);
    }

    /// A block that leaves at `k` with `JitEnv::fuel_short` set (filled
    /// by [`Tx::fill_exits`]).
    fn fuel_short_exit(&mut self, k: usize) -> Block {
        if let Some(&(blk, _)) = self.short_exits.iter().find(|e| e.1 == k) {
            return blk;
        }
        self.exit(k);
        let blk = self.b.create_block();
        self.b.set_cold_block(blk);
        self.short_exits.push((blk, k));
        blk
    }

    fn call(
        &mut self,
        f: usize,
        params: &[Type],
        ret: Option<Type>,
        args: &[Value],
    ) -> Option<Value> {
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        for &p in params {
            sig.params.push(AbiParam::new(p));
        }
        if let Some(r) = ret {
            sig.returns.push(AbiParam::new(r));
        }
        let sig = self.b.import_signature(sig);
        let callee = self.b.ins().iconst(self.ptr, f as i64);
        // The fuel goes to the env and back around the call, so that it
        // is not live across it: a value that is needs one of the few
        // callee-saved registers, and a loop with a helper call on its
        // way out (buffer_reduce's) spilled three of its values in every
        // iteration to make room for it.
        if let Some(l) = self.limits {
            let fuel = self.b.use_var(l.fuel);
            self.fuel_to_env(fuel);
        }
        let call = self.b.ins().call_indirect(sig, callee, args);
        let result = self.b.inst_results(call).first().copied();
        self.fuel_from_env();
        result
    }

    /// With [`Checks::Limits`]: stores `fuel` to `JitEnv::fuel`, where
    /// the interpreter, a helper or a compiled callee reads it.
    fn fuel_to_env(&mut self, fuel: Value) {
        let at = std::mem::offset_of!(JitEnv, fuel) as i32;
        self.b.ins().store(MemFlags::trusted(), fuel, self.env, at);
    }

    /// With [`Checks::Limits`]: the fuel variable becomes what
    /// `JitEnv::fuel` holds (after a call that spent from it).
    fn fuel_from_env(&mut self) {
        if let Some(l) = self.limits {
            let at = std::mem::offset_of!(JitEnv, fuel) as i32;
            let fuel = self
                .b
                .ins()
                .load(types::I64, MemFlags::trusted(), self.env, at);
            self.b.def_var(l.fuel, fuel);
        }
    }

    /// The append a `ListSizeThenAppend` at `k` starts, when it is
    /// translated as one ([`Tx::list_append`]): in copies without fuel
    /// (where the resize pays its own unit: `Tx::alone_helper`) and with no
    /// block starting inside it.
    fn fused_append(
        &self,
        code: &[Inst],
        k: usize,
        blocks: &HashMap<usize, Block>,
    ) -> Option<crate::program::fuse::Append> {
        if code[k].op != Opcode::ListSizeThenAppend
            || self.limits.is_some()
            || (k + 1..k + 4).any(|j| blocks.contains_key(&j))
        {
            return None;
        }
        crate::program::fuse::append_at(code, k)
    }

    /// The append at `k` (`vm.list.size`, `vm.add.i32`, `vm.list.resize`,
    /// `vm.list.set.*`: `a`) as one call of `helpers::list_append`; where
    /// the helper says the separate instructions' helpers would have left,
    /// compiled code leaves there, with the registers written before it as
    /// those instructions write them. The caller skips the other three.
    fn list_append(&mut self, k: usize, a: crate::program::fuse::Append) {
        use helpers::append_left;
        let f = match a.set {
            Opcode::ListSetI32 => helpers::list_append::<0> as *const () as usize,
            Opcode::ListSetF32 => helpers::list_append::<1> as *const () as usize,
            Opcode::ListSetI64 => helpers::list_append::<2> as *const () as usize,
            _ => helpers::list_append::<3> as *const () as usize,
        };
        let r = self.b.ins().iconst(types::I32, i64::from(a.list));
        let delta = self.i32(a.delta);
        let v = if matches!(a.set, Opcode::ListSetI64 | Opcode::ListSetF64) {
            self.i64(a.value)
        } else {
            let v = self.i32(a.value);
            self.b.ins().uextend(types::I64, v)
        };
        let checked = self.b.ins().iconst(types::I32, i64::from(self.polled));
        let got = self
            .call(
                f,
                &[self.ptr, types::I32, types::I32, types::I64, types::I32],
                Some(types::I64),
                &[self.env, r, delta, v, checked],
            )
            .expect("a result");
        let left = self.b.ins().ushr_imm(got, 32);
        let n = self.b.ins().ireduce(types::I32, got);
        let (slow, done) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(slow);
        self.b.ins().brif(left, slow, &[], done, &[]);
        // Where a separate instruction would have left: no list (before
        // the size), then, with the size and new size written as the size
        // and the add write them, before the resize or the set.
        self.b.switch_to_block(slow);
        let at_size = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, left, append_left::AT_SIZE as i64);
        self.exit_if(at_size, k);
        self.append_sizes(k, &a, n, delta);
        let at_resize = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, left, append_left::AT_RESIZE as i64);
        self.exit_if(at_resize, k + 2);
        let out = self.exit(k + 3);
        self.b.ins().jump(out, &[]);
        self.b.switch_to_block(done);
        self.append_sizes(k, &a, n, delta);
        self.cur = k;
        self.skip_to = k + 4;
    }

    /// The registers an append's size and add write: `n`, then `n + delta`.
    fn append_sizes(&mut self, k: usize, a: &crate::program::fuse::Append, n: Value, d: Value) {
        self.cur = k;
        self.set_i32(a.size, n);
        self.cur = k + 1;
        let t = self.b.ins().iadd(n, d);
        self.set_i32(a.new_size, t);
    }

    /// `vm.list.resize` of list `a` to size `b`, or `vm.list.reserve` of
    /// room for `b` elements (`helper`: `helpers::list_resize` or
    /// `list_reserve`).
    fn list_sizing(&mut self, k: usize, i: &Inst, helper: usize) {
        let r = self
            .b
            .ins()
            .iconst(types::I32, i64::from(i.a & REF_INDEX_MASK));
        let size = self.i32(i.b);
        self.alone_helper(k, helper, &[r, size]);
    }

    /// A helper call for instruction `k`, one that stands alone in the
    /// runs fuel is charged in (`program::runs`: the list instructions
    /// that may be bulk work), with `args` (i32s) and then whether this
    /// copy checks limits; the helper returns zero, having changed nothing,
    /// when the interpreter must run the instruction (bulk work it charges
    /// and does in pieces, traps). With [`Checks::Limits`] the instruction
    /// pays its own unit first and, done, the run after it, as the
    /// interpreter's fueled loop does (leaving unpaid where the fuel does
    /// not reach).
    fn alone_helper(&mut self, k: usize, helper: usize, args: &[Value]) {
        if let Some(l) = self.limits {
            let fuel = self.b.use_var(l.fuel);
            let short = self.b.ins().icmp_imm(IntCC::UnsignedLessThan, fuel, 1);
            let out = self.fuel_short_exit(k);
            let paid = self.b.create_block();
            self.b.ins().brif(short, out, &[], paid, &[]);
            self.b.switch_to_block(paid);
        }
        let checked = self.limits.is_some() || self.polled;
        let checked = self.b.ins().iconst(types::I32, i64::from(checked));
        let mut params = vec![self.ptr];
        params.extend(args.iter().map(|_| types::I32));
        params.push(types::I32);
        let mut values = vec![self.env];
        values.extend_from_slice(args);
        values.push(checked);
        let ok = self
            .call(helper, &params, Some(types::I32), &values)
            .expect("a result");
        let failed = self.b.ins().icmp_imm(IntCC::Equal, ok, 0);
        self.exit_if(failed, k);
        // Its own unit, then the run it leads to.
        self.pay_unit_then_next_run(k);
    }

    /// Drops what is cached of ref register `r`'s buffer.
    fn forget_buffer(&mut self, r: u16) {
        let r = r & REF_INDEX_MASK;
        if self.buffers.binary_search(&r).is_ok() {
            let [_, rl, wl] = buffer_vars(self.n32, r);
            let zero = self.b.ins().iconst(types::I64, 0);
            self.b.def_var(rl, zero);
            self.b.def_var(wl, zero);
        }
    }

    /// The address of element `index` (an i64) of `n` bytes in the buffer
    /// in ref register `reg`, for a read or a write, leaving at `k` when the
    /// interpreter must do it (it then traps or takes its slow path).
    ///
    /// The first access to a register's buffer on a way through the code
    /// asks `helpers::buffer_access` for the bytes, which checks the
    /// buffer's lease as the interpreter's fast path does; the answer is
    /// kept in variables until the register changes (a ref block
    /// argument) or the code returns. Every access checks only its bounds,
    /// as the interpreter does: until resolved, the cached lengths are 0,
    /// so the bounds check itself sends the first access (and a write
    /// after reads) to the resolving path.
    fn buffer_address(&mut self, k: usize, n: usize, reg: u16, index: Value, write: bool) -> Value {
        let [pv, rlv, wlv] = buffer_vars(self.n32, reg);
        let shift = n.trailing_zeros() as i64;
        // In bounds when index < len / n (`load_as`); an unresolved
        // buffer has length 0 here.
        let len = self.b.use_var(if write { wlv } else { rlv });
        let count = self.b.ins().ushr_imm(len, shift);
        let out = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, index, count);
        let resolve = self.b.create_block();
        let ready = self.b.create_block();
        self.b.ins().brif(out, resolve, &[], ready, &[]);
        self.b.set_cold_block(resolve);
        self.b.switch_to_block(resolve);
        let r = self
            .b
            .ins()
            .iconst(types::I32, i64::from(reg & REF_INDEX_MASK));
        let w = self.b.ins().iconst(types::I32, i64::from(write));
        let p = self
            .call(
                helpers::buffer_access as *const () as usize,
                &[self.ptr, types::I32, types::I32],
                Some(self.ptr),
                &[self.env, r, w],
            )
            .expect("a result");
        let null = self.b.ins().icmp_imm(IntCC::Equal, p, 0);
        self.exit_if(null, k);
        let len = self.b.ins().load(
            types::I64,
            MemFlags::trusted(),
            self.env,
            std::mem::offset_of!(JitEnv, access_len) as i32,
        );
        self.b.def_var(pv, p);
        self.b.def_var(rlv, len);
        if write {
            self.b.def_var(wlv, len);
        }
        // Resolved, and still out of range: the interpreter traps.
        let count = self.b.ins().ushr_imm(len, shift);
        let out = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, index, count);
        self.exit_if(out, k);
        self.b.ins().jump(ready, &[]);
        self.b.switch_to_block(ready);
        let p = self.b.use_var(pv);
        let off = self.b.ins().ishl_imm(index, shift);
        let off = if self.ptr == types::I64 {
            off
        } else {
            self.b.ins().ireduce(self.ptr, off)
        };
        self.b.ins().iadd(p, off)
    }

    /// Loads element `index` of `N` bytes from the buffer in ref register
    /// `reg`, zero-extended to an i64, leaving at `k` on failure.
    fn buffer_load(&mut self, k: usize, n: usize, reg: u16, index: Value) -> Value {
        let at = self.buffer_address(k, n, reg, index, false);
        let ty = int_type(n);
        let v = self.b.ins().load(ty, MemFlags::new().with_notrap(), at, 0);
        if n == 8 {
            v
        } else {
            self.b.ins().uextend(types::I64, v)
        }
    }

    /// Stores the low `N` bytes of `value` (an i64) at element `index` of
    /// the buffer in ref register `reg`, leaving at `k` on failure.
    fn buffer_store(&mut self, k: usize, n: usize, reg: u16, index: Value, value: Value) {
        let at = self.buffer_address(k, n, reg, index, true);
        let v = if n == 8 {
            value
        } else {
            self.b.ins().ireduce(int_type(n), value)
        };
        self.b.ins().store(MemFlags::new().with_notrap(), v, at, 0);
    }

    /// Translates the buffer element access `e` of instruction `i` (at
    /// `k`): an element loaded into register `c`, or `c` stored.
    fn buffer_element(&mut self, k: usize, i: &Inst, e: BufferElement) {
        let index = self.i64(i.b);
        if e.store {
            let v = if e.bytes == 8 {
                self.i64(i.c)
            } else {
                let v = self.i32(i.c);
                self.b.ins().uextend(types::I64, v)
            };
            self.buffer_store(k, e.bytes, i.a, index, v);
            return;
        }
        let v = self.buffer_load(k, e.bytes, i.a, index);
        if e.bytes == 8 {
            self.set_i64(i.c, v);
            return;
        }
        let v = if e.signed {
            let n = self.b.ins().ireduce(int_type(e.bytes), v);
            self.b.ins().sextend(types::I32, n)
        } else {
            self.b.ins().ireduce(types::I32, v)
        };
        self.set_i32(i.c, v);
    }

    /// The address of `n` bytes of global storage at byte `off` (an i64),
    /// leaving at `k` when out of range.
    fn global(&mut self, k: usize, off: Value, n: i64, rwdata: Value, len: Value) -> Value {
        let end = self.b.ins().iadd_imm(off, n);
        let out = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, len);
        self.exit_if(out, k);
        let off = if self.ptr == types::I64 {
            off
        } else {
            self.b.ins().ireduce(self.ptr, off)
        };
        self.b.ins().iadd(rwdata, off)
    }

    fn bool32(&mut self, c: Value) -> Value {
        self.b.ins().uextend(types::I32, c)
    }

    /// Translates instruction `k`; false when control does not fall
    /// through to `k + 1`.
    fn inst(
        &mut self,
        code: &[Inst],
        k: usize,
        blocks: &HashMap<usize, Block>,
        rwdata: Value,
        rwdata_len: Value,
    ) -> bool {
        use Opcode::*;
        let i = code[k];
        let op = first_half(i.op);
        let calls = self.calls;
        if let Some(c) = calls.inline(&i) {
            self.inline_call(k, &i, c);
            return true;
        }
        if op == Return && calls.returns {
            self.inline_return(k, &i);
            return false;
        }
        if !translated(op) {
            let out = self.exit(k);
            self.b.ins().jump(out, &[]);
            return false;
        }
        if let Some(e) = buffer_element(op) {
            self.buffer_element(k, &i, e);
            return true;
        }
        let g = MemFlags::new().with_notrap();
        // The bank of the first register operand: what the arithmetic
        // and comparison arms below read (and, but for comparisons, write).
        let bank = reg_fields(op).next().unwrap_or(Bank::I32);
        let ity = if bank == Bank::I64 {
            types::I64
        } else {
            types::I32
        };
        macro_rules! bin {
            ($f:ident) => {{
                let (x, y) = (self.get(i.a, bank), self.get(i.b, bank));
                let v = self.b.ins().$f(x, y);
                self.put(i.c, bank, v);
            }};
        }
        macro_rules! cmp {
            ($f:ident, $cc:expr) => {{
                let (x, y) = (self.get(i.a, bank), self.get(i.b, bank));
                let c = self.b.ins().$f($cc, x, y);
                let v = self.bool32(c);
                self.set_i32(i.c, v);
            }};
        }
        macro_rules! un32 {
            (|$x:ident| $body:expr) => {{
                let $x = self.i32(i.a);
                let v = $body;
                self.set_i32(i.b, v);
            }};
        }
        // Division: a zero divisor leaves (the interpreter traps); a
        // signed divisor of -1 is computed without the hardware's overflow
        // trap (`$m1`: the result then, `ineg` or zero).
        macro_rules! div {
            ($op:ident, $m1:ident) => {{
                let (x, y) = (self.get(i.a, bank), self.get(i.b, bank));
                let zero = self.b.ins().icmp_imm(IntCC::Equal, y, 0);
                self.exit_if(zero, k);
                let m1 = self.b.ins().icmp_imm(IntCC::Equal, y, -1);
                let one = self.b.ins().iconst(ity, 1);
                let safe = self.b.ins().select(m1, one, y);
                let q = self.b.ins().$op(x, safe);
                let alt = $m1!(x);
                let v = self.b.ins().select(m1, alt, q);
                self.put(i.c, bank, v);
            }};
        }
        macro_rules! neg {
            ($x:expr) => {
                self.b.ins().ineg($x)
            };
        }
        macro_rules! zero {
            ($x:expr) => {
                self.b.ins().iconst(ity, 0)
            };
        }
        macro_rules! udiv {
            ($op:ident) => {{
                let (x, y) = (self.get(i.a, bank), self.get(i.b, bank));
                let zero = self.b.ins().icmp_imm(IntCC::Equal, y, 0);
                self.exit_if(zero, k);
                let v = self.b.ins().$op(x, y);
                self.put(i.c, bank, v);
            }};
        }
        match op {
            ConstI32Zero | ConstF32Zero => {
                let v = self.b.ins().iconst(types::I32, 0);
                self.set_i32(i.a, v);
            }
            ConstI32 | ConstF32 => {
                let v = self.b.ins().iconst(types::I32, i64::from(i.x as i32));
                self.set_i32(i.a, v);
            }
            ConstI64Zero | ConstF64Zero => {
                let v = self.b.ins().iconst(types::I64, 0);
                self.set_i64(i.a, v);
            }
            ConstI64 | ConstF64 => {
                let bits = ((i.y as u64) << 32 | i.x as u64) as i64;
                let v = self.b.ins().iconst(types::I64, bits);
                self.set_i64(i.a, v);
            }
            SelectI32 | SelectF32 | SelectI64 | SelectF64 => {
                // The condition is an i32; the values are of the result's bank.
                let vb = reg_fields(op).nth(1).unwrap_or(Bank::I32);
                let (c, x, y) = (self.i32(i.a), self.get(i.b, vb), self.get(i.c, vb));
                let v = self.b.ins().select(c, x, y);
                self.put(i.d, vb, v);
            }
            AddI32 | AddI64 => bin!(iadd),
            SubI32 | SubI64 => bin!(isub),
            MulI32 | MulI64 => bin!(imul),
            DivI32S | DivI64S => div!(sdiv, neg),
            RemI32S | RemI64S => div!(srem, zero),
            DivI32U | DivI64U => udiv!(udiv),
            RemI32U | RemI64U => udiv!(urem),
            FmaI32 | FmaI64 | FmaF32 | FmaF64 => {
                // A multiply then an add, also for floats (not fused), as the
                // interpreter and the reference compute it.
                let float = matches!(bank, Bank::F32 | Bank::F64);
                let (x, y, z) = (
                    self.get(i.a, bank),
                    self.get(i.b, bank),
                    self.get(i.c, bank),
                );
                let v = if float {
                    let m = self.b.ins().fmul(x, y);
                    self.b.ins().fadd(m, z)
                } else {
                    let m = self.b.ins().imul(x, y);
                    self.b.ins().iadd(m, z)
                };
                self.put(i.d, bank, v);
            }
            AbsI32 | AbsI64 | NotI32 | NotI64 | CtlzI32 | CtlzI64 => {
                let x = self.get(i.a, bank);
                let v = match op {
                    AbsI32 | AbsI64 => self.b.ins().iabs(x),
                    NotI32 | NotI64 => self.b.ins().bnot(x),
                    _ => self.b.ins().clz(x),
                };
                self.put(i.b, bank, v);
            }
            MinI32S | MinI64S => bin!(smin),
            MinI32U | MinI64U => bin!(umin),
            MaxI32S | MaxI64S => bin!(smax),
            MaxI32U | MaxI64U => bin!(umax),
            AndI32 | AndI64 => bin!(band),
            OrI32 | OrI64 => bin!(bor),
            XorI32 | XorI64 => bin!(bxor),
            ShlI32 | ShrI32S | ShrI32U => {
                let (x, y) = (self.i32(i.a), self.i32(i.b));
                let y = self.b.ins().band_imm(y, 31);
                let v = match op {
                    ShlI32 => self.b.ins().ishl(x, y),
                    ShrI32S => self.b.ins().sshr(x, y),
                    _ => self.b.ins().ushr(x, y),
                };
                self.set_i32(i.c, v);
            }
            ShlI64 | ShrI64S | ShrI64U => {
                let (x, y) = (self.i64(i.a), self.i32(i.b));
                let y = self.b.ins().band_imm(y, 63);
                let y = self.b.ins().uextend(types::I64, y);
                let v = match op {
                    ShlI64 => self.b.ins().ishl(x, y),
                    ShrI64S => self.b.ins().sshr(x, y),
                    _ => self.b.ins().ushr(x, y),
                };
                self.set_i64(i.c, v);
            }
            TruncI32I8 => un32!(|x| self.b.ins().band_imm(x, 0xFF)),
            TruncI32I16 => un32!(|x| self.b.ins().band_imm(x, 0xFFFF)),
            ExtI8I32U => un32!(|x| self.b.ins().band_imm(x, 0xFF)),
            ExtI16I32U => un32!(|x| self.b.ins().band_imm(x, 0xFFFF)),
            ExtI8I32S => un32!(|x| {
                let n = self.b.ins().ireduce(types::I8, x);
                self.b.ins().sextend(types::I32, n)
            }),
            ExtI16I32S => un32!(|x| {
                let n = self.b.ins().ireduce(types::I16, x);
                self.b.ins().sextend(types::I32, n)
            }),
            TruncI64I32 => {
                let x = self.i64(i.a);
                let v = self.b.ins().ireduce(types::I32, x);
                self.set_i32(i.b, v);
            }
            ExtI32I64S | ExtI32I64U => {
                let x = self.i32(i.a);
                let v = if op == ExtI32I64S {
                    self.b.ins().sextend(types::I64, x)
                } else {
                    self.b.ins().uextend(types::I64, x)
                };
                self.set_i64(i.b, v);
            }
            CmpEqI32 | CmpEqI64 => cmp!(icmp, IntCC::Equal),
            CmpNeI32 | CmpNeI64 => cmp!(icmp, IntCC::NotEqual),
            CmpLtI32S | CmpLtI64S => cmp!(icmp, IntCC::SignedLessThan),
            CmpLtI32U | CmpLtI64U => cmp!(icmp, IntCC::UnsignedLessThan),
            CmpNzI32 => un32!(|x| {
                let c = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
                self.bool32(c)
            }),
            CmpNzI64 => {
                let x = self.i64(i.a);
                let c = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
                let v = self.bool32(c);
                self.set_i32(i.b, v);
            }
            Br => {
                let es = edges(code, k).expect("a branch");
                self.edge(&es[0], blocks, true);
                return false;
            }
            CondBr => {
                let es = edges(code, k).expect("a branch");
                let c = self.i32(i.a);
                if let Some(l) = self.limits {
                    // Pay for the target's run before branching (one
                    // select and compare on the hot path); when the fuel
                    // given does not, a cold block takes the edge to an
                    // unpaid exit at its target.
                    let cost = |t: &Edge| i64::from(self.runs.get(t.to).copied().unwrap_or(0));
                    let (ct, cf) = (cost(&es[0]), cost(&es[1]));
                    let vt = self.b.ins().iconst(types::I64, ct);
                    let vf = self.b.ins().iconst(types::I64, cf);
                    let cost = self.b.ins().select(c, vt, vf);
                    let fuel = self.b.use_var(l.fuel);
                    let short = self.b.ins().icmp(IntCC::UnsignedLessThan, fuel, cost);
                    let slow = self.b.create_block();
                    self.b.set_cold_block(slow);
                    let paid = self.b.create_block();
                    self.b.ins().brif(short, slow, &[], paid, &[]);
                    self.b.switch_to_block(slow);
                    let short_edges = [self.b.create_block(), self.b.create_block()];
                    self.b
                        .ins()
                        .brif(c, short_edges[0], &[], short_edges[1], &[]);
                    for (e, &blk) in es.iter().zip(&short_edges) {
                        self.b.set_cold_block(blk);
                        self.b.switch_to_block(blk);
                        if let Some(pairs) = &e.remap {
                            self.remap(pairs);
                        }
                        let out = self.fuel_short_exit(e.to);
                        self.b.ins().jump(out, &[]);
                    }
                    self.b.switch_to_block(paid);
                    let left = self.b.ins().isub(fuel, cost);
                    self.b.def_var(l.fuel, left);
                }
                // Edges with block arguments go through a block of their own.
                let dest: Vec<(ClBlock, bool)> = es
                    .iter()
                    .map(|e| match e.remap {
                        None => (blocks[&e.to], false),
                        _ => (self.b.create_block(), true),
                    })
                    .collect();
                self.b.ins().brif(c, dest[0].0, &[], dest[1].0, &[]);
                for (e, &(blk, own)) in es.iter().zip(&dest) {
                    if own {
                        self.b.switch_to_block(blk);
                        self.edge(e, blocks, false);
                    }
                }
                return false;
            }
            ListGetI32 | ListGetF32 | ListGetI64 | ListGetF64 | ListSetI32 | ListSetF32
            | ListSetI64 | ListSetF64 => {
                let r = self
                    .b
                    .ins()
                    .iconst(types::I32, i64::from(i.a & REF_INDEX_MASK));
                let index = self.i32(i.b);
                match op {
                    ListGetI32 | ListGetF32 | ListGetI64 | ListGetF64 => {
                        let f = match op {
                            ListGetI32 => helpers::list_get::<0> as *const () as usize,
                            ListGetF32 => helpers::list_get::<1> as *const () as usize,
                            ListGetI64 => helpers::list_get::<2> as *const () as usize,
                            _ => helpers::list_get::<3> as *const () as usize,
                        };
                        let v = self
                            .call(
                                f,
                                &[self.ptr, types::I32, types::I32],
                                Some(types::I64),
                                &[self.env, r, index],
                            )
                            .expect("a result");
                        let fault = self.b.ins().load(
                            types::I32,
                            MemFlags::trusted(),
                            self.env,
                            std::mem::offset_of!(JitEnv, fault) as i32,
                        );
                        self.exit_if(fault, k);
                        if matches!(op, ListGetI64 | ListGetF64) {
                            self.set_i64(i.c, v);
                        } else {
                            let v = self.b.ins().ireduce(types::I32, v);
                            self.set_i32(i.c, v);
                        }
                    }
                    _ => {
                        let f = match op {
                            ListSetI32 => helpers::list_set::<0> as *const () as usize,
                            ListSetF32 => helpers::list_set::<1> as *const () as usize,
                            ListSetI64 => helpers::list_set::<2> as *const () as usize,
                            _ => helpers::list_set::<3> as *const () as usize,
                        };
                        let v = if matches!(op, ListSetI64 | ListSetF64) {
                            self.i64(i.c)
                        } else {
                            let v = self.i32(i.c);
                            self.b.ins().uextend(types::I64, v)
                        };
                        let ok = self
                            .call(
                                f,
                                &[self.ptr, types::I32, types::I32, types::I64],
                                Some(types::I32),
                                &[self.env, r, index, v],
                            )
                            .expect("a result");
                        let failed = self.b.ins().icmp_imm(IntCC::Equal, ok, 0);
                        self.exit_if(failed, k);
                    }
                }
            }
            ListSize => {
                if let Some(a) = self.fused_append(code, k, blocks) {
                    self.list_append(k, a);
                    return true;
                }
                let r = self
                    .b
                    .ins()
                    .iconst(types::I32, i64::from(i.a & REF_INDEX_MASK));
                let n = self
                    .call(
                        helpers::list_size as *const () as usize,
                        &[self.ptr, types::I32],
                        Some(types::I64),
                        &[self.env, r],
                    )
                    .expect("a result");
                let not_list = self.b.ins().icmp_imm(IntCC::SignedLessThan, n, 0);
                self.exit_if(not_list, k);
                let n = self.b.ins().ireduce(types::I32, n);
                self.set_i32(i.b, n);
            }
            ListResize => self.list_sizing(k, &i, helpers::list_resize as *const () as usize),
            ListReserve => self.list_sizing(k, &i, helpers::list_reserve as *const () as usize),
            ListAlloc => {
                // Type `x`, capacity `a`, destination `b`.
                let ty = self.b.ins().iconst(types::I32, i64::from(i.x));
                let n = self.i32(i.a);
                let dst = self.b.ins().iconst(types::I32, i64::from(i.b));
                self.alone_helper(k, helpers::list_alloc as *const () as usize, &[ty, n, dst]);
                // The register holds the new list now.
                self.forget_buffer(i.b);
            }
            ListSetRef => {
                // List `a`, index `b`, source `c` (with the move bit: taken
                // out of the register).
                let list = self
                    .b
                    .ins()
                    .iconst(types::I32, i64::from(i.a & REF_INDEX_MASK));
                let index = self.i32(i.b);
                let src = self.b.ins().iconst(types::I32, i64::from(i.c));
                let ok = self
                    .call(
                        helpers::list_set_ref as *const () as usize,
                        &[self.ptr, types::I32, types::I32, types::I32],
                        Some(types::I32),
                        &[self.env, list, index, src],
                    )
                    .expect("a result");
                let failed = self.b.ins().icmp_imm(IntCC::Equal, ok, 0);
                self.exit_if(failed, k);
                if i.c & REF_MOVE_BIT != 0 {
                    // The register holds null now.
                    self.forget_buffer(i.c);
                }
            }
            ListGetRef => {
                // List `a`, index `b`, type `x`, destination `c` (with the
                // move bit: take the element out).
                let list = self
                    .b
                    .ins()
                    .iconst(types::I32, i64::from(i.a & REF_INDEX_MASK));
                let index = self.i32(i.b);
                let dst = self.b.ins().iconst(types::I32, i64::from(i.c));
                let ty = self.b.ins().iconst(types::I32, i64::from(i.x));
                let ok = self
                    .call(
                        helpers::list_get_ref as *const () as usize,
                        &[self.ptr, types::I32, types::I32, types::I32, types::I32],
                        Some(types::I32),
                        &[self.env, list, index, dst, ty],
                    )
                    .expect("a result");
                let failed = self.b.ins().icmp_imm(IntCC::Equal, ok, 0);
                self.exit_if(failed, k);
                // The register holds another ref now.
                self.forget_buffer(i.c);
            }
            DiscardRefs => {
                for &r in aux_list(self.aux, i.x, 0) {
                    let r = r as u16 & REF_INDEX_MASK;
                    let reg = self.b.ins().iconst(types::I32, i64::from(r));
                    self.call(
                        helpers::discard_ref as *const () as usize,
                        &[self.ptr, types::I32],
                        None,
                        &[self.env, reg],
                    );
                    self.forget_buffer(r);
                }
            }
            GlobalLoadI32 | GlobalLoadF32 | GlobalLoadI64 | GlobalLoadF64 => {
                let off = self.b.ins().iconst(types::I64, i64::from(i.x));
                let wide = matches!(op, GlobalLoadI64 | GlobalLoadF64);
                let at = self.global(k, off, if wide { 8 } else { 4 }, rwdata, rwdata_len);
                if wide {
                    let v = self.b.ins().load(types::I64, g, at, 0);
                    self.set_i64(i.a, v);
                } else {
                    let v = self.b.ins().load(types::I32, g, at, 0);
                    self.set_i32(i.a, v);
                }
            }
            GlobalStoreI32 | GlobalStoreF32 | GlobalStoreI64 | GlobalStoreF64 => {
                let off = self.b.ins().iconst(types::I64, i64::from(i.x));
                let wide = matches!(op, GlobalStoreI64 | GlobalStoreF64);
                let at = self.global(k, off, if wide { 8 } else { 4 }, rwdata, rwdata_len);
                let v = if wide { self.i64(i.a) } else { self.i32(i.a) };
                self.b.ins().store(g, v, at, 0);
            }
            GlobalLoadIndirectI32
            | GlobalLoadIndirectF32
            | GlobalLoadIndirectI64
            | GlobalLoadIndirectF64 => {
                let off = self.i32(i.a);
                let off = self.b.ins().uextend(types::I64, off);
                let wide = matches!(op, GlobalLoadIndirectI64 | GlobalLoadIndirectF64);
                let at = self.global(k, off, if wide { 8 } else { 4 }, rwdata, rwdata_len);
                if wide {
                    let v = self.b.ins().load(types::I64, g, at, 0);
                    self.set_i64(i.b, v);
                } else {
                    let v = self.b.ins().load(types::I32, g, at, 0);
                    self.set_i32(i.b, v);
                }
            }
            GlobalStoreIndirectI32
            | GlobalStoreIndirectF32
            | GlobalStoreIndirectI64
            | GlobalStoreIndirectF64 => {
                let off = self.i32(i.a);
                let off = self.b.ins().uextend(types::I64, off);
                let wide = matches!(op, GlobalStoreIndirectI64 | GlobalStoreIndirectF64);
                let at = self.global(k, off, if wide { 8 } else { 4 }, rwdata, rwdata_len);
                let v = if wide { self.i64(i.b) } else { self.i32(i.b) };
                self.b.ins().store(g, v, at, 0);
            }
            AddF32 | AddF64 => bin!(fadd),
            SubF32 | SubF64 => bin!(fsub),
            MulF32 | MulF64 => bin!(fmul),
            DivF32 | DivF64 => bin!(fdiv),
            AbsF32 | AbsF64 | NegF32 | NegF64 | SqrtF32 | SqrtF64 | RsqrtF32 | RsqrtF64 => {
                let x = self.get(i.a, bank);
                let v = match op {
                    AbsF32 | AbsF64 => self.b.ins().fabs(x),
                    NegF32 | NegF64 => self.b.ins().fneg(x),
                    SqrtF32 | SqrtF64 => self.b.ins().sqrt(x),
                    _ => {
                        let r = self.b.ins().sqrt(x);
                        let one = if bank == Bank::F64 {
                            self.b.ins().f64const(1.0)
                        } else {
                            self.b.ins().f32const(1.0)
                        };
                        self.b.ins().fdiv(one, r)
                    }
                };
                self.put(i.b, bank, v);
            }
            MinF32 | MinF64 | MaxF32 | MaxF64 => {
                // min: `if y < x { y } else { x }`; max: `if x < y { y } else { x }`.
                let (x, y) = (self.get(i.a, bank), self.get(i.b, bank));
                let c = if matches!(op, MinF32 | MinF64) {
                    self.b.ins().fcmp(FloatCC::LessThan, y, x)
                } else {
                    self.b.ins().fcmp(FloatCC::LessThan, x, y)
                };
                let v = self.b.ins().select(c, y, x);
                self.put(i.c, bank, v);
            }
            CastSI32F32 | CastUI32F32 | CastSI64F32 | CastSI32F64 | CastUI32F64 | CastSI64F64 => {
                // Integer (operand bank) to float (result bank).
                let [from, to]: [Bank; 2] = reg_fields(op)
                    .collect::<Vec<_>>()
                    .try_into()
                    .expect("a conversion has two registers");
                let x = self.get(i.a, from);
                let ty = bank_type(to);
                let v = if matches!(op, CastUI32F32 | CastUI32F64) {
                    self.b.ins().fcvt_from_uint(ty, x)
                } else {
                    self.b.ins().fcvt_from_sint(ty, x)
                };
                self.put(i.b, to, v);
            }
            BitcastI32F32 | BitcastF32I32 => {
                let x = self.i32(i.a);
                self.set_i32(i.b, x);
            }
            CmpEqF32O | CmpEqF64O => cmp!(fcmp, FloatCC::Equal),
            CmpEqF32U | CmpEqF64U => cmp!(fcmp, FloatCC::UnorderedOrEqual),
            CmpNeF32O | CmpNeF32U | CmpNeF64O | CmpNeF64U => cmp!(fcmp, FloatCC::NotEqual),
            CmpLtF32O | CmpLtF64O => cmp!(fcmp, FloatCC::LessThan),
            CmpLtF32U | CmpLtF64U => cmp!(fcmp, FloatCC::UnorderedOrLessThan),
            CmpLteF32O | CmpLteF64O => cmp!(fcmp, FloatCC::LessThanOrEqual),
            CmpLteF32U | CmpLteF64U => cmp!(fcmp, FloatCC::UnorderedOrLessThanOrEqual),
            CmpNanF32 | CmpNanF64 => {
                let x = self.get(i.a, bank);
                let c = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                let v = self.bool32(c);
                self.set_i32(i.b, v);
            }
            TruncF64F32 => {
                let x = self.f64(i.a);
                let v = self.b.ins().fdemote(types::F32, x);
                self.set_f32(i.b, v);
            }
            ExtF32F64 => {
                let x = self.f32(i.a);
                let v = self.b.ins().fpromote(types::F64, x);
                self.set_f64(i.b, v);
            }
            BitcastI64F64 | BitcastF64I64 => {
                let x = self.i64(i.a);
                self.set_i64(i.b, x);
            }
            _ => {
                let Some(f) = helpers::pure_op(op) else {
                    unreachable!("{op:?} is listed as translated")
                };
                // Every register but the last is an operand, the last the
                // result (the ISA table's layout of these operations).
                let banks: Vec<Bank> = reg_fields(op).collect();
                let regs = [i.a, i.b, i.c, i.d];
                let n = banks.len() - 1;
                let args: Vec<Value> = (0..n).map(|j| self.get(regs[j], banks[j])).collect();
                let params: Vec<Type> = banks[..n].iter().map(|&b| bank_type(b)).collect();
                let v = self
                    .call(f, &params, Some(bank_type(banks[n])), &args)
                    .expect("a result");
                self.put(regs[n], banks[n], v);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytecode::isa::{Access, OpcodeSet, INSTRUCTIONS};

    /// [`buffer_element`] names exactly the ISA table's `buffer.load.*`
    /// and `buffer.store.*` instructions, with the width, direction and
    /// signedness their mnemonics say and the operand layout (buffer,
    /// i64 index, value) the translator reads.
    #[test]
    fn buffer_elements_match_the_isa_table() {
        let mut seen = 0;
        for info in INSTRUCTIONS.iter().filter(|i| i.set != OpcodeSet::Internal) {
            let m = info.mnemonic;
            let kind = m
                .strip_prefix("buffer.load.")
                .map(|t| (t, false))
                .or_else(|| m.strip_prefix("buffer.store.").map(|t| (t, true)));
            let Some((ty, store)) = kind else {
                assert_eq!(buffer_element(info.op), None, "{m}");
                continue;
            };
            seen += 1;
            let bits: usize = ty[1..]
                .split('.')
                .next()
                .and_then(|b| b.parse().ok())
                .unwrap_or_else(|| panic!("{m}: no width"));
            let expected = BufferElement {
                bytes: bits / 8,
                store,
                signed: ty.ends_with(".s"),
            };
            assert_eq!(buffer_element(info.op), Some(expected), "{m}");
            let access = if store { Access::Read } else { Access::Write };
            assert!(
                matches!(
                    info.fields,
                    [
                        Field::Reg(Bank::Ref, Access::Read),
                        Field::Reg(Bank::I64, Access::Read),
                        Field::Reg(bank, a),
                    ] if *bank != Bank::Ref && *a == access
                ),
                "{m}: operands {:?}",
                info.fields
            );
        }
        assert_eq!(seen, 14, "the table's buffer loads and stores");
    }
}
