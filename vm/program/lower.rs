//! Lowering: decoded instructions ([`Instruction`]s of the byte format)
//! into [`Inst`]s. Register fields fill `a, b, c, d`, then `x, y`; other
//! operands take the next free of `x, y`; variadic lists and call targets go
//! to one aux record per instruction. Branch targets are bytecode offsets
//! until [`resolve_branches`] turns them into instruction indices, through a
//! remap stub where the edge has block arguments. Every operand is verified
//! (`verify.rs`) as it is lowered.

use std::collections::{HashMap, HashSet};

#[cfg(doc)]
use crate::bytecode::decode::Instruction;
use crate::bytecode::decode::{decode_at, Operand};
use crate::bytecode::isa::{
    Bank, Field, ListKind, Opcode, I32_INDEX_MASK, IMPORT_ORDINAL_BIT, REF_BANK_BIT,
};
use crate::loader::FeatureBits;

use super::signature::{host_call_plan, Signature};
use super::verify::{self, check_func, check_semantics, VerifyError};
use super::{aux_list, Inst, ModuleFacts, NONE};

/// A function being lowered: its code so far, and what verification needs.
pub(super) struct Builder<'f> {
    pub(super) facts: &'f ModuleFacts<'f>,
    pub(super) sig: &'f Signature,
    pub(super) n32: u16,
    pub(super) nref: u16,
    pub(super) ordinal: u32,
    pub(super) offset: u32,
    pub(super) code: Vec<Inst>,
    pub(super) offsets: Vec<u32>,
    pub(super) aux: Vec<u32>,
    pub(super) strings: Vec<Box<str>>,
    /// (instruction index, which field: 0 = x, 1 = y, or aux position + 2,
    /// target bytecode offset, remap aux index or NONE)
    pub(super) fixups: Vec<(usize, usize, u32, u32)>,
}

impl<'f> Builder<'f> {
    /// An empty builder for internal function `ordinal` with `code_len`
    /// bytes of bytecode.
    pub(super) fn new(
        facts: &'f ModuleFacts<'f>,
        ordinal: u32,
        i32_count: u16,
        ref_count: u16,
        code_len: usize,
    ) -> Self {
        Builder {
            facts,
            sig: &facts.signatures[ordinal as usize],
            n32: i32_count,
            nref: ref_count,
            ordinal,
            offset: 0,
            code: Vec::with_capacity(code_len / 6),
            offsets: Vec::with_capacity(code_len / 6),
            aux: Vec::new(),
            strings: Vec::new(),
            fixups: Vec::new(),
        }
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

/// Where the blocks of a lowered body are.
pub(super) struct BlockMap {
    /// Bytecode offset -> instruction index (block markers map to the next).
    index_at: HashMap<u32, u32>,
    /// Bytecode offsets of the block markers.
    starts: HashSet<u32>,
}

impl BlockMap {
    /// How many blocks the bytecode has.
    pub(super) fn count(&self) -> usize {
        self.starts.len()
    }
}

/// Decodes and lowers every instruction of `code`, verifying each, and
/// records where the blocks are.
pub(super) fn lower_body(
    b: &mut Builder<'_>,
    code: &[u8],
    features: FeatureBits,
) -> Result<BlockMap, VerifyError> {
    let mut index_at: HashMap<u32, u32> = HashMap::new();
    let mut starts = HashSet::new();
    let mut pc = 0usize;
    while pc < code.len() {
        b.offset = pc as u32;
        let inst = decode_at(code, pc).map_err(|e| b.err(e.to_string()))?;
        index_at.insert(pc as u32, b.code.len() as u32);
        pc = inst.end;
        if inst.op == Opcode::Block {
            starts.insert(inst.offset as u32);
            continue;
        }
        verify::check_feature(b, inst.op, features)?;
        lower(b, inst.op, &inst.operands)?;
        b.offsets.push(inst.offset as u32);
    }
    Ok(BlockMap { index_at, starts })
}

/// Appends the guard that ends the body (running past the end traps
/// instead of reading beyond) at bytecode offset `end`; returns its index.
pub(super) fn push_guard(b: &mut Builder<'_>, end: usize) -> usize {
    b.offset = end as u32;
    let guard = b.code.len();
    b.code.push(Inst::new(Opcode::Block));
    b.offsets.push(end as u32);
    guard
}

/// Resolves branch targets to instruction indices, creating remap stubs.
pub(super) fn resolve_branches(b: &mut Builder<'_>, blocks: &BlockMap) -> Result<(), VerifyError> {
    let fixups = std::mem::take(&mut b.fixups);
    for (at, field, target, remap) in fixups {
        b.offset = b.offsets[at];
        let dest = match blocks.index_at.get(&target) {
            Some(&dest) if blocks.starts.contains(&target) => dest,
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
    Ok(())
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
                // Read as IREE prints it (`%.*s`): up to a NUL byte; bytes
                // that are not UTF-8 read as U+FFFD (IREE writes them as
                // they are).
                let text = s.split(|&c| c == 0).next().unwrap_or_default();
                b.strings.push(String::from_utf8_lossy(text).into());
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
                    // used as a ref register index (found by vm/tests/mutation.rs).
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
    if matches!(op, Opcode::CallVariadic | Opcode::CallVariadicYieldable) {
        append_host_call_plan(b, &inst)?;
    }
    b.code.push(inst);
    Ok(())
}

/// Appends a (verified) variadic call's argument plan to its aux record,
/// which becomes `[sizes] [args] [target]? [results] [plan]`: the
/// interpreter reads the host function's arguments by it.
fn append_host_call_plan(b: &mut Builder<'_>, inst: &Inst) -> Result<(), VerifyError> {
    let import = (inst.x & !IMPORT_ORDINAL_BIT) as usize;
    let sizes: Vec<u16> = aux_list(&b.aux, inst.y, 0)
        .iter()
        .map(|&n| n as u16)
        .collect();
    let plan = b
        .facts
        .imports
        .get(import)
        .and_then(|sig| host_call_plan(sig, &sizes))
        .ok_or_else(|| {
            b.err("variadic segment sizes do not match the import's calling convention")
        })?;
    b.aux.push(plan.len() as u32);
    b.aux.extend(plan);
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
