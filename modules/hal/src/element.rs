//! HAL element types: the packed `u32` IREE uses (numerical type in the top
//! byte, bit width in the low byte), their names (`f32`, `si8`, `i1`) and
//! how one element is parsed from and printed as text.

use irvm::number_text::format_g;

/// A HAL element type as bytecode passes it (`0x21000020` is `f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ElementType(pub u32);

/// Numerical-type bytes (IREE's `iree_hal_numerical_type_t`), the top byte
/// of an [`ElementType`].
pub mod numerical {
    /// Opaque data (`*8`, NumPy's `V`).
    pub const UNKNOWN: u32 = 0x00;
    /// Signless integers (`i32`).
    pub const INTEGER: u32 = 0x10;
    /// Signed integers (`si32`, NumPy's `i`).
    pub const SIGNED: u32 = 0x11;
    /// Unsigned integers (`ui32`, NumPy's `u`).
    pub const UNSIGNED: u32 = 0x12;
    /// Booleans (IREE's `BOOL_8`, printed `i1`; NumPy's `b`).
    pub const BOOLEAN: u32 = 0x13;
    /// IEEE floats (`f32`).
    pub const FLOAT_IEEE: u32 = 0x21;
    /// Brain floats (`bf16`).
    pub const FLOAT_BRAIN: u32 = 0x22;
    /// Complex floats (`cf64`, NumPy's `c`).
    pub const FLOAT_COMPLEX: u32 = 0x23;
    /// `f8E5M2` (IEEE-like 8-bit float, with infinities).
    pub const FLOAT_8_E5M2: u32 = 0x24;
    /// `f8E4M3FN` (finite 8-bit float).
    pub const FLOAT_8_E4M3_FN: u32 = 0x25;
    /// `f8E5M2FNUZ` (finite, no negative zero).
    pub const FLOAT_8_E5M2_FNUZ: u32 = 0x26;
    /// `f8E4M3FNUZ` (finite, no negative zero).
    pub const FLOAT_8_E4M3_FNUZ: u32 = 0x27;
    /// `f8E8M0FNU` (an unsigned power of two).
    pub const FLOAT_8_E8M0_FNU: u32 = 0x28;
}

/// The 8-bit float types: numerical type and name.
const FP8_NAMES: [(u32, &str); 5] = [
    (numerical::FLOAT_8_E5M2, "f8E5M2"),
    (numerical::FLOAT_8_E4M3_FN, "f8E4M3FN"),
    (numerical::FLOAT_8_E5M2_FNUZ, "f8E5M2FNUZ"),
    (numerical::FLOAT_8_E4M3_FNUZ, "f8E4M3FNUZ"),
    (numerical::FLOAT_8_E8M0_FNU, "f8E8M0FNU"),
];

impl ElementType {
    /// `f32`.
    pub const F32: ElementType = ElementType::new(numerical::FLOAT_IEEE, 32);
    /// `f64`.
    pub const F64: ElementType = ElementType::new(numerical::FLOAT_IEEE, 64);
    /// `f16`.
    pub const F16: ElementType = ElementType::new(numerical::FLOAT_IEEE, 16);
    /// `bf16`.
    pub const BF16: ElementType = ElementType::new(numerical::FLOAT_BRAIN, 16);
    /// `i8` (signless).
    pub const I8: ElementType = ElementType::new(numerical::INTEGER, 8);
    /// `i16` (signless).
    pub const I16: ElementType = ElementType::new(numerical::INTEGER, 16);
    /// `i32` (signless).
    pub const I32: ElementType = ElementType::new(numerical::INTEGER, 32);
    /// `i64` (signless).
    pub const I64: ElementType = ElementType::new(numerical::INTEGER, 64);

    /// The type of `numerical` kind and `bits` width.
    pub const fn new(numerical: u32, bits: u32) -> ElementType {
        ElementType((numerical << 24) | (bits & 0xFF))
    }

    /// The numerical type (top byte: one of [`numerical`]'s values).
    pub fn numerical(self) -> u32 {
        self.0 >> 24
    }

