//! Numbers from text exactly as IREE's tools read them
//! (`iree_string_view_atoi_*`/`atof`/`atod` in `runtime/src/iree/base/
//! string_view.c`): the text is copied into a small scratch buffer (16
//! bytes for 32-bit integers, 32 for the rest; longer text is refused),
//! handed to the C library with base 0 (`017` is octal, `0x1F` hex; hex
//! floats, `inf`, `nan`), and whatever follows the number is ignored
//! (`5abc` is 5). An integer that overflows the C type is refused; a
//! 32-bit integer keeps the low bits of a 64-bit `long` (`4294967297` is
//! 1); unsigned types accept a minus sign as `strtoul` does (`-1` is all
//! ones); a float that underflows to zero is refused, one that overflows
//! is infinite. irvm calls the same C functions, so the results are the
//! same bits.

use std::ffi::{c_char, CString};

/// The text as C sees it in the scratch buffer: `None` when it does not
/// fit (`limit` bytes including the terminator); a NUL ends it early.
fn scratch(text: &str, limit: usize) -> Option<CString> {
    if text.len() >= limit {
        return None;
    }
    let end = text.find('\0').unwrap_or(text.len());
    CString::new(&text[..end]).ok()
}

/// Runs `f` with `errno` cleared: its result, whether it read anything,
/// and whether it set `ERANGE`.
fn call<T>(c: &CString, f: impl FnOnce(*const c_char, *mut *mut c_char) -> T) -> (T, bool, bool) {
    let (v, read, _, range) = call_whole(c, f);
    (v, read > 0, range)
}

/// Like `call`, with the number of bytes read and whether that was all of
/// the text.
fn call_whole<T>(
    c: &CString,
    f: impl FnOnce(*const c_char, *mut *mut c_char) -> T,
) -> (T, usize, bool, bool) {
    let start = c.as_ptr();
    let mut end: *mut c_char = std::ptr::null_mut();
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = 0 };
    let v = f(start, &mut end);
    // SAFETY: as above.
    let range = unsafe { *libc::__errno_location() } == libc::ERANGE;
    let read = if end.is_null() {
        0
    } else {
        // `end` points into the buffer `c` owns, at or after `start`.
        (end as usize).saturating_sub(start as usize)
    };
    (v, read, read == c.as_bytes().len(), range)
}

/// `strtol` (a 64-bit `long`) with the overflow check; `None` as C refuses.
fn signed(text: &str, limit: usize) -> Option<i64> {
    let c = scratch(text, limit)?;
    // SAFETY: `s` is NUL-terminated and owned by `c` for the call; `end`
    // points to a local the function writes once.
    let (v, read, range) = call(&c, |s, end| unsafe { libc::strtoll(s, end, 0) });
    if !read || (range && (v == i64::MIN || v == i64::MAX)) {
        return None;
    }
    (v != 0 || !range).then_some(v)
}

/// `strtoul` (64-bit) with the overflow check.
fn unsigned(text: &str, limit: usize) -> Option<u64> {
    let c = scratch(text, limit)?;
    // SAFETY: as in `signed`.
    let (v, read, range) = call(&c, |s, end| unsafe { libc::strtoull(s, end, 0) });
    if !read || (range && v == u64::MAX) {
        return None;
    }
    (v != 0 || !range).then_some(v)
}

/// `iree_string_view_atoi_int32`: the low 32 bits of a `long`.
pub fn atoi_i32(text: &str) -> Option<i32> {
    signed(text, 16).map(|v| v as i32)
}

/// `iree_string_view_atoi_uint32`: the low 32 bits of an `unsigned long`.
pub fn atoi_u32(text: &str) -> Option<u32> {
    unsigned(text, 16).map(|v| v as u32)
}

/// `iree_string_view_atoi_int64`.
pub fn atoi_i64(text: &str) -> Option<i64> {
    signed(text, 32)
}

/// `iree_string_view_atoi_uint64`.
pub fn atoi_u64(text: &str) -> Option<u64> {
    unsigned(text, 32)
}

/// `iree_string_view_atof` (`strtof`).
pub fn atof(text: &str) -> Option<f32> {
    let c = scratch(text, 32)?;
    // SAFETY: as in `signed`.
    let (v, read, range) = call(&c, |s, end| unsafe { libc::strtof(s, end) });
    (read && (v != 0.0 || !range)).then_some(v)
}

/// `iree_string_view_atod` (`strtod`).
pub fn atod(text: &str) -> Option<f64> {
    let c = scratch(text, 32)?;
    // SAFETY: as in `signed`.
    let (v, read, range) = call(&c, |s, end| unsafe { libc::strtod(s, end) });
    (read && (v != 0.0 || !range)).then_some(v)
}

/// A float immediate as `iree-as-module` reads one
/// (`iree_vm_bytecode_assembler_parse_f32`/`_f64`): the trimmed text,
/// under 64 bytes, read whole by the C function, refused when it sets
/// `ERANGE` (overflow, and results in the subnormal range or flushed to
/// zero: `1e-320` as an f64).
fn assembler_float<T>(
    text: &str,
    f: impl FnOnce(*const c_char, *mut *mut c_char) -> T,
) -> Option<T> {
    let text = text.trim();
    if text.is_empty() || text.len() >= 64 || text.contains('\0') {
        return None;
    }
    let c = CString::new(text).ok()?;
    let (v, read, whole, range) = call_whole(&c, f);
    (read > 0 && whole && !range).then_some(v)
}

