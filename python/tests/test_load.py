"""irvm.load: modules from paths and bytes, linked in order; exports as
attributes and items with a signature; scalar, list and array arguments and
results; devices, engines and limits."""

import os
import pathlib

import numpy as np
import pytest

import irvm
from conftest import DATA, EXAMPLES, MODELS, PYDATA


def test_scalar_function_from_a_vmasm_path():
    m = irvm.load(str(EXAMPLES / "fib.vmasm"))
    assert m.fib(20) == 6765
    assert m["fib"](10) == 55
    assert m.fib.signature == "fib_example.fib(i32) -> (i32)"
    assert m.exports == ["fib"]
    assert m.name == "fib_example"
    assert "fib" in dir(m)


def test_paths_bytes_and_buffers_load_alike():
    path = MODELS / "mlp.vmfb"
    data = path.read_bytes()
    x = np.ones((4, 8), np.float32)
    want = irvm.load(path).predict(x)  # os.PathLike
    for source in (str(path), data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        np.testing.assert_array_equal(irvm.load(source).predict(x), want)


def test_tensor_signature_comes_from_the_declaration():
    m = irvm.load(MODELS / "mlp.vmfb")
    assert m.predict.signature == "module.predict(input0: tensor<4x8xf32>) -> (tensor<4x3xf32>)"
    assert repr(m.predict) == "<irvm.Function module.predict(input0: tensor<4x8xf32>) -> (tensor<4x3xf32>)>"


def test_mlp_result_matches_iree_run_module():
    # tests/models/mlp.expected: 4x3xf32=[4.1 3.8 4.3] four times.
    for path in (MODELS / "mlp.vmfb", MODELS / "embedded" / "mlp.vmfb", MODELS / "system" / "mlp.vmfb"):
        for device in ("local-task", "local-sync"):
            y = irvm.load(path, device=device).predict(np.ones((4, 8), np.float32))
            assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (4, 3)
            np.testing.assert_allclose(y, [[4.1, 3.8, 4.3]] * 4, rtol=1e-6)


def test_modules_link_in_order():
    # app_a imports lib_b.add and lib_b.widen: lib_b comes first.
    m = irvm.load(DATA / "lib_b.vmfb", DATA / "app_a.vmfb")
    assert m.main(21) == 42
    assert m["lib_b.add"](2, 3) == 5
    with pytest.raises(irvm.NotFoundError, match="lib_b"):
        irvm.load(DATA / "app_a.vmfb")


def test_lists_and_python_scalars_become_arrays_of_the_declared_type():
    m = irvm.load(MODELS / "add_i32.vmfb")
    y = m.add_i32([1, 2, 3, 4], np.array([10, 20, 30, 40], np.int32))
    assert y.dtype == np.int32
    assert y.tolist() == [11, 22, 33, 44]
    # A tensor<f32> from a Python float: 0-d.
    m = irvm.load(MODELS / "add.vmfb")
    y = m.add([[1, 2, 3], [4, 5, 6]], np.full((2, 3), 0.5, np.float32))
    np.testing.assert_array_equal(y, np.array([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]], np.float32))


def test_several_results_are_a_tuple():
    m = irvm.load(MODELS / "argmax_min.vmfb")
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = m.stats(x)
    assert isinstance(out, tuple) and len(out) == 3
    np.testing.assert_allclose(out[0], x.max(axis=1))
    np.testing.assert_allclose(out[1], x.min(axis=1))
    assert out[2].shape == () and float(out[2]) == pytest.approx(x.sum())


def test_scalar_arguments_typed_by_the_signature():
    m = irvm.load(MODELS / "loop.vmfb")
    y = m.loop(np.ones(4, np.float32), 3)
    assert y.shape == (4,)
    with pytest.raises(irvm.InvalidArgumentError, match="expects an integer"):
        m.loop(np.ones(4, np.float32), 3.5)


@pytest.mark.parametrize(
    "function, dtype",
    [
        ("add_i8", np.int8),
        ("add_i16", np.int16),
        ("add_i32", np.int32),
        ("add_i64", np.int64),
        ("add_f64", np.float64),
    ],
)
def test_element_types_in_and_out(function, dtype):
    m = irvm.load(DATA / "npy_types.vmfb")
    shape = (2, 2) if function == "add_i8" else (3,)
    a = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    y = m[function](a, a)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, a + a)