    /// Whether data of this type may be passed where `expected` is
    /// asked for, by IREE's rule for `hal.buffer_view.assert`: an opaque
    /// type (numerical type 0) passes for anything, integers of one width
    /// pass for each other whatever their signedness (booleans are
    /// integers: an 8-bit bool passes for `i8`), anything else only for
    /// itself.
    pub fn satisfies(self, expected: ElementType) -> bool {
        let integer = |t: ElementType| t.numerical() & 0xF0 == numerical::INTEGER;
        self.numerical() == numerical::UNKNOWN
            || (integer(self) && integer(expected) && self.bits() == expected.bits())
            || self == expected
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        self.0 & 0xFF
    }

    /// Bytes one element takes on its own (IREE's
    /// `iree_hal_element_dense_byte_count`: sub-byte types round up to a
    /// whole byte). A tensor's size is [`ElementType::packed_byte_count`].
    pub fn byte_size(self) -> usize {
        (self.bits() as usize).div_ceil(8)
    }

    /// Whether elements of this type share bytes in a tensor (`i4`, `i2`,
    /// `ui4`: a bit width that is not a whole number of bytes; IREE's
    /// `!iree_hal_element_is_byte_aligned`).
    pub fn is_sub_byte(self) -> bool {
        self.bits() % 8 != 0
    }

    /// Bytes `count` elements take in a dense tensor, as IREE sizes buffer
    /// views (`iree_hal_element_packed_byte_count`): sub-byte elements
    /// packed, `(count * bits + 7) / 8` (4 x i4 is 2 bytes, 3 x i4 also 2);
    /// `None` when that overflows.
    pub fn packed_byte_count(self, count: u64) -> Option<u64> {
        count
            .checked_mul(u64::from(self.bits()))
            .map(|bits| bits.div_ceil(8))
    }

    /// The name iree-run-module prints (`f32`, `si32`, `ui8`, `i1`, `bf16`,
    /// `f8E4M3FN`).
    pub fn name(self) -> String {
        if let Some((_, name)) = FP8_NAMES
            .iter()
            .find(|(n, _)| *n == self.numerical() && self.bits() == 8)
        {
            return name.to_string();
        }
        let mut bits = self.bits();
        let prefix = match self.numerical() {
            numerical::BOOLEAN => {
                bits = 1;
                "i"
            }
            numerical::INTEGER => "i",
            numerical::SIGNED => "si",
            numerical::UNSIGNED => "ui",
            numerical::FLOAT_IEEE => "f",
            numerical::FLOAT_BRAIN => "bf",
            numerical::FLOAT_COMPLEX => "cf",
            _ => "*",
        };
        format!("{prefix}{bits}")
    }

    /// Parses a type name as iree-run-module's `--input` does (`i1` is
    /// IREE's 8-bit boolean, `0x13000008`, the type iree-compile gives a
    /// `tensor<..xi1>`: one byte per element).
    pub fn parse(text: &str) -> Result<ElementType, String> {
        if text == "i1" {
            return Ok(ElementType::new(numerical::BOOLEAN, 8));
        }
        if let Some((n, _)) = FP8_NAMES.iter().find(|(_, name)| *name == text) {
            return Ok(ElementType::new(*n, 8));
        }
        let (numerical, rest) = if let Some(r) = text.strip_prefix("si") {
            (numerical::SIGNED, r)
        } else if let Some(r) = text.strip_prefix("ui") {
            (numerical::UNSIGNED, r)
        } else if let Some(r) = text.strip_prefix("i") {
            (numerical::INTEGER, r)
        } else if let Some(r) = text.strip_prefix("bf") {
            (numerical::FLOAT_BRAIN, r)
        } else if let Some(r) = text.strip_prefix("cf") {
            (numerical::FLOAT_COMPLEX, r)
        } else if let Some(r) = text.strip_prefix("f") {
            (numerical::FLOAT_IEEE, r)
        } else if let Some(r) = text.strip_prefix("x").or_else(|| text.strip_prefix("*")) {
            (numerical::UNKNOWN, r)
        } else {
            return Err(format!("unhandled element type prefix in '{text}'"));
        };
        match rest.parse::<u32>() {
            Ok(bits) if bits <= 0xFF => Ok(ElementType::new(numerical, bits)),
            _ => Err(format!("out of range bit count in '{text}'")),
        }
    }

