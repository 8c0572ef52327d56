//! `vm.buffer.fill` and `vm.buffer.copy` in pieces: the same bytes as in
//! one piece (overlapping copies included, in either direction), and a
//! stop raised during the work ends it at the next piece.

use std::sync::Arc;

use super::{copy_in_pieces, fill_in_pieces, PIECE_BYTES};
use crate::exec::hooks::Hooks;
use crate::stop::StopWord;
use crate::trap::StatusCode;
use crate::values::Buffer;

/// Pieces of 64 bytes here (8 MiB in use): the same code, small buffers.
const P: usize = 64;
/// [`P`] as the helpers take it.
const PIECE: u64 = P as u64;

#[test]
fn a_piece_holds_whole_elements_of_every_size() {
    assert_eq!(PIECE_BYTES % 64, 0);
}

/// Hooks of a context that can be interrupted (so work is done in pieces).
fn stoppable() -> Hooks {
    Hooks {
        stop: StopWord::new(),
        interruptible: true,
        ..Hooks::default()
    }
}

fn numbered(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn a_fill_in_pieces_writes_what_one_fill_writes() {
    let len = 3 * P + 40;
    for hooks in [Hooks::default(), stoppable()] {
        let b = Buffer::from_vec(vec![0xAA; len]);
        // Elements 3.. of 4 bytes, past two piece boundaries.
        let count = (len / 4 - 5) as u64;
        fill_in_pieces::<4>(&b, 3, count, [1, 2, 3, 4], &hooks, PIECE).unwrap();
        let got = b.to_vec();
        let mut want = vec![0xAA; len];
        for k in 3..3 + count as usize {
            want[4 * k..4 * k + 4].copy_from_slice(&[1, 2, 3, 4]);
        }
        assert!(got == want);
        // Out of range: refused whole, nothing written.
        let e = fill_in_pieces::<4>(&b, 1, (len / 4) as u64, [9; 4], &hooks, PIECE).unwrap_err();
        assert_eq!(e.code, StatusCode::OutOfRange);
        assert!(b.to_vec() == want);
    }
}

#[test]
fn copies_in_pieces_move_overlapping_bytes_as_memmove_does() {
    let len = 4 * P + 100;
    let n = 2 * P + P / 2 + 3;
    for (from, to) in [
        (0, P / 3 + 1),
        (P / 3 + 1, 0),
        (5, 5),
        (0, P + 17),
        (P + 17, 2),
    ] {
        for hooks in [Hooks::default(), stoppable()] {
            // One buffer.
            let b = Arc::new(Buffer::from_vec(numbered(len)));
            copy_in_pieces(&b, from as u64, &b, to as u64, n as u64, &hooks, PIECE).unwrap();
            let mut want = numbered(len);
            want.copy_within(from..from + n, to);
            assert!(b.to_vec() == want, "{from} -> {to}");
            // Two views of one allocation, the target's view starting later.
            let root = Arc::new(Buffer::from_vec(numbered(len)));
            let view = |at: usize| Arc::new(Buffer::view(&root, at, len - at).unwrap());
            let (sv, tv) = (view(1), view(9));
            copy_in_pieces(&sv, from as u64, &tv, to as u64, n as u64, &hooks, PIECE).unwrap();
            let mut want = numbered(len);
            want.copy_within(1 + from..1 + from + n, 9 + to);
            assert!(root.to_vec() == want, "views: {from} -> {to}");
        }
    }
    // Two buffers.
    let hooks = stoppable();
    let src = Arc::new(Buffer::from_vec(numbered(len)));
    let dst = Arc::new(Buffer::from_vec(vec![0; len]));
    copy_in_pieces(&src, 7, &dst, 3, n as u64, &hooks, PIECE).unwrap();
    let mut want = vec![0; len];
    want[3..3 + n].copy_from_slice(&numbered(len)[7..7 + n]);
    assert!(dst.to_vec() == want);
}

#[test]
fn a_stop_raised_during_the_work_ends_it_at_the_next_piece() {
    let hooks = stoppable();
    // Raised before the work starts: the caller looked at the stop word
    // already (`charge_bulk`), so the first piece is done and the look
    // before the second ends it.
    hooks.stop.interrupt();
    let b = Buffer::from_vec(vec![0; 3 * P]);
    let e = fill_in_pieces::<1>(&b, 0, 3 * P as u64, [5], &hooks, PIECE).unwrap_err();
    assert_eq!(e.code, StatusCode::Cancelled);
    let got = b.to_vec();
    assert!(got[..P].iter().all(|&x| x == 5));
    assert!(got[P..].iter().all(|&x| x == 0));
    // The same for a copy.
    hooks.stop.interrupt();
    let src = Arc::new(Buffer::from_vec(vec![3; 3 * P]));
    let dst = Arc::new(Buffer::from_vec(vec![0; 3 * P]));
    let e = copy_in_pieces(&src, 0, &dst, 0, 3 * P as u64, &hooks, PIECE).unwrap_err();
    assert_eq!(e.code, StatusCode::Cancelled);
    let got = dst.to_vec();
    assert!(got[..P].iter().all(|&x| x == 3) && got[P..].iter().all(|&x| x == 0));
    // Without anything that can stop the context: one piece, no look.
    let plain = Hooks::default();
    plain.stop.interrupt();
    fill_in_pieces::<1>(&b, 0, 3 * P as u64, [6], &plain, PIECE).unwrap();
    assert!(b.to_vec().iter().all(|&x| x == 6));
}

#[test]
fn hashes_compares_and_clones_in_pieces_give_what_one_piece_gives() {
    use super::{clone_in_pieces, compare_in_pieces};
    use crate::budget::{Charge, MemoryBudget};
    let len = 3 * P + 13;
    let b = Arc::new(Buffer::from_vec(numbered(len)));
    let hooks = stoppable();
    // Hashes: every length around the piece and block boundaries.
    for (offset, n) in [(0, 0), (1, 7), (0, P), (3, P + 1), (5, 2 * P + 9), (0, len)] {
        let whole = b.hash(offset as u64, n as u64).unwrap();
        let pieces = b
            .hash_in_pieces(offset as u64, n as u64, P, || hooks.check_stop())
            .unwrap();
        assert_eq!(pieces, whole, "{offset} {n}");
    }
    // Compares: equal, a difference in the first and in the last piece.
    let other = Arc::new(Buffer::from_vec(numbered(len)));
    let cmp =
        |l: &Buffer, r: &Buffer, n: usize| compare_in_pieces(l, 0, r, 0, n as u64, &hooks, PIECE);
    assert!(cmp(&b, &other, len).unwrap());
    for at in [2, len - 1] {
        let mut bytes = numbered(len);
        bytes[at] ^= 1;
        let changed = Buffer::from_vec(bytes);
        assert!(!cmp(&b, &changed, len).unwrap(), "{at}");
    }
    // Out of range: an error even when the first piece already differs.
    let mut bytes = numbered(len);
    bytes[0] ^= 1;
    let differs = Buffer::from_vec(bytes);
    let e = compare_in_pieces(&b, 0, &differs, 1, len as u64, &hooks, PIECE).unwrap_err();
    assert_eq!(e.code, StatusCode::OutOfRange);
    // Clones: the bytes, charged to the budget while the clone lives.
    let budget = MemoryBudget::new(u64::MAX);
    let charge = Charge::new(&budget, 2 * P as u64, "a buffer").unwrap();
    let copy = clone_in_pieces(&b, 9, 2 * P as u64, charge, &hooks, PIECE).unwrap();
    assert!(copy.to_vec() == numbered(len)[9..9 + 2 * P]);
    assert_eq!(budget.used(), 2 * P as u64);
    drop(copy);
    assert_eq!(budget.used(), 0);
}

#[test]
fn a_stop_ends_a_hash_compare_or_clone_at_the_next_piece() {
    use super::{clone_in_pieces, compare_in_pieces};
    use crate::budget::{Charge, MemoryBudget};
    let hooks = stoppable();
    let b = Arc::new(Buffer::from_vec(numbered(4 * P)));
    let mut looks = 0;
    let e = b
        .hash_in_pieces(0, 4 * P as u64, P, || {
            looks += 1;
            hooks.stop.interrupt();
            hooks.check_stop()
        })
        .unwrap_err();
    assert_eq!((e.code, looks), (StatusCode::Cancelled, 1));
    hooks.stop.interrupt();
    let e = compare_in_pieces(&b, 0, &b, 0, 4 * P as u64, &hooks, PIECE).unwrap_err();
    assert_eq!(e.code, StatusCode::Cancelled);
    // A stopped clone is dropped: nothing stays charged.
    let budget = MemoryBudget::new(u64::MAX);
    let charge = Charge::new(&budget, 4 * P as u64, "a buffer").unwrap();
    hooks.stop.interrupt();
    let Err(e) = clone_in_pieces(&b, 0, 4 * P as u64, charge, &hooks, PIECE) else {
        panic!("the clone was not stopped")
    };
    assert_eq!(e.code, StatusCode::Cancelled);
    assert_eq!(budget.used(), 0);
}

#[test]
fn copies_in_pieces_between_two_buffers_lent_over_the_same_memory_move_as_memmove() {
    // An embedder may lend one memory twice (the Python package makes one
    // buffer per argument: `f(x, x)`, or overlapping views of one array):
    // two allocations, two leases, the same bytes.
    let len = 4 * P + 100;
    let n = len - 24;
    for (from, to) in [(0usize, 24usize), (24, 0)] {
        for hooks in [Hooks::default(), stoppable()] {
            let memory = Arc::new(std::sync::Mutex::new(numbered(len)));
            let ptr = memory.lock().unwrap().as_mut_ptr();
            let lend = |at: usize| {
                let owner: Arc<dyn std::any::Any + Send + Sync> = memory.clone();
                // SAFETY: `ptr + at` addresses `len - at` bytes of the
                // vector, which `owner` keeps alive and nothing else
                // touches while the buffers live (read after the copy).
                Arc::new(unsafe { Buffer::foreign_mut(ptr.add(at), len - at, owner) })
            };
            let (s, t) = (lend(from), lend(to));
            copy_in_pieces(&s, 0, &t, 0, n as u64, &hooks, PIECE).unwrap();
            drop((s, t));
            let mut want = numbered(len);
            want.copy_within(from..from + n, to);
            assert!(*memory.lock().unwrap() == want, "{from} -> {to}");
        }
    }
}
