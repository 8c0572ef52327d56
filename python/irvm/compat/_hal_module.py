"""The hal module a context's programs run on: create_hal_module, and the
HalModuleDebugSink its buffer view traces go to."""

from __future__ import annotations

from typing import Callable, Optional

from ._buffers import HalBufferView
from ._vm_modules import _NativeVmModule, VmInstance
from .system_setup import HalDevice


class _HalModule(_NativeVmModule):
    """The `hal` module create_hal_module returns: its functions (callable
    through VmContext.invoke), and the device the context's programs run
    on."""

    def __init__(self, device: HalDevice, debug_sink: Optional["HalModuleDebugSink"] = None):
        super().__init__("hal")
        self.device = device
        self.debug_sink = debug_sink


class HalModuleDebugSink:
    """Where `hal.buffer_view.trace` goes: `buffer_view_trace_callback(key,
    buffer_views)` with the trace's key (str) and a list of HalBufferView,
    called during the call that traces; what it raises fails that call. A
    call on the same context from the callback raises FAILED_PRECONDITION
    (iree.runtime runs it; irvm runs one call at a time per context)."""

    def __init__(self, buffer_view_trace_callback: Callable):
        self._buffer_view_trace_callback = buffer_view_trace_callback

    @property
    def buffer_view_trace_callback(self) -> Callable:
        """The callback (read-only, as iree.runtime's)."""
        return self._buffer_view_trace_callback

    def _deliver(self, key: str, arrays: list, element_types: list) -> None:
        views = [HalBufferView(a, element_type=t or None) for a, t in zip(arrays, element_types)]
        self.buffer_view_trace_callback(key, views)


def create_hal_module(instance: VmInstance, device: Optional[HalDevice] = None, devices=None,
                      debug_sink: Optional[HalModuleDebugSink] = None) -> _HalModule:
    """The hal module for `device`; `debug_sink` receives its traces."""
    if device is None and devices:
        device = devices[0]
    return _HalModule(device or HalDevice("local-task"), debug_sink)


# iree.runtime's type of a HalModuleDebugSink callback.
HalModuleBufferViewTraceCallback = Callable[[str, list], None]
