"""IREE's VM conformance suite (../shared/conformance/iree-vm-tests)
through irvm.load, under its convention: every exported function takes no
arguments, `fail_*` must raise irvm.VmError, every other must return None.
`async_ops` is left out (it needs the `yieldable_test` host module, which
irvm.load does not register). Skipped with a message without ../shared."""

import pytest

import irvm
from conftest import SHARED

SUITE = SHARED / "conformance" / "iree-vm-tests"


def functions():
    if not SUITE.is_dir():
        return []
    out = []
    for path in sorted(SUITE.glob("*.vmfb")):
        if path.stem == "async_ops":
            continue
        # Every export, `__init` included (Module.exports lists only the
        # functions a user calls).
        for name, _ in irvm._irvm._inspect(str(path))["exports"]:
            out.append((path, name))
    return out


FUNCTIONS = functions()


def test_the_suite_is_there():
    if not SUITE.is_dir():
        pytest.skip(f"{SUITE} is absent: the conformance suite is not run")
    assert len(FUNCTIONS) == 288


@pytest.mark.parametrize("path, name", FUNCTIONS, ids=[f"{p.stem}.{n}" for p, n in FUNCTIONS])
def test_conformance_function(path, name):
    m = irvm.load(path)  # a fresh context per function, as IREE's runner
    if name.startswith("fail_"):
        with pytest.raises(irvm.VmError):
            m[name]()
    else:
        assert m[name]() is None
