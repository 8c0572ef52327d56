"""irvm.compat against what IREE's own Python binding tests
(runtime/bindings/python/tests in iree-org/iree) rely on: names scripts
import from iree.runtime's private native module and submodules, and the
FunctionInvoker protocol (a context with `invoke`, a function with
`reflection`). Each case here failed in session 20's run of those tests
through irvm.compat while it passed under iree.runtime 3.13."""

import numpy as np
import pytest

import irvm.compat as ireert


def test_private_binding_module_has_the_native_names_scripts_import():
    from irvm.compat._binding import HalBufferView, VmContext, VmVariantList

    assert VmVariantList is ireert.VmVariantList
    assert HalBufferView is ireert.HalBufferView
    assert VmContext is ireert.VmContext


def test_create_hal_driver_is_uncached_and_the_cache_can_be_cleared():
    from irvm.compat._binding import clear_hal_driver_cache, create_hal_driver

    cached = ireert.get_driver("local-sync")
    assert ireert.get_driver("local-sync") is cached
    fresh = create_hal_driver("local-sync")
    assert fresh is not cached and create_hal_driver("local-sync") is not fresh
    assert fresh.query_available_devices() == cached.query_available_devices()
    clear_hal_driver_cache()
    after = ireert.get_driver("local-sync")
    assert after is not cached
    assert ireert.get_driver("local-sync") is after


def test_function_module_names_the_implicit_buffer_argument_flags():
    from irvm.compat.function import IMPLICIT_BUFFER_ARG_MEMORY_TYPE, IMPLICIT_BUFFER_ARG_USAGE

    assert IMPLICIT_BUFFER_ARG_MEMORY_TYPE is ireert.MemoryType.DEVICE_LOCAL
    assert IMPLICIT_BUFFER_ARG_USAGE is ireert.BufferUsage.DEFAULT


def test_copy_to_host_is_a_copy_apart_from_the_device_array():
    device = ireert.get_device("local-task")
    given = np.arange(6, dtype=np.int16).reshape(2, 3)
    array = ireert.asdevicearray(device, given)
    copied = array._copy_to_host()
    np.testing.assert_array_equal(copied, given)
    assert copied.dtype == np.int16 and copied.shape == (2, 3)
    copied[0, 0] = 99
    assert array.to_host()[0, 0] == 0


def test_a_second_io_parameters_module_once_the_first_is_in_use_is_refused():
    # A program imported io_parameters: its archives are in use, and
    # another io_parameters module cannot change them (iree.runtime
    # registers it for later programs; docs/COMPATIBILITY.md's row).
    from conftest import MODELS

    inst = ireert.VmInstance()
    device = ireert.get_device("local-task")
    ctx = ireert.VmContext(inst)
    index = ireert.ParameterIndex()
    index.load(str(MODELS / "in--wbc.irpa"))
    ctx.register_modules([ireert.create_hal_module(inst, device),
                          ireert.create_io_parameters_module(inst, index.create_provider(scope="model"),
                                                             index.create_provider(scope=""))])
    program = ireert.VmModule.mmap(inst, str(MODELS / "params.vmfb"))
    ctx.register_modules([program])
    main = ireert.FunctionInvoker(ctx, device, program.lookup_function("main"))
    expected = [101.75, 205.5, 291.75, 417.0]
    assert main(np.array([1, 2, 3, 4], np.float32)).to_host().tolist() == expected
    with pytest.raises(RuntimeError, match="FAILED_PRECONDITION.*io_parameters module is in use"):
        ctx.register_modules([ireert.create_io_parameters_module(inst, index.create_provider(scope="other"))])
    assert main(np.array([1, 2, 3, 4], np.float32)).to_host().tolist() == expected
