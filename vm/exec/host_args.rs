//! The argument vector of a host call, read from the caller's registers
//! without touching the reference counts of the refs it names.
//!
//! A host function sees its arguments as `&[Value]` for the length of the
//! call, and the caller's registers keep every ref it is passed (unless the
//! call moves it) until the call returns. So a ref argument need not be a
//! counted handle: it is a bitwise copy of the register's handle, never
//! dropped (forgotten when the call ends). A host function that keeps a ref
//! clones it, which takes a count as usual. That saves an atomic increment
//! and decrement per ref argument per call, a fifth of a small model's
//! per-call host work (docs/PERFORMANCE.md, "Borrowed host-call arguments").

use crate::bytecode::isa::{REF_INDEX_MASK, REF_MOVE_BIT};
use crate::program::PLAN_COUNT;
use crate::values::{Ref, Value};

use super::{read64, Registers};

/// A host call's arguments, kept by the stack (empty between calls) so
/// that a call allocates nothing for them.
#[derive(Default)]
pub(crate) struct HostArgs {
    values: Vec<Value>,
    /// Positions in `values` of the refs read without a count: forgotten by
    /// [`HostArgs::clear`], never dropped.
    borrowed: Vec<u32>,
}

impl HostArgs {
    /// The arguments, as the host function receives them.
    pub(crate) fn values(&self) -> &[Value] {
        &self.values
    }

    /// Reads registers `regs` of the frame at `base` as `kinds` (the
    /// import's flat argument kinds), replacing what was there.
    pub(crate) fn read(
        &mut self,
        (i32s, refs): Registers<'_>,
        base: (usize, usize),
        regs: &[u32],
        kinds: &[u8],
    ) {
        self.clear();
        self.values.reserve(regs.len());
        for (&reg, &k) in regs.iter().zip(kinds) {
            self.push_register(i32s, refs, base, reg, k);
        }
    }

    /// Reads a variadic call's arguments by its plan
    /// (`program::signature::host_call_plan`, made when the call was
    /// lowered), replacing what was there: a count word pushes a span's
    /// element count as an `i32`, any other word reads the next register
    /// of `args` as the kind it names (the verifier checked the kinds
    /// against the plan's).
    pub(crate) fn read_planned(
        &mut self,
        (i32s, refs): Registers<'_>,
        base: (usize, usize),
        args: &[u32],
        plan: &[u32],
    ) {
        self.clear();
        self.values.reserve(plan.len());
        let mut regs = args.iter();
        for &word in plan {
            if word & PLAN_COUNT != 0 {
                self.values.push(Value::I32(i32::from(word as u16)));
            } else if let Some(&reg) = regs.next() {
                self.push_register(i32s, refs, base, reg, word as u8);
            }
        }
    }

    #[inline(always)]
    fn push_register(
        &mut self,
        i32s: &[u32],
        refs: &mut [Ref],
        base: (usize, usize),
        reg: u32,
        k: u8,
    ) {
        let v = match k {
            b'i' => Value::I32(i32s[base.0 + reg as usize] as i32),
            b'f' => Value::F32(f32::from_bits(i32s[base.0 + reg as usize])),
            b'I' => Value::I64(read64(i32s, base.0 + reg as usize) as i64),
            b'F' => Value::F64(f64::from_bits(read64(i32s, base.0 + reg as usize))),
            _ => {
                let at = base.1 + (reg as u16 & REF_INDEX_MASK) as usize;
                if reg as u16 & REF_MOVE_BIT != 0 {
                    // A move: the call owns it (dropped by `clear`).
                    Value::Ref(std::mem::take(&mut refs[at]))
                } else if refs[at].is_null() {
                    Value::Ref(Ref::Null)
                } else {
                    self.borrowed.push(self.values.len() as u32);
                    // SAFETY: a bitwise copy of the register's handle that
                    // is never dropped: `clear` (which every path out of a
                    // host call runs, and `Drop` too) forgets it. While it
                    // exists the register keeps its own counted handle: the
                    // interpreter holds the stack for the whole call and
                    // writes no register until `clear` has run, and the host
                    // function gets only `&[Value]` (it can clone the ref,
                    // which counts, but not take or drop it). A later move
                    // of the same register within this argument list takes
                    // the counted handle into `values`, which `clear` drops
                    // after forgetting the copy, so the object outlives
                    // both.
                    Value::Ref(unsafe { std::ptr::read(&refs[at]) })
                }
            }
        };
        self.values.push(v);
    }

    /// Forgets the borrowed refs and drops the rest (the moved refs).
    pub(crate) fn clear(&mut self) {
        for &at in &self.borrowed {
            if let Some(v) = self.values.get_mut(at as usize) {
                std::mem::forget(std::mem::replace(v, Value::None));
            }
        }
        self.borrowed.clear();
        self.values.clear();
    }
}

