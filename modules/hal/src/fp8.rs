//! The 8-bit float element types IREE's HAL names (`f8E5M2`, `f8E4M3FN`,
//! `f8E5M2FNUZ`, `f8E4M3FNUZ`, `f8E8M0FNU`): their encodings, and their
//! conversions from and to `f32` as iree-run-module converts them (round to
//! nearest even; f32 subnormals and values below half of the smallest
//! subnormal, whose rounding needs more than the 24 significand bits, give
//! zero; values past the largest finite one give infinity where the format
//! has one, else NaN; `f8E8M0FNU`, a bare power of two, rounds its exponent
//! half up and takes negative values and zero to its smallest value).
//! Checked against the reference (recorded, and live when it is installed)
//! on every encoding of each type and on rounding, overflow, NaN, -0 and
//! subnormal inputs: `tests/all/cli_compat.rs`
//! `buffer_views_print_as_iree_run_module_prints_them`.

/// One sign-exponent-mantissa 8-bit format.
#[derive(Clone, Copy, Debug)]
pub struct Fp8Format {
    exp_bits: u32,
    mantissa_bits: u32,
    bias: i32,
    /// An all-ones exponent with a zero mantissa is an infinity.
    has_infinity: bool,
    /// NaN is the negative-zero encoding (0x80), and there is no -0
    /// (the `FNUZ` types); else NaN is an all-ones exponent and mantissa
    /// (or, with infinities, any non-zero mantissa).
    nan_is_negative_zero: bool,
}

/// `f8E5M2`: IEEE-like, with infinities.
pub const E5M2: Fp8Format = Fp8Format {
    exp_bits: 5,
    mantissa_bits: 2,
    bias: 15,
    has_infinity: true,
    nan_is_negative_zero: false,
};
/// `f8E4M3FN`: finite, NaN at 0x7F/0xFF, largest 448.
pub const E4M3FN: Fp8Format = Fp8Format {
    exp_bits: 4,
    mantissa_bits: 3,
    bias: 7,
    has_infinity: false,
    nan_is_negative_zero: false,
};
/// `f8E5M2FNUZ`: finite, NaN at 0x80, bias 16.
pub const E5M2FNUZ: Fp8Format = Fp8Format {
    exp_bits: 5,
    mantissa_bits: 2,
    bias: 16,
    has_infinity: false,
    nan_is_negative_zero: true,
};
/// `f8E4M3FNUZ`: finite, NaN at 0x80, bias 8.
pub const E4M3FNUZ: Fp8Format = Fp8Format {
    exp_bits: 4,
    mantissa_bits: 3,
    bias: 8,
    has_infinity: false,
    nan_is_negative_zero: true,
};

/// The quiet NaN every NaN encoding reads as (the reference's, positive).
const QUIET_NAN: f32 = f32::from_bits(0x7FC0_0000);

impl Fp8Format {
    fn sign_bit(self) -> u8 {
        1 << (self.exp_bits + self.mantissa_bits)
    }

