//! Pre-decoding and verification: turns a function's bytecode into a
//! compact array of [`Inst`] once, at context creation, proving on the way
//! everything the interpreter relies on without checking again:
//!
//! - every register ordinal is inside the function's i32 or ref register
//!   file (i64/f64 operands: both halves), of the bank the instruction wants;
//! - every branch lands on an instruction boundary of the same function;
//! - function, import, type, rodata and global operands are in range;
//! - calls pass and return values that match the callee's calling
//!   convention, so argument/result marshalling stays in bounds;
//! - execution cannot run past the last instruction (a guard follows it).
//!
//! Layout of an [`Inst`]: register fields fill `a, b, c, d`, then `x, y`;
//! other operands (constants, attributes, targets, an "aux record" of
//! variadic lists) take the next free of `x, y`. A branch target together
//! with its block-argument remapping becomes one instruction index: when the
//! remapping is not empty, the target is a stub `br` that remaps and jumps.
//! Finally the hot branches (`br`, `cond_br`, fused compare-branches) are
//! made position-relative, with their remaps as records inside `code` (see
//! `fuse::relativize_branches`), so the interpreter's hot loop needs only
//! `ip`.
//!
//! This file is the form the interpreter (`exec`) and the compiling tier
//! (`jit`) read ([`Function`], [`Inst`], aux records) and [`compile`], the
//! steps from bytecode to it. The steps live in:
//! - `lower.rs`: decoded instructions into [`Inst`]s, branch resolution;
//! - `verify.rs`: the checks, and [`VerifyError`];
//! - `fuse.rs`: the passes over the lowered code (fusion, relative branches);
//! - `signature.rs`: flattened calling conventions ([`Signature`]).

pub(crate) mod fuse;
mod lower;
pub(crate) mod runs;
mod signature;
mod verify;

use crate::bytecode::isa::Opcode;

use lower::Builder;
#[cfg(feature = "asm")]
pub(crate) use signature::expand_variadic;
pub(crate) use signature::{ArgSlot, Signature, PLAN_COUNT};
pub use verify::VerifyError;

/// "No value" marker in `x`/`y`.
pub(crate) const NONE: u32 = u32::MAX;

/// One pre-decoded instruction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inst {
    pub op: Opcode,
    pub a: u16,
    pub b: u16,
    pub c: u16,
    pub d: u16,
    pub x: u32,
    pub y: u32,
    /// Instructions from this one to the end of its straight run, the fuel
    /// the fast paths charge on arriving here ([`runs`]; [`runs::LONG_RUN`]:
    /// see [`Function::runs`]). Fills the padding after `op`.
    pub run: u16,
}

impl Inst {
    /// An instruction with no operands set yet.
    fn new(op: Opcode) -> Inst {
        Inst {
            op,
            a: 0,
            b: 0,
            c: 0,
            d: 0,
            x: NONE,
            y: NONE,
            run: 0,
        }
    }
}

// The run length fills padding: an instruction stays 20 bytes.
const _: () = assert!(std::mem::size_of::<Inst>() == 20);

/// "No remap" marker in the 16-bit remap fields of conditional branches.
pub(crate) const NO_REMAP: u16 = u16::MAX;

/// What the verifier needs to know about the module around a function.
pub(crate) struct ModuleFacts<'a> {
    pub function_count: usize,
    pub signatures: &'a [Signature],
    pub imports: &'a [Signature],
    pub type_count: usize,
    pub rodata_count: usize,
    pub global_bytes: usize,
    pub global_refs: usize,
}

