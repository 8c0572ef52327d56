"""Type stubs of the irvm package (the extension irvm._irvm)."""

import os
from typing import Any, Callable, Mapping, Sequence, Union

import numpy as np

_ModuleSource = Union[str, os.PathLike[str], bytes, bytearray, memoryview, "HostModule", Any]
_Archive = Union[str, os.PathLike[str], bytes, bytearray, memoryview, Any]
_Parameters = Union[
    _Archive,
    Mapping[str, Union[_Archive, Sequence[_Archive]]],
    Sequence[_Archive],
]
_Value = Union[np.ndarray, int, float, list, None, "Ref"]

def load(
    *modules: _ModuleSource,
    device: str = "local-task",
    parameters: _Parameters | None = None,
    fuel: int | None = None,
    timeout: float | None = None,
    max_memory_bytes: int | None = None,
    engine: str | None = None,
) -> Module:
    """Load IREE VM modules (linked in order) into one context; exported
    functions of the last are attributes and items of the result."""

class Module:
    """Modules loaded by irvm.load: m.fn(...), m["fn"](...), m["module.fn"](...)."""

    @property
    def exports(self) -> list[str]:
        """The exported functions of the last module, in order."""
    @property
    def name(self) -> str:
        """The last module's name."""
    def __getattr__(self, name: str) -> Function: ...
    def __getitem__(self, name: str) -> Function: ...
    def __contains__(self, name: str) -> bool: ...
    def __dir__(self) -> list[str]: ...

class Function:
    """An exported function; call it with arrays, lists and scalars."""

    @property
    def signature(self) -> str:
        """`module.f(input0: tensor<4x8xf32>) -> (tensor<4x3xf32>)`."""
    @property
    def name(self) -> str:
        """`module.function`."""
    def __call__(self, *args: Any, copy: bool | None = None) -> Any: ...

class Ref:
    """A VM reference Python cannot look into; pass it back as an argument."""

    @property
    def type_name(self) -> str:
        """The VM type of the object: 'vm.list', 'vm.buffer', 'hal.buffer_view', ..."""

class HostModule:
    """A host module whose functions are Python callables; pass it to
    irvm.load before the modules that import it. `state()` is called once
    per context; functions are called as function(state, *args), or
    function(*args) without state."""

    def __init__(self, name: str, state: Callable[[], Any] | None = None) -> None: ...
    def export(self, name: str, cconv: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """Exports `function` as `name` with IREE calling convention `cconv` (e.g. '0ii_i')."""
    @property
    def name(self) -> str: ...
    @property
    def functions(self) -> list[tuple[str, str]]:
        """(name, calling convention) of each function."""

class VmError(Exception):
    """A failure inside irvm: loading, linking or running a module."""

    status: str
    """The IREE status name, e.g. 'INVALID_ARGUMENT'."""
    location: str | None
    """'file:line:col' of the failing source line, when the module has debug information."""
    backtrace: list[str]
    """The VM frames, innermost first."""

class CancelledError(VmError): ...
class UnknownError(VmError): ...
class InvalidArgumentError(VmError, ValueError): ...
class DeadlineExceededError(VmError, TimeoutError): ...
class NotFoundError(VmError, LookupError): ...
class AlreadyExistsError(VmError): ...
class PermissionDeniedError(VmError, PermissionError): ...
class ResourceExhaustedError(VmError): ...
class FailedPreconditionError(VmError): ...
class AbortedError(VmError): ...
class OutOfRangeError(VmError): ...
class UnimplementedError(VmError, NotImplementedError): ...
class InternalError(VmError): ...
class UnavailableError(VmError): ...
class DataLossError(VmError): ...
class UnauthenticatedError(VmError): ...
class IncompatibleError(VmError): ...
