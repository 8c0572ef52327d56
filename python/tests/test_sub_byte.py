"""Sub-byte tensors (i4, i2, ui4: packed in the VM as IREE packs them,
two i4 to a byte) through the native `irvm` API: results come out as their
elements unpacked one per byte (a copy), arguments go in as one element
per item, checked against the type's range and packed. The module is
tests/data/subbyte/io.vmfb (its .mlir beside it); irvm.compat's sub-byte
views are compared with iree.runtime in test_compat.py
("sub_byte_tensors")."""

import numpy as np
import pytest

import irvm
from conftest import DATA

IO = DATA / "subbyte" / "io.vmfb"


@pytest.fixture(scope="module")
def io():
    return irvm.load(IO)


def test_sub_byte_results_are_their_elements_unpacked(io):
    # Before: OutOfRangeError ("a result's 2-byte buffer is shorter than
    # its 4xi4 shape needs"): the result was sized one byte per element.
    got = io.narrow_i4(np.array([1, 2, -3, 4], np.int8))
    assert got.dtype == np.int8 and got.tolist() == [1, 2, -3, 4]
    # i2 sign-extended, ui4 unsigned.
    assert io.narrow_i2(np.array([0, 1, -2, -1], np.int8)).tolist() == [0, 1, -2, -1]
    ui4 = io.same_ui4(np.array([1, 2, 15, 4], np.uint8))
    assert ui4.dtype == np.uint8 and ui4.tolist() == [1, 2, 15, 4]
    # 2-D, with i4's wrapping arithmetic (7 + 1 is -8).
    total = io.add_i4(np.array([[7, 1], [-8, 3]], np.int8), np.array([[1, 1], [-1, 4]], np.int8))
    assert total.shape == (2, 2) and total.tolist() == [[-8, 2], [7, 7]]


def test_a_sub_byte_result_is_a_copy_that_keeps_its_element_type(io):
    got = io.narrow_i4(np.array([1, 2, -3, 4], np.int8))
    got[0] = 5
    assert got.tolist() == [5, 2, -3, 4]
    # The element type and the packed bytes stay reachable (irvm.compat
    # views them as iree.runtime does): 1, 2, -3, 4 is 0x21 0x4D.
    base = got.base
    while not hasattr(base, "_packed"):
        base = base.obj if isinstance(base, memoryview) else base.base
    assert base._element_type == 0x10000004
    assert bytes(base._packed) == bytes([0x21, 0x4D])


def test_sub_byte_arguments_are_packed_as_iree_packs_them(io):
    # Before: the int8 array's 4 bytes were passed as the 4xi4 view's
    # buffer and the program read the first two: 1, 0, 2, 0.
    got = io.widen_i4(np.array([1, 2, -3, 4], np.int8))
    assert got.dtype == np.int8 and got.tolist() == [1, 2, -3, 4]
    # Lists, and strided arrays, are elements too.
    assert io.widen_i4([1, 2, -3, 4]).tolist() == [1, 2, -3, 4]
    strided = np.array([1, 9, 2, 9, -3, 9, 4, 9], np.int8)[::2]
    assert io.widen_i4(strided).tolist() == [1, 2, -3, 4]
    assert io.widen_i2(np.array([0, 1, -2, -1], np.int8)).tolist() == [0, 1, -2, -1]
    # Signless i4 takes [-8, 15], as IREE's tools bound signless i8 by
    # [-128, 255]: 15 is the bits 0xF, -1.
    assert io.widen_i4(np.array([-8, 15, 0, 7], np.int8)).tolist() == [-8, -1, 0, 7]
    # A result goes back in as it came out.
    assert io.same_i4(io.narrow_i4(np.array([1, 2, -3, 4], np.int8))).tolist() == [1, 2, -3, 4]
    fortran = np.asfortranarray(np.array([[1, 2], [3, 4]], np.int8))
    assert io.add_i4(fortran, np.zeros((2, 2), np.int8)).tolist() == [[1, 2], [3, 4]]


def test_sub_byte_elements_out_of_range_are_refused_by_index(io):
    with pytest.raises(irvm.InvalidArgumentError, match=r"element 1 \(16\) does not fit in i4 \(range \[-8, 15\]\)"):
        io.widen_i4(np.array([0, 16, 0, 0], np.int16).astype(np.uint8))
    with pytest.raises(irvm.InvalidArgumentError, match=r"element 2 \(-1\) does not fit in ui4 \(range \[0, 15\]\)"):
        io.same_ui4(np.array([0, 1, -1, 3], np.int8))
    with pytest.raises(irvm.InvalidArgumentError, match=r"element 0 \(-9\) does not fit in i4"):
        io.widen_i4(np.array([-9, 0, 0, 0], np.int8))
    # Elements that are not integers, or of another width, are refused as
    # for any other type.
    with pytest.raises(irvm.InvalidArgumentError, match="expects a 4 array of int8"):
        io.widen_i4(np.array([1, 2, 3, 4], np.float32))
    with pytest.raises(irvm.InvalidArgumentError, match="expects a 4 array of int8"):
        io.widen_i4(np.array([1, 2, 3], np.int8))


def test_a_sub_byte_argument_cannot_be_used_in_place(io):
    with pytest.raises(ValueError, match="copy=False.*i4 elements are packed 2 to a byte"):
        io.widen_i4(np.array([1, 2, -3, 4], np.int8), copy=False)


