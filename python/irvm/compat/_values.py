"""VM values between Python and irvm: VmVariantList, VmRef, and how
arguments go in and results come out."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import _irvm
from ._conversions import _nanobind_float, _nanobind_int
from ._errors import _as_iree_error
from ._hal_types import _element_type_trace_name
from ._buffers import _MEMBER_VALUES, _element_type_text, _vm_cast, HalBuffer, HalBufferView
from .array_interop import DeviceArray
from .dtypes import map_dtype_to_hal_element_type

# Whether each dtype met has a HAL element type (dtype -> bool).
_DTYPE_MAPS: dict = {}


def _check_dtype(array: np.ndarray) -> None:
    """Refuses, as iree.runtime 3.13's argument packing does, an array
    whose dtype has no HAL element type (ml_dtypes' int4, uint4, int2 and
    uint2, strings, objects, datetimes): a plain ValueError, "could not
    map dtype dtype(int4) to element type: mapping not found"."""
    dtype = array.dtype
    maps = _DTYPE_MAPS.get(dtype)
    if maps is None:
        maps = _DTYPE_MAPS[dtype] = map_dtype_to_hal_element_type(dtype) is not None
    if not maps:
        raise ValueError(f"could not map dtype {dtype!r} to element type: mapping not found")


def _to_vm_item(arg: Any) -> Any:
    """What irvm passes to the VM for a Python value that is not a list:
    arrays and numbers; a VmVariantList (or a VmRef to one) is returned
    as the VmVariantList, for _to_vm to follow."""
    if isinstance(arg, VmRef):
        target = arg._target
        if isinstance(target, _irvm.Ref):
            return target
        arg = target
    if isinstance(arg, DeviceArray):
        if arg._array is not None:
            return arg._array
        # (A DeviceArray of packed elements: its buffer view.)
        arg = arg._buffer_view
    if isinstance(arg, HalBufferView):
        if arg._packed_shape is not None:
            # Packed bytes (a sub-byte type such as INT_4): a view of them
            # as they are, as iree.runtime passes it.
            return _irvm._packed_view(arg._array, arg.shape, arg._element_type)
        if arg._element_type not in _MEMBER_VALUES:
            raise ValueError(
                f"irvm.compat cannot pass a buffer view of element type {arg._element_type:#010x} "
                "(one HalElementType does not name) to the VM"
            )
        return arg._array
    if not isinstance(arg, (np.ndarray, VmVariantList)) and hasattr(arg, "__array__"):
        # An array-like object: its array, as iree.runtime takes it.
        arg = np.asarray(arg)
    if isinstance(arg, np.ndarray):
        _check_dtype(arg)
    return arg


def _to_vm(arg: Any) -> Any:
    """What irvm passes to the VM for a Python value: arrays, numbers, and
    a VmVariantList as a Python list of its items, lists in lists followed
    with a stack of their own (any depth converts; Python's recursion
    stopped at about 1000). A list that holds itself (directly or through
    the lists in it) becomes a Python list that does (one Python list per
    VmVariantList, by identity), which irvm refuses with a ValueError
    naming the cycle."""
    # Each VmVariantList met, by id, to the Python list made for it.
    made: dict = {}

    def convert(value: Any) -> tuple:
        # The value for the VM, and the VmVariantList still to fill it from.
        value = _to_vm_item(value)
        if not isinstance(value, VmVariantList):
            return value, None
        if id(value) in made:
            return made[id(value)], None
        out: list = []
        made[id(value)] = out
        return out, value

    result, pending = convert(arg)
    stack = [(pending, result)] if pending is not None else []
    while stack:
        items, out = stack.pop()
        for item in items._items:
            converted, inner = convert(item)
            out.append(converted)
            if inner is not None:
                stack.append((inner, converted))
    return result


