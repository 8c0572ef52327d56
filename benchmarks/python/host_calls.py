"""Cost of a call from bytecode into a host function written in Python
(docs/PERFORMANCE.md, "Python"): python/tests/data/py_module.vmfb's
`count(n)` calls `pyext.add_one` n times, and the time per call is the
call's time over n, best of several repetitions:

    python host_calls.py irvm     # irvm.HostModule with irvm.load, and irvm.compat
    python host_calls.py iree     # iree.runtime 3.13's PyModuleInterface

Prints one JSON line of microseconds per host call."""

import json
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
PROGRAM = str(REPO / "python" / "tests" / "data" / "py_module.vmfb")
N = 100_000


def best(f, repetitions=7):
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        assert f(N) == N
        times.append(time.perf_counter() - start)
    return min(times) / N * 1e6


def compat_count(rt):
    class Ext:
        def __init__(self, iface):
            pass

        def add_one(self, a):
            return a + 1

        def mix(self, a, b):
            return b, a

        def scale(self, x, c):
            return x

    iface = rt.PyModuleInterface("pyext", Ext)
    iface.export("add_one", "0i_i", Ext.add_one)
    iface.export("mix", "0IF_FI", Ext.mix)
    iface.export("scale", "0rf_r", Ext.scale)
    config = rt.Config("local-sync")
    program = rt.VmModule.mmap(config.vm_instance, PROGRAM)
    ctx = rt.SystemContext(vm_modules=[iface.create(), program], config=config)
    return ctx.modules.module.count


def main():
    out = {}
    if sys.argv[1] == "irvm":
        import irvm
        import irvm.compat

        ext = irvm.HostModule("pyext")
        ext.export("add_one", "0i_i", lambda a: a + 1)
        ext.export("mix", "0IF_FI", lambda a, b: (b, a))
        ext.export("scale", "0rf_r", lambda x, c: x)
        out["irvm_load_us"] = best(irvm.load(ext, PROGRAM, device="local-sync").count)
        out["irvm_compat_us"] = best(compat_count(irvm.compat))
    else:
        import iree.runtime

        out["iree_runtime_us"] = best(compat_count(iree.runtime))
    print(json.dumps({k: round(v, 3) for k, v in out.items()}))


if __name__ == "__main__":
    main()
