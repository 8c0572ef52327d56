"""FunctionInvoker's calls through `VmContext.invoke`, as iree.runtime
makes them: arguments packed into a VmVariantList (by the function's
`iree.abi` reflection when it has one: keyword arguments, `slist`,
`stuple` and `sdict` structures, `ndarray` element types; else each value
by its Python type), results read back from the results list by the same
reflection. irvm.compat's FunctionInvoker takes this path for functions
with `iree.abi` reflection and for contexts and functions that are not
its own (objects with `invoke` and `reflection`, as tests build them); it
calls irvm directly otherwise."""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

import numpy as np

from ._buffers import HalBufferView
from ._hal_types import BufferUsage, MemoryType
from ._values import VmRef, VmVariantList
from .array_interop import DeviceArray
from .dtypes import map_abi_type_to_dtype_info, map_dtype_to_hal_element_type

# The ABI element types an `ndarray` argument may name, and their dtypes
# (iree.runtime's argument packer knows these; results read any ABI type).
_ARGUMENT_DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
}

_INTEGER_TYPES = ("i8", "i16", "i32", "i64")
_FLOAT_TYPES = ("f32", "f64")

# Packs one Python value into a VmVariantList: (device, list, value).
Packer = Callable[[Any, VmVariantList, Any], None]


class ArgumentError(ValueError):
    """An argument FunctionInvoker could not pass."""


class ReturnError(ValueError):
    """A result FunctionInvoker could not read back."""


def parse_reflection(vm_function: Any) -> tuple[Optional[list], Optional[list], bool]:
    """The function's `iree.abi` argument and result descriptors (None,
    None when it has none), and whether its results are one structure
    inlined into the results list."""
    abi_json = vm_function.reflection.get("iree.abi")
    if abi_json is None:
        return None, None, False
    try:
        abi = json.loads(abi_json)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"Reflection metadata is not valid JSON: {abi_json}") from e
    try:
        arg_descs, ret_descs = abi["a"], abi["r"]
    except (KeyError, TypeError) as e:
        raise RuntimeError(f"Malformed function reflection metadata: {vm_function.reflection}") from e
    if not isinstance(arg_descs, list) or not isinstance(ret_descs, list):
        raise RuntimeError(f"Malformed function reflection metadata structure: {vm_function.reflection}")
    inlined = (
        len(ret_descs) == 1
        and isinstance(ret_descs[0], list)
        and bool(ret_descs[0])
        and ret_descs[0][0] in ("slist", "stuple", "sdict")
    )
    return arg_descs, ret_descs, inlined


def _push_view(out: VmVariantList, value: Any) -> bool:
    """Pushes a DeviceArray's buffer view (no host transfer) or a
    HalBufferView as it is; False for anything else."""
    if isinstance(value, DeviceArray):
        out.push_ref(value._buffer_view)
        return True
    if isinstance(value, HalBufferView):
        out.push_ref(value)
        return True
    return False


def _push_host_array(device: Any, out: VmVariantList, array: np.ndarray) -> None:
    element_type = map_dtype_to_hal_element_type(array.dtype)
    if element_type is None:
        raise ValueError(f"could not map dtype {array.dtype!r} to element type: mapping not found")
    out.push_ref(
        device.allocator.allocate_buffer_copy(
            memory_type=MemoryType.DEVICE_LOCAL,
            allowed_usage=BufferUsage.DEFAULT,
            device=device,
            buffer=array,
            element_type=element_type,
        )
    )


def _pack_by_type(device: Any, out: VmVariantList, value: Any) -> None:
    """One value with no descriptor, by its Python type: int (i64), float
    (f64), list and tuple (a list of their items), dict (a list of its
    values by sorted key), buffer views and DeviceArrays, and anything
    with `__array__` (a buffer view of its dtype)."""
    kind = type(value)
    if kind is int:
        out.push_int(value)
    elif kind is float:
        out.push_float(value)
    elif kind in (list, tuple) or kind is dict:
        items = [value[k] for k in sorted(value)] if kind is dict else list(value)
        inner = VmVariantList(len(items))
        for item in items:
            _pack_by_type(device, inner, item)
        out.push_list(inner)
    elif _push_view(out, value):
        pass
    elif hasattr(value, "__array__"):
        try:
            array = np.asarray(value, order="C")
        except Exception as e:
            raise ValueError(f"could not convert value to numpy array: error='{e}', value={value!r}") from e
        _push_host_array(device, out, array)
    else:
        raise ValueError(f"could not convert python value to VM: {value!r}")


def _container_packer(noun: str, entries: list) -> Packer:
    """Packs a sequence or dict argument (`noun`) into a nested list: entry
    `key` of the value packed by its packer, for each `(key, packer)`."""

    def pack_container(device: Any, out: VmVariantList, value: Any) -> None:
        if len(value) != len(entries):
            raise ValueError(f"expected a {noun} with {len(entries)} values. got: {value!r}")
        inner = VmVariantList(len(entries))
        for key, pack in entries:
            try:
                item = value[key]
            except Exception as e:
                raise ValueError(f"could not get item {key!r} from: {value!r}: {e}") from e
            pack(device, inner, item)
        out.push_list(inner)

    return pack_container


