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
//! `relativize_branches`), so the interpreter's hot loop needs only `ip`.

use std::collections::HashMap;

use crate::decode::{decode_at, Operand};
use crate::isa::{
    Bank, Field, ListKind, Opcode, I32_INDEX_MASK, IMPORT_ORDINAL_BIT, REF_BANK_BIT, REF_INDEX_MASK,
};
use crate::loader::{CallingConvention, ValueKind};

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
        }
    }
}

/// A flattened calling convention: one kind byte per value (`i I f F r`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Signature {
    pub args: Vec<u8>,
    pub results: Vec<u8>,
    /// Argument spans for variadic imports: (start, len) into `args` of the
    /// span's kinds, in order, for each `C...D`.
    pub variadic: bool,
    /// Unflattened form (for variadic imports).
    pub cconv: Option<CallingConvention>,
}

/// Appends the kind bytes of `kinds`, spans expanded once, voids dropped.
pub(crate) fn flatten(kinds: &[ValueKind], out: &mut Vec<u8>) {
    for k in kinds {
        match k {
            ValueKind::I32 => out.push(b'i'),
            ValueKind::I64 => out.push(b'I'),
            ValueKind::F32 => out.push(b'f'),
            ValueKind::F64 => out.push(b'F'),
            ValueKind::Ref => out.push(b'r'),
            ValueKind::Void => {}
            ValueKind::Span(inner) => flatten(inner, out),
        }
    }
}

impl Signature {
    /// Parses a calling convention string.
    pub fn parse(text: &str) -> Result<Signature, String> {
        let cc = CallingConvention::parse(text).map_err(|e| e.to_string())?;
        let mut args = Vec::new();
        let mut results = Vec::new();
        flatten(&cc.args, &mut args);
        flatten(&cc.results, &mut results);
        Ok(Signature {
            args,
            results,
            variadic: cc.is_variadic(),
            cconv: Some(cc),
        })
    }

    /// The `0..._...` text of the flattened signature.
    pub fn text(&self) -> String {
        if let Some(cc) = &self.cconv {
            return cc.to_string();
        }
        let s = |v: &[u8]| {
            if v.is_empty() {
                "v".to_string()
            } else {
                String::from_utf8_lossy(v).into_owned()
            }
        };
        format!("0{}_{}", s(&self.args), s(&self.results))
    }
}

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
#[derive(Debug)]
pub(crate) struct Function {
    pub code: Vec<Inst>,
    pub aux: Vec<u32>,
    pub strings: Vec<Box<str>>,
    /// Bytecode offset (relative to the function) of each instruction.
    pub offsets: Vec<u32>,
    pub i32_count: u16,
    pub ref_count: u16,
    /// Bytes of a frame of this function on the reference's VM stack
    /// (`exec::frame_bytes`), counted against `Limits::max_stack_bytes`.
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
    /// Flattened result kinds of the signature.
    pub result_kinds: Box<[u8]>,
}

/// Why a function failed verification.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("function {ordinal} at bytecode offset {offset}: {message}")]
pub struct VerifyError {
    /// Internal function ordinal.
    pub ordinal: u32,
    /// Offset of the offending instruction within the function.
    pub offset: u32,
    /// What is wrong.
    pub message: String,
}

struct Builder<'f> {
    facts: &'f ModuleFacts<'f>,
    sig: &'f Signature,
    n32: u16,
    nref: u16,
    ordinal: u32,
    offset: u32,
    code: Vec<Inst>,
    offsets: Vec<u32>,
    aux: Vec<u32>,
    strings: Vec<Box<str>>,
    /// (instruction index, which field: 0 = x, 1 = y, or aux position + 2,
    /// target bytecode offset, remap aux index or NONE)
    fixups: Vec<(usize, usize, u32, u32)>,
}

