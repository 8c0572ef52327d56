//! Parameter archive formats: each reader turns a whole file's bytes into
//! the list of its entries, checked against the file's length, without
//! copying any parameter's data.
//!
//! - [`irpa`]: IREE's own parameter archive (`.irpa`).
//! - [`safetensors`]: Hugging Face's safetensors (`.safetensors`).
//! - [`gguf`]: ggml's GGUF, versions 2 and 3 (`.gguf`).
//!
//! [`irpa_writer`] writes `.irpa` archives laid out as IREE's tools write
//! them. The readers use checked arithmetic only, allocate in proportion
//! to the file's length at most, and return an error, never panic, on any
//! bytes (the fuzz targets `params_irpa`, `params_safetensors` and
//! `params_gguf` check it).

mod bytes;
pub mod gguf;
pub mod irpa;
pub mod irpa_writer;
pub mod safetensors;

use std::path::Path;

/// The formats irvm reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// IREE parameter archive.
    Irpa,
    /// safetensors.
    Safetensors,
    /// GGUF (v2, v3).
    Gguf,
}

impl Format {
    /// The format of `path` by its extension, as IREE picks it
    /// (`.irpa`, `.safetensors`, `.gguf`; case-insensitive).
    pub fn from_path(path: &Path) -> Option<Format> {
        Format::from_name(path.extension()?.to_str()?)
    }

    /// The format a name gives explicitly, as IREE's parser registry takes
    /// it for an archive without a path (a file handle's): `irpa`,
    /// `safetensors` or `gguf`, with or without a leading dot,
    /// case-insensitive.
    pub fn from_name(name: &str) -> Option<Format> {
        let name = name.strip_prefix('.').unwrap_or(name).to_ascii_lowercase();
        match name.as_str() {
            "irpa" => Some(Format::Irpa),
            "safetensors" => Some(Format::Safetensors),
            "gguf" => Some(Format::Gguf),
            _ => None,
        }
    }

    /// The format of an archive held in memory, by its first bytes: `IRPA`
    /// and `GGUF` start with their magic; anything else is read as
    /// safetensors (an 8-byte header length, then JSON), whose reader
    /// says what is wrong with bytes that are none of the three.
    pub fn from_magic(bytes: &[u8]) -> Format {
        match bytes.get(..4) {
            Some(b"IRPA") => Format::Irpa,
            Some(b"GGUF") => Format::Gguf,
            _ => Format::Safetensors,
        }
    }

    /// The format's usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Irpa => "irpa",
            Format::Safetensors => "safetensors",
            Format::Gguf => "gguf",
        }
    }
}

/// Where an entry's bytes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryData {
    /// `length` bytes of the file from byte `offset` (absolute, checked:
    /// `offset + length` is at most the file's length).
    Data {
        /// First byte, from the start of the file.
        offset: u64,
        /// Length in bytes.
        length: u64,
    },
    /// `length` bytes repeating `pattern` (1 to 16 bytes; `length` is not
    /// necessarily a multiple of it: the last repetition is cut short).
    Splat {
        /// The repeated bytes.
        pattern: Vec<u8>,
        /// Length in bytes.
        length: u64,
    },
}

impl EntryData {
    /// The entry's length in bytes.
    pub fn length(&self) -> u64 {
        match self {
            EntryData::Data { length, .. } | EntryData::Splat { length, .. } => *length,
        }
    }
}

/// One named parameter of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveEntry {
    /// The key modules name it by.
    pub key: String,
    /// Its bytes.
    pub data: EntryData,
    /// The format's own description of it, for `irvm params dump`
    /// (irpa: the entry's metadata bytes; safetensors: dtype and shape;
    /// gguf: the ggml type and dimensions), as text.
    pub info: String,
}

/// Why an archive could not be read: the problem and where in the file.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("{format:?} archive: {message} (at byte {offset})")]
pub struct ArchiveError {
    /// The format being read.
    pub format: Format,
    /// What is wrong.
    pub message: String,
    /// The byte of the file where it was found.
    pub offset: u64,
    /// Whether the file ends before something it declares (a header, a
    /// segment, an entry): IREE's readers call that OUT_OF_RANGE, other
    /// bad values INVALID_ARGUMENT.
    pub out_of_range: bool,
    /// Whether the file is of a version of the format this reader does not
    /// read: IREE's readers call that UNIMPLEMENTED.
    pub unsupported: bool,
}

impl ArchiveError {
    /// A bad value in a `format` file, found at byte `offset`.
    pub fn new(format: Format, offset: u64, message: String) -> ArchiveError {
        ArchiveError {
            format,
            message,
            offset,
            out_of_range: false,
            unsupported: false,
        }
    }

    /// A `format` file that ends before what it declares (OUT_OF_RANGE).
    pub fn short(format: Format, offset: u64, message: String) -> ArchiveError {
        ArchiveError {
            out_of_range: true,
            ..ArchiveError::new(format, offset, message)
        }
    }

    /// A `format` file of a version this reader does not read
    /// (UNIMPLEMENTED).
    pub fn unsupported(format: Format, offset: u64, message: String) -> ArchiveError {
        ArchiveError {
            unsupported: true,
            ..ArchiveError::new(format, offset, message)
        }
    }

