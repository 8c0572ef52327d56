"""iree.runtime's API on irvm: change one import line.

    import irvm.compat as ireert          # was: import iree.runtime as ireert

    config = ireert.Config("local-task")
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(ireert.VmModule.mmap(ctx.instance, "mlp.vmfb"))
    y = ctx.modules.module.predict(x).to_host()

Semantics follow iree.runtime 3.13 on its CPU drivers, ``local-sync`` and
``local-task``; GPU drivers (cuda, hip, vulkan) raise RuntimeError naming
them, other names ValueError, as iree.runtime 3.13 does on a machine without
GPU libraries. Failures are irvm's ``VmError`` subclasses (with ``.status``,
``.location``, ``.backtrace``), each also the built-in iree.runtime 3.13
raises for its status and no other built-in (``ValueError`` for
INVALID_ARGUMENT and NOT_FOUND, ``IndexError`` for OUT_OF_RANGE,
``NotImplementedError`` for UNIMPLEMENTED, ``RuntimeError`` for the rest).
As in iree.runtime, arrays passed to functions are not checked against the
declaration in Python (the program's own checks decide), and reprs of
``VmVariantList``, ``HalBufferView`` and ``HalBuffer`` are iree.runtime's.
Names of iree.runtime that irvm cannot have (fences, semaphores, command
buffers, the tokenizer) raise an AttributeError saying why; ``flags.parse_flags``
accepts iree.runtime's runtime flags with no effect (they tune GPU drivers,
IREE's task system, profiling and capture); ``benchmark_module`` runs
``irvm bench``.
Differences: ``DeviceArray`` results are views of the VM's memory
(no copy); ``HalModuleDebugSink``'s callback gets each
``hal.buffer_view.trace`` (a key and a list of ``HalBufferView``), called on
the calling thread during the call (a call on the same context from there,
which iree.runtime allows, raises FAILED_PRECONDITION: irvm runs one call at
a time per context); ``ParameterIndex`` takes archive
files (``load``) and in-memory entries (``add_buffer``, ``add_splat``; a
C-contiguous buffer is used in place, as iree.runtime uses it); the hal and io_parameters modules are
registered before the program's modules; ``PyModuleInterface`` (host modules
written in Python) is built on ``irvm.HostModule``, and refuses at ``export``
the calling conventions it cannot call (variadic spans, unknown kinds).
"""

from __future__ import annotations

import enum
import errno
import functools
import os
import shlex
import stat
import sys
import types
import warnings
from typing import Any, Callable, Optional, Sequence

import numpy as np
import numpy.lib.mixins

try:
    # As importing iree.runtime does: numpy then knows ml_dtypes' dtypes
    # by name (np.dtype("bfloat16")). irvm needs numpy only.
    import ml_dtypes  # noqa: F401
except ImportError:
    pass

from . import _irvm
from .compat_benchmark import (
    BenchmarkResult,
    BenchmarkTimeoutError,
    BenchmarkToolError,
    benchmark_exe,
    benchmark_module,
)
from .parameter_archives import (
    SplatValue,
    parameter_index_add_numpy_ndarray,
    parameter_index_entry_as_numpy_flat_ndarray,
    parameter_index_entry_as_numpy_ndarray,
    save_archive_file,
)

__all__ = [
    "asdevicearray",
    "benchmark_exe",
    "benchmark_module",
    "BenchmarkResult",
    "BenchmarkTimeoutError",
    "BenchmarkToolError",
    "BoundModule",
    "BufferCompatibility",
    "BufferUsage",
    "Config",
    "create_hal_module",
    "create_io_parameters_module",
    "DeviceArray",
    "FileHandle",
    "flags",
    "FunctionInvoker",
    "get_device",
    "get_driver",
    "get_first_device",
    "HalAllocator",
    "HalBuffer",
    "HalBufferView",
    "HalDevice",
    "HalDriver",
    "HalElementType",
    "HalModuleBufferViewTraceCallback",
    "HalModuleDebugSink",
    "Linkage",
    "load_vm_flatbuffer",
    "load_vm_flatbuffer_file",
    "load_vm_module",
    "load_vm_modules",
    "MappedMemory",
    "MemoryAccess",
    "MemoryType",
    "normalize_value",
    "parameter_index_add_numpy_ndarray",
    "parameter_index_entry_as_numpy_flat_ndarray",
    "parameter_index_entry_as_numpy_ndarray",
    "ParameterIndex",
    "ParameterIndexEntry",
    "ParameterProvider",
    "PyModuleInterface",
    "query_available_drivers",
    "save_archive_file",
    "Shape",
    "SplatValue",
    "SystemContext",
    "TARGET_BACKEND_TO_DRIVER",
    "VmContext",
    "VmFunction",
    "VmInstance",
    "VmModule",
    "VmRef",
    "VmVariantList",
]

_DRIVERS = ("local-sync", "local-task")


# --- errors ------------------------------------------------------------------

# The Python built-in iree.runtime 3.13 raises for each IREE status (its
# binding's status conversion, ApiStatusToPyExcClass; compared live for every
# code in python/tests/test_compat.py): RuntimeError for the statuses not here.
_IREE_RUNTIME_EXCEPTIONS: dict = {
    "INVALID_ARGUMENT": ValueError,
    "NOT_FOUND": ValueError,
    "OUT_OF_RANGE": IndexError,
    "UNIMPLEMENTED": NotImplementedError,
}

_AS_IREE_ERROR: dict = {}


def _builtin_bases(cls: type) -> set:
    return {c for c in cls.__mro__ if c.__module__ == "builtins"}


def _as_iree_error(error: _irvm.VmError) -> _irvm.VmError:
    """The same error as an instance of the built-in exception iree.runtime
    raises for its status (_IREE_RUNTIME_EXCEPTIONS), and of no other
    built-in: of irvm's class for the status where that class derives from
    no other built-in (irvm.UnknownError, irvm.OutOfRangeError), else of a
    class of the same name on irvm.VmError (irvm.NotFoundError is a
    LookupError, iree.runtime's NOT_FOUND a ValueError alone)."""
    cls = type(error)
    status = getattr(error, "status", None)
    builtin = _IREE_RUNTIME_EXCEPTIONS.get(status, RuntimeError)
    args = error.args
    # iree.runtime's text always names the status (`...: NOT_FOUND; ...`),
    # which scripts search for: so does this one's.
    if status and args and isinstance(args[0], str) and f"{status};" not in args[0]:
        args = (f"{status}; {args[0]}", *args[1:])
    if _builtin_bases(cls) == _builtin_bases(builtin):
        if args is error.args:
            return error
        out = cls(*args)
    else:
        out = _iree_error_class(cls, builtin)(*args)
    out.status, out.location, out.backtrace = error.status, error.location, error.backtrace
    out.__cause__ = error.__cause__
    return out


def _iree_error_class(cls: type, builtin: type) -> type:
    """irvm's error class `cls` as an instance of `builtin` (made once)."""
    compat = _AS_IREE_ERROR.get((cls, builtin))
    if compat is None:
        base = cls if _builtin_bases(cls) <= _builtin_bases(builtin) else _irvm.VmError
        compat = type(
            cls.__name__,
            (base, builtin),
            {
                "__module__": "irvm.compat",
                "status": cls.status,
                # Not an attribute of irvm.compat, so pickled as how it is made.
                "__reduce__": _reduce_iree_error,
                "_made_from": (cls, builtin),
            },
        )
        _AS_IREE_ERROR[(cls, builtin)] = compat
    return compat


def _reduce_iree_error(error: BaseException):
    return (_rebuild_iree_error, (*type(error)._made_from, error.args), error.__dict__)


def _rebuild_iree_error(cls: type, builtin: type, args: tuple) -> BaseException:
    """An error of `_iree_error_class(cls, builtin)` from its pickled arguments."""
    return _iree_error_class(cls, builtin)(*args)


# --- element types -------------------------------------------------------------


class HalElementType(enum.IntEnum):
    """IREE's HAL element types (numerical type in the top byte, bits below)."""

    NONE = 0x0
    OPAQUE_8 = 0x8
    OPAQUE_16 = 0x10
    OPAQUE_32 = 0x20
    OPAQUE_64 = 0x40
    INT_4 = 0x10000004
    INT_8 = 0x10000008
    INT_16 = 0x10000010
    INT_32 = 0x10000020
    INT_64 = 0x10000040
    SINT_4 = 0x11000004
    SINT_8 = 0x11000008
    SINT_16 = 0x11000010
    SINT_32 = 0x11000020
    SINT_64 = 0x11000040
    UINT_4 = 0x12000004
    UINT_8 = 0x12000008
    UINT_16 = 0x12000010
    UINT_32 = 0x12000020
    UINT_64 = 0x12000040
    BOOL_8 = 0x13000008
    FLOAT_16 = 0x21000010
    FLOAT_32 = 0x21000020
    FLOAT_64 = 0x21000040
    BFLOAT_16 = 0x22000010
    COMPLEX_64 = 0x23000040
    COMPLEX_128 = 0x23000080
    FLOAT_8_E5M2 = 0x24000008
    FLOAT_8_E4M3_FN = 0x25000008
    FLOAT_8_E5M2_FNUZ = 0x26000008
    FLOAT_8_E4M3_FNUZ = 0x27000008
    FLOAT_8_E8M0_FNU = 0x28000008

    def __repr__(self) -> str:
        return f"HalElementType.{self.name}"

    __str__ = __repr__

    @staticmethod
    def map_to_dtype(element_type: "HalElementType") -> np.dtype:
        """The numpy dtype of an element type, as iree.runtime maps it:
        bfloat16 and the float8 types are ml_dtypes' (ValueError when
        ml_dtypes is not installed); ValueError for types numpy has none
        for (INT_4, OPAQUE_*, NONE)."""
        element_type = HalElementType(element_type)
        dtype = _ELEMENT_TO_DTYPE.get(element_type)
        if dtype is not None:
            return np.dtype(dtype)
        ml_name = _ELEMENT_TO_ML_DTYPE.get(element_type)
        if ml_name is None:
            raise ValueError(f"Unsupported VM Buffer -> numpy dtype mapping: {element_type.name}")
        try:
            import ml_dtypes
        except ImportError:
            raise ValueError(
                f"{element_type.name} maps to ml_dtypes.{ml_name}: install the ml_dtypes package"
            ) from None
        return np.dtype(getattr(ml_dtypes, ml_name))

    @staticmethod
    def is_byte_aligned(element_type: "HalElementType") -> bool:
        """Whether elements take whole bytes."""
        return int(element_type) & 0xFF and (int(element_type) & 0xFF) % 8 == 0

    @staticmethod
    def dense_byte_count(element_type: "HalElementType") -> int:
        """Bytes one element takes."""
        return ((int(element_type) & 0xFF) + 7) // 8