impl Builder<'_> {
    fn err(&self, message: impl Into<String>) -> VerifyError {
        VerifyError {
            ordinal: self.ordinal,
            offset: self.offset,
            message: message.into(),
        }
    }

    fn check_reg(&self, r: u16, bank: Bank) -> Result<u16, VerifyError> {
        match bank {
            Bank::Ref => {
                if r & REF_BANK_BIT == 0 {
                    return Err(self.err(format!("register {r:#x} is not a ref register")));
                }
                if (r & REF_INDEX_MASK) >= self.nref {
                    return Err(self.err(format!(
                        "ref register %r{} out of range (function has {})",
                        r & REF_INDEX_MASK,
                        self.nref
                    )));
                }
            }
            _ => {
                if r & REF_BANK_BIT != 0 {
                    return Err(self.err(format!("register {r:#x} is not an i32 register")));
                }
                // An i64/f64 may start at an odd ordinal: the reference reads
                // it there (unaligned), and so do the register macros.
                let need = r as u32 + bank.slots() as u32;
                if need > self.n32 as u32 {
                    return Err(self.err(format!(
                        "register %i{} ({}) out of range (function has {} i32 registers)",
                        r & I32_INDEX_MASK,
                        bank.name(),
                        self.n32
                    )));
                }
            }
        }
        Ok(r)
    }

    fn check_kind(&self, r: u16, kind: u8) -> Result<(), VerifyError> {
        let bank = match kind {
            b'I' => Bank::I64,
            b'F' => Bank::F64,
            b'r' => Bank::Ref,
            b'f' => Bank::F32,
            _ => Bank::I32,
        };
        self.check_reg(r, bank).map(|_| ())
    }

    fn check_any(&self, r: u16) -> Result<(), VerifyError> {
        if r & REF_BANK_BIT != 0 {
            self.check_reg(r, Bank::Ref).map(|_| ())
        } else {
            self.check_reg(r, Bank::I32).map(|_| ())
        }
    }

    fn check_list_kinds(&self, regs: &[u16], kinds: &[u8], what: &str) -> Result<(), VerifyError> {
        if regs.len() != kinds.len() {
            return Err(self.err(format!(
                "{what}: {} values given, calling convention expects {}",
                regs.len(),
                kinds.len()
            )));
        }
        for (r, k) in regs.iter().zip(kinds) {
            self.check_kind(*r, *k).map_err(|e| VerifyError {
                message: format!("{what}: {}", e.message),
                ..e
            })?;
        }
        Ok(())
    }

    fn push_list(&mut self, regs: &[u16]) {
        self.aux.push(regs.len() as u32);
        self.aux.extend(regs.iter().map(|&r| r as u32));
    }

    fn remap(&mut self, pairs: &[(u16, u16)]) -> Result<u32, VerifyError> {
        if pairs.is_empty() {
            return Ok(NONE);
        }
        for &(s, d) in pairs {
            if (s & REF_BANK_BIT) != (d & REF_BANK_BIT) {
                return Err(self.err("branch operand remaps between register banks"));
            }
            self.check_any(s)?;
            self.check_any(d)?;
        }
        let at = self.aux.len() as u32;
        self.aux.push(pairs.len() as u32);
        for &(s, d) in pairs {
            self.aux.push(((d as u32) << 16) | s as u32);
        }
        Ok(at)
    }
}

/// The reference verifier's register-count rules: each count, rounded up
/// to a power of two (at least 1), must stay within the bank (at most
/// 0x7FFF i32 and 0x3FFF ref registers, so 16,384 and 8,192 are the
/// largest counts) and must hold the arguments (i64/f64 starting at even
/// slots).
fn check_register_counts(
    b: &Builder<'_>,
    i32_count: u16,
    ref_count: u16,
) -> Result<(), VerifyError> {
    let rounded = |n: u16| u32::from(n.max(1)).next_power_of_two();
    let (n32, nref) = (rounded(i32_count), rounded(ref_count));
    if n32 > 0x7FFF || nref > 0x3FFF {
        return Err(b.err(format!(
            "register count overflow ({i32_count} i32, {ref_count} ref registers; \
             rounded up to powers of two they exceed 32767 and 16383)"
        )));
    }
    let (mut args32, mut argsref) = (0u32, 0u32);
    for &k in &b.sig.args {
        match k {
            b'i' | b'f' => args32 += 1,
            b'I' | b'F' => args32 += (args32 & 1) + 2,
            b'r' => argsref += 1,
            _ => {}
        }
    }
    if n32 < args32 || nref < argsref {
        return Err(b.err(format!(
            "insufficient register storage for function arguments/results \
             ({i32_count} i32 and {ref_count} ref registers for arguments needing \
             {args32} and {argsref})"
        )));
    }
    Ok(())
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
    let sig = &facts.signatures[ordinal as usize];
    let mut b = Builder {
        facts,
        sig,
        n32: i32_count,
        nref: ref_count,
        ordinal,
        offset: 0,
        code: Vec::with_capacity(code.len() / 6),
        offsets: Vec::with_capacity(code.len() / 6),
        aux: Vec::new(),
        strings: Vec::new(),
        fixups: Vec::new(),
    };
    check_register_counts(&b, i32_count, ref_count)?;
    // Arguments beyond the register file (unused by the body) are dropped
    // by the caller's marshalling, as IREE's frames simply never read them.
    // bytecode offset -> instruction index (block markers map to the next).
    let mut index_at: HashMap<u32, u32> = HashMap::new();
    let mut blocks = std::collections::HashSet::new();
    let mut pc = 0usize;
    while pc < code.len() {
        b.offset = pc as u32;
        let inst = decode_at(code, pc).map_err(|e| b.err(e.to_string()))?;
        index_at.insert(pc as u32, b.code.len() as u32);
        pc = inst.end;
        if inst.op == Opcode::Block {
            blocks.insert(inst.offset as u32);
            continue;
        }
        // Extension instructions need their feature declared (by the
        // function or the module).
        let needed = match inst.op.info().set {
            crate::isa::OpcodeSet::ExtF32 => Some((crate::loader::FeatureBits::EXT_F32, "EXT_F32")),
            crate::isa::OpcodeSet::ExtF64 => Some((crate::loader::FeatureBits::EXT_F64, "EXT_F64")),
            _ => None,
        };
        if let Some((bit, name)) = needed {
            if !features.contains(bit) {
                return Err(b.err(format!(
                    "{} needs the {name} feature, which neither the function nor the module declares",
                    inst.op
                )));
            }
        }
        lower(&mut b, inst.op, &inst.operands)?;
        b.offsets.push(inst.offset as u32);
    }
    if blocks.len() != usize::from(block_count) {
        b.offset = 0;
        return Err(b.err(format!(
            "descriptor declares {block_count} blocks but the bytecode has {}",
            blocks.len()
        )));
    }
    // The guard: running past the end traps instead of reading beyond.
    b.offset = code.len() as u32;
    let guard = b.code.len();
    b.code.push(Inst::new(Opcode::Block));
    b.offsets.push(code.len() as u32);
    // Resolve branch targets, creating remap stubs.
    let fixups = std::mem::take(&mut b.fixups);
    for (at, field, target, remap) in fixups {
        b.offset = b.offsets[at];
        let dest = match index_at.get(&target) {
            Some(&dest) if blocks.contains(&target) => dest,
            _ => {
                return Err(b.err(format!(
                    "branch target {target} is not the start of a block"
                )))
            }
        };
        let resolved = if remap == NONE {
            dest
        } else {
            let stub = b.code.len() as u32;
            b.code.push(Inst {
                x: dest,
                y: remap,
                ..Inst::new(Opcode::Br)
            });
            b.offsets.push(b.offsets[at]);
            stub
        };
        match field {
            0 => b.code[at].x = resolved,
            1 => b.code[at].y = resolved,
            p => b.aux[p - 2] = resolved,
        }
    }
    fuse_compare_branches(&mut b.code, &b.aux);
    // Folded remaps are addressed by 16-bit distances (see relativize_branches).
    let fold = b.code.len() + b.aux.len() < FOLD_LIMIT;
    fold_remap_stubs(&mut b.code, guard + 1, fold);
    relativize_branches(&mut b.code, &mut b.offsets, &b.aux);
    fuse_pairs(&mut b.code, guard);
    Ok(Function {
        code: b.code,
        aux: b.aux,
        strings: b.strings,
        offsets: b.offsets,
        i32_count,
        ref_count,
        frame_bytes: crate::exec::frame_bytes(i32_count, ref_count),
        ordinal,
        guard: guard as u32,
        args_are_slots: sig.args.iter().all(|k| matches!(k, b'i' | b'f')),
        results_are_slots: sig.results.iter().all(|k| matches!(k, b'i' | b'f')),
        arg_kinds: sig.args.clone().into_boxed_slice(),
        result_kinds: sig.results.clone().into_boxed_slice(),
    })
}

