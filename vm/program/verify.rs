//! Verification: the checks that prove what the interpreter relies on
//! without checking again. Register operands lie inside the function's
//! register files and in the bank the instruction wants; function, import,
//! type, rodata and global operands are in range ([`ModuleFacts`]); call
//! sites pass and return what the callee's calling convention says; and the
//! reference verifier's register-count, block-count and feature rules hold.
//! The lowering (`lower.rs`) runs these on its [`Builder`] as it goes; a
//! failure is a [`VerifyError`] naming the function and bytecode offset.

use crate::bytecode::isa::{
    Bank, Opcode, OpcodeSet, I32_INDEX_MASK, IMPORT_ORDINAL_BIT, REF_BANK_BIT, REF_INDEX_MASK,
};
use crate::loader::FeatureBits;

use super::lower::Builder;
use super::signature::{expand_variadic, Signature};
#[cfg(doc)]
use super::ModuleFacts;
use super::{aux_list, Inst};

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

impl Builder<'_> {
    pub(super) fn err(&self, message: impl Into<String>) -> VerifyError {
        VerifyError {
            ordinal: self.ordinal,
            offset: self.offset,
            message: message.into(),
        }
    }

    pub(super) fn check_reg(&self, r: u16, bank: Bank) -> Result<u16, VerifyError> {
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
                // An i64/f64 starts at an even ordinal, as IREE's verifier
                // requires ("not 8-byte aligned"); the register reads would
                // cope with an odd one (unaligned), but no module IREE loads
                // has one.
                if bank.slots() == 2 && r & 1 != 0 {
                    return Err(self.err(format!(
                        "register %i{}:{} ({}) starts at an odd ordinal: i64/f64 registers \
                         start at even ones (8-byte aligned)",
                        r & I32_INDEX_MASK,
                        (r & I32_INDEX_MASK) + 1,
                        bank.name()
                    )));
                }
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

    pub(super) fn check_any(&self, r: u16) -> Result<(), VerifyError> {
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
}

/// The reference verifier's register-count rules: each count, rounded up
/// to a power of two (at least 1), must stay within the bank (at most
/// 0x7FFF i32 and 0x3FFF ref registers, so 16,384 and 8,192 are the
/// largest counts) and must hold the arguments (i64/f64 starting at even
/// slots).
pub(super) fn check_register_counts(
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

/// Extension instructions need their feature declared by the function
/// (its descriptor's requirements), as IREE's verifier requires
/// (`IREE_VM_VERIFY_REQUIREMENT`): the module's requirements do not stand
/// in for the function's.
pub(super) fn check_feature(
    b: &Builder<'_>,
    op: Opcode,
    features: FeatureBits,
) -> Result<(), VerifyError> {
    let needed = match op.info().set {
        OpcodeSet::ExtF32 => Some((FeatureBits::EXT_F32, "EXT_F32")),
        OpcodeSet::ExtF64 => Some((FeatureBits::EXT_F64, "EXT_F64")),
        _ => None,
    };
    if let Some((bit, name)) = needed {
        if !features.contains(bit) {
            return Err(b.err(format!(
                "{op} needs the {name} feature, which the function's requirements do not include"
            )));
        }
    }
    Ok(())
}

/// The descriptor's block count must be the number of block markers the
/// bytecode has (reported at offset 0).
pub(super) fn check_block_count(
    b: &mut Builder<'_>,
    found: usize,
    block_count: u16,
) -> Result<(), VerifyError> {
    if found != usize::from(block_count) {
        b.offset = 0;
        return Err(b.err(format!(
            "descriptor declares {block_count} blocks but the bytecode has {found}"
        )));
    }
    Ok(())
}

pub(super) fn check_func(b: &Builder<'_>, f: u32) -> Result<(), VerifyError> {
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

/// Call-site checks that need the callee's signature.
pub(super) fn check_semantics(b: &Builder<'_>, inst: &Inst) -> Result<(), VerifyError> {
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