_ELEMENT_TO_DTYPE = {
    HalElementType.INT_8: np.int8,
    HalElementType.INT_16: np.int16,
    HalElementType.INT_32: np.int32,
    HalElementType.INT_64: np.int64,
    HalElementType.SINT_8: np.int8,
    HalElementType.SINT_16: np.int16,
    HalElementType.SINT_32: np.int32,
    HalElementType.SINT_64: np.int64,
    HalElementType.UINT_8: np.uint8,
    HalElementType.UINT_16: np.uint16,
    HalElementType.UINT_32: np.uint32,
    HalElementType.UINT_64: np.uint64,
    HalElementType.BOOL_8: np.bool_,
    HalElementType.FLOAT_16: np.float16,
    HalElementType.FLOAT_32: np.float32,
    HalElementType.FLOAT_64: np.float64,
    HalElementType.COMPLEX_64: np.complex64,
    HalElementType.COMPLEX_128: np.complex128,
}

# Element types numpy has through the ml_dtypes package (as iree.runtime maps them).
_ELEMENT_TO_ML_DTYPE = {
    HalElementType.BFLOAT_16: "bfloat16",
    HalElementType.FLOAT_8_E4M3_FN: "float8_e4m3fn",
    HalElementType.FLOAT_8_E4M3_FNUZ: "float8_e4m3fnuz",
    HalElementType.FLOAT_8_E5M2: "float8_e5m2",
    HalElementType.FLOAT_8_E5M2_FNUZ: "float8_e5m2fnuz",
    HalElementType.FLOAT_8_E8M0_FNU: "float8_e8m0fnu",
}

def _ml_dtype_or_none(element_type: HalElementType) -> Optional[np.dtype]:
    """ml_dtypes' dtype for a bfloat16 or float8 element type; None for
    other types or when ml_dtypes is not installed."""
    name = _ELEMENT_TO_ML_DTYPE.get(element_type)
    if name is None:
        return None
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(getattr(ml_dtypes, name))


def _element_type_of(dtype: np.dtype) -> HalElementType:
    """The element type of an array's dtype, as iree.runtime maps it
    (ml_dtypes' bfloat16 and float8 dtypes too); OPAQUE_8 for others."""
    element_type = _DTYPE_TO_ELEMENT.get(dtype)
    if element_type is not None:
        return element_type
    for element_type, name in _ELEMENT_TO_ML_DTYPE.items():
        if dtype.name == name and dtype == _ml_dtype_or_none(element_type):
            return element_type
    return HalElementType.OPAQUE_8


_DTYPE_TO_ELEMENT = {
    np.dtype(np.int8): HalElementType.SINT_8,
    np.dtype(np.int16): HalElementType.SINT_16,
    np.dtype(np.int32): HalElementType.SINT_32,
    np.dtype(np.int64): HalElementType.SINT_64,
    np.dtype(np.uint8): HalElementType.UINT_8,
    np.dtype(np.uint16): HalElementType.UINT_16,
    np.dtype(np.uint32): HalElementType.UINT_32,
    np.dtype(np.uint64): HalElementType.UINT_64,
    np.dtype(np.bool_): HalElementType.BOOL_8,
    np.dtype(np.float16): HalElementType.FLOAT_16,
    np.dtype(np.float32): HalElementType.FLOAT_32,
    np.dtype(np.float64): HalElementType.FLOAT_64,
    np.dtype(np.complex64): HalElementType.COMPLEX_64,
    np.dtype(np.complex128): HalElementType.COMPLEX_128,
}


class MemoryType(enum.IntFlag):
    """HAL memory types (accepted for compatibility; all memory is host memory)."""

    NONE = 0
    OPTIMAL = 1
    HOST_VISIBLE = 2
    HOST_COHERENT = 4
    HOST_CACHED = 8
    HOST_LOCAL = 70
    DEVICE_VISIBLE = 16
    DEVICE_LOCAL = 48


class BufferUsage(enum.IntFlag):
    """HAL buffer usages (accepted for compatibility)."""

    NONE = 0
    TRANSFER_SOURCE = 1
    TRANSFER_TARGET = 2
    TRANSFER = 3
    DISPATCH_INDIRECT_PARAMS = 256
    DISPATCH_INDIRECT_PARAMETERS = 256
    DISPATCH_UNIFORM_READ = 512
    DISPATCH_STORAGE_READ = 1024
    DISPATCH_STORAGE_WRITE = 2048
    DISPATCH_STORAGE = 3072
    DISPATCH_IMAGE_READ = 4096
    DISPATCH_IMAGE_WRITE = 8192
    DISPATCH_IMAGE = 12288
    SHARING_EXPORT = 65536
    SHARING_REPLICATE = 131072
    SHARING_CONCURRENT = 262144
    SHARING_IMMUTABLE = 524288
    MAPPING_SCOPED = 16777216
    MAPPING_PERSISTENT = 33554432
    MAPPING_OPTIONAL = 67108864
    MAPPING_ACCESS_RANDOM = 134217728
    MAPPING_ACCESS_SEQUENTIAL_WRITE = 268435456
    MAPPING = 150994944
    DEFAULT = 3075


class MemoryAccess(enum.IntFlag):
    """HAL memory access bits (accepted for compatibility)."""

    NONE = 0
    READ = 1
    WRITE = 2
    DISCARD = 4
    DISCARD_WRITE = 6
    ALL = 7


class BufferCompatibility(enum.IntFlag):
    """HAL buffer compatibility bits (accepted for compatibility)."""

    NONE = 0
    ALLOCATABLE = 1
    IMPORTABLE = 2
    EXPORTABLE = 4
    QUEUE_TRANSFER = 1024
    QUEUE_DISPATCH = 2048


class Linkage(enum.Enum):
    """How a module's function is linked (VmModule.lookup_function's
    `linkage`), with iree.runtime's values."""

    INTERNAL = 0
    IMPORT = 1
    IMPORT_OPTIONAL = 3
    EXPORT = 2
    EXPORT_OPTIONAL = 4


# --- drivers and devices ------------------------------------------------------


# The GPU drivers iree.runtime 3.13's wheel registers: irvm does not provide
# them, so they fail as iree.runtime's do on a machine without their
# libraries (RuntimeError, UNAVAILABLE); any other name is not a driver at all
# (ValueError, NOT_FOUND), as there.
_GPU_DRIVERS = ("cuda", "hip", "vulkan")


def _check_driver(name: str) -> str:
    driver, _, rest = name.partition("://")
    if driver in _GPU_DRIVERS:
        raise RuntimeError(
            f"HAL driver '{driver}' is not available in irvm: its devices are the CPU "
            f"drivers {', '.join(_DRIVERS)} (GPU drivers such as cuda and vulkan are not "
            "provided)"
        )
    if driver not in _DRIVERS:
        raise ValueError(f"NOT_FOUND; no driver '{driver}' registered (irvm has {', '.join(_DRIVERS)})")
    if rest.split("?", 1)[0]:
        raise ValueError(f"NOT_FOUND; device paths not yet implemented; creating device '{name}'")
    return name


def query_available_drivers() -> list[str]:
    """The drivers irvm provides: local-sync and local-task."""
    return list(_DRIVERS)


class HalDriver:
    """A HAL driver (local-sync or local-task)."""

    def __init__(self, name: str):
        self.name = _check_driver(name)

    @staticmethod
    def query() -> list[str]:
        """The drivers irvm provides (iree.runtime's lists its GPU drivers too)."""
        return list(_DRIVERS)

    def create_default_device(self, allocators: Optional[list] = None) -> "HalDevice":
        return HalDevice(self.name)

    def create_device(self, device: Any, params: Optional[dict] = None,
                      allocators: Optional[list] = None) -> "HalDevice":
        """The device with id `device` (an int), or the one a dict of
        query_available_devices() describes: the CPU driver's one device, 0
        (ValueError for another, as in iree.runtime)."""
        if isinstance(device, dict):
            device_id = device.get("device_id")
        elif isinstance(device, int) and not isinstance(device, bool):
            device_id = device
        else:
            raise TypeError(
                f"create_device(): takes a device id (int) or a device_info dict, not {type(device).__name__}"
            )
        if device_id != 0:
            raise ValueError(
                f"Device id {device_id} not found. Available devices: {self.query_available_devices()}"
            )
        return HalDevice(self.name)

    def create_device_by_uri(self, device_uri: str, allocators: Optional[list] = None) -> "HalDevice":
        return HalDevice(device_uri)

    def query_available_devices(self) -> list[dict]:
        return [{"device_id": 0, "path": "", "name": "default"}]

    def __repr__(self) -> str:
        return f"<HalDriver {self.name}>"


class HalDevice:
    """A CPU device; modules run on it through the contexts that use it."""

    def __init__(self, uri: str = "local-task"):
        self.uri = _check_driver(uri)
        self.driver = uri.split("://", 1)[0]
        self.allocator = HalAllocator(self)

    def __repr__(self) -> str:
        # iree.runtime's repr is the driver's name.
        return self.driver

    def __getattr__(self, name: str) -> Any:
        reason = _DEVICE_NOT_PROVIDED.get(name)
        if reason is not None:
            raise AttributeError(f"irvm.compat's HalDevice has no {name} (iree.runtime's): {reason}")
        raise AttributeError(f"'HalDevice' object has no attribute '{name}'")


_DEVICE_NOT_PROVIDED = {
    **dict.fromkeys(
        ("create_semaphore", "queue_alloca", "queue_copy", "queue_dealloca", "queue_execute"),
        "irvm's device queue is driven by programs only; calls are synchronous",
    ),
    **dict.fromkeys(
        ("begin_profiling", "end_profiling", "flush_profiling"),
        "HAL profiling sessions are not recorded; irvm's profiles come from `irvm run --profile`",
    ),
    **dict.fromkeys(
        ("begin_external_capture", "end_external_capture"),
        "external capture tools (RenderDoc, Metal) have no CPU counterpart",
    ),
    **dict.fromkeys(
        ("create_dlpack_capsule", "from_dlpack_capsule"),
        "DLPack exchange is not provided; results are numpy arrays over the VM's memory already",
    ),
}


# Drivers get_driver made, by name (iree.runtime caches them so).
_DRIVERS_MADE: dict = {}


