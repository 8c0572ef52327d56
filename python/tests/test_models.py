"""Outputs of the model corpus (tests/models: vmvx; llvm-cpu embedded and
system ELF) through irvm.load equal iree.runtime 3.13's: recorded in
data/iree_outputs.npz (model_outputs.py), and compared live when the
reference runtime is installed. Also through irvm.compat."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import irvm
import irvm.compat
import model_outputs
from conftest import peer_python

HERE = pathlib.Path(__file__).resolve().parent
RECORDED = model_outputs.load(HERE / "data" / "iree_outputs.npz")


def irvm_outputs(fkey, args, device):
    key, function = fkey.rsplit(".", 1)
    path = dict(model_outputs.modules())[key]
    out = irvm.load(path, device=device)[function](*args)
    return list(out) if isinstance(out, tuple) else [out]


# vmvx data-tiled matmul: irvm's query_tile_sizes answers the ukernel
# library's generic tile sizes, where IREE answers CPU-specific ones (README,
# "Tensor programs"), so the sums are accumulated in another order: equal to
# within float32 rounding, not bit for bit.
ROUNDING = {"vmvx/datatiled_matmul.datatiled_matmul"}


def assert_outputs_equal(ours, theirs, what):
    assert len(ours) == len(theirs), what
    for k, (o, t) in enumerate(zip(ours, theirs)):
        o = np.asarray(o)
        assert o.dtype == t.dtype and o.shape == t.shape, (what, k, o.dtype, o.shape, t.dtype, t.shape)
        if what in ROUNDING:
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6, err_msg=f"{what} result {k}")
        else:
            # The same kernels run: results are identical (NaN where theirs is).
            np.testing.assert_array_equal(o, t, err_msg=f"{what} result {k}")


def test_every_corpus_module_is_recorded():
    keys = {k.rsplit(".", 1)[0] for k in RECORDED}
    assert keys == {k for k, _ in model_outputs.modules()}
    assert len(RECORDED) >= 70


@pytest.mark.parametrize("device", ["local-task", "local-sync"])
@pytest.mark.parametrize("fkey", sorted(RECORDED))
def test_outputs_equal_iree_runtime_recorded(fkey, device):
    args, want = RECORDED[fkey]
    assert_outputs_equal(irvm_outputs(fkey, args, device), want, fkey)


def test_compat_outputs_equal_recorded():
    inputs = {k: v[0] for k, v in RECORDED.items()}
    ours = model_outputs.run(irvm.compat, inputs)
    assert set(ours) == set(RECORDED)
    for fkey, (_, outs) in ours.items():
        assert_outputs_equal(outs, RECORDED[fkey][1], fkey)


def test_outputs_equal_iree_runtime_live(tmp_path):
    python = peer_python()
    if python is None:
        pytest.skip("iree.runtime is not installed (../shared/tools/setup-iree-peer): compared with the recording only")
    out = tmp_path / "live.npz"
    done = subprocess.run([python, str(HERE / "model_outputs.py"), str(out)], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    live = model_outputs.load(out)
    assert set(live) == set(RECORDED)
    for fkey, (args, want) in live.items():
        assert_outputs_equal(irvm_outputs(fkey, args, "local-task"), want, fkey)


MODELS = HERE.parents[1] / "tests" / "models"


@pytest.mark.parametrize("device", ["local-task", "local-sync"])
def test_async_external_functions_are_called_with_their_inputs_only(device):
    # iree.runtime 3.13 asks for the two fences ("expected 4 arguments but
    # passed 2"); irvm passes them as iree-run-module does, with its results
    # (tests/models/async_external*.expected, compared live in the Rust tests).
    m = irvm.load(MODELS / "async_external.vmfb", device=device)
    assert m.scale._arity == 2
    assert "!hal.fence" not in m.scale.signature and "ref, ref" not in m.scale.signature
    out = m.scale(np.array([1, 2, -3, 0.5], np.float32), 2.5)
    np.testing.assert_array_equal(out, np.array([2.5, 5, -7.5, 1.25], np.float32))
    np.testing.assert_array_equal(m.accumulate(np.array([1, 2, 3], np.float32)), [1, 2, 3])
    np.testing.assert_array_equal(m.accumulate(np.array([1, 2, 3], np.float32)), [2, 4, 6])
    with pytest.raises(TypeError):
        m.scale(np.array([1], np.float32))
    with pytest.raises(irvm.InvalidArgumentError):
        m.accumulate(np.array([1, 2, 3, 4], np.float32))


@pytest.mark.parametrize("device", ["local-task", "local-sync"])
def test_inline_dynamic_modules_run_on_the_inline_hal(device):
    # iree.runtime 3.13: "required module 'hal_loader' not registered".
    # Results as iree-run-module prints them (tests/models/inline_dynamic*):
    # the inline HAL keeps denormals, so 1e-10 x 1e-30 is not flushed to 0.
    m = irvm.load(MODELS / "inline_dynamic.vmfb", device=device)
    x = np.array([1e-10, 1e-20, 3], np.float32)
    y = np.array([1e-30, 1e-20, 2], np.float32)
    out = m.scale(x, y)
    np.testing.assert_array_equal(out, x * y)
    assert out[0] != 0 and out[2] == 6
    a = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(m.matmul(a, np.full((4, 3), 0.5, np.float32)), [[5, 5, 5], [13, 13, 13]])
    s, t = m.accumulate(np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(s, [1, 2, 3])
    np.testing.assert_array_equal(t, [2, 4, 6])
