"""HAL buffers, buffer views, mapped memory and the allocator: host memory
with iree.runtime's types, reprs and errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from .. import _irvm
from ._conversions import _nanobind_int
from ._hal_types import (
    _ELEMENT_TO_DTYPE,
    BufferCompatibility,
    BufferUsage,
    HalElementType,
    MemoryType,
    _element_type_of,
    _ml_dtype_or_none,
)

if TYPE_CHECKING:
    from ._values import VmRef
    from .system_setup import HalDevice


def _vm_ref(target: Any) -> "VmRef":
    """A VmRef to a buffer or buffer view (imported here: _values, where
    VmRef lives, holds buffer views)."""
    from ._values import VmRef

    return VmRef(target)


def _bitfield_text(value: int, names: Sequence[tuple]) -> str:
    """`value` as IREE's iree_bitfield_format writes it: the names whose
    bits are all set, in table order (combined names first), each taking
    its bits; bits left over in hex."""
    parts = []
    for bits, name in names:
        if bits and value & bits == bits:
            parts.append(name)
            value &= ~bits
    if value:
        parts.append(f"{value:#x}")
    return "|".join(parts) if parts else "NONE"


# IREE's tables for iree_hal_memory_type_format and iree_hal_buffer_usage_format.
_MEMORY_TYPE_NAMES = (
    (70, "HOST_LOCAL"), (48, "DEVICE_LOCAL"), (1, "OPTIMAL"), (2, "HOST_VISIBLE"),
    (4, "HOST_COHERENT"), (8, "HOST_CACHED"), (16, "DEVICE_VISIBLE"),
)
_BUFFER_USAGE_NAMES = (
    (3, "TRANSFER"), (3072, "DISPATCH_STORAGE"), (12288, "DISPATCH_IMAGE"),
    (150994944, "MAPPING"), (1, "TRANSFER_SOURCE"), (2, "TRANSFER_TARGET"),
    (256, "DISPATCH_INDIRECT_PARAMETERS"), (512, "DISPATCH_UNIFORM_READ"),
    (1024, "DISPATCH_STORAGE_READ"), (2048, "DISPATCH_STORAGE_WRITE"),
    (4096, "DISPATCH_IMAGE_READ"), (8192, "DISPATCH_IMAGE_WRITE"),
    (65536, "SHARING_EXPORT"), (131072, "SHARING_REPLICATE"),
    (262144, "SHARING_CONCURRENT"), (524288, "SHARING_IMMUTABLE"),
    (16777216, "MAPPING_SCOPED"), (33554432, "MAPPING_PERSISTENT"),
    (67108864, "MAPPING_OPTIONAL"), (134217728, "MAPPING_ACCESS_RANDOM"),
    (268435456, "MAPPING_ACCESS_SEQUENTIAL_WRITE"),
)

# What IREE's CPU heap allocator gives for a request: device-local memory
# is host visible too, and every buffer is mappable (scoped, persistent,
# random access).
_HEAP_MAPPING = 16777216 | 33554432 | 134217728
_RESULT_MEMORY_TYPE = 50  # DEVICE_LOCAL|HOST_VISIBLE
_RESULT_USAGE = int(3075 | _HEAP_MAPPING)


def _c_int(value: Any, function: str) -> int:
    """An argument iree.runtime's binding declares `int` (a memory type,
    a usage): a signed 32-bit int, read as nanobind reads one, and kept
    as the HAL's unsigned 32 bits (-1 is 0xffffffff), as IREE keeps it."""
    return _nanobind_int(value, function, bits=32, signed=True) & 0xFFFFFFFF


def _size(value: Any, function: str) -> int:
    """A size or offset (iree_device_size_t): an unsigned 64-bit int, read
    as nanobind reads one (a TypeError for a float or a negative size)."""
    return _nanobind_int(value, function)


def _heap_memory_type(memory_type: int) -> int:
    memory_type = int(memory_type)
    return memory_type | 2 if memory_type & 32 else memory_type


def _storage_text(byte_length: int, memory_type: int, allowed_usage: int) -> str:
    """A buffer's size, memory type, access and usage, as IREE formats them."""
    return (
        f"{byte_length} bytes (at offset 0 into {byte_length}), "
        f"memory_type={_bitfield_text(memory_type, _MEMORY_TYPE_NAMES)}, allowed_access=ALL, "
        f"allowed_usage={_bitfield_text(allowed_usage, _BUFFER_USAGE_NAMES)}"
    )


