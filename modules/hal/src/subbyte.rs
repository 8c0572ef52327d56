//! Sub-byte elements (`i4`, `i2`, `ui4`, any width that is not a whole
//! number of bytes) as IREE packs them in a tensor: element `k` of a
//! `w`-bit type takes bits `k*w .. (k+1)*w` of the buffer, counted from the
//! least significant bit of byte 0, with no padding between elements
//! (`4xi4` of 1, 2, 4, -4 is the two bytes `0x21 0xC4`; `4xi2` of 0, 1, -2,
//! -1 is `0xE4`). The bits after the last element, up to the byte's end,
//! are padding.
//!
//! How each element reads and prints as text here is irvm's: IREE's
//! formatter has no case for these types (see `text.rs`).

use super::element::{numerical, ElementType};

/// The widest sub-byte type whose elements this module reads and writes:
/// any element fits an `u64` (wider types that are not byte-aligned, such
/// as `i65`, are refused where they would be printed or parsed).
pub const MAX_BITS: u32 = 64;

/// A mask of the low `bits` bits.
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Where element `index` of a `bits`-wide type starts: its first byte and
/// the bit in it; `None` when the position overflows.
fn position(bits: u32, index: u64) -> Option<(usize, u32)> {
    let bit = index.checked_mul(u64::from(bits))?;
    Some((usize::try_from(bit / 8).ok()?, (bit % 8) as u32))
}

/// The raw bits of element `index` of `bytes` (elements `bits` wide, at
/// most [`MAX_BITS`]), zero-extended; `None` past the end of `bytes`.
pub fn get(bytes: &[u8], bits: u32, index: u64) -> Option<u64> {
    if bits == 0 || bits > MAX_BITS {
        return None;
    }
    let (first, shift) = position(bits, index)?;
    let span = (shift + bits).div_ceil(8) as usize;
    let window = bytes.get(first..first.checked_add(span)?)?;
    let mut word = 0u128;
    for (k, b) in window.iter().enumerate() {
        word |= u128::from(*b) << (8 * k);
    }
    Some(((word >> shift) as u64) & mask(bits))
}

/// Writes the low `bits` bits of `value` as element `index` of `bytes`,
/// leaving every other bit as it is; `false` (nothing written) past the
/// end of `bytes`.
pub fn set(bytes: &mut [u8], bits: u32, index: u64, value: u64) -> bool {
    if bits == 0 || bits > MAX_BITS {
        return false;
    }
    let Some((first, shift)) = position(bits, index) else {
        return false;
    };
    let span = (shift + bits).div_ceil(8) as usize;
    let Some(window) = first
        .checked_add(span)
        .and_then(|end| bytes.get_mut(first..end))
    else {
        return false;
    };
    let field = u128::from(mask(bits)) << shift;
    let put = u128::from(value & mask(bits)) << shift;
    for (k, b) in window.iter_mut().enumerate() {
        let keep = !((field >> (8 * k)) as u8);
        *b = (*b & keep) | (put >> (8 * k)) as u8;
    }
    true
}

/// Element `raw` (the bits [`get`] read) as text: signless and signed
/// integers in decimal, sign-extended (`i4` 0xC is `-4`, as `i8` prints
/// signed); unsigned integers and booleans in decimal; any other type as
/// its bits in upper-case hex, one digit per 4 bits (`*4` 0xC is `C`).
pub fn format(ty: ElementType, raw: u64) -> String {
    let bits = ty.bits().clamp(1, MAX_BITS);
    match ty.numerical() {
        numerical::INTEGER | numerical::SIGNED => {
            let unused = 64 - bits;
            (((raw << unused) as i64) >> unused).to_string()
        }
        numerical::UNSIGNED | numerical::BOOLEAN => raw.to_string(),
        _ => format!("{raw:0width$X}", width = bits.div_ceil(4) as usize),
    }
}

