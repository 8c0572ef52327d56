//! Errors reported while loading a module. Each variant names what is wrong
//! and carries the numbers needed to see why.

use std::path::PathBuf;

use super::features::FeatureBits;

/// Why a `.vmfb` could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be opened or mapped.
    #[error("cannot read module file {path}: {source}")]
    Io {
        /// The file that was being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A ZIP local-file header claims more bytes than the file holds.
    #[error(
        "archive starts with a ZIP header of {header_len} bytes but the file has only {file_len} bytes"
    )]
    ZipHeaderTooShort {
        /// 30 + file name length + extra field length.
        header_len: u64,
        /// Total file length.
        file_len: u64,
    },

    /// Fewer bytes than a size prefix plus a FlatBuffer header need.
    #[error(
        "truncated module: {available} bytes after the archive header, at least 16 are needed"
    )]
    Truncated {
        /// Bytes available where the size-prefixed FlatBuffer should start.
        available: u64,
    },

    /// The u32 size prefix points past the end of the data.
    #[error(
        "FlatBuffer size prefix out of bounds: prefix says {prefix} bytes but only {available} are available"
    )]
    SizePrefixOutOfBounds {
        /// The size prefix as read.
        prefix: u64,
        /// Bytes after the prefix.
        available: u64,
    },

    /// Bytes 4..8 of the FlatBuffer are not `IREE`.
    #[error("bad file identifier: expected \"IREE\", found {}", show_bytes(found))]
    BadIdentifier {
        /// The four bytes found.
        found: [u8; 4],
    },

    /// The FlatBuffer is structurally invalid.
    #[error("FlatBuffer verification failed: {message}")]
    Verification {
        /// The verifier's description (includes the failing field path).
        message: String,
    },

    /// The FlatBuffer breaks a structural rule IREE's verifier (flatcc)
    /// checks: a table's size or fields, a zero offset, a union.
    #[error("FlatBuffer verification failed: {what} at byte {offset}: {reason}")]
    Structure {
        /// The table, field, vector or string, by its path from the root.
        what: String,
        /// Byte of the FlatBuffer (after the size prefix) where it is.
        offset: usize,
        /// Which rule it breaks.
        reason: String,
    },

    /// The bytecode major version differs or the minor version is newer.
    #[error(
        "bytecode version mismatch: expected {expected_major}.x with minor <= {expected_minor}, found {major}.{minor}"
    )]
    UnsupportedVersion {
        /// Major version of the module.
        major: u16,
        /// Minor version of the module.
        minor: u16,
        /// Major version this runtime executes.
        expected_major: u16,
        /// Newest minor version this runtime executes.
        expected_minor: u16,
    },

    /// The module (or one function) needs features this runtime lacks.
    #[error("{context} requires unsupported features: {missing}")]
    UnsupportedFeatures {
        /// `module` or `functions[i]`.
        context: String,
        /// The bits that are required but not supported.
        missing: FeatureBits,
    },

    /// A required field is absent or empty.
    #[error("missing required field: {field}")]
    MissingField {
        /// Path of the field, e.g. `name` or `imports[2].full_name`.
        field: String,
    },

    /// A signed count or size is negative.
    #[error("{field} is negative ({value})")]
    NegativeValue {
        /// Path of the field.
        field: String,
        /// The value found.
        value: i64,
    },

    /// The signature and descriptor tables disagree in length.
    #[error(
        "function table length mismatch: {signatures} signatures but {descriptors} descriptors"
    )]
    FunctionTableMismatch {
        /// Number of function signatures.
        signatures: usize,
        /// Number of function descriptors.
        descriptors: usize,
    },

    /// An export refers to a function that does not exist.
    #[error(
        "exports[{export}] internal_ordinal {ordinal} out of bounds: module has {count} functions"
    )]
    ExportOrdinalOutOfBounds {
        /// Index in the export table.
        export: usize,
        /// The ordinal found.
        ordinal: i64,
        /// Number of internal functions.
        count: usize,
    },

    /// A function descriptor's bytecode span leaves `bytecode_data`.
    #[error(
        "function descriptor {index} out of bounds: bytecode [{offset}, {offset} + {length}) exceeds bytecode_data of {bytecode_len} bytes"
    )]
    FunctionOutOfBounds {
        /// Function ordinal.
        index: usize,
        /// `bytecode_offset` as stored.
        offset: i64,
        /// `bytecode_length` as stored.
        length: i64,
        /// Length of `bytecode_data`.
        bytecode_len: usize,
    },

    /// A function descriptor is unusable for another reason.
    #[error("function descriptor {index} is invalid: {reason}")]
    InvalidFunctionDescriptor {
        /// Function ordinal.
        index: usize,
        /// What is wrong.
        reason: String,
    },

    /// An external rodata segment points outside the file.
    #[error(
        "rodata segment {index} external range out of file bounds: base {base} + offset {offset} + length {length} exceeds file length {file_len}"
    )]
    RodataOutOfBounds {
        /// Segment index.
        index: usize,
        /// Start of external data in the file (aligned end of the FlatBuffer).
        base: u64,
        /// `external_data_offset` as stored.
        offset: u64,
        /// `external_data_length` as stored.
        length: u64,
        /// File length.
        file_len: u64,
    },

    /// The file is VM assembly text that does not assemble. Made by the
    /// text layer above the loader (`vm/module_source.rs`), so the loader
    /// names no assembler type: the box holds an `irvm::asm::AsmErrors`
    /// (downcast it to read each error's file, line and column).
    #[cfg(feature = "asm")]
    #[error("{0}")]
    Assembly(#[source] Box<dyn std::error::Error + Send + Sync>),

    /// The file is VM assembly text, and this build of the library has no
    /// assembler (its `asm` feature is off).
    #[error(
        "the file is VM assembly text (its first line is `vm.module`), and this build of irvm \
         reads bytecode only: enable the irvm library's `asm` feature to assemble it"
    )]
    AssemblyNotBuiltIn,

    /// A size computation overflowed.
    #[error("size overflow while computing {what}")]
    Overflow {
        /// What was being computed.
        what: String,
    },
}

fn show_bytes(bytes: &[u8]) -> String {
    let printable = bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ');
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if printable {
        format!("\"{}\" ({})", String::from_utf8_lossy(bytes), hex.join(" "))
    } else {
        format!("[{}]", hex.join(" "))
    }
}