def _element_type_text(element_type: int) -> str:
    """An element type as iree.runtime's list repr prints it (its 32 bits
    with the bytes in reverse order: FLOAT_32, 0x21000020, is 0x20000021)."""
    return f"0x{int.from_bytes(int(element_type).to_bytes(4, 'little'), 'big'):08x}"


def _vm_cast(ref: Any, target: type) -> Any:
    """What `target.__iree_vm_cast__(ref)` gives, as in iree.runtime: the
    object the VmRef `ref` refers to when it is a `target`, else None
    (`VmVariantList.get_as_object` casts so); a TypeError for a `ref`
    that is no VmRef."""
    if type(ref).__name__ != "VmRef" or not hasattr(ref, "deref"):
        raise TypeError(f"__iree_vm_cast__(): takes a VmRef, not {type(ref).__name__}")
    return ref.deref(target, True)


class HalBuffer:
    """Device memory without a shape (irvm's is host memory): what
    `HalAllocator.allocate_buffer` and `allocate_buffer_copy` without an
    element type return, and `HalBufferView.get_buffer()`."""

    def __init__(self, data: np.ndarray, memory_type: int = _RESULT_MEMORY_TYPE,
                 allowed_usage: int = _RESULT_USAGE):
        # The bytes, a flat uint8 array (a view of a buffer view's array).
        self._bytes = data
        self._memory_type = int(memory_type)
        self._allowed_usage = int(allowed_usage)

    def byte_length(self) -> int:
        return self._bytes.nbytes

    def memory_type(self) -> int:
        return self._memory_type

    def allowed_usage(self) -> int:
        return self._allowed_usage

    def map(self) -> "MappedMemory":
        return MappedMemory(_contiguous(self._bytes))

    def fill_zero(self, byte_offset: int, byte_length: int) -> None:
        """Zeroes `byte_length` bytes from `byte_offset` (IndexError when
        the range is not inside the buffer, as iree.runtime's OUT_OF_RANGE)."""
        byte_offset, byte_length = _size(byte_offset, "fill_zero"), _size(byte_length, "fill_zero")
        if byte_offset < 0 or byte_length < 0 or byte_offset + byte_length > self._bytes.nbytes:
            raise IndexError(
                f"Error zero filling buffer: OUT_OF_RANGE; fill_zero range [{byte_offset}, {byte_offset + byte_length}) "
                f"is outside the buffer's {self._bytes.nbytes} bytes"
            )
        self._bytes[byte_offset : byte_offset + byte_length] = 0

    def create_view(self, shape: Any, element_size: int) -> "HalBufferView":
        """A view of the buffer with `shape` and opaque elements of
        `element_size` bytes (OPAQUE_8..OPAQUE_64), as iree.runtime makes it.
        `shape` is a `Shape`, as there (a list or tuple is a TypeError)."""
        if not isinstance(shape, Shape):
            raise TypeError(
                f"create_view(): incompatible function arguments: takes a Shape, not {type(shape).__name__} "
                "(write Shape([...]))"
            )
        element_size = _size(element_size, "create_view")
        opaque = {1: HalElementType.OPAQUE_8, 2: HalElementType.OPAQUE_16,
                  4: HalElementType.OPAQUE_32, 8: HalElementType.OPAQUE_64}.get(element_size)
        if opaque is None:
            raise ValueError(f"INVALID_ARGUMENT; element_size {element_size} is not 1, 2, 4 or 8 bytes")
        return HalBufferView(self, shape, opaque)

    @property
    def ref(self) -> "VmRef":
        """A reference to this buffer (what push_ref takes)."""
        return _vm_ref(self)

    __iree_vm_ref__ = ref

    @staticmethod
    def __iree_vm_cast__(ref: "VmRef") -> Optional["HalBuffer"]:
        """The buffer `ref` refers to (None for another type)."""
        return _vm_cast(ref, HalBuffer)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, HalBuffer):
            return NotImplemented
        return (_address(self._bytes), self._bytes.nbytes) == (_address(other._bytes), other._bytes.nbytes)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<HalBuffer {_storage_text(self._bytes.nbytes, self._memory_type, self._allowed_usage)}>"


def _contiguous(array: np.ndarray) -> np.ndarray:
    """`array` itself when C-contiguous (its memory is then mapped in
    place), else a C-contiguous copy."""
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


class Shape(list):
    """A shape (iree.runtime's `Shape([2, 3])`): a list of dimensions."""