/// One element written as [`format()`] prints it, as the bits [`set`]
/// stores: integers through C's `strtoll` (base 0, as IREE reads `i8`),
/// bounded by the type (signless `i4` in [-8, 15], as IREE bounds `i8` by
/// [-128, 255]; `si4` in [-8, 7]; `ui4` in [0, 15]); other types as exactly
/// their hex digits.
pub fn parse(ty: ElementType, text: &str) -> Result<u64, String> {
    let bits = ty.bits();
    let bad = || format!("failed to parse element '{text}' as {}", ty.name());
    if bits == 0 || bits > MAX_BITS {
        return Err(format!(
            "{}-bit elements that are not byte-aligned cannot be parsed",
            bits
        ));
    }
    let half = 1i128 << (bits - 1);
    let (lo, hi) = match ty.numerical() {
        numerical::INTEGER => (-half, 2 * half - 1),
        numerical::SIGNED => (-half, half - 1),
        numerical::UNSIGNED | numerical::BOOLEAN => (0, 2 * half - 1),
        _ => {
            let digits = bits.div_ceil(4) as usize;
            if text.len() != digits {
                return Err(format!(
                    "binary hex element count mismatch: buffer length={} < expected={digits}",
                    text.len()
                ));
            }
            return u64::from_str_radix(text, 16)
                .ok()
                .filter(|v| *v <= mask(bits))
                .ok_or_else(bad);
        }
    };
    let value = if ty.numerical() == numerical::INTEGER || ty.numerical() == numerical::SIGNED {
        irvm::number_text::atoi_i64(text).map(i128::from)
    } else {
        // A minus sign is refused here, where `strtoull` would wrap it.
        irvm::number_text::atoi_u64(text)
            .filter(|_| !text.trim_start().starts_with('-'))
            .map(i128::from)
    };
    value
        .filter(|v| (lo..=hi).contains(v))
        .map(|v| (v as u64) & mask(bits))
        .ok_or_else(bad)
}

/// The first `count` elements of `packed` one per [`ElementType::byte_size`]
/// bytes (little-endian; integers sign-extended as [`format()`] reads them,
/// other types zero-extended): the form a NumPy array of the type's
/// `descr` (`|i1` for `i4`) holds. `None` when `packed` is short or the
/// type wider than [`MAX_BITS`].
pub fn unpack(ty: ElementType, count: u64, packed: &[u8]) -> Option<Vec<u8>> {
    let signed = matches!(ty.numerical(), numerical::INTEGER | numerical::SIGNED);
    unpack_into(ty.bits(), count, packed, signed, ty.byte_size())
}

/// The first `count` elements of `bits` each in `packed`, each widened to
/// `size` little-endian bytes, sign-extended when `signed`; `None` when
/// `packed` is too short or the result too large.
pub fn unpack_into(
    bits: u32,
    count: u64,
    packed: &[u8],
    signed: bool,
    size: usize,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(count).ok()?.checked_mul(size)?);
    for k in 0..count {
        let raw = get(packed, bits, k)?;
        let value = if signed {
            let unused = 64 - bits;
            (((raw << unused) as i64) >> unused) as u64
        } else {
            raw
        };
        out.extend_from_slice(&value.to_le_bytes()[..size]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const I4: ElementType = ElementType::new(numerical::INTEGER, 4);
    const I2: ElementType = ElementType::new(numerical::INTEGER, 2);

    #[test]
    fn elements_pack_from_the_least_significant_bit_as_iree_packs_them() {
        // iree-run-module --input=4xi4=21,C4 into arith.extsi gives 1 2 4 -4,
        // and --input=4xi2=E4 gives 0 1 -2 -1.
        let i4 = [0x21u8, 0xC4];
        let got: Vec<String> = (0..4)
            .map(|k| format(I4, get(&i4, 4, k).unwrap()))
            .collect();
        assert_eq!(got, ["1", "2", "4", "-4"]);
        let i2 = [0xE4u8];
        let got: Vec<String> = (0..4)
            .map(|k| format(I2, get(&i2, 2, k).unwrap()))
            .collect();
        assert_eq!(got, ["0", "1", "-2", "-1"]);
        assert_eq!(get(&i4, 4, 4), None);
        assert_eq!(unpack(I4, 4, &i4), Some(vec![1, 2, 4, 0xFC]));
        assert_eq!(unpack(I4, 5, &i4), None);
    }

    #[test]
    fn set_writes_only_its_own_bits_across_bytes() {
        let mut b = [0xFFu8; 3];
        assert!(set(&mut b, 6, 1, 0));
        assert_eq!(b, [0x3F, 0xF0, 0xFF]);
        assert_eq!(get(&b, 6, 1), Some(0));
        assert_eq!(get(&b, 6, 0), Some(0x3F));
        assert!(!set(&mut b, 6, 4, 1));
    }

    #[test]
    fn text_is_bounded_by_the_type() {
        assert_eq!(parse(I4, "-3"), Ok(0xD));
        assert_eq!(parse(I4, "15"), Ok(0xF));
        assert!(parse(I4, "16").is_err());
        assert!(parse(I4, "-9").is_err());
        let si4 = ElementType::new(numerical::SIGNED, 4);
        assert!(parse(si4, "8").is_err());
        let ui4 = ElementType::new(numerical::UNSIGNED, 4);
        assert!(parse(ui4, "-1").is_err());
        assert_eq!(format(ui4, 0xC), "12");
        let opaque = ElementType::new(numerical::UNKNOWN, 4);
        assert_eq!(parse(opaque, "C"), Ok(0xC));
        assert_eq!(format(opaque, 0xC), "C");
    }
}
