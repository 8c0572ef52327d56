"""DeviceArray and asdevicearray (iree.runtime.array_interop): tensors on
the device, which for irvm is host memory."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.lib.mixins

from ._buffers import HalBufferView
from ._hal_types import BufferUsage, _element_type_of, HalElementType, MemoryType
from .system_setup import HalDevice


__all__ = ["asdevicearray", "DeviceArray"]


class DeviceArray(numpy.lib.mixins.NDArrayOperatorsMixin):
    """A tensor on the device. irvm's device memory is host memory, so the
    array is always host accessible: `to_host()` returns a numpy view of
    the VM's buffer (no copy). As in iree.runtime, one made with
    `implicit_host_transfer=False` (asdevicearray's default) refuses
    numpy's implicit conversions (`np.asarray`, arithmetic): ValueError,
    until `to_host()`; results of calls allow them. numpy functions
    (`np.sum`, `np.concatenate`) take the host array, where iree.runtime
    3.13 raises TypeError for every one but `np.shape` and `np.reshape`."""

    def __init__(self, device: Any, buffer_view: Any, implicit_host_transfer: bool = False, override_dtype=None):
        self._device = device
        if isinstance(buffer_view, HalBufferView) and buffer_view._packed_shape is not None:
            # Packed elements (INT_4): numpy has no dtype for them, and
            # iree.runtime's DeviceArray refuses them on the way to the
            # host (dtype, to_host, repr): ValueError, as here.
            self._array = None
            self._implicit_host_transfer = implicit_host_transfer
            self._transferred = False
            self._buffer_view = buffer_view
            return
        array = buffer_view._array if isinstance(buffer_view, HalBufferView) else np.asarray(buffer_view)
        if override_dtype is not None and np.dtype(override_dtype) != array.dtype:
            # As iree.runtime's: the elements converted (bools held as int8).
            array = array.astype(override_dtype)
        self._array = array
        self._implicit_host_transfer = implicit_host_transfer
        self._transferred = False
        self._buffer_view = buffer_view if isinstance(buffer_view, HalBufferView) else HalBufferView(array)

    def _transfer_to_host(self, implicit: bool) -> np.ndarray:
        if implicit and not self._implicit_host_transfer:
            raise ValueError(
                "DeviceArray cannot be implicitly transferred to the host: "
                "if necessary, do an explicit transfer via .to_host()"
            )
        if self._array is None:
            raise ValueError("Unsupported VM Buffer -> numpy dtype mapping")
        self._transferred = True
        return self._array

    @property
    def _host_array(self) -> np.ndarray:
        return self._transfer_to_host(True)

    def __array__(self, dtype=None, copy=None):
        host = self._transfer_to_host(True)
        if dtype is None:
            return host if not copy else host.copy()
        return host.astype(dtype, copy=bool(copy) if copy is not None else True)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.shape:
            return self.shape
        if func is np.reshape:
            return self.reshape(*args[1:], **kwargs)

        def host(x):
            # (Also inside the lists and tuples numpy functions take, as
            # np.concatenate's: else numpy dispatched here again, forever.)
            if isinstance(x, DeviceArray):
                return x.to_host()
            if isinstance(x, (list, tuple)):
                return type(x)(host(v) for v in x)
            return x

        return func(*[host(a) for a in args], **{k: host(v) for k, v in kwargs.items()})

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        def host(x):
            return x._transfer_to_host(True) if isinstance(x, DeviceArray) else x

        if kwargs.get("out") is not None:
            kwargs = dict(kwargs, out=tuple(host(o) for o in kwargs["out"]))
        return getattr(ufunc, method)(*[host(i) for i in inputs], **kwargs)

    def __repr__(self) -> str:
        return f"<IREE DeviceArray: shape={self.shape}, dtype={self.dtype}>"

    @property
    def is_host_accessible(self) -> bool:
        """Whether the array has been transferred (mapped) to the host."""
        return self._transferred

    def to_host(self) -> np.ndarray:
        return self._transfer_to_host(False)

    def _copy_to_host(self) -> np.ndarray:
        """A host copy of the elements, apart from the device's memory
        (iree.runtime's private path for memory the host cannot map, which
        its own tests and some callers use directly; irvm's device memory is
        host memory, so it is a plain copy)."""
        return self._transfer_to_host(False).copy()

    @property
    def dtype(self) -> np.dtype:
        if self._array is None:
            raise ValueError("Unsupported VM Buffer -> numpy dtype mapping")
        return self._array.dtype

    @property
    def shape(self) -> list[int]:
        if self._array is None:
            return list(self._buffer_view.shape)
        return list(self._array.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if self._array is None:
            if not self.shape:
                raise TypeError("len() of unsized object")
            return self.shape[0]
        return len(self._array)

    def astype(self, dtype, casting="unsafe", copy=True):
        """The elements as `dtype` (a numpy array); the array itself when
        it is of `dtype` already and `copy` is False."""
        if self.dtype == dtype and not copy:
            return self
        return self.to_host().astype(dtype, casting=casting, copy=copy)

    def reshape(self, *args) -> np.ndarray:
        return self.to_host().reshape(*args)

    def __iter__(self):
        return iter(self.to_host())

    def __getitem__(self, index):
        return self.to_host()[index]

    def __deepcopy__(self, memo):
        return self.to_host()

    def __reduce__(self):
        return (np.asarray, (self.to_host().copy(),))


def asdevicearray(device: HalDevice, a: Any, dtype=None, *, implicit_host_transfer: bool = False,
                  memory_type=MemoryType.DEVICE_LOCAL, allowed_usage=BufferUsage.DEFAULT,
                  element_type: Optional[int] = None) -> DeviceArray:
    """A DeviceArray of `a` (np.asarray's rules; a DeviceArray itself when
    no dtype is given), as iree.runtime makes it: its element type is the
    dtype's (ValueError for a dtype IREE has none for); `element_type`,
    `memory_type` and `allowed_usage` are ignored, as there."""
    if isinstance(a, DeviceArray):
        if dtype is None:
            return a
        a = a.to_host()
    array = np.asarray(a, dtype=dtype, order="C")
    mapped = _element_type_of(array.dtype)
    if mapped == HalElementType.OPAQUE_8:
        raise ValueError(f"Could not map dtype {array.dtype} to IREE element type")
    view = device.allocator.allocate_buffer_copy(
        memory_type=memory_type, allowed_usage=allowed_usage, device=device, buffer=array, element_type=mapped
    )
    return DeviceArray(device, view, implicit_host_transfer=implicit_host_transfer, override_dtype=array.dtype)
