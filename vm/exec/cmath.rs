//! The C math library as the reference runtime calls it.
//!
//! IREE's `ops.h` implements the float instructions with `<math.h>`
//! (`logf`, `erf`, `remainder`, ...), and the released `iree-run-module`
//! binds the x86-64 glibc symbols at fixed symbol versions: most at
//! `GLIBC_2.2.5`, whose wrappers return a positive NaN for domain errors
//! (`log(-1)` is `nan`, where the newer `log@GLIBC_2.29` gives `-nan`),
//! and `expf`, `exp2f`, `logf`, `log2f`, `powf` at `GLIBC_2.27`. To give
//! the same bits, irvm looks the same versioned symbols up in the process's
//! libm (`dlvsym`) once, and calls them. Where they cannot be found (not
//! glibc), the functions fall back to Rust's implementations, which agree
//! except for NaN signs and the last ulp of a few functions.
//!
//! The rounding instructions are computed here directly, as glibc does them
//! (a signalling NaN comes back quieted), and `round.even` follows the
//! reference's pre-C23 formula (`round`, then step back towards zero on an
//! odd tie), which gives `+0` for `-0.5`.

use std::ffi::{c_void, CStr};
use std::sync::OnceLock;

type F32Un = unsafe extern "C" fn(f32) -> f32;
type F32Bin = unsafe extern "C" fn(f32, f32) -> f32;
type F64Un = unsafe extern "C" fn(f64) -> f64;
type F64Bin = unsafe extern "C" fn(f64, f64) -> f64;

/// The libm entry points, each `None` when the versioned symbol is missing.
struct Table {
    f32_un: [Option<F32Un>; UN_COUNT],
    f64_un: [Option<F64Un>; UN_COUNT],
    f32_bin: [Option<F32Bin>; BIN_COUNT],
    f64_bin: [Option<F64Bin>; BIN_COUNT],
}

/// One-operand functions, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Un {
    Atan,
    Cos,
    Sin,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log10,
    Log1p,
    Log2,
    Tanh,
    Erf,
}
const UN_COUNT: usize = 12;

/// Two-operand functions, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bin {
    Atan2,
    Pow,
    Remainder,
}
const BIN_COUNT: usize = 3;

/// (f32 symbol, its version, f64 symbol, its version) per [`Un`].
const UN_SYMBOLS: [(&CStr, &CStr, &CStr, &CStr); UN_COUNT] = [
    (c"atanf", V2_2_5, c"atan", V2_2_5),
    (c"cosf", V2_2_5, c"cos", V2_2_5),
    (c"sinf", V2_2_5, c"sin", V2_2_5),
    (c"expf", V2_27, c"exp", V2_2_5),
    (c"exp2f", V2_27, c"exp2", V2_2_5),
    (c"expm1f", V2_2_5, c"expm1", V2_2_5),
    (c"logf", V2_27, c"log", V2_2_5),
    (c"log10f", V2_2_5, c"log10", V2_2_5),
    (c"log1pf", V2_2_5, c"log1p", V2_2_5),
    (c"log2f", V2_27, c"log2", V2_2_5),
    (c"tanhf", V2_2_5, c"tanh", V2_2_5),
    (c"erff", V2_2_5, c"erf", V2_2_5),
];
const BIN_SYMBOLS: [(&CStr, &CStr, &CStr, &CStr); BIN_COUNT] = [
    (c"atan2f", V2_2_5, c"atan2", V2_2_5),
    (c"powf", V2_27, c"pow", V2_2_5),
    (c"remainderf", V2_2_5, c"remainder", V2_2_5),
];
const V2_2_5: &CStr = c"GLIBC_2.2.5";
const V2_27: &CStr = c"GLIBC_2.27";

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(load)
}