def _packer(desc: Any) -> Packer:
    """The packer of one `iree.abi` argument descriptor (a ValueError
    naming one it does not know, as iree.runtime's)."""
    if isinstance(desc, list):
        kind = desc[0]
        if kind == "ndarray":
            abi_type = desc[1]
            if abi_type not in _ARGUMENT_DTYPES:
                raise ValueError(f"could not map abi type {abi_type!r} to numpy dtype")
            dtype = np.dtype(_ARGUMENT_DTYPES[abi_type])

            def pack_ndarray(device: Any, out: VmVariantList, value: Any) -> None:
                if _push_view(out, value):
                    return
                try:
                    # (order="C", not np.ascontiguousarray, which makes a
                    # 0-d array 1-d.)
                    array = np.asarray(value, dtype=dtype, order="C")
                except Exception as e:
                    raise ValueError(
                        f"could not convert value to numpy array: dtype={dtype!r}, error='{e}', value={value!r}"
                    ) from e
                _push_host_array(device, out, array)

            return pack_ndarray
        if kind in ("slist", "stuple"):
            return _container_packer("sequence", list(enumerate(_packer(d) for d in desc[1:])))
        if kind == "sdict":
            return _container_packer("dict", [(d[0], _packer(d[1])) for d in desc[1:]])
        raise ValueError(f"Unrecognized reflection compound type: {kind}")
    if desc in _INTEGER_TYPES:
        return lambda device, out, value: out.push_int(value)
    if desc in _FLOAT_TYPES:
        return lambda device, out, value: out.push_float(value)
    raise ValueError(f"Unrecognized reflection primitive type: {desc}")


class ArgumentPacker:
    """Python arguments into a VmVariantList, as iree.runtime's packer:
    by the `iree.abi` argument descriptors (keyword arguments for `named`
    ones), or, with none, by each value's type (no keyword arguments)."""

    def __init__(self, arg_descs: Optional[list]):
        self._packers: Optional[list] = None
        self._keywords: dict = {}
        self._positional = 0
        if arg_descs is None:
            return
        self._packers = []
        for desc in arg_descs:
            if isinstance(desc, list) and desc and desc[0] == "named":
                self._keywords[desc[1]] = len(self._packers)
                desc = desc[2]
            else:
                self._positional += 1
            self._packers.append(_packer(desc))

    def pack(self, device: Any, args: tuple, kwargs: dict) -> VmVariantList:
        if self._packers is None:
            if kwargs:
                raise ValueError("kwargs not supported for dynamic dispatch functions")
            out = VmVariantList(len(args))
            for value in args:
                _pack_by_type(device, out, value)
            return out
        if len(args) > self._positional:
            raise ValueError(f"mismatched call arity: expected {self._positional} got {len(args)}")
        missing = object()
        values = list(args) + [missing] * (len(self._packers) - len(args))
        for name, value in kwargs.items():
            index = self._keywords.get(name)
            if index is None:
                raise ValueError(f"specified kwarg '{name}' is unknown")
            if values[index] is not missing:
                raise ValueError(f"mismatched call arity: duplicate keyword argument '{name}'")
            values[index] = value
        for index, value in enumerate(values):
            if value is missing:
                raise ValueError(f"mismatched call arity: expected a value for argument {index}")
        out = VmVariantList(len(values))
        for pack, value in zip(self._packers, values):
            pack(device, out, value)
        return out


def _return_error(where: str, summary: str) -> ReturnError:
    return ReturnError(f"Error processing function return: {summary} (while decoding return {where})")


def _scalar(vm_list: VmVariantList, index: int, bound: type) -> Any:
    value = vm_list.get_variant(index)
    if not isinstance(value, bound):
        raise ReturnError(f"expected an {bound} value but got {value.__class__}")
    return value


def _convert(device: Any, vm_list: VmVariantList, index: int, desc: Any) -> Any:
    kind = desc if isinstance(desc, str) else desc[0]
    if kind == "ndarray":
        view = vm_list.get_as_object(index, HalBufferView)
        try:
            dtype = map_abi_type_to_dtype_info(desc[1]).dtype
        except KeyError:
            raise ReturnError(f"unrecognized dtype '{desc[1]}'") from None
        return DeviceArray(device, view, implicit_host_transfer=True, override_dtype=dtype)
    if kind == "sdict":
        keys = [k for k, _ in desc[1:]]
        return dict(zip(keys, read_results(device, vm_list.get_as_list(index), [d for _, d in desc[1:]])))
    if kind == "slist":
        return read_results(device, vm_list.get_as_list(index), desc[1:])
    if kind == "stuple":
        return tuple(read_results(device, vm_list.get_as_list(index), desc[1:]))
    if kind == "py_homogeneous_list":
        inner = vm_list.get_as_list(index)
        return read_results(device, inner, desc[1:] * len(inner))
    if kind in _INTEGER_TYPES:
        return _scalar(vm_list, index, int)
    if kind in ("f16", "f32", "f64", "bf16"):
        return _scalar(vm_list, index, float)
    raise _return_error(f"{index}@{vm_list} with description {desc}", f"cannot map VM type to Python: {kind}")


def read_results(device: Any, vm_list: VmVariantList, descs: Optional[list]) -> list:
    """The results in `vm_list` as Python values: by the descriptors, or
    with none as `get_variant` gives them, buffer views as DeviceArrays."""
    if descs is None:
        results = []
        for index in range(len(vm_list)):
            value = vm_list.get_variant(index)
            if isinstance(value, VmRef):
                view = value.deref(HalBufferView, True)
                if view is not None:
                    value = DeviceArray(device, view, implicit_host_transfer=True)
            results.append(value)
        return results
    if len(vm_list) != len(descs):
        raise _return_error(f"0@{vm_list}", f"mismatched return arity: {len(vm_list)} vs {len(descs)}")
    results = []
    for index, desc in enumerate(descs):
        try:
            results.append(_convert(device, vm_list, index, desc))
        except ReturnError:
            raise
        except Exception as e:
            raise _return_error(
                f"{index}@{vm_list} with description {desc}", "exception converting from VM type to Python"
            ) from e
    return results