    fn exp_max(self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    fn mantissa_mask(self) -> u32 {
        (1 << self.mantissa_bits) - 1
    }

    /// The encoding's value.
    pub fn decode(self, bits: u8) -> f32 {
        let negative = bits & self.sign_bit() != 0;
        let exp = (bits as u32 >> self.mantissa_bits) & self.exp_max();
        let mantissa = bits as u32 & self.mantissa_mask();
        if self.nan_is_negative_zero && bits == self.sign_bit() {
            return QUIET_NAN;
        }
        if exp == self.exp_max() {
            if self.has_infinity {
                return if mantissa != 0 {
                    QUIET_NAN
                } else if negative {
                    f32::NEG_INFINITY
                } else {
                    f32::INFINITY
                };
            }
            if !self.nan_is_negative_zero && mantissa == self.mantissa_mask() {
                return QUIET_NAN;
            }
        }
        // Every value is exact in f32: (mantissa, with the implied bit of a
        // normal number) * 2^(scale).
        let (significand, exp) = if exp == 0 {
            (mantissa, 1)
        } else {
            (mantissa | (1 << self.mantissa_bits), exp as i32)
        };
        let scale = exp - self.bias - self.mantissa_bits as i32;
        let magnitude = significand as f32 * 2f32.powi(scale);
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The encoding of `value`, rounded to nearest even.
    pub fn encode(self, value: f32) -> u8 {
        let u = value.to_bits();
        let sign = if u >> 31 != 0 { self.sign_bit() } else { 0 };
        let f32_exp = (u >> 23) & 0xFF;
        let f32_mantissa = u & 0x7F_FFFF;
        let mut too_large = false;
        let mut nan = false;
        let (mut exp, mut mantissa) = (0u32, 0u32);
        if f32_exp == 0xFF {
            if f32_mantissa != 0 {
                nan = true;
            } else {
                too_large = true;
            }
        } else if f32_exp != 0 {
            let mut arithmetic_exp = f32_exp as i32 - 127;
            let largest = (1 << (self.exp_bits - 1)) - i32::from(self.has_infinity);
            if arithmetic_exp > largest {
                too_large = true;
            } else if arithmetic_exp + self.bias <= 0 {
                // A subnormal (or zero): the 24-bit significand shifted to
                // the smallest subnormal's place; past 23 bits it is zero.
                let shift = 23 - self.mantissa_bits as i32 - arithmetic_exp + 1 - self.bias;
                if (0..=23).contains(&shift) {
                    mantissa = round_shift((1 << 23) | f32_mantissa, shift as u32);
                }
            } else {
                let shift = 23 - self.mantissa_bits;
                let mut rounded = nearest_even_biased(f32_mantissa, shift);
                if rounded > 0x7F_FFFF {
                    rounded = 0;
                    arithmetic_exp += 1;
                }
                exp = (arithmetic_exp + self.bias) as u32;
                mantissa = rounded >> shift;
                if !self.has_infinity && exp > self.exp_max() {
                    nan = true;
                }
            }
        }
        if too_large {
            if self.has_infinity {
                return sign | (self.exp_max() << self.mantissa_bits) as u8;
            }
            nan = true;
        }
        if nan {
            if self.nan_is_negative_zero {
                return self.sign_bit();
            }
            return sign | ((self.exp_max() << self.mantissa_bits) | self.mantissa_mask()) as u8;
        }
        if self.nan_is_negative_zero && exp == 0 && mantissa == 0 {
            return 0; // no -0: its encoding is NaN
        }
        sign | ((exp << self.mantissa_bits) | mantissa) as u8
    }
}

/// `input` plus what makes dropping its low `shift` bits round to nearest
/// even (not shifted).
fn nearest_even_biased(input: u32, shift: u32) -> u32 {
    let even_bit = 1u32 << shift;
    let half = even_bit >> 1;
    input
        + if input & even_bit != 0 {
            half
        } else {
            half - 1
        }
}

/// `input` without its low `shift` bits, rounded to nearest even.
fn round_shift(input: u32, shift: u32) -> u32 {
    if shift == 0 {
        return input;
    }
    nearest_even_biased(input, shift) >> shift
}

/// `f8E8M0FNU`'s value: 2^(bits - 127); 0xFF is NaN.
pub fn e8m0_to_f32(bits: u8) -> f32 {
    if bits == 0xFF {
        return QUIET_NAN;
    }
    // 2^-127 is an f32 subnormal: built from its bits.
    if bits == 0 {
        return f32::from_bits(1 << 22);
    }
    f32::from_bits((bits as u32) << 23)
}

/// `f8E8M0FNU`'s encoding of `value`: its exponent, rounded half up
/// (0xFF, NaN, past 2^127); negative values, zero and f32 subnormals give 0
/// (2^-127).
pub fn e8m0_from_f32(value: f32) -> u8 {
    let u = value.to_bits();
    let exp = (u >> 23) & 0xFF;
    if exp == 0xFF {
        return 0xFF;
    }
    if u >> 31 != 0 || exp == 0 {
        return 0;
    }
    let rounded = exp + u32::from(u & 0x40_0000 != 0);
    rounded.min(0xFF) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_values_overflow_and_nan() {
        assert_eq!(E4M3FN.encode(448.0), 0x7E);
        assert_eq!(E4M3FN.encode(464.0), 0x7E); // tie: even
        assert_eq!(E4M3FN.encode(465.0), 0x7F); // NaN
        assert_eq!(E4M3FN.encode(f32::NEG_INFINITY), 0xFF);
        assert_eq!(E5M2.encode(1e6), 0x7C);
        assert_eq!(E5M2.encode(-1e6), 0xFC);
        assert_eq!(E4M3FNUZ.encode(-0.0), 0x00);
        assert_eq!(E4M3FNUZ.encode(f32::NAN), 0x80);
        assert_eq!(E5M2FNUZ.encode(57344.0), 0x7F);
        assert!(E4M3FNUZ.decode(0x80).is_nan());
        assert_eq!(E4M3FN.decode(0x7E), 448.0);
        assert_eq!(E4M3FN.decode(0x01), 2f32.powi(-9));
        assert_eq!(E4M3FN.decode(0x80), -0.0);
        assert!(E4M3FN.decode(0x80).is_sign_negative());
        assert_eq!(E5M2.decode(0xFC), f32::NEG_INFINITY);
    }

    #[test]
    fn subnormals_round_as_the_reference_rounds_them() {
        // 2^-10 is half of E4M3FN's smallest subnormal: a tie, to 0; just
        // above it the rounding needs a 25th bit, and the reference gives 0.
        assert_eq!(E4M3FN.encode(2f32.powi(-10)), 0x00);
        assert_eq!(E4M3FN.encode(0.000_976_57), 0x00);
        assert_eq!(E4M3FN.encode(2f32.powi(-9)), 0x01);
        assert_eq!(E4M3FN.encode(1.5 * 2f32.powi(-9)), 0x02);
        assert_eq!(E4M3FN.encode(-1e-10), 0x80);
    }

    #[test]
    fn every_encoding_round_trips() {
        for format in [E5M2, E4M3FN, E5M2FNUZ, E4M3FNUZ] {
            for bits in 0..=255u8 {
                let value = format.decode(bits);
                if !value.is_nan() {
                    assert_eq!(format.encode(value), bits, "{format:?} {bits:#x}");
                }
            }
        }
        for bits in 0..=254u8 {
            assert_eq!(e8m0_from_f32(e8m0_to_f32(bits)), bits, "{bits}");
        }
    }

    #[test]
    fn e8m0_rounds_its_exponent_half_up() {
        assert_eq!(e8m0_from_f32(1.0), 0x7F);
        assert_eq!(e8m0_from_f32(3.0), 0x81);
        assert_eq!(e8m0_from_f32(0.75), 0x7F);
        assert_eq!(e8m0_from_f32(0.3), 0x7D);
        assert_eq!(e8m0_from_f32(-1.0), 0x00);
        assert_eq!(e8m0_from_f32(3e38), 0xFF);
        assert_eq!(e8m0_to_f32(0), 2f32.powi(-127));
        assert!(e8m0_to_f32(0xFF).is_nan());
    }
}
