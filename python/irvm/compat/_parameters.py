"""Parameters: FileHandle, ParameterIndex and its entries, and the
io_parameters module over them (create_io_parameters_module)."""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence

import numpy as np

from .. import _irvm
from ._conversions import _nanobind_bool, _nanobind_str
from ._errors import _as_iree_error
from ._vm_modules import _NativeVmModule, VmInstance


class FileHandle:
    """Where parameter bytes live, as iree.runtime's FileHandle:
    `wrap_memory(buffer)` (a host allocation: the buffer itself, not
    copied) or `wrap_fd(fd)` (an open file, read through
    `/proc/self/fd`, so Linux only); the entries of a loaded archive file
    have one over their file (a host allocation, mapped when read)."""

    def __init__(self, *, memory: Optional[memoryview] = None, fd: Optional[int] = None,
                 path: Optional[str] = None, readable: bool = True, writable: bool = False):
        if writable:
            raise NotImplementedError("irvm.compat: parameter files are read-only (writable=True)")
        self._memory = memory
        self._fd = fd
        self._path = path

    @staticmethod
    def wrap_memory(host_buffer: Any, readable: bool = True, writable: bool = False) -> "FileHandle":
        """A handle over `host_buffer`'s memory (C-contiguous)."""
        view = memoryview(host_buffer)
        if not view.c_contiguous:
            raise ValueError("FileHandle.wrap_memory: the buffer is not C-contiguous")
        return FileHandle(memory=view.cast("B") if view.nbytes else memoryview(b""),
                          readable=readable, writable=writable)

    @staticmethod
    def wrap_fd(fd: int, readable: bool = True, writable: bool = False) -> "FileHandle":
        """A handle over the open file `fd`: a duplicate of it, as
        iree.runtime takes, so the caller may close its own (closed when
        the handle goes)."""
        return FileHandle(fd=os.dup(int(fd)), readable=readable, writable=writable)

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is not None:
            self._fd = None
            os.close(fd)

    @property
    def is_host_allocation(self) -> bool:
        return self._fd is None

    @property
    def is_fd(self) -> bool:
        return self._fd is not None

    @property
    def fd(self) -> int:
        """The handle's own fd (a duplicate of the one wrapped); ValueError
        for a memory handle (iree.runtime 3.13 gives a meaningless number)."""
        if self._fd is None:
            raise ValueError("FileHandle is not based on a file descriptor")
        return self._fd

    @property
    def is_async(self) -> bool:
        """False: irvm reads parameter files synchronously."""
        return False

    @property
    def host_allocation(self) -> memoryview:
        """The memory (an archive file's: mapped); ValueError for an fd."""
        if self._memory is not None:
            return self._memory
        if self._path is not None:
            import mmap

            with open(self._path, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    return memoryview(b"")
                return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
        raise ValueError("FileHandle is not based on a host allocation and cannot be mapped")

    def _readable_path(self) -> str:
        """A path irvm's readers open for this handle's file."""
        return self._path if self._path is not None else f"/proc/self/fd/{self._fd}"

    def __repr__(self) -> str:
        if self._memory is not None:
            return f"FileHandle<host_allocation({self._memory!r})>"
        if self._path is not None:
            return f"FileHandle<host_allocation(<file {self._path}>)>"
        return f"FileHandle<fd({self._fd})>"


class ParameterIndexEntry:
    """One entry of a ParameterIndex: `key`, `length`, `metadata` (bytes),
    `is_splat` with `splat_pattern`, or `is_file` with `file_view` (a
    memoryview of its bytes) and `file_storage` (`(FileHandle, offset)`)."""

    def __init__(self, key: str, length: int, metadata: bytes, *, pattern: Optional[bytes] = None,
                 buffer: Optional[memoryview] = None, path: Optional[str] = None, offset: int = 0,
                 handle: Optional[FileHandle] = None):
        self._key = key
        self._length = length
        self._metadata = metadata
        self._pattern = pattern
        # The entry's own bytes (a memory entry), or its file and offset.
        self._buffer = buffer
        self._path = path
        self._offset = offset
        if handle is None and pattern is None:
            handle = FileHandle(memory=buffer) if buffer is not None else FileHandle(path=path)
        self._handle = handle

    # Read-only properties, as iree.runtime's (so the class has them too).
    @property
    def key(self) -> str:
        return self._key

    @property
    def length(self) -> int:
        return self._length

    @property
    def metadata(self) -> bytes:
        return self._metadata

    @property
    def is_splat(self) -> bool:
        return self._pattern is not None

    @property
    def is_file(self) -> bool:
        return self._pattern is None

    @property
    def splat_pattern(self) -> bytes:
        if self._pattern is None:
            raise ValueError("Entry is not splat")
        return self._pattern

    @property
    def file_view(self) -> memoryview:
        if self._pattern is not None:
            raise ValueError("Entry is not file storage based")
        if self._buffer is not None:
            return self._buffer
        if not self._handle.is_host_allocation:
            raise ValueError("FileHandle is not based on a host allocation and cannot be mapped")
        if self.length == 0:
            return memoryview(b"")
        return self._handle.host_allocation[self._offset : self._offset + self.length]

    @property
    def file_storage(self) -> tuple:
        if self._pattern is not None:
            raise ValueError("Entry is not file storage based")
        return (self._handle, self._offset)

    def _source(self) -> Any:
        """How irvm's archive writer takes this entry's bytes."""
        if self._pattern is not None:
            return ("splat", self._pattern, self.length)
        if self._buffer is not None:
            return self._buffer
        return ("file", self._path, self._offset, self.length)

    def _held_source(self) -> Any:
        """This entry's bytes as an in-memory archive holds them: an
        entry of a file handle over an fd is read now."""
        if self._pattern is None and self._buffer is None:
            fd = self._handle._fd
            data = os.pread(fd, self.length, self._offset) if fd is not None else None
            if data is None:
                with open(self._path, "rb") as f:
                    f.seek(self._offset)
                    data = f.read(self.length)
            if len(data) != self.length:
                raise ValueError(
                    f"parameter '{self.key}': the file has {len(data)} of its {self.length} bytes at offset {self._offset}"
                )
            return data
        return self._source()

    def __repr__(self) -> str:
        if self._pattern is not None:
            return f"<ParameterIndexEntry {self.key!r} splat {self._pattern!r}:{self.length}>"
        # (iree.runtime's has no closing ">" here.)
        return f"<ParameterIndexEntry {self.key!r} {self._handle!r}:{self._offset}:{self.length}"


def _pattern_bytes(pattern: Any) -> bytes:
    if isinstance(pattern, int):
        raise TypeError("a splat pattern is a buffer (bytes, a numpy array or scalar), not an int")
    data = memoryview(np.asarray(pattern) if isinstance(pattern, np.generic) else pattern).tobytes()
    if len(data) not in (1, 2, 4, 8, 16):
        raise ValueError(f"splat pattern length {len(data)} invalid; must be 1, 2, 4, 8, or 16 bytes")
    return data


class _LoadedArchive:
    """An archive a ParameterIndex loaded: a file by path (``load``), or a
    FileHandle's file or memory (``load_from_file_handle``: `path` None),
    with its entries as read at load (`_irvm._archive_entries`)."""

    def __init__(self, entries: list, *, path: Optional[str] = None, handle: Optional[FileHandle] = None,
                 format: Optional[str] = None):
        self.path = path
        # The format it was read as (`irpa`, `safetensors`, `gguf`).
        self.format = format
        self.entries = entries
        self.handle = handle if handle is not None else FileHandle(path=path)

    def items(self) -> list:
        """`(key, ParameterIndexEntry)` for each entry: a memory handle's
        over its bytes in place, a file's over the file."""
        out = []
        for key, metadata, offset, length, pattern in self.entries:
            if pattern is not None:
                entry = ParameterIndexEntry(key, length, metadata, pattern=pattern)
            elif self.handle._memory is not None:
                entry = ParameterIndexEntry(key, length, metadata, buffer=self.handle._memory[offset : offset + length],
                                            offset=offset, handle=self.handle)
            else:
                entry = ParameterIndexEntry(key, length, metadata, path=self.handle._readable_path(), offset=offset,
                                            handle=self.handle)
            out.append((key, entry))
        return out


class ParameterIndex:
    """Parameters by key: archive files (``load``: .irpa, .safetensors,
    .gguf, memory-mapped), archives in a FileHandle's memory or file
    (``load_from_file_handle``) and entries held in memory (``add_buffer``,
    ``add_splat``), looked up in the order added (the first entry of a key
    wins, as in IREE). A buffer given to ``add_buffer`` is used in place
    (a C-contiguous one; others are copied once), as iree.runtime uses it:
    do not change it while a program reads it. ``create_archive_file``
    writes every entry to one ``.irpa`` file."""

    def __init__(self):
        # Archives (_LoadedArchive) and in-memory entries, in the order added.
        self._sources: list = []

    def load(self, file_path: str | os.PathLike, format: Optional[str] = None, readable: bool = True,
             writable: bool = False, mmap: Optional[bool] = None, *, mode: Optional[str] = None) -> None:
        """Reads the index of the archive at `file_path`, of `format`
        (`irpa`, `safetensors`, `gguf`, or a path or file name ending in
        one, any case), else of the format its extension names, as
        iree.runtime reads it (NotImplementedError for another). `mmap`
        (True, False or None) and `mode` (None or ``"file_async"``, not both)
        are taken as there and change nothing: irvm maps the file."""
        readable = _nanobind_bool(readable, "load", "readable")
        writable = _nanobind_bool(writable, "load", "writable")
        mmap = _nanobind_bool(mmap, "load", "mmap", optional=True)
        mode = _nanobind_str(mode, "load", "mode", optional=True)
        format = _nanobind_str(format, "load", "format", optional=True)
        if mode not in (None, "file_async"):
            raise ValueError(f"unsupported parameter file mode: {mode}")
        if mode is not None and mmap is not None:
            raise ValueError("mode and mmap are mutually exclusive")
        if writable:
            raise NotImplementedError("irvm.compat: parameter archives are read-only")
        path = os.fspath(file_path)
        # Without a format, iree.runtime names the path's extension (`.bin`;
        # none for a file without one), not the path.
        named = os.path.splitext(path)[1] if format is None else format
        if not _known_format(named):
            # iree.runtime opens the file before it looks at the format: a
            # missing file is NOT_FOUND whatever format it is named with.
            try:
                open(path, "rb").close()
            except OSError as e:
                raise _as_iree_error(_irvm.NotFoundError(f"{path}: {e.strerror}")) from e
        archive_format = _archive_format(named, path)
        # Read now, as iree.runtime reads the archive's index at load: a
        # missing file, one that is no archive or is cut short fails here
        # with its exception (ValueError, IndexError), not at items().
        try:
            listed = _irvm._archive_entries(path, archive_format)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        self._sources.append(_LoadedArchive(listed, path=path, format=archive_format))

    def add_buffer(self, key: str, buffer: Any, readable: bool = True, writable: bool = False,
                   metadata: Optional[str] = None) -> None:
        """Adds `key` holding the bytes of `buffer` (any buffer object), with
        `metadata` (a str, as in iree.runtime)."""
        _nanobind_str(key, "add_buffer", "key")
        if writable:
            raise NotImplementedError("irvm.compat: parameters are read-only (writable=True)")
        view = memoryview(buffer)
        if not view.c_contiguous:
            # As iree.runtime refuses it (a ValueError; the cast below
            # raised memoryview's TypeError).
            raise ValueError(f"add_buffer '{key}': the buffer is not C-contiguous")
        # (A view with a 0 in its shape cannot be cast: its bytes are none.)
        view = view.cast("B") if view.nbytes else memoryview(b"")
        self._sources.append(ParameterIndexEntry(key, view.nbytes, _metadata(metadata, "add_buffer"), buffer=view))

    def add_splat(self, key: str, pattern: Any, total_length: int,
                  metadata: Optional[str] = None) -> None:
        """Adds `key`: `total_length` bytes repeating `pattern` (1, 2, 4, 8
        or 16 bytes; iree.runtime accepts other lengths here and fails when
        the archive is built)."""
        if total_length < 0:
            raise ValueError(f"total_length {total_length} is negative")
        if total_length >= 1 << 64:
            # (Else the archive's 64-bit length field refused it later, as
            # an OverflowError naming no entry.)
            raise ValueError(f"splat '{key}': total_length {total_length} does not fit in 64 bits")
        self._sources.append(
            ParameterIndexEntry(key, int(total_length), _metadata(metadata, "add_splat"), pattern=_pattern_bytes(pattern))
        )

    def add_from_file_handle(self, key: str, file_handle: FileHandle, length: int, *, offset: int = 0,
                             metadata: Optional[str] = None) -> None:
        """Adds `key`: `length` bytes of `file_handle` from `offset` (a
        memory handle's bytes are used in place)."""
        if offset < 0 or length < 0:
            raise ValueError(f"add_from_file_handle '{key}': offset {offset} and length {length} must be >= 0")
        if file_handle._memory is not None:
            if offset + length > file_handle._memory.nbytes:
                raise ValueError(
                    f"add_from_file_handle '{key}': bytes [{offset}, {offset + length}) are past the "
                    f"{file_handle._memory.nbytes} bytes of the memory"
                )
            entry = ParameterIndexEntry(key, length, _metadata(metadata, "add_from_file_handle"),
                                        buffer=file_handle._memory[offset : offset + length],
                                        offset=offset, handle=file_handle)
        else:
            entry = ParameterIndexEntry(key, length, _metadata(metadata, "add_from_file_handle"), path=file_handle._readable_path(),
                                        offset=offset, handle=file_handle)
        self._sources.append(entry)

    def load_from_file_handle(self, file_handle: FileHandle, format: str) -> None:
        """Reads the index of the archive in `file_handle` (its memory, or
        its file), of `format` (`irpa`, `safetensors`, `gguf`; a leading dot
        and any case taken, as in iree.runtime: NotImplementedError for
        another). The entries' bytes stay in the handle's memory or file
        (`file_storage` names the handle): bytes that are no archive of
        that format fail here, as `load`'s do."""
        if not isinstance(file_handle, FileHandle):
            raise TypeError(f"load_from_file_handle(): takes a FileHandle, not {type(file_handle).__name__}")
        archive_format = _archive_format(_nanobind_str(format, "load_from_file_handle", "format"))
        source = file_handle._memory if file_handle._memory is not None else file_handle._readable_path()
        try:
            listed = _irvm._archive_entries(source, archive_format)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        self._sources.append(_LoadedArchive(listed, handle=file_handle))

    def __repr__(self) -> str:
        """The index as iree.runtime prints it: a table of the entries."""
        items = self.items()
        rule = "//" + "=" * 3 + "-" * 110 + "=" * 3 + "//"
        lines = [
            rule,
            f"// Parameter scope <global> ({len(items)} entries, {sum(e.length for _, e in items)} total bytes)",
            "//===------------+------------------+------------------+" + "-" * 59 + "===//",
            "//         Start |              End |           Length | Key",
            "//---------------+------------------+------------------+" + "-" * 62 + "//",
        ]
        for key, e in items:
            start, end = ("-", "-") if e.is_splat else (e._offset, e._offset + e.length)
            lines.append(f"{start:>16} | {end:>16} | {e.length:>16} | `{key}`")
        return "\n".join(lines) + "\n\n"

    def reserve(self, new_capacity: int) -> None:
        """A capacity hint (irvm's index grows as needed)."""
        if new_capacity < 0:
            raise ValueError(f"capacity {new_capacity} is negative")

    def items(self) -> list:
        """`(key, ParameterIndexEntry)` for every entry, in order."""
        out = []
        for source in self._sources:
            if isinstance(source, ParameterIndexEntry):
                out.append((source.key, source))
                continue
            out.extend(source.items())
        return out

    def __len__(self) -> int:
        return len(self.items())

    def __getitem__(self, i: int) -> ParameterIndexEntry:
        """Entry `i` in order, as in iree.runtime: TypeError for an index
        that is not a non-negative int, IndexError past the end."""
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise TypeError(f"__getitem__(): takes an entry number (a non-negative int), not {i!r}")
        items = self.items()
        if i >= len(items):
            raise IndexError(
                f"Could not enumerate parameter index: OUT_OF_RANGE; entry {i} out of range "
                f"(have {len(items)} entries in the index)"
            )
        return items[i][1]

    def create_archive_file(self, file_path: str | os.PathLike, file_offset: int = 0,
                            target_index: Optional["ParameterIndex"] = None) -> "ParameterIndex":
        """Writes every entry to an ``.irpa`` archive at `file_path` and
        returns `target_index` (or a new index) with that file loaded. The
        archive is written beside `file_path` and renamed over it: entries
        may copy from the file it replaces."""
        if file_offset != 0:
            raise NotImplementedError("irvm.compat: archives are written at the start of their file (file_offset=0)")
        entries = [(key, e.metadata, e._source()) for key, e in self.items()]
        try:
            _irvm._write_irpa(os.fspath(file_path), entries)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        target = target_index if target_index is not None else ParameterIndex()
        target.load(file_path)
        return target

    def create_provider(self, scope: str = "", *, max_concurrent_operations: Optional[int] = None) -> "ParameterProvider":
        archives: list = []
        pending: list = []

        def flush():
            if pending:
                try:
                    archives.append(_irvm._memory_archive(list(pending)))
                except _irvm.VmError as e:
                    raise _as_iree_error(e) from e.__cause__
                pending.clear()

        for source in self._sources:
            if isinstance(source, ParameterIndexEntry):
                pending.append((source.key, source.metadata, source._held_source()))
            elif source.path is None:
                # A file handle's archive: its entries, as held in memory.
                pending.extend((key, e.metadata, e._held_source()) for key, e in source.items())
            else:
                flush()
                archives.append(_provided_file(source))
        flush()
        return ParameterProvider(scope, archives)


def _known_format(format: str) -> bool:
    """Whether `format` (as _archive_format takes it) names a format irvm reads."""
    try:
        _archive_format(format)
    except NotImplementedError:
        return False
    return True


def _archive_format(format: str, path: Optional[str] = None) -> str:
    """The format iree.runtime reads an archive as, from the text naming it
    (a format, or a path's extension when none is given): the extension of
    its last path component, or that component itself when it has none
    (`iree_io_parse_file_index`), lowercased: `irpa` for `irpa`, `.IRPA`,
    `irpa.` or `a/b.irpa`. NotImplementedError, with iree.runtime's text
    (and the file's `path`), for a format irvm does not read."""
    name = format.rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    chosen = (extension or stem) if dot else name
    if chosen.lower() not in ("irpa", "gguf", "safetensors"):
        raise NotImplementedError(
            f"Could not parse parameter file index: UNIMPLEMENTED; unsupported file format `{chosen}`; "
            "ensure the extension matches one of the supported formats: [.irpa, .gguf, .safetensors]"
            + (f" (reading {path})" if path is not None else "")
        )
    return chosen.lower()


def _provided_file(archive: "_LoadedArchive") -> Any:
    """How a provider names an archive file to irvm: its path, which irvm
    reads by its extension, or, when it was loaded as another format than
    its extension names, a read-only mapping of it (irvm tells an archive
    in memory by its first bytes, which agree with the format the load
    read it as)."""
    if os.path.splitext(archive.path)[1].lower() == "." + archive.format:
        return archive.path
    import mmap

    with open(archive.path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def _metadata(metadata: Optional[str], function: str) -> bytes:
    """An entry's metadata as iree.runtime takes it: a `str` (stored as its
    UTF-8 bytes) or None (no bytes); a TypeError for anything else (bytes
    too), as there."""
    if _nanobind_str(metadata, function, "metadata", optional=True) is None:
        return b""
    return metadata.encode()


class ParameterProvider:
    """The archives of a ParameterIndex under one scope: file paths, and
    in-memory entries as ``.irpa`` archives in bytes."""

    def __init__(self, scope: str, files: list):
        self.scope = scope
        self.files = files


class _ParametersModule(_NativeVmModule):
    """The `io_parameters` module create_io_parameters_module returns: its
    functions, and the archives of its providers by scope."""

    def __init__(self, providers: Sequence[ParameterProvider]):
        super().__init__("io_parameters")
        self.providers = list(providers)


def create_io_parameters_module(instance: VmInstance, *providers: ParameterProvider) -> _ParametersModule:
    """The io_parameters module over `providers` (scoped archives)."""
    return _ParametersModule(providers)
