//! Parameter archives from Python: the index `irvm.load(parameters=...)`
//! builds (files by path, archives held in buffer objects, and
//! [`MemoryArchive`]s of parameters held in memory), and the `.irpa`
//! writing and entry listing `irvm.compat.ParameterIndex` is made of
//! (`add_buffer`, `add_splat`, `items`, `create_archive_file`). Memory
//! Python holds is used in place, not copied ([`PythonBytes`]), as
//! iree.runtime uses it.

use std::path::Path;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use irvm::StatusCode;
use irvm_io_parameters::archive::irpa_writer::{
    ArchiveWriter, Contents, Output, DEFAULT_DATA_ALIGNMENT,
};
use irvm_io_parameters::archive::{irpa, map_file, read_entries, EntryData, FileBytes, Format};
use irvm_io_parameters::{MemoryEntry, OpenMode, ParameterIndex, SharedBytes};
use pyo3::buffer::PyBuffer;

use crate::errors::vm_error;

/// The bytes of a C-contiguous Python buffer, held (the exporter cannot
/// free or move them while the view exists) and used in place.
struct PythonBytes(PyBuffer<u8>);

impl AsRef<[u8]> for PythonBytes {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the view is C-contiguous of `len_bytes` bytes
        // (`python_bytes` checked it), and holding the `PyBuffer` keeps the
        // exporter's memory alive and in place (the buffer protocol's
        // guarantee while a view is held). The bytes are read only; that
        // Python code does not write them while a program reads them is
        // the caller's promise, as with iree.runtime's `add_buffer`.
        unsafe { std::slice::from_raw_parts(self.0.buf_ptr() as *const u8, self.0.len_bytes()) }
    }
}

/// The bytes of any buffer object, shared: C-contiguous ones in place, a
/// strided one copied once.
fn python_bytes(o: &Bound<'_, PyAny>) -> PyResult<SharedBytes> {
    let py = o.py();
    let view = py.import("builtins")?.getattr("memoryview")?.call1((o,))?;
    let nbytes: usize = view.getattr("nbytes")?.extract()?;
    if nbytes == 0 {
        return Ok(std::sync::Arc::new(Vec::<u8>::new()));
    }
    if view.getattr("c_contiguous")?.extract::<bool>()? {
        let bytes = view.call_method1("cast", ("B",))?;
        let buffer = PyBuffer::<u8>::get(&bytes)?;
        if buffer.is_c_contiguous() && buffer.len_bytes() == nbytes {
            return Ok(std::sync::Arc::new(PythonBytes(buffer)));
        }
    }
    let copy = view.call_method0("tobytes")?;
    Ok(std::sync::Arc::new(
        copy.cast::<PyBytes>()?.as_bytes().to_vec(),
    ))
}

/// Parameters held in memory, as `irvm.compat`'s `ParameterProvider`
/// passes them to a context: buffers used in place, and splats.
#[pyclass(module = "irvm._irvm", frozen)]
pub struct MemoryArchive {
    entries: Vec<MemoryEntry>,
}