    /// Writes the element `text` into `out` (`byte_size` bytes, native
    /// little-endian), with IREE's range rules per type.
    pub fn parse_element(self, text: &str, out: &mut [u8]) -> Result<(), String> {
        use irvm::number_text::{atod, atof, atoi_i32, atoi_i64, atoi_u32, atoi_u64};
        // The cases and range checks of IREE's iree_hal_parse_element_unsafe
        // (hal/string_util.c): the C type each reads through, then a bound.
        let bad = || format!("failed to parse element '{text}' as {}", self.name());
        let i32_in = |lo: i64, hi: i64| {
            atoi_i32(text)
                .filter(|v| (lo..=hi).contains(&(*v as i64)))
                .ok_or_else(bad)
        };
        let u32_upto = |hi: u32| atoi_u32(text).filter(|v| *v <= hi).ok_or_else(bad);
        let float = || atof(text).ok_or_else(bad);
        let (n, bits) = (self.numerical(), self.bits());
        let bytes: Vec<u8> = match (n, bits) {
            (numerical::INTEGER, 8) => vec![i32_in(i8::MIN as i64, u8::MAX as i64)? as u8],
            // Signed types are bounded above only, as in the reference.
            (numerical::SIGNED, 8) => vec![i32_in(i64::MIN, i8::MAX as i64)? as u8],
            (numerical::UNSIGNED, 8) => vec![u32_upto(u8::MAX as u32)? as u8],
            (numerical::INTEGER, 16) => (i32_in(i16::MIN as i64, u16::MAX as i64)? as u16)
                .to_le_bytes()
                .to_vec(),
            (numerical::SIGNED, 16) => (i32_in(i64::MIN, i16::MAX as i64)? as u16)
                .to_le_bytes()
                .to_vec(),
            (numerical::UNSIGNED, 16) => (u32_upto(u16::MAX as u32)? as u16).to_le_bytes().to_vec(),
            (numerical::INTEGER | numerical::SIGNED, 32) => {
                atoi_i32(text).ok_or_else(bad)?.to_le_bytes().to_vec()
            }
            (numerical::UNSIGNED, 32) => atoi_u32(text).ok_or_else(bad)?.to_le_bytes().to_vec(),
            (numerical::INTEGER | numerical::SIGNED, 64) => {
                atoi_i64(text).ok_or_else(bad)?.to_le_bytes().to_vec()
            }
            (numerical::UNSIGNED, 64) => atoi_u64(text).ok_or_else(bad)?.to_le_bytes().to_vec(),
            (numerical::FLOAT_IEEE, 32) => float()?.to_le_bytes().to_vec(),
            (numerical::FLOAT_IEEE, 64) => atod(text).ok_or_else(bad)?.to_le_bytes().to_vec(),
            (numerical::FLOAT_IEEE, 16) => f32_to_f16(float()?).to_le_bytes().to_vec(),
            (numerical::FLOAT_BRAIN, 16) => f32_to_bf16(float()?).to_le_bytes().to_vec(),
            (numerical::FLOAT_8_E8M0_FNU, 8) => vec![crate::fp8::e8m0_from_f32(float()?)],
            (_, 8) if self.fp8_format().is_some() => {
                let format = self.fp8_format().ok_or_else(bad)?;
                vec![format.encode(float()?)]
            }
            _ => {
                // Any other type (i1, booleans, ...) is its bytes in hex.
                let want = self.byte_size();
                if text.len() != want * 2 {
                    return Err(format!(
                        "binary hex element count mismatch: buffer length={} < expected={}",
                        text.len(),
                        want * 2
                    ));
                }
                hex_bytes(text)
            }
        };
        if out.len() != bytes.len() {
            return Err(bad());
        }
        out.copy_from_slice(&bytes);
        Ok(())
    }