def get_driver(device_uri: str) -> HalDriver:
    """The driver of `device_uri` (a driver name, or `driver://...`), the
    same object for the same driver, as in iree.runtime: ValueError for a
    name that is no driver, RuntimeError for GPU drivers (cuda, hip,
    vulkan: irvm has none)."""
    name = device_uri.split("://", 1)[0]
    driver = _DRIVERS_MADE.get(name)
    if driver is None:
        driver = _DRIVERS_MADE[name] = HalDriver(name)
    return driver


# Devices get_device made, by URI (iree.runtime caches them so).
_DEVICES: dict = {}


def get_device(device_uri: str, cache: bool = True) -> HalDevice:
    """A device by URI (`local-task`, `local-sync`); errors as get_driver's,
    and ValueError for a device path (`local-task://5`). With `cache`, the
    same device for the same URI, as in iree.runtime."""
    if cache and device_uri in _DEVICES:
        return _DEVICES[device_uri]
    device = get_driver(device_uri).create_device_by_uri(device_uri)
    if cache:
        _DEVICES[device_uri] = device
    return device


def get_first_device(device_uris: Optional[Sequence[str]] = None, cache: bool = True) -> HalDevice:
    """The first device of `device_uris` that irvm has (default:
    IREE_DEFAULT_DEVICE, else local-task), as iree.runtime picks it: names
    that are no driver are skipped; when none is left, RuntimeError if a
    driver failed (a GPU driver), else ValueError."""
    uris = device_uris
    if uris is None:
        uris = [s.strip() for s in os.environ.get("IREE_DEFAULT_DEVICE", "local-task").split(",")]
    failure = None
    for uri in uris:
        try:
            return get_device(uri, cache=cache)
        except ValueError:
            continue
        except RuntimeError as e:
            failure = e
    if failure is not None:
        raise RuntimeError("Could not create device. Exception for last tried follows.") from failure
    raise ValueError(f"No device found from list {list(uris)}")


def _bitfield_text(value: int, names: Sequence[tuple]) -> str:
    """`value` as IREE's iree_bitfield_format writes it: the names whose
    bits are all set, in table order (combined names first), each taking
    its bits; bits left over in hex."""
    parts = []
    for bits, name in names:
        if bits and value & bits == bits:
            parts.append(name)
            value &= ~bits
    if value:
        parts.append(f"{value:#x}")
    return "|".join(parts) if parts else "NONE"


# IREE's tables for iree_hal_memory_type_format and iree_hal_buffer_usage_format.
_MEMORY_TYPE_NAMES = (
    (70, "HOST_LOCAL"), (48, "DEVICE_LOCAL"), (1, "OPTIMAL"), (2, "HOST_VISIBLE"),
    (4, "HOST_COHERENT"), (8, "HOST_CACHED"), (16, "DEVICE_VISIBLE"),
)
_BUFFER_USAGE_NAMES = (
    (3, "TRANSFER"), (3072, "DISPATCH_STORAGE"), (12288, "DISPATCH_IMAGE"),
    (150994944, "MAPPING"), (1, "TRANSFER_SOURCE"), (2, "TRANSFER_TARGET"),
    (256, "DISPATCH_INDIRECT_PARAMETERS"), (512, "DISPATCH_UNIFORM_READ"),
    (1024, "DISPATCH_STORAGE_READ"), (2048, "DISPATCH_STORAGE_WRITE"),
    (4096, "DISPATCH_IMAGE_READ"), (8192, "DISPATCH_IMAGE_WRITE"),
    (65536, "SHARING_EXPORT"), (131072, "SHARING_REPLICATE"),
    (262144, "SHARING_CONCURRENT"), (524288, "SHARING_IMMUTABLE"),
    (16777216, "MAPPING_SCOPED"), (33554432, "MAPPING_PERSISTENT"),
    (67108864, "MAPPING_OPTIONAL"), (134217728, "MAPPING_ACCESS_RANDOM"),
    (268435456, "MAPPING_ACCESS_SEQUENTIAL_WRITE"),
)

# What IREE's CPU heap allocator gives for a request: device-local memory
# is host visible too, and every buffer is mappable (scoped, persistent,
# random access).
_HEAP_MAPPING = 16777216 | 33554432 | 134217728
_RESULT_MEMORY_TYPE = 50  # DEVICE_LOCAL|HOST_VISIBLE
_RESULT_USAGE = int(3075 | _HEAP_MAPPING)


def _heap_memory_type(memory_type: int) -> int:
    memory_type = int(memory_type)
    return memory_type | 2 if memory_type & 32 else memory_type


def _storage_text(byte_length: int, memory_type: int, allowed_usage: int) -> str:
    """A buffer's size, memory type, access and usage, as IREE formats them."""
    return (
        f"{byte_length} bytes (at offset 0 into {byte_length}), "
        f"memory_type={_bitfield_text(memory_type, _MEMORY_TYPE_NAMES)}, allowed_access=ALL, "
        f"allowed_usage={_bitfield_text(allowed_usage, _BUFFER_USAGE_NAMES)}"
    )


def _element_type_text(element_type: int) -> str:
    """An element type as iree.runtime's list repr prints it (its 32 bits
    with the bytes in reverse order: FLOAT_32, 0x21000020, is 0x20000021)."""
    return f"0x{int.from_bytes(int(element_type).to_bytes(4, 'little'), 'big'):08x}"


class HalBuffer:
    """Device memory without a shape (irvm's is host memory): what
    `HalAllocator.allocate_buffer` and `allocate_buffer_copy` without an
    element type return, and `HalBufferView.get_buffer()`."""

    def __init__(self, data: np.ndarray, memory_type: int = _RESULT_MEMORY_TYPE,
                 allowed_usage: int = _RESULT_USAGE):
        # The bytes, a flat uint8 array (a view of a buffer view's array).
        self._bytes = data
        self._memory_type = int(memory_type)
        self._allowed_usage = int(allowed_usage)

    def byte_length(self) -> int:
        return self._bytes.nbytes

    def memory_type(self) -> int:
        return self._memory_type

    def allowed_usage(self) -> int:
        return self._allowed_usage

    def map(self) -> "MappedMemory":
        return MappedMemory(self._bytes)

    def fill_zero(self, byte_offset: int, byte_length: int) -> None:
        """Zeroes `byte_length` bytes from `byte_offset` (IndexError when
        the range is not inside the buffer, as iree.runtime's OUT_OF_RANGE)."""
        if byte_offset < 0 or byte_length < 0 or byte_offset + byte_length > self._bytes.nbytes:
            raise IndexError(
                f"OUT_OF_RANGE; fill_zero range [{byte_offset}, {byte_offset + byte_length}) "
                f"is outside the buffer's {self._bytes.nbytes} bytes"
            )
        self._bytes[byte_offset : byte_offset + byte_length] = 0

    def create_view(self, shape: Any, element_size: int) -> "HalBufferView":
        """A view of the buffer with `shape` and opaque elements of
        `element_size` bytes (OPAQUE_8..OPAQUE_64), as iree.runtime makes it."""
        opaque = {1: HalElementType.OPAQUE_8, 2: HalElementType.OPAQUE_16,
                  4: HalElementType.OPAQUE_32, 8: HalElementType.OPAQUE_64}.get(element_size)
        if opaque is None:
            raise ValueError(f"INVALID_ARGUMENT; element_size {element_size} is not 1, 2, 4 or 8 bytes")
        return HalBufferView(self, shape, opaque)

    @property
    def ref(self) -> "VmRef":
        """A reference to this buffer (what push_ref takes)."""
        return VmRef(self)

    __iree_vm_ref__ = ref

    @staticmethod
    def __iree_vm_cast__(ref: "VmRef") -> "HalBuffer":
        return ref.deref(HalBuffer)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, HalBuffer):
            return NotImplemented
        return (_address(self._bytes), self._bytes.nbytes) == (_address(other._bytes), other._bytes.nbytes)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<HalBuffer {_storage_text(self._bytes.nbytes, self._memory_type, self._allowed_usage)}>"


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


class Shape(list):
    """A shape (iree.runtime's `Shape([2, 3])`): a list of dimensions."""


def _dtype_of_element(element_type: HalElementType) -> np.dtype:
    """The dtype a buffer view of `element_type` holds its elements as:
    its numpy (or ml_dtypes) dtype, else unsigned integers of its width."""
    dtype = _ELEMENT_TO_DTYPE.get(element_type)
    if dtype is not None:
        return np.dtype(dtype)
    ml_dtype = _ml_dtype_or_none(element_type)
    if ml_dtype is not None:
        return ml_dtype
    width = HalElementType.dense_byte_count(element_type)
    if width not in (1, 2, 4, 8):
        raise ValueError(f"INVALID_ARGUMENT; element type {element_type.name} has no whole-byte width")
    return np.dtype(f"u{width}")


def _result_element_type(array: np.ndarray) -> Optional[HalElementType]:
    """The element type the program gave a result array (its bytes, at the
    end of the array's `base` chain, say it: `i32` results are INT_32, as
    in iree.runtime, where numpy's int32 says SINT_32); None for arrays
    that are not results, or of a type HalElementType does not name."""
    base = array
    while base is not None and not hasattr(base, "_element_type"):
        base = getattr(base, "base", None)
        if isinstance(base, memoryview):
            base = base.obj
    if base is None:
        return None
    try:
        element_type = HalElementType(base._element_type)
    except (TypeError, ValueError):
        return None
    # (A view of the bytes as another dtype of the same width keeps them;
    # one of another width is no longer that result.)
    if HalElementType.dense_byte_count(element_type) != array.dtype.itemsize:
        return None
    return element_type


