"""Parameter archives from numpy, as iree.runtime's ``io`` helpers make them
(``irvm.compat.io``, its names re-exported by ``irvm.compat``): ``save_archive_file`` writes an ``.irpa``
from a dict of arrays and ``SplatValue``s; ``parameter_index_add_numpy_ndarray``
adds an array with the tensor metadata (``TENSORv0:{json}``: dtype name and
shape) that ``parameter_index_entry_as_numpy_ndarray`` reads back. The
metadata is written as iree.runtime writes it, so archives made here and
there are the same bytes, and each reads the other's. bfloat16 and the
float8 types (ml_dtypes) are named too, where iree.runtime 3.13 refuses
them."""

from __future__ import annotations

import json
import os
from functools import reduce
from typing import Any, Sequence, Union

import numpy as np

from ._parameters import ParameterIndex


__all__ = [
    "SplatValue",
    "parameter_index_add_numpy_ndarray",
    "parameter_index_entry_as_numpy_flat_ndarray",
    "parameter_index_entry_as_numpy_ndarray",
    "save_archive_file",
]

# The metadata's version prefix, and the one iree-turbine wrote before it
# (read, never written).
_TENSOR_METADATA = "TENSORv0"
_TURBINE_METADATA = "PYTORCH"

# dtype names as iree.runtime's metadata spells them.
_NAMES = {
    np.dtype(np.float16): "float16",
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.int8): "int8",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.int16): "int16",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.int32): "int32",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.int64): "int64",
    np.dtype(np.uint64): "uint64",
    np.dtype(np.bool_): "bool",
    np.dtype(np.complex64): "complex64",
    np.dtype(np.complex128): "complex128",
}


def _ml_dtypes() -> dict:
    try:
        import ml_dtypes
    except ImportError:
        return {}
    names = ["bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"]
    return {np.dtype(getattr(ml_dtypes, n)): n for n in names if hasattr(ml_dtypes, n)}


def _dtype_name(dtype: np.dtype) -> str:
    name = _NAMES.get(dtype) or _ml_dtypes().get(dtype)
    if name is None:
        raise KeyError(f"Numpy dtype {dtype} not found.")
    return name


def _dtype_of(name: str) -> np.dtype:
    for dtype, n in list(_NAMES.items()) + list(_ml_dtypes().items()):
        if n == name:
            return dtype
    raise KeyError(f"Numpy dtype name {name!r} not found.")


class SplatValue:
    """`count` elements (an int or a shape) of one value, `pattern` (an array
    or numpy scalar of one element): a SPLAT entry of `save_archive_file`."""

    def __init__(self, pattern: Any, count: Union[Sequence[int], int]):
        size = int(np.prod(pattern.shape)) if isinstance(pattern, np.ndarray) else 1 if isinstance(pattern, np.generic) else len(pattern)
        if size != 1:
            raise ValueError("SplatValue requires an array of a single element")
        self.pattern = pattern
        elements = count if isinstance(count, int) else reduce(lambda a, b: a * b, count, 1)
        self.total_length = int(elements) * pattern.itemsize

    def __repr__(self) -> str:
        return f"SplatValue({self.pattern} of {self.total_length})"


def save_archive_file(entries: dict, file_path: Union[str, os.PathLike]) -> None:
    """Writes an ``.irpa`` archive of `entries` (key to a buffer, such as an
    array, or a SplatValue) at `file_path`."""
    index = ParameterIndex()
    for key, value in entries.items():
        if isinstance(value, SplatValue):
            index.add_splat(key, value.pattern, value.total_length)
        else:
            index.add_buffer(key, value)
    index.create_archive_file(os.fspath(file_path))


def _tensor_metadata(array: np.ndarray) -> str:
    dtype = array.dtype
    described = {
        "type": "Tensor",
        "dtype": _dtype_name(dtype),
        "shape": list(array.shape),
        "dtype_desc": {
            "class_name": type(dtype).__name__,
            "is_complex": bool(np.issubdtype(dtype, np.complexfloating)),
            "is_floating_point": bool(np.issubdtype(dtype, np.floating)),
            "is_signed": bool(np.issubdtype(dtype, np.signedinteger)),
            "itemsize": dtype.itemsize,
        },
    }
    return f"{_TENSOR_METADATA}:{json.dumps(described)}"


def parameter_index_add_numpy_ndarray(index: Any, name: str, array: np.ndarray) -> None:
    """Adds `array` to `index` as `name`, with metadata giving its dtype and
    shape."""
    metadata = _tensor_metadata(array)
    flat = array.copy() if array.ndim == 0 else np.ascontiguousarray(array).view(np.uint8)
    index.add_buffer(name, flat, metadata=metadata)


def parameter_index_entry_as_numpy_flat_ndarray(index_entry: Any) -> np.ndarray:
    """An entry's bytes as a flat uint8 array (a splat: its pattern)."""
    if index_entry.is_file:
        return np.frombuffer(index_entry.file_view, dtype=np.uint8)
    if index_entry.is_splat:
        return np.frombuffer(bytes(index_entry.splat_pattern), dtype=np.uint8).copy()
    raise ValueError(f"Unsupported ParameterIndexEntry: {index_entry}")


def parameter_index_entry_as_numpy_ndarray(index_entry: Any) -> np.ndarray:
    """An entry as the array its tensor metadata describes (ValueError when
    the metadata is missing or describes something else)."""
    text = bytes(index_entry.metadata).decode()
    version, sep, body = text.partition(":")
    if not sep:
        raise ValueError(
            f'Invalid metadata for parameter index entry "{index_entry.key}". '
            f'Expected format version prefix not found in "{version[:100]}".'
        )
    if version not in (_TENSOR_METADATA, _TURBINE_METADATA):
        raise ValueError(
            f'Unsupported metadata format version "{version}" for parameter index entry '
            f'"{index_entry.key}": Cannot convert to tensor'
        )
    try:
        described = json.loads(body)
        kind = described["type"]
        dtype_name = described["dtype"]
        shape = described["shape"]
    except (KeyError, TypeError, json.JSONDecodeError) as e:
        raise ValueError(f"Bad metadata for parameter entry {index_entry.key}") from e
    if kind != "Tensor":
        raise ValueError(f"Metadata for parameter entry {index_entry.key} is not a Tensor ('{kind}')")
    try:
        dtype = _dtype_of(dtype_name)
    except KeyError as e:
        raise ValueError(f"Unsupported dtype for parameter entry {index_entry.key}") from e
    try:
        shape = [int(d) for d in shape]
    except (TypeError, ValueError) as e:
        raise ValueError(f"Illegal shape for parameter entry {index_entry.key}") from e
    flat = parameter_index_entry_as_numpy_flat_ndarray(index_entry)
    return flat.view(dtype=dtype).reshape(shape)
