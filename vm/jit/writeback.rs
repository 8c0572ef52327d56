//! What compiled code writes back to the register window when it leaves.
//!
//! Compiled code keeps registers in machine registers and stores them to
//! the frame's i32 window only when it returns to the interpreter, and then
//! only the slots it changed on its way there (*dirty*) that the
//! interpreter may still read (*live*). A slot the rest of the function
//! overwrites before reading it is never observed, so leaving it stale
//! cannot change what the program computes; nothing else reads the window
//! of a frame that runs compiled code (a debugger, a trace or any other
//! hook keeps the whole run in the interpreter).
//!
//! Both sets are classic dataflow problems, solved per block of the
//! function:
//! - liveness, backwards over every instruction, interpreted or not, from
//!   the register operands the ISA table declares (an instruction whose
//!   reads or successors are not known here counts as reading every slot);
//! - dirtiness, forwards over the compiled code only, from the slots the
//!   translator recorded as written (`Tx::writes` in `translate.rs`),
//!   starting clean at every entry.
//!
//! Functions too large for the analysis's memory bound write back every
//! slot they wrote anywhere, which is always correct.

use std::collections::HashMap;

use crate::bytecode::isa::{Access, Bank, Field, Opcode, REF_BANK_BIT};
use crate::program::{aux_list, Inst};

use super::translate::{edges, first_half, Edge};

/// Above this many words of bits (slots / 64 × instructions) the analysis
/// is skipped and every written slot is stored at every exit.
const WORD_BUDGET: usize = 1 << 22;

/// A set of i32 slots.
#[derive(Clone, PartialEq, Eq)]
struct Slots(Vec<u64>);

