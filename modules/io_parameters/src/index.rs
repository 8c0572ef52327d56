//! The parameter index: which archive files feed each scope, and where
//! each key's bytes are.
//!
//! As in IREE's tools, every `--parameters=[scope=]FILE` adds one file to
//! its scope's index (the empty scope when none is named); a scope may be
//! fed by several files in mixed formats, and a key found in two of them
//! resolves to the first file added.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use irvm::{StatusCode, Trap};

use crate::archive::{read_entries, ArchiveEntry, ArchiveError, EntryData, Format};

/// Why a parameter file could not be added to an index.
#[derive(Debug, thiserror::Error)]
pub enum ParameterError {
    /// The file could not be opened or mapped.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file's extension names no format irvm reads.
    #[error(
        "{path}: unhandled parameter file format: .{extension} (irvm reads .irpa, \
         .safetensors and .gguf)"
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// Its extension.
        extension: String,
    },
    /// The file changed while in use: it shrank, and a read found pages it
    /// no longer has (they read as zeros), or its size or modification
    /// time is not what it was when it was opened (another process
    /// truncated or rewrote it). What was computed from it is not what
    /// the file held.
    #[error(
        "{path}: the parameter file changed while in use (another process truncated or \
         rewrote it), so results computed from it are discarded"
    )]
    Changed {
        /// The file.
        path: String,
    },
    /// The file is not a well-formed archive of its format.
    #[error("{name}: {source}")]
    Archive {
        /// The file (or the name given to bytes).
        name: String,
        /// What is wrong, and where.
        source: ArchiveError,
    },
}

impl ParameterError {
    /// The status code the reference tools fail with for this error.
    pub fn code(&self) -> StatusCode {
        match self {
            ParameterError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                StatusCode::NotFound
            }
            ParameterError::Io { .. } => StatusCode::Unavailable,
            ParameterError::UnknownFormat { .. } => StatusCode::Unimplemented,
            ParameterError::Archive { source, .. } => source.code(),
            ParameterError::Changed { .. } => StatusCode::DataLoss,
        }
    }
}

/// The bytes of one archive: a read-only mapping of its file, memory, or
/// memory an embedder shares (not copied).
pub(crate) enum ArchiveBytes {
    Mapped(irvm::file_map::FileMap),
    Owned(Vec<u8>),
    Shared(SharedBytes),
}

impl AsRef<[u8]> for ArchiveBytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            ArchiveBytes::Mapped(map) => map,
            ArchiveBytes::Owned(bytes) => bytes,
            ArchiveBytes::Shared(bytes) => (**bytes).as_ref(),
        }
    }
}

/// Bytes an embedder lends an index: they must not change while the index
/// (or a buffer a program made over them) holds them.
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// A parameter an embedder holds in memory
/// ([`ParameterIndex::add_memory_entries`]).
#[derive(Clone)]
pub enum MemoryEntry {
    /// `bytes` as the parameter `key` (used in place, not copied).
    Data {
        /// The key modules name it by.
        key: String,
        /// Its metadata (shown by `irvm params dump`-like listings).
        metadata: Vec<u8>,
        /// Its bytes.
        bytes: SharedBytes,
    },
    /// `length` bytes repeating `pattern` (1 to 16 bytes).
    Splat {
        /// The key modules name it by.
        key: String,
        /// Its metadata.
        metadata: Vec<u8>,
        /// The repeated bytes.
        pattern: Vec<u8>,
        /// Length in bytes.
        length: u64,
    },
}

/// One archive in an index: its bytes and its entries by key.
pub struct ArchiveFile {
    name: String,
    format: Format,
    bytes: Arc<ArchiveBytes>,
    /// The open file of a mapped archive: copies read through it (file
    /// I/O), not through the mapping, so that the process does not hold
    /// the file's pages as well as the copy.
    file: Option<std::fs::File>,
    /// The file's length and modification time when it was mapped.
    opened: Option<(u64, Option<std::time::SystemTime>)>,
    entries: Vec<ArchiveEntry>,
    /// The first entry of each key.
    by_key: HashMap<String, usize>,
}

