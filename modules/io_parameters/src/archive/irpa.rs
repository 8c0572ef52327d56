//! The `irpa` reader (to be written).

use super::{ArchiveEntry, ArchiveError, Format};

/// Reads every entry of a `.irpa` file.
pub fn read(bytes: &[u8]) -> Result<Vec<ArchiveEntry>, ArchiveError> {
    let _ = bytes;
    Err(ArchiveError {
        format: Format::Irpa,
        message: "not written yet".into(),
        offset: 0,
    })
}