impl Slots {
    fn empty(n: usize) -> Slots {
        Slots(vec![0; n.div_ceil(64)])
    }
    fn all(n: usize) -> Slots {
        let mut s = Slots::empty(n);
        for k in 0..n {
            s.insert(k);
        }
        s
    }
    /// Inserts `k` when it is below `n` (list operands may name the slot
    /// after the last).
    fn insert_below(&mut self, k: usize, n: usize) {
        if k < n {
            self.insert(k);
        }
    }
    fn insert(&mut self, k: usize) {
        if let Some(w) = self.0.get_mut(k / 64) {
            *w |= 1 << (k % 64);
        }
    }
    fn remove(&mut self, k: usize) {
        if let Some(w) = self.0.get_mut(k / 64) {
            *w &= !(1 << (k % 64));
        }
    }
    fn contains(&self, k: usize) -> bool {
        self.0.get(k / 64).is_some_and(|w| w & (1 << (k % 64)) != 0)
    }
    fn union(&mut self, other: &Slots) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// Where control goes after an instruction, as far as liveness needs it.
enum Flow {
    /// To the next instruction.
    Next,
    /// Along these branch edges (with their block arguments).
    Edges(Vec<Edge>),
    /// Nowhere in this frame (`return`).
    Stop,
    /// Somewhere this analysis does not follow: the instruction counts as
    /// reading every slot.
    Unknown,
}

/// One instruction's effect on the i32 slots, for the analysis.
struct Effect {
    uses: Vec<usize>,
    defs: Vec<usize>,
    flow: Flow,
}

/// The slots of register `r` read or written as `bank` (none for refs).
fn slots_of(r: u16, bank: Bank, out: &mut Vec<usize>) {
    match bank {
        Bank::Ref => {}
        Bank::I64 | Bank::F64 => out.extend([r as usize, r as usize + 1]),
        _ => out.push(r as usize),
    }
}

/// Registers of an `Any` list: i32 ordinals read as two slots (their width
/// is not known here; the extra slot only makes more live), refs skipped.
fn list_uses(list: &[u32], out: &mut Vec<usize>) {
    for &r in list {
        let r = r as u16;
        if r & REF_BANK_BIT == 0 {
            out.extend([r as usize, r as usize + 1]);
        }
    }
}

fn effect(code: &[Inst], aux: &[u32], k: usize) -> Effect {
    let i = &code[k];
    let op = first_half(i.op);
    let mut e = Effect {
        uses: Vec::new(),
        defs: Vec::new(),
        flow: Flow::Next,
    };
    match op {
        Opcode::Br | Opcode::CondBr => {
            if op == Opcode::CondBr {
                e.uses.push(i.a as usize);
            }
            e.flow = match edges(code, k) {
                Some(es) => Flow::Edges(es),
                None => Flow::Unknown,
            };
        }
        Opcode::Return => {
            list_uses(aux_list(aux, i.x, 0), &mut e.uses);
            e.flow = Flow::Stop;
        }
        Opcode::Fail => {
            // A status of 0 fails nothing: execution goes on.
            e.uses.push(i.a as usize);
        }
        Opcode::Call => {
            // Aux record: [n, args...] [m, results...]. A result writes at
            // least its first slot.
            list_uses(aux_list(aux, i.y, 0), &mut e.uses);
            for &r in aux_list(aux, i.y, 1) {
                let r = r as u16;
                if r & REF_BANK_BIT == 0 {
                    e.defs.push(r as usize);
                }
            }
        }
        Opcode::DiscardRefs => {}
        _ => {
            // Plain instructions: register fields fill `a, b, c, d` in
            // order; anything with lists, targets or more registers is
            // not followed.
            let regs = [i.a, i.b, i.c, i.d];
            let mut n = 0;
            for f in op.info().fields {
                let (bank, access) = match *f {
                    Field::Reg(bank, access) => (bank, access),
                    Field::RefMove(access) => (Bank::Ref, access),
                    Field::ConstI16
                    | Field::Const(_)
                    | Field::GlobalAttr
                    | Field::FuncAttr
                    | Field::RodataAttr
                    | Field::TypeId
                    | Field::StringAttr => continue,
                    _ => {
                        e.flow = Flow::Unknown;
                        return e;
                    }
                };
                let Some(&r) = regs.get(n) else {
                    e.flow = Flow::Unknown;
                    return e;
                };
                n += 1;
                match access {
                    Access::Read => slots_of(r, bank, &mut e.uses),
                    Access::Write => slots_of(r, bank, &mut e.defs),
                }
            }
        }
    }
    e
}

/// Liveness backwards through the block arguments of an edge: the
/// interpreter applies the moves in order, so they are undone in reverse.
fn through_remap(live: &Slots, e: &Edge, n32: usize) -> Slots {
    let mut l = live.clone();
    if let Some(pairs) = &e.remap {
        for &(s, d) in pairs.iter().rev() {
            if s & REF_BANK_BIT == 0 {
                l.remove(d as usize);
                l.insert_below(s as usize, n32);
            }
        }
    }
    l
}

/// For each exit index in `exits` (an instruction compiled code leaves
/// before, or `guard`), the slots to store there, ascending. `writes` are
/// the (instruction, slot) pairs the translator wrote; an edge's block
/// arguments count as written by its branch.
pub(super) fn plan(
    code: &[Inst],
    aux: &[u32],
    guard: usize,
    n32: usize,
    writes: &[(usize, u16)],
    exits: &[usize],
    stays: &dyn Fn(&Inst) -> bool,
) -> HashMap<usize, Vec<u16>> {
    let (written, any) = written_slots(writes, guard, n32);
    if n32.div_ceil(64).saturating_mul(guard) > WORD_BUDGET {
        return store_every_written_slot(&any, exits);
    }
    let f = BlockGraph::new(code, aux, guard, n32, stays);
    let live_in = f.live_in();
    let dirty_in = f.dirty_in(&written);
    f.exit_slots(&written, &any, &live_in, &dirty_in, exits)
}

/// The i32 slots of `func` that may be read before they are written, from
/// its entry: what must hold zero (as the interpreter leaves a new window)
/// beyond the arguments when compiled code opens its window. Every slot
/// when the function is too large for the analysis.
pub(super) fn live_at_entry(func: &crate::program::Function) -> Vec<u16> {
    let (code, guard, n32) = (&func.code[..], func.guard as usize, func.i32_count as usize);
    if guard == 0 || n32.div_ceil(64).saturating_mul(guard) > WORD_BUDGET {
        return (0..n32 as u16).collect();
    }
    let f = BlockGraph::new(code, &func.aux, guard, n32, &|_| false);
    match f.live_in().first() {
        Some(live) => live.members().map(|s| s as u16).collect(),
        None => (0..n32 as u16).collect(),
    }
}

/// The slots each instruction before `guard` writes, and every slot
/// written anywhere.
fn written_slots(writes: &[(usize, u16)], guard: usize, n32: usize) -> (Vec<Vec<usize>>, Slots) {
    let mut written: Vec<Vec<usize>> = vec![Vec::new(); guard];
    let mut any = Slots::empty(n32);
    for &(k, s) in writes {
        if let Some(w) = written.get_mut(k) {
            w.push(s as usize);
        }
        any.insert(s as usize);
    }
    (written, any)
}

/// The plan without the analysis: every slot written anywhere (`any`) is
/// stored at every exit.
fn store_every_written_slot(any: &Slots, exits: &[usize]) -> HashMap<usize, Vec<u16>> {
    let all: Vec<u16> = any.members().map(|s| s as u16).collect();
    exits.iter().map(|&k| (k, all.clone())).collect()
}

/// A function's body (the instructions before `guard`) cut into blocks,
/// with what the analysis needs of each instruction.
struct BlockGraph<'c> {
    code: &'c [Inst],
    guard: usize,
    n32: usize,
    /// Each instruction's effect on the slots.
    effects: Vec<Effect>,
    /// Whether compiled code runs each instruction (translated, or a call
    /// it makes itself).
    compiled: Vec<bool>,
    /// The first instruction of each block, ascending.
    starts: Vec<usize>,
    /// The block each instruction starts (`usize::MAX` where none does),
    /// with one more entry for `guard`.
    block_of: Vec<usize>,
    /// Every slot.
    all: Slots,
}