def _check_convertible(arg: Any) -> None:
    """Refuses, as iree.runtime's argument packing does before the call,
    the values it has no VM value for: None, bools, strings and bytes-like
    objects (numpy arrays and scalars, numbers, lists, tuples, dicts and
    array-likes it converts). INVALID_ARGUMENT, a ValueError."""
    if arg is None or isinstance(arg, (bool, str, bytes, bytearray, memoryview)):
        raise _as_iree_error(
            _irvm.InvalidArgumentError(f"could not convert python value to VM: {arg!r}")
        )
    # Arrays in lists and tuples (iree.runtime packs those as lists of
    # their items): their dtypes, as for an array argument.
    stack, seen = [arg], set()
    while stack:
        value = stack.pop()
        if isinstance(value, np.ndarray):
            _check_dtype(value)
        elif isinstance(value, (list, tuple)) and id(value) not in seen:
            seen.add(id(value))
            stack.extend(value)


def _from_vm_item(device: Any, value: Any) -> Any:
    """A VM value that is not a list as a compat call returns it."""
    if isinstance(value, _irvm.VmBuffer):
        # A `!vm.buffer` result: a VmRef to it, as iree.runtime gives it.
        return VmRef(VmBuffer(0, _same_as=value))
    if isinstance(value, np.ndarray):
        return DeviceArray(device, HalBufferView(value), implicit_host_transfer=True)
    if isinstance(value, _irvm.Ref):
        # A ref of another type (a hal.device, hal.fence): a VmRef, as
        # iree.runtime gives it.
        return VmRef(value)
    return value


def _from_vm(device: Any, value: Any) -> Any:
    """A call's result as a compat call returns it: arrays as DeviceArrays,
    lists as Python lists of their items (followed with a stack of their
    own: any depth converts). One list out for each list in: lists that
    hold each other (a VM list holding itself comes back so) keep doing so."""
    if not isinstance(value, list):
        return _from_vm_item(device, value)
    made = {id(value): []}
    result = made[id(value)]
    stack = [(value, result)]
    while stack:
        items, out = stack.pop()
        for item in items:
            if not isinstance(item, list):
                out.append(_from_vm_item(device, item))
            elif id(item) in made:
                out.append(made[id(item)])
            else:
                made[id(item)] = inner = []
                out.append(inner)
                stack.append((item, inner))
    return result


