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