/// Turns `cmp.* -> %c; cond_br %c, T, F` pairs into one fused instruction
/// that writes `%c` and branches (the `cond_br` stays behind, unreachable
/// except by a branch, so a pair is only fused when nothing branches to it).
fn fuse_compare_branches(code: &mut [Inst], aux: &[u32]) {
    let mut targets = vec![false; code.len()];
    for inst in code.iter() {
        let mut mark = |t: u32| {
            if let Some(x) = targets.get_mut(t as usize) {
                *x = true;
            }
        };
        match inst.op {
            Opcode::Br | Opcode::CondBreak | Opcode::Break | Opcode::Yield => mark(inst.x),
            Opcode::CondBr => {
                mark(inst.x);
                mark(inst.y);
            }
            Opcode::BrTable => {
                mark(inst.x);
                let n = aux[inst.y as usize] as usize;
                for k in 0..n {
                    mark(aux[inst.y as usize + 1 + k]);
                }
            }
            Opcode::CallYieldable | Opcode::CallVariadicYieldable => {
                // The continuation sits in the aux record after the
                // argument list ([sizes]? [args] target [results]). Only
                // that word: marking the whole aux for every call made
                // verification quadratic in the number of calls.
                let mut p = inst.y as usize;
                if inst.op == Opcode::CallVariadicYieldable {
                    p += 1 + aux.get(p).copied().unwrap_or(0) as usize;
                }
                p += 1 + aux.get(p).copied().unwrap_or(0) as usize;
                if let Some(&t) = aux.get(p) {
                    mark(t);
                }
            }
            _ => {}
        }
    }
    for k in 0..code.len().saturating_sub(1) {
        let (cmp, br) = (code[k], code[k + 1]);
        if br.op != Opcode::CondBr || targets[k + 1] {
            continue;
        }
        let (fused, result) = match cmp.op {
            Opcode::CmpEqI32 => (Opcode::CmpEqI32Br, cmp.c),
            Opcode::CmpNeI32 => (Opcode::CmpNeI32Br, cmp.c),
            Opcode::CmpLtI32S => (Opcode::CmpLtI32SBr, cmp.c),
            Opcode::CmpLtI32U => (Opcode::CmpLtI32UBr, cmp.c),
            Opcode::CmpNzI32 => (Opcode::CmpNzI32Br, cmp.b),
            Opcode::CmpEqI64 => (Opcode::CmpEqI64Br, cmp.c),
            Opcode::CmpNeI64 => (Opcode::CmpNeI64Br, cmp.c),
            Opcode::CmpLtI64S => (Opcode::CmpLtI64SBr, cmp.c),
            _ => continue,
        };
        if br.a != result {
            continue;
        }
        code[k].op = fused;
        code[k].x = br.x;
        code[k].y = br.y;
    }
}