class HalBufferView:
    """A tensor: host memory with a shape and an element type.
    `HalBufferView(buffer, shape, element_type)` views the start of a
    HalBuffer, as in iree.runtime (IndexError when the buffer is too
    short); irvm.compat also makes one from an array
    (`HalBufferView(array, element_type=None)`)."""

    def __init__(self, array: Any, shape: Any = None, element_type: Optional[int] = None):
        self._memory_type, self._allowed_usage = _RESULT_MEMORY_TYPE, _RESULT_USAGE
        # The backing buffer's bytes (a view over an array: the array's).
        self._buffer_length: Optional[int] = None
        if isinstance(array, HalBuffer):
            if shape is None or element_type is None:
                raise TypeError("HalBufferView(buffer, shape, element_type): give the shape and element type")
            self._element_type = HalElementType(element_type)
            dims = [int(d) for d in shape]
            dtype = _dtype_of_element(self._element_type)
            need = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
            if need > array.byte_length():
                raise IndexError(
                    f"creating buffer view: OUT_OF_RANGE; buffer view byte length {need} exceeds "
                    f"backing buffer byte length {array.byte_length()}"
                )
            self._array = array._bytes[:need].view(dtype).reshape(dims)
            self._memory_type, self._allowed_usage = array._memory_type, array._allowed_usage
            self._buffer_length = array.byte_length()
            return
        if isinstance(shape, int) and element_type is None:
            # HalBufferView(array, element_type) by position.
            shape, element_type = None, shape
        if shape is not None:
            raise TypeError("HalBufferView(array, element_type=None): an array's view takes its shape")
        if element_type is None:
            element_type = _result_element_type(array)
        if element_type is None:
            element_type = _element_type_of(array.dtype)
        self._element_type = HalElementType(element_type)
        # The bits of another type of the same width given with an element
        # type (a uint16 array with BFLOAT_16, float32 data with SINT_32)
        # are held as that type's dtype, so that the program is given that
        # type and arrays of it come out.
        try:
            dtype = _dtype_of_element(self._element_type)
        except ValueError:
            dtype = array.dtype
        if array.dtype != dtype and array.dtype.itemsize == dtype.itemsize:
            array = array.view(dtype)
        self._array = array

    @property
    def shape(self) -> list[int]:
        return list(self._array.shape)

    @property
    def element_type(self) -> HalElementType:
        return self._element_type

    @property
    def byte_length(self) -> int:
        return self._array.nbytes

    def map(self) -> "MappedMemory":
        return MappedMemory(self._array)

    def get_buffer(self) -> HalBuffer:
        """The buffer the view is over (the same memory)."""
        return HalBuffer(self._array.reshape(-1).view(np.uint8), self._memory_type, self._allowed_usage)

    @property
    def ref(self) -> "VmRef":
        """A reference to this buffer view (what a Python host function
        returns for a ref result)."""
        return VmRef(self)

    __iree_vm_ref__ = ref

    @staticmethod
    def __iree_vm_cast__(ref: "VmRef") -> "HalBufferView":
        """The buffer view `ref` refers to (ValueError for another type)."""
        return ref.deref(HalBufferView)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, HalBufferView):
            return NotImplemented
        return self.get_buffer() == other.get_buffer() and (self.shape, self._element_type) == (
            other.shape, other._element_type)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        dims = ", ".join(str(d) for d in self._array.shape)
        backing = self._buffer_length if self._buffer_length is not None else self._array.nbytes
        storage = _storage_text(backing, self._memory_type, self._allowed_usage)
        return f"<HalBufferView ({dims}), element_type={_element_type_text(self._element_type)}, {storage}>"


class MappedMemory:
    """Host access to a buffer view's bytes."""

    def __init__(self, array: np.ndarray):
        self._array = array

    def asarray(self, shape: Sequence[int], numpy_dtype_descr: Any) -> np.ndarray:
        flat = self._array.reshape(-1).view(np.uint8)
        return flat.view(numpy_dtype_descr).reshape(shape)


def _host_bytes(buffer: Any, copy: bool = True) -> np.ndarray:
    """`buffer`'s bytes as an array (a copy, or with `copy=False` over the
    same memory), refused as iree.runtime refuses it: TypeError for
    objects without the buffer protocol (a list), ValueError for arrays
    that are not C-contiguous."""
    if isinstance(buffer, np.ndarray):
        if not buffer.flags.c_contiguous:
            raise ValueError("ndarray is not C-contiguous")
        return buffer.copy(order="C") if copy else buffer
    try:
        view = memoryview(buffer)
    except TypeError:
        raise TypeError(f"a bytes-like object is required, not '{type(buffer).__name__}'") from None
    if not view.c_contiguous:
        raise ValueError("buffer is not C-contiguous")
    return np.array(view, copy=True, order="C") if copy else np.asarray(view)


class HalAllocator:
    """The device's allocator: host memory as buffers and buffer views."""

    def __init__(self, device: HalDevice):
        self._device = device

    def allocate_buffer(self, memory_type: int, allowed_usage: int, allocation_size: int) -> HalBuffer:
        """A zeroed buffer of `allocation_size` bytes."""
        if allocation_size < 0:
            raise ValueError(f"INVALID_ARGUMENT; allocation_size {allocation_size} is negative")
        return HalBuffer(np.zeros(int(allocation_size), np.uint8), _heap_memory_type(memory_type),
                         int(allowed_usage) | _HEAP_MAPPING)

    def allocate_buffer_copy(
        self,
        memory_type: int = MemoryType.DEVICE_LOCAL,
        allowed_usage: int = BufferUsage.DEFAULT,
        device: Optional[HalDevice] = None,
        buffer: Any = None,
        element_type: Optional[int] = None,
    ) -> "HalBuffer | HalBufferView":
        """A copy of `buffer` (an object with the buffer protocol, or an
        array of ml_dtypes' dtypes): a HalBufferView of its shape when
        `element_type` is given, else a HalBuffer of its bytes, as in
        iree.runtime."""
        array = _host_bytes(buffer)
        memory_type = _heap_memory_type(memory_type)
        allowed_usage = int(allowed_usage) | _HEAP_MAPPING
        if element_type is None:
            return HalBuffer(array.reshape(-1).view(np.uint8), memory_type, allowed_usage)
        view = HalBufferView(array, element_type=element_type)
        view._memory_type, view._allowed_usage = memory_type, allowed_usage
        return view

    def allocate_host_staging_buffer_copy(self, device: HalDevice, initial_contents: Any) -> HalBuffer:
        """A host-visible copy of `initial_contents` (a buffer) for transfers."""
        array = _host_bytes(initial_contents)
        return HalBuffer(array.reshape(-1).view(np.uint8), _RESULT_MEMORY_TYPE, 3 | _HEAP_MAPPING)

    def import_host_allocation(self, buffer_obj: Any, memory_type: int, allowed_usage: int) -> HalBuffer:
        """A HalBuffer over `buffer_obj`'s memory, not copied: writes to
        either are seen by the other (C-contiguous buffers only)."""
        array = _host_bytes(buffer_obj, copy=False)
        return HalBuffer(array.reshape(-1).view(np.uint8), int(memory_type), int(allowed_usage) | 3 | _HEAP_MAPPING)

    def query_buffer_compatibility(self, memory_type: int, allowed_usage: int, intended_usage: int,
                                   allocation_size: int) -> int:
        """BufferCompatibility bits, as IREE's CPU heap allocator answers:
        any buffer is allocatable, importable and exportable; device-visible
        memory is usable by queue transfers and dispatches its usage allows."""
        compatibility = BufferCompatibility.ALLOCATABLE | BufferCompatibility.IMPORTABLE | BufferCompatibility.EXPORTABLE
        if int(memory_type) & MemoryType.DEVICE_VISIBLE:
            if int(allowed_usage) & BufferUsage.TRANSFER:
                compatibility |= BufferCompatibility.QUEUE_TRANSFER
            if int(allowed_usage) & BufferUsage.DISPATCH_STORAGE:
                compatibility |= BufferCompatibility.QUEUE_DISPATCH
        return int(compatibility)

    @property
    def has_statistics(self) -> bool:
        """False: irvm's allocator keeps no statistics (as an IREE build
        without IREE_STATISTICS_ENABLE)."""
        return False

    @property
    def statistics(self) -> dict:
        """Empty: no statistics are kept (has_statistics)."""
        return {}

    @property
    def formatted_statistics(self) -> str:
        """Empty: no statistics are kept (has_statistics)."""
        return ""

    def trim(self) -> None:
        """Nothing to release: irvm's buffers are freed when the last
        reference goes."""


# --- arrays --------------------------------------------------------------------


class DeviceArray(numpy.lib.mixins.NDArrayOperatorsMixin):
    """A tensor on the device. irvm's device memory is host memory, so the
    array is always host accessible: `to_host()` returns a numpy view of
    the VM's buffer (no copy). As in iree.runtime, one made with
    `implicit_host_transfer=False` (asdevicearray's default) refuses
    numpy's implicit conversions (`np.asarray`, arithmetic): ValueError,
    until `to_host()`; results of calls allow them. numpy functions
    (`np.sum`, `np.concatenate`) take the host array, where iree.runtime
    3.13 raises TypeError for every one but `np.shape` and `np.reshape`."""

    def __init__(self, device: Any, buffer_view: Any, implicit_host_transfer: bool = False, override_dtype=None):
        self._device = device
        array = buffer_view._array if isinstance(buffer_view, HalBufferView) else np.asarray(buffer_view)
        if override_dtype is not None and np.dtype(override_dtype) != array.dtype:
            # As iree.runtime's: the elements converted (bools held as int8).
            array = array.astype(override_dtype)
        self._array = array
        self._implicit_host_transfer = implicit_host_transfer
        self._transferred = False
        self._buffer_view = buffer_view if isinstance(buffer_view, HalBufferView) else HalBufferView(array)

    def _transfer_to_host(self, implicit: bool) -> np.ndarray:
        if implicit and not self._implicit_host_transfer:
            raise ValueError(
                "DeviceArray cannot be implicitly transferred to the host: "
                "if necessary, do an explicit transfer via .to_host()"
            )
        self._transferred = True
        return self._array

    @property
    def _host_array(self) -> np.ndarray:
        return self._transfer_to_host(True)

    def __array__(self, dtype=None, copy=None):
        host = self._transfer_to_host(True)
        if dtype is None:
            return host if not copy else host.copy()
        return host.astype(dtype, copy=bool(copy) if copy is not None else True)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.shape:
            return self.shape
        if func is np.reshape:
            return self.reshape(*args[1:], **kwargs)

        def host(x):
            # (Also inside the lists and tuples numpy functions take, as
            # np.concatenate's: else numpy dispatched here again, forever.)
            if isinstance(x, DeviceArray):
                return x.to_host()
            if isinstance(x, (list, tuple)):
                return type(x)(host(v) for v in x)
            return x

        return func(*[host(a) for a in args], **{k: host(v) for k, v in kwargs.items()})

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        def host(x):
            return x._transfer_to_host(True) if isinstance(x, DeviceArray) else x

        if kwargs.get("out") is not None:
            kwargs = dict(kwargs, out=tuple(host(o) for o in kwargs["out"]))
        return getattr(ufunc, method)(*[host(i) for i in inputs], **kwargs)

    def __repr__(self) -> str:
        return f"<IREE DeviceArray: shape={self.shape}, dtype={self.dtype}>"

    @property
    def is_host_accessible(self) -> bool:
        """Whether the array has been transferred (mapped) to the host."""
        return self._transferred

    def to_host(self) -> np.ndarray:
        return self._transfer_to_host(False)

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def shape(self) -> list[int]:
        return list(self._array.shape)

    @property
    def size(self) -> int:
        return self._array.size

    def __len__(self) -> int:
        return len(self._array)

    def astype(self, dtype, casting="unsafe", copy=True):
        """The elements as `dtype` (a numpy array); the array itself when
        it is of `dtype` already and `copy` is False."""
        if self.dtype == dtype and not copy:
            return self
        return self.to_host().astype(dtype, casting=casting, copy=copy)

    def reshape(self, *args) -> np.ndarray:
        return self.to_host().reshape(*args)

    def __iter__(self):
        return iter(self.to_host())

    def __getitem__(self, index):
        return self.to_host()[index]

    def __deepcopy__(self, memo):
        return self.to_host()

    def __reduce__(self):
        return (np.asarray, (self.to_host().copy(),))


