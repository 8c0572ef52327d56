"""IREE's VM conformance suite (../shared/conformance/iree-vm-tests)
through irvm.load, under its convention: every exported function takes no
arguments, `fail_*` must raise irvm.VmError, every other must return None.
`async_ops` imports the `yieldable_test` host module: irvm.load is given
its shared library first (`libyieldable_test.so`, which `cargo test
--workspace` builds; IRVM_YIELDABLE_TEST names another), as `irvm run
--module=libyieldable_test.so` would. Skipped with a message without
../shared, or for async_ops without the library."""

import os

import pytest

import irvm
from conftest import REPO, SHARED

SUITE = SHARED / "conformance" / "iree-vm-tests"


def yieldable_test_library():
    """The yieldable_test host module's library, or None."""
    if os.environ.get("IRVM_YIELDABLE_TEST"):
        return os.environ["IRVM_YIELDABLE_TEST"]
    target = os.environ.get("CARGO_TARGET_DIR", str(REPO / "target"))
    for profile in ("debug", "release"):
        for sub in ("", "deps"):
            path = os.path.join(target, profile, sub, "libyieldable_test.so")
            if os.path.exists(path):
                return path
    return None


def functions():
    if not SUITE.is_dir():
        return []
    out = []
    for path in sorted(SUITE.glob("*.vmfb")):
        # Every export, `__init` included (Module.exports lists only the
        # functions a user calls).
        for name, _ in irvm._irvm._inspect(str(path))["exports"]:
            out.append((path, name))
    return out


FUNCTIONS = functions()


def test_the_suite_is_there():
    if not SUITE.is_dir():
        pytest.skip(f"{SUITE} is absent: the conformance suite is not run")
    assert len(FUNCTIONS) == 304


@pytest.mark.parametrize("path, name", FUNCTIONS, ids=[f"{p.stem}.{n}" for p, n in FUNCTIONS])
def test_conformance_function(path, name):
    host = []
    if path.stem == "async_ops":
        library = yieldable_test_library()
        if library is None:
            pytest.skip("libyieldable_test.so is not built (cargo test --workspace builds it)")
        host = [library]
    m = irvm.load(*host, path)  # a fresh context per function, as IREE's runner
    if name.startswith("fail_"):
        with pytest.raises(irvm.VmError):
            m[name]()
    else:
        assert m[name]() is None
