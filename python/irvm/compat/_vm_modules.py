"""Modules read but not yet in a context: VmInstance, VmModule and its
functions (VmFunction), and how functions are linked (Linkage)."""

from __future__ import annotations

import errno
import os
import stat
import warnings
from typing import Any, Callable, Optional

import numpy as np

from .. import _irvm
from ._errors import _as_iree_error
from ._hal_types import _NanobindEnum


class Linkage(_NanobindEnum):
    """How a module's function is linked (VmModule.lookup_function's
    `linkage`), with iree.runtime's values."""

    INTERNAL = 0
    IMPORT = 1
    IMPORT_OPTIONAL = 3
    EXPORT = 2
    EXPORT_OPTIONAL = 4


class VmInstance:
    """A VM instance (irvm needs none; kept for the API's shape)."""


class VmFunction:
    """A function of a VmModule: name, ordinal, linkage (an int: the
    Linkage it was looked up with), reflection. An import (looked up with
    IMPORT or IMPORT_OPTIONAL: its full name, its import ordinal) has no
    reflection: reading it, or the repr, raises iree.runtime's ValueError."""

    def __init__(self, module: "VmModule", name: str, ordinal: int, reflection: Optional[dict],
                 cconv: Optional[str], linkage: int = 2):
        # The module's name only: as in iree.runtime, a function does not
        # keep its module alive (a PyModuleInterface is destroyed with its
        # module and contexts while its functions are still referenced).
        self._module_name = module.name
        self._name = name
        self._ordinal = ordinal
        self._linkage = linkage
        self._reflection = reflection
        self._cconv = cconv

    # Read-only properties, as iree.runtime's (so the class has them too).
    @property
    def name(self) -> str:
        return self._name

    @property
    def ordinal(self) -> int:
        return self._ordinal

    @property
    def linkage(self) -> int:
        return self._linkage

    @property
    def module_name(self) -> str:
        return self._module_name

    @property
    def reflection(self) -> dict:
        if self._reflection is None:
            raise ValueError(
                f"Error getting reflection attr: INVALID_ARGUMENT; only exported functions can be "
                f"queried ({self.name} is an import of {self._module_name})"
            )
        return self._reflection

    def __repr__(self) -> str:
        return f"<VmFunction {self.name}({self._cconv or ''}), reflection = {self.reflection}>"


# The alignment iree.runtime wants of module memory it uses in place.
_MODULE_ALIGNMENT = 64

_UNALIGNED_COPY_WARNING = (
    "Making copy of unaligned VmModule buffer. It is recommended to make this deterministic by "
    "calling `copy_buffer` to always make a copy or `mmap` to efficiently load from a file. This "
    "warning can be silenced by adding `warn_if_copy=False` to `from_buffer`"
)


def _aligned(buffer: Any) -> bool:
    """Whether `buffer`'s memory starts at a multiple of 64 bytes (an
    empty buffer is)."""
    view = memoryview(buffer).cast("B")
    if not view.nbytes:
        return True
    return np.frombuffer(view, np.uint8).ctypes.data % _MODULE_ALIGNMENT == 0


def _immutable(buffer: Any) -> bytes:
    """`buffer` itself when it is a `bytes` object (immutable: irvm uses it in
    place), else a copy of its bytes."""
    return buffer if type(buffer) is bytes else bytes(memoryview(buffer))


