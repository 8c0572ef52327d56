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
C-contiguous buffer is used in place, as iree.runtime uses it); the hal module is
registered before the program's modules (io_parameters may come later, as
there, until a program imports it or Python calls it); ``PyModuleInterface`` (host modules
written in Python) is built on ``irvm.HostModule``, and refuses at ``export``
the calling conventions it cannot call (variadic spans, unknown kinds).
"""


def _import_ml_dtypes() -> None:
    """Imports ml_dtypes when installed, as importing iree.runtime does:
    numpy then knows ml_dtypes' dtypes by name (np.dtype("bfloat16")).
    irvm needs numpy only. (In a function, so that the package binds no
    `ml_dtypes` name iree.runtime's does not.)"""
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        pass


_import_ml_dtypes()
del _import_ml_dtypes

# The package's modules, one job each: iree.runtime's public submodules
# (array_interop, benchmark, dtypes, flags, function, io, system_api,
# system_setup, typing) under their names, the rest private. The package
# binds iree.runtime's public names and no others: names only a submodule
# has there (system_api.BoundModule, benchmark.BenchmarkToolError) are
# only there here too.
from . import array_interop, benchmark, dtypes, flags, function, io, system_api, system_setup, typing  # noqa: F401
from ._buffers import HalAllocator, HalBuffer, HalBufferView, MappedMemory, Shape
from ._context import VmContext
from ._hal_module import HalModuleBufferViewTraceCallback, HalModuleDebugSink, create_hal_module
from ._hal_types import BufferCompatibility, BufferUsage, HalElementType, MemoryAccess, MemoryType
from ._parameters import (
    FileHandle,
    ParameterIndex,
    ParameterIndexEntry,
    ParameterProvider,
    create_io_parameters_module,
)
from ._py_modules import PyModuleInterface
from ._values import VmBuffer, VmRef, VmVariantList
from ._vm_modules import Linkage, VmFunction, VmInstance, VmModule
from .array_interop import DeviceArray, asdevicearray
from .benchmark import benchmark_exe, benchmark_module
from .function import FunctionInvoker
from .io import (
    SplatValue,
    parameter_index_add_numpy_ndarray,
    parameter_index_entry_as_numpy_flat_ndarray,
    parameter_index_entry_as_numpy_ndarray,
    save_archive_file,
)
from .system_api import (
    TARGET_BACKEND_TO_DRIVER,
    Config,
    SystemContext,
    load_vm_flatbuffer,
    load_vm_flatbuffer_file,
    load_vm_module,
    load_vm_modules,
    normalize_value,
)
from .system_setup import HalDevice, HalDriver, get_device, get_driver, get_first_device, query_available_drivers

# iree.runtime's native module's counterpart (private, as there).
from . import _binding  # noqa: E402,F401

__all__ = [
    "asdevicearray",
    "benchmark_exe",
    "benchmark_module",
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
    "VmBuffer",
    "VmRef",
    "VmVariantList",
]


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
    **dict.fromkeys(
        ("Tokenizer", "TokenizerEncodeStream", "TokenizerDecodeStream"),
        "IREE's tokenizer library is not part of a VM runtime; irvm has none",
    ),
}


def __getattr__(name: str) -> object:
    reason = _NOT_PROVIDED.get(name)
    if reason is not None:
        raise AttributeError(f"irvm.compat has no {name} (iree.runtime's): {reason}")
    raise AttributeError(f"module 'irvm.compat' has no attribute '{name}'")