def test_booleans_and_halves():
    m = irvm.load(DATA / "npy_types.vmfb")
    np.testing.assert_array_equal(m["not"](np.array([True, False, True, False])), [False, True, False, True])
    h = np.array([1.5, -2.0, 0.25], np.float16)
    y = m.pass_f16(h, h)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, h)


def test_scalar_results_of_each_type():
    i32, i64, f32, f64 = irvm.load(DATA / "npy_types.vmfb").scalars(7)
    assert [type(v) for v in (i32, i64, f32, f64)] == [int, int, float, float]


def test_dynamic_shapes_and_empty_tensors():
    m = irvm.load(MODELS / "dynamic.vmfb")
    assert m.dynamic.signature.startswith("module.dynamic(input0: tensor<?x?xf32>)")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(m.dynamic(x), x * x)
    assert m.dynamic(np.zeros((0, 3), np.float32)).shape == (0, 3)


def test_engines_give_the_same_results():
    results = {e: irvm.load(EXAMPLES / "fib.vmasm", engine=e).fib(25) for e in ("interp", "jit", "auto")}
    assert set(results.values()) == {75025}
    with pytest.raises(ValueError, match="unknown engine"):
        irvm.load(EXAMPLES / "fib.vmasm", engine="fast")


def test_fuel_bounds_each_call():
    m = irvm.load(EXAMPLES / "fib.vmasm", fuel=1000)
    assert m.fib(5) == 5
    assert m.fib(5) == 5  # the budget is per call
    with pytest.raises(irvm.ResourceExhaustedError) as e:
        m.fib(25)
    assert e.value.status == "RESOURCE_EXHAUSTED"
    assert m.fib(5) == 5


def test_timeout_bounds_each_call():
    m = irvm.load(DATA / "limits.vmfb", timeout=0.2)
    with pytest.raises(irvm.DeadlineExceededError) as e:
        m.spin()
    assert isinstance(e.value, TimeoutError)
    assert e.value.status == "DEADLINE_EXCEEDED"


def test_max_memory_bytes_bounds_allocations_and_inputs():
    m = irvm.load(DATA / "limits.vmfb", max_memory_bytes=1 << 20)
    assert m.alloc(1000) == 1000
    with pytest.raises(irvm.ResourceExhaustedError):
        m.alloc(2 << 20)
    mlp = irvm.load(MODELS / "dynamic.vmfb", max_memory_bytes=1 << 16)
    with pytest.raises(irvm.ResourceExhaustedError, match="max_memory_bytes"):
        mlp.dynamic(np.zeros((256, 256), np.float32))


def test_a_module_read_into_memory_counts_against_max_memory_bytes():
    # dynamic.vmfb (6,522 bytes) is read into memory: the budget counts it.
    with pytest.raises(
        irvm.ResourceExhaustedError,
        match=r"module 'module' does not fit the memory budget: .*needs 6522 more bytes",
    ):
        irvm.load(MODELS / "dynamic.vmfb", max_memory_bytes=5000)
    # From bytes (used in place, kept alive by the module) or a bytearray
    # (copied): held in memory all the same.
    data = (MODELS / "dynamic.vmfb").read_bytes()
    for source in (data, bytearray(data)):
        with pytest.raises(irvm.ResourceExhaustedError, match="does not fit the memory budget"):
            irvm.load(source, max_memory_bytes=5000)


def test_other_devices_are_refused():
    with pytest.raises(irvm.NotFoundError, match="cuda"):
        irvm.load(MODELS / "mlp.vmfb", device="cuda")


def test_parameters_from_an_archive():
    run = DATA / "params" / "run"
    m = irvm.load(run / "m.vmfb", parameters={"model": run / "wb.irpa", "": run / "wb.safetensors"})
    y = m.main(np.array([1, 2, 3, 4], np.float32))
    # x * w + b with w = [1.5, 2.5, -3, 4], b = [0.25, 0.5, 0.75, 1].
    np.testing.assert_allclose(y, [1.75, 5.5, -8.25, 17])
    with pytest.raises(irvm.NotFoundError, match="parameters="):
        irvm.load(run / "m.vmfb")