// (Miri cannot call `dlopen`: under it the Rust functions stand in, as on
// other targets.)
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    target_arch = "x86_64",
    not(miri)
))]
fn load() -> Table {
    // SAFETY: dlopen is given a NUL-terminated name; libm's initialisers are
    // already run (Rust's std links it), so this only returns a handle.
    let handle = unsafe { libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW) };
    let find = |name: &CStr, version: &CStr| -> *mut c_void {
        if handle.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: a live handle and NUL-terminated strings; the result is
        // only an address, checked for null by the callers.
        unsafe { libc::dlvsym(handle, name.as_ptr(), version.as_ptr()) }
    };
    let mut t = Table {
        f32_un: [None; UN_COUNT],
        f64_un: [None; UN_COUNT],
        f32_bin: [None; BIN_COUNT],
        f64_bin: [None; BIN_COUNT],
    };
    for (k, &(n32, v32, n64, v64)) in UN_SYMBOLS.iter().enumerate() {
        let (p32, p64) = (find(n32, v32), find(n64, v64));
        // SAFETY: these glibc symbols are the C functions `float f(float)`
        // and `double f(double)` of <math.h>; a non-null address from
        // dlvsym is that function.
        unsafe {
            t.f32_un[k] = (!p32.is_null()).then(|| std::mem::transmute::<*mut c_void, F32Un>(p32));
            t.f64_un[k] = (!p64.is_null()).then(|| std::mem::transmute::<*mut c_void, F64Un>(p64));
        }
    }
    for (k, &(n32, v32, n64, v64)) in BIN_SYMBOLS.iter().enumerate() {
        let (p32, p64) = (find(n32, v32), find(n64, v64));
        // SAFETY: as above, for `float f(float, float)` and
        // `double f(double, double)`.
        unsafe {
            t.f32_bin[k] =
                (!p32.is_null()).then(|| std::mem::transmute::<*mut c_void, F32Bin>(p32));
            t.f64_bin[k] =
                (!p64.is_null()).then(|| std::mem::transmute::<*mut c_void, F64Bin>(p64));
        }
    }
    t
}

#[cfg(not(all(
    target_os = "linux",
    target_env = "gnu",
    target_arch = "x86_64",
    not(miri)
)))]
fn load() -> Table {
    Table {
        f32_un: [None; UN_COUNT],
        f64_un: [None; UN_COUNT],
        f32_bin: [None; BIN_COUNT],
        f64_bin: [None; BIN_COUNT],
    }
}

/// The address of the C library function `un_f32(f, _)` calls, when it
/// calls one (compiled code then calls it directly, `vm/jit/helpers.rs`).
#[cfg(feature = "jit")]
pub(crate) fn un_f32_symbol(f: Un) -> Option<usize> {
    table().f32_un[f as usize].map(|g| g as usize)
}

/// [`un_f32_symbol`] for `un_f64`.
#[cfg(feature = "jit")]
pub(crate) fn un_f64_symbol(f: Un) -> Option<usize> {
    table().f64_un[f as usize].map(|g| g as usize)
}

/// `f(x)` for an f32 one-operand instruction.
#[inline]
pub(crate) fn un_f32(f: Un, x: f32) -> f32 {
    match table().f32_un[f as usize] {
        // SAFETY: a <math.h> function of one float (see `load`); it has no
        // preconditions on its argument.
        Some(g) => unsafe { g(x) },
        None => fallback_un_f32(f, x),
    }
}

/// `f(x)` for an f64 one-operand instruction.
#[inline]
pub(crate) fn un_f64(f: Un, x: f64) -> f64 {
    match table().f64_un[f as usize] {
        // SAFETY: a <math.h> function of one double (see `load`).
        Some(g) => unsafe { g(x) },
        None => fallback_un_f64(f, x),
    }
}

/// `f(x, y)` for an f32 two-operand instruction.
#[inline]
pub(crate) fn bin_f32(f: Bin, x: f32, y: f32) -> f32 {
    match table().f32_bin[f as usize] {
        // SAFETY: a <math.h> function of two floats (see `load`).
        Some(g) => unsafe { g(x, y) },
        None => match f {
            Bin::Atan2 => x.atan2(y),
            Bin::Pow => x.powf(y),
            Bin::Remainder => libm::remainderf(x, y),
        },
    }
}

/// `f(x, y)` for an f64 two-operand instruction.
#[inline]
pub(crate) fn bin_f64(f: Bin, x: f64, y: f64) -> f64 {
    match table().f64_bin[f as usize] {
        // SAFETY: a <math.h> function of two doubles (see `load`).
        Some(g) => unsafe { g(x, y) },
        None => match f {
            Bin::Atan2 => x.atan2(y),
            Bin::Pow => x.powf(y),
            Bin::Remainder => libm::remainder(x, y),
        },
    }
}