/// A [`MemoryArchive`] of `entries` (`[(key, metadata, source)]`: a
/// buffer object, or `("splat", pattern, length)`).
#[pyfunction]
pub fn _memory_archive(entries: &Bound<'_, PyList>) -> PyResult<MemoryArchive> {
    let mut out = Vec::with_capacity(entries.len());
    for item in entries.iter() {
        let (key, metadata, source): (String, Vec<u8>, Bound<'_, PyAny>) = item.extract()?;
        out.push(match source.cast::<PyTuple>() {
            Ok(t) if t.get_item(0)?.extract::<String>().ok().as_deref() == Some("splat") => {
                MemoryEntry::Splat {
                    key,
                    metadata,
                    pattern: t.get_item(1)?.extract()?,
                    length: t.get_item(2)?.extract()?,
                }
            }
            Ok(_) => {
                return Err(PyValueError::new_err(format!(
                    "entry '{key}': a buffer or a (\"splat\", pattern, length) tuple"
                )))
            }
            Err(_) => MemoryEntry::Data {
                key,
                metadata,
                bytes: python_bytes(&source)?,
            },
        });
    }
    Ok(MemoryArchive { entries: out })
}

/// One archive `parameters` names: a file, an archive's bytes, or
/// parameters held in memory.
enum ArchiveSource {
    Path(String),
    Bytes(SharedBytes),
    Memory(Vec<MemoryEntry>),
}

/// A path (str or `os.PathLike`) or the bytes of an archive (`bytes`, or
/// any object with the buffer protocol: read by its magic,
/// [`Format::from_magic`]).
fn archive_source(o: &Bound<'_, PyAny>) -> PyResult<ArchiveSource> {
    if let Ok(memory) = o.cast::<MemoryArchive>() {
        return Ok(ArchiveSource::Memory(memory.get().entries.clone()));
    }
    let py = o.py();
    // Any object with the buffer protocol (`bytes`, `bytearray`,
    // `memoryview`, a numpy array) that is not a path: what `memoryview`
    // takes (Python 3.11 has no `__buffer__` to ask).
    if !o.is_instance_of::<PyString>()
        && !o.hasattr("__fspath__").unwrap_or(false)
        && py
            .import("builtins")?
            .getattr("memoryview")?
            .call1((o,))
            .is_ok()
    {
        return Ok(ArchiveSource::Bytes(python_bytes(o)?));
    }
    Ok(ArchiveSource::Path(
        py.import("os")?.call_method1("fspath", (o,))?.extract()?,
    ))
}

/// The parameter archives `parameters` names: a path, a `{scope: path or
/// [paths]}` dict, or a list of paths and `"scope=path"` strings; wherever
/// a path goes, an archive's bytes may go instead.
pub fn parameter_index(obj: &Bound<'_, PyAny>) -> PyResult<ParameterIndex> {
    let py = obj.py();
    let mut archives: Vec<(String, ArchiveSource)> = Vec::new();
    if let Ok(d) = obj.cast::<PyDict>() {
        for (scope, paths) in d.iter() {
            let scope: String = scope.extract()?;
            if paths.is_instance_of::<PyList>() || paths.is_instance_of::<PyTuple>() {
                for p in paths.try_iter()? {
                    archives.push((scope.clone(), archive_source(&p?)?));
                }
            } else {
                archives.push((scope, archive_source(&paths)?));
            }
        }
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        for item in obj.try_iter()? {
            match archive_source(&item?)? {
                ArchiveSource::Path(text) => {
                    let (scope, path) = irvm_io_parameters::parse_parameter_flag(&text);
                    archives.push((scope.to_string(), ArchiveSource::Path(path.to_string())));
                }
                other => archives.push((String::new(), other)),
            }
        }
    } else {
        archives.push((String::new(), archive_source(obj)?));
    }
    let mut index = ParameterIndex::new();
    for (k, (scope, source)) in archives.into_iter().enumerate() {
        match source {
            ArchiveSource::Path(path) => index
                .add_file_with(&scope, &path, OpenMode::Map)
                .map_err(|e| vm_error(py, e.code(), &format!("parameters {path}: {e}")))?,
            ArchiveSource::Bytes(bytes) => {
                let name = format!("in-memory archive {k}");
                if (*bytes).as_ref().is_empty() {
                    // Told by its first bytes, which it has none of.
                    return Err(vm_error(
                        py,
                        StatusCode::InvalidArgument,
                        &format!(
                            "parameters: {name} is empty (0 bytes): no .irpa, .gguf or \
                             .safetensors archive (an archive in memory is told by its first \
                             bytes: IRPA, GGUF, else a safetensors header length)"
                        ),
                    ));
                }
                let format = Format::from_magic((*bytes).as_ref());
                index
                    .add_shared(&scope, &name, format, bytes)
                    .map_err(|e| vm_error(py, e.code(), &format!("parameters: {e}")))?
            }
            ArchiveSource::Memory(entries) => index
                .add_memory_entries(&scope, "in-memory parameters", entries)
                .map_err(|e| vm_error(py, e.code(), &format!("parameters: {e}")))?,
        }
    }
    Ok(index)
}

/// Where a new entry's bytes come from, as `irvm.compat` describes them:
/// a buffer object (read in place); `("splat", pattern, length)`;
/// `("file", path, offset, length)` (bytes of an archive file).
enum NewContents {
    Bytes(SharedBytes),
    Splat(Vec<u8>, u64),
    File(String, u64, u64),
}

struct NewEntry {
    key: String,
    metadata: Vec<u8>,
    contents: NewContents,
}

fn new_entries(entries: &Bound<'_, PyList>) -> PyResult<Vec<NewEntry>> {
    let mut out = Vec::with_capacity(entries.len());
    for item in entries.iter() {
        let (key, metadata, source): (String, Vec<u8>, Bound<'_, PyAny>) = item.extract()?;
        let contents = if let Ok(t) = source.cast::<PyTuple>() {
            match t.get_item(0)?.extract::<String>()?.as_str() {
                "splat" => NewContents::Splat(t.get_item(1)?.extract()?, t.get_item(2)?.extract()?),
                "file" => NewContents::File(
                    t.get_item(1)?.extract()?,
                    t.get_item(2)?.extract()?,
                    t.get_item(3)?.extract()?,
                ),
                other => {
                    return Err(PyValueError::new_err(format!(
                        "entry '{key}': unknown kind '{other}'"
                    )))
                }
            }
        } else {
            NewContents::Bytes(python_bytes(&source).map_err(|_| {
                PyTypeError::new_err(format!("entry '{key}': a buffer or a (kind, ...) tuple"))
            })?)
        };
        out.push(NewEntry {
            key,
            metadata,
            contents,
        });
    }
    Ok(out)
}

/// Lays `entries` out in an `.irpa` archive (IREE's builder's layout) and
/// writes it to `out`; the files entries copy from are mapped meanwhile.
fn write_archive(py: Python<'_>, entries: &[NewEntry], out: &mut impl Output) -> PyResult<()> {
    let mut files: Vec<(String, FileBytes)> = Vec::new();
    for e in entries {
        if let NewContents::File(path, _, _) = &e.contents {
            if !files.iter().any(|(p, _)| p == path) {
                let bytes = map_file(Path::new(path))
                    .map_err(|err| vm_error(py, StatusCode::NotFound, &format!("{path}: {err}")))?;
                files.push((path.clone(), bytes));
            }
        }
    }
    let invalid = |m: String| vm_error(py, StatusCode::InvalidArgument, &m);
    let mut writer = ArchiveWriter::new();
    for e in entries {
        let added = match &e.contents {
            NewContents::Bytes(b) => {
                let b = (**b).as_ref();
                writer.add_data(
                    &e.key,
                    &e.metadata,
                    DEFAULT_DATA_ALIGNMENT,
                    b.len() as u64,
                    Contents::Bytes(b),
                )
            }
            NewContents::Splat(pattern, length) => {
                writer.add_splat(&e.key, &e.metadata, pattern, *length)
            }
            NewContents::File(path, offset, length) => {
                let file = files
                    .iter()
                    .find(|(p, _)| p == path)
                    .map(|(_, f)| &**f)
                    .unwrap_or(&[]);
                let bytes = usize::try_from(*offset)
                    .ok()
                    .zip(usize::try_from(offset.saturating_add(*length)).ok())
                    .and_then(|(start, end)| file.get(start..end))
                    .ok_or_else(|| {
                        invalid(format!(
                            "entry '{}': bytes {offset}..+{length} lie outside {path}",
                            e.key
                        ))
                    })?;
                writer.add_data(
                    &e.key,
                    &e.metadata,
                    DEFAULT_DATA_ALIGNMENT,
                    *length,
                    Contents::Bytes(bytes),
                )
            }
        };
        added.map_err(|err| invalid(format!("building a parameter archive: {err}")))?;
    }
    writer
        .write(out)
        .map_err(|err| vm_error(py, StatusCode::Unavailable, &err.to_string()))?;
    if let Some((path, _)) = files.iter().find(|(_, f)| f.lost()) {
        return Err(vm_error(
            py,
            StatusCode::DataLoss,
            &format!("{path}: the parameter file changed while it was copied"),
        ));
    }
    Ok(())
}

/// Writes the `.irpa` archive of `entries` to the file at `path`: into a
/// new file beside it, renamed over `path` once complete. Entries may copy
/// from the file being replaced (`index.create_archive_file` onto the
/// archive the index loaded), whose bytes stay as they were until then;
/// a write that fails leaves `path` as it was.
#[pyfunction]
pub fn _write_irpa(py: Python<'_>, path: &str, entries: &Bound<'_, PyList>) -> PyResult<()> {
    let entries = new_entries(entries)?;
    // A file that cannot be opened (no such directory) is NOT_FOUND, as
    // IREE's file handle says it (iree.runtime's ValueError).
    let unavailable = |e: std::io::Error| {
        let status = if e.kind() == std::io::ErrorKind::NotFound {
            StatusCode::NotFound
        } else {
            StatusCode::Unavailable
        };
        vm_error(py, status, &format!("{path}: {e}"))
    };
    // A link is followed: the file it names is replaced, not the link.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| Path::new(path).to_path_buf());
    if target.is_dir() {
        return Err(unavailable(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )));
    }
    let (mut file, temporary) = create_beside(&target).map_err(unavailable)?;
    let written = write_archive(py, &entries, &mut file).and_then(|()| {
        if let Ok(old) = std::fs::metadata(&target) {
            // The archive keeps the permissions of the file it replaces.
            file.set_permissions(old.permissions())
                .map_err(unavailable)?;
        }
        drop(file);
        std::fs::rename(&temporary, &target).map_err(unavailable)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// A new file in `target`'s directory, named after it (`.NAME.irvm-PID-N`).
fn create_beside(target: &Path) -> std::io::Result<(std::fs::File, std::path::PathBuf)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temporary = dir.join(format!(".{name}.irvm-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((file, temporary)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// An archive entry as `_archive_entries` lists it.
type ListedEntry = (String, Py<PyBytes>, u64, u64, Option<Py<PyBytes>>);

/// The entries of an archive, in file order: `(key, metadata, offset,
/// length, splat pattern or None)`. `source` is the archive file's path
/// (its format named by `format`, else by its extension) or its bytes (an
/// object with the buffer protocol, such as a file handle's memory or
/// mapping: `format` names it, as `ParameterIndex.load_from_file_handle`
/// takes it).
#[pyfunction]
#[pyo3(signature = (source, format=None))]
pub fn _archive_entries(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    format: Option<&str>,
) -> PyResult<Vec<ListedEntry>> {
    let explicit = match format {
        Some(name) => Some(Format::from_name(name).ok_or_else(|| {
            vm_error(
                py,
                StatusCode::Unimplemented,
                &format!(
                    "unsupported parameter file format `{name}` (irvm reads irpa, safetensors and gguf)"
                ),
            )
        })?),
        None => None,
    };
    // The bytes: a file's mapping, or the buffer's memory in place.
    let mapped;
    let held;
    let (path, bytes, format): (String, &[u8], Format) = if let Ok(path) =
        source.extract::<String>()
    {
        // In IREE's order: the file is opened first (a missing one is
        // NOT_FOUND whatever its name), then its extension names the format.
        mapped = map_file(Path::new(&path))
            .map_err(|e| vm_error(py, StatusCode::NotFound, &format!("{path}: {e}")))?;
        let Some(format) = explicit.or_else(|| Format::from_path(Path::new(&path))) else {
            return Err(vm_error(
                py,
                StatusCode::Unimplemented,
                &format!("{path}: unhandled parameter file format (irvm reads .irpa, .safetensors and .gguf)"),
            ));
        };
        (path, &mapped[..], format)
    } else {
        let Some(format) = explicit else {
            return Err(PyTypeError::new_err(
                "_archive_entries(): an archive's bytes need their format named",
            ));
        };
        held = python_bytes(source)?;
        let name = format!("{} archive in memory", format.extension());
        (name, (*held).as_ref(), format)
    };
    // IREE's statuses: a file that ends before what it declares is
    // OUT_OF_RANGE (iree.runtime's IndexError), a version not read
    // UNIMPLEMENTED (NotImplementedError), other bad bytes INVALID_ARGUMENT.
    let fail = |e: irvm_io_parameters::archive::ArchiveError| {
        vm_error(py, e.code(), &format!("{path}: {e}"))
    };
    irvm_io_parameters::archive::not_empty(format, bytes).map_err(fail)?;
    // (key, metadata, data): an .irpa entry's metadata bytes as stored;
    // other formats have none there (iree.runtime reports none either).
    let entries: Vec<(String, Vec<u8>, EntryData)> = if format == Format::Irpa {
        irpa::read_raw(bytes)
            .map_err(fail)?
            .into_iter()
            .map(|e| (e.key.to_string(), e.metadata.to_vec(), e.data))
            .collect()
    } else {
        read_entries(format, bytes)
            .map_err(fail)?
            .into_iter()
            .map(|e| (e.key, Vec::new(), e.data))
            .collect()
    };
    Ok(entries
        .into_iter()
        .map(|(key, metadata, data)| {
            let metadata = PyBytes::new(py, &metadata).unbind();
            match data {
                EntryData::Data { offset, length } => (key, metadata, offset, length, None),
                EntryData::Splat { pattern, length } => (
                    key,
                    metadata,
                    0,
                    length,
                    Some(PyBytes::new(py, &pattern).unbind()),
                ),
            }
        })
        .collect())
}