def test_an_empty_archive_is_called_empty(tmp_path):
    # Bytes are told by their first bytes, which an empty archive has none
    # of; a file by its extension. (Both read as "Safetensors archive: file
    # truncated" or "not enough bytes for a header".)
    run = DATA / "params" / "run"
    with pytest.raises(irvm.InvalidArgumentError, match=r"in-memory archive 0 is empty \(0 bytes\): no .irpa, .gguf or .safetensors"):
        irvm.load(run / "m.vmfb", parameters=b"")
    for name in ("empty.irpa", "empty.safetensors", "empty.gguf"):
        (tmp_path / name).write_bytes(b"")
        extension = name.split(".")[1]
        with pytest.raises(irvm.InvalidArgumentError, match=rf"the archive is empty \(0 bytes\), so no .{extension} archive"):
            irvm.load(run / "m.vmfb", parameters=tmp_path / name)


def test_lists_buffers_and_null_refs_as_results():
    m = irvm.load(DATA / "ref_results.vmasm")
    assert m.lst() == [0, 42, 0]
    assert m.fl() == [0.0, 1.5]
    nested = m.nested()
    assert nested[0] == [0, 7, 0, 0]
    assert nested[1].dtype == np.uint8 and nested[1].tolist() == [1, 2, 3, 4]
    assert not nested[1].flags.writeable  # rodata of the module
    assert nested[2] == -5 and nested[3] is None
    assert m.nul() is None
    assert m.bufs() == [None, None]
    assert m.empty() == []
    b = m.buf()
    del m
    assert b.tolist() == [1, 2, 3, 4]  # keeps the module's rodata alive


# Lists in and out as they are: a variant list that holds itself, and the
# identity of a !vm.list<?>.
SELF_LISTS = b"""vm.module @self_lists version 0
vm.type i32
vm.type !vm.list<?>
vm.export @selfish
vm.func @selfish() -> (!vm.list<?>) {
^bb0:
  %i0 = vm.const.i32 1
  %i1 = vm.const.i32 0
  %r0 = vm.list.alloc %i0 : !vm.list<?>
  vm.list.resize %r0, %i0
  vm.list.set.ref %r0, %i1, %r0
  vm.return %r0
}
vm.export @same
vm.func @same(%r0: !vm.list<?>) -> (!vm.list<?>) {
^bb0:
  vm.return %r0
}
"""


def test_lists_that_hold_themselves_or_nest_deep_neither_crash_nor_recurse():
    # Each nesting level recursed: a result list holding itself, or an
    # argument list holding itself, overflowed the stack (a segfault of
    # the whole process); so did a chain of 100,000 nested lists.
    m = irvm.load(SELF_LISTS)
    r = m.selfish()
    assert len(r) == 1 and r[0] is r  # the VM's cycle, as Python lists
    loop = [1]
    loop.append([2, loop])
    with pytest.raises(irvm.InvalidArgumentError, match="argument 0 of self_lists.same: the list holds itself"):
        m.same(loop)
    deep = [7]
    for _ in range(100_000):
        deep = [deep]
    back = m.same(deep)
    for _ in range(100_000):
        back = back[0]
    assert back == [7]
    # A list met twice (not a cycle) is one VM list, so one Python list.
    shared = [1, 2]
    out = m.same([shared, (shared, shared)])
    assert out == [[1, 2], [[1, 2], [1, 2]]] and out[0] is out[1][0] is out[1][1]


# Returns its buffer view as is (no declared tensor type: any element type).
IDENTITY = b"""vm.module @identity version 0
vm.type !hal.buffer
vm.type !hal.buffer_view
vm.import @hal.buffer_view.buffer cconv "0r_r"
vm.export @same
vm.func @same(%r0: !hal.buffer_view) -> (!hal.buffer_view) {
^bb0:
  vm.return %r0
}
"""


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
        np.float16, np.float32, np.float64, np.complex64, np.complex128,
    ],
)
def test_every_numpy_dtype_iree_has_goes_in_and_out(dtype):
    m = irvm.load(IDENTITY)
    x = (np.arange(12).reshape(3, 4) % 2 == 0) if dtype is np.bool_ else np.arange(12).reshape(3, 4).astype(dtype)
    y = m.same(x)
    assert y.dtype == np.dtype(dtype) and y.shape == (3, 4)
    np.testing.assert_array_equal(y, x)


