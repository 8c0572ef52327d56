//! The `gguf` reader (to be written).

use super::{ArchiveEntry, ArchiveError, Format};

/// Reads every entry of a `.gguf` file.
pub fn read(bytes: &[u8]) -> Result<Vec<ArchiveEntry>, ArchiveError> {
    let _ = bytes;
    Err(ArchiveError {
        format: Format::Gguf,
        message: "not written yet".into(),
        offset: 0,
    })
}