def _dtype_of_element(element_type: int) -> np.dtype:
    """The dtype a buffer view of `element_type` (a HalElementType or its
    value) holds its elements as: its numpy (or ml_dtypes) dtype, else
    unsigned integers of its width (ValueError for other widths)."""
    element_type = int(element_type)
    if (element_type & 0xFF) % 8:
        # Sub-byte elements (INT_4) are packed: no dtype holds them.
        raise ValueError(f"INVALID_ARGUMENT; element type {_element_type_name(element_type)} has no whole-byte width")
    dtype = _ELEMENT_TO_DTYPE.get(element_type)
    if dtype is not None:
        return np.dtype(dtype)
    ml_dtype = _ml_dtype_or_none(element_type)
    if ml_dtype is not None:
        return ml_dtype
    width = HalElementType.dense_byte_count(element_type)
    if width not in (1, 2, 4, 8) or (element_type not in _MEMBER_VALUES and width * 8 != element_type & 0xFF):
        raise ValueError(f"INVALID_ARGUMENT; element type {_element_type_name(element_type)} has no whole-byte width")
    return np.dtype(f"u{width}")


# The values HalElementType names (others are accepted as ints, as
# iree.runtime accepts them, and held as bytes).
_MEMBER_VALUES = frozenset(member.value for member in HalElementType)


def _element_type_name(element_type: int) -> str:
    """A member's name, or an unknown element type's value in hex."""
    return HalElementType(element_type).name if element_type in _MEMBER_VALUES else f"{element_type:#010x}"


def _packed_byte_length(dims: Sequence[int], element_type: int) -> int:
    """The bytes a dense view of `dims` elements of `element_type` takes,
    as IREE computes it (iree_hal_buffer_compute_view_size: the elements'
    bits, rounded up to whole bytes); ValueError for a type of no bits."""
    bits = element_type & 0xFF
    if bits == 0:
        raise ValueError("INVALID_ARGUMENT; opaque element types cannot be indexed")
    return (int(np.prod(dims, dtype=object)) * bits + 7) // 8


def _dimension(value: Any, function: str) -> int:
    """A shape's dimension as iree.runtime reads one (an unsigned 64-bit
    int through nanobind's caster; its failure is a RuntimeError there)."""
    try:
        return _nanobind_int(value, function)
    except TypeError:
        raise RuntimeError(f"{function}: shape dimension {value!r} is not a non-negative integer") from None


def _result_element_type(array: np.ndarray) -> Optional[HalElementType]:
    """The element type the program gave a result array (its bytes, at the
    end of the array's `base` chain, say it: `i32` results are INT_32, as
    in iree.runtime, where numpy's int32 says SINT_32); None for arrays
    that are not results, or of a type HalElementType does not name."""
    base = array
    while base is not None and not hasattr(base, "_element_type"):
        base = getattr(base, "base", None)
        if isinstance(base, memoryview):
            base = base.obj
    if base is None:
        return None
    try:
        element_type = HalElementType(base._element_type)
    except (TypeError, ValueError):
        return None
    # (A view of the bytes as another dtype of the same width keeps them;
    # one of another width is no longer that result. A sub-byte result's
    # elements, unpacked, are that result only whole: _packed_result.)
    if HalElementType.dense_byte_count(element_type) != array.dtype.itemsize:
        return None
    if not HalElementType.is_byte_aligned(element_type):
        return None
    return element_type


def _packed_result(array: Any) -> Optional[tuple]:
    """For a sub-byte result as irvm gives it (its elements unpacked one
    per byte, a copy), the element type and its packed bytes over the VM's
    buffer; None for any other array (a slice of such a result too)."""
    if not isinstance(array, np.ndarray):
        return None
    base = array
    while base is not None and not hasattr(base, "_packed"):
        base = getattr(base, "base", None)
        if isinstance(base, memoryview):
            base = base.obj
    if base is None or base._packed is None:
        return None
    whole = np.asarray(base)
    if (array.shape, array.strides, array.dtype, _address(array)) != (
            whole.shape, whole.strides, whole.dtype, _address(whole)):
        return None
    return base._element_type, base._packed


