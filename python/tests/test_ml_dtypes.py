"""bfloat16 and the float8 types: numpy arrays of ml_dtypes' dtypes are taken
as tensors of the matching HAL element type (used in place by the zero-copy
rule, through a uint view of their memory) and results of those types come
back as arrays of those dtypes, as iree.runtime 3.13 takes and gives them,
through irvm.load, host modules written in Python and irvm.compat (whose
scripts test_compat.py also runs on iree.runtime and compares). Expected
values are iree.runtime 3.13's (the .vmfb files: python/tests/data/ml_dtypes*,
each with its source and the iree-compile command)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import irvm
import irvm.compat
from conftest import PYDATA

md = pytest.importorskip("ml_dtypes")

# Each element type ml_dtypes gives numpy: the function of ml_dtypes.vmfb
# returning its argument, the dtype and the HAL element type.
IDENTITIES = [
    ("idbf", md.bfloat16, irvm.compat.HalElementType.BFLOAT_16),
    ("idf8", md.float8_e4m3fn, irvm.compat.HalElementType.FLOAT_8_E4M3_FN),
    ("id_e4m3fnuz", md.float8_e4m3fnuz, irvm.compat.HalElementType.FLOAT_8_E4M3_FNUZ),
    ("id_e5m2", md.float8_e5m2, irvm.compat.HalElementType.FLOAT_8_E5M2),
    ("id_e5m2fnuz", md.float8_e5m2fnuz, irvm.compat.HalElementType.FLOAT_8_E5M2_FNUZ),
    ("id_e8m0fnu", md.float8_e8m0fnu, irvm.compat.HalElementType.FLOAT_8_E8M0_FNU),
]


@pytest.fixture(scope="module")
def m():
    return irvm.load(PYDATA / "ml_dtypes.vmfb")


@pytest.fixture(scope="module")
def cpu():
    return irvm.load(PYDATA / "ml_dtypes_cpu.vmfb")


def aligned(values, dtype, misalign=0):
    """An array of `values` as `dtype` whose data starts `misalign` bytes
    past a 64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.zeros(len(values) * itemsize + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + misalign
    a = raw[start : start + len(values) * itemsize].view(dtype)
    a[:] = np.array(values, np.float32).astype(dtype)
    assert a.ctypes.data % 64 == misalign
    return a


@pytest.mark.parametrize("name,dtype,element_type", IDENTITIES, ids=[i[0] for i in IDENTITIES])
def test_arrays_of_each_ml_dtype_go_in_and_come_back(m, name, dtype, element_type):
    # Refused before ("cannot include dtype 'E' in a buffer"), and results
    # came back as uint8/uint16 arrays of the bits.
    x = np.array([1, 2], dtype)
    y = getattr(m, name)(x)
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.astype(np.float32), [1, 2])
    assert str(getattr(m, name).signature).count("tensor<2x") == 2


def test_computations_on_bfloat16_and_float8(m, cpu):
    y = m.tobf(np.array([1.5, -2, 3.14159, 1e10], np.float32))
    assert y.dtype == np.dtype(md.bfloat16)
    assert y.astype(np.float32).tolist() == [1.5, -2, 3.140625, 9999220736.0]
    y = m.fromf8(np.array([1.5, -2, 3.14159, 448], md.float8_e4m3fn))
    assert y.dtype == np.float32 and y.tolist() == [1.5, -2, 3.25, 448]
    # llvm-cpu: arith.addf on bf16, arith.mulf on f8E4M3FN.
    a = np.array([1.5, -2, 3.14159, 256], md.bfloat16)
    y = cpu.addbf(a, np.ones(4, md.bfloat16))
    assert y.dtype == np.dtype(md.bfloat16)
    assert y.astype(np.float32).tolist() == [2.5, -1, 4.125, 256]
    y = cpu.mulf8(np.array([1.5, -2, 3, 16], md.float8_e4m3fn), np.array([2, 3, 0.5, 16], md.float8_e4m3fn))
    assert y.dtype == np.dtype(md.float8_e4m3fn)
    assert y.astype(np.float32).tolist() == [3, -6, 1.5, 256]


