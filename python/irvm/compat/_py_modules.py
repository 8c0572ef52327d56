"""PyModuleInterface: VM modules whose functions are Python callables,
built on irvm.HostModule."""

from __future__ import annotations

import functools
from typing import Any, Callable

from .. import _irvm
from ._values import _to_vm, VmRef
from ._vm_modules import VmFunction, VmModule


class _PyVmModule(VmModule):
    """The VmModule of a PyModuleInterface: an irvm.HostModule, fixed."""

    def __init__(self, host: "_irvm.HostModule", cconvs: list):
        self._source = host
        self._destroy_callback = None
        self._name = host.name
        self._version = 0
        self._imports: list = []
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
