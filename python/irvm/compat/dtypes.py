"""numpy dtypes, their names, ABI types and HAL element types
(iree.runtime.dtypes): the same tables and lookups, with the same
KeyErrors for what they do not know."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from ._hal_types import HalElementType

__all__ = [
    "DTYPE_TO_ABI_TYPE",
    "DTypeInfo",
    "map_abi_type_to_dtype_info",
    "map_dtype_to_dtype_info",
    "map_dtype_to_hal_element_type",
    "map_name_to_dtype_info",
]


@dataclasses.dataclass(frozen=True)
class DTypeInfo:
    """A numpy dtype with its name, ABI type (`f32`, `i1`,
    `complex<f32>`) and HAL element type."""

    dtype: np.dtype
    name: str
    abi_type: str
    hal_type: HalElementType

    @property
    def is_complex(self) -> bool:
        return bool(np.issubdtype(self.dtype, np.complexfloating))

    @property
    def is_floating_point(self) -> bool:
        return bool(np.issubdtype(self.dtype, np.floating))

    @property
    def is_integer(self) -> bool:
        return bool(np.issubdtype(self.dtype, np.integer))

    @property
    def is_signed(self) -> bool:
        return bool(np.issubdtype(self.dtype, np.signedinteger))


# The dtypes numpy has itself, as iree.runtime lists them: (numpy type,
# name, ABI type, element type). Unsigned integers share the signed ones'
# ABI type.
_TABLE = (
    (np.float16, "float16", "f16", HalElementType.FLOAT_16),
    (np.float32, "float32", "f32", HalElementType.FLOAT_32),
    (np.float64, "float64", "f64", HalElementType.FLOAT_64),
    (np.int8, "int8", "i8", HalElementType.SINT_8),
    (np.uint8, "uint8", "i8", HalElementType.UINT_8),
    (np.int16, "int16", "i16", HalElementType.SINT_16),
    (np.uint16, "uint16", "i16", HalElementType.UINT_16),
    (np.int32, "int32", "i32", HalElementType.SINT_32),
    (np.uint32, "uint32", "i32", HalElementType.UINT_32),
    (np.int64, "int64", "i64", HalElementType.SINT_64),
    (np.uint64, "uint64", "i64", HalElementType.UINT_64),
    (np.bool_, "bool", "i1", HalElementType.BOOL_8),
    (np.complex64, "complex64", "complex<f32>", HalElementType.COMPLEX_64),
    (np.complex128, "complex128", "complex<f64>", HalElementType.COMPLEX_128),
)

_DTYPE_TO_INFO = {np.dtype(t): DTypeInfo(np.dtype(t), name, abi, hal) for t, name, abi, hal in _TABLE}
_NAME_TO_INFO = {info.name: info for info in _DTYPE_TO_INFO.values()}
_ABI_TYPE_TO_INFO = {
    info.abi_type: info for info in _DTYPE_TO_INFO.values() if not info.is_integer or info.is_signed
}

DTYPE_TO_ABI_TYPE: dict = {info.dtype: info.abi_type for info in _DTYPE_TO_INFO.values()}

# ml_dtypes' dtypes (when it is installed): element types only, as there.
_ML_DTYPE_NAMES = {
    "bfloat16": HalElementType.BFLOAT_16,
    "float8_e4m3fn": HalElementType.FLOAT_8_E4M3_FN,
    "float8_e4m3fnuz": HalElementType.FLOAT_8_E4M3_FNUZ,
    "float8_e5m2": HalElementType.FLOAT_8_E5M2,
    "float8_e5m2fnuz": HalElementType.FLOAT_8_E5M2_FNUZ,
    "float8_e8m0fnu": HalElementType.FLOAT_8_E8M0_FNU,
}


def _ml_dtype_element_types() -> dict:
    try:
        import ml_dtypes
    except ImportError:
        return {}
    return {np.dtype(getattr(ml_dtypes, n)): t for n, t in _ML_DTYPE_NAMES.items() if hasattr(ml_dtypes, n)}


def map_dtype_to_dtype_info(dtype: Any) -> DTypeInfo:
    """The DTypeInfo of `dtype` (KeyError for one not in the table, an
    ml_dtypes dtype too)."""
    dtype = np.dtype(dtype)
    try:
        return _DTYPE_TO_INFO[dtype]
    except KeyError:
        raise KeyError(f"Numpy dtype {dtype} not found.") from None


def map_name_to_dtype_info(name: str) -> DTypeInfo:
    """The DTypeInfo of a dtype name (`float32`, `bool`)."""
    try:
        return _NAME_TO_INFO[name]
    except KeyError:
        raise KeyError(f"Numpy dtype name {name!r} not found.") from None


def map_abi_type_to_dtype_info(abi_type: str) -> DTypeInfo:
    """The DTypeInfo of an ABI type (`f32`, `i8`: the signed integer)."""
    try:
        return _ABI_TYPE_TO_INFO[abi_type]
    except KeyError:
        raise KeyError(f"ABI type {abi_type!r} not found.") from None


def map_dtype_to_hal_element_type(dtype: Any) -> Optional[HalElementType]:
    """The HAL element type of `dtype` (ml_dtypes' too), or None for one
    without (or for what is no dtype)."""
    try:
        normalized = np.dtype(dtype)
    except TypeError:
        return None
    element_type = _ml_dtype_element_types().get(normalized)
    if element_type is not None:
        return element_type
    try:
        return map_dtype_to_dtype_info(normalized).hal_type
    except KeyError:
        return None