class VmVariantList:
    """A list of VM values (ints, floats, buffer views, lists). Pushes take
    what iree.runtime's take (TypeError otherwise: an int for push_int, a
    number for push_float, a VmVariantList for push_list, an object with
    `__iree_vm_ref__` for push_ref), and reads fail as there: IndexError
    outside the list, ValueError ("list element is not a ref") reading a
    number as a ref or object, RuntimeError reading a number as a list."""

    def __init__(self, capacity: int):
        _nanobind_int(capacity, "VmVariantList")
        self._items: list = []
        # Item index to value type ('i32', 'i64', 'f32', 'f64') of the
        # numbers a call appended, by its calling convention; pushed
        # numbers are i64 and f64, as iree.runtime pushes them.
        self._value_types: dict = {}

    def push_int(self, value: int) -> None:
        """Appends `value` as an i64, read as iree.runtime reads it (any
        object `int()` takes but a float; TypeError outside 64 bits)."""
        self._items.append(_nanobind_int(value, "push_int", signed=True))

    def push_float(self, value: float) -> None:
        """Appends `value` as an f64, read as iree.runtime reads it (an
        object with `__float__` or `__index__`: not a string)."""
        self._items.append(_nanobind_float(value, "push_float"))

    def push_ref(self, ref: Any) -> None:
        if ref is None:
            # (nanobind refuses None for iree.runtime's `object` parameter.)
            raise TypeError("push_ref(): incompatible function arguments: takes an object with __iree_vm_ref__, not None")
        if not hasattr(ref, "__iree_vm_ref__"):
            raise AttributeError(f"'{type(ref).__name__}' object has no attribute '__iree_vm_ref__'")
        self._items.append(ref)

    def push_list(self, value: "VmVariantList") -> None:
        if not isinstance(value, VmVariantList):
            raise TypeError(f"push_list(): takes a VmVariantList, not {type(value).__name__}")
        self._items.append(value)

    def _item(self, index: int) -> Any:
        # (An index is a C int in iree.runtime's binding.)
        index = _nanobind_int(index, "VmVariantList index", bits=32, signed=True)
        if not 0 <= index < len(self._items):
            raise IndexError(
                f"Could not access list element: OUT_OF_RANGE; index {index} out of bounds ({len(self._items)})"
            )
        return self._items[index]

    def get_as_int(self, index: int) -> int:
        """Item `index` as an int (irvm.compat's; iree.runtime has get_variant)."""
        return int(self._item(index))

    def get_as_float(self, index: int) -> float:
        """Item `index` as a float (irvm.compat's; iree.runtime has get_variant)."""
        return float(self._item(index))

    def get_as_object(self, index: int, clazz: type) -> Any:
        """Item `index` cast to `clazz` as iree.runtime casts it:
        `clazz.__iree_vm_cast__(ref)` (HalBufferView, HalBuffer,
        VmVariantList, VmBuffer, or any class defining it), which gives
        None for a ref of another type; ValueError for a number, and
        AttributeError for a class without `__iree_vm_cast__` (`object`)."""
        value = self._item(index)
        if not _is_ref(value):
            raise ValueError("list element is not a ref")
        cast = getattr(clazz, "__iree_vm_cast__", None)
        if cast is None:
            raise AttributeError(f"type object '{clazz.__name__}' has no attribute '__iree_vm_cast__'")
        if value is None:
            return None
        if isinstance(value, clazz) and clazz in _REF_TYPE_NAMES:
            # The object pushed, itself (iree.runtime: a new wrapper of it).
            return value
        return cast(_as_vm_ref(value))

    def get_as_list(self, index: int) -> "VmVariantList":
        """Item `index`, a list, as a VmVariantList: RuntimeError for a
        number, ValueError for a ref of another type (a buffer), as in
        iree.runtime."""
        value = self._item(index)
        if isinstance(value, VmRef):
            if not value.isinstance(VmVariantList):
                raise ValueError(_NOT_A_LIST)
            return value.deref(VmVariantList)
        if isinstance(value, VmVariantList):
            return value
        if isinstance(value, list):
            out = VmVariantList(len(value))
            out._items = list(value)
            return out
        if _is_ref(value):
            raise ValueError(_NOT_A_LIST)
        raise RuntimeError(f"Could not access list element: FAILED_PRECONDITION; item {index} is not a list")

    def get_serialized_trace_value(self, index: int) -> dict:
        """Item `index` as iree.runtime serializes it for tracing: a number
        as `{"i32": 3, "type": "value"}` (its VM type), a null ref as
        `{"type": "null"}`, a list as `{"type": "vm.list", "items": [...]}`,
        a buffer view as its shape, element type name (`f32`) and the bytes
        of its whole buffer; ValueError for other refs (a HalBuffer), as
        there."""
        return _trace_value(self._item(index), self._value_types.get(index))

    def get_variant(self, index: int) -> Any:
        """Item `index`: a number as a Python int or float, a ref as a
        VmRef (a buffer, buffer view or list too), a null ref as None, as
        in iree.runtime."""
        value = self._item(index)
        if value is None or not _is_ref(value):
            return value
        return _as_vm_ref(value)

    def get_as_ref(self, index: int) -> "VmRef":
        """Item `index` (a list or buffer view) as a VmRef."""
        value = self._item(index)
        if not _is_ref(value) or value is None:
            raise ValueError("list element is not a ref")
        return _as_vm_ref(value)

    @property
    def ref(self) -> "VmRef":
        """A reference to this list (what a Python host function returns for
        a ref result): its items as they are when the VM receives it."""
        return VmRef(self)

    __iree_vm_ref__ = ref

    @staticmethod
    def __iree_vm_cast__(ref: "VmRef") -> Optional["VmVariantList"]:
        """The list `ref` refers to (None for another type)."""
        return _vm_cast(ref, VmVariantList)

    @property
    def size(self) -> int:
        return len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        items = ", ".join(_variant_text(v, set()) for v in self._items)
        return f"<VmVariantList({len(self._items)}): [{items}]>"