def test_compat_asarray_of_a_sub_byte_result_stays_in_its_bytes():
    # iree.runtime 3.13 reads past the 2 mapped bytes of a 4 x i4 result
    # for asarray([4], int8); irvm.compat refuses, naming the sizes.
    import irvm.compat as ireert

    vm = ireert.load_vm_flatbuffer_file(str(IO), driver="local-task")
    view = vm.narrow_i4(np.array([1, 2, -3, 4], np.int8))._buffer_view
    mapped = view.map()
    assert bytes(mapped) == bytes([0x21, 0x4D])
    with pytest.raises(ValueError, match="4 elements of int8 need 4 bytes; the mapped memory has 2"):
        mapped.asarray([4], np.dtype(np.int8))


def test_ml_dtypes_sub_byte_arrays_are_elements_of_sub_byte_arguments(io):
    # Before: InvalidArgumentError "cannot include dtype 'a' in a buffer"
    # (numpy cannot export ml_dtypes' int4 through the buffer protocol).
    ml_dtypes = pytest.importorskip("ml_dtypes")
    int4 = np.array([1, 2, -3, 4], ml_dtypes.int4)
    got = io.same_i4(int4)
    # Results stay the unpacked int8 copies (documented), and go back in.
    assert got.dtype == np.int8 and got.tolist() == [1, 2, -3, 4]
    assert io.widen_i4(int4).tolist() == [1, 2, -3, 4]
    # ml_dtypes keeps int4(-3) as the byte 0x0D: its low bits are the
    # element, sign-extended; bits above them are not read.
    assert int4.view(np.uint8).tolist() == [1, 2, 13, 4]
    assert io.widen_i4(np.array([0x0D, 0xF3, 0x18, 0x87], np.uint8).view(ml_dtypes.int4)).tolist() == [-3, 3, -8, 7]
    assert io.same_ui4(np.array([1, 2, 15, 4], ml_dtypes.uint4)).tolist() == [1, 2, 15, 4]
    assert io.widen_i2(np.array([0, 1, -2, -1], ml_dtypes.int2)).tolist() == [0, 1, -2, -1]
    # Strided and 2-D arrays, and uint2 for i4 (any sub-byte integers, as
    # int8 arrays are taken for i2).
    assert io.widen_i4(np.array([1, 9, 2, 9, -3, 9, 4, 9], ml_dtypes.int4)[::2]).tolist() == [1, 2, -3, 4]
    grid = np.array([[7, 1], [-8, 3]], ml_dtypes.int4)
    assert io.add_i4(grid, np.array([[1, 1], [-1, 4]], ml_dtypes.int4)).tolist() == [[-8, 2], [7, 7]]
    assert io.widen_i4(np.array([0, 1, 2, 3], ml_dtypes.uint2)).tolist() == [0, 1, 2, 3]
    if hasattr(ml_dtypes, "int1"):  # (ml_dtypes 0.5 and later)
        assert io.widen_i4(np.array([-1, 0, -1, 0], ml_dtypes.int1)).tolist() == [-1, 0, -1, 0]


def test_ml_dtypes_sub_byte_elements_out_of_range_or_for_whole_bytes_are_refused(io):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    # Range checks as for integer arrays: int4 -3 is no ui4, uint4 15 no i2.
    with pytest.raises(irvm.InvalidArgumentError, match=r"element 2 \(-3\) does not fit in ui4 \(range \[0, 15\]\)"):
        io.same_ui4(np.array([1, 2, -3, 4], ml_dtypes.int4))
    with pytest.raises(irvm.InvalidArgumentError, match=r"element 0 \(15\) does not fit in i2 \(range \[-2, 3\]\)"):
        io.widen_i2(np.array([15, 0, 0, 0], ml_dtypes.uint4))
    # Not for an i8 tensor (an int8 array is), nor of another shape.
    with pytest.raises(irvm.InvalidArgumentError, match="expects a 4 array of int8 .*got a 4 array of int4"):
        io.narrow_i4(np.array([1, 2, -3, 4], ml_dtypes.int4))
    with pytest.raises(irvm.InvalidArgumentError, match="expects a 4 array of int8 .*got a 3 array of int4"):
        io.same_i4(np.array([1, 2, 3], ml_dtypes.int4))
    # An i1 tensor is 8-bit booleans at the boundary: a bool array, not uint1.
    if hasattr(ml_dtypes, "uint1"):
        with pytest.raises(irvm.InvalidArgumentError, match="expects a 4 array of bool .*got a 4 array of uint1"):
            io.widen_i1(np.array([1, 0, 1, 1], ml_dtypes.uint1))
    with pytest.raises(ValueError, match="copy=False.*i4 elements are packed 2 to a byte"):
        io.same_i4(np.array([1, 2, -3, 4], ml_dtypes.int4), copy=False)


def test_compat_refuses_ml_dtypes_sub_byte_arrays_as_iree_runtime_does():
    # iree.runtime 3.13 maps no element type to ml_dtypes' int4, uint4,
    # int2, uint2: a plain ValueError before the call (irvm.compat passed
    # them to irvm, which raised InvalidArgumentError "cannot include dtype
    # 'a' in a buffer"). Compared live in test_compat.py
    # ("ml_dtypes_sub_byte_arrays").
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import irvm.compat as ireert

    vm = ireert.load_vm_flatbuffer_file(str(IO), driver="local-task")
    refused = r"^could not map dtype dtype\(int4\) to element type: mapping not found$"
    with pytest.raises(ValueError, match=refused) as e:
        vm.same_i4(np.array([1, 2, -3, 4], ml_dtypes.int4))
    assert type(e.value) is ValueError
    with pytest.raises(ValueError, match=r"^could not map dtype dtype\(uint2\) to element type"):
        vm.widen_i2([np.array([1, 2, 3, 0], ml_dtypes.uint2)])