/// Whether `op` is a fused compare-and-branch (targets in `x`/`y`, true-edge
/// remap in `d`).
pub(crate) fn is_fused_compare_branch(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::CmpEqI32Br
            | Opcode::CmpNeI32Br
            | Opcode::CmpLtI32SBr
            | Opcode::CmpLtI32UBr
            | Opcode::CmpNzI32Br
            | Opcode::CmpEqI64Br
            | Opcode::CmpNeI64Br
            | Opcode::CmpLtI64SBr
    )
}

/// Hot instruction pairs `(first, second) -> fused`: the first instruction
/// of each pair found in a function becomes `fused`, which runs both; the
/// second stays in place, so a branch to it (or the hooked loop, which runs
/// only the first half) sees the original instruction. Semantics cannot
/// change: the first never branches, so control always falls into the
/// second after it.
const PAIRS: [(Opcode, Opcode, Opcode); 10] = [
    (
        Opcode::AddI32,
        Opcode::CmpLtI32SBr,
        Opcode::AddI32ThenCmpLtI32SBr,
    ),
    (
        Opcode::AddI64,
        Opcode::CmpLtI64SBr,
        Opcode::AddI64ThenCmpLtI64SBr,
    ),
    (
        Opcode::BufferLoadI32,
        Opcode::AddI32,
        Opcode::BufferLoadI32ThenAddI32,
    ),
    (
        Opcode::BufferLoadI32,
        Opcode::AddI64,
        Opcode::BufferLoadI32ThenAddI64,
    ),
    // The most frequent pairs left in benchmarks/corpus after the fused
    // compare-branches (scripts/corpus-pairs; docs/PERFORMANCE.md): the
    // induction-variable step before a loop's back edge.
    (Opcode::AddI32, Opcode::Br, Opcode::AddI32ThenBr),
    (Opcode::AddI64, Opcode::Br, Opcode::AddI64ThenBr),
    // The inner loops of vmvx kernels without microkernels (matmul, conv:
    // docs/PERFORMANCE.md): element index arithmetic, two operand loads,
    // the multiply-accumulate and its store.
    (Opcode::AddI64, Opcode::AddI64, Opcode::AddI64ThenAddI64),
    (Opcode::FmaI64, Opcode::AddI64, Opcode::FmaI64ThenAddI64),
    (
        Opcode::BufferLoadF32,
        Opcode::BufferLoadF32,
        Opcode::BufferLoadF32ThenBufferLoadF32,
    ),
    (
        Opcode::FmaF32,
        Opcode::BufferStoreF32,
        Opcode::FmaF32ThenBufferStoreF32,
    ),
];

/// Applies [`PAIRS`], left to right without overlap, over the body.
///
/// A `buffer.load.f32;fma.f32;buffer.store.f32` run (a kernel's
/// multiply-accumulate) becomes one triple first.
///
/// An `add;br` whose branch (already relative: `relativize_branches`) goes
/// to a fused `cmp.lt+cond_br` of the same width, the usual back edge of a
/// counted loop, becomes the triple `add;br;cmp.lt+cond_br`.
fn fuse_pairs(code: &mut [Inst], guard: usize) {
    let size = std::mem::size_of::<Inst>() as i64;
    let mut k = 0;
    while k + 1 < guard {
        let (a, b) = (code[k].op, code[k + 1].op);
        if k + 2 < guard
            && (a, b, code[k + 2].op)
                == (
                    Opcode::BufferLoadF32,
                    Opcode::FmaF32,
                    Opcode::BufferStoreF32,
                )
        {
            code[k].op = Opcode::BufferLoadF32ThenFmaF32ThenStoreF32;
            k += 3;
        } else if let Some(&(_, _, fused)) = PAIRS.iter().find(|p| p.0 == a && p.1 == b) {
            let target_op = || {
                let target = (k + 1) as i64 + i64::from(code[k + 1].x as i32) / size;
                usize::try_from(target)
                    .ok()
                    .and_then(|t| code.get(t))
                    .map(|t| t.op)
            };
            code[k].op = match fused {
                Opcode::AddI32ThenBr if target_op() == Some(Opcode::CmpLtI32SBr) => {
                    Opcode::AddI32ThenBrToCmpLtI32SBr
                }
                Opcode::AddI64ThenBr if target_op() == Some(Opcode::CmpLtI64SBr) => {
                    Opcode::AddI64ThenBrToCmpLtI64SBr
                }
                _ => fused,
            };
            k += 2;
        } else {
            k += 1;
        }
    }
}

/// "No remap" marker in the 16-bit remap fields of conditional branches.
pub(crate) const NO_REMAP: u16 = u16::MAX;

/// Functions at least this large (instructions plus aux words) keep their
/// remap stubs, so that every folded remap distance fits in 16 bits.
const FOLD_LIMIT: usize = 30_000;