def test_the_zero_copy_rule_holds_for_ml_dtypes(m):
    # An aligned, contiguous array is used in place: the identity's result
    # is the same memory, writable both ways.
    a = aligned([1.5, -2], md.bfloat16)
    y = m.idbf(a, copy=False)
    assert y.ctypes.data == a.ctypes.data and y.dtype == a.dtype
    y[0] = 7
    assert float(a[0]) == 7
    # Read-only: used in place as an immutable buffer.
    r = aligned([1, 2], md.float8_e5m2)
    r.flags.writeable = False
    y = m.id_e5m2(r)
    assert y.ctypes.data == r.ctypes.data and not y.flags.writeable
    # Misaligned: copied once, to an aligned buffer; copy=False refuses.
    b = aligned([3, 4], md.bfloat16, misalign=2)
    y = m.idbf(b)
    assert y.ctypes.data != b.ctypes.data and y.ctypes.data % 64 == 0
    assert y.astype(np.float32).tolist() == [3, 4]
    with pytest.raises(ValueError, match="not 64-byte aligned"):
        m.idbf(b, copy=False)
    # Strided: copied in C order.
    s = np.array([1.5, 9, -2, 9], md.bfloat16)[::2]
    assert m.idbf(s).astype(np.float32).tolist() == [1.5, -2]
    with pytest.raises(ValueError, match="not C-contiguous"):
        m.idbf(s, copy=False)


def test_the_array_given_stays_alive_while_the_vm_holds_it(m):
    import gc
    import weakref

    a = aligned([1.5, -2], md.bfloat16)
    base = weakref.ref(a.base)
    y = m.idbf(a)
    del a
    gc.collect()
    assert base() is not None
    assert y.astype(np.float32).tolist() == [1.5, -2]


def test_dtypes_are_checked_against_the_declaration(m):
    with pytest.raises(irvm.InvalidArgumentError, match=r"expects a 2 array of bfloat16 \(tensor<2xbf16>\), got a 2 array of float32"):
        m.idbf(np.array([1.5, -2], np.float32))
    with pytest.raises(irvm.InvalidArgumentError, match="expects a 2 array of float8_e4m3fn .* got a 2 array of float8_e5m2"):
        m.idf8(np.array([1, 2], md.float8_e5m2))
    # The bits as unsigned integers: the message says how to pass them.
    with pytest.raises(
        irvm.InvalidArgumentError,
        match=r"expects a 2 array of bfloat16 .* got a 2 array of uint16 \(a bf16 tensor takes an array of "
        r"ml_dtypes.bfloat16: pass its bits as `bits.view\(ml_dtypes.bfloat16\)`\)",
    ):
        m.idbf(np.array([1, 2], np.uint16))
    with pytest.raises(irvm.InvalidArgumentError, match="expects a 2 array of bfloat16 .* got a 1x2 array of bfloat16"):
        m.idbf(np.array([[1, 2]], md.bfloat16))


def test_lists_for_bfloat16_and_float8_tensors_become_those_arrays(m):
    # As for other dtypes (numpy's same_kind casting: floats rounded).
    y = m.idbf([1.5, 3.14159])
    assert y.dtype == np.dtype(md.bfloat16) and y.astype(np.float32).tolist() == [1.5, 3.140625]
    y = m.idf8((1, -2))
    assert y.dtype == np.dtype(md.float8_e4m3fn) and y.astype(np.float32).tolist() == [1, -2]


