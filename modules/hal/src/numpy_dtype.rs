//! NumPy dtypes as IREE maps them to HAL element types, in both
//! directions: the kind letter and byte width of a `descr` (`<f4`, `|b1`,
//! `<u2`) to a numerical type and bit width, and back. `irvm run`'s `.npy`
//! files and the Python package's arrays share these tables. Errors are
//! `CODE; message` strings in IREE's words.

use super::element::numerical;
use super::ElementType;

/// The element type IREE reads a NumPy `descr` as: the byte-order mark
/// (`|`, `=`, `<` or none; `>` is refused), the kind letter and the width
/// in bytes (`<f4` is `f32`, `|b1` an 8-bit boolean, `<i8` an `si64`,
/// `|V3` 24 bits of opaque data).
pub fn element_type(descr: &str) -> Result<ElementType, String> {
    let rest = match descr.as_bytes().first() {
        Some(b'|' | b'=' | b'<') => &descr[1..],
        Some(b'>') => {
            return Err(format!(
                "UNIMPLEMENTED; big-endian data type '{descr}' unsupported"
            ))
        }
        _ => descr,
    };
    let mut chars = rest.chars();
    let Some(kind) = chars.next() else {
        return Err("INVALID_ARGUMENT; descr missing kind".into());
    };
    let numerical = match kind {
        'b' => numerical::BOOLEAN,
        'i' => numerical::SIGNED,
        'u' => numerical::UNSIGNED,
        'f' => numerical::FLOAT_IEEE,
        'c' => numerical::FLOAT_COMPLEX,
        'V' => numerical::UNKNOWN,
        other => return Err(format!("UNIMPLEMENTED; unsupported data type {other}")),
    };
    let width = irvm::number_text::atoi_u32(chars.as_str())
        .ok_or_else(|| "INVALID_ARGUMENT; invalid descr byte width".to_string())?;
    // IREE packs the bit count unmasked below the numerical type.
    Ok(ElementType((numerical << 24) | width.wrapping_mul(8)))
}

/// The NumPy `descr` IREE writes for `ty`: `|` for one-byte elements, `<`
/// otherwise, the kind letter of its numerical type, the width in bytes.
pub fn descr(ty: ElementType) -> Result<String, String> {
    let kind = match ty.numerical() {
        numerical::UNKNOWN => 'V',
        numerical::BOOLEAN => 'b',
        numerical::INTEGER | numerical::SIGNED => 'i',
        numerical::UNSIGNED => 'u',
        numerical::FLOAT_IEEE => 'f',
        numerical::FLOAT_COMPLEX => 'c',
        _ => return Err("UNIMPLEMENTED; unsupported data encoding".into()),
    };
    let bytes = ty.byte_size();
    let order = if bytes == 1 { '|' } else { '<' };
    Ok(format!("{order}{kind}{bytes}"))
}