/// Rewrites the hot branches so that the interpreter needs neither the
/// function's code base nor its aux vector to take them:
///
/// - `br`, `cond_br` and the fused compare-branches hold their targets as
///   byte distances from the branch itself (`(target - k) * size_of::<Inst>()`
///   as `i32` bits in `x`/`y`);
/// - their block-argument remaps become *remap records* appended to `code`
///   after everything else (never executed), addressed by their distance from
///   the branch: `br` in `y` (`NONE` when empty), `cond_br` in `c`/`d` and
///   fused branches in `d` (`NO_REMAP` when empty).
///
/// A remap record of `n` pairs is `ceil(n / 2)` instructions; pair `k` lives
/// in record instruction `k / 2`, as `(a, b)` when `k` is even and `(c, d)`
/// when odd (source, destination); the first record instruction's `x` is `n`.
/// `vm.break` and the other branching instructions keep absolute targets.
fn relativize_branches(code: &mut Vec<Inst>, offsets: &mut Vec<u32>, aux: &[u32]) {
    // Byte distances: the interpreter adds them to the branch's address
    // without scaling. (Functions are far below 2 GiB of `Inst`s.)
    let size = std::mem::size_of::<Inst>() as i64;
    let rel = |target: u32, k: usize| ((target as i64 - k as i64) * size) as i32 as u32;
    let end = code.len();
    for k in 0..end {
        let inst = code[k];
        let record = |aux_at: u32, code: &mut Vec<Inst>, offsets: &mut Vec<u32>| -> u32 {
            let at = code.len();
            let n = aux[aux_at as usize] as usize;
            let pairs = &aux[aux_at as usize + 1..aux_at as usize + 1 + n];
            for chunk in pairs.chunks(2) {
                let mut r = Inst::new(Opcode::Block);
                r.a = chunk[0] as u16;
                r.b = (chunk[0] >> 16) as u16;
                if let Some(&w) = chunk.get(1) {
                    r.c = w as u16;
                    r.d = (w >> 16) as u16;
                }
                code.push(r);
                offsets.push(offsets[k]);
            }
            code[at].x = n as u32;
            (at - k) as u32
        };
        match inst.op {
            Opcode::Br => {
                code[k].x = rel(inst.x, k);
                if inst.y != NONE {
                    code[k].y = record(inst.y, code, offsets);
                }
            }
            Opcode::CondBr => {
                code[k].x = rel(inst.x, k);
                code[k].y = rel(inst.y, k);
                if inst.c != NO_REMAP {
                    code[k].c = record(inst.c as u32, code, offsets) as u16;
                }
                if inst.d != NO_REMAP {
                    code[k].d = record(inst.d as u32, code, offsets) as u16;
                }
            }
            op if is_fused_compare_branch(op) => {
                code[k].x = rel(inst.x, k);
                code[k].y = rel(inst.y, k);
                if inst.d != NO_REMAP {
                    code[k].d = record(inst.d as u32, code, offsets) as u16;
                }
            }
            _ => {}
        }
    }
}

/// Lets branches do their edges' block-argument remapping themselves
/// instead of jumping through a stub: `y` (`br`), `c`/`d` (`cond_br`) or
/// `d` (fused compare-branch, true edge only) hold the remap's aux
/// position. With `fold` false only `br` folds (its `y` has 32 bits) and
/// the "no remap" markers are set (the other stubs stay).
fn fold_remap_stubs(code: &mut [Inst], stub_start: usize, fold: bool) {
    let stub = |code: &[Inst], t: u32| -> Option<(u32, u16)> {
        let s = code.get(t as usize)?;
        (fold
            && (t as usize) >= stub_start
            && s.op == Opcode::Br
            && s.y != NONE
            && s.y < NO_REMAP as u32)
            .then_some((s.x, s.y as u16))
    };
    for k in 0..stub_start {
        let inst = code[k];
        match inst.op {
            // A `br` keeps its remap's aux position in `y` (32 bits, so no
            // size limit): it remaps and jumps in one instruction.
            Opcode::Br if inst.y == NONE => {
                if let Some(s) = code.get(inst.x as usize).filter(|s| {
                    (inst.x as usize) >= stub_start && s.op == Opcode::Br && s.y != NONE
                }) {
                    let (t, r) = (s.x, s.y);
                    code[k].x = t;
                    code[k].y = r;
                }
            }
            Opcode::CondBr => {
                code[k].c = NO_REMAP;
                code[k].d = NO_REMAP;
                if let Some((t, r)) = stub(code, inst.x) {
                    code[k].x = t;
                    code[k].c = r;
                }
                if let Some((t, r)) = stub(code, inst.y) {
                    code[k].y = t;
                    code[k].d = r;
                }
            }
            op if is_fused_compare_branch(op) => {
                code[k].d = NO_REMAP;
                if let Some((t, r)) = stub(code, inst.x) {
                    code[k].x = t;
                    code[k].d = r;
                }
            }
            _ => {}
        }
    }
}

