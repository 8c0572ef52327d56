"""The HAL's element types (and their numpy dtypes), memory types, buffer
usages, access and compatibility bits, with iree.runtime's values.

The enums behave as iree.runtime 3.13's (nanobind's) do: plain
`enum.Enum` classes, not ints. A member prints as `BufferUsage.DEFAULT`
(repr and str), is not equal to its value and does not hash as it,
converts with `int()`, pickles, and iterates in iree.runtime's order; the
bit sets (MemoryType, BufferUsage, MemoryAccess, BufferCompatibility) have
`|` and `&` with an int on the right, which give a plain int (no other
arithmetic). Functions taking one take an int too, as there."""

from __future__ import annotations

import enum
from typing import Any, Optional

import numpy as np


def _uint64_argument(function: str, owner: str, value: Any, bits: int = 64) -> int:
    """`value` as nanobind converts an argument declared `int` (an
    unsigned one of `bits` bits, 64 unless given): anything `int()` takes
    but a float, in range; otherwise the TypeError nanobind raises,
    naming `function`."""
    if not isinstance(value, float):
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            number = None
        if number is not None and 0 <= number < 1 << bits:
            return number
    owner_arg = "self, " if owner else ""
    invoked = f"{owner}, " if owner else ""
    raise TypeError(
        f"{function}(): incompatible function arguments. The following argument types are supported:\n"
        f"    1. {function}({owner_arg}arg: int, /) -> {'int' if owner else 'object'}\n\n"
        f"Invoked with types: {invoked}{type(value).__name__}"
    )


class _NanobindEnum(enum.Enum):
    """An enum as nanobind makes iree.runtime's: `Name.MEMBER` for repr
    and str, not an int (Linkage is one)."""

    __repr__ = enum.Enum.__str__
    __str__ = enum.Enum.__str__


class _HalEnum(_NanobindEnum):
    """A HAL enum as iree.runtime's: `int()` gives its value, no
    arithmetic."""

    def __int__(self) -> int:
        return self._value_


class _HalBits(_HalEnum):
    """A bit set as iree.runtime's: `member | int` and `member & int` are
    plain ints (the int on the right; `int | member` is a TypeError)."""

    def __or__(self, other: Any) -> int:
        return self._value_ | _uint64_argument("__or__", type(self).__name__, other)

    def __and__(self, other: Any) -> int:
        return self._value_ & _uint64_argument("__and__", type(self).__name__, other)


def _element_type_value(element_type: Any, function: str) -> int:
    """An element type given as iree.runtime takes one (a HalElementType or
    an int: an iree_hal_element_type_t, 32 bits), as an int."""
    return _uint64_argument(function, "", element_type, bits=32)


class HalElementType(_HalEnum):
    """IREE's HAL element types (numerical type in the top byte, bits below)."""

    NONE = 0x0
    OPAQUE_8 = 0x8
    OPAQUE_16 = 0x10
    OPAQUE_32 = 0x20
    OPAQUE_64 = 0x40
    BOOL_8 = 0x13000008
    INT_4 = 0x10000004
    INT_8 = 0x10000008
    INT_16 = 0x10000010
    INT_32 = 0x10000020
    INT_64 = 0x10000040
    SINT_4 = 0x11000004
    SINT_8 = 0x11000008
    SINT_16 = 0x11000010
    SINT_32 = 0x11000020
    SINT_64 = 0x11000040
    UINT_4 = 0x12000004
    UINT_8 = 0x12000008
    UINT_16 = 0x12000010
    UINT_32 = 0x12000020
    UINT_64 = 0x12000040
    FLOAT_16 = 0x21000010
    FLOAT_32 = 0x21000020
    FLOAT_64 = 0x21000040
    BFLOAT_16 = 0x22000010
    COMPLEX_64 = 0x23000040
    COMPLEX_128 = 0x23000080
    FLOAT_8_E4M3_FN = 0x25000008
    FLOAT_8_E4M3_FNUZ = 0x27000008
    FLOAT_8_E5M2 = 0x24000008
    FLOAT_8_E5M2_FNUZ = 0x26000008
    FLOAT_8_E8M0_FNU = 0x28000008

    @staticmethod
    def map_to_dtype(element_type: Any) -> np.dtype:
        """The numpy dtype of an element type (a HalElementType or an int),
        as iree.runtime maps it: bfloat16 and the float8 types are
        ml_dtypes' (ValueError when ml_dtypes is not installed); ValueError
        for types numpy has none for (INT_4, OPAQUE_*, NONE, unknown)."""
        value = _element_type_value(element_type, "map_to_dtype")
        dtype = _ELEMENT_TO_DTYPE.get(value)
        if dtype is not None:
            return np.dtype(dtype)
        ml_name = _ELEMENT_TO_ML_DTYPE.get(value)
        if ml_name is None:
            raise ValueError("Unsupported VM Buffer -> numpy dtype mapping")
        try:
            import ml_dtypes
        except ImportError:
            raise ValueError(
                f"{HalElementType(value).name} maps to ml_dtypes.{ml_name}: install the ml_dtypes package"
            ) from None
        return np.dtype(getattr(ml_dtypes, ml_name))

    @staticmethod
    def is_byte_aligned(element_type: Any) -> bool:
        """Whether elements take whole bytes."""
        bits = _element_type_value(element_type, "is_byte_aligned") & 0xFF
        return bool(bits) and bits % 8 == 0

    @staticmethod
    def dense_byte_count(element_type: Any) -> int:
        """Bytes one element takes."""
        return ((_element_type_value(element_type, "dense_byte_count") & 0xFF) + 7) // 8