# iree.runtime's text for a list read from a ref of another type.
_NOT_A_LIST = "Could not deref list (wrong type?): INVALID_ARGUMENT; ref type mismatch"


def _as_vm_ref(value: Any) -> "VmRef":
    """A VmVariantList's ref item (not None) as a VmRef: a pushed object,
    or what a call put there (a program's list as a VmVariantList of its
    items, a buffer view's array as a HalBufferView)."""
    if isinstance(value, VmRef):
        return value
    if isinstance(value, list):
        items = VmVariantList(len(value))
        items._items = list(value)
        return VmRef(items)
    if isinstance(value, np.ndarray):
        return VmRef(HalBufferView(value))
    return VmRef(value)


def _is_ref(value: Any) -> bool:
    """Whether a VmVariantList item is a ref (or a null one), not a number."""
    return not isinstance(value, (bool, int, float, np.integer, np.floating))


def _referenced(value: Any) -> Any:
    """A VmVariantList item with the reference taken away: what a VmRef
    refers to, a program's list as a list and buffer view as a
    HalBufferView; anything else as it is."""
    if isinstance(value, VmRef):
        value = value._target
    if isinstance(value, _irvm.Ref):
        if value.type_name == "vm.list":
            return value._value()
        if value.type_name == "hal.buffer_view":
            return HalBufferView(value._value(), element_type=value._element_type)
    return value


# The end of an iterator (next's default).
_END = object()


def _list_like(value: Any) -> bool:
    return isinstance(value, (VmVariantList, list))


def _items_with_types(value: Any):
    """A list's items, each with its VM value type (`i32`..., or None)."""
    if isinstance(value, VmVariantList):
        return ((v, value._value_types.get(i)) for i, v in enumerate(value._items))
    return ((v, None) for v in value)


def _trace_item(value: Any, value_type: Optional[str]) -> tuple:
    """A VmVariantList item as get_serialized_trace_value gives it, and the
    list it is when it is one (its `items` then still to be filled)."""
    value = _referenced(value)
    if value is None:
        return {"type": "null"}, None
    if isinstance(value, (bool, int, np.integer)):
        return {value_type or "i64": int(value), "type": "value"}, None
    if isinstance(value, (float, np.floating)):
        return {value_type or "f64": float(value), "type": "value"}, None
    if _list_like(value):
        return {"type": "vm.list", "items": []}, value
    if isinstance(value, np.ndarray):
        value = HalBufferView(value)
    if isinstance(value, HalBufferView):
        backing = value._backing if value._backing is not None else value._array
        return {"type": "hal.buffer_view", "shape": value.shape,
                "element_type": _element_type_trace_name(value.element_type),
                "contents": backing.tobytes()}, None
    raise ValueError("Unsupported VM to Python Type Conversion")


def _trace_value(value: Any, value_type: Optional[str] = None) -> dict:
    """A VmVariantList item as get_serialized_trace_value gives it, lists
    in lists followed with a stack of their own, not Python's (lists
    nested deeper than Python's recursion limit serialize, as in
    iree.runtime). A list that holds itself (directly or through the lists
    in it) is a ValueError: it has no finite serialized form (iree.runtime
    3.13 reads the list's place in itself as null)."""
    result, first = _trace_item(value, value_type)
    if first is None:
        return result
    # The lists being serialized (ids), and for each its items still to
    # read and where their values go.
    path = {id(first)}
    stack = [(first, _items_with_types(first), result["items"])]
    while stack:
        current, items, out = stack[-1]
        item = next(items, _END)
        if item is _END:
            path.discard(id(current))
            stack.pop()
            continue
        serialized, inner = _trace_item(*item)
        out.append(serialized)
        if inner is not None:
            if id(inner) in path:
                raise ValueError(
                    "get_serialized_trace_value: the list holds itself (directly or through the lists in it), "
                    "which has no serialized value"
                )
            path.add(id(inner))
            stack.append((inner, _items_with_types(inner), serialized["items"]))
    return result