impl ArchiveFile {
    fn new(name: String, format: Format, bytes: ArchiveBytes) -> Result<Self, ParameterError> {
        let entries =
            read_entries(format, bytes.as_ref()).map_err(|source| ParameterError::Archive {
                name: name.clone(),
                source,
            })?;
        let mut by_key = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            by_key.entry(e.key.clone()).or_insert(i);
        }
        Ok(ArchiveFile {
            name,
            format,
            bytes: Arc::new(bytes),
            file: None,
            opened: None,
            entries,
            by_key,
        })
    }

    /// Whether the file changed since it was mapped: a read found pages
    /// it lost (they read as zeros), or its length or modification time
    /// differs from when it was opened (a truncation inside the last page,
    /// or bytes rewritten in place, which the mapping shows).
    pub fn lost(&self) -> bool {
        if matches!(&*self.bytes, ArchiveBytes::Mapped(map) if map.lost()) {
            return true;
        }
        match (&self.file, &self.opened) {
            (Some(file), Some(opened)) => match file.metadata() {
                Ok(m) => (m.len(), m.modified().ok()) != *opened,
                Err(_) => true,
            },
            _ => false,
        }
    }

    /// The file's path as given (or the name given to bytes).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Its entries, in file order.
    pub fn entries(&self) -> &[ArchiveEntry] {
        &self.entries
    }

    /// The whole archive's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref().as_ref()
    }

    /// Reads `dest.len()` bytes of the archive from byte `offset` into
    /// `dest`: with file I/O for a file (a file that shrank since it was
    /// opened is an error here, not a fault), else from memory.
    pub(crate) fn read_at(&self, offset: u64, dest: &mut [u8]) -> Result<(), String> {
        if let Some(file) = &self.file {
            use std::os::unix::fs::FileExt;
            return file
                .read_exact_at(dest, offset)
                .map_err(|e| format!("reading {} at byte {offset}: {e}", self.name));
        }
        let start = usize::try_from(offset).map_err(|_| "offset too large".to_string())?;
        let source = start
            .checked_add(dest.len())
            .and_then(|end| self.bytes().get(start..end))
            .ok_or_else(|| format!("{}: bytes {offset}.. lie outside the archive", self.name))?;
        dest.copy_from_slice(source);
        Ok(())
    }

    /// The bytes, shared, for zero-copy buffers over them.
    pub(crate) fn shared_bytes(&self) -> Arc<dyn AsRef<[u8]> + Send + Sync> {
        self.bytes.clone()
    }
}

/// One scope's files, in the order they were added.
struct Scope {
    name: String,
    files: Vec<Arc<ArchiveFile>>,
}

/// How [`ParameterIndex::add_file`] opens a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpenMode {
    /// Map the file; pages are read when first used (IREE's `file` mode
    /// reads each parameter with file I/O when it is loaded: the same
    /// bytes, without a second copy).
    #[default]
    Map,
    /// Map the file and read every page now (IREE's `preload`).
    Preload,
}

/// A parameter's archive and entry, found by [`ParameterIndex::lookup`].
pub struct Resolved<'a> {
    /// The archive holding it.
    pub file: &'a Arc<ArchiveFile>,
    /// Its entry.
    pub entry: &'a ArchiveEntry,
}

/// Parameter archives by scope: what the `io_parameters` module reads.
///
/// ```no_run
/// use irvm_io_parameters::ParameterIndex;
///
/// let mut index = ParameterIndex::new();
/// index.add_file("model", "weights.irpa")?;   // --parameters=model=weights.irpa
/// index.add_file("", "extra.safetensors")?;   // --parameters=extra.safetensors
/// # Ok::<(), irvm_io_parameters::ParameterError>(())
/// ```
#[derive(Default)]
pub struct ParameterIndex {
    scopes: Vec<Scope>,
}

impl ParameterIndex {
    /// An index with no scopes.
    pub fn new() -> ParameterIndex {
        ParameterIndex::default()
    }

    /// Maps `path` and adds its parameters to `scope` (`""`: the scope of
    /// parameters a module names without one). The format comes from the
    /// extension (`.irpa`, `.safetensors`, `.gguf`), as in IREE.
    pub fn add_file(&mut self, scope: &str, path: impl AsRef<Path>) -> Result<(), ParameterError> {
        self.add_file_with(scope, path, OpenMode::Map)
    }