/// A pre-decoded, verified function.
#[derive(Clone, Debug)]
pub(crate) struct Function {
    pub code: Vec<Inst>,
    pub aux: Vec<u32>,
    pub strings: Vec<Box<str>>,
    /// Bytecode offset (relative to the function) of each instruction.
    pub offsets: Vec<u32>,
    pub i32_count: u16,
    pub ref_count: u16,
    /// Bytes of a frame of this function on the reference's VM stack
    /// ([`frame_bytes`]), counted against `Limits::max_stack_bytes`.
    pub frame_bytes: u32,
    pub ordinal: u32,
    /// Index of the guard instruction that ends the body; instructions after
    /// it (remap stubs, remap records) are internal.
    pub guard: u32,
    /// Whether every argument is one i32 slot (`i`/`f`): calls then copy
    /// them to consecutive slots without looking at kinds.
    pub args_are_slots: bool,
    /// Whether every result is one i32 slot (`i`/`f`).
    pub results_are_slots: bool,
    /// Flattened argument kinds of the signature (see [`Signature`]).
    pub arg_kinds: Box<[u8]>,
    /// Where a call puts each argument in this function's windows
    /// ([`signature::arg_slots`]).
    pub arg_slots: Box<[ArgSlot]>,
    /// Flattened result kinds of the signature.
    pub result_kinds: Box<[u8]>,
    /// Every instruction's run length in full ([`Inst::run`], [`runs`]).
    pub runs: Box<[u32]>,
}

/// Reads list `k` (0-based) of the aux record at `rec`.
pub(crate) fn aux_list(aux: &[u32], rec: u32, k: usize) -> &[u32] {
    let mut p = rec as usize;
    for _ in 0..k {
        let n = aux[p] as usize;
        p += 1 + n;
    }
    let n = aux[p] as usize;
    &aux[p + 1..p + 1 + n]
}

/// The size of a bytecode function's frame on IREE's VM stack: the frame
/// header and bytecode frame storage (128 bytes together on x86-64), then
/// the i32 registers (4 bytes each) and the ref registers (16 bytes each),
/// each area rounded up to 16 bytes (`iree_vm_bytecode_function_enter`).
pub(crate) fn frame_bytes(i32_count: u16, ref_count: u16) -> u32 {
    const HEADER: u32 = 128;
    let align = |n: u32| (n + 15) & !15;
    HEADER + align(i32_count as u32 * 4) + align(ref_count as u32 * 16)
}

/// Pre-decodes and verifies internal function `ordinal` whose bytecode is
/// `code` (the function's slice of the module's bytecode data).
pub(crate) fn compile(
    code: &[u8],
    ordinal: u32,
    i32_count: u16,
    ref_count: u16,
    block_count: u16,
    features: crate::loader::FeatureBits,
    facts: &ModuleFacts<'_>,
) -> Result<Function, VerifyError> {
    let mut b = Builder::new(facts, ordinal, i32_count, ref_count, code.len());
    verify::check_register_counts(&b, i32_count, ref_count)?;
    // Arguments beyond the register file (unused by the body) are dropped
    // by the caller's marshalling, as IREE's frames simply never read them.
    let blocks = lower::lower_body(&mut b, code, features)?;
    verify::check_block_count(&mut b, blocks.count(), block_count)?;
    let guard = lower::push_guard(&mut b, code.len());
    lower::resolve_branches(&mut b, &blocks)?;
    fuse::fuse_compare_branches(&mut b.code, &b.aux);
    fuse::fuse_appends(&mut b.code, &b.aux, guard);
    // Folded remaps are addressed by 16-bit distances (see relativize_branches).
    let fold = b.code.len() + b.aux.len() < fuse::FOLD_LIMIT;
    fuse::fold_remap_stubs(&mut b.code, guard + 1, fold);
    fuse::relativize_branches(&mut b.code, &mut b.offsets, &b.aux);
    fuse::fuse_pairs(&mut b.code, guard);
    Ok(finish(b, guard))
}

/// The compiled function: the builder's code and records, with what calls
/// need of its signature.
fn finish(mut b: Builder<'_>, guard: usize) -> Function {
    let runs = runs::mark_runs(&mut b.code, guard);
    let sig = b.sig;
    Function {
        runs,
        code: b.code,
        aux: b.aux,
        strings: b.strings,
        offsets: b.offsets,
        i32_count: b.n32,
        ref_count: b.nref,
        frame_bytes: frame_bytes(b.n32, b.nref),
        ordinal: b.ordinal,
        guard: guard as u32,
        args_are_slots: sig.args.iter().all(|k| matches!(k, b'i' | b'f')),
        results_are_slots: sig.results.iter().all(|k| matches!(k, b'i' | b'f')),
        arg_slots: signature::arg_slots(&sig.args, b.n32, b.nref),
        arg_kinds: sig.args.clone().into_boxed_slice(),
        result_kinds: sig.results.clone().into_boxed_slice(),
    }
}
