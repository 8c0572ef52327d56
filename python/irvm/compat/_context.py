"""VmContext: modules linked in one context, and calls through it."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import _irvm
from ._buffers import HalBufferView
from ._errors import _as_iree_error
from ._hal_module import _HalModule, HalModuleDebugSink
from ._parameters import _ParametersModule
from ._values import _to_vm, VmBuffer, VmVariantList
from ._vm_modules import VmFunction, VmInstance, VmModule
from .system_setup import HalDevice


def _check_arguments(function: Any, vm_function: VmFunction, values: Sequence[Any]) -> None:
    """Refuses before the call what iree.runtime refuses when it invokes:
    a wrong number of arguments (INVALID_ARGUMENT, a ValueError; irvm's own
    API raises TypeError, as Python functions do), and a number where the
    calling convention takes a ref (a tensor, a list) or a ref where it
    takes a number (FAILED_PRECONDITION, a RuntimeError: iree.runtime's
    argument list holds a value of the other kind); and any call of a
    function taking variadic spans (a hal function's `CID`: INVALID_ARGUMENT,
    the argument list has no segment sizes)."""
    if "C" in (vm_function._cconv or ""):
        # iree.runtime's argument list has no segment sizes for spans.
        raise _as_iree_error(
            _irvm.InvalidArgumentError(
                f"Error invoking function: INVALID_ARGUMENT; variadic argument found but segment size "
                f"list is missing/underflowed ({function.signature}: functions taking variadic "
                f"spans are called by programs)"
            )
        )
    if len(values) != function._arity:
        raise _as_iree_error(
            _irvm.InvalidArgumentError(
                f"INVALID_ARGUMENT; input list and function mismatch; expected "
                f"{function._arity} arguments but passed {len(values)} ({function.signature})"
            )
        )
    kinds = (vm_function._cconv or "").partition("_")[0][1:]
    if len(kinds) != len(values):
        # (No calling convention, or a variadic one: left to irvm.)
        return
    for index, (kind, value) in enumerate(zip(kinds, values)):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind == "r" and number:
            problem = f"is a ref and was given the number {value!r}"
        elif kind in "ifIF" and not number:
            problem = f"is a number and was given a ref ({type(value).__name__}): variant at index {index} is not a value type"
        else:
            continue
        raise _as_iree_error(
            _irvm.FailedPreconditionError(
                f"Error invoking function: FAILED_PRECONDITION; argument {index} of {function.signature} {problem}"
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
        # The names of the host modules irvm provides (hal, io_parameters)
        # registered here: irvm adds each to its context when a program
        # imports it or when Python calls one of its functions.
        self._native_modules: set = set()
        if modules:
            self.register_modules(modules)

    def _ensure(self):
        if self._context is None:
            device = self._device.uri if self._device is not None else "local-task"
            trace = self._debug_sink._deliver if self._debug_sink is not None else None
            try:
                parameters = self._parameters if "io_parameters" in self._native_modules else None
                self._context = _irvm._context(device=device, parameters=parameters, trace=trace)
            except _irvm.VmError as e:
                raise _as_iree_error(e) from e.__cause__
        return self._context

    def register_modules(self, modules: Sequence[Any]) -> None:
        """Registers modules in order; a hal module picks the device.
        Anything but a VmModule is a TypeError naming it (iree.runtime 3.13
        crashes on None)."""
        modules = list(modules)
        for index, m in enumerate(modules):
            if not isinstance(m, VmModule):
                raise TypeError(f"register_modules(): module {index} is a {type(m).__name__}, not a VmModule")
        sources = []
        for m in modules:
            if isinstance(m, _HalModule):
                # The device is the context's: fixed when irvm's context is made.
                if self._context is not None or sources:
                    raise ValueError(f"irvm.compat: register the {m.name} module before other modules")
                self._native_modules.add(m.name)
                self._device = m.device
                self._debug_sink = m.debug_sink
                continue
            if isinstance(m, _ParametersModule):
                # As in iree.runtime, also after other modules were registered
                # and called: its archives are irvm's context's until a
                # program imports io_parameters or Python calls it.
                parameters = {scope: list(files) for scope, files in self._parameters.items()}
                for p in m.providers:
                    parameters.setdefault(p.scope, []).extend(p.files)
                if self._context is not None:
                    try:
                        self._context._set_parameters(parameters)
                    except _irvm.VmError as e:
                        raise _as_iree_error(e) from e.__cause__
                self._parameters = parameters
                self._native_modules.add(m.name)
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
        """irvm's function for `function`; a function of a module not in
        this context is iree.runtime's NOT_FOUND (a ValueError)."""
        context = self._ensure()
        try:
            if function.module_name in self._native_modules:
                context._ensure_host_module(function.module_name)
            return context[f"{function.module_name}.{function.name}"]
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        except KeyError:
            raise _as_iree_error(
                _irvm.NotFoundError(
                    f"Error invoking function: NOT_FOUND; module '{function.module_name}' of "
                    f"{function.name} is not registered in this context"
                )
            ) from None

    def invoke(self, function: VmFunction, arg_list: "VmVariantList", ret_list: "VmVariantList") -> None:
        """Calls `function` with the values of `arg_list`; its results
        replace what `ret_list` held (a failed call leaves it as it was): a
        VmFunction and two VmVariantLists, as in iree.runtime (a TypeError
        otherwise)."""
        for name, value, kind in (("function", function, VmFunction), ("arg_list", arg_list, VmVariantList),
                                  ("ret_list", ret_list, VmVariantList)):
            if not isinstance(value, kind):
                raise TypeError(
                    f"invoke(): incompatible function arguments: {name} takes a {kind.__name__}, "
                    f"not {type(value).__name__}"
                )
        f = self._function(function)
        _check_arguments(f, function, arg_list._items)
        try:
            results = f(*[_to_vm(v) for v in arg_list._items], _as_given=True)
        except _irvm.VmError as e:
            raise _as_iree_error(e) from e.__cause__
        if f._result_count == 0:
            results = ()
        elif f._result_count == 1:
            # (A single result comes back bare: a null ref as None.)
            results = (results,)
        # The numbers' VM types, from the calling convention's results.
        kinds = (function._cconv or "").partition("_")[2]
        value_types = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}
        # As iree.runtime's invoke: the results replace the list's values.
        ret_list._items.clear()
        ret_list._value_types.clear()
        for r, kind in zip(results, kinds if len(kinds) == len(results) else "r" * len(results)):
            if kind in value_types:
                ret_list._value_types[len(ret_list._items)] = value_types[kind]
            if isinstance(r, np.ndarray):
                r = HalBufferView(r)
            elif isinstance(r, _irvm.VmBuffer):
                r = VmBuffer(0, _same_as=r)
            ret_list._items.append(r)