class HalBufferView:
    """A tensor: host memory with a shape and an element type.
    `HalBufferView(buffer, shape, element_type)` views the start of a
    HalBuffer, as in iree.runtime (IndexError when the buffer is too
    short); irvm.compat also makes one from an array
    (`HalBufferView(array, element_type=None)`)."""

    def __init__(self, array: Any, shape: Any = None, element_type: Optional[int] = None):
        self._memory_type, self._allowed_usage = _RESULT_MEMORY_TYPE, _RESULT_USAGE
        # The backing buffer's bytes (a view over an array: the array's).
        self._buffer_length: Optional[int] = None
        self._backing: Optional[np.ndarray] = None
        # The shape, when `_array` holds packed bytes (an element type of
        # no numpy dtype) rather than the elements.
        self._packed_shape: Optional[list] = None
        if isinstance(array, HalBuffer):
            if shape is None or element_type is None:
                raise TypeError("HalBufferView(buffer, shape, element_type): give the shape and element type")
            element_type = _nanobind_int(element_type, "HalBufferView", bits=32)
            dims = [_dimension(d, "creating buffer view") for d in shape]
            self._view_buffer(array, dims, element_type, "creating buffer view")
            return
        if isinstance(shape, (int, HalElementType)) and element_type is None:
            # HalBufferView(array, element_type) by position.
            shape, element_type = None, shape
        if shape is not None:
            raise TypeError("HalBufferView(array, element_type=None): an array's view takes its shape")
        packed = _packed_result(array)
        if packed is not None and (element_type is None or int(element_type) == packed[0]):
            # A sub-byte result: a view of its packed bytes, as
            # iree.runtime's (shape [4], 2 bytes for 4 x INT_4).
            self._view_buffer(HalBuffer(packed[1]), list(array.shape), packed[0], "creating buffer view")
            return
        if element_type is None:
            element_type = _result_element_type(array)
        if element_type is None:
            element_type = _element_type_of(array.dtype)
        self._element_type = _nanobind_int(element_type, "HalBufferView", bits=32)
        if self._element_type not in _MEMBER_VALUES:
            # An element type HalElementType does not name: the array's
            # bytes viewed so, as iree.runtime views a buffer.
            self._view_buffer(HalBuffer(_contiguous(array).reshape(-1).view(np.uint8)), list(array.shape),
                              self._element_type, "creating buffer view")
            return
        # The bits of another type of the same width given with an element
        # type (a uint16 array with BFLOAT_16, float32 data with SINT_32)
        # are held as that type's dtype, so that the program is given that
        # type and arrays of it come out.
        try:
            dtype = _dtype_of_element(self._element_type)
        except ValueError:
            dtype = array.dtype
        if array.dtype != dtype and array.dtype.itemsize == dtype.itemsize:
            array = array.view(dtype)
        self._array = array

    def _view_buffer(self, buffer: HalBuffer, dims: list, element_type: int, context: str) -> None:
        """Makes this a view of the start of `buffer` with `dims` and
        `element_type`, as iree_hal_buffer_view_create makes one: IndexError
        when the buffer is too short, ValueError for a type of no bits;
        each message starts with `context`."""
        self._element_type = element_type
        try:
            dtype: Optional[np.dtype] = _dtype_of_element(element_type)
        except ValueError:
            dtype = None
        try:
            if dtype is not None:
                need = int(np.prod(dims, dtype=object)) * dtype.itemsize
            else:
                need = _packed_byte_length(dims, element_type)
        except ValueError as e:
            raise ValueError(f"{context}: {e}") from None
        if need > buffer.byte_length():
            raise IndexError(
                f"{context}: OUT_OF_RANGE; buffer view byte length {need} exceeds "
                f"backing buffer byte length {buffer.byte_length()}"
            )
        if dtype is not None:
            self._array = buffer._bytes[:need].view(dtype).reshape(dims)
        else:
            self._array = buffer._bytes[:need]
            self._packed_shape = list(dims)
        self._memory_type, self._allowed_usage = buffer._memory_type, buffer._allowed_usage
        self._buffer_length = buffer.byte_length()
        # The whole buffer's bytes (a serialized trace value holds them all).
        self._backing = buffer._bytes

    @property
    def shape(self) -> list[int]:
        return list(self._packed_shape if self._packed_shape is not None else self._array.shape)

    @property
    def element_type(self) -> int:
        """The element type's value, an int (as iree.runtime gives it:
        `HalElementType(view.element_type)` is the member; an element
        type it does not name is kept as given, as there)."""
        return self._element_type

    @property
    def byte_length(self) -> int:
        return self._array.nbytes

    def map(self) -> "MappedMemory":
        """The buffer's bytes (all of them, as iree.runtime maps a view's
        whole buffer; `asarray` reads the view's elements from the start)."""
        if self._backing is not None:
            return MappedMemory(_contiguous(self._backing))
        return MappedMemory(_contiguous(self._array))

    def get_buffer(self) -> HalBuffer:
        """The buffer the view is over (the same memory)."""
        return HalBuffer(self._array.reshape(-1).view(np.uint8), self._memory_type, self._allowed_usage)

    @property
    def ref(self) -> "VmRef":
        """A reference to this buffer view (what a Python host function
        returns for a ref result)."""
        return _vm_ref(self)

    __iree_vm_ref__ = ref

    @staticmethod
    def __iree_vm_cast__(ref: "VmRef") -> Optional["HalBufferView"]:
        """The buffer view `ref` refers to (None for another type)."""
        return _vm_cast(ref, HalBufferView)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, HalBufferView):
            return NotImplemented
        return self.get_buffer() == other.get_buffer() and (self.shape, self._element_type) == (
            other.shape, other._element_type)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        backing = self._buffer_length if self._buffer_length is not None else self._array.nbytes
        storage = _storage_text(backing, self._memory_type, self._allowed_usage)
        return f"<HalBufferView ({dims}), element_type={_element_type_text(self._element_type)}, {storage}>"


