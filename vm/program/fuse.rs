//! The passes over a lowered function's code, after its branches are
//! resolved (in this order, see `compile`): compare-branch fusion
//! ([`fuse_compare_branches`]), folding remap stubs into the branches that
//! jump to them ([`fold_remap_stubs`]), making the hot branches relative
//! with their remaps as records inside `code` ([`relativize_branches`]), and
//! fusing hot instruction pairs ([`PAIRS`], [`fuse_pairs`]). None changes
//! what a function does; each saves the interpreter dispatches or lookups.

use crate::bytecode::isa::Opcode;

use super::{Inst, NONE, NO_REMAP};

/// Turns `cmp.* -> %c; cond_br %c, T, F` pairs into one fused instruction
/// that writes `%c` and branches (the `cond_br` stays behind, unreachable
/// except by a branch, so a pair is only fused when nothing branches to it).
pub(super) fn fuse_compare_branches(code: &mut [Inst], aux: &[u32]) {
    let targets = branch_targets(code, aux);
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

/// Which instructions a branch goes to (absolute targets: before
/// [`relativize_branches`]).
fn branch_targets(code: &[Inst], aux: &[u32]) -> Vec<bool> {
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
            op if is_fused_compare_branch(op) => {
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
    targets
}

/// The parts of an append (`vm.list.size %r -> %n; vm.add.i32 %n, %d ->
/// %t; vm.list.resize %r, %t; vm.list.set.* %r, %n, %v`) that
/// `ListSizeThenAppend` at the `vm.list.size` runs, read from the four
/// instructions in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Append {
    /// The list's ref register (without the move bit).
    pub(crate) list: u16,
    /// The register the size goes to (`%n`, also the set's index).
    pub(crate) size: u16,
    /// The register added to the size (`%d`).
    pub(crate) delta: u16,
    /// The register the new size goes to (`%t`).
    pub(crate) new_size: u16,
    /// The set's value register (`%v`; its first slot when 64-bit).
    pub(crate) value: u16,
    /// The set: `vm.list.set.i32`, `.i64`, `.f32` or `.f64`.
    pub(crate) set: Opcode,
}

/// The append starting at `code[k]` (a plain `vm.list.size` or its fused
/// form), if the four instructions from `k` are one that
/// `ListSizeThenAppend` may run as a unit: the same list throughout, the
/// resize to the size plus another register, the set of the old size's
/// index, and a value register that none of the four writes (so that it
/// reads the same before the size as at the set).
pub(crate) fn append_at(code: &[Inst], k: usize) -> Option<Append> {
    use crate::bytecode::isa::REF_INDEX_MASK;
    let [size, add, resize, set] = code.get(k..k.checked_add(4)?)? else {
        return None;
    };
    if !matches!(size.op, Opcode::ListSize | Opcode::ListSizeThenAppend)
        || add.op != Opcode::AddI32
        || resize.op != Opcode::ListResize
        || !matches!(
            set.op,
            Opcode::ListSetI32 | Opcode::ListSetI64 | Opcode::ListSetF32 | Opcode::ListSetF64
        )
    {
        return None;
    }
    let list = size.a & REF_INDEX_MASK;
    let n = size.b;
    let delta = match (add.a == n, add.b == n) {
        (true, false) => add.b,
        (false, true) => add.a,
        _ => return None,
    };
    let t = add.c;
    let wide = matches!(set.op, Opcode::ListSetI64 | Opcode::ListSetF64);
    let v = set.c;
    let value_slots = v..v.saturating_add(if wide { 2 } else { 1 });
    let same = resize.a & REF_INDEX_MASK == list && set.a & REF_INDEX_MASK == list;
    if !same
        || t == n
        || resize.b != t
        || set.b != n
        || value_slots.contains(&n)
        || value_slots.contains(&t)
    {
        return None;
    }
    Some(Append {
        list,
        size: n,
        delta,
        new_size: t,
        value: v,
        set: set.op,
    })
}

/// Turns the `vm.list.size` of every append in the body ([`append_at`])
/// that no branch enters after its first instruction into
/// `ListSizeThenAppend`. The other three instructions stay in place: the
/// fused instruction runs them only when the whole append is one it can
/// do at once, and otherwise runs the size alone and goes on to them.
pub(super) fn fuse_appends(code: &mut [Inst], aux: &[u32], guard: usize) {
    let targets = branch_targets(code, aux);
    let mut k = 0;
    while k + 4 <= guard {
        if append_at(code, k).is_some() && !targets[k + 1..k + 4].contains(&true) {
            code[k].op = Opcode::ListSizeThenAppend;
            k += 4;
        } else {
            k += 1;
        }
    }
}

/// Whether `op` is a fused compare-and-branch (targets in `x`/`y`, true-edge
/// remap in `d`).
fn is_fused_compare_branch(op: Opcode) -> bool {
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
pub(super) fn fuse_pairs(code: &mut [Inst], guard: usize) {
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

/// Functions at least this large (instructions plus aux words) keep their
/// remap stubs, so that every folded remap distance fits in 16 bits.
pub(super) const FOLD_LIMIT: usize = 30_000;

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
pub(super) fn relativize_branches(code: &mut Vec<Inst>, offsets: &mut Vec<u32>, aux: &[u32]) {
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
pub(super) fn fold_remap_stubs(code: &mut [Inst], stub_start: usize, fold: bool) {
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

    /// `vm.list.size %r0 -> %5; vm.add.i32 %5, %2 -> %6; vm.list.resize
    /// %r0, %6; vm.list.set.i32 %r0, %5, %3`, then the guard.
    fn append() -> Vec<Inst> {
        let inst = |op, a, b, c| Inst {
            a,
            b,
            c,
            ..Inst::new(op)
        };
        vec![
            inst(Opcode::ListSize, 0x8000, 5, 0),
            inst(Opcode::AddI32, 5, 2, 6),
            inst(Opcode::ListResize, 0x8000, 6, 0),
            inst(Opcode::ListSetI32, 0x8000, 5, 3),
            Inst::new(Opcode::Block),
        ]
    }

    #[test]
    fn an_append_fuses_at_its_size_and_keeps_the_rest_in_place() {
        let mut code = append();
        fuse_appends(&mut code, &[], 4);
        let ops: Vec<Opcode> = code.iter().map(|i| i.op).collect();
        assert_eq!(
            ops,
            [
                Opcode::ListSizeThenAppend,
                Opcode::AddI32,
                Opcode::ListResize,
                Opcode::ListSetI32,
                Opcode::Block,
            ]
        );
        let a = append_at(&code, 0).expect("an append");
        assert_eq!(
            (a.list, a.size, a.delta, a.new_size, a.value, a.set),
            (0, 5, 2, 6, 3, Opcode::ListSetI32)
        );
        // The add's operands either way round.
        let mut swapped = append();
        (swapped[1].a, swapped[1].b) = (2, 5);
        assert_eq!(append_at(&swapped, 0).map(|a| a.delta), Some(2));
    }

    #[test]
    fn appends_that_cannot_run_as_one_stay_apart() {
        type Change = fn(&mut [Inst]);
        let changes: [(&str, Change); 10] = [
            ("the size doubled", |c| c[1].b = 5),
            ("another list resized", |c| c[2].a = 0x8001),
            ("another list set", |c| c[3].a = 0x8001),
            ("resized to another register", |c| c[2].b = 7),
            ("set at another index", |c| c[3].b = 6),
            ("the value is the size", |c| c[3].c = 5),
            ("the value is the new size", |c| c[3].c = 6),
            ("the sum overwrites the size", |c| c[1].c = 5),
            ("a 64-bit value whose second slot is the size", |c| {
                c[3].op = Opcode::ListSetI64;
                c[3].c = 4;
            }),
            ("a set of a ref", |c| c[3].op = Opcode::ListSetRef),
        ];
        for (what, change) in changes {
            let mut code = append();
            change(&mut code);
            assert_eq!(append_at(&code, 0), None, "{what}");
            fuse_appends(&mut code, &[], 4);
            assert_eq!(code[0].op, Opcode::ListSize, "{what}");
        }
        // A 64-bit value whose second slot is the new size.
        let mut code = append();
        code[3].op = Opcode::ListSetI64;
        code[3].c = 7;
        code[1].c = 8;
        code[2].b = 8;
        assert_eq!(append_at(&code, 0), None, "value slots 7-8, new size 8");
        code[1].c = 9;
        code[2].b = 9;
        assert!(append_at(&code, 0).is_some(), "value slots 7-8, new size 9");
        // Nor an append a branch enters after its size (here the resize).
        let mut code = append();
        code.push(Inst {
            x: 2,
            ..Inst::new(Opcode::Br)
        });
        fuse_appends(&mut code, &[], 4);
        assert_eq!(code[0].op, Opcode::ListSize);
        // One that ends past the body (the guard) neither.
        let mut code = append();
        fuse_appends(&mut code, &[], 3);
        assert_eq!(code[0].op, Opcode::ListSize);
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
