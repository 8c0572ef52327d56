"""Python call costs of irvm against iree.runtime (docs/PERFORMANCE.md,
"Python"). Run by benchmarks/python/run, once per runtime:

    python bench.py irvm     # the irvm package (pip install ./python)
    python bench.py iree     # iree.runtime 3.13

Each prints one JSON line: microseconds per call of a scalar function
(fib(1), tests/data/fib.vmfb), per call of a small MLP on llvm-cpu
(tests/models/embedded/mlp.vmfb, 4x8 f32 in, 4x3 out), of a dense layer
(tests/models/embedded/dense_weights.vmfb, 2x64 in, 64x32 weights), and
of loading into a fresh context plus the first call: the llvm-cpu MLP, the
vmvx MLP (tests/models/mlp.vmfb) and fib, both ways: repeated in one
process (`load_first_call*`: the same module bytes loaded again, which
irvm serves from its per-process caches) and the first load of a fresh
process (`fresh_load_first_call*`: a new interpreter per repetition, timed
from after `import`, device creation included for both runtimes). Each
figure is the best of several repetitions (the machine is shared)."""

import json
import pathlib
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
FIB = str(REPO / "tests" / "data" / "fib.vmfb")
MLP = str(REPO / "tests" / "models" / "embedded" / "mlp.vmfb")
DENSE = str(REPO / "tests" / "models" / "embedded" / "dense_weights.vmfb")
MLP_VMVX = str(REPO / "tests" / "models" / "mlp.vmfb")


def best_per_call(f, calls, repeats=7):
    """Microseconds per call of f(), the best of `repeats` runs of `calls`."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def loader(runtime):
    """A function that loads a module path on local-task and returns its
    function `name` as a callable giving numpy results."""
    if runtime == "irvm":
        import irvm

        return lambda path, name: irvm.load(path, device="local-task")[name]
    import iree.runtime as ireert

    def load(path, name):
        f = ireert.load_vm_flatbuffer_file(path, driver="local-task")[name]
        return f

    return load


def main(runtime):
    load = loader(runtime)
    out = {"runtime": runtime}
    fib = load(FIB, "fib")
    assert int(fib(10)) == 55
    out["fib1_us"] = best_per_call(lambda: fib(1), 100_000)
    x = np.ones((4, 8), np.float32)
    mlp = load(MLP, "predict")
    to_host = (lambda y: y) if runtime == "irvm" else (lambda y: y.to_host())
    np.testing.assert_allclose(to_host(mlp(x)), [[4.1, 3.8, 4.3]] * 4, rtol=1e-6)
    out["mlp_us"] = best_per_call(lambda: to_host(mlp(x)), 5_000)
    d = np.linspace(-1, 1, 128, dtype=np.float32).reshape(2, 64)
    dense = load(DENSE, "dense")
    out["dense_us"] = best_per_call(lambda: to_host(dense(d)), 5_000)
    out["load_first_call_us"] = best_per_call(lambda: to_host(load(MLP, "predict")(x)), 50)
    out["load_first_call_vmvx_us"] = best_per_call(lambda: to_host(load(MLP_VMVX, "predict")(x)), 50)
    out["load_first_call_fib_us"] = best_per_call(lambda: load(FIB, "fib")(1), 50)
    for key, which in [("", "mlp"), ("_vmvx", "mlp_vmvx"), ("_fib", "fib")]:
        out[f"fresh_load_first_call{key}_us"] = min(
            float(subprocess.check_output([sys.executable, __file__, runtime, "--fresh", which]))
            for _ in range(7)
        )
    print(json.dumps(out))


def fresh(runtime, which):
    """Prints the microseconds of this process's first load plus call."""
    load = loader(runtime)
    x = np.ones((4, 8), np.float32)
    to_host = (lambda y: y) if runtime == "irvm" else (lambda y: y.to_host())
    t0 = time.perf_counter()
    if which == "fib":
        load(FIB, "fib")(1)
    else:
        to_host(load(MLP if which == "mlp" else MLP_VMVX, "predict")(x))
    print((time.perf_counter() - t0) * 1e6)


if __name__ == "__main__":
    if "--fresh" in sys.argv:
        fresh(sys.argv[1], sys.argv[3])
    else:
        main(sys.argv[1])