    /// The status IREE's readers fail with for this error: OUT_OF_RANGE
    /// for a file that ends before what it declares, UNIMPLEMENTED for a
    /// version not read, INVALID_ARGUMENT for other bad values.
    pub fn code(&self) -> irvm::StatusCode {
        if self.out_of_range {
            irvm::StatusCode::OutOfRange
        } else if self.unsupported {
            irvm::StatusCode::Unimplemented
        } else {
            irvm::StatusCode::InvalidArgument
        }
    }
}

/// Reads every entry of `bytes`, a whole file in `format`. Entries are in
/// file order. A key that appears twice is listed twice, as IREE's parsers
/// list it: IREE's parameter index (`parameter_index.c`) adds entries
/// without looking for an earlier one of the same key, and its lookup
/// returns the first; an index built on these entries should do the same
/// (first wins) to resolve parameters as IREE does.
pub fn read_entries(format: Format, bytes: &[u8]) -> Result<Vec<ArchiveEntry>, ArchiveError> {
    not_empty(format, bytes)?;
    match format {
        Format::Irpa => irpa::read(bytes),
        Format::Safetensors => safetensors::read(bytes),
        Format::Gguf => gguf::read(bytes),
    }
}

/// Refuses an empty file or buffer as an archive of `format`, saying so
/// (INVALID_ARGUMENT, as IREE refuses to map an empty file), rather than
/// what the format's reader finds missing first.
pub fn not_empty(format: Format, bytes: &[u8]) -> Result<(), ArchiveError> {
    if bytes.is_empty() {
        return Err(ArchiveError::new(
            format,
            0,
            format!(
                "the archive is empty (0 bytes), so no .{} archive",
                format.extension()
            ),
        ));
    }
    Ok(())
}

/// Opens `path` to read an archive without waiting on it: a FIFO (which
/// would block until a writer came) or another special file is refused;
/// a directory is opened (the caller says so).
pub fn open_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() && !kind.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device cannot hold an archive)",
        ));
    }
    Ok(file)
}

/// A whole file's bytes, memory-mapped read-only (an empty file maps to no
/// bytes). Pages the file loses while mapped read as zeros
/// ([`irvm::file_map`]); [`FileBytes::lost`] says whether that happened.
pub struct FileBytes {
    map: Option<irvm::file_map::FileMap>,
    /// The open file, with its length and modification time when mapped.
    file: Option<(std::fs::File, u64, Option<std::time::SystemTime>)>,
}

impl FileBytes {
    /// Whether the file changed since it was mapped: a read found pages it
    /// lost (they read as zeros), or its length or modification time is
    /// not what it was (truncated or rewritten): what was read is not what
    /// the file held.
    pub fn lost(&self) -> bool {
        if self.map.as_ref().is_some_and(|m| m.lost()) {
            return true;
        }
        self.file.as_ref().is_some_and(|(f, len, modified)| {
            f.metadata()
                .map_or(true, |m| m.len() != *len || m.modified().ok() != *modified)
        })
    }
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

/// Maps the file at `path` to read it with [`read_entries`]. The readers
/// check every offset against the length mapped here, so bytes another
/// process changes meanwhile give wrong entries or errors, never reads
/// outside the map; a file that shrinks reads as zeros past its new end.
pub fn map_file(path: &Path) -> std::io::Result<FileBytes> {
    let file = open_file(path)?;
    if file.metadata()?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "a directory, not an archive file",
        ));
    }
    let metadata = file.metadata()?;
    if metadata.len() == 0 {
        return Ok(FileBytes {
            map: None,
            file: None,
        });
    }
    let map = irvm::file_map::FileMap::new(&file, false)?;
    Ok(FileBytes {
        map: Some(map),
        file: Some((file, metadata.len(), metadata.modified().ok())),
    })
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn archives_in_memory_are_told_apart_by_their_magic() {
        assert_eq!(Format::from_magic(b"IRPA\0\0\0\0"), Format::Irpa);
        assert_eq!(Format::from_magic(b"GGUF\x03\0\0\0"), Format::Gguf);
        assert_eq!(
            Format::from_magic(b"\x10\0\0\0\0\0\0\0{}"),
            Format::Safetensors
        );
        assert_eq!(Format::from_magic(b"IR"), Format::Safetensors);
    }

    #[test]
    fn formats_are_named_as_iree_names_them() {
        assert_eq!(Format::from_name("irpa"), Some(Format::Irpa));
        assert_eq!(Format::from_name(".IRPA"), Some(Format::Irpa));
        assert_eq!(Format::from_name("SafeTensors"), Some(Format::Safetensors));
        assert_eq!(Format::from_name(".gguf"), Some(Format::Gguf));
        assert_eq!(Format::from_name(""), None);
        assert_eq!(Format::from_name("..irpa"), None);
        assert_eq!(Format::from_name("bin"), None);
        assert_eq!(
            Format::from_path(std::path::Path::new("dir.gguf/m.Irpa")),
            Some(Format::Irpa)
        );
        assert_eq!(Format::from_path(std::path::Path::new("m")), None);
    }
}
