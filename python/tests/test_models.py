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
