//! `write_host_results` at the level of the registers, for Miri
//! (`cargo +nightly miri test -p irvm --lib host_results_tests`): results
//! of every kind written in place and the refs taken out of the vector,
//! and the vector emptied on every path (a wrong count, a wrong kind after
//! refs were already written), each object dropped exactly once.

use std::sync::Arc;

use super::{read64, write_host_results};
use crate::bytecode::isa::REF_MOVE_BIT;
use crate::values::{Buffer, Ref, Value};

fn buffer() -> Ref {
    Ref::from(Buffer::from_vec(vec![1u8, 2, 3]))
}

fn count(r: &Ref) -> usize {
    match r {
        Ref::Buffer(b) => Arc::strong_count(b),
        _ => 0,
    }
}

#[test]
fn results_of_every_kind_land_in_their_registers_and_the_vector_is_emptied() {
    let b = buffer();
    let mut i32s = [0u32; 8];
    let mut refs = vec![Ref::Null, b.clone(), buffer()];
    let mut values = vec![
        Value::I32(-2),
        Value::I64(i64::MIN + 9),
        Value::F32(2.5),
        Value::F64(-0.125),
        // Over a register holding the same object, and over another.
        Value::Ref(b.clone()),
        Value::Ref(b.clone()),
        Value::Ref(Ref::Null),
    ];
    assert_eq!(count(&b), 4);
    // i32 at 1 (base 1: slot 2), i64 at 2..3 (slots 3..4), f32 at 5,
    // f64 at 6..7; refs at 0, 1 (one with the move bit, ignored for
    // results), 2 (null: the old buffer there is dropped).
    let dst = [1u32, 2, 4, 5, 0, 1 | u32::from(REF_MOVE_BIT), 2];
    write_host_results((&mut i32s, &mut refs), 1, 0, &dst, b"iIfFrrr", &mut values).unwrap();
    assert!(values.is_empty());
    assert_eq!(i32s[2] as i32, -2);
    assert_eq!(read64(&i32s, 3) as i64, i64::MIN + 9);
    assert_eq!(f32::from_bits(i32s[5]), 2.5);
    assert_eq!(f64::from_bits(read64(&i32s, 6)), -0.125);
    assert!(refs[0].ptr_eq(&b) && refs[1].ptr_eq(&b) && refs[2].is_null());
    assert_eq!(count(&b), 3, "moved in, the register's old count dropped");
    drop(refs);
    assert_eq!(count(&b), 1);
}

#[test]
fn a_wrong_count_or_kind_empties_the_vector_and_leaks_nothing() {
    let b = buffer();
    let mut i32s = [0u32; 4];
    let mut refs = vec![Ref::Null, Ref::Null];
    // A ref where an i32 is expected, after a ref was written.
    let mut values = vec![Value::Ref(b.clone()), Value::Ref(b.clone())];
    let e =
        write_host_results((&mut i32s, &mut refs), 0, 0, &[0, 1], b"ri", &mut values).unwrap_err();
    assert!(e.message.contains("returned r, expected i32"), "{e}");
    assert!(values.is_empty());
    assert_eq!(count(&b), 2, "the one written stays, the other dropped");
    // The wrong count.
    let mut values = vec![Value::Ref(b.clone()); 3];
    let e =
        write_host_results((&mut i32s, &mut refs), 0, 0, &[0, 1], b"rr", &mut values).unwrap_err();
    assert!(e.message.contains("returned 3 values, expected 2"), "{e}");
    assert!(values.is_empty());
    assert_eq!(count(&b), 2);
    drop(refs);
    assert_eq!(count(&b), 1);
}
