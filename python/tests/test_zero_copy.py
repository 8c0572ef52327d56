"""The zero-copy rule, checked by address: inputs that are C-contiguous, of
the declared dtype and 64-byte aligned are used in place, others copied
once (copy=False refuses); a writable array used in place is a writable
buffer (the program's writes change it), a read-only one an immutable
buffer; results are arrays over the VM's buffers that keep them alive."""

import array
import gc
import mmap

import numpy as np
import pytest

import irvm
from conftest import DATA, MODELS, PYDATA


def aligned(n, dtype, misalign=0):
    """An n-element array of dtype whose data starts `misalign` bytes past a
    64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.zeros(n * itemsize + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + misalign
    a = raw[start : start + n * itemsize].view(dtype)
    assert a.ctypes.data % 64 == misalign
    return a


def address(a):
    return a.__array_interface__["data"][0]


@pytest.fixture
def passthrough():
    # pass_f16(a, b) returns b: the result is the buffer the VM was given.
    return irvm.load(DATA / "npy_types.vmfb").pass_f16


def test_an_aligned_contiguous_array_is_used_in_place(passthrough):
    b = aligned(3, np.float16)
    b[:] = [1, 2, 3]
    y = passthrough(b, b)
    assert address(y) == address(b)
    assert y.tolist() == [1, 2, 3]
    # A writable array is a writable buffer, so its result view is writable.
    assert y.flags.writeable
    y[0] = 5
    assert b[0] == 5


def test_a_read_only_array_is_used_in_place_as_an_immutable_buffer(passthrough):
    b = aligned(3, np.float16)
    b.flags.writeable = False
    y = passthrough(b, b)
    assert address(y) == address(b)
    assert not y.flags.writeable


def test_a_misaligned_array_is_copied_once_to_an_aligned_buffer(passthrough):
    b = aligned(3, np.float16, misalign=2)
    b[:] = [4, 5, 6]
    y = passthrough(b, b)
    assert address(y) != address(b)
    assert address(y) % 64 == 0
    assert y.tolist() == [4, 5, 6]


def test_a_strided_array_is_copied_in_c_order(passthrough):
    base = np.arange(6, dtype=np.float16)
    b = base[::2]
    assert not b.flags.c_contiguous
    y = passthrough(b, b)
    assert y.tolist() == [0, 2, 4]
    t = np.arange(6, dtype=np.float32).reshape(2, 3).T  # Fortran order
    m = irvm.load(MODELS / "dynamic.vmfb")
    np.testing.assert_array_equal(m.dynamic(t), t * t)


def test_copy_false_refuses_what_cannot_be_used_in_place(passthrough):
    ok = aligned(3, np.float16)
    assert address(passthrough(ok, ok, copy=False)) == address(ok)
    with pytest.raises(ValueError, match="not 64-byte aligned"):
        passthrough(ok, aligned(3, np.float16, misalign=2), copy=False)
    with pytest.raises(ValueError, match="not C-contiguous"):
        passthrough(ok, np.arange(6, dtype=np.float16)[::2], copy=False)


def test_results_keep_the_vm_buffer_alive_after_the_module_is_dropped():
    m = irvm.load(MODELS / "mlp.vmfb")
    y = m.predict(np.ones((4, 8), np.float32))
    del m
    gc.collect()
    # Fresh allocations would reuse freed memory: make some, then read y.
    junk = [irvm.load(MODELS / "mlp.vmfb").predict(np.zeros((4, 8), np.float32)) for _ in range(5)]
    np.testing.assert_allclose(y, [[4.1, 3.8, 4.3]] * 4, rtol=1e-6)
    assert y.flags.writeable  # the program's own buffer: mutable
    assert address(y) % 64 == 0
    del junk


def test_an_input_used_in_place_outlives_the_callers_reference(passthrough):
    b = aligned(3, np.float16)
    b[:] = [7, 8, 9]
    y = passthrough(b, b)
    del b
    gc.collect()
    assert y.tolist() == [7, 8, 9]  # the VM buffer holds the array


# Writes the i32 7 at byte 0 of its argument's buffer (hal.buffer.store).
POKE = b"""vm.module @poke version 0
vm.type !hal.buffer
vm.type !hal.buffer_view
vm.import @hal.buffer_view.buffer cconv "0r_r"
vm.import @hal.buffer.store cconv "0irIi_v"
vm.export @poke
vm.func @poke(%r0: !hal.buffer_view) -> () {
^bb0:
  %r1 = vm.call @hal.buffer_view.buffer(%r0)
  %i0 = vm.const.i32 7
  %i2:3 = vm.const.i64.zero
  %i1 = vm.const.i32 4
  vm.call @hal.buffer.store(%i0, %r1, %i2:3, %i1)
  vm.return
}
"""


def test_a_writable_input_used_in_place_is_written_by_the_program():
    poke = irvm.load(POKE).poke
    a = aligned(4, np.int32)
    address_before = address(a)
    poke(a)
    assert address(a) == address_before
    assert a.tolist() == [7, 0, 0, 0]


def test_a_read_only_input_used_in_place_is_immutable_to_the_program():
    poke = irvm.load(POKE).poke
    a = aligned(4, np.int32)
    a.flags.writeable = False
    with pytest.raises(irvm.PermissionDeniedError):
        poke(a)
    assert a.tolist() == [0, 0, 0, 0]


def test_a_copied_input_is_the_programs_to_write():
    # The caller's array is untouched.
    poke = irvm.load(POKE).poke
    b = aligned(4, np.int32, misalign=4)
    poke(b)
    assert b.tolist() == [0, 0, 0, 0]


# Copies `n` bytes from its first argument's buffer to its second's
# (hal.device.queue.copy).
COPY = b"""vm.module @copy version 0
vm.type i32
vm.type i64
vm.type !hal.buffer
vm.type !hal.buffer_view
vm.type !hal.device
vm.type !hal.fence
vm.import @hal.buffer_view.buffer cconv "0r_r"
vm.import @hal.devices.get cconv "0i_r"
vm.import @hal.fence.await cconv "0iICrD_i"
vm.import @hal.fence.create cconv "0rI_r"
vm.import @hal.device.queue.copy cconv "0rIrrrIrIII_v"
vm.export @copy
vm.func @copy(%r0: !hal.buffer_view, %r1: !hal.buffer_view, %i0:1: i64) -> () {
^bb0:
  %i2 = vm.const.i32.zero
  %i4:5 = vm.const.i64 -1
  %i6:7 = vm.const.i64.zero
  %r2 = vm.call @hal.buffer_view.buffer(%r0)
  %r3 = vm.call @hal.buffer_view.buffer(%r1)
  %r4 = vm.call @hal.devices.get(%i2)
  %r5 = vm.call @hal.fence.create(%r4, %i6:7)
  %r6 = vm.const.ref.zero
  vm.call @hal.device.queue.copy(%r4, %i4:5, %r6, %r5, %r2, %i6:7, %r3, %i6:7, %i0:1, %i6:7)
  vm.call.variadic.yieldable @hal.fence.await segments[65535, 65535, 1](%i2, %i4:5, %r5) -> ^bb1(%i3)
^bb1:
  vm.return
}
"""


@pytest.mark.parametrize("shift", [64, -64])
def test_a_copy_between_overlapping_views_of_one_array_moves_as_memmove(shift):
    # Two arguments used in place over the same memory: the hal copies
    # past its 8 MiB pieces as memmove does, in either direction.
    copy = irvm.load(COPY).copy
    n = 3 * (8 << 20) + 256
    x = aligned(n + 64, np.uint8)
    x[:] = (np.arange(n + 64) * 7 + np.arange(n + 64) // 251).astype(np.uint8)
    source, target = (0, 64) if shift > 0 else (64, 0)
    want = x.copy()
    want[target : target + n] = want[source : source + n].copy()
    copy(x[source : source + n], x[target : target + n], n)
    assert np.array_equal(x, want)


def aligned_resizable(make):
    """An object `make()` returns (a bytearray, an array.array) whose data
    starts at a 64-byte boundary, so that it is used in place."""
    tried = []
    for _ in range(1000):
        o = make()
        address = memoryview(o).cast("B")
        ptr = np.frombuffer(address, np.uint8).ctypes.data
        del address
        if ptr % 64 == 0:
            return o
        tried.append(o)
    pytest.skip("no 64-byte aligned allocation in 1000 tries")


def grow(o):
    o.extend(o[:1] * 100000)


def anonymous_mapping():
    m = mmap.mmap(-1, 4096)
    m[:4] = b"abcd"
    return m


@pytest.mark.parametrize(
    "make, take_away",
    [
        (lambda: aligned_resizable(lambda: bytearray(range(256)) * 16), grow),
        (lambda: aligned_resizable(lambda: array.array("i", range(1024))), grow),
        (anonymous_mapping, lambda o: o.close()),
    ],
    ids=["bytearray", "array", "mmap"],
)
@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read_only"])
def test_an_input_a_module_keeps_cannot_be_resized_or_unmapped_under_it(
    make, take_away, read_only
):
    # keep_input stores its argument's buffer view in a global. The input
    # is used in place, so its exporter must not move or free its bytes
    # while the module holds them: resizing a bytearray or an array.array,
    # or closing an mmap (also behind a memoryview the caller released),
    # left the module's global pointing at freed memory (a later `kept()`
    # returned an array over it; writing it crashed the process).
    m = irvm.load(PYDATA / "keep_input.vmfb")
    o = make()
    want = bytes(o)
    view = memoryview(o)
    passed = view.toreadonly() if read_only else view
    m.keep(passed)
    passed.release()
    view.release()
    with pytest.raises(BufferError):
        take_away(o)
    kept = m.kept()
    assert kept.tobytes() == want
    assert kept.flags.writeable != read_only
    # Once the module and the arrays over its buffer are gone, the object
    # is the caller's again.
    del m, kept
    gc.collect()
    take_away(o)
