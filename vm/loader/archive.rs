//! The archive layout of a `.vmfb` file.
//!
//! ```text
//! [ZIP local-file header]   optional; present in iree-compile output
//! u32 size prefix N         little endian
//! FlatBuffer (N bytes)      identifier "IREE" at its bytes 4..8
//! padding to 64 bytes       alignment is in file coordinates
//! external rodata           segment offsets are relative to this base
//! ```

use std::ops::Range;

use super::error::LoadError;

/// ZIP local-file header signature `PK\x03\x04`, little endian.
pub const ZIP_LOCAL_FILE_SIGNATURE: u32 = 0x0403_4B50;
/// Fixed part of a ZIP local-file header.
pub const ZIP_LOCAL_FILE_HEADER_LEN: usize = 30;
/// Alignment of the external rodata base, in file coordinates.
pub const SEGMENT_ALIGNMENT: u64 = 64;
/// The FlatBuffer file identifier.
pub const FILE_IDENTIFIER: [u8; 4] = *b"IREE";
/// Smallest size-prefixed FlatBuffer worth looking at.
const MIN_FLATBUFFER_LEN: usize = 16;

/// Where the parts of an archive are, in file coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveLayout {
    /// Bytes of the FlatBuffer (after the size prefix).
    pub flatbuffer: Range<usize>,
    /// Start of external rodata: the FlatBuffer's end aligned up to 64.
    pub rodata_base: u64,
}

/// Locates the FlatBuffer and the external rodata base in `file`.
pub fn parse(file: &[u8]) -> Result<ArchiveLayout, LoadError> {
    let start = zip_payload_offset(file)?;
    let module = &file[start..];
    if module.len() < MIN_FLATBUFFER_LEN {
        return Err(LoadError::Truncated {
            available: module.len() as u64,
        });
    }
    let prefix = u32::from_le_bytes([module[0], module[1], module[2], module[3]]) as usize;
    let available = module.len() - 4;
    if prefix > available {
        return Err(LoadError::SizePrefixOutOfBounds {
            prefix: prefix as u64,
            available: available as u64,
        });
    }
    let fb_start = start + 4;
    let fb_end = fb_start + prefix;
    let flatbuffer = fb_start..fb_end;
    let ident = file.get(fb_start + 4..fb_start + 8).unwrap_or(&[]);
    if ident != FILE_IDENTIFIER {
        let mut found = [0u8; 4];
        found[..ident.len()].copy_from_slice(ident);
        return Err(LoadError::BadIdentifier { found });
    }
    let rodata_base =
        align_up(fb_end as u64, SEGMENT_ALIGNMENT).ok_or_else(|| LoadError::Overflow {
            what: "external rodata base".to_string(),
        })?;
    Ok(ArchiveLayout {
        flatbuffer,
        rodata_base,
    })
}

/// Offset of the data after a leading ZIP local-file header, or 0 without
/// one. Files shorter than the fixed header are never treated as ZIPs.
fn zip_payload_offset(file: &[u8]) -> Result<usize, LoadError> {
    if file.len() < ZIP_LOCAL_FILE_HEADER_LEN {
        return Ok(0);
    }
    let u16_at = |at: usize| u16::from_le_bytes([file[at], file[at + 1]]) as usize;
    let signature = u32::from_le_bytes([file[0], file[1], file[2], file[3]]);
    if signature != ZIP_LOCAL_FILE_SIGNATURE {
        return Ok(0);
    }
    let name_len = u16_at(26);
    let extra_len = u16_at(28);
    let header_len = ZIP_LOCAL_FILE_HEADER_LEN + name_len + extra_len;
    if header_len > file.len() {
        return Err(LoadError::ZipHeaderTooShort {
            header_len: header_len as u64,
            file_len: file.len() as u64,
        });
    }
    Ok(header_len)
}

/// `value` rounded up to a multiple of `align` (a power of two).
pub fn align_up(value: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    Some(value.checked_add(align - 1)? & !(align - 1))
}

/// File range of an external segment, if it lies inside a file of
/// `file_len` bytes.
pub fn external_range(base: u64, offset: u64, length: u64, file_len: u64) -> Option<Range<u64>> {
    let start = base.checked_add(offset)?;
    let end = start.checked_add(length)?;
    (end <= file_len).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size_prefixed(body_len: usize) -> Vec<u8> {
        let mut out = (body_len as u32).to_le_bytes().to_vec();
        let mut body = vec![0u8; body_len];
        body[4..8].copy_from_slice(b"IREE");
        out.extend(body);
        out
    }

    #[test]
    fn plain_layout() {
        let file = size_prefixed(20);
        let layout = parse(&file).unwrap();
        assert_eq!(layout.flatbuffer, 4..24);
        assert_eq!(layout.rodata_base, 64);
    }

    #[test]
    fn zip_header_is_skipped() {
        let mut file = vec![0u8; 30];
        file[..4].copy_from_slice(&ZIP_LOCAL_FILE_SIGNATURE.to_le_bytes());
        file[26] = 3; // name length
        file[28] = 5; // extra length
        file.extend([b'x'; 8]);
        file.extend(size_prefixed(100));
        let layout = parse(&file).unwrap();
        assert_eq!(layout.flatbuffer, 42..142);
        assert_eq!(layout.rodata_base, 192);
    }

    #[test]
    fn zip_header_longer_than_file() {
        let mut file = vec![0u8; 40];
        file[..4].copy_from_slice(&ZIP_LOCAL_FILE_SIGNATURE.to_le_bytes());
        file[26] = 0xff;
        let err = parse(&file).unwrap_err();
        assert!(matches!(
            err,
            LoadError::ZipHeaderTooShort {
                header_len: 285,
                file_len: 40
            }
        ));
    }

    #[test]
    fn short_and_bad_prefix() {
        assert!(matches!(
            parse(&[0; 8]),
            Err(LoadError::Truncated { available: 8 })
        ));
        let mut file = size_prefixed(20);
        file[3] = 0x80;
        let err = parse(&file).unwrap_err();
        assert!(
            matches!(err, LoadError::SizePrefixOutOfBounds { available: 20, .. }),
            "{err}"
        );
        let mut file = size_prefixed(20);
        file[4 + 4] = b'X';
        assert!(
            matches!(parse(&file), Err(LoadError::BadIdentifier { found }) if &found == b"XREE")
        );
    }

    #[test]
    fn external_range_is_checked() {
        assert_eq!(external_range(64, 0, 10, 74), Some(64..74));
        assert_eq!(external_range(64, 0, 11, 74), None);
        assert_eq!(external_range(64, u64::MAX, 1, u64::MAX), None);
        assert_eq!(align_up(u64::MAX, 64), None);
    }
}