_ELEMENT_TO_DTYPE = {
    HalElementType.INT_8: np.int8,
    HalElementType.INT_16: np.int16,
    HalElementType.INT_32: np.int32,
    HalElementType.INT_64: np.int64,
    HalElementType.SINT_8: np.int8,
    HalElementType.SINT_16: np.int16,
    HalElementType.SINT_32: np.int32,
    HalElementType.SINT_64: np.int64,
    HalElementType.UINT_8: np.uint8,
    HalElementType.UINT_16: np.uint16,
    HalElementType.UINT_32: np.uint32,
    HalElementType.UINT_64: np.uint64,
    HalElementType.BOOL_8: np.bool_,
    HalElementType.FLOAT_16: np.float16,
    HalElementType.FLOAT_32: np.float32,
    HalElementType.FLOAT_64: np.float64,
    HalElementType.COMPLEX_64: np.complex64,
    HalElementType.COMPLEX_128: np.complex128,
}

# Element types numpy has through the ml_dtypes package (as iree.runtime maps them).
# Each element type's name as IREE formats it (iree_hal_element_type_format:
# what a buffer view's serialized trace value names).
_ELEMENT_TYPE_NAMES = {
    HalElementType.OPAQUE_8: "*8",
    HalElementType.OPAQUE_16: "*16",
    HalElementType.OPAQUE_32: "*32",
    HalElementType.OPAQUE_64: "*64",
    HalElementType.INT_4: "i4",
    HalElementType.INT_8: "i8",
    HalElementType.INT_16: "i16",
    HalElementType.INT_32: "i32",
    HalElementType.INT_64: "i64",
    HalElementType.SINT_4: "si4",
    HalElementType.SINT_8: "si8",
    HalElementType.SINT_16: "si16",
    HalElementType.SINT_32: "si32",
    HalElementType.SINT_64: "si64",
    HalElementType.UINT_4: "ui4",
    HalElementType.UINT_8: "ui8",
    HalElementType.UINT_16: "ui16",
    HalElementType.UINT_32: "ui32",
    HalElementType.UINT_64: "ui64",
    HalElementType.BOOL_8: "i1",
    HalElementType.FLOAT_16: "f16",
    HalElementType.FLOAT_32: "f32",
    HalElementType.FLOAT_64: "f64",
    HalElementType.BFLOAT_16: "bf16",
    HalElementType.COMPLEX_64: "cf64",
    HalElementType.COMPLEX_128: "cf128",
    HalElementType.FLOAT_8_E5M2: "f8E5M2",
    HalElementType.FLOAT_8_E4M3_FN: "f8E4M3FN",
    HalElementType.FLOAT_8_E5M2_FNUZ: "f8E5M2FNUZ",
    HalElementType.FLOAT_8_E4M3_FNUZ: "f8E4M3FNUZ",
    HalElementType.FLOAT_8_E8M0_FNU: "f8E8M0FNU",
}

_ELEMENT_TO_ML_DTYPE = {
    HalElementType.BFLOAT_16: "bfloat16",
    HalElementType.FLOAT_8_E4M3_FN: "float8_e4m3fn",
    HalElementType.FLOAT_8_E4M3_FNUZ: "float8_e4m3fnuz",
    HalElementType.FLOAT_8_E5M2: "float8_e5m2",
    HalElementType.FLOAT_8_E5M2_FNUZ: "float8_e5m2fnuz",
    HalElementType.FLOAT_8_E8M0_FNU: "float8_e8m0fnu",
}

# (Keyed by value: an element type is given as a member or as an int.)
_ELEMENT_TO_DTYPE = {member.value: dtype for member, dtype in _ELEMENT_TO_DTYPE.items()}
_ELEMENT_TYPE_NAMES = {member.value: name for member, name in _ELEMENT_TYPE_NAMES.items()}
_ELEMENT_TO_ML_DTYPE = {member.value: name for member, name in _ELEMENT_TO_ML_DTYPE.items()}