fn fallback_un_f32(f: Un, x: f32) -> f32 {
    match f {
        Un::Atan => x.atan(),
        Un::Cos => x.cos(),
        Un::Sin => x.sin(),
        Un::Exp => x.exp(),
        Un::Exp2 => x.exp2(),
        Un::Expm1 => x.exp_m1(),
        Un::Log => x.ln(),
        Un::Log10 => x.log10(),
        Un::Log1p => x.ln_1p(),
        Un::Log2 => x.log2(),
        Un::Tanh => x.tanh(),
        Un::Erf => libm::erff(x),
    }
}

fn fallback_un_f64(f: Un, x: f64) -> f64 {
    match f {
        Un::Atan => x.atan(),
        Un::Cos => x.cos(),
        Un::Sin => x.sin(),
        Un::Exp => x.exp(),
        Un::Exp2 => x.exp2(),
        Un::Expm1 => x.exp_m1(),
        Un::Log => x.ln(),
        Un::Log10 => x.log10(),
        Un::Log1p => x.ln_1p(),
        Un::Log2 => x.log2(),
        Un::Tanh => x.tanh(),
        Un::Erf => libm::erf(x),
    }
}

/// `round(x)`, or for a NaN `x` that NaN with its quiet bit set, as glibc's
/// rounding functions return a signalling NaN (`x + x`). A NaN is not
/// handed to `round`: Rust does not promise that an operation keeps a
/// NaN's payload (its NaN rules let `ceil` return any quiet NaN, and Miri
/// does), which glibc's functions do.
#[inline]
fn rounded_f32(x: f32, round: impl Fn(f32) -> f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(x.to_bits() | 0x0040_0000)
    } else {
        round(x)
    }
}

/// [`rounded_f32`] for an f64.
#[inline]
fn rounded_f64(x: f64, round: impl Fn(f64) -> f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000)
    } else {
        round(x)
    }
}

/// `ceilf`.
#[inline]
pub(crate) fn ceil_f32(x: f32) -> f32 {
    rounded_f32(x, f32::ceil)
}
/// `floorf`.
#[inline]
pub(crate) fn floor_f32(x: f32) -> f32 {
    rounded_f32(x, f32::floor)
}
/// `roundf` (ties away from zero).
#[inline]
pub(crate) fn round_f32(x: f32) -> f32 {
    rounded_f32(x, f32::round)
}
/// `ceil`.
#[inline]
pub(crate) fn ceil_f64(x: f64) -> f64 {
    rounded_f64(x, f64::ceil)
}
/// `floor`.
#[inline]
pub(crate) fn floor_f64(x: f64) -> f64 {
    rounded_f64(x, f64::floor)
}
/// `round`.
#[inline]
pub(crate) fn round_f64(x: f64) -> f64 {
    rounded_f64(x, f64::round)
}

/// The reference's `vm_round_f32_even`: `roundf`, then on a tie whose
/// result is odd one step back towards zero (`-0.5` → `+0`, `-2.5` → `-2`).
#[inline]
pub(crate) fn round_even_f32(x: f32) -> f32 {
    let mut r = round_f32(x);
    if (x - r).abs() == 0.5 && r % 2.0 != 0.0 {
        if r > 0.0 {
            r -= 1.0;
        } else {
            r += 1.0;
        }
    }
    r
}

/// The reference's `vm_round_f64_even` (see [`round_even_f32`]).
#[inline]
pub(crate) fn round_even_f64(x: f64) -> f64 {
    let mut r = round_f64(x);
    if (x - r).abs() == 0.5 && r % 2.0 != 0.0 {
        if r > 0.0 {
            r -= 1.0;
        } else {
            r += 1.0;
        }
    }
    r
}