/// An f32 immediate of the VM assembly (`vm.const.f32 0x1p3`), as
/// `iree-as-module` reads it with `strtof`.
pub fn assembler_f32(text: &str) -> Option<f32> {
    // SAFETY: as in `signed`.
    assembler_float(text, |s, end| unsafe { libc::strtof(s, end) })
}

/// An f64 immediate of the VM assembly, as `iree-as-module` reads it with
/// `strtod`.
pub fn assembler_f64(text: &str) -> Option<f64> {
    // SAFETY: as in `signed`.
    assembler_float(text, |s, end| unsafe { libc::strtod(s, end) })
}

/// All of `text` read as a number by C's `strtod`, hex floats
/// included (`0x1.8p1` is 3), with no range check (overflow is infinite,
/// underflow subnormal or zero, as C rounds); `None` unless the whole
/// text is the number. gdb reads its float literals this way (a debugger
/// expression's `0x1.8p1`).
pub fn strtod_whole(text: &str) -> Option<f64> {
    let c = CString::new(text).ok()?;
    // SAFETY: as in `signed`.
    let (v, read, whole, _) = call_whole(&c, |s, end| unsafe { libc::strtod(s, end) });
    (read > 0 && whole).then_some(v)
}

/// [`strtod_whole`] with `strtof`: the text rounded once, to an f32.
pub fn strtof_whole(text: &str) -> Option<f32> {
    let c = CString::new(text).ok()?;
    // SAFETY: as in `signed`.
    let (v, read, whole, _) = call_whole(&c, |s, end| unsafe { libc::strtof(s, end) });
    (read > 0 && whole).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "calls the C library, which Miri cannot")]
    fn integers_read_like_strtol() {
        assert_eq!(atoi_i32("017"), Some(15));
        assert_eq!(atoi_i32("0x1F"), Some(31));
        assert_eq!(atoi_i32("+7"), Some(7));
        assert_eq!(atoi_i32("5abc"), Some(5));
        assert_eq!(atoi_i32("4294967297"), Some(1));
        assert_eq!(atoi_i32("abc"), None);
        assert_eq!(atoi_i32("1234567890123456"), None);
        assert_eq!(atoi_u32("-1"), Some(u32::MAX));
        assert_eq!(atoi_i64("99999999999999999999"), None);
        assert_eq!(atoi_u64("18446744073709551615"), Some(u64::MAX));
        assert_eq!(atoi_u64("18446744073709551616"), None);
    }

    #[test]
    #[cfg_attr(miri, ignore = "calls the C library, which Miri cannot")]
    fn floats_read_like_strtod() {
        assert_eq!(atod("0x1p3"), Some(8.0));
        assert_eq!(atof("1.5xyz"), Some(1.5));
        assert_eq!(atod("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(atod("1e-400"), None);
        assert_eq!(atof("1e-50"), None);
        assert_eq!(atof("1e400"), Some(f32::INFINITY));
        assert_eq!(atof("x"), None);
    }

    #[test]
    #[cfg_attr(miri, ignore = "calls the C library, which Miri cannot")]
    fn assembler_floats_read_whole_and_in_range() {
        assert_eq!(assembler_f32("0x1p3"), Some(8.0));
        assert_eq!(strtod_whole("0x1.8p1"), Some(3.0));
        assert_eq!(strtod_whole("0x1p-1074"), Some(5e-324));
        assert_eq!(strtod_whole("1e400"), Some(f64::INFINITY));
        assert_eq!(strtod_whole("0x1p"), None);
        assert_eq!(strtof_whole("0x1.000001p0"), Some(1.0));
        assert_eq!(assembler_f32(" 1e3 "), Some(1000.0));
        assert_eq!(assembler_f32("1.5x"), None);
        assert_eq!(assembler_f32("1e300"), None);
        assert_eq!(assembler_f32("1e-40"), None);
        assert_eq!(assembler_f32("-inf").map(f32::is_infinite), Some(true));
        assert_eq!(assembler_f32("nan").map(f32::is_nan), Some(true));
        assert_eq!(assembler_f64("1.0e-320"), None);
        assert_eq!(assembler_f64("4.9e-324"), None);
        assert_eq!(
            assembler_f64("2.2250738585072014e-308"),
            Some(f64::MIN_POSITIVE)
        );
        assert_eq!(assembler_f32("3.4e38"), Some(3.4e38));
        assert_eq!(assembler_f32("1.17549435e-38"), Some(f32::MIN_POSITIVE));
        assert_eq!(
            assembler_f32("-0").map(f32::to_bits),
            Some((-0.0f32).to_bits())
        );
        assert_eq!(assembler_f64("1e-310"), None);
        assert_eq!(assembler_f64("1e400"), None);
        assert_eq!(assembler_f64("1e300"), Some(1e300));
        assert_eq!(assembler_f64("0.0"), Some(0.0));
        assert_eq!(assembler_f64(""), None);
        assert_eq!(assembler_f64(&"1".repeat(64)), None);
    }
}
