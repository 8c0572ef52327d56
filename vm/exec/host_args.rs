//! The argument vector of a host call, read from the caller's registers
//! without touching the reference counts of the refs it names.
//!
//! A host function sees its arguments as `&[Value]` for the length of the
//! call, and the caller's registers keep every ref it is passed (unless the
//! call moves it) until the call returns. So a ref argument need not be a
//! counted handle: it is a bitwise copy of the register's handle, never
//! dropped (forgotten when the call ends). A host function that keeps a ref
//! clones it, which takes a count as usual. A ref the call moves out of its
//! register is held aside (its count keeps the object alive for the call)
//! and dropped when the call ends. That saves an atomic increment and
//! decrement per ref argument per call (docs/PERFORMANCE.md, "Round 5").

use crate::bytecode::isa::{REF_INDEX_MASK, REF_MOVE_BIT};
use crate::program::PLAN_COUNT;
use crate::values::{Ref, Value};

use super::{read64, Registers};

/// A host call's arguments, kept by the stack (empty between calls) so
/// that a call allocates nothing for them.
#[derive(Default)]
pub(crate) struct HostArgs {
    /// The arguments: plain values and uncounted copies of refs, none of
    /// which may be dropped ([`HostArgs::clear`] forgets them all).
    values: Vec<Value>,
    /// The refs the call moved out of the caller's registers: their counts,
    /// dropped by [`HostArgs::clear`].
    moved: Vec<Ref>,
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
                push_plain(&mut self.values, u64::from(word as u16), b'i');
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
        // (Each kind is pushed by a function of its own: one push after
        // the match made the value in a local, written in pieces and read
        // back whole, a failed store forward per argument.)
        let at32 = base.0 + reg as usize;
        match k {
            b'i' => push_plain(&mut self.values, u64::from(i32s[at32]), b'i'),
            b'f' => push_plain(&mut self.values, u64::from(i32s[at32]), b'f'),
            b'I' => push_plain(&mut self.values, read64(i32s, at32), b'I'),
            b'F' => push_plain(&mut self.values, read64(i32s, at32), b'F'),
            _ => {
                let at = base.1 + (reg as u16 & REF_INDEX_MASK) as usize;
                let slot: &Ref = if reg as u16 & REF_MOVE_BIT != 0 {
                    // A move: the call holds the count (dropped by `clear`).
                    self.moved.push(std::mem::take(&mut refs[at]));
                    let Some(last) = self.moved.last() else {
                        unreachable!("just pushed")
                    };
                    last
                } else {
                    &refs[at]
                };
                // SAFETY: a bitwise copy of a handle that is never dropped:
                // `clear` (which every path out of a host call runs, and
                // `Drop` too) forgets every value. While it exists the
                // handle it copies keeps its count: a register, which the
                // interpreter does not write until `clear` has run (it holds
                // the stack for the whole call, and the host function gets
                // only `&[Value]`: it can clone the ref, which counts, but
                // not take or drop it), or an entry of `moved`, which
                // `clear` drops only after forgetting the copies. (`moved`
                // may reallocate; the copies are of the handle, not of its
                // place.)
                push_ref(&mut self.values, unsafe { std::ptr::read(slot) });
            }
        }
    }

    /// Forgets every argument (none holds a count of its own) and drops the
    /// moved refs.
    pub(crate) fn clear(&mut self) {
        // SAFETY: 0 is within the capacity, and nothing below it is left
        // to read: the elements are leaked, not dropped, which is what an
        // uncounted copy needs (the plain values own nothing).
        unsafe { self.values.set_len(0) };
        self.moved.clear();
    }
}

/// Pushes a plain value of kind `k` from its register bits.
#[inline(always)]
fn push_plain(values: &mut Vec<Value>, bits: u64, k: u8) {
    room_for_one(values);
    let v = match k {
        b'i' => Value::I32(bits as u32 as i32),
        b'f' => Value::F32(f32::from_bits(bits as u32)),
        b'I' => Value::I64(bits as i64),
        _ => Value::F64(f64::from_bits(bits)),
    };
    let len = values.len();
    // SAFETY: `room_for_one` made the capacity exceed the length.
    unsafe {
        values.as_mut_ptr().add(len).write(v);
        values.set_len(len + 1);
    }
}

/// Pushes a ref (see [`HostArgs::read`] on why it is an uncounted copy).
#[inline(always)]
fn push_ref(values: &mut Vec<Value>, r: Ref) {
    room_for_one(values);
    let len = values.len();
    // SAFETY: `room_for_one` made the capacity exceed the length.
    unsafe {
        values.as_mut_ptr().add(len).write(Value::Ref(r));
        values.set_len(len + 1);
    }
}

/// Makes room for one more value (the readers reserved for all already,
/// so this never grows in practice).
#[inline(always)]
fn room_for_one(values: &mut Vec<Value>) {
    if values.len() == values.capacity() {
        grow(values);
    }
}

#[cold]
#[inline(never)]
fn grow(values: &mut Vec<Value>) {
    values.reserve(1);
}

impl Drop for HostArgs {
    fn drop(&mut self) {
        // (A host function that panicked out of the interpreter leaves its
        // arguments here: none may be dropped.)
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
    fn one_register_passed_moved_and_not_in_either_order_keeps_its_object_for_the_call() {
        for regs in [[0u32, REF_MOVE_BIT as u32], [REF_MOVE_BIT as u32, 0]] {
            let buf = Ref::from(Buffer::from_vec(vec![4u8; 4]));
            let mut refs = vec![buf.clone()];
            let mut args = HostArgs::default();
            args.read((&[], &mut refs), (0, 0), &regs, b"rr");
            assert!(refs[0].is_null(), "the move took the register");
            drop(buf);
            // The moved handle keeps the object alive through the call: a
            // copy read before the move or after it still reads it (after
            // the move the register was null: a null copy).
            for v in args.values() {
                if let Some(Ref::Buffer(b)) = v.as_ref() {
                    assert_eq!(b.to_vec(), [4u8; 4]);
                }
            }
            let live = args
                .values()
                .iter()
                .filter(|v| !matches!(v.as_ref(), Some(Ref::Null)))
                .count();
            assert_eq!(live, if regs[0] == 0 { 2 } else { 1 });
            args.clear();
        }
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