/// Defines the reference's `vm.fpowi.*` for one float type (IREE 3.13):
/// `x` to the power of the exponent's low 32 bits as a signed `int` (the
/// C integer power function it calls takes an `int`), by binary powering
/// in that type: one product per set bit of `|n|`, the base squared
/// between bits, and the reciprocal of the product for a negative `n`.
/// `x^0` is 1, NaN and infinities included. (Checked bit for bit against
/// iree-run-module: a product of roundings, not `powf`.)
macro_rules! powi {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name(x: $t, n: i64) -> $t {
            let n = n as i32;
            let mut bits = n.unsigned_abs();
            let (mut base, mut product) = (x, 1.0);
            loop {
                if bits & 1 != 0 {
                    product *= base;
                }
                bits >>= 1;
                if bits == 0 {
                    break;
                }
                base *= base;
            }
            if n < 0 {
                1.0 / product
            } else {
                product
            }
        }
    };
}
powi!(
    /// `vm.fpowi.f32`.
    powi_f32,
    f32
);
powi!(
    /// `vm.fpowi.f64`.
    powi_f64,
    f64
);

/// x86-64's `cvttss2si`/`cvttsd2si` to 64 bits: truncation, and
/// `i64::MIN` (the "integer indefinite") for NaN and out-of-range values.
#[inline]
fn cvtt_i64(x: f64) -> i64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if x.is_nan() || !(-TWO_63..TWO_63).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// The reference's `(uint64_t)roundf(x)` as its compiler lowers a float to
/// unsigned 64-bit conversion: `a = cvtt(x)`, `b = cvtt(x - 2^63)` (the
/// subtraction in f32), result `a | (b & (a >> 63))`. Values of 2^64 and
/// above (and NaN) give `0x8000000000000000`.
#[inline]
pub(crate) fn cast_f32_ui64(x: f32) -> i64 {
    let r = round_f32(x);
    let a = cvtt_i64(r as f64);
    let b = cvtt_i64((r - 9_223_372_036_854_775_808.0f32) as f64);
    a | (b & (a >> 63))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the reference's libm symbols were found (else Rust's are used).
    fn uses_glibc() -> bool {
        let t = table();
        t.f32_un.iter().all(Option::is_some) && t.f64_un.iter().all(Option::is_some)
    }

    #[test]
    fn round_even_ties_go_to_even_with_the_references_signs() {
        assert_eq!(round_even_f32(-0.5).to_bits(), 0.0f32.to_bits());
        assert_eq!(round_even_f32(0.5).to_bits(), 0.0f32.to_bits());
        assert_eq!(round_even_f32(2.5), 2.0);
        assert_eq!(round_even_f32(-2.5), -2.0);
        assert_eq!(round_even_f32(-1.5), -2.0);
        assert_eq!(round_even_f64(-0.5).to_bits(), 0.0f64.to_bits());
        assert_eq!(round_even_f64(3.5), 4.0);
        assert!(round_even_f64(f64::NAN).is_nan());
        assert_eq!(round_even_f64(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn rounding_quiets_signalling_nans() {
        let snan = f32::from_bits(0x7F80_0001);
        assert_eq!(ceil_f32(snan).to_bits(), 0x7FC0_0001);
        assert_eq!(floor_f32(snan).to_bits(), 0x7FC0_0001);
        assert_eq!(round_even_f32(snan).to_bits(), 0x7FC0_0001);
        let snan = f64::from_bits(0xFFF0_0000_0000_0001);
        assert_eq!(ceil_f64(snan).to_bits(), 0xFFF8_0000_0000_0001);
    }

    #[test]
    fn f32_to_u64_saturates_like_x86_codegen() {
        assert_eq!(cast_f32_ui64(1e20), i64::MIN);
        assert_eq!(cast_f32_ui64(f32::NAN), i64::MIN);
        assert_eq!(cast_f32_ui64(1.5), 2);
        assert_eq!(cast_f32_ui64(1.8446743e19), -(1i64 << 40));
        assert_eq!(cast_f32_ui64(-1.0), -1);
    }

    #[test]
    fn glibc_domain_errors_give_positive_nans() {
        if !uses_glibc() {
            eprintln!("skipping: libm symbols not found");
            return;
        }
        assert_eq!(un_f64(Un::Log, -1.0).to_bits(), f64::NAN.to_bits());
        assert_eq!(un_f64(Un::Log2, -1.0).to_bits(), f64::NAN.to_bits());
        assert_eq!(un_f64(Un::Erf, 0.5), 0.5204998778130465);
    }
}