def _variant_item_text(value: Any, seen: set) -> tuple:
    """An item's text as iree.runtime's repr shows it, and for a list not
    seen before, `List[` and an iterator over its items (still to show)."""
    if value is None:
        return "None", None
    value = _referenced(value)
    if isinstance(value, (bool, int, np.integer)):
        return str(int(value)), None
    if isinstance(value, (float, np.floating)):
        return f"{float(value):f}", None
    if _list_like(value):
        if id(value) in seen:
            return "List[...circular...]", None
        seen.add(id(value))
        return "List[", iter(value._items if isinstance(value, VmVariantList) else value)
    if isinstance(value, np.ndarray):
        value = HalBufferView(value)
    if isinstance(value, HalBufferView):
        dims = "x".join(str(d) for d in value.shape)
        return f"HalBufferView({dims}:{_element_type_text(value.element_type)})", None
    if isinstance(value, HalBuffer):
        return f"HalBuffer({value.byte_length()})", None
    if isinstance(value, _irvm.Ref) and value._byte_length is not None:
        # A hal.buffer a call returned (buffer_view.buffer).
        return f"HalBuffer({value._byte_length})", None
    if isinstance(value, _irvm.Ref) and value._fence_timepoints is not None:
        # A hal.fence a call returned: its timepoint count, as iree.runtime
        # prints it.
        return f"fence({value._fence_timepoints})", None
    return f"Unknown({id(value)})", None


def _variant_text(value: Any, seen: set) -> str:
    """An item of a VmVariantList as iree.runtime's repr shows it: ints,
    floats with six decimals, None, nested lists as `List[...]` (one seen
    before as `List[...circular...]`; lists in lists followed with a stack
    of their own, so that any depth prints), buffer views as
    `HalBufferView(4x8:0x20000021)` (dimensions, and the element type's
    bytes reversed), buffers as `HalBuffer(16)`, fences as `fence(1)`
    (their timepoint count), other refs as `Unknown(address)`."""
    text, items = _variant_item_text(value, seen)
    parts = [text]
    # For each list being shown: its items still to show, and whether
    # none has been shown yet.
    stack = [[items, True]] if items is not None else []
    while stack:
        top = stack[-1]
        item = next(top[0], _END)
        if item is _END:
            parts.append("]")
            stack.pop()
            continue
        if not top[1]:
            parts.append(", ")
        top[1] = False
        text, items = _variant_item_text(item, seen)
        parts.append(text)
        if items is not None:
            stack.append([items, True])
    return "".join(parts)


class VmBuffer(_irvm.VmBuffer):
    """A `!vm.buffer` (iree.runtime's VmBuffer): `VmBuffer(length,
    alignment=0, mutable=True)` is `length` zeroed bytes, read and written
    through the buffer protocol (`memoryview`, `np.frombuffer`) in place;
    pushed with `push_ref` it is passed to a function taking `!vm.buffer`
    (the program's writes are seen here), and a `!vm.buffer` result is one
    over the same bytes (`get_as_object(i, VmBuffer)`). irvm aligns every
    buffer to 64 bytes: a larger `alignment` is a ValueError. `length` and
    `alignment` are read as iree.runtime reads them (anything `int()`
    takes but a float)."""

    def __new__(cls, length: Any, alignment: Any = 0, mutable: bool = True, *, _same_as: Any = None) -> "VmBuffer":
        length = _nanobind_int(length, "VmBuffer")
        alignment = _nanobind_int(alignment, "VmBuffer")
        return super().__new__(cls, length, alignment, mutable, _same_as=_same_as)

    @property
    def ref(self) -> "VmRef":
        """A reference to this buffer (what push_ref takes)."""
        return VmRef(self)

    __iree_vm_ref__ = ref

    @staticmethod
    def __iree_vm_cast__(ref: "VmRef") -> Optional["VmBuffer"]:
        """The buffer `ref` refers to (None for another type)."""
        return _vm_cast(ref, VmBuffer)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, _irvm.VmBuffer):
            return NotImplemented
        return _irvm._vm_buffer_same(self, other)

    def __hash__(self) -> int:
        return hash(_irvm._vm_buffer_address(self))

    def __repr__(self) -> str:
        return f"<VmBuffer size {memoryview(self).nbytes} at 0x{_irvm._vm_buffer_address(self):x}>"


