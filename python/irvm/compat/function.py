"""FunctionInvoker (iree.runtime.function): a function bound to its
context and device."""

from __future__ import annotations

from .. import _irvm
from . import _abi
from ._context import _check_arguments, VmContext
from ._errors import _as_iree_error
from ._values import _check_convertible, _from_vm, _to_vm, VmVariantList
from ._vm_modules import VmFunction
from ._hal_types import BufferUsage, MemoryType
from .system_setup import HalDevice


__all__ = ["FunctionInvoker"]

# The memory type and usage of the buffer an ndarray argument is copied
# into, as iree.runtime's names them (module constants scripts read; irvm
# passes arrays in place when it can, in host memory either way).
IMPLICIT_BUFFER_ARG_MEMORY_TYPE = MemoryType.DEVICE_LOCAL
IMPLICIT_BUFFER_ARG_USAGE = BufferUsage.DEFAULT


class FunctionInvoker:
    """A function bound to its context and device, as iree.runtime's
    (`FunctionInvoker(vm_context, device, vm_function)`): call it with
    arrays and scalars; tensor results come back as DeviceArray. A
    function with `iree.abi` reflection takes keyword arguments and
    structured (`slist`, `stuple`, `sdict`) arguments and results, as
    there; those calls, and calls on a context or function that is not
    irvm.compat's (anything with `invoke`, and with `reflection`), go
    through `vm_context.invoke` with VmVariantLists, as iree.runtime makes
    every call. Other calls go to irvm directly."""

    def __init__(self, vm_context: VmContext, device: "HalDevice", vm_function: VmFunction):
        if not isinstance(vm_context, VmContext) and not callable(getattr(vm_context, "invoke", None)):
            raise TypeError(f"vm_context must be a VmContext, got {type(vm_context).__name__}")
        if not isinstance(vm_function, VmFunction) and not isinstance(getattr(vm_function, "reflection", None), dict):
            raise TypeError(f"vm_function must be a VmFunction, got {type(vm_function).__name__}")
        self._vm_context = vm_context
        self._device = device
        self._vm_function = vm_function
        arg_descs, self._ret_descs, self._inlined_results = _abi.parse_reflection(vm_function)
        self._through_invoke = (
            arg_descs is not None or not isinstance(vm_context, VmContext) or not isinstance(vm_function, VmFunction)
        )
        if self._through_invoke:
            self._packer = _abi.ArgumentPacker(arg_descs)
        else:
            self._function = vm_context._function(vm_function)

    @property
    def vm_function(self) -> VmFunction:
        return self._vm_function

    def __call__(self, *args, **kwargs):
        if self._through_invoke:
            return self._call_through_invoke(args, kwargs)
        if kwargs:
            raise ValueError("kwargs not supported for dynamic dispatch functions")
        for a in args:
            _check_convertible(a)
        _check_arguments(self._function, self._vm_function, args)
        try:
            results = self._function(*[_to_vm(a) for a in args], _as_given=True)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        if isinstance(results, tuple):
            return tuple(_from_vm(self._device, r) for r in results)
        return _from_vm(self._device, results)

    def _call_through_invoke(self, args: tuple, kwargs: dict):
        arg_list = self._packer.pack(self._device, args, kwargs)
        ret_descs = self._ret_descs
        ret_list = VmVariantList(len(ret_descs) if ret_descs is not None else 1)
        self._vm_context.invoke(self._vm_function, arg_list, ret_list)
        if self._inlined_results:
            # The structure's items are the results list itself.
            outer = VmVariantList(1)
            outer.push_list(ret_list)
            ret_list = outer
        returns = _abi.read_results(self._device, ret_list, ret_descs)
        if len(returns) == 1:
            return returns[0]
        if not returns:
            return None
        return tuple(returns)

    def __repr__(self) -> str:
        return repr(self._vm_function)


# iree.runtime.function's exceptions for arguments and results it cannot
# convert (both ValueErrors).
ArgumentError = _abi.ArgumentError
ReturnError = _abi.ReturnError