fn lower(b: &mut Builder<'_>, op: Opcode, operands: &[Operand<'_>]) -> Result<(), VerifyError> {
    let fields = op.info().fields;
    let mut inst = Inst::new(op);
    let at = b.code.len();
    let mut regs_used = 0usize;
    let mut wide_used = 0usize; // x, y
    let mut put_wide = |inst: &mut Inst, v: u32, b: &Builder<'_>| -> Result<usize, VerifyError> {
        let slot = wide_used;
        match wide_used {
            0 => inst.x = v,
            1 => inst.y = v,
            _ => return Err(b.err("internal: instruction has too many operands")),
        }
        wide_used += 1;
        Ok(slot)
    };
    // Variadic lists and call targets go to one aux record.
    let mut aux_record: Option<u32> = None;
    let mut i = 0;
    while i < fields.len() {
        let field = fields[i];
        let operand = &operands[i];
        match (field, operand) {
            (Field::Reg(bank, _), Operand::Reg(r)) => {
                let r = b.check_reg(*r, bank)?;
                put_reg(b, &mut inst, &mut regs_used, &mut put_wide, r)?;
            }
            (Field::RefMove(_), Operand::Reg(r)) => {
                let r = b.check_reg(*r, Bank::Ref)?;
                put_reg(b, &mut inst, &mut regs_used, &mut put_wide, r)?;
            }
            (Field::Const(bank), Operand::I32(v)) => {
                let _ = bank;
                put_wide(&mut inst, *v, b)?;
            }
            (Field::Const(_), Operand::I64(v)) => {
                put_wide(&mut inst, *v as u32, b)?;
                put_wide(&mut inst, (*v >> 32) as u32, b)?;
            }
            (Field::GlobalAttr, Operand::Global(g)) => {
                let ok = match op {
                    Opcode::GlobalLoadRef | Opcode::GlobalStoreRef => {
                        (*g as usize) < b.facts.global_refs
                    }
                    _ => {
                        let width = if matches!(
                            op,
                            Opcode::GlobalLoadI64
                                | Opcode::GlobalStoreI64
                                | Opcode::GlobalLoadF64
                                | Opcode::GlobalStoreF64
                        ) {
                            8
                        } else {
                            4
                        };
                        (*g as usize)
                            .checked_add(width)
                            .is_some_and(|e| e <= b.facts.global_bytes)
                    }
                };
                if !ok {
                    return Err(b.err(format!("global {g} out of range")));
                }
                put_wide(&mut inst, *g, b)?;
            }
            (Field::FuncAttr, Operand::Func(f)) => {
                check_func(b, *f)?;
                put_wide(&mut inst, *f, b)?;
            }
            (Field::RodataAttr, Operand::Rodata(r)) => {
                if *r as usize >= b.facts.rodata_count {
                    return Err(b.err(format!("rodata segment {r} out of range")));
                }
                put_wide(&mut inst, *r, b)?;
            }
            (Field::TypeId, Operand::Type(t)) => {
                if *t as usize >= b.facts.type_count {
                    return Err(b.err(format!("type {t} out of range")));
                }
                put_wide(&mut inst, *t, b)?;
            }
            (Field::StringAttr, Operand::Str(s)) => {
                let idx = b.strings.len() as u32;
                b.strings.push((*s).into());
                put_wide(&mut inst, idx, b)?;
            }
            (Field::BranchTarget, Operand::Target(t)) => {
                // Target with its remap (if the next field is one).
                let remap = match (fields.get(i + 1), operands.get(i + 1)) {
                    (Some(Field::BranchOperands), Some(Operand::Remap(list))) => {
                        i += 1;
                        let pairs: Vec<(u16, u16)> = list.iter().collect();
                        b.remap(&pairs)?
                    }
                    _ => NONE,
                };
                if let Some(rec) = aux_record {
                    // Inside a call's aux record.
                    let _ = rec;
                    let pos = b.aux.len();
                    b.aux.push(NONE);
                    b.fixups.push((at, pos + 2, *t, remap));
                } else {
                    let slot = put_wide(&mut inst, NONE, b)?;
                    b.fixups.push((at, slot, *t, remap));
                }
            }
            (Field::ConstI16, Operand::I16(n)) => {
                // br_table: the cases follow; record them in aux.
                let rec = b.aux.len() as u32;
                b.aux.push(*n as u32);
                if let Some(Operand::Cases(cases)) = operands.get(i + 1) {
                    let base = b.aux.len();
                    b.aux.extend(std::iter::repeat_n(NONE, cases.len()));
                    for (k, (target, list)) in cases.iter().enumerate() {
                        let pairs: Vec<(u16, u16)> = list.iter().collect();
                        let remap = b.remap(&pairs)?;
                        b.fixups.push((at, base + k + 2, *target, remap));
                    }
                    i += 1;
                }
                put_wide(&mut inst, rec, b)?;
            }
            (Field::Operands(kind), Operand::Regs(list))
            | (Field::Results(kind), Operand::Regs(list)) => {
                let regs: Vec<u16> = list.iter().collect();
                for &r in &regs {
                    // The ISA types discard.refs' list as "any", but only
                    // refs can be discarded: an i32 ordinal there would be
                    // used as a ref register index (found by tests/mutation.rs).
                    if op == Opcode::DiscardRefs && r & REF_BANK_BIT == 0 {
                        return Err(b.err(format!(
                            "vm.discard.refs operand %i{} is not a ref register",
                            r & I32_INDEX_MASK
                        )));
                    }
                    match kind {
                        ListKind::Any => b.check_any(r)?,
                        ListKind::Of(bank) => {
                            b.check_reg(r, bank)?;
                        }
                    }
                }
                if aux_record.is_none() {
                    let rec = b.aux.len() as u32;
                    aux_record = Some(rec);
                    put_wide(&mut inst, rec, b)?;
                }
                b.push_list(&regs);
            }
            (Field::SegmentSizes, Operand::Sizes(list)) => {
                let sizes: Vec<u16> = list.iter().collect();
                if aux_record.is_none() {
                    let rec = b.aux.len() as u32;
                    aux_record = Some(rec);
                    put_wide(&mut inst, rec, b)?;
                }
                b.push_list(&sizes);
            }
            (f, o) => {
                return Err(b.err(format!("internal: field {f:?} decoded as {o:?}")));
            }
        }
        i += 1;
    }
    check_semantics(b, &inst)?;
    b.code.push(inst);
    Ok(())
}