def asdevicearray(device: HalDevice, a: Any, dtype=None, *, implicit_host_transfer: bool = False,
                  memory_type=MemoryType.DEVICE_LOCAL, allowed_usage=BufferUsage.DEFAULT,
                  element_type: Optional[int] = None) -> DeviceArray:
    """A DeviceArray of `a` (np.asarray's rules; a DeviceArray itself when
    no dtype is given), as iree.runtime makes it: its element type is the
    dtype's (ValueError for a dtype IREE has none for); `element_type`,
    `memory_type` and `allowed_usage` are ignored, as there."""
    if isinstance(a, DeviceArray):
        if dtype is None:
            return a
        a = a.to_host()
    array = np.asarray(a, dtype=dtype, order="C")
    mapped = _element_type_of(array.dtype)
    if mapped == HalElementType.OPAQUE_8:
        raise ValueError(f"Could not map dtype {array.dtype} to IREE element type")
    view = device.allocator.allocate_buffer_copy(
        memory_type=memory_type, allowed_usage=allowed_usage, device=device, buffer=array, element_type=mapped
    )
    return DeviceArray(device, view, implicit_host_transfer=implicit_host_transfer, override_dtype=array.dtype)


# --- modules -------------------------------------------------------------------


class VmInstance:
    """A VM instance (irvm needs none; kept for the API's shape)."""


class VmFunction:
    """An exported function of a VmModule: name, ordinal, reflection."""

    def __init__(self, module: "VmModule", name: str, ordinal: int, reflection: dict, cconv: Optional[str]):
        # The module's name only: as in iree.runtime, a function does not
        # keep its module alive (a PyModuleInterface is destroyed with its
        # module and contexts while its functions are still referenced).
        self._module_name = module.name
        self.name = name
        self.ordinal = ordinal
        self.linkage = 2  # export
        self.reflection = reflection
        self._cconv = cconv

    @property
    def module_name(self) -> str:
        return self._module_name

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
        self.name: str = info["name"]
        self.version: int = info["version"]
        self._functions = {}
        for ordinal, (name, attrs) in enumerate(info["exports"]):
            attrs = dict(attrs)
            cconv = attrs.pop("__cconv__", None)
            self._functions[name] = VmFunction(self, name, ordinal, attrs, cconv)

    def __del__(self):
        callback = getattr(self, "_destroy_callback", None)
        if callback is not None:
            self._destroy_callback = None
            callback()

    @property
    def function_names(self) -> list[str]:
        return list(self._functions)

    def lookup_function(self, name: str, linkage: "Linkage | int" = Linkage.EXPORT) -> Optional[VmFunction]:
        """The export `name`, or None (None for any other linkage: irvm.compat
        looks up exports only; iree.runtime finds imports too)."""
        if getattr(linkage, "value", linkage) not in (Linkage.EXPORT.value, Linkage.EXPORT_OPTIONAL.value):
            return None
        return self._functions.get(name)

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
    def resolve_module_dependency(instance: VmInstance, name: str, minimum_version: int = 0) -> "VmModule":
        """Always NOT_FOUND (a ValueError), as in iree.runtime 3.13's wheel,
        whose resolver has no module built in: a `hal` or `io_parameters`
        module comes from create_hal_module or create_io_parameters_module."""
        raise ValueError(
            f"Error resolving module dependency: NOT_FOUND; required module '{name}' not available "
            "in the build (modules must be registered in order with dependent modules following "
            "those they depend upon)"
        )

    def __repr__(self) -> str:
        return f"<VmModule {self.name} : [{', '.join(self._functions)}]>"


class _PyVmModule(VmModule):
    """The VmModule of a PyModuleInterface: an irvm.HostModule, fixed."""

    def __init__(self, host: "_irvm.HostModule", cconvs: list):
        self._source = host
        self._destroy_callback = None
        self.name = host.name
        self.version = 0
        # Each function with its calling convention as exported (`0v`).
        self._functions = {
            name: VmFunction(self, name, ordinal, {}, cconv)
            for ordinal, ((name, _), cconv) in enumerate(zip(host.functions, cconvs))
        }


def _result_count(cconv: str) -> int:
    """How many values the calling convention returns (`0v`, `0ii`: none)."""
    _, _, results = cconv.partition("_")
    return len(results.replace("v", ""))


def _host_value(value: Any) -> Any:
    """A Python host function's result as irvm converts it."""
    return value._vm_value() if isinstance(value, VmRef) else _to_vm(value)


def _with_vm_refs(function: Callable, results: int) -> Callable:
    """`function` taking ref arguments as VmRef and returning VmRef (or
    VmVariantList, HalBufferView, arrays) for ref results."""

    def call(state, *args):
        out = function(state, *[VmRef(a) if isinstance(a, _irvm.Ref) else a for a in args])
        if results == 1:
            return _host_value(out)
        if results > 1 and isinstance(out, (tuple, list)):
            return tuple(_host_value(v) for v in out)
        return out

    return call


class PyModuleInterface:
    """A VM module whose functions are Python callables (iree.runtime's):
    `export(name, cconv, callable)` each function, then `create()` the
    VmModule, registered in contexts before the programs that import it.
    `ctor(interface)` makes each context's state object; an export is called
    as `callable(state, *args)`: numbers as int and float, refs as VmRef; one
    result returned as the value, several as a tuple (VmRef for refs, from
    `.ref`). What the callable raises fails the call (irvm's error naming the
    function, the exception's type and message; a RuntimeError, as in
    iree.runtime); KeyboardInterrupt reaches the caller as itself.
    Differences: a calling convention irvm cannot call (an unknown kind)
    is refused at `export` (iree.runtime refuses it at the call); variadic
    ones are refused at `export`, as there."""

    def __init__(self, module_name: str, ctor: Callable):
        self._name = module_name
        self._ctor = ctor
        self._exports: list = []
        self._life = None
        # The name is checked now, as the module's is.
        _irvm.HostModule(module_name)

    def export(self, name: str, cconv: str, callable: Callable) -> None:
        if self._life is not None:
            raise RuntimeError("Attempt to mutate a frozen PyModuleInterface")
        if any(n == name for n, _, _ in self._exports):
            raise ValueError(f"PyModule function already defined: {name}")
        # Checked (name, calling convention, callable) by a module of the
        # same name that is then dropped: the interface holds no module.
        checked = _irvm.HostModule(self._name)
        checked.export(name, cconv, callable)
        if "C" in cconv:
            # irvm.HostModule takes variadic arguments; iree.runtime refuses them.
            raise ValueError(
                f"Unparsable calling convention '{cconv}' of {self._name}.{name}: "
                "PyModules do not yet support variadic arguments/results (as in iree.runtime)"
            )
        self._exports.append((name, cconv, callable))

    def create(self) -> VmModule:
        """The VmModule; the interface is frozen (initialized) from now on,
        and destroyed once that module and every context holding it are gone."""
        if self._life is not None:
            raise RuntimeError("Attempt to mutate a frozen PyModuleInterface")
        ctor = self._ctor
        # The module holds this interface (its state constructor gets it),
        # never the reverse: no reference cycle.
        host = _irvm.HostModule(self._name, state=functools.partial(ctor, self), _opaque_refs=True)
        for name, cconv, function in self._exports:
            if "r" in cconv:
                function = _with_vm_refs(function, _result_count(cconv))
            host.export(name, cconv, function)
        self._life = host._fix()
        return _PyVmModule(host, [cconv for _, cconv, _ in self._exports])

    @property
    def initialized(self) -> bool:
        return self._life is not None

    @property
    def destroyed(self) -> bool:
        return self._life is not None and not self._life.alive

    def __str__(self) -> str:
        state = ""
        if self._life is not None:
            state = " destroyed" if not self._life.alive else " initialized"
        return f"<iree.runtime.PyModuleInterface '{self._name}'{state}>"

    __repr__ = __str__


class _HalModule(VmModule):
    """The `hal` module create_hal_module returns: it names the device the
    context's programs run on (irvm registers its hal module itself)."""

    name = "hal"
    version = 7

    def __init__(self, device: HalDevice, debug_sink: Optional["HalModuleDebugSink"] = None):
        self._source = None
        self._destroy_callback = None
        self.device = device
        self.debug_sink = debug_sink

    @property
    def function_names(self) -> list[str]:
        """None: irvm's hal module is registered by irvm, and its functions
        are called by programs, not from Python."""
        return []

    def lookup_function(self, name: str, linkage: "Linkage | int" = Linkage.EXPORT) -> None:
        return None

    def __repr__(self) -> str:
        return f"<VmModule hal : device {self.device.uri}>"


class HalModuleDebugSink:
    """Where `hal.buffer_view.trace` goes: `buffer_view_trace_callback(key,
    buffer_views)` with the trace's key (str) and a list of HalBufferView,
    called during the call that traces; what it raises fails that call. A
    call on the same context from the callback raises FAILED_PRECONDITION
    (iree.runtime runs it; irvm runs one call at a time per context)."""

    def __init__(self, buffer_view_trace_callback: Callable):
        self.buffer_view_trace_callback = buffer_view_trace_callback

    def _deliver(self, key: str, arrays: list, element_types: list) -> None:
        views = [HalBufferView(a, element_type=t or None) for a, t in zip(arrays, element_types)]
        self.buffer_view_trace_callback(key, views)


def create_hal_module(instance: VmInstance, device: Optional[HalDevice] = None, devices=None,
                      debug_sink: Optional[HalModuleDebugSink] = None) -> _HalModule:
    """The hal module for `device`; `debug_sink` receives its traces."""
    if device is None and devices:
        device = devices[0]
    return _HalModule(device or HalDevice("local-task"), debug_sink)