class MappedMemory(_irvm.MappedBytes):
    """Host access to a buffer's bytes. Has the buffer protocol as
    iree.runtime's: `memoryview(m)` is the bytes, one dimension of format
    `B`, read-only; it keeps the memory alive after the buffer and the
    view it was mapped from are dropped."""

    def __init__(self, array: np.ndarray):
        # (The base class holds a buffer-protocol view of `array`.)
        self._array = array

    def asarray(self, shape: Sequence[int], numpy_dtype_descr: Any) -> np.ndarray:
        """The first elements of the mapped bytes as an array of `shape`
        and that dtype, over the same memory."""
        dtype = np.dtype(numpy_dtype_descr)
        if any(int(d) < 0 for d in shape):
            # iree.runtime 3.13 refuses it too (ValueError); the product
            # would otherwise count from the end of the bytes.
            raise ValueError(f"shape {list(shape)} has a negative dimension")
        count = int(np.prod(shape, dtype=np.int64))
        flat = self._array.reshape(-1).view(np.uint8)
        if count * dtype.itemsize > flat.nbytes:
            # iree.runtime 3.13 reads past the mapping (asarray([4], int8)
            # of a 4 x INT_4 view's 2 bytes); irvm refuses.
            raise ValueError(
                f"asarray: {count} elements of {dtype} need {count * dtype.itemsize} bytes; "
                f"the mapped memory has {flat.nbytes}"
            )
        return flat[: count * dtype.itemsize].view(dtype).reshape(shape)


def _host_bytes(buffer: Any, copy: bool = True) -> np.ndarray:
    """`buffer`'s bytes as an array (a copy, or with `copy=False` over the
    same memory), refused as iree.runtime refuses it: TypeError for
    objects without the buffer protocol (a list), ValueError for arrays
    that are not C-contiguous."""
    if isinstance(buffer, np.ndarray):
        if not buffer.flags.c_contiguous:
            raise ValueError("ndarray is not C-contiguous")
        return buffer.copy(order="C") if copy else buffer
    try:
        view = memoryview(buffer)
    except TypeError:
        raise TypeError(f"a bytes-like object is required, not '{type(buffer).__name__}'") from None
    if not view.c_contiguous:
        raise ValueError("buffer is not C-contiguous")
    return np.array(view, copy=True, order="C") if copy else np.asarray(view)


