"""Shared paths and helpers of the irvm package's tests."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models"
DATA = REPO / "tests" / "data"
EXAMPLES = REPO / "examples"
# The package's own test modules (python/tests/data: each .vmfb with its source).
PYDATA = REPO / "python" / "tests" / "data"
SHARED = REPO.parent / "shared"

# The Python that has IREE's own runtime (iree.runtime 3.13), set up by
# ../shared/tools/setup-iree-peer; IRVM_IREE_PYTHON overrides it.
PEER_PYTHON = os.environ.get(
    "IRVM_IREE_PYTHON", os.path.expanduser("~/.cache/irvm-iree-peer/bin/python3")
)


def peer_python():
    """The reference runtime's interpreter, or None when it is not installed."""
    if os.path.exists(PEER_PYTHON) and os.access(PEER_PYTHON, os.X_OK):
        return PEER_PYTHON
    return None


# A loop of N iterations (i32), for calls that take a while.
COUNT_VMASM = b"""vm.module @count version 0
vm.export @count
vm.func @count(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  vm.br ^bb1(%i1->%i3)
^bb1:
  %i3 = vm.add.i32 %i3, %i2
  %i4 = vm.cmp.lt.i32.s %i3, %i0
  vm.cond_br %i4, ^bb1(), ^bb2()
^bb2:
  vm.return %i3
}
"""


@pytest.fixture
def count_module():
    import irvm

    return irvm.load(COUNT_VMASM)
