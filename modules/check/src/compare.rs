//! The element-wise tests of `expect_all_true` and `expect_almost_eq`, per
//! element type, as IREE's check module makes them.

use irvm::Trap;
use irvm_hal::{numerical, ElementType};

use crate::gtest_print::{self, GtestValue};

/// `expect_all_true`'s gtest message when an element of `bytes` (elements
/// of `element_type`) is zero, `None` when all are nonzero. The element
/// types IREE takes: 8 to 64-bit integers (signless, signed, unsigned), f32
/// and f64; others are INVALID_ARGUMENT.
pub fn all_true_failure(bytes: &[u8], element_type: ElementType) -> Result<Option<String>, Trap> {
    let signed = matches!(
        element_type.numerical(),
        numerical::INTEGER | numerical::SIGNED
    );
    let unsigned = element_type.numerical() == numerical::UNSIGNED;
    let float = element_type.numerical() == numerical::FLOAT_IEEE;
    macro_rules! ints {
        ($t:ty) => {
            first_zero(bytes, |c| {
                <$t>::from_le_bytes(c.try_into().unwrap_or_default())
            })
        };
    }
    Ok(match (element_type.bits(), signed, unsigned, float) {
        (8, true, _, _) => ints!(i8),
        (16, true, _, _) => ints!(i16),
        (32, true, _, _) => ints!(i32),
        (64, true, _, _) => ints!(i64),
        (8, _, true, _) => ints!(u8),
        (16, _, true, _) => ints!(u16),
        (32, _, true, _) => ints!(u32),
        (64, _, true, _) => ints!(u64),
        (32, _, _, true) => ints!(f32),
        (64, _, _, true) => ints!(f64),
        _ => return Err(crate::unsupported(element_type)),
    })
}

/// The message of gtest's `EXPECT_THAT(span, Each(Not(T(0))))` when an
/// element of `bytes`, read as `T`s by `read`, equals zero.
fn first_zero<T: GtestValue>(bytes: &[u8], read: impl Fn(&[u8]) -> T) -> Option<String> {
    let size = std::mem::size_of::<T>();
    let values: Vec<T> = bytes.chunks_exact(size).map(read).collect();
    let zero = values.iter().position(|v| v.is_zero())?;
    Some(format!(
        "Value of: ToSpan<T>(bytes)\nExpected: only contains elements that isn't equal to {}\n  \
         Actual: {}, whose element #{zero} doesn't match",
        T::zero_text(),
        gtest_print::container(&values),
    ))
}

/// Where `expect_almost_eq` found elements not close enough.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mismatch {
    /// The element's index.
    pub index: usize,
    /// The left operand's element.
    pub lhs: f64,
    /// The right (expected) operand's element.
    pub rhs: f64,
}

/// The first element of `lhs` not within `atol + rtol * |rhs|` of `rhs`'s
/// (both of `element_type`, the same length), `None` when all are. The
/// element types IREE takes: f16, bf16, f32, f64 and the 8-bit floats;
/// others are INVALID_ARGUMENT.
pub fn first_not_close(
    lhs: &[u8],
    rhs: &[u8],
    element_type: ElementType,
    atol: f32,
    rtol: f32,
) -> Result<Option<Mismatch>, Trap> {
    let is_float = match (element_type.numerical(), element_type.bits()) {
        (numerical::FLOAT_IEEE, 16 | 32 | 64) | (numerical::FLOAT_BRAIN, 16) => true,
        _ => element_type.is_fp8(),
    };
    if !is_float {
        return Err(crate::unsupported(element_type));
    }
    let size = element_type.byte_size();
    let pairs = lhs.chunks_exact(size).zip(rhs.chunks_exact(size));
    for (index, (l, r)) in pairs.enumerate() {
        // Each element widened as IREE loads it (f16, bf16 and 8-bit
        // floats through f32, which holds them exactly).
        let (lhs, rhs) = (
            element_type.element_as_f64(l),
            element_type.element_as_f64(r),
        );
        if !fuzzy_eq(lhs, rhs, f64::from(atol), f64::from(rtol)) {
            return Ok(Some(Mismatch { index, lhs, rhs }));
        }
    }
    Ok(None)
}

/// IREE's `iree_math_fuzzy_compare_f64` (NumPy's `isclose`): `actual` is
/// within `atol + rtol * |expected|` of `expected`; NaN equals NaN, and a
/// non-finite `expected` equals only itself.
pub fn fuzzy_eq(actual: f64, expected: f64, atol: f64, rtol: f64) -> bool {
    if actual == expected || (actual.is_nan() && expected.is_nan()) {
        return true;
    }
    if !expected.is_finite() {
        return false;
    }
    (actual - expected).abs() <= atol + rtol * expected.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzy_eq_follows_numpy_isclose_as_iree_does() {
        assert!(fuzzy_eq(1.0, 1.0, 0.0, 0.0));
        assert!(fuzzy_eq(f64::NAN, f64::NAN, 0.0, 0.0));
        assert!(!fuzzy_eq(f64::NAN, 1.0, 1.0, 1.0));
        assert!(fuzzy_eq(f64::INFINITY, f64::INFINITY, 0.0, 0.0));
        assert!(!fuzzy_eq(1e300, f64::INFINITY, 1.0, 1.0));
        // Asymmetric: rtol scales with the expected operand.
        assert!(fuzzy_eq(1.5, 1.0, 0.0, 0.5));
        assert!(!fuzzy_eq(1.0, 1.5, 0.0, 0.3));
        assert!(fuzzy_eq(1.0001, 1.0, 1e-4, 0.0));
    }

    #[test]
    fn all_true_names_the_first_zero_element() {
        let message = all_true_failure(&[1, 0, 0, 0, 0, 0, 0, 0], ElementType::I32)
            .unwrap()
            .unwrap();
        assert_eq!(
            message,
            "Value of: ToSpan<T>(bytes)\nExpected: only contains elements that isn't equal to 0\n  \
             Actual: { 1, 0 }, whose element #1 doesn't match"
        );
        assert_eq!(all_true_failure(&[1, 2], ElementType::I8).unwrap(), None);
        // Signed, unsigned and float elements of every width IREE takes.
        let si16 = ElementType::new(numerical::SIGNED, 16);
        assert!(all_true_failure(&[0, 0], si16).unwrap().is_some());
        let ui64 = ElementType::new(numerical::UNSIGNED, 64);
        let message = all_true_failure(&[0xFF; 8], ui64).unwrap();
        assert_eq!(message, None);
        let message = all_true_failure(&[0; 16], ui64).unwrap().unwrap();
        assert!(message.contains("{ 0, 0 }, whose element #0"), "{message}");
        let message = all_true_failure(&(-1i64).to_le_bytes(), ElementType::I64).unwrap();
        assert_eq!(message, None);
        let message = all_true_failure(&0.0f64.to_le_bytes(), ElementType::F64).unwrap();
        assert!(message.is_some());
        // NaN is nonzero.
        let message = all_true_failure(&f32::NAN.to_le_bytes(), ElementType::F32).unwrap();
        assert_eq!(message, None);
        assert!(all_true_failure(&[0, 0], ElementType::F16).is_err());
    }
}