# --- parameters ------------------------------------------------------------------


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
        self.key = key
        self.length = length
        self.metadata = metadata
        self._pattern = pattern
        # The entry's own bytes (a memory entry), or its file and offset.
        self._buffer = buffer
        self._path = path
        self._offset = offset
        if handle is None and pattern is None:
            handle = FileHandle(memory=buffer) if buffer is not None else FileHandle(path=path)
        self._handle = handle

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
    """An archive file a ParameterIndex loaded: its path and its entries as
    read at load (`_irvm._archive_entries`)."""

    def __init__(self, path: str, entries: list):
        self.path = path
        self.entries = entries
        self.handle = FileHandle(path=path)


class ParameterIndex:
    """Parameters by key: archive files (``load``: .irpa, .safetensors,
    .gguf, memory-mapped) and entries held in memory (``add_buffer``,
    ``add_splat``), looked up in the order added (the first entry of a key
    wins, as in IREE). A buffer given to ``add_buffer`` is used in place
    (a C-contiguous one; others are copied once), as iree.runtime uses it:
    do not change it while a program reads it. ``create_archive_file``
    writes every entry to one ``.irpa`` file."""

    def __init__(self):
        # Archive files (a path) and in-memory entries, in the order added.
        self._sources: list = []

    def load(self, file_path: str | os.PathLike, format: Optional[str] = None, readable: bool = True,
             writable: bool = False, mmap: Optional[bool] = None, *, mode: Optional[str] = None) -> None:
        if writable:
            raise NotImplementedError("irvm.compat: parameter archives are read-only")
        path = os.fspath(file_path)
        if format is not None:
            extension = os.path.splitext(path)[1].lstrip(".").lower()
            if format.lstrip(".").lower() != extension:
                # (It was ignored: the file was then read by its extension,
                # or refused when it had none irvm knows.)
                raise NotImplementedError(
                    f"irvm.compat: parameter files are read by their extension (.irpa, .safetensors, "
                    f".gguf): {path} cannot be read as {format}"
                )
        # Read now, as iree.runtime reads the archive's index at load: a
        # missing file, one that is no archive or is cut short fails here
        # with its exception (ValueError, IndexError), not at items().
        try:
            listed = _irvm._archive_entries(path)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        self._sources.append(_LoadedArchive(path, listed))

    def add_buffer(self, key: str, buffer: Any, readable: bool = True, writable: bool = False,
                   metadata: Optional[str | bytes] = None) -> None:
        """Adds `key` holding the bytes of `buffer` (any buffer object)."""
        if writable:
            raise NotImplementedError("irvm.compat: parameters are read-only (writable=True)")
        view = memoryview(buffer)
        if not view.c_contiguous:
            # As iree.runtime refuses it (a ValueError; the cast below
            # raised memoryview's TypeError).
            raise ValueError(f"add_buffer '{key}': the buffer is not C-contiguous")
        # (A view with a 0 in its shape cannot be cast: its bytes are none.)
        view = view.cast("B") if view.nbytes else memoryview(b"")
        self._sources.append(ParameterIndexEntry(key, view.nbytes, _metadata(metadata), buffer=view))

    def add_splat(self, key: str, pattern: Any, total_length: int,
                  metadata: Optional[str | bytes] = None) -> None:
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
            ParameterIndexEntry(key, int(total_length), _metadata(metadata), pattern=_pattern_bytes(pattern))
        )

    def add_from_file_handle(self, key: str, file_handle: FileHandle, length: int, *, offset: int = 0,
                             metadata: Optional[str | bytes] = None) -> None:
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
            entry = ParameterIndexEntry(key, length, _metadata(metadata),
                                        buffer=file_handle._memory[offset : offset + length],
                                        offset=offset, handle=file_handle)
        else:
            entry = ParameterIndexEntry(key, length, _metadata(metadata), path=file_handle._readable_path(),
                                        offset=offset, handle=file_handle)
        self._sources.append(entry)

    def load_from_file_handle(self, file_handle: FileHandle, format: str) -> None:
        """Refused (NotImplementedError): irvm reads an archive's index from
        a path (`load`); a file handle's archive cannot be indexed."""
        raise NotImplementedError(
            "irvm.compat: ParameterIndex.load_from_file_handle is not provided; load the archive by path "
            "(ParameterIndex.load)"
        )

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
            for key, metadata, offset, length, pattern in source.entries:
                entry = ParameterIndexEntry(key, length, metadata, pattern=pattern, path=source.path, offset=offset,
                                            handle=None if pattern is not None else source.handle)
                out.append((key, entry))
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
            else:
                flush()
                archives.append(source.path)
        flush()
        return ParameterProvider(scope, archives)


def _metadata(metadata: Optional[str | bytes]) -> bytes:
    if metadata is None:
        return b""
    return metadata.encode() if isinstance(metadata, str) else bytes(metadata)


class ParameterProvider:
    """The archives of a ParameterIndex under one scope: file paths, and
    in-memory entries as ``.irpa`` archives in bytes."""

    def __init__(self, scope: str, files: list):
        self.scope = scope
        self.files = files


class _ParametersModule(VmModule):
    """The `io_parameters` module create_io_parameters_module returns: the
    archives of its providers, by scope (irvm registers the module itself)."""

    name = "io_parameters"
    version = 0

    def __init__(self, providers: Sequence[ParameterProvider]):
        self._source = None
        self._destroy_callback = None
        self.providers = list(providers)

    @property
    def function_names(self) -> list[str]:
        """None: the module's functions are called by programs."""
        return []

    def lookup_function(self, name: str, linkage: "Linkage | int" = Linkage.EXPORT) -> None:
        return None

    def __repr__(self) -> str:
        return "<VmModule io_parameters>"


def create_io_parameters_module(instance: VmInstance, *providers: ParameterProvider) -> _ParametersModule:
    """The io_parameters module over `providers` (scoped archives)."""
    return _ParametersModule(providers)


# --- contexts and calls ------------------------------------------------------------


def _to_vm(arg: Any) -> Any:
    if isinstance(arg, VmRef):
        return arg._vm_value()
    if isinstance(arg, DeviceArray):
        return arg._array
    if isinstance(arg, HalBufferView):
        return arg._array
    if isinstance(arg, VmVariantList):
        return [_to_vm(v) for v in arg._items]
    return arg


def _from_vm(device: Any, value: Any, made: Optional[dict] = None) -> Any:
    if isinstance(value, np.ndarray):
        return DeviceArray(device, HalBufferView(value), implicit_host_transfer=True)
    if isinstance(value, list):
        # One list out for each list in: lists that hold each other (a VM
        # list holding itself comes back so) keep doing so (each was
        # followed round its cycle until RecursionError).
        made = {} if made is None else made
        if id(value) in made:
            return made[id(value)]
        out: list = []
        made[id(value)] = out
        out.extend(_from_vm(device, v, made) for v in value)
        return out
    return value


def _check_arity(function: Any, given: int) -> None:
    """iree.runtime's error for a wrong number of arguments: INVALID_ARGUMENT,
    a ValueError (irvm's own API raises TypeError, as Python functions do)."""
    if given != function._arity:
        raise _as_iree_error(
            _irvm.InvalidArgumentError(
                f"INVALID_ARGUMENT; input list and function mismatch; expected "
                f"{function._arity} arguments but passed {given} ({function.signature})"
            )
        )


class VmContext:
    """Modules linked in one context (iree.runtime's low-level API)."""

    def __init__(self, instance: VmInstance, modules: Optional[Sequence[Any]] = None):
        self._instance = instance
        self._context = None
        self._device: Optional[HalDevice] = None
        self._debug_sink: Optional[HalModuleDebugSink] = None
        self._parameters: dict = {}
        if modules:
            self.register_modules(modules)

    def _ensure(self):
        if self._context is None:
            device = self._device.uri if self._device is not None else "local-task"
            trace = self._debug_sink._deliver if self._debug_sink is not None else None
            try:
                self._context = _irvm._context(
                    device=device, parameters=self._parameters or None, trace=trace
                )
            except _irvm.VmError as e:
                raise _as_iree_error(e) from e.__cause__
        return self._context

    def register_modules(self, modules: Sequence[Any]) -> None:
        """Registers modules in order; a hal module picks the device."""
        sources = []
        for m in modules:
            if isinstance(m, (_HalModule, _ParametersModule)):
                if self._context is not None or sources:
                    raise ValueError(f"irvm.compat: register the {m.name} module before other modules")
                if isinstance(m, _HalModule):
                    self._device = m.device
                    self._debug_sink = m.debug_sink
                else:
                    for p in m.providers:
                        self._parameters.setdefault(p.scope, []).extend(p.files)
                continue
            sources.append(m._source)
        if sources:
            try:
                self._ensure()._add(*sources)
            except _irvm.VmError as e:
                raise _as_iree_error(e) from e.__cause__

    @property
    def context_id(self) -> int:
        return id(self)

    def _function(self, function: VmFunction):
        context = self._ensure()
        try:
            return context[f"{function.module_name}.{function.name}"]
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__

    def invoke(self, function: VmFunction, arg_list: "VmVariantList", ret_list: "VmVariantList") -> None:
        """Calls `function` with the values of `arg_list`, appending its results to `ret_list`."""
        f = self._function(function)
        _check_arity(f, len(arg_list._items))
        try:
            results = f(*[_to_vm(v) for v in arg_list._items], _as_given=True)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        if results is None:
            results = ()
        elif not isinstance(results, tuple):
            results = (results,)
        for r in results:
            ret_list._items.append(HalBufferView(r) if isinstance(r, np.ndarray) else r)