    /// Prints one element as iree-run-module does: integers in decimal,
    /// floats with C's `%G`, anything else as hex bytes.
    pub fn format_element(self, bytes: &[u8]) -> String {
        let arr = |n: usize| -> [u8; 8] {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(&bytes[..n.min(bytes.len())]);
            a
        };
        let (n, bits) = (self.numerical(), self.bits());
        match (n, bits) {
            (numerical::INTEGER | numerical::SIGNED, 8) => (arr(1)[0] as i8).to_string(),
            (numerical::UNSIGNED, 8) => arr(1)[0].to_string(),
            (numerical::INTEGER | numerical::SIGNED, 16) => {
                i16::from_le_bytes([arr(2)[0], arr(2)[1]]).to_string()
            }
            (numerical::UNSIGNED, 16) => u16::from_le_bytes([arr(2)[0], arr(2)[1]]).to_string(),
            (numerical::INTEGER | numerical::SIGNED, 32) => {
                let a = arr(4);
                i32::from_le_bytes([a[0], a[1], a[2], a[3]]).to_string()
            }
            (numerical::UNSIGNED, 32) => {
                let a = arr(4);
                u32::from_le_bytes([a[0], a[1], a[2], a[3]]).to_string()
            }
            (numerical::INTEGER | numerical::SIGNED, 64) => i64::from_le_bytes(arr(8)).to_string(),
            (numerical::UNSIGNED, 64) => u64::from_le_bytes(arr(8)).to_string(),
            (numerical::FLOAT_IEEE, 16) => {
                let a = arr(2);
                upper_g(f16_to_f32(u16::from_le_bytes([a[0], a[1]])) as f64)
            }
            (numerical::FLOAT_BRAIN, 16) => {
                let a = arr(2);
                upper_g(f32::from_bits((u16::from_le_bytes([a[0], a[1]]) as u32) << 16) as f64)
            }
            (numerical::FLOAT_IEEE, 32) => {
                let a = arr(4);
                upper_g(f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64)
            }
            (numerical::FLOAT_IEEE, 64) => upper_g(f64::from_le_bytes(arr(8))),
            (_, 8) if self.is_fp8() => upper_g(self.element_as_f64(&arr(1)[..1])),
            _ => bytes
                .iter()
                .take(self.byte_size())
                .map(|b| format!("{b:02X}"))
                .collect(),
        }
    }
}

impl ElementType {
    /// A floating-point element as an `f64` (NaN for other types).
    pub fn element_as_f64(self, bytes: &[u8]) -> f64 {
        let get = |n: usize| -> Option<[u8; 8]> {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(bytes.get(..n)?);
            Some(a)
        };
        let v = match (self.numerical(), self.bits()) {
            (numerical::FLOAT_IEEE, 16) => {
                get(2).map(|a| f16_to_f32(u16::from_le_bytes([a[0], a[1]])) as f64)
            }
            (numerical::FLOAT_BRAIN, 16) => get(2)
                .map(|a| f32::from_bits((u16::from_le_bytes([a[0], a[1]]) as u32) << 16) as f64),
            (numerical::FLOAT_IEEE, 32) => {
                get(4).map(|a| f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64)
            }
            (numerical::FLOAT_IEEE, 64) => get(8).map(f64::from_le_bytes),
            (numerical::FLOAT_8_E8M0_FNU, 8) => {
                get(1).map(|a| crate::fp8::e8m0_to_f32(a[0]) as f64)
            }
            (_, 8) => self
                .fp8_format()
                .and_then(|format| Some(format.decode(get(1)?[0]) as f64)),
            _ => None,
        };
        v.unwrap_or(f64::NAN)
    }

    /// Whether this is one of the 8-bit float types (`f8E4M3FN`, ...).
    pub fn is_fp8(self) -> bool {
        self.bits() == 8 && FP8_NAMES.iter().any(|(n, _)| *n == self.numerical())
    }

    /// The sign-exponent-mantissa format of an 8-bit float type (all but
    /// `f8E8M0FNU`, a bare exponent).
    fn fp8_format(self) -> Option<crate::fp8::Fp8Format> {
        if self.bits() != 8 {
            return None;
        }
        match self.numerical() {
            numerical::FLOAT_8_E5M2 => Some(crate::fp8::E5M2),
            numerical::FLOAT_8_E4M3_FN => Some(crate::fp8::E4M3FN),
            numerical::FLOAT_8_E5M2_FNUZ => Some(crate::fp8::E5M2FNUZ),
            numerical::FLOAT_8_E4M3_FNUZ => Some(crate::fp8::E4M3FNUZ),
            _ => None,
        }
    }
}

