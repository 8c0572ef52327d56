"""iree.runtime._binding's counterpart: the names of iree.runtime's native
module that scripts import from it directly (`from iree.runtime._binding
import VmVariantList`), and the driver cache's two functions that only it
has: `create_hal_driver` (a new driver, not cached) and
`clear_hal_driver_cache`. Private, as there."""

from __future__ import annotations

from . import (  # noqa: F401
    BufferCompatibility,
    BufferUsage,
    FileHandle,
    HalAllocator,
    HalBuffer,
    HalBufferView,
    HalDevice,
    HalDriver,
    HalElementType,
    HalModuleDebugSink,
    Linkage,
    MappedMemory,
    MemoryAccess,
    MemoryType,
    ParameterIndex,
    ParameterIndexEntry,
    ParameterProvider,
    PyModuleInterface,
    Shape,
    VmBuffer,
    VmContext,
    VmFunction,
    VmInstance,
    VmModule,
    VmRef,
    VmVariantList,
    create_hal_module,
    create_io_parameters_module,
)
from .flags import parse_flags  # noqa: F401
from . import system_setup as _system_setup
from .system_setup import get_cached_hal_driver  # noqa: F401


def create_hal_driver(device_uri: str) -> HalDriver:
    """A new driver of `device_uri`, neither taken from nor put in the
    cache get_driver keeps."""
    return HalDriver(device_uri.split("://", 1)[0])


def clear_hal_driver_cache() -> None:
    """Forgets the drivers get_driver made: the next call makes a new one."""
    _system_setup._DRIVERS_MADE.clear()
