//! The archive layout of a `.vmfb` file:
//!
//! ```text
//! [optional ZIP local-file header + name + extra]   (iree-compile output)
//! u32 little-endian size prefix N
//! N bytes of FlatBuffer (identifier "IREE" at bytes 4..8)
//! padding to a 64-byte boundary (in file offsets)
//! external rodata segments, at external_data_offset from that boundary
//! ```

use super::error::LoadError;

const ZIP_LOCAL_FILE_HEADER_SIGNATURE: u32 = 0x0403_4B50;
const ZIP_LOCAL_FILE_HEADER_LEN: usize = 30;
/// Alignment of the external rodata area.
pub const SEGMENT_ALIGNMENT: u64 = 64;

/// Where the parts of an archive are, as file offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchiveLayout {
    /// First byte of the FlatBuffer (after the size prefix).
    pub flatbuffer_start: usize,
    /// FlatBuffer length from the size prefix.
    pub flatbuffer_len: usize,
    /// File offset that external rodata offsets are relative to.
    pub rodata_base: u64,
}

fn read_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Length of the ZIP local-file header at the start of `bytes`, or 0.
fn zip_header_len(bytes: &[u8]) -> Result<usize, LoadError> {
    if bytes.len() < ZIP_LOCAL_FILE_HEADER_LEN
        || read_u32(bytes, 0) != ZIP_LOCAL_FILE_HEADER_SIGNATURE
    {
        return Ok(0);
    }
    let name_len = read_u16(bytes, 26) as usize;
    let extra_len = read_u16(bytes, 28) as usize;
    let len = ZIP_LOCAL_FILE_HEADER_LEN + name_len + extra_len;
    if len > bytes.len() {
        return Err(LoadError::BadZipHeader {
            header_len: len as u64,
            file_len: bytes.len() as u64,
        });
    }
    Ok(len)
}

/// Finds the FlatBuffer and the external rodata base in an archive.
pub fn parse(bytes: &[u8]) -> Result<ArchiveLayout, LoadError> {
    let start = zip_header_len(bytes)?;
    let rest = bytes.len() - start;
    if rest < 16 {
        return Err(LoadError::Truncated {
            what: "the FlatBuffer header",
            needed: 16,
            available: rest as u64,
        });
    }
    let prefix = read_u32(bytes, start) as usize;
    let available = rest - 4;
    if prefix > available {
        return Err(LoadError::SizePrefixOutOfBounds {
            prefix: prefix as u64,
            available: available as u64,
        });
    }
    let flatbuffer_start = start + 4;
    let end = (flatbuffer_start + prefix) as u64;
    let rodata_base = end.div_ceil(SEGMENT_ALIGNMENT) * SEGMENT_ALIGNMENT;
    Ok(ArchiveLayout {
        flatbuffer_start,
        flatbuffer_len: prefix,
        rodata_base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_zip_archives() {
        let mut plain = vec![20u8, 0, 0, 0];
        plain.extend_from_slice(&[0; 20]);
        let l = parse(&plain).unwrap();
        assert_eq!(
            (l.flatbuffer_start, l.flatbuffer_len, l.rodata_base),
            (4, 20, 64)
        );

        let mut zip = Vec::new();
        zip.extend_from_slice(&ZIP_LOCAL_FILE_HEADER_SIGNATURE.to_le_bytes());
        zip.extend_from_slice(&[0; 22]);
        zip.extend_from_slice(&9u16.to_le_bytes()); // name length
        zip.extend_from_slice(&3u16.to_le_bytes()); // extra length
        zip.extend_from_slice(b"module.fbxyz");
        zip.extend_from_slice(&plain);
        let l = parse(&zip).unwrap();
        assert_eq!(l.flatbuffer_start, 42 + 4);
        assert_eq!(l.rodata_base, 128);
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(matches!(
            parse(&[1, 2, 3]),
            Err(LoadError::Truncated { .. })
        ));
        let mut big = vec![0xFF, 0xFF, 0, 0];
        big.extend_from_slice(&[0; 20]);
        assert!(matches!(
            parse(&big),
            Err(LoadError::SizePrefixOutOfBounds { prefix: 65535, .. })
        ));
        let mut zip = ZIP_LOCAL_FILE_HEADER_SIGNATURE.to_le_bytes().to_vec();
        zip.extend_from_slice(&[0xFF; 40]);
        assert!(matches!(parse(&zip), Err(LoadError::BadZipHeader { .. })));
    }
}