class HalAllocator:
    """The device's allocator: host memory as buffers and buffer views."""

    def __init__(self, device: HalDevice):
        self._device = device

    def allocate_buffer(self, memory_type: int, allowed_usage: int, allocation_size: int) -> HalBuffer:
        """A zeroed buffer of `allocation_size` bytes. The arguments are
        read as iree.runtime's bindings read them (`_c_int`, `_size`)."""
        memory_type = _c_int(memory_type, "allocate_buffer")
        allowed_usage = _c_int(allowed_usage, "allocate_buffer")
        allocation_size = _size(allocation_size, "allocate_buffer")
        try:
            data = np.zeros(allocation_size, np.uint8)
        except (MemoryError, ValueError):
            raise RuntimeError(
                f"could not allocate buffer: RESOURCE_EXHAUSTED; {allocation_size} bytes cannot be allocated"
            ) from None
        return HalBuffer(data, _heap_memory_type(memory_type), allowed_usage | _HEAP_MAPPING)

    def allocate_buffer_copy(
        self,
        memory_type: int,
        allowed_usage: int,
        device: HalDevice,
        buffer: Any,
        element_type: Optional[int] = None,
    ) -> "HalBuffer | HalBufferView":
        """A copy of `buffer` (an object with the buffer protocol, or an
        array of ml_dtypes' dtypes): a HalBufferView of its shape when
        `element_type` is given, else a HalBuffer of its bytes, as in
        iree.runtime. All but `element_type` are required and `device` is
        a HalDevice, as there (a TypeError otherwise). As there, `element_type` is any int (its low 32
        bits are the type): one HalElementType does not name is kept
        as given, the view's bytes computed from its bit width (IndexError
        when they are more than the buffer's, ValueError for 0 bits)."""
        from .system_setup import HalDevice

        if not isinstance(device, HalDevice):
            raise TypeError(
                f"allocate_buffer_copy(): incompatible function arguments: device takes a HalDevice, "
                f"not {type(device).__name__}"
            )
        memory_type = _heap_memory_type(_c_int(memory_type, "allocate_buffer_copy"))
        allowed_usage = _c_int(allowed_usage, "allocate_buffer_copy") | _HEAP_MAPPING
        if element_type is not None:
            element_type = _nanobind_int(element_type, "allocate_buffer_copy") & 0xFFFFFFFF
        array = _host_bytes(buffer)
        copy = HalBuffer(array.reshape(-1).view(np.uint8), memory_type, allowed_usage)
        if element_type is None:
            return copy
        view = HalBufferView.__new__(HalBufferView)
        view._packed_shape = None
        view._view_buffer(copy, list(array.shape), element_type, "Error allocating buffer_view")
        return view

    def allocate_host_staging_buffer_copy(self, device: HalDevice, initial_contents: Any) -> HalBuffer:
        """A host-visible copy of `initial_contents` (a buffer) for transfers."""
        array = _host_bytes(initial_contents)
        return HalBuffer(array.reshape(-1).view(np.uint8), _RESULT_MEMORY_TYPE, 3 | _HEAP_MAPPING)

    def import_host_allocation(self, buffer_obj: Any, memory_type: int, allowed_usage: int) -> HalBuffer:
        """A HalBuffer over `buffer_obj`'s memory, not copied: writes to
        either are seen by the other (C-contiguous buffers only)."""
        memory_type = _c_int(memory_type, "import_host_allocation")
        allowed_usage = _c_int(allowed_usage, "import_host_allocation")
        array = _host_bytes(buffer_obj, copy=False)
        return HalBuffer(array.reshape(-1).view(np.uint8), memory_type, allowed_usage | 3 | _HEAP_MAPPING)

    def query_buffer_compatibility(self, memory_type: int, allowed_usage: int, intended_usage: int,
                                   allocation_size: int) -> int:
        """BufferCompatibility bits, as IREE's CPU heap allocator answers:
        any buffer is allocatable, importable and exportable; device-visible
        memory is usable by queue transfers and dispatches its usage allows."""
        memory_type = _c_int(memory_type, "query_buffer_compatibility")
        allowed_usage = _c_int(allowed_usage, "query_buffer_compatibility")
        _c_int(intended_usage, "query_buffer_compatibility")
        _size(allocation_size, "query_buffer_compatibility")
        bits = BufferCompatibility
        compatibility = bits.ALLOCATABLE.value | bits.IMPORTABLE.value | bits.EXPORTABLE.value
        if MemoryType.DEVICE_VISIBLE.value & memory_type:
            if BufferUsage.TRANSFER.value & allowed_usage:
                compatibility |= bits.QUEUE_TRANSFER.value
            if BufferUsage.DISPATCH_STORAGE.value & allowed_usage:
                compatibility |= bits.QUEUE_DISPATCH.value
        return compatibility

    @property
    def has_statistics(self) -> bool:
        """False: irvm's allocator keeps no statistics (as an IREE build
        without IREE_STATISTICS_ENABLE)."""
        return False

    @property
    def statistics(self) -> dict:
        """Empty: no statistics are kept (has_statistics)."""
        return {}

    @property
    def formatted_statistics(self) -> str:
        """Empty: no statistics are kept (has_statistics)."""
        return ""

    def trim(self) -> None:
        """Nothing to release: irvm's buffers are freed when the last
        reference goes."""