class VmModule:
    """A bytecode module, read but not yet in a context."""

    def __init__(self, source: Any, destroy_callback: Optional[Callable[[], None]] = None):
        try:
            info = _irvm._inspect(source)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        self._source = source
        self._destroy_callback = destroy_callback
        self._name: str = info["name"]
        self._version: int = info["version"]
        self._functions = {}
        for ordinal, (name, attrs) in enumerate(info["exports"]):
            attrs = dict(attrs)
            cconv = attrs.pop("__cconv__", None)
            self._functions[name] = VmFunction(self, name, ordinal, attrs, cconv)
        # Imported functions' full names, in import-ordinal order.
        self._imports: list = list(info["imports"])

    def __del__(self):
        callback = getattr(self, "_destroy_callback", None)
        if callback is not None:
            self._destroy_callback = None
            callback()

    # Read-only properties, as iree.runtime's (so the class has them too).
    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> int:
        return self._version

    @property
    def function_names(self) -> list[str]:
        return list(self._functions)

    def lookup_function(self, name: str, linkage: "Linkage | int" = Linkage.EXPORT) -> Optional[VmFunction]:
        """The function `name` of that linkage, or None, as iree.runtime
        looks it up: EXPORT and EXPORT_OPTIONAL find exports (by local
        name), IMPORT and IMPORT_OPTIONAL the module's imports (by full
        name, `hal.buffer_view.assert`), INTERNAL nothing; the function's
        `linkage` is the one asked for."""
        linkage = getattr(linkage, "value", linkage)
        if linkage in (Linkage.EXPORT.value, Linkage.EXPORT_OPTIONAL.value):
            f = self._functions.get(name)
            if f is None or linkage == f.linkage:
                return f
            return VmFunction(self, name, f.ordinal, f._reflection, f._cconv, linkage)
        if linkage in (Linkage.IMPORT.value, Linkage.IMPORT_OPTIONAL.value) and name in self._imports:
            return VmFunction(self, name, self._imports.index(name), None, None, linkage)
        return None

    @property
    def stashed_flatbuffer_blob(self) -> Any:
        """The module's bytes: the buffer it was made from, or for a file
        (`mmap`) a read-only mapping of it, as in iree.runtime."""
        if isinstance(self._source, str):
            import mmap

            with open(self._source, "rb") as f:
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return self._source

    @staticmethod
    def mmap(instance: VmInstance, filepath: str | os.PathLike, destroy_callback=None) -> "VmModule":
        """A module from a file (memory-mapped); the OSError opening it
        raises when it cannot be opened (FileNotFoundError,
        IsADirectoryError, PermissionError), as in iree.runtime."""
        filepath = os.fspath(filepath)
        if stat.S_ISREG(os.stat(filepath).st_mode):
            # Opened as iree.runtime opens it, for its OSError; other kinds of
            # file (a FIFO, which open() would wait on) are irvm's to refuse.
            with open(filepath, "rb"):
                pass
        elif os.path.isdir(filepath):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), filepath)
        return VmModule(filepath, destroy_callback)

    @staticmethod
    def from_flatbuffer(instance: VmInstance, buffer: Any, warn_if_copy: bool = True) -> "VmModule":
        """A module over `buffer`: a `bytes` object is used without a copy
        (the module keeps it alive); other buffers, which could change
        after the module is verified, are copied, with iree.runtime's
        UserWarning when one is not 64-byte aligned (iree.runtime copies
        only those) and `warn_if_copy`."""
        if warn_if_copy and type(buffer) is not bytes and not _aligned(buffer):
            warnings.warn(_UNALIGNED_COPY_WARNING, UserWarning, stacklevel=2)
        return VmModule(_immutable(buffer))

    @staticmethod
    def from_buffer(instance: VmInstance, buffer: Any, warn_if_copy: bool = True) -> "VmModule":
        """As from_flatbuffer."""
        if warn_if_copy and type(buffer) is not bytes and not _aligned(buffer):
            warnings.warn(_UNALIGNED_COPY_WARNING, UserWarning, stacklevel=2)
        return VmModule(_immutable(buffer))

    @staticmethod
    def copy_buffer(instance: VmInstance, buffer: Any) -> "VmModule":
        return VmModule(bytes(memoryview(buffer)))

    @staticmethod
    def wrap_buffer(instance: VmInstance, buffer: Any, destroy_callback=None,
                    close_buffer: bool = False) -> "VmModule":
        """As from_flatbuffer: `bytes` without a copy, other buffers copied.
        With `close_buffer`, `buffer.close()` (an mmap's) is called when
        the module is destroyed, before `destroy_callback`, as in iree.runtime."""
        if type(buffer) is not bytes and not _aligned(buffer):
            # iree.runtime wraps the memory itself, so refuses it unaligned.
            address = np.frombuffer(memoryview(buffer).cast("B"), np.uint8).ctypes.data
            raise ValueError(
                f"VmModule.from_aligned_memory received an unaligned buffer. Got 0x{address:#x}, "
                f"expected alignment {_MODULE_ALIGNMENT}"
            )
        if close_buffer:
            callback = destroy_callback

            def destroy_callback():
                buffer.close()
                if callback is not None:
                    callback()

        return VmModule(_immutable(buffer), destroy_callback)

    @staticmethod
    def resolve_module_dependency(instance: VmInstance, name: str, minimum_version: int, /) -> "VmModule":
        """Always NOT_FOUND (a ValueError), as in iree.runtime 3.13's wheel,
        whose resolver has no module built in: a `hal` or `io_parameters`
        module comes from create_hal_module or create_io_parameters_module.
        All three arguments are positional and required, as there (a
        TypeError otherwise, as nanobind's for arguments of other types)."""
        version = None
        if not isinstance(minimum_version, float):
            try:
                version = int(minimum_version)
            except (TypeError, ValueError):
                version = None
        if not (isinstance(instance, VmInstance) and isinstance(name, str)
                and version is not None and 0 <= version < 1 << 32):
            raise TypeError(
                "resolve_module_dependency(): incompatible function arguments. The following "
                "argument types are supported:\n    1. resolve_module_dependency(arg0: VmInstance, "
                "arg1: str, arg2: int, /) -> VmModule\n\nInvoked with types: "
                + ", ".join(type(a).__name__ for a in (instance, name, minimum_version))
            )
        raise ValueError(
            f"Error resolving module dependency: NOT_FOUND; required module '{name}' not available "
            "in the build (modules must be registered in order with dependent modules following "
            "those they depend upon)"
        )

    def __repr__(self) -> str:
        return f"<VmModule {self.name} : [{', '.join(self._functions)}]>"