/// C's `%G`.
fn upper_g(v: f64) -> String {
    format_g(v).to_uppercase()
}

/// Bytes from hex digits, two per byte, as `iree_hal_hex_string_to_bytes`
/// reads them (anything that is not a hex digit counts as 0).
fn hex_bytes(text: &str) -> Vec<u8> {
    let digit = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
    text.as_bytes()
        .chunks_exact(2)
        .map(|p| digit(p[0]) * 16 + digit(p[1]))
        .collect()
}

/// IEEE half to single precision.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1F) as u32;
    let mant = (h & 0x3FF) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalize.
            let mut e: i32 = -14;
            let mut m = m;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (((e + 127) as u32) << 23) | ((m & 0x3FF) << 13)
        }
        (0x1F, 0) => sign | 0x7F80_0000,
        (0x1F, m) => sign | 0x7F80_0000 | (m << 13) | 0x0040_0000,
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Single to IEEE half precision, rounding to nearest even.
pub fn f32_to_f16(f: f32) -> u16 {
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xFF) as i32;
    let mant = bits & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1F {
        return sign | 0x7C00;
    }
    if e <= 0 {
        // IREE's conversion (base/internal/math.h) gives zero below 2^-24,
        // the smallest subnormal, where rounding would give that subnormal
        // from just above half of it; irvm converts the same way.
        if e < -9 {
            return sign;
        }
        let m = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let rounded = if rem > mid || (rem == mid && half & 1 == 1) {
            half + 1
        } else {
            half
        };
        return sign | rounded as u16;
    }
    let half = ((e as u32) << 10) | (mant >> 13);
    let rem = mant & 0x1FFF;
    let rounded = if rem > 0x1000 || (rem == 0x1000 && half & 1 == 1) {
        half + 1
    } else {
        half
    };
    sign | rounded as u16
}

/// Single to bfloat16, rounding to nearest even (NaN stays NaN).
pub fn f32_to_bf16(f: f32) -> u16 {
    let bits = f.to_bits();
    if f.is_nan() {
        return ((bits >> 16) as u16) | 0x40;
    }
    let round = 0x7FFF + ((bits >> 16) & 1);
    ((bits.wrapping_add(round)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "si8", "ui32", "i1",
        ] {
            assert_eq!(ElementType::parse(name).unwrap().name(), name);
        }
        assert_eq!(ElementType::parse("f32").unwrap(), ElementType(0x2100_0020));
        assert_eq!(ElementType::parse("i1").unwrap(), ElementType(0x1300_0008));
        assert_eq!(ElementType::parse("i4").unwrap().name(), "i4");
        assert_eq!(ElementType::parse("ui2").unwrap().name(), "ui2");
        assert!(ElementType::parse("q8").is_err());
    }

    #[test]
    fn elements_print_as_iree_does() {
        let f = ElementType::F32;
        let mut b = [0u8; 4];
        f.parse_element("4.1", &mut b).unwrap();
        assert_eq!(f.format_element(&b), "4.1");
        f.parse_element("1e10", &mut b).unwrap();
        assert_eq!(f.format_element(&b), "1E+10");
        f.parse_element("-inf", &mut b).unwrap();
        assert_eq!(f.format_element(&b), "-INF");
        let i8t = ElementType::I8;
        let mut one = [0u8; 1];
        i8t.parse_element("200", &mut one).unwrap();
        assert_eq!(i8t.format_element(&one), "-56");
        assert!(i8t.parse_element("300", &mut one).is_err());
    }

    #[test]
    fn half_precision_round_trips() {
        for v in [0.0f32, 1.0, -2.5, 65504.0, 0.000061035156, 1.0e-7] {
            let h = f32_to_f16(v);
            let back = f16_to_f32(h);
            assert!((back - v).abs() <= v.abs() * 1e-3 + 1e-7, "{v} -> {back}");
        }
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
    }
}