impl<'c> BlockGraph<'c> {
    /// Cuts the body into blocks: leaders are the entry, branch targets
    /// and whatever follows an instruction that does not simply go on.
    fn new(
        code: &'c [Inst],
        aux: &[u32],
        guard: usize,
        n32: usize,
        stays: &dyn Fn(&Inst) -> bool,
    ) -> BlockGraph<'c> {
        let effects: Vec<Effect> = (0..guard).map(|k| effect(code, aux, k)).collect();
        let compiled: Vec<bool> = (0..guard).map(|k| stays(&code[k])).collect();
        let mut leader = vec![false; guard + 1];
        leader[0] = true;
        leader[guard] = true;
        for (k, e) in effects.iter().enumerate() {
            match &e.flow {
                Flow::Next => {}
                Flow::Edges(es) => {
                    leader[k + 1] = true;
                    for ed in es {
                        if ed.to < guard {
                            leader[ed.to] = true;
                        }
                    }
                }
                Flow::Stop | Flow::Unknown => leader[k + 1] = true,
            }
        }
        let starts: Vec<usize> = (0..guard).filter(|&k| leader[k]).collect();
        let mut block_of = vec![usize::MAX; guard + 1];
        for (b, &s) in starts.iter().enumerate() {
            block_of[s] = b;
        }
        BlockGraph {
            code,
            guard,
            n32,
            effects,
            compiled,
            starts,
            block_of,
            all: Slots::all(n32),
        }
    }

    /// One past the last instruction of block `b`.
    fn end_of(&self, b: usize) -> usize {
        self.starts.get(b + 1).copied().unwrap_or(self.guard)
    }

    /// The block that starts at instruction `k` (below `guard`), if one
    /// does.
    fn block_at(&self, k: usize) -> Option<usize> {
        match self.block_of.get(k).copied() {
            Some(b) if k < self.guard && b != usize::MAX => Some(b),
            _ => None,
        }
    }

    /// Liveness backwards over instruction `e`: `live` before it, from
    /// `live` after it.
    fn step_back(&self, live: &mut Slots, e: &Effect) {
        if matches!(e.flow, Flow::Unknown) {
            *live = self.all.clone();
            return;
        }
        for &d in &e.defs {
            live.remove(d);
        }
        for &u in &e.uses {
            live.insert_below(u, self.n32);
        }
    }

    /// The slots live at the end of block `b`, from its successors'
    /// live-ins.
    fn live_after(&self, b: usize, live_in: &[Slots]) -> Slots {
        let end = self.end_of(b);
        let last = &self.effects[end - 1];
        match &last.flow {
            Flow::Next => match self.block_at(end) {
                Some(nb) => live_in[nb].clone(),
                None => self.all.clone(),
            },
            Flow::Edges(es) => {
                let mut l = Slots::empty(self.n32);
                for ed in es {
                    match self.block_at(ed.to) {
                        Some(t) => l.union(&through_remap(&live_in[t], ed, self.n32)),
                        None => l.union(&self.all),
                    }
                }
                l
            }
            Flow::Stop => Slots::empty(self.n32),
            Flow::Unknown => self.all.clone(),
        }
    }

    /// Liveness: each block's live-in, iterated to the fixed point.
    fn live_in(&self) -> Vec<Slots> {
        let nb = self.starts.len();
        let mut live_in = vec![Slots::empty(self.n32); nb];
        loop {
            let mut changed = false;
            for b in (0..nb).rev() {
                let mut l = self.live_after(b, &live_in);
                for k in (self.starts[b]..self.end_of(b)).rev() {
                    self.step_back(&mut l, &self.effects[k]);
                }
                if l != live_in[b] {
                    live_in[b] = l;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        live_in
    }

    /// Dirtiness: the slots compiled code may have changed on its way into
    /// each block, forwards through compiled code from entries that start
    /// clean, iterated to the fixed point.
    fn dirty_in(&self, written: &[Vec<usize>]) -> Vec<Slots> {
        let nb = self.starts.len();
        let mut dirty_in = vec![Slots::empty(self.n32); nb];
        loop {
            let mut changed = false;
            for b in 0..nb {
                let (start, end) = (self.starts[b], self.end_of(b));
                let mut d = dirty_in[b].clone();
                let mut reaches_end = true;
                for (w, &compiled) in written[start..end].iter().zip(&self.compiled[start..end]) {
                    if !compiled {
                        reaches_end = false;
                        break;
                    }
                    for &s in w {
                        d.insert(s);
                    }
                }
                if !reaches_end {
                    continue;
                }
                // Compiled code goes on along a branch's edges, else to the
                // next instruction.
                let targets: Vec<usize> = match edges(self.code, end - 1) {
                    Some(es) => es.iter().map(|e| e.to).collect(),
                    None => vec![end],
                };
                for t in targets {
                    if let Some(tb) = self.block_at(t) {
                        let before = dirty_in[tb].clone();
                        dirty_in[tb].union(&d);
                        changed |= dirty_in[tb] != before;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        dirty_in
    }

    /// Each exit's slots: those dirty and live there (every slot written
    /// anywhere, `any`, at `guard`), each exit's block walked once in each
    /// direction.
    fn exit_slots(
        &self,
        written: &[Vec<usize>],
        any: &Slots,
        live_in: &[Slots],
        dirty_in: &[Slots],
        exits: &[usize],
    ) -> HashMap<usize, Vec<u16>> {
        let mut by_block: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut out = HashMap::new();
        for &k in exits {
            if k >= self.guard {
                out.insert(k, any.members().map(|s| s as u16).collect());
                continue;
            }
            let b = self.starts.partition_point(|&s| s <= k) - 1;
            by_block.entry(b).or_default().push(k);
        }
        for (b, mut ks) in by_block {
            ks.sort_unstable();
            let (start, end) = (self.starts[b], self.end_of(b));
            let mut dirty_at = HashMap::new();
            let mut d = dirty_in[b].clone();
            for (k, w) in written.iter().enumerate().take(end).skip(start) {
                if ks.binary_search(&k).is_ok() {
                    dirty_at.insert(k, d.clone());
                }
                for &s in w {
                    d.insert(s);
                }
            }
            let mut l = self.live_after(b, live_in);
            for k in (start..end).rev() {
                self.step_back(&mut l, &self.effects[k]);
                if let Some(d) = dirty_at.get(&k) {
                    let slots = d
                        .members()
                        .filter(|&s| l.contains(s))
                        .map(|s| s as u16)
                        .collect();
                    out.insert(k, slots);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::translate::translated;
    use super::*;
    use crate::program::NONE;

    fn inst(op: Opcode, a: u16, x: u32) -> Inst {
        Inst {
            op,
            a,
            b: 0,
            c: 0,
            d: 0,
            x,
            y: NONE,
            run: 0,
        }
    }

    /// `%i1 = 5; %i1 = 6; return %i1` with an exit before each.
    fn rewrite() -> (Vec<Inst>, Vec<u32>) {
        let code = vec![
            inst(Opcode::ConstI32, 1, 5),
            inst(Opcode::ConstI32, 1, 6),
            inst(Opcode::Return, 0, 0),
            inst(Opcode::Block, 0, 0),
        ];
        // The return's operand list: one register, %i1.
        (code, vec![1, 1])
    }

    #[test]
    fn a_slot_overwritten_before_it_is_read_is_not_stored() {
        let (code, aux) = rewrite();
        let writes = [(0, 1), (1, 1)];
        let plan = plan(&code, &aux, 3, 4, &writes, &[1, 2], &|i| {
            translated(first_half(i.op))
        });
        assert_eq!(plan[&1], Vec::<u16>::new(), "dead before the rewrite");
        assert_eq!(plan[&2], vec![1], "the return reads it");
    }

    #[test]
    fn nothing_written_on_the_way_is_stored() {
        let (code, aux) = rewrite();
        let plan = plan(&code, &aux, 3, 4, &[], &[2], &|i| {
            translated(first_half(i.op))
        });
        assert_eq!(plan[&2], Vec::<u16>::new());
    }

    #[test]
    fn a_fail_of_status_zero_goes_on() {
        // `%i1 = 5; vm.fail %i2; return %i1`: the interpreter runs the fail
        // and, on status 0, the return, which reads %i1.
        let code = vec![
            inst(Opcode::ConstI32, 1, 5),
            inst(Opcode::Fail, 2, 0),
            inst(Opcode::Return, 0, 0),
            inst(Opcode::Block, 0, 0),
        ];
        let plan = plan(&code, &[1, 1], 3, 4, &[(0, 1)], &[1], &|i| {
            translated(first_half(i.op))
        });
        assert_eq!(plan[&1], vec![1]);
    }

    #[test]
    fn past_the_budget_every_written_slot_is_stored() {
        // 1024 words of slots times 4097 instructions is over the budget:
        // no analysis, so even the dead slot is stored.
        let n32 = 1 << 16;
        let mut code: Vec<Inst> = (0..4096).map(|_| inst(Opcode::ConstI32, 1, 5)).collect();
        code.push(inst(Opcode::Return, 0, 0));
        code.push(inst(Opcode::Block, 0, 0));
        let plan = plan(
            &code,
            &[0],
            4097,
            n32,
            &[(0, 1), (1, 7)],
            &[1, 4096],
            &|i| translated(first_half(i.op)),
        );
        assert_eq!(plan[&1], vec![1, 7]);
        assert_eq!(plan[&4096], vec![1, 7]);
    }
}
