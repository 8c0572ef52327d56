"""Drivers and devices (iree.runtime.system_setup): irvm's CPU drivers,
local-sync and local-task; GPU drivers fail as on a machine without them."""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence

from ._buffers import HalAllocator as _HalAllocator
from ._conversions import _nanobind_int


__all__ = ["get_device", "get_first_device", "get_driver", "query_available_drivers"]


_DRIVERS = ("local-sync", "local-task")

# The devices get_first_device tries when given none and IREE_DEFAULT_DEVICE
# is not set: iree.runtime's list (local-task is first, and irvm has it).
DEFAULT_DRIVER_NAMES = "local-task,cuda,vulkan"


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

    def dump_device_info(self, device_id: int, /) -> str:
        """The driver's text about device `device_id`: empty, as IREE's CPU
        drivers write none. The id is read as iree.runtime reads it (by
        position only; anything `int()` takes but a float, so `"0"` too; a
        TypeError for one that is no unsigned 64-bit int)."""
        _nanobind_int(device_id, "dump_device_info")
        return ""

    def __repr__(self) -> str:
        return f"<HalDriver {self.name}>"


class HalDevice:
    """A CPU device; modules run on it through the contexts that use it."""

    def __init__(self, uri: str = "local-task"):
        self.uri = _check_driver(uri)
        self.driver = uri.split("://", 1)[0]
        self._allocator = _HalAllocator(self)

    @property
    def allocator(self) -> "_HalAllocator":
        """The device's allocator (read-only, as iree.runtime's)."""
        return self._allocator

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


def get_cached_hal_driver(device_uri: str) -> HalDriver:
    """The driver of `device_uri` (a driver name, or `driver://...`), the
    same object for the same driver, as in iree.runtime: ValueError for a
    name that is no driver, RuntimeError for GPU drivers (cuda, hip,
    vulkan: irvm has none)."""
    name = device_uri.split("://", 1)[0]
    driver = _DRIVERS_MADE.get(name)
    if driver is None:
        driver = _DRIVERS_MADE[name] = HalDriver(name)
    return driver


def get_driver(device_uri: str) -> HalDriver:
    """The driver of `device_uri`: get_cached_hal_driver's, as in iree.runtime."""
    return get_cached_hal_driver(device_uri)


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
    IREE_DEFAULT_DEVICE, else DEFAULT_DRIVER_NAMES: local-task), as iree.runtime picks it: names
    that are no driver are skipped; when none is left, RuntimeError if a
    driver failed (a GPU driver), else ValueError."""
    uris = device_uris
    if uris is None:
        uris = [s.strip() for s in os.environ.get("IREE_DEFAULT_DEVICE", DEFAULT_DRIVER_NAMES).split(",")]
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