impl Drop for HostArgs {
    fn drop(&mut self) {
        // (A host function that panicked out of the interpreter leaves its
        // arguments here: the borrowed ones must not be dropped.)
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::Buffer;
    use std::sync::Arc;

    fn counted(r: &Ref) -> usize {
        match r {
            Ref::Buffer(b) => Arc::strong_count(b),
            _ => 0,
        }
    }

    #[test]
    fn borrowed_refs_take_no_count_and_moved_refs_are_dropped_at_clear() {
        let buf = Ref::from(Buffer::from_vec(vec![1u8, 2, 3]));
        let mut refs = vec![buf.clone(), buf.clone(), Ref::Null];
        assert_eq!(counted(&buf), 3);
        let i32s = [7u32, 0];
        let mut args = HostArgs::default();
        // r0 borrowed, i0, r1 moved, r2 (null).
        let regs = [0u32, 0, 1 | REF_MOVE_BIT as u32, 2];
        args.read((&i32s, &mut refs), (0, 0), &regs, b"rirr");
        assert_eq!(args.values().len(), 4);
        assert_eq!(counted(&buf), 3, "a borrowed ref takes no count");
        assert!(refs[1].is_null(), "the move took the register");
        assert!(matches!(args.values()[1], Value::I32(7)));
        assert!(matches!(&args.values()[3], Value::Ref(Ref::Null)));
        // A host function that keeps one clones it.
        let kept = args.values()[0].as_ref().cloned();
        assert_eq!(counted(&buf), 4);
        args.clear();
        assert_eq!(
            counted(&buf),
            3,
            "the moved handle dropped, the borrowed one forgotten"
        );
        drop(kept);
        assert_eq!(counted(&buf), 2);
        assert!(args.values().is_empty());
    }

    #[test]
    fn dropping_the_vector_with_borrowed_refs_releases_nothing_it_did_not_own() {
        let buf = Ref::from(Buffer::from_vec(vec![0u8; 4]));
        let mut refs = vec![buf.clone()];
        let mut args = HostArgs::default();
        args.read((&[], &mut refs), (0, 0), &[0], b"r");
        drop(args);
        assert_eq!(counted(&buf), 2);
        drop(refs);
        assert_eq!(counted(&buf), 1);
    }

    #[test]
    fn a_planned_read_pushes_span_counts_and_reads_again_from_empty() {
        let buf = Ref::from(Buffer::from_vec(vec![0u8; 4]));
        let mut refs = vec![buf.clone()];
        let i32s = [5u32];
        let mut args = HostArgs::default();
        args.read((&i32s, &mut refs), (0, 0), &[0], b"i");
        // A count word (2), then two registers as i32 and ref.
        let plan = [PLAN_COUNT | 2, u32::from(b'i'), u32::from(b'r')];
        args.read_planned((&i32s, &mut refs), (0, 0), &[0, 0], &plan);
        let v = args.values();
        assert_eq!(v.len(), 3);
        assert!(matches!(v[0], Value::I32(2)));
        assert!(matches!(v[1], Value::I32(5)));
        assert_eq!(counted(&buf), 2);
        args.clear();
        assert_eq!(counted(&buf), 2);
    }
    #[test]
    fn the_same_register_borrowed_and_moved_in_either_order_is_freed_once() {
        // The register holds the only count: borrowed then moved, the
        // vector owns it (the copy is forgotten), and `clear` frees it.
        let mut refs = vec![Ref::from(Buffer::from_vec(vec![1u8; 8]))];
        let mut args = HostArgs::default();
        let regs = [0u32, REF_MOVE_BIT as u32];
        args.read((&[], &mut refs), (0, 0), &regs, b"rr");
        assert!(refs[0].is_null());
        match (&args.values()[0], &args.values()[1]) {
            (Value::Ref(a), Value::Ref(b)) => {
                assert!(a.ptr_eq(b));
                assert_eq!(counted(b), 1);
                assert_eq!(a.buffer("a").unwrap().to_vec(), vec![1u8; 8]);
            }
            other => panic!("{other:?}"),
        }
        args.clear();
        // Moved then borrowed: the second read finds the register empty.
        let mut refs = vec![Ref::from(Buffer::from_vec(vec![2u8; 8]))];
        let regs = [REF_MOVE_BIT as u32, 0];
        args.read((&[], &mut refs), (0, 0), &regs, b"rr");
        assert!(matches!(&args.values()[1], Value::Ref(Ref::Null)));
        assert_eq!(counted(args.values()[0].as_ref().unwrap()), 1);
        // Left in the vector (as by a panicking host function) and the
        // registers freed first: dropping the vector touches no copy.
        let mut refs = vec![Ref::from(Buffer::from_vec(vec![3u8; 8]))];
        args.read((&[], &mut refs), (0, 0), &[0, 0], b"rr");
        drop(refs);
        drop(args);
    }
}