class VmVariantList:
    """A list of VM values (ints, floats, buffer views, lists). Pushes take
    what iree.runtime's take (TypeError otherwise: an int for push_int, a
    number for push_float, a VmVariantList for push_list, an object with
    `__iree_vm_ref__` for push_ref), and reads fail as there: IndexError
    outside the list, ValueError ("list element is not a ref") reading a
    number as a ref or object, RuntimeError reading a number as a list."""

    def __init__(self, capacity: int):
        if not isinstance(capacity, int) or capacity < 0:
            raise TypeError(f"VmVariantList(capacity): a capacity is a non-negative int, not {capacity!r}")
        self._items: list = []

    def push_int(self, value: int) -> None:
        if not isinstance(value, (int, np.integer)):
            raise TypeError(f"push_int(): takes an int, not {type(value).__name__}")
        self._items.append(int(value))

    def push_float(self, value: float) -> None:
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"push_float(): takes a float, not {type(value).__name__}")
        self._items.append(float(value))

    def push_ref(self, ref: Any) -> None:
        if not hasattr(ref, "__iree_vm_ref__"):
            raise AttributeError(f"'{type(ref).__name__}' object has no attribute '__iree_vm_ref__'")
        self._items.append(ref)

    def push_list(self, value: "VmVariantList") -> None:
        if not isinstance(value, VmVariantList):
            raise TypeError(f"push_list(): takes a VmVariantList, not {type(value).__name__}")
        self._items.append(value)

    def _item(self, index: int) -> Any:
        if not 0 <= index < len(self._items):
            raise IndexError(
                f"Could not access list element: OUT_OF_RANGE; index {index} out of bounds ({len(self._items)})"
            )
        return self._items[index]

    def get_as_int(self, index: int) -> int:
        """Item `index` as an int (irvm.compat's; iree.runtime has get_variant)."""
        return int(self._item(index))

    def get_as_float(self, index: int) -> float:
        """Item `index` as a float (irvm.compat's; iree.runtime has get_variant)."""
        return float(self._item(index))

    def get_as_object(self, index: int, clazz: type) -> Any:
        value = self._item(index)
        if not _is_ref(value):
            raise ValueError("list element is not a ref")
        if isinstance(value, VmRef) and clazz in _REF_TYPE_NAMES:
            return value.deref(clazz)
        if clazz is HalBufferView and isinstance(value, np.ndarray):
            return HalBufferView(value)
        if clazz is not object and not isinstance(value, clazz):
            raise ValueError(f"item {index} is {type(value).__name__}, not {clazz.__name__}")
        return value

    def get_as_list(self, index: int) -> "VmVariantList":
        value = self._item(index)
        if isinstance(value, VmRef):
            return value.deref(VmVariantList)
        if isinstance(value, VmVariantList):
            return value
        if not isinstance(value, list):
            raise RuntimeError(f"Could not access list element: FAILED_PRECONDITION; item {index} is not a list")
        out = VmVariantList(len(value))
        out._items = list(value)
        return out

    def get_variant(self, index: int) -> Any:
        return self._item(index)

    def get_as_ref(self, index: int) -> "VmRef":
        """Item `index` (a list or buffer view) as a VmRef."""
        value = self._item(index)
        if not _is_ref(value) or value is None:
            raise ValueError("list element is not a ref")
        if isinstance(value, VmRef):
            return value
        if isinstance(value, _irvm.Ref):
            return VmRef(value)
        if isinstance(value, list):
            return VmRef(self.get_as_list(index))
        if isinstance(value, np.ndarray):
            return VmRef(HalBufferView(value))
        return VmRef(value)

    @property
    def ref(self) -> "VmRef":
        """A reference to this list (what a Python host function returns for
        a ref result): its items as they are when the VM receives it."""
        return VmRef(self)

    __iree_vm_ref__ = ref

    @staticmethod
    def __iree_vm_cast__(ref: "VmRef") -> "VmVariantList":
        """The list `ref` refers to (ValueError for another type)."""
        return ref.deref(VmVariantList)

    @property
    def size(self) -> int:
        return len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        items = ", ".join(_variant_text(v, set()) for v in self._items)
        return f"<VmVariantList({len(self._items)}): [{items}]>"


def _is_ref(value: Any) -> bool:
    """Whether a VmVariantList item is a ref (or a null one), not a number."""
    return not isinstance(value, (bool, int, float, np.integer, np.floating))


def _variant_text(value: Any, seen: set) -> str:
    """An item of a VmVariantList as iree.runtime's repr shows it: ints,
    floats with six decimals, None, nested lists as `List[...]` (one seen
    before as `List[...circular...]`), buffer views as
    `HalBufferView(4x8:0x20000021)` (dimensions, and the element type's
    bytes reversed), buffers as `HalBuffer(16)`, other refs as
    `Unknown(address)`."""
    if value is None:
        return "None"
    if isinstance(value, VmRef):
        value = value._target
    if isinstance(value, _irvm.Ref):
        if value.type_name == "vm.list":
            value = value._value()
        elif value.type_name == "hal.buffer_view":
            value = HalBufferView(value._value(), element_type=value._element_type)
    if isinstance(value, (bool, int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):f}"
    if isinstance(value, (list, VmVariantList)):
        if id(value) in seen:
            return "List[...circular...]"
        seen.add(id(value))
        items = value._items if isinstance(value, VmVariantList) else value
        return "List[" + ", ".join(_variant_text(v, seen) for v in items) + "]"
    if isinstance(value, np.ndarray):
        value = HalBufferView(value)
    if isinstance(value, HalBufferView):
        dims = "x".join(str(d) for d in value.shape)
        return f"HalBufferView({dims}:{_element_type_text(value.element_type)})"
    if isinstance(value, HalBuffer):
        return f"HalBuffer({value.byte_length()})"
    return f"Unknown({id(value)})"


class VmRef:
    """A reference to a VM object (iree.runtime's VmRef): what a Python
    host function gets for a ref argument, and returns for a ref result
    (`.ref` of a VmVariantList or HalBufferView)."""

    def __init__(self, target: Any):
        # An irvm.Ref (from the VM), or a VmVariantList or HalBufferView.
        self._target = target

    def _type_name(self) -> str:
        t = self._target
        if isinstance(t, VmVariantList):
            return "vm.list"
        if isinstance(t, HalBufferView):
            return "hal.buffer_view"
        if isinstance(t, HalBuffer):
            return "hal.buffer"
        return t.type_name

    def _vm_value(self) -> Any:
        """What irvm passes to the VM for it."""
        t = self._target
        return t if isinstance(t, _irvm.Ref) else _to_vm(t)

    def isinstance(self, ref_type: type) -> bool:
        """Whether it refers to a `ref_type` (VmVariantList, HalBufferView)."""
        return _REF_TYPE_NAMES.get(ref_type) == self._type_name()

    def deref(self, value: type, optional: bool = False) -> Any:
        """The object as a `value` type (VmVariantList or HalBufferView);
        None when it is another type and `optional`, else ValueError
        (iree.runtime 3.13 crashes)."""
        if not self.isinstance(value):
            if optional:
                return None
            raise ValueError(f"VmRef is a {self._type_name()}, not a {value.__name__}")
        t = self._target
        if not isinstance(t, _irvm.Ref):
            return t
        if value is HalBuffer:
            raise ValueError("irvm.compat cannot read a hal.buffer made by a program (buffer views it can)")
        items = t._value()
        if value is VmVariantList:
            out = VmVariantList(len(items))
            out._items = items
            return out
        return HalBufferView(items, element_type=t._element_type)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, VmRef):
            return NotImplemented
        a, b = self._target, other._target
        if isinstance(a, _irvm.Ref):
            return a._same(b)
        return a is b

    def __hash__(self) -> int:
        return id(self._target) if not isinstance(self._target, _irvm.Ref) else 0

    def __repr__(self) -> str:
        return f"<VmRef {self._type_name()} at 0x{id(self._target):x}>"


VmRef.__iree_vm_ref__ = property(lambda self: self, doc="The reference itself (what push_ref takes).")

_REF_TYPE_NAMES = {VmVariantList: "vm.list", HalBufferView: "hal.buffer_view", HalBuffer: "hal.buffer"}


class FunctionInvoker:
    """A function bound to its context and device, as iree.runtime's
    (`FunctionInvoker(vm_context, device, vm_function)`): call it with
    arrays and scalars; tensor results come back as DeviceArray."""

    def __init__(self, vm_context: VmContext, device: "HalDevice", vm_function: VmFunction):
        if not isinstance(vm_context, VmContext):
            raise TypeError(f"vm_context must be a VmContext, got {type(vm_context).__name__}")
        if not isinstance(vm_function, VmFunction):
            raise TypeError(f"vm_function must be a VmFunction, got {type(vm_function).__name__}")
        self._vm_context = vm_context
        self._device = device
        self._vm_function = vm_function
        self._function = vm_context._function(vm_function)

    @property
    def vm_function(self) -> VmFunction:
        return self._vm_function

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise ValueError("kwargs not supported for dynamic dispatch functions")
        _check_arity(self._function, len(args))
        try:
            results = self._function(*[_to_vm(a) for a in args], _as_given=True)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        if isinstance(results, tuple):
            return tuple(_from_vm(self._device, r) for r in results)
        return _from_vm(self._device, results)

    def __repr__(self) -> str:
        return repr(self._vm_function)


class BoundModule:
    """A module in a SystemContext: functions as attributes and items."""

    def __init__(self, context: "SystemContext", vm_module: VmModule):
        self._context = context
        self._vm_module = vm_module

    @property
    def name(self) -> str:
        return self._vm_module.name

    @property
    def vm_module(self) -> VmModule:
        return self._vm_module

    def __getattr__(self, name: str) -> FunctionInvoker:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> FunctionInvoker:
        vm_function = self._vm_module.lookup_function(name)
        if vm_function is None:
            raise KeyError(f"Function '{name}' not found in module '{self}'")
        return FunctionInvoker(self._context.vm_context, self._context.config.device, vm_function)

    def __repr__(self) -> str:
        return f"<BoundModule {self._vm_module!r}>"


class BoundModules(dict):
    """The modules of a SystemContext by name, also as attributes."""

    def __getattr__(self, name: str) -> BoundModule:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Config:
    """A device and the hal module for it."""

    def __init__(self, driver_name: Optional[str] = None, *, device: Optional[HalDevice] = None):
        if device is not None and driver_name is not None:
            raise ValueError("Either 'device' or 'driver_name' can be specified (not both)")
        if device is None:
            device = get_first_device(driver_name.split(",") if driver_name is not None else None)
        self.device = device
        self.vm_instance = VmInstance()
        self.default_vm_modules = (create_hal_module(self.vm_instance, device),)


class SystemContext:
    """A context with the config's device; modules are added in order and
    reached as `ctx.modules.NAME.FUNCTION`."""

    def __init__(self, vm_modules: Optional[Sequence[VmModule]] = None, config: Optional[Config] = None):
        self._config = config if config is not None else Config()
        self._is_dynamic = vm_modules is None
        self._vm_context = VmContext(self._config.vm_instance, self._config.default_vm_modules)
        # The hal module is one of them, as in iree.runtime (its functions
        # are for programs: none is callable from Python).
        self._bound_modules = BoundModules((m.name, BoundModule(self, m)) for m in self._config.default_vm_modules)
        if vm_modules is not None:
            self._vm_context.register_modules(vm_modules)
            for m in vm_modules:
                self._bound_modules[m.name] = BoundModule(self, m)

    @property
    def vm_context(self) -> VmContext:
        return self._vm_context

    @property
    def is_dynamic(self) -> bool:
        return self._is_dynamic

    @property
    def config(self) -> Config:
        return self._config

    @property
    def instance(self) -> VmInstance:
        return self._config.vm_instance

    @property
    def modules(self) -> BoundModules:
        return self._bound_modules

    def add_vm_modules(self, vm_modules: Sequence[VmModule]) -> None:
        assert self._is_dynamic, "Cannot 'add_module' on a static context"
        for m in vm_modules:
            if m.name in self._bound_modules:
                raise ValueError(f"Attempt to register duplicate VmModule: '{m.name}'")
        self._vm_context.register_modules(vm_modules)
        for m in vm_modules:
            self._bound_modules[m.name] = BoundModule(self, m)

    def add_vm_module(self, vm_module: VmModule) -> None:
        self.add_vm_modules((vm_module,))

    def add_module_dependency(self, name: str, minimum_version: int = 0) -> None:
        """Registers the module `name` resolves to: none does, as in
        iree.runtime 3.13 (ValueError, VmModule.resolve_module_dependency)."""
        self._vm_context.register_modules([VmModule.resolve_module_dependency(self.instance, name, minimum_version)])


