"""iree.runtime.system_api: Config, SystemContext and its bound modules,
and the load_vm_* helpers."""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence

import numpy as np

# (Under private names: iree.runtime's system_api binds these to
# `_binding.` names, not its own.)
from ._context import VmContext as _VmContext
from ._hal_module import create_hal_module as _create_hal_module
from ._vm_modules import VmInstance as _VmInstance, VmModule as _VmModule
from .function import FunctionInvoker
from .system_setup import get_first_device, HalDevice as _HalDevice


__all__ = [
    "load_vm_flatbuffer",
    "load_vm_flatbuffer_file",
    "load_vm_module",
    "load_vm_modules",
    "normalize_value",
    "Config",
    "SystemContext",
    "TARGET_BACKEND_TO_DRIVER",
    "BoundModule",
    "BoundModules",
]


class BoundModule:
    """A module in a SystemContext: functions as attributes and items."""

    def __init__(self, context: "SystemContext", vm_module: _VmModule):
        self._context = context
        self._vm_module = vm_module

    @property
    def name(self) -> str:
        return self._vm_module.name

    @property
    def vm_module(self) -> _VmModule:
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

    def __init__(self, driver_name: Optional[str] = None, *, device: Optional[_HalDevice] = None):
        if device is not None and driver_name is not None:
            raise ValueError("Either 'device' or 'driver_name' can be specified (not both)")
        if device is None:
            device = get_first_device(driver_name.split(",") if driver_name is not None else None)
        self.device = device
        self.vm_instance = _VmInstance()
        self.default_vm_modules = (_create_hal_module(self.vm_instance, device),)


class SystemContext:
    """A context with the config's device; modules are added in order and
    reached as `ctx.modules.NAME.FUNCTION`."""

    def __init__(self, vm_modules: Optional[Sequence[_VmModule]] = None, config: Optional[Config] = None):
        self._config = config if config is not None else Config()
        self._is_dynamic = vm_modules is None
        self._vm_context = _VmContext(self._config.vm_instance, self._config.default_vm_modules)
        # The hal module is one of them, as in iree.runtime (its functions
        # are called as `ctx.modules.hal["devices.count"]()`).
        self._bound_modules = BoundModules((m.name, BoundModule(self, m)) for m in self._config.default_vm_modules)
        if vm_modules is not None:
            self._vm_context.register_modules(vm_modules)
            for m in vm_modules:
                self._bound_modules[m.name] = BoundModule(self, m)

    @property
    def vm_context(self) -> _VmContext:
        return self._vm_context

    @property
    def is_dynamic(self) -> bool:
        return self._is_dynamic

    @property
    def config(self) -> Config:
        return self._config

    @property
    def instance(self) -> _VmInstance:
        return self._config.vm_instance

    @property
    def modules(self) -> BoundModules:
        return self._bound_modules

    def add_vm_modules(self, vm_modules: Sequence[_VmModule]) -> None:
        assert self._is_dynamic, "Cannot 'add_module' on a static context"
        for m in vm_modules:
            if m.name in self._bound_modules:
                raise ValueError(f"Attempt to register duplicate VmModule: '{m.name}'")
        self._vm_context.register_modules(vm_modules)
        for m in vm_modules:
            self._bound_modules[m.name] = BoundModule(self, m)

    def add_vm_module(self, vm_module: _VmModule) -> None:
        self.add_vm_modules((vm_module,))

    def add_module_dependency(self, name: str, minimum_version: int = 0) -> None:
        """Registers the module `name` resolves to: none does, as in
        iree.runtime 3.13 (ValueError, VmModule.resolve_module_dependency)."""
        self._vm_context.register_modules([_VmModule.resolve_module_dependency(self.instance, name, minimum_version)])


def load_vm_modules(*vm_modules: _VmModule, config: Optional[Config] = None) -> list[BoundModule]:
    """Loads modules into a new SystemContext and returns them bound."""
    context = SystemContext(vm_modules=vm_modules, config=config)
    return [context.modules[m.name] for m in vm_modules]


def load_vm_module(vm_module: _VmModule, config: Optional[Config] = None) -> BoundModule:
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
    return load_vm_module(_VmModule.copy_buffer(config.vm_instance, vm_flatbuffer), config)


def load_vm_flatbuffer_file(path: str | os.PathLike, *, driver: Optional[str] = None,
                            backend: Optional[str] = None, destroy_callback=None) -> BoundModule:
    """Loads a module file (memory-mapped) into a callable module."""
    config = _create_config(driver=driver, backend=backend)
    return load_vm_module(_VmModule.mmap(config.vm_instance, path, destroy_callback), config)


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