def test_big_endian_and_object_arrays_are_refused():
    m = irvm.load(IDENTITY)
    with pytest.raises(irvm.InvalidArgumentError, match="big-endian"):
        m.same(np.arange(4, dtype=">i4"))
    with pytest.raises(irvm.InvalidArgumentError, match="unsupported element format 'O'"):
        m.same(np.array([object()]))


def test_loading_the_same_module_again_reuses_it_per_process_safely():
    # A second load of equal bytes (path or bytes) reuses the module's
    # lowered functions and its llvm-cpu library; each load is still its
    # own context, and dropping one leaves the others working.
    path = MODELS / "embedded" / "mlp.vmfb"
    x = np.ones((4, 8), np.float32)
    loads = [irvm.load(path), irvm.load(path.read_bytes()), irvm.load(str(path))]
    for m in loads:
        np.testing.assert_allclose(m.predict(x), [[4.1, 3.8, 4.3]] * 4, rtol=1e-6)
    del loads[0]
    for m in loads:
        np.testing.assert_allclose(m.predict(x * 0), [[0.1, 0.0, 0.3]] * 4, rtol=1e-6, atol=1e-7)


# Takes a !vm.list of variants: its size, item 0 as i64, and the list back.
LISTS = b"""vm.module @lists version 0
vm.type i32
vm.type !vm.list<!vm.opaque>
vm.export @info
vm.func @info(%r0: !vm.list<!vm.opaque>) -> (i32, i64, !vm.list<!vm.opaque>) {
^bb0:
  %i0 = vm.list.size %r0
  %i1 = vm.const.i32.zero
  %i2:3 = vm.list.get.i64 %r0, %i1
  vm.return %i0, %i2:3, %r0
}
"""


def test_python_lists_are_vm_lists_for_list_parameters():
    m = irvm.load(LISTS)
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    size, first, back = m.info([1 << 40, 2.5, [3, None], a, None, True])
    assert size == 6 and first == 1 << 40
    assert back[:3] == [1 << 40, 2.5, [3, None]]
    np.testing.assert_array_equal(back[3], a)
    assert back[3].dtype == np.int16
    assert back[4] is None and back[5] == 1
    assert m.info((7,))[:2] == (1, 7)
    assert m.info([7])[2] == [7]
    with pytest.raises(irvm.InvalidArgumentError, match="argument 0"):
        m.info([object()])


def test_a_shared_library_path_is_a_dynamic_host_module():
    # The conformance suite's async_ops runs this way (test_conformance.py);
    # a library that is not there is a clear error naming it.
    with pytest.raises(irvm.InvalidArgumentError, match="host module '/nonexistent/libnothing.so'"):
        irvm.load("/nonexistent/libnothing.so", DATA / "fib.vmfb")


def test_module_bytes_are_used_without_a_copy():
    import sys

    import irvm.compat  # noqa: F401 (irvm.compat below)

    # Bytes no other test loads (trailing bytes after the module are
    # ignored), so the module made of them holds this very object.
    data = (DATA / "fib.vmfb").read_bytes() + b"test_module_bytes_are_used_without_a_copy"
    before = sys.getrefcount(data)
    m = irvm.load(data)
    assert m.fib(10) == 55
    assert sys.getrefcount(data) == before + 1
    # A mutable buffer is copied: the module must not change under the VM.
    mutable = bytearray(data + b", mutable")
    before = sys.getrefcount(mutable)
    assert irvm.load(mutable).fib(10) == 55
    assert sys.getrefcount(mutable) == before
    # irvm.compat's wrap_buffer passes bytes through: the VmModule holds
    # them, and so does the module irvm read from them (not a copy).
    data2 = data + b", compat"
    before = sys.getrefcount(data2)
    vm_module = irvm.compat.VmModule.wrap_buffer(irvm.compat.VmInstance(), data2)
    assert sys.getrefcount(data2) == before + 2
    del vm_module