def load_vm_modules(*vm_modules: VmModule, config: Optional[Config] = None) -> list[BoundModule]:
    """Loads modules into a new SystemContext and returns them bound."""
    context = SystemContext(vm_modules=vm_modules, config=config)
    return [context.modules[m.name] for m in vm_modules]


def load_vm_module(vm_module: VmModule, config: Optional[Config] = None) -> BoundModule:
    """Loads a module into a new SystemContext and returns it bound."""
    return load_vm_modules(vm_module, config=config)[0]


# iree.runtime's: an unknown backend is a KeyError.
TARGET_BACKEND_TO_DRIVER = {"llvm-cpu": "local-task", "vmvx": "local-task", "vulkan-spirv": "vulkan"}


def _create_config(*, driver: Optional[str] = None, backend: Optional[str] = None) -> Config:
    if driver is None and backend is None:
        raise ValueError("Either 'driver' or 'backend' must be specified, but got 'None' for both.")
    if backend is not None and driver is not None:
        raise ValueError("Cannot specify both 'driver' and a 'backend' to infer the driver from.")
    if backend is not None:
        driver = TARGET_BACKEND_TO_DRIVER[backend]
    return Config(driver)


def load_vm_flatbuffer(vm_flatbuffer: bytes, *, driver: Optional[str] = None,
                       backend: Optional[str] = None) -> BoundModule:
    """Loads a module from bytes into a callable module."""
    config = _create_config(driver=driver, backend=backend)
    return load_vm_module(VmModule.copy_buffer(config.vm_instance, vm_flatbuffer), config)


def load_vm_flatbuffer_file(path: str | os.PathLike, *, driver: Optional[str] = None,
                            backend: Optional[str] = None, destroy_callback=None) -> BoundModule:
    """Loads a module file (memory-mapped) into a callable module."""
    config = _create_config(driver=driver, backend=backend)
    return load_vm_module(VmModule.mmap(config.vm_instance, path, destroy_callback), config)


def normalize_value(value: Any) -> Any:
    """A value as iree.runtime normalizes it for input to (or comparison
    with) a function: None, lists, tuples and dicts as they are; anything
    else through np.asarray, Python ints and floats as 32-bit."""
    if value is None or isinstance(value, (list, tuple, dict)):
        return value
    array = np.asarray(value)
    if isinstance(value, (bool, int, float)):
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype == np.int64:
            array = array.astype(np.int32)
    return array


# --- flags -------------------------------------------------------------------------

# The runtime flags iree.runtime 3.13's parse_flags knows (its `--help`):
# GPU drivers', task system's, device profiling's and capture's. None of
# them has a counterpart in irvm, so parse_flags accepts and ignores them.
_RUNTIME_FLAGS = frozenset((
    "cuda_use_streams", "cuda_allow_inline_execution", "cuda_async_allocations", "cuda_tracing",
    "cuda_default_index", "cuda_default_index_from_mpi", "hip_use_streams",
    "hip_allow_inline_execution", "hip_async_allocations", "hip_async_caching", "hip_tracing",
    "hip_default_index", "task_abort_on_failure", "vulkan_validation_layers", "vulkan_debug_utils",
    "vulkan_debug_verbosity", "vulkan_tracing", "vulkan_robust_buffer_access",
    "vulkan_sparse_binding", "vulkan_sparse_residency", "vulkan_buffer_device_addresses",
    "vulkan_dispatch_abi", "vulkan_cached_bda_replay_instances",
    "vulkan_cached_bda_replay_publication_bytes", "vulkan_retained_cached_bda_replay_instances",
    "vulkan_dedicated_compute_queue", "task_worker_spin_us", "task_worker_stack_size",
    "task_worker_local_memory", "task_topology_mode", "task_topology_group_count",
    "task_topology_nodes", "task_topology_max_group_count", "task_topology_snapshot",
    "task_topology_performance_level", "task_topology_distribution", "task_topology_favor",
    "device_profiling_mode", "device_profiling_output", "device_profiling_filter_function",
    "device_profiling_filter_command_buffer", "device_profiling_filter_command_index",
    "device_profiling_filter_physical_device", "device_profiling_filter_queue",
    "device_profiling_flush_interval_ms", "print_device_statistics", "device_capture_tool",
    "device_capture_file", "device_capture_label",
))


def _parse_flags(*flags: str) -> None:
    """Parses IREE runtime flags (`--name=value`) process-wide, as
    iree.runtime's `flags.parse_flags`: a flag it does not know is a
    ValueError naming it; `--flagfile=PATH` reads flags from a file (one
    per line, `#` comments); arguments that are not flags are ignored.
    Every flag iree.runtime knows tunes its GPU drivers, task system,
    device profiling or capture, which irvm does not have: they are
    accepted and have no effect (`--help` lists them)."""
    for flag in flags:
        if not flag.startswith("--"):
            continue
        name, _, value = flag[2:].partition("=")
        if name == "help":
            print("# irvm.compat.flags: IREE runtime flags accepted and ignored (irvm has no GPU "
                  "drivers, task system tuning, device profiling or capture)")
            for known in sorted(_RUNTIME_FLAGS):
                print(f"# --{known}")
            continue
        if name == "flagfile":
            try:
                with open(value) as f:
                    lines = [line.strip() for line in f]
            except OSError as e:
                raise ValueError(f"Error parsing flags: NOT_FOUND; failed to open flagfile '{value}': {e}") from None
            _parse_flags(*[line for line in lines if line and not line.startswith("#")])
            continue
        if name.replace("-", "_") not in _RUNTIME_FLAGS:
            raise ValueError(f"Error parsing flags: INVALID_ARGUMENT; flag '{name}' not recognized")


flags = types.ModuleType(
    "irvm.compat.flags",
    "iree.runtime.flags: `parse_flags(*flags)`, process-wide runtime flags "
    "(accepted and ignored: see parse_flags), and FUNCTION_INPUT_VALIDATION.",
)
flags.parse_flags = _parse_flags
flags.FUNCTION_INPUT_VALIDATION = True
# `import irvm.compat.flags` and `from irvm.compat import flags` find it.
sys.modules[flags.__name__] = flags


def _load_default_flags_from_env() -> None:
    """IREE_PY_RUNTIME_FLAGS, parsed at import as iree.runtime parses it."""
    text = os.getenv("IREE_PY_RUNTIME_FLAGS")
    if not text:
        return
    try:
        _parse_flags(*shlex.split(text))
    except ValueError as e:
        raise RuntimeError(
            f"Bad flag value in environment variable IREE_PY_RUNTIME_FLAGS='{text}': {e}"
        ) from e


flags._load_default_flags_from_env = _load_default_flags_from_env
_load_default_flags_from_env()


# iree.runtime's type of a HalModuleDebugSink callback.
HalModuleBufferViewTraceCallback = Callable[[str, list], None]


# --- what irvm.compat does not have -------------------------------------------------

# Names of iree.runtime 3.13 that irvm.compat does not provide, each with
# the reason (docs/COMPATIBILITY.md, "Python"): using one raises an
# AttributeError saying so, rather than Python's bare one.
_NOT_PROVIDED = {
    **dict.fromkeys(
        ("HalFence", "HalSemaphore", "HalExternalTimepoint", "ExternalTimepointType",
         "ExternalTimepointFlags", "SemaphoreCompatibility", "HalDeviceLoopBridge"),
        "irvm's calls are synchronous: there are no semaphores or fences to wait on from Python "
        "(a module compiled for async-external gets its fences from irvm, which waits on them)",
    ),
    "HalCommandBuffer": "command buffers run only inside programs in irvm's hal; Python cannot record them",
    "VmBuffer": "VM byte buffers cannot be made from Python in irvm.compat (pass numpy arrays)",
    **dict.fromkeys(
        ("Tokenizer", "TokenizerEncodeStream", "TokenizerDecodeStream"),
        "IREE's tokenizer library is not part of a VM runtime; irvm has none",
    ),
}


def __getattr__(name: str) -> Any:
    reason = _NOT_PROVIDED.get(name)
    if reason is not None:
        raise AttributeError(f"irvm.compat has no {name} (iree.runtime's): {reason}")
    raise AttributeError(f"module 'irvm.compat' has no attribute '{name}'")


# --- iree.runtime's submodules ----------------------------------------------------

# iree.runtime's public submodules, as namespaces of the same names here
# (`ireert.system_setup.get_device`, `from irvm.compat import function`,
# `import irvm.compat.array_interop`); its private `_binding` is not one.
_SUBMODULES = {
    "array_interop": ("asdevicearray", "DeviceArray"),
    "function": ("FunctionInvoker",),
    "io": ("parameter_index_add_numpy_ndarray", "parameter_index_entry_as_numpy_flat_ndarray",
           "parameter_index_entry_as_numpy_ndarray", "SplatValue", "save_archive_file"),
    "system_api": ("load_vm_flatbuffer", "load_vm_flatbuffer_file", "load_vm_module", "load_vm_modules",
                   "normalize_value", "Config", "SystemContext", "TARGET_BACKEND_TO_DRIVER", "BoundModule",
                   "BoundModules"),
    "system_setup": ("get_device", "get_first_device", "get_driver", "query_available_drivers"),
}
for _name, _members in _SUBMODULES.items():
    _module = types.ModuleType(f"{__name__}.{_name}", f"iree.runtime.{_name}'s public names in irvm.compat.")
    for _member in _members:
        setattr(_module, _member, globals()[_member])
    _module.__all__ = list(_members)
    globals()[_name] = _module
    sys.modules[_module.__name__] = _module
del _name, _members, _module, _member
# benchmark is compat_benchmark itself (iree.runtime.benchmark's helpers).
from . import compat_benchmark as benchmark  # noqa: E402

sys.modules[f"{__name__}.benchmark"] = benchmark
