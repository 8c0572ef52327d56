//! Attacks on the field-by-field moves of session 12 (`Value::take_into`,
//! `Ref::take_fieldwise`, `Ref::assign_clone_of`, `Ref::copy_within`):
//! every kind of ref, moved and cloned, onto itself, onto a place holding
//! the same object and a different one, with counts checked after each
//! step and every object dropped exactly once. Written to run under Miri
//! (`cargo +nightly miri test -p irvm --lib fieldwise`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{Buffer, List, Ref, RefType, TypeDef, Value};

/// A host value counting its drops in a counter of its own.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn host(drops: &Arc<AtomicUsize>) -> Ref {
    Ref::host("fieldwise_test.counted", Counted(drops.clone()))
}

/// One ref of each kind (null, buffer, list, host).
fn one_of_each(drops: &Arc<AtomicUsize>) -> Vec<Ref> {
    vec![
        Ref::Null,
        Ref::from(Buffer::from_vec(vec![1u8, 2, 3])),
        Ref::List(Arc::new(
            List::new(TypeDef::Ref(RefType::BUFFER), 0).unwrap(),
        )),
        host(drops),
    ]
}

#[test]
fn take_into_moves_every_kind_and_leaves_none() {
    let drops = Arc::new(AtomicUsize::new(0));
    let h = host(&drops);
    let mut values = vec![
        Value::I32(-7),
        Value::I64(i64::MIN),
        Value::F32(f32::from_bits(0x7fc0_0001)),
        Value::F64(-0.0),
        Value::Ref(h.clone()),
        Value::Ref(Ref::Null),
        Value::None,
    ];
    assert_eq!(h.ref_count(), 2);
    // An empty vector with no capacity: the first take reserves.
    let mut out = Vec::new();
    for v in &mut values {
        v.take_into(&mut out);
        assert!(matches!(v, Value::None));
    }
    assert_eq!(out.len(), 7);
    assert!(matches!(out[0], Value::I32(-7)));
    assert!(matches!(out[1], Value::I64(i64::MIN)));
    assert!(matches!(out[2], Value::F32(x) if x.to_bits() == 0x7fc0_0001));
    assert!(matches!(out[3], Value::F64(x) if x.to_bits() == (-0.0f64).to_bits()));
    assert!(matches!(&out[4], Value::Ref(r) if r.ptr_eq(&h)));
    assert!(matches!(&out[5], Value::Ref(Ref::Null)));
    assert!(matches!(out[6], Value::None));
    assert_eq!(h.ref_count(), 2, "moved, not copied");
    drop(values);
    assert_eq!(h.ref_count(), 2, "the places left hold nothing");
    drop(out);
    assert_eq!(h.ref_count(), 1);
    drop(h);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn copy_within_moves_and_clones_every_kind_in_both_directions() {
    let drops = Arc::new(AtomicUsize::new(0));
    for take in [false, true] {
        for (from, to) in [(0usize, 1usize), (1, 0)] {
            for src in one_of_each(&drops) {
                for dst in one_of_each(&drops) {
                    let mut refs = vec![Ref::Null, Ref::Null];
                    refs[from] = src.clone();
                    refs[to] = dst.clone();
                    let (src_count, dst_count) = (src.ref_count(), dst.ref_count());
                    Ref::copy_within(&mut refs, from, to, take);
                    assert!(refs[to].ptr_eq(&src) || (src.is_null() && refs[to].is_null()));
                    if take {
                        assert!(refs[from].is_null());
                        assert_eq!(src.ref_count(), src_count);
                    } else {
                        assert!(refs[from].ptr_eq(&src) || src.is_null());
                        assert_eq!(
                            src.ref_count(),
                            if src.is_null() { 0 } else { src_count + 1 }
                        );
                    }
                    if !dst.is_null() {
                        assert_eq!(dst.ref_count(), dst_count - 1, "the old value dropped");
                    }
                    drop(refs);
                    assert!(src.is_null() || src.ref_count() == 1);
                    assert!(dst.is_null() || dst.ref_count() == 1);
                }
            }
        }
    }
    // Per direction and mode: one host source, and one host destination
    // per source.
    assert_eq!(drops.load(Ordering::SeqCst), 2 * 2 * (1 + 4));
}

#[test]
fn copy_within_onto_a_place_holding_the_last_count_of_the_same_object() {
    let drops = Arc::new(AtomicUsize::new(0));
    // The destination holds the same object as the source: dropping it
    // first must not free the object the source still names.
    for take in [false, true] {
        let h = host(&drops);
        let mut refs = vec![h.clone(), h];
        assert_eq!(refs[0].ref_count(), 2);
        Ref::copy_within(&mut refs, 0, 1, take);
        let expected = if take { 1 } else { 2 };
        assert_eq!(refs[1].ref_count(), expected);
        assert_eq!(refs[0].is_null(), take);
        drop(refs);
    }
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[test]
fn copy_within_onto_itself_changes_nothing() {
    let drops = Arc::new(AtomicUsize::new(0));
    for take in [false, true] {
        let mut refs = vec![host(&drops)];
        Ref::copy_within(&mut refs, 0, 0, take);
        assert_eq!(refs[0].ref_count(), 1);
        drop(refs);
    }
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[test]
fn assign_clone_of_every_kind_over_every_kind() {
    let drops = Arc::new(AtomicUsize::new(0));
    for src in one_of_each(&drops) {
        for mut dst in one_of_each(&drops) {
            let before = src.ref_count();
            dst.assign_clone_of(&src);
            assert!(dst.ptr_eq(&src) || (src.is_null() && dst.is_null()));
            assert_eq!(src.ref_count(), if src.is_null() { 0 } else { before + 1 });
        }
        assert!(src.is_null() || src.ref_count() == 1);
    }
    // Also over a place holding the same object's last other count.
    let h = host(&drops);
    let mut same = h.clone();
    same.assign_clone_of(&h);
    assert_eq!(h.ref_count(), 2);
    drop(same);
    drop(h);
    assert_eq!(drops.load(Ordering::SeqCst), 1 + 4 + 1);
}
