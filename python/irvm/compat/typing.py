"""Type hints, as iree.runtime.typing has them: a trace key and the
callback type of `HalModuleDebugSink`."""

from typing import TYPE_CHECKING, Callable, List

if TYPE_CHECKING:
    from . import HalBufferView

TraceKey = str
HalModuleBufferViewTraceCallback = Callable[[TraceKey, List["HalBufferView"]], None]
"""What `HalModuleDebugSink` calls for each `hal.buffer_view.trace`: the
trace's key and its buffer views."""
