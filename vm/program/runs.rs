//! Straight runs, the unit in which the fast loops and compiled code charge
//! fuel (`Context::set_fuel`).
//!
//! Fuel is one unit per executed instruction of the lowered code, as the
//! hooked loop counts it, one at a time. Remap stubs (the `br`s after the
//! guard that carry a branch's block arguments where they could not be
//! folded into it) are free: whether a branch goes through one depends on
//! the loop (the hooked loop takes a fused compare-branch's `cond_br`, with
//! both remaps folded, the fast loop its false edge through a stub), so
//! counting them would make fuel depend on the engine. A stub is marked by
//! `run == 0` on a `br` ([`is_stub`]). The fast
//! paths count whole runs instead: a *run* is a maximal sequence of
//! [`RunRole::Straight`] instructions that control enters only at its top or
//! by falling through, ending at the first branch ([`RunRole::Ends`]) or
//! just before an instruction that stands alone ([`RunRole::Alone`]: calls,
//! returns, yields, bulk work, table branches, the guard). Each
//! instruction's [`Inst::run`] is the number of instructions from it to the
//! end of its run, so control arriving at `pc` by a branch, a call, a
//! return or after an instruction that stands alone is charged `run[pc]`
//! at once, and everything up to the next such point is paid for. Alone
//! instructions charge their own unit, and the run after them, themselves.
//!
//! When the fuel left is less than a charge, the fast path stops before
//! charging and the hooked loop takes over, charging one instruction at a
//! time: fuel runs out at the same instruction in every engine.

use crate::bytecode::isa::Opcode;

use super::Inst;

/// How an instruction takes part in straight runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RunRole {
    /// Inside a run: falls through to the next instruction (or traps).
    Straight,
    /// Ends the run it is in: a branch the fast loop takes inline.
    Ends,
    /// In no run: charges its own unit, and the run it leads to, itself.
    Alone,
}

/// The role of `op` (an opcode of lowered code, fused ones included).
pub(crate) fn role(op: Opcode) -> RunRole {
    use Opcode::*;
    match op {
        Br | CondBr => RunRole::Ends,
        // Leave the frame or run other code.
        Call | CallVariadic | CallYieldable | CallVariadicYieldable | Return | Yield => {
            RunRole::Alone
        }
        // Charge fuel for their bytes (`Hooks::charge_bulk`).
        BufferAlloc | BufferClone | BufferCopy | BufferCompare | BufferFillI8 | BufferFillI16
        | BufferFillI32 | BufferFillI64 | BufferFillF32 | BufferFillF64 | BufferHash
        | ListAlloc | ListReserve | ListResize => RunRole::Alone,
        // A branch taken out of line, a pause, a failure, and the guard
        // that ends every body.
        BrTable | CondBreak | Break | Fail | Block => RunRole::Alone,
        _ => RunRole::Straight,
    }
}

/// [`Inst::run`] when the run is longer than it holds: read
/// [`super::Function::runs`] instead.
pub(crate) const LONG_RUN: u16 = u16::MAX;

/// Whether `inst` is a remap stub, which costs no fuel.
#[inline(always)]
pub(crate) fn is_stub(inst: &Inst) -> bool {
    inst.run == 0 && inst.op == Opcode::Br
}

/// Computes every instruction's run length (see the module doc) into
/// `code[k].run` (saturated at [`LONG_RUN`]) and returns them in full;
/// everything after `guard` (remap stubs and records) gets 0.
pub(super) fn mark_runs(code: &mut [Inst], guard: usize) -> Box<[u32]> {
    let mut runs = vec![0u32; code.len()];
    for inst in code.iter_mut().skip(guard + 1) {
        inst.run = 0;
    }
    let mut next = 0u32;
    for k in (0..code.len().min(guard + 1)).rev() {
        let n = match role(code[k].op) {
            RunRole::Alone => 0,
            RunRole::Ends => 1,
            RunRole::Straight => next.saturating_add(1),
        };
        runs[k] = n;
        code[k].run = u16::try_from(n).unwrap_or(LONG_RUN);
        next = n;
    }
    runs.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_count_to_the_branch_and_stop_before_alone_instructions() {
        let ops = [
            Opcode::ConstI32Zero,
            Opcode::AddI32,
            Opcode::Call,
            Opcode::AddI32,
            Opcode::CondBr,
            Opcode::AddI32,
            Opcode::Br,
            Opcode::Block,
        ];
        let mut code: Vec<Inst> = ops.iter().map(|&op| Inst::new(op)).collect();
        // A remap stub after the guard.
        code.push(Inst::new(Opcode::Br));
        let runs = mark_runs(&mut code, 7);
        assert_eq!(&runs[..], &[2, 1, 0, 2, 1, 2, 1, 0, 0]);
        assert!(is_stub(&code[8]) && !is_stub(&code[6]));
        assert!(code
            .iter()
            .zip(runs.iter())
            .all(|(i, &r)| i.run as u32 == r));
    }

    #[test]
    fn long_runs_saturate_in_the_instruction() {
        let mut code = vec![Inst::new(Opcode::AddI32); 70_000];
        code.push(Inst::new(Opcode::Br));
        let runs = mark_runs(&mut code, 70_001);
        assert_eq!(runs[0], 70_001);
        assert_eq!(code[0].run, LONG_RUN);
        assert_eq!(code[70_000 - 10].run, 11);
    }
}