def test_host_modules_get_and_give_ml_dtypes_arrays():
    seen = []

    def bf(x):
        seen.append((x.dtype, x.astype(np.float32).tolist()))
        return (x.astype(np.float32) * 2).astype(md.bfloat16)

    def f8(x):
        seen.append((x.dtype, x.astype(np.float32).tolist()))
        return x[::-1].copy()

    ext = irvm.HostModule("pyml")
    ext.export("bf", "0r_r", bf)
    ext.export("f8", "0r_r", f8)
    m = irvm.load(ext, PYDATA / "ml_dtypes_host.vmfb")
    y = m.via_bf(np.array([1.5, 3.14159, -2, 1e10], np.float32))
    assert y.tolist() == [3, 6.28125, -4, 19998441472.0]
    y = m.via_f8(np.array([1.5, 3.14159, -2, 1e4], np.float32))
    assert y.tolist() == [10240, -2, 3, 1.5]
    assert seen == [
        (np.dtype(md.bfloat16), [1.5, 3.140625, -2, 9999220736.0]),
        (np.dtype(md.float8_e5m2), [1.5, 3, -2, 10240]),
    ]
    # A result of another element type fails the call, naming both.
    wrong = irvm.HostModule("pyml")
    wrong.export("bf", "0r_r", lambda x: x.astype(np.float32))
    wrong.export("f8", "0r_r", f8)
    with pytest.raises(irvm.InvalidArgumentError, match=r"expected bf16 \(22000010\) but have f32"):
        irvm.load(wrong, PYDATA / "ml_dtypes_host.vmfb").via_bf(np.ones(4, np.float32))


def test_compat_buffer_views_and_arrays_of_ml_dtypes():
    ireert = irvm.compat
    config = ireert.Config("local-sync")
    dev = config.device
    ctx = ireert.SystemContext(config=config)
    vm_module = ireert.VmModule.mmap(ctx.instance, str(PYDATA / "ml_dtypes.vmfb"))
    ctx.add_vm_module(vm_module)
    # The bits as uint16 with BFLOAT_16: a bf16 buffer view.
    bits = np.array([1.5, -2], md.bfloat16).view(np.uint16)
    bv = dev.allocator.allocate_buffer_copy(memory_type=ireert.MemoryType.DEVICE_LOCAL,
                                            allowed_usage=ireert.BufferUsage.DEFAULT, device=dev, buffer=bits,
                                            element_type=ireert.HalElementType.BFLOAT_16)
    assert bv.element_type == ireert.HalElementType.BFLOAT_16.value
    assert bv.map().asarray([2], md.bfloat16).astype(np.float32).tolist() == [1.5, -2]
    assert ireert.DeviceArray(dev, bv).dtype == np.dtype(md.bfloat16)
    y = ctx.modules.module.idbf(bv)
    assert y.dtype == np.dtype(md.bfloat16) and y.to_host().astype(np.float32).tolist() == [1.5, -2]
    # A float8 array made into a view takes its element type.
    d = ireert.asdevicearray(dev, [1.5, -2], dtype=md.float8_e4m3fn)
    assert d._buffer_view.element_type == ireert.HalElementType.FLOAT_8_E4M3_FN.value
    assert ctx.modules.module.idf8(d).dtype == np.dtype(md.float8_e4m3fn)
    # Through a VmVariantList: the result is a bf16 buffer view.
    args, out = ireert.VmVariantList(1), ireert.VmVariantList(1)
    args.push_ref(bv)
    ctx.vm_context.invoke(vm_module.lookup_function("idbf"), args, out)
    view = out.get_as_ref(0).deref(ireert.HalBufferView)
    assert view.element_type == ireert.HalElementType.BFLOAT_16.value
    assert ireert.DeviceArray(dev, view).to_host().astype(np.float32).tolist() == [1.5, -2]


WITHOUT_ML_DTYPES = """
import sys
sys.modules["ml_dtypes"] = None  # `import ml_dtypes` raises ImportError
import numpy as np
import irvm
m = irvm.load(sys.argv[1])
y = m.tobf(np.array([1.5, -2, 0, 1], np.float32))
print(y.dtype, [hex(v) for v in y.tolist()])
try:
    m.idbf([1.5, -2])
except irvm.InvalidArgumentError as e:
    print(e)
"""


def test_without_ml_dtypes_results_are_their_bits_and_lists_are_refused_by_name():
    # irvm depends on numpy only (iree.runtime requires ml_dtypes): without
    # it, a bf16 result is a uint16 array of its bits, and a list for a bf16
    # tensor is refused, naming the package.
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_ML_DTYPES, str(PYDATA / "ml_dtypes.vmfb")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "uint16 ['0x3fc0', '0xc000', '0x0', '0x3f80']"
    assert "bf16 is numpy's ml_dtypes.bfloat16: install the ml_dtypes package" in lines[1]
    assert "argument 0 (%input0: tensor<2xbf16>) of module.idbf" in lines[1]