class _NativeVmModule(VmModule):
    """A host module irvm provides (`hal`, `io_parameters`) as
    iree.runtime shows its native modules: its exported functions (their
    calling conventions, empty reflection, ordinals in the module's table,
    sorted by name as IREE's), looked up by EXPORT or EXPORT_OPTIONAL (the
    function's linkage is EXPORT either way); an IMPORT, IMPORT_OPTIONAL
    or INTERNAL lookup is iree.runtime's NotImplementedError. irvm registers
    the module in a context when a program there imports it, or when one of
    its functions is called from Python (VmContext.invoke)."""

    def __init__(self, name: str):
        info = _irvm._host_module_info(name)
        self._source = None
        self._destroy_callback = None
        self._name = info["name"]
        self._version = info["version"]
        self._imports = []
        self._functions = {
            function: VmFunction(self, function, ordinal, {}, cconv)
            for ordinal, (function, cconv) in enumerate(info["functions"])
        }

    def lookup_function(self, name: str, linkage: "Linkage | int" = Linkage.EXPORT) -> Optional[VmFunction]:
        linkage = getattr(linkage, "value", linkage)
        if linkage in (Linkage.INTERNAL.value, Linkage.IMPORT.value, Linkage.IMPORT_OPTIONAL.value):
            raise _as_iree_error(
                _irvm.UnimplementedError(
                    "Error looking up function: UNIMPLEMENTED; native modules do not support "
                    "import/internal function queries"
                )
            )
        if linkage in (Linkage.EXPORT.value, Linkage.EXPORT_OPTIONAL.value):
            return self._functions.get(name)
        return None