def _element_type_trace_name(element_type: int) -> str:
    """An element type's name in a serialized trace value: IREE's name
    (`i4`), also for integers of widths HalElementType does not name (a
    program's `i2` result is `i2`, as iree.runtime names it); other types
    not named in hex."""
    element_type = int(element_type)
    name = _ELEMENT_TYPE_NAMES.get(element_type)
    if name is not None:
        return name
    prefix = {0x10: "i", 0x11: "si", 0x12: "ui"}.get(element_type >> 24)
    bits = element_type & 0xFF
    if prefix is not None and bits and not (element_type >> 8) & 0xFFFF:
        return f"{prefix}{bits}"
    return f"{element_type:08x}"


def _ml_dtype_or_none(element_type: HalElementType) -> Optional[np.dtype]:
    """ml_dtypes' dtype for a bfloat16 or float8 element type; None for
    other types or when ml_dtypes is not installed."""
    name = _ELEMENT_TO_ML_DTYPE.get(int(element_type))
    if name is None:
        return None
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(getattr(ml_dtypes, name))


def _element_type_of(dtype: np.dtype) -> HalElementType:
    """The element type of an array's dtype, as iree.runtime maps it
    (ml_dtypes' bfloat16 and float8 dtypes too); OPAQUE_8 for others."""
    element_type = _DTYPE_TO_ELEMENT.get(dtype)
    if element_type is not None:
        return element_type
    for value, name in _ELEMENT_TO_ML_DTYPE.items():
        if dtype.name == name and dtype == _ml_dtype_or_none(value):
            return HalElementType(value)
    return HalElementType.OPAQUE_8


_DTYPE_TO_ELEMENT = {
    np.dtype(np.int8): HalElementType.SINT_8,
    np.dtype(np.int16): HalElementType.SINT_16,
    np.dtype(np.int32): HalElementType.SINT_32,
    np.dtype(np.int64): HalElementType.SINT_64,
    np.dtype(np.uint8): HalElementType.UINT_8,
    np.dtype(np.uint16): HalElementType.UINT_16,
    np.dtype(np.uint32): HalElementType.UINT_32,
    np.dtype(np.uint64): HalElementType.UINT_64,
    np.dtype(np.bool_): HalElementType.BOOL_8,
    np.dtype(np.float16): HalElementType.FLOAT_16,
    np.dtype(np.float32): HalElementType.FLOAT_32,
    np.dtype(np.float64): HalElementType.FLOAT_64,
    np.dtype(np.complex64): HalElementType.COMPLEX_64,
    np.dtype(np.complex128): HalElementType.COMPLEX_128,
}


class MemoryType(_HalBits):
    """HAL memory types (accepted for compatibility; all memory is host memory)."""

    NONE = 0
    OPTIMAL = 1
    HOST_VISIBLE = 2
    HOST_COHERENT = 4
    HOST_CACHED = 8
    HOST_LOCAL = 70
    DEVICE_VISIBLE = 16
    DEVICE_LOCAL = 48


class BufferUsage(_HalBits):
    """HAL buffer usages (accepted for compatibility)."""

    NONE = 0
    TRANSFER_SOURCE = 1
    TRANSFER_TARGET = 2
    TRANSFER = 3
    DISPATCH_INDIRECT_PARAMETERS = 256
    DISPATCH_UNIFORM_READ = 512
    DISPATCH_STORAGE_READ = 1024
    DISPATCH_STORAGE_WRITE = 2048
    DISPATCH_STORAGE = 3072
    DISPATCH_IMAGE_READ = 4096
    DISPATCH_IMAGE_WRITE = 8192
    DISPATCH_IMAGE = 12288
    SHARING_EXPORT = 65536
    SHARING_REPLICATE = 131072
    SHARING_CONCURRENT = 262144
    SHARING_IMMUTABLE = 524288
    MAPPING_SCOPED = 16777216
    MAPPING_PERSISTENT = 33554432
    MAPPING_OPTIONAL = 67108864
    MAPPING_ACCESS_RANDOM = 134217728
    MAPPING_ACCESS_SEQUENTIAL_WRITE = 268435456
    MAPPING = 150994944
    DEFAULT = 3075


class MemoryAccess(_HalBits):
    """HAL memory access bits (accepted for compatibility)."""

    NONE = 0
    READ = 1
    WRITE = 2
    DISCARD = 4
    DISCARD_WRITE = 6
    ALL = 7


class BufferCompatibility(_HalBits):
    """HAL buffer compatibility bits (accepted for compatibility)."""

    NONE = 0
    ALLOCATABLE = 1
    IMPORTABLE = 2
    EXPORTABLE = 4
    QUEUE_TRANSFER = 1024
    QUEUE_DISPATCH = 2048