fn put_reg(
    b: &Builder<'_>,
    inst: &mut Inst,
    regs_used: &mut usize,
    put_wide: &mut impl FnMut(&mut Inst, u32, &Builder<'_>) -> Result<usize, VerifyError>,
    r: u16,
) -> Result<(), VerifyError> {
    match *regs_used {
        0 => inst.a = r,
        1 => inst.b = r,
        2 => inst.c = r,
        3 => inst.d = r,
        _ => {
            put_wide(inst, r as u32, b)?;
        }
    }
    *regs_used += 1;
    Ok(())
}

fn check_func(b: &Builder<'_>, f: u32) -> Result<(), VerifyError> {
    if f & IMPORT_ORDINAL_BIT != 0 {
        let i = (f & !IMPORT_ORDINAL_BIT) as usize;
        if i >= b.facts.imports.len() {
            return Err(b.err(format!("import {i} out of range")));
        }
    } else if f as usize >= b.facts.function_count {
        return Err(b.err(format!("function {f} out of range")));
    }
    Ok(())
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

/// Call-site checks that need the callee's signature.
fn check_semantics(b: &Builder<'_>, inst: &Inst) -> Result<(), VerifyError> {
    let regs_of = |k: usize| -> Vec<u16> {
        aux_list(&b.aux, inst.y, k)
            .iter()
            .map(|&r| r as u16)
            .collect()
    };
    match inst.op {
        Opcode::Call | Opcode::CallYieldable => {
            let sig = callee_sig(b, inst.x);
            let args = regs_of(0);
            b.check_list_kinds(&args, &sig.args, "call arguments")?;
            let results_k = if inst.op == Opcode::CallYieldable {
                2
            } else {
                1
            };
            // For call.yieldable the aux record is [args][target][results];
            // the target is a single word, not a list.
            let results: Vec<u16> = if inst.op == Opcode::CallYieldable {
                let p = inst.y as usize + 1 + args.len() + 1;
                let n = b.aux[p] as usize;
                b.aux[p + 1..p + 1 + n].iter().map(|&r| r as u16).collect()
            } else {
                regs_of(results_k)
            };
            b.check_list_kinds(&results, &sig.results, "call results")?;
            if sig.variadic {
                return Err(b.err("variadic function called with vm.call"));
            }
        }
        Opcode::CallVariadic | Opcode::CallVariadicYieldable => {
            if inst.x & IMPORT_ORDINAL_BIT == 0 {
                return Err(b.err("vm.call.variadic of an internal function"));
            }
            let sig = callee_sig(b, inst.x);
            let sizes = regs_of(0);
            let args = regs_of(1);
            let kinds = expand_variadic(sig, &sizes).ok_or_else(|| {
                b.err("variadic segment sizes do not match the import's calling convention")
            })?;
            b.check_list_kinds(&args, &kinds, "call arguments")?;
            let results: Vec<u16> = if inst.op == Opcode::CallVariadicYieldable {
                let p = inst.y as usize + 1 + sizes.len() + 1 + args.len() + 1;
                let n = b.aux[p] as usize;
                b.aux[p + 1..p + 1 + n].iter().map(|&r| r as u16).collect()
            } else {
                regs_of(2)
            };
            b.check_list_kinds(&results, &sig.results, "call results")?;
        }
        // The interpreter looks the operand up in the import table.
        Opcode::ImportResolved if inst.x & IMPORT_ORDINAL_BIT == 0 => {
            return Err(b.err(format!(
                "vm.import.resolved of function {}, which is not an import",
                inst.x
            )));
        }
        Opcode::Return => {
            let regs: Vec<u16> = aux_list(&b.aux, inst.x, 0)
                .iter()
                .map(|&r| r as u16)
                .collect();
            b.check_list_kinds(&regs, &b.sig.results, "return values")?;
        }
        _ => {}
    }
    Ok(())
}

fn callee_sig<'a>(b: &'a Builder<'_>, f: u32) -> &'a Signature {
    if f & IMPORT_ORDINAL_BIT != 0 {
        &b.facts.imports[(f & !IMPORT_ORDINAL_BIT) as usize]
    } else {
        &b.facts.signatures[f as usize]
    }
}

/// Expands a variadic calling convention by segment sizes: each argument
/// segment is one cconv argument; spans repeat `size` times.
pub(crate) fn expand_variadic(sig: &Signature, sizes: &[u16]) -> Option<Vec<u8>> {
    let cc = sig.cconv.as_ref()?;
    let args: Vec<&ValueKind> = cc.args.iter().filter(|k| **k != ValueKind::Void).collect();
    if args.len() != sizes.len() {
        return None;
    }
    let mut out = Vec::new();
    for (k, &n) in args.iter().zip(sizes) {
        match k {
            ValueKind::Span(inner) => {
                let mut one = Vec::new();
                flatten(inner, &mut one);
                for _ in 0..n {
                    out.extend_from_slice(&one);
                }
            }
            other => {
                // A plain argument's segment size is ignored, as IREE does
                // (iree-compile writes 0xFFFF there).
                let _ = n;
                flatten(std::slice::from_ref(*other), &mut out);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_fuse_left_to_right_without_overlap() {
        let mut code: Vec<Inst> = [
            Opcode::BufferLoadI32,
            Opcode::AddI32,
            Opcode::AddI32,
            Opcode::CmpLtI32SBr,
            Opcode::BufferLoadI32,
            Opcode::Block,
        ]
        .into_iter()
        .map(Inst::new)
        .collect();
        fuse_pairs(&mut code, 5);
        let ops: Vec<Opcode> = code.iter().map(|i| i.op).collect();
        assert_eq!(
            ops,
            [
                Opcode::BufferLoadI32ThenAddI32,
                Opcode::AddI32, // the pair's second half stays in place
                Opcode::AddI32ThenCmpLtI32SBr,
                Opcode::CmpLtI32SBr,
                Opcode::BufferLoadI32, // its partner would be the guard
                Opcode::Block,
            ]
        );
    }

    #[test]
    fn a_br_with_block_arguments_takes_its_stub_remap_itself() {
        // `br` at 1 goes to the stub at 3 (remap at aux 0, target 0), as
        // branch resolution makes it; after folding it remaps and jumps
        // itself, and the stub is no longer a target.
        let mut code = vec![
            Inst::new(Opcode::ConstI32Zero),
            Inst {
                x: 3,
                ..Inst::new(Opcode::Br)
            },
            Inst::new(Opcode::Block),
            Inst {
                x: 0,
                y: 0,
                ..Inst::new(Opcode::Br)
            },
        ];
        for fold in [true, false] {
            let mut c = code.clone();
            fold_remap_stubs(&mut c, 3, fold);
            assert_eq!((c[1].x, c[1].y), (0, 0), "fold {fold}");
        }
        // A `br` to a stub-less target stays as it is.
        code[1].x = 0;
        fold_remap_stubs(&mut code, 3, true);
        assert_eq!((code[1].x, code[1].y), (0, NONE));
    }

    #[test]
    fn hot_branches_become_relative_with_remap_records() {
        // aux: a 3-pair remap at 0 (i32 1->2, i32 3->4, ref 0x8001->0x8000).
        let aux = vec![3, (2 << 16) | 1, (4 << 16) | 3, (0x8000 << 16) | 0x8001];
        let mut code = vec![
            Inst::new(Opcode::ConstI32Zero),
            Inst {
                a: 0,
                x: 0,
                y: 3,
                c: 0,
                d: NO_REMAP,
                ..Inst::new(Opcode::CondBr)
            },
            Inst {
                x: 1,
                y: 0,
                ..Inst::new(Opcode::Br)
            },
            Inst::new(Opcode::Block),
        ];
        let mut offsets = vec![0, 4, 8, 12];
        relativize_branches(&mut code, &mut offsets, &aux);
        let (cb, br) = (code[1], code[2]);
        let size = std::mem::size_of::<Inst>() as i32;
        assert_eq!(cb.x as i32, -size);
        assert_eq!(cb.y as i32, 2 * size);
        assert_eq!(cb.d, NO_REMAP);
        assert_eq!(br.x as i32, -size);
        // Each remap got its own 2-instruction record after the code.
        assert_eq!(code.len(), 8);
        assert_eq!(offsets.len(), code.len());
        let rec = 1 + cb.c as usize;
        assert_eq!(rec, 4);
        assert_eq!(code[rec].x, 3);
        assert_eq!((code[rec].a, code[rec].b), (1, 2));
        assert_eq!((code[rec].c, code[rec].d), (3, 4));
        assert_eq!((code[rec + 1].a, code[rec + 1].b), (0x8001, 0x8000));
        assert_eq!(2 + br.y as usize, 6);
        assert_eq!(code[6].x, 3);
    }
}
