"""irvm.VmError and its subclasses: status, location, backtrace; argument
mismatches named before the call."""

import numpy as np
import pytest

import irvm
from conftest import DATA, EXAMPLES, MODELS


def test_one_subclass_per_status():
    assert issubclass(irvm.InvalidArgumentError, irvm.VmError)
    assert issubclass(irvm.InvalidArgumentError, ValueError)
    assert issubclass(irvm.DeadlineExceededError, TimeoutError)
    assert issubclass(irvm.NotFoundError, LookupError)
    assert issubclass(irvm.UnimplementedError, NotImplementedError)
    for cls in (
        irvm.ResourceExhaustedError,
        irvm.OutOfRangeError,
        irvm.CancelledError,
        irvm.FailedPreconditionError,
        irvm.InternalError,
    ):
        assert issubclass(cls, irvm.VmError)
        assert not issubclass(cls, ValueError)
    assert irvm.VmError.__module__ == "irvm"


def test_a_trap_has_its_status_source_location_and_backtrace():
    # examples/fib.vmasm fails with status 11 (OUT_OF_RANGE) at its line 33.
    m = irvm.load(EXAMPLES / "fib.vmasm")
    with pytest.raises(irvm.OutOfRangeError) as e:
        m.fib(50)
    err = e.value
    assert err.status == "OUT_OF_RANGE"
    assert err.location == "fib.vmasm:33:3"
    assert err.backtrace[0].startswith("fib_example.fib+0x")
    assert "fib.vmasm:33:3" in err.backtrace[0]
    assert "fib(n) overflows i32 for n > 46" in str(err)
    assert m.fib(10) == 55  # still usable


def test_a_module_without_debug_info_has_no_location():
    m = irvm.load(DATA / "limits.vmfb", fuel=100)
    with pytest.raises(irvm.ResourceExhaustedError) as e:
        m.spin()
    assert e.value.location is None
    assert e.value.backtrace and e.value.backtrace[0].startswith("limits.spin")


def test_shape_mismatch_names_the_argument_and_both_shapes_before_the_call():
    m = irvm.load(MODELS / "mlp.vmfb")
    with pytest.raises(irvm.InvalidArgumentError) as e:
        m.predict(np.ones((3, 8), np.float32))
    msg = str(e.value)
    assert "argument 0 (%input0: tensor<4x8xf32>) of module.predict" in msg
    assert "expects a 4x8 array of float32" in msg
    assert "got a 3x8 array of float32" in msg
    assert e.value.backtrace == []  # refused before the call: no VM frame
    assert isinstance(e.value, ValueError)


def test_dtype_mismatch_names_both_dtypes():
    m = irvm.load(MODELS / "mlp.vmfb")
    with pytest.raises(irvm.InvalidArgumentError, match="got a 4x8 array of float64"):
        m.predict(np.ones((4, 8)))


def test_wrong_argument_count_and_kind():
    m = irvm.load(MODELS / "mlp.vmfb")
    with pytest.raises(TypeError, match="takes 1 argument"):
        m.predict()
    with pytest.raises(irvm.InvalidArgumentError, match="expects a numpy array"):
        m.predict(object())
    with pytest.raises(irvm.InvalidArgumentError, match="does not fit in i32"):
        irvm.load(EXAMPLES / "fib.vmasm").fib(1 << 40)


def test_missing_functions():
    m = irvm.load(MODELS / "mlp.vmfb")
    with pytest.raises(AttributeError, match="exports: predict"):
        m.nope
    with pytest.raises(KeyError, match="nope"):
        m["nope"]
    assert "predict" in m and "nope" not in m


def test_load_errors():
    with pytest.raises(irvm.InvalidArgumentError, match="cannot read module file"):
        irvm.load(DATA / "does-not-exist.vmfb")
    with pytest.raises(irvm.InvalidArgumentError, match="loading module 0"):
        irvm.load(b"\x00" * 64)
    with pytest.raises(TypeError, match="a path, bytes or a buffer"):
        irvm.load(42)
    with pytest.raises(TypeError, match="at least one module"):
        irvm.load()


def test_an_error_made_in_python_has_the_attributes_too():
    e = irvm.InvalidArgumentError("boom")
    assert e.status == "INVALID_ARGUMENT"
    assert e.location is None
    assert e.backtrace == []
    assert irvm.VmError("x").status == "UNKNOWN"


# A module whose __init fails in a function it calls (status 9).
BAD_INIT = b"""vm.module @bad_init version 0
vm.export @__init
vm.func @__init() -> () {
^bb0:
  vm.call @setup() loc("bad_init.vmasm":5:3)
  vm.return
}
vm.func @setup() -> () {
^bb0:
  %i0 = vm.const.i32 9
  vm.fail %i0, "setup failed" loc("bad_init.vmasm":11:3)
}
"""


def test_a_trap_while_loading_has_its_location_and_backtrace():
    with pytest.raises(irvm.FailedPreconditionError) as e:
        irvm.load(BAD_INIT)
    err = e.value
    assert err.status == "FAILED_PRECONDITION"
    assert err.location == "bad_init.vmasm:11:3"
    assert len(err.backtrace) == 2
    assert err.backtrace[0].startswith("bad_init.setup+0x") and err.backtrace[0].endswith("bad_init.vmasm:11:3")
    assert err.backtrace[1].startswith("bad_init.__init+0x") and err.backtrace[1].endswith("bad_init.vmasm:5:3")
    assert "module 'bad_init' failed to initialize" in str(err) and "setup failed" in str(err)