def test_results_have_numpys_plain_dtypes():
    m = irvm.load(str(MODELS / "add.vmfb"))
    y = m.add(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    assert repr(y.dtype) == "dtype('float32')"
    assert memoryview(y).format == "f"
    assert memoryview(y).tolist() == [[2.0] * 3] * 2


def test_python_data_follows_numpy_same_kind_casting():
    m = irvm.load(MODELS / "add_i32.vmfb", device="local-sync")
    a = np.array([1, 2, 3, 4], np.int32)
    # Integers (and bools) become int32; nothing is truncated silently.
    assert m.add_i32([10, 20, 30, 40], a).tolist() == [11, 22, 33, 44]
    assert m.add_i32((True, False, True, False), a).tolist() == [2, 2, 4, 4]
    with pytest.raises(irvm.InvalidArgumentError, match=r"argument 0 \(%input0: tensor<4xi32>\) of module.add_i32: "
                       r"a list of float64 values cannot be made int32 without losing them "
                       r"\(numpy's same_kind casting\)") as e:
        m.add_i32([1.5, 2.5, 3.7, -4.9], a)
    assert isinstance(e.value, ValueError)
    with pytest.raises(irvm.InvalidArgumentError, match="argument 1 .* a list of float64 values"):
        m.add_i32(a, [1, 2, 3, 4.0])
    with pytest.raises(irvm.InvalidArgumentError, match="do not all fit in int32"):
        m.add_i32([2**40, 2, 3, 4], a)
    with pytest.raises(irvm.InvalidArgumentError, match="do not all fit in int32"):
        m.add_i32([-(2**31) - 1, 2, 3, 4], a)
    # Integers to floats: allowed (same kind or safe).
    mlp = irvm.load(MODELS / "mlp.vmfb", device="local-sync")
    ints = [[1] * 8] * 4
    np.testing.assert_array_equal(mlp.predict(ints), mlp.predict(np.ones((4, 8), np.float32)))


def test_max_memory_bytes_adds_up_the_inputs_of_a_call():
    a = np.ones(4096, np.float32)  # 16 KiB: one fits in 24000 bytes, two do not
    m = irvm.load(PYDATA / "long_vmvx.vmfb", device="local-sync", max_memory_bytes=24000)
    with pytest.raises(
        irvm.ResourceExhaustedError,
        match=r"argument 1 \(%input1: tensor<4096xf32>\) of module.add_wide: the inputs add up to "
        r"32768 bytes with this one's 16384, more than max_memory_bytes \(24000\)",
    ):
        m.add_wide(a, a)
    # One input over the whole budget, refused before it is copied: the
    # budget must hold the module first (read into memory, it counts), so
    # the small dynamic.vmfb rather than long_vmvx.vmfb (20 KiB with its
    # executable).
    with pytest.raises(irvm.ResourceExhaustedError, match="an input of 16384 bytes, more than"):
        irvm.load(MODELS / "dynamic.vmfb", device="local-sync", max_memory_bytes=16000).dynamic(
            np.ones((64, 64), np.float32)
        )
    # Results Python keeps are not counted once returned: ten calls keep
    # 160 KiB of results under a 40000-byte limit.
    roomy = irvm.load(PYDATA / "long_vmvx.vmfb", device="local-sync", max_memory_bytes=40000)
    kept = [roomy.add_wide(a, a) for _ in range(10)]
    assert all(k[0] == 2 for k in kept)


def test_modules_functions_and_host_modules_can_be_weakly_referenced():
    # Caches keyed by weak references (weakref.WeakKeyDictionary,
    # weakref.finalize) work with irvm's objects; iree.runtime 3.13's
    # VmModule and VmContext refuse a weak reference.
    import gc
    import weakref

    m = irvm.load(str(EXAMPLES / "fib.vmasm"))
    f = m.fib
    host = irvm.HostModule("weak")
    refs = [weakref.ref(o) for o in (m, f, host)]
    assert [r() for r in refs] == [m, f, host]
    cache = weakref.WeakKeyDictionary({m: "compiled"})
    assert cache[m] == "compiled"
    del m, f, host
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    assert len(cache) == 0