class VmRef:
    """A reference to a VM object (iree.runtime's VmRef): what a Python
    host function gets for a ref argument, and returns for a ref result
    (`.ref` of a VmVariantList or HalBufferView)."""

    def __init__(self, target: Any):
        # An irvm.Ref (from the VM), or a VmVariantList or HalBufferView.
        self._target = target

    def _type_name(self) -> str:
        t = self._target
        if isinstance(t, VmVariantList):
            return "vm.list"
        if isinstance(t, HalBufferView):
            return "hal.buffer_view"
        if isinstance(t, HalBuffer):
            return "hal.buffer"
        if isinstance(t, _irvm.VmBuffer):
            return "vm.buffer"
        return t.type_name

    def _vm_value(self) -> Any:
        """What irvm passes to the VM for it."""
        return _to_vm(self)

    def isinstance(self, ref_type: type) -> bool:
        """Whether it refers to a `ref_type` (VmVariantList, HalBufferView)."""
        return _REF_TYPE_NAMES.get(ref_type) == self._type_name()

    def deref(self, value: type, optional: bool = False) -> Any:
        """The object as a `value` type (VmVariantList, HalBufferView,
        HalBuffer, VmBuffer); None when it is another type and `optional`,
        else iree.runtime's TypeError; AttributeError for a class without
        `__iree_vm_cast__` (`object`), as there."""
        if not hasattr(value, "__iree_vm_cast__"):
            raise AttributeError(f"type object '{getattr(value, '__name__', value)}' has no attribute '__iree_vm_cast__'")
        if not self.isinstance(value):
            if optional:
                return None
            raise TypeError(f"Cannot dereference to specific type (the VmRef is a {self._type_name()}, not a {value.__name__})")
        t = self._target
        if not isinstance(t, _irvm.Ref):
            return t
        if value is HalBuffer:
            # A hal.buffer the program made: over its bytes, not a copy.
            return HalBuffer(t._hal_buffer_bytes())
        if value is VmBuffer:
            return VmBuffer(0, _same_as=t._vm_buffer())
        items = t._value()
        if value is VmVariantList:
            out = VmVariantList(len(items))
            out._items = items
            return out
        return HalBufferView(items, element_type=t._element_type)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, VmRef):
            return NotImplemented
        a, b = self._target, other._target
        if isinstance(a, _irvm.VmBuffer):
            return _irvm._vm_buffer_same(a, b)
        if isinstance(a, _irvm.Ref):
            return a._same(b)
        return a is b

    def __hash__(self) -> int:
        return id(self._target) if not isinstance(self._target, _irvm.Ref) else 0

    def __repr__(self) -> str:
        return f"<VmRef {self._type_name()} at 0x{id(self._target):x}>"


VmRef.__iree_vm_ref__ = property(lambda self: self, doc="The reference itself (what push_ref takes).")

_REF_TYPE_NAMES = {VmVariantList: "vm.list", HalBufferView: "hal.buffer_view", HalBuffer: "hal.buffer",
                   VmBuffer: "vm.buffer"}
