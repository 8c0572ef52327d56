//! Checked little-endian reads from a file's bytes: every read names the
//! absolute offset it wants and gets `None` when the bytes are not there
//! (past the end, or an offset that overflows), never a panic.

/// `len` bytes of `bytes` from `at`, if all of them are there.
pub(crate) fn slice(bytes: &[u8], at: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(at).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}

/// The `N` bytes at `at`.
fn array<const N: usize>(bytes: &[u8], at: u64) -> Option<[u8; N]> {
    slice(bytes, at, N as u64)?.try_into().ok()
}

/// The little-endian `u16` at `at`.
pub(crate) fn u16_at(bytes: &[u8], at: u64) -> Option<u16> {
    array(bytes, at).map(u16::from_le_bytes)
}

/// The little-endian `u32` at `at`.
pub(crate) fn u32_at(bytes: &[u8], at: u64) -> Option<u32> {
    array(bytes, at).map(u32::from_le_bytes)
}

/// The little-endian `u64` at `at`.
pub(crate) fn u64_at(bytes: &[u8], at: u64) -> Option<u64> {
    array(bytes, at).map(u64::from_le_bytes)
}

/// `value` rounded up to a multiple of `alignment` (a power of two), or
/// `None` when that overflows.
pub(crate) fn align_up(value: u64, alignment: u64) -> Option<u64> {
    debug_assert!(alignment.is_power_of_two());
    let mask = alignment - 1;
    Some(value.checked_add(mask)? & !mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_end_and_at_overflow() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(u32_at(&b, 0), Some(0x0403_0201));
        assert_eq!(u32_at(&b, 4), Some(0x0807_0605));
        assert_eq!(u32_at(&b, 5), None);
        assert_eq!(u64_at(&b, 0), Some(0x0807_0605_0403_0201));
        assert_eq!(u16_at(&b, 7), None);
        assert_eq!(slice(&b, u64::MAX, 2), None);
        assert_eq!(slice(&b, 2, u64::MAX), None);
        assert_eq!(slice(&b, 8, 0), Some(&[][..]));
        assert_eq!(align_up(17, 16), Some(32));
        assert_eq!(align_up(u64::MAX - 3, 16), None);
    }
}