    /// [`ParameterIndex::add_file`], opening the file as `mode` says.
    pub fn add_file_with(
        &mut self,
        scope: &str,
        path: impl AsRef<Path>,
        mode: OpenMode,
    ) -> Result<(), ParameterError> {
        let path = path.as_ref();
        let io = |source| ParameterError::Io {
            path: path.to_path_buf(),
            source,
        };
        // In IREE's order: the file is opened (a missing one is NOT_FOUND
        // whatever its name), then its extension names the format, then
        // it is mapped (a directory cannot be: NOT_FOUND in IREE too).
        let file = crate::archive::open_file(path).map_err(io)?;
        let format = Format::from_path(path).ok_or_else(|| ParameterError::UnknownFormat {
            path: path.to_path_buf(),
            extension: path
                .extension()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_default(),
        })?;
        let metadata = file.metadata().map_err(io)?;
        if metadata.is_dir() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "a directory, not an archive file",
            )));
        }
        // An empty file cannot be mapped; it is no archive either, which
        // the reader says.
        let bytes = if metadata.len() == 0 {
            ArchiveBytes::Owned(Vec::new())
        } else {
            // Pages the file loses later (another process truncates it)
            // read as zeros rather than killing the process, and
            // `ParameterIndex::check_intact` reports the loss.
            let map = irvm::file_map::FileMap::new(&file, mode == OpenMode::Preload).map_err(io)?;
            if map.guarded() {
                ArchiveBytes::Mapped(map)
            } else {
                // Past `MAX_GUARDED` maps, a lost page would kill the
                // process: read the file into memory instead.
                drop(map);
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut &file, &mut bytes).map_err(io)?;
                ArchiveBytes::Owned(bytes)
            }
        };
        let mut archive = ArchiveFile::new(path.display().to_string(), format, bytes)?;
        if matches!(*archive.bytes, ArchiveBytes::Mapped(_)) {
            archive.opened = Some((metadata.len(), metadata.modified().ok()));
        }
        archive.file = Some(file);
        self.push(scope, archive);
        Ok(())
    }

    /// Adds the parameters of an archive held in memory (`name` names it
    /// in messages).
    pub fn add_bytes(
        &mut self,
        scope: &str,
        name: &str,
        format: Format,
        bytes: Vec<u8>,
    ) -> Result<(), ParameterError> {
        let archive = ArchiveFile::new(name.to_string(), format, ArchiveBytes::Owned(bytes))?;
        self.push(scope, archive);
        Ok(())
    }

    /// Adds the parameters of an archive an embedder holds in memory and
    /// lends (not copied: `bytes` must not change while the index or a
    /// program's buffer over them holds them); `name` names it in
    /// messages.
    pub fn add_shared(
        &mut self,
        scope: &str,
        name: &str,
        format: Format,
        bytes: SharedBytes,
    ) -> Result<(), ParameterError> {
        let archive = ArchiveFile::new(name.to_string(), format, ArchiveBytes::Shared(bytes))?;
        self.push(scope, archive);
        Ok(())
    }

    /// Adds parameters an embedder holds in memory, each its own bytes (not
    /// copied) or a splat, looked up in this order after what the scope
    /// has; `name` names them in messages. A splat's pattern is 1 to 16
    /// bytes.
    pub fn add_memory_entries(
        &mut self,
        scope: &str,
        name: &str,
        entries: Vec<MemoryEntry>,
    ) -> Result<(), ParameterError> {
        for entry in entries {
            let (key, metadata, data, bytes) = match entry {
                MemoryEntry::Data {
                    key,
                    metadata,
                    bytes,
                } => {
                    let length = (*bytes).as_ref().len() as u64;
                    let data = EntryData::Data { offset: 0, length };
                    (key, metadata, data, ArchiveBytes::Shared(bytes))
                }
                MemoryEntry::Splat {
                    key,
                    metadata,
                    pattern,
                    length,
                } => {
                    if pattern.is_empty() || pattern.len() > 16 {
                        return Err(ParameterError::Archive {
                            name: format!("{name}: `{key}`"),
                            source: ArchiveError::new(
                                Format::Irpa,
                                0,
                                format!("a splat pattern is 1 to 16 bytes, not {}", pattern.len()),
                            ),
                        });
                    }
                    let data = EntryData::Splat { pattern, length };
                    (key, metadata, data, ArchiveBytes::Owned(Vec::new()))
                }
            };
            let mut by_key = HashMap::with_capacity(1);
            by_key.insert(key.clone(), 0);
            self.push(
                scope,
                ArchiveFile {
                    name: format!("{name}: `{key}`"),
                    format: Format::Irpa,
                    bytes: Arc::new(bytes),
                    file: None,
                    opened: None,
                    entries: vec![ArchiveEntry {
                        key,
                        data,
                        info: String::from_utf8_lossy(&metadata).into_owned(),
                    }],
                    by_key,
                },
            );
        }
        Ok(())
    }

    fn push(&mut self, scope: &str, archive: ArchiveFile) {
        let archive = Arc::new(archive);
        match self.scopes.iter_mut().find(|s| s.name == scope) {
            Some(s) => s.files.push(archive),
            None => self.scopes.push(Scope {
                name: scope.to_string(),
                files: vec![archive],
            }),
        }
    }

    /// The scopes, in the order they were first added.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().map(|s| s.name.as_str())
    }

    /// The archives of `scope`, in the order they were added.
    pub fn files(&self, scope: &str) -> &[Arc<ArchiveFile>] {
        self.scopes
            .iter()
            .find(|s| s.name == scope)
            .map_or(&[], |s| &s.files)
    }

    /// Fails with [`ParameterError::Changed`] (DATA_LOSS) naming the first
    /// file that changed since it was added ([`ArchiveFile::lost`]). Check after each call that used the index's
    /// parameters: the lost pages read as zeros, so its results are wrong.
    pub fn check_intact(&self) -> Result<(), ParameterError> {
        for scope in &self.scopes {
            if let Some(f) = scope.files.iter().find(|f| f.lost()) {
                return Err(ParameterError::Changed {
                    path: f.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// Whether any scope is `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s.name == scope)
    }

    /// The parameter `key` of `scope`: NOT_FOUND, with the reference's
    /// messages, when the scope or the key is not there.
    pub fn lookup(&self, scope: &str, key: &str) -> Result<Resolved<'_>, Trap> {
        let s = self
            .scopes
            .iter()
            .find(|s| s.name == scope)
            .ok_or_else(|| no_provider(scope))?;
        for file in &s.files {
            if let Some(&i) = file.by_key.get(key) {
                return Ok(Resolved {
                    file,
                    entry: &file.entries[i],
                });
            }
        }
        Err(Trap::new(
            StatusCode::NotFound,
            format!("no parameter found in index with key '{key}'"),
        ))
    }
}

/// No scope `scope` (IREE: no provider handles it).
pub(crate) fn no_provider(scope: &str) -> Trap {
    Trap::new(
        StatusCode::NotFound,
        format!("no provider registered that handles scopes like '{scope}'"),
    )
}

/// Splits a `--parameters` value, `[scope=]FILE`, at its first `=` as IREE
/// does: `("", FILE)` without one.
pub fn parse_parameter_flag(value: &str) -> (&str, &str) {
    match value.split_once('=') {
        Some((scope, path)) => (scope, path),
        None => ("", value),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Tests that need their maps guarded hold this while the one that
    /// takes every free slot of the SIGBUS guard runs (tests share the
    /// process, hence the guard's slots).
    pub(crate) fn hold_guard_slots() -> std::sync::MutexGuard<'static, ()> {
        static SLOTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        SLOTS.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of the test archive `wb.irpa` in a directory of its own, to
    /// truncate or rewrite.
    fn copy_of_wb() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.irpa");
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/data/params/run/wb.irpa"
            ),
            &path,
        )
        .unwrap();
        (dir, path)
    }

    #[test]
    fn memory_entries_are_found_in_order_and_used_in_place() {
        let bytes: SharedBytes = Arc::new(vec![1u8, 2, 3, 4]);
        let address = (*bytes).as_ref().as_ptr();
        let mut index = ParameterIndex::new();
        index
            .add_memory_entries(
                "m",
                "test",
                vec![
                    MemoryEntry::Data {
                        key: "w".into(),
                        metadata: b"meta".to_vec(),
                        bytes,
                    },
                    MemoryEntry::Splat {
                        key: "s".into(),
                        metadata: Vec::new(),
                        pattern: vec![7, 0],
                        length: 6,
                    },
                    MemoryEntry::Splat {
                        key: "w".into(),
                        metadata: Vec::new(),
                        pattern: vec![9],
                        length: 1,
                    },
                ],
            )
            .unwrap();
        let w = index.lookup("m", "w").unwrap();
        assert_eq!(
            w.entry.data,
            EntryData::Data {
                offset: 0,
                length: 4
            }
        );
        assert_eq!(w.entry.info, "meta");
        // The embedder's bytes, not a copy.
        assert_eq!(w.file.bytes().as_ptr(), address);
        let s = index.lookup("m", "s").unwrap();
        assert_eq!(
            s.entry.data,
            EntryData::Splat {
                pattern: vec![7, 0],
                length: 6
            }
        );
        assert!(index.lookup("", "w").is_err());
        let long = MemoryEntry::Splat {
            key: "p".into(),
            metadata: Vec::new(),
            pattern: vec![0; 17],
            length: 17,
        };
        let e = index
            .add_memory_entries("m", "test", vec![long])
            .unwrap_err();
        assert!(e.to_string().contains("1 to 16 bytes, not 17"), "{e}");
        assert!(index.check_intact().is_ok());
    }

    #[test]
    fn a_flag_splits_at_its_first_equals_sign() {
        assert_eq!(parse_parameter_flag("a.irpa"), ("", "a.irpa"));
        assert_eq!(parse_parameter_flag("model=a.irpa"), ("model", "a.irpa"));
        assert_eq!(parse_parameter_flag("m=b=c.gguf"), ("m", "b=c.gguf"));
        assert_eq!(parse_parameter_flag("=a.irpa"), ("", "a.irpa"));
    }

    #[test]
    fn past_the_guarded_maps_an_archive_is_read_into_memory() {
        let _slots = hold_guard_slots();
        let (_dir, path) = copy_of_wb();
        // Take every free slot of the SIGBUS guard.
        let mut held = Vec::new();
        loop {
            let f = std::fs::File::open(&path).unwrap();
            let map = irvm::file_map::FileMap::new(&f, false).unwrap();
            if !map.guarded() {
                break;
            }
            held.push(map);
            assert!(held.len() <= irvm::file_map::MAX_GUARDED);
        }
        let mut index = ParameterIndex::new();
        index.add_file("", &path).unwrap();
        let archive = &index.files("")[0];
        // Another test may have freed a slot meanwhile; otherwise the
        // archive is a private copy, which no truncation reaches.
        if matches!(*archive.bytes, ArchiveBytes::Owned(_)) {
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(0)
                .unwrap();
            let r = index.lookup("", "w").unwrap();
            assert_eq!(r.entry.data.length(), 16);
            index.check_intact().unwrap();
        }
        drop(held);
    }

    /// Bytes rewritten in place, or a cut inside the last page, never
    /// fault: the file's length and modification time tell.
    #[test]
    fn a_file_rewritten_in_place_is_reported_changed() {
        let _slots = hold_guard_slots();
        let (_dir, path) = copy_of_wb();
        let mut index = ParameterIndex::new();
        index.add_file("", &path).unwrap();
        index.check_intact().unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();
        let e = index.check_intact().unwrap_err();
        assert_eq!(e.code(), StatusCode::DataLoss);
        assert!(e.to_string().contains("changed while in use"), "{e}");
    }

    /// What `irvm params convert` and `dump --extract` check before
    /// they keep what they wrote.
    #[test]
    fn mapped_file_bytes_report_a_change() {
        let (_dir, path) = copy_of_wb();
        let bytes = crate::archive::map_file(&path).unwrap();
        assert!(!bytes.lost());
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_len(100).unwrap();
        assert!(bytes.lost());
    }

    #[test]
    fn a_copy_from_a_file_that_shrank_is_an_error_not_a_fault() {
        let source = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/params/run/wb.irpa"
        );
        let dir = std::env::temp_dir().join(format!("irvm-shrink-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("wb.irpa");
        std::fs::copy(source, &path).unwrap();
        let mut index = ParameterIndex::new();
        index.add_file("", &path).unwrap();
        let r = index.lookup("", "w").unwrap();
        let crate::archive::EntryData::Data { offset, .. } = r.entry.data else {
            panic!("w is stored data");
        };
        let mut bytes = [0u8; 16];
        r.file
            .read_at(offset, &mut bytes)
            .expect("reads while whole");
        assert_eq!(bytes[..4], 1.5f32.to_le_bytes());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        let e = r.file.read_at(offset, &mut bytes).unwrap_err();
        assert!(e.contains("wb.irpa"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn unknown_extensions_and_missing_files_are_named() {
        let mut index = ParameterIndex::new();
        let toml = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
        let e = index.add_file("", toml).unwrap_err();
        assert_eq!(e.code(), StatusCode::Unimplemented);
        assert!(e.to_string().contains("Cargo.toml"), "{e}");
        let e = index.add_file("", "/nonexistent/w.irpa").unwrap_err();
        assert_eq!(e.code(), StatusCode::NotFound);
        assert!(e.to_string().contains("/nonexistent/w.irpa"), "{e}");
        // As in IREE, a missing file is NOT_FOUND before its extension is
        // looked at, and a directory is not mapped (NOT_FOUND there too).
        let e = index.add_file("", "/nonexistent/w.bin").unwrap_err();
        assert_eq!(e.code(), StatusCode::NotFound, "{e}");
        let dir = std::env::temp_dir().join(format!("irvm-dir-{}.irpa", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = index.add_file("", &dir).unwrap_err();
        std::fs::remove_dir(&dir).ok();
        assert_eq!(e.code(), StatusCode::NotFound, "{e}");
        assert!(e.to_string().contains("a directory"), "{e}");
        let e = index.lookup("x", "k").err().expect("no scope");
        assert_eq!(e.code, StatusCode::NotFound);
        assert!(e
            .message
            .contains("no provider registered that handles scopes like 'x'"));
    }
}
