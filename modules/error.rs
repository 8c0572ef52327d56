//! Errors of the loader layer.

use std::path::PathBuf;

/// Why a module could not be loaded. Each variant names what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or mapped.
    #[error("cannot read module '{path}': {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is too short to hold a module.
    #[error("module is truncated: {what} needs {needed} bytes but only {available} are present")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// The ZIP local-file header claims more than the file holds.
    #[error("archive self-reports as a ZIP but its header ({header_len} bytes) exceeds the file ({file_len} bytes)")]
    BadZipHeader {
        /// Header length including name and extra fields.
        header_len: u64,
        /// File length.
        file_len: u64,
    },
    /// The size prefix of the FlatBuffer points past the end of the file.
    #[error("FlatBuffer size prefix out of bounds: prefix says {prefix} bytes but only {available} follow it")]
    SizePrefixOutOfBounds {
        /// The prefix value.
        prefix: u64,
        /// Bytes after the prefix.
        available: u64,
    },
    /// The FlatBuffer does not carry the `IREE` file identifier.
    #[error("not an IREE bytecode module: file identifier is {found:?}, expected \"IREE\"")]
    BadIdentifier {
        /// The four bytes found.
        found: String,
    },
    /// The FlatBuffer failed verification.
    #[error("malformed module FlatBuffer: {0}")]
    Malformed(#[from] flatbuffers::InvalidFlatbuffer),
    /// The bytecode version is not one this runtime executes.
    #[error("bytecode version mismatch: expected {expected_major}.x (x <= {expected_minor}), found {major}.{minor}")]
    BytecodeVersion {
        /// Found major version.
        major: u32,
        /// Found minor version.
        minor: u32,
        /// Supported major.
        expected_major: u32,
        /// Newest supported minor.
        expected_minor: u32,
    },
    /// The module needs runtime features this build lacks.
    #[error("required module features [{missing}] are not available; have [{available}] while module requires [{required}]")]
    MissingFeatures {
        /// Needed but unavailable.
        missing: String,
        /// What this runtime offers.
        available: String,
        /// What the module asks for.
        required: String,
    },
    /// A structural inconsistency between tables.
    #[error("invalid module: {0}")]
    Invalid(String),
    /// A function descriptor points outside `bytecode_data`.
    #[error("function {ordinal} bytecode range [{offset}, {offset}+{length}) is outside bytecode_data ({data_len} bytes)")]
    FunctionOutOfBounds {
        /// Function ordinal.
        ordinal: usize,
        /// Descriptor offset.
        offset: i64,
        /// Descriptor length.
        length: i64,
        /// Size of bytecode_data.
        data_len: usize,
    },
    /// An external rodata segment lies outside the file.
    #[error("rodata segment {ordinal} external range [{start}, {start}+{length}) is outside the file ({file_len} bytes)")]
    RodataOutOfBounds {
        /// Segment ordinal.
        ordinal: usize,
        /// Absolute file offset of the segment.
        start: u64,
        /// Segment length.
        length: u64,
        /// File length.
        file_len: u64,
    },
    /// Assembling a `.vmasm` text module failed.
    #[error("{0}")]
    Assembly(String),
}
