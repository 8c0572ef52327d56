"""Where the repeated load plus first call of a small module goes (issue
37, docs/PERFORMANCE.md "Python"): the llvm-cpu MLP
(tests/models/embedded/mlp.vmfb) loaded again and again in one process,
each step timed on its own, best and median of many repetitions, in
microseconds:

    python load_steps.py          # the irvm package (pip install ./python)

Steps: `load` (irvm.load: the module from the per-process cache, a new
context, the hal and the module registered, `__init` run), `lookup` (the
function by name, its signature), `call` (the first call: arguments,
the dispatch, the result), `drop` (the previous module and its context
freed), and `total` (all four in a row, as the benchmark's repeated load
does them)."""

import json
import pathlib
import statistics
import time

import numpy as np

import irvm

REPO = pathlib.Path(__file__).resolve().parents[2]
MLP = str(REPO / "tests" / "models" / "embedded" / "mlp.vmfb")


def main(repeats=2000):
    x = np.ones((4, 8), np.float32)
    steps = {k: [] for k in ("load", "lookup", "call", "drop", "total")}
    previous = irvm.load(MLP, device="local-task")
    for _ in range(repeats):
        t0 = time.perf_counter()
        m = irvm.load(MLP, device="local-task")
        t1 = time.perf_counter()
        f = m["predict"]
        t2 = time.perf_counter()
        f(x)
        t3 = time.perf_counter()
        previous = None
        t4 = time.perf_counter()
        previous, f = m, None
        for k, v in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
            steps[k].append(v * 1e6)
    print(json.dumps({k: {"best": round(min(v), 1), "median": round(statistics.median(v), 1)}
                      for k, v in steps.items()}))


if __name__ == "__main__":
    main()
