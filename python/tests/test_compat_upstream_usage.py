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


class _RecordingContext:
    """A stand-in for VmContext: each invoke is recorded and answered by
    `answer(arg_list, ret_list)`, as iree.runtime's FunctionInvoker calls
    any object with `invoke`."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def invoke(self, function, arg_list, ret_list):
        self.calls.append(repr(arg_list))
        self.answer(arg_list, ret_list)


class _Declared:
    """A stand-in for VmFunction: only its reflection is read."""

    def __init__(self, abi=None):
        import json

        self.reflection = {} if abi is None else {"iree.abi": json.dumps(abi)}


def _push_ints(*values):
    def answer(arg_list, ret_list):
        for v in values:
            ret_list.push_int(v)

    return answer


def test_function_invoker_packs_by_reflection_through_any_context():
    device = ireert.get_device("local-task")
    context = _RecordingContext(_push_ints(10, 20))
    abi = {"a": [["sdict", ["x", "i64"], ["y", "i32"]], ["named", "step", "i32"], ["named", "pair", ["stuple", "i32", "i32"]]],
           "r": [["stuple", "i32", "i32"]]}
    invoker = ireert.FunctionInvoker(context, device, _Declared(abi))
    # The dict's items go in the declared key order, keywords in their slots,
    # and the inlined tuple of results comes back as one tuple.
    assert invoker({"y": 2, "x": 1}, pair=(8, 9), step=5) == (10, 20)
    assert context.calls == ["<VmVariantList(3): [List[1, 2], 5, List[8, 9]]>"]


def test_function_invoker_without_reflection_packs_by_python_type():
    device = ireert.get_device("local-task")
    context = _RecordingContext(_push_ints(7))
    invoker = ireert.FunctionInvoker(context, device, _Declared())
    assert invoker(3, {"b": 1, "a": [2.5]}, np.array([[1, 2]], np.int16)) == 7
    assert context.calls == ["<VmVariantList(3): [3, List[List[2.500000], 1], HalBufferView(1x2:0x10000011)]>"]
    with pytest.raises(ValueError, match="kwargs not supported for dynamic dispatch"):
        invoker(1, k=2)
    with pytest.raises(ValueError, match="could not convert python value to VM: None"):
        invoker(None)


def test_function_invoker_refuses_mismatched_calls_with_iree_runtimes_messages():
    device = ireert.get_device("local-task")
    context = _RecordingContext(_push_ints(0))
    # (Checked against iree.runtime 3.13: the same messages.)
    abi = {"a": ["i32", ["slist", "i32"], ["named", "k", "i32"]], "r": ["i32"]}
    invoker = ireert.FunctionInvoker(context, device, _Declared(abi))
    for call, message in (
        (lambda: invoker(1, [2], 3), "mismatched call arity: expected 2 got 3"),
        (lambda: invoker(1, [2]), "mismatched call arity: expected a value for argument 2"),
        (lambda: invoker(1, [2], k=1, z=2), "specified kwarg 'z' is unknown"),
        (lambda: invoker(1, [2, 3], k=1), r"expected a sequence with 1 values. got: \[2, 3\]"),
    ):
        with pytest.raises(ValueError, match=message):
            call()
    assert context.calls == []
    # Results that do not match their declaration are ReturnErrors.
    from irvm.compat.function import ReturnError

    wrong = ireert.FunctionInvoker(_RecordingContext(_push_ints(1, 2)), device, _Declared(abi))
    with pytest.raises(ReturnError, match="mismatched return arity: 2 vs 1"):
        wrong(1, [2], k=3)
