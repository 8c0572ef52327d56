"""iree.runtime's benchmark helpers (`benchmark_module`, `BenchmarkResult`)
for irvm.compat: they run `irvm bench`, the irvm CLI's counterpart of
iree-benchmark-module (the same flags, Google Benchmark's JSON report),
as iree.runtime runs iree-benchmark-module. The CLI is not part of the
Python package: `benchmark_exe()` finds `irvm` on PATH, or pass
`executable=` (an irvm binary)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections import namedtuple
from typing import Any, Optional, Union

import numpy


__all__ = [
    "BenchmarkResult",
    "BenchmarkTimeoutError",
    "BenchmarkToolError",
    "DTYPE_TO_ABI_TYPE",
    "benchmark_exe",
    "benchmark_module",
]

BenchmarkResult = namedtuple("BenchmarkResult", "benchmark_name time cpu_time iterations report")
BenchmarkResult.__doc__ = """One benchmark row `irvm bench` reported.

time and cpu_time are "<value> <unit>" strings, using % for percentage
aggregates, and iterations is a string. report is the complete Google
Benchmark JSON row."""


class BenchmarkToolError(Exception):
    """Failure of the tool or a reported benchmark, with its diagnostics."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(self.message)


class BenchmarkTimeoutError(Exception):
    """The benchmark ran past the `timeout` given."""


# iree.runtime's dtype -> ABI type names for `--input` (its dtypes.py).
DTYPE_TO_ABI_TYPE = {
    numpy.dtype(numpy.float16): "f16",
    numpy.dtype(numpy.float32): "f32",
    numpy.dtype(numpy.float64): "f64",
    numpy.dtype(numpy.int8): "i8",
    numpy.dtype(numpy.uint8): "i8",
    numpy.dtype(numpy.int16): "i16",
    numpy.dtype(numpy.uint16): "i16",
    numpy.dtype(numpy.int32): "i32",
    numpy.dtype(numpy.uint32): "i32",
    numpy.dtype(numpy.int64): "i64",
    numpy.dtype(numpy.uint64): "i64",
    numpy.dtype(numpy.bool_): "i1",
    numpy.dtype(numpy.complex64): "complex<f32>",
    numpy.dtype(numpy.complex128): "complex<f64>",
}


def benchmark_exe() -> str:
    """The `irvm` binary on PATH (FileNotFoundError when there is none)."""
    found = shutil.which("irvm")
    if found is None:
        raise FileNotFoundError(
            "irvm.compat.benchmark_module runs `irvm bench`, the irvm CLI, which is not on PATH "
            "(build it with `cargo build --release -p irvm-cli`, or pass executable=PATH_TO_IRVM)"
        )
    return found


def _build_benchmark_args(module: Any, entry_function: Optional[str] = None, inputs: Optional[list] = None,
                          executable: Union[str, os.PathLike, None] = None,
                          **kwargs) -> tuple[list[str], Optional[bytes]]:
    """The command line (`irvm bench ...`) and the module bytes it reads
    from stdin (None when it reads a file), as iree.runtime's builds them
    for iree-benchmark-module."""
    args = [os.fspath(executable) if executable is not None else benchmark_exe(), "bench"]
    module_bytes = None
    if hasattr(module, "function_names") and hasattr(module, "stashed_flatbuffer_blob"):
        funcs = [a for a in module.function_names if a != "__init"]
        if entry_function is None:
            if len(funcs) > 1:
                raise ValueError(f"No function specified with multiple options {funcs}")
            entry_function = funcs[0]
        if entry_function not in funcs:
            raise ValueError(f"Attempted to benchmark unknown function {entry_function} of options {funcs}")
        source = module.stashed_flatbuffer_blob
        if isinstance(source, (str, os.PathLike)):
            # A module irvm.compat mapped from a file: the file itself.
            args.append(f"--module={os.fspath(source)}")
        else:
            module_bytes = bytes(memoryview(source))
            args.append("--module=-")
    else:
        args.append(f"--module={os.fspath(module)}")
    if entry_function is not None:
        args.append(f"--function={entry_function}")
    for k, given in kwargs.items():
        for v in given if isinstance(given, (list, tuple)) else [given]:
            if isinstance(v, bool):
                v = "true" if v else "false"
            args.append(f"--{k}={v}")
    for inp in inputs or []:
        if isinstance(inp, str):
            args.append(f"--input={inp}")
            continue
        shape = "x".join(str(d) for d in inp.shape)
        abi_type = DTYPE_TO_ABI_TYPE[inp.dtype]
        values = inp.flatten()
        if numpy.all(values[0] == values):
            text = str(values[0])
        else:
            text = ",".join(str(v) for v in values)
        args.append(f"--input={shape}x{abi_type}={text}")
    return args, module_bytes


def benchmark_module(module: Any, entry_function: Optional[str] = None, inputs: Optional[list] = None,
                     timeout: Optional[float] = None, executable: Union[str, os.PathLike, None] = None,
                     **kwargs) -> list[BenchmarkResult]:
    """Benchmarks a module (a VmModule or a path) with `irvm bench`, as
    iree.runtime's benchmark_module runs iree-benchmark-module: keyword
    arguments become `--key=value` flags (a list or tuple repeats the
    flag), `inputs` are arrays or `--input` strings; without an entry
    function a module file runs every export that takes no inputs.
    Returns one BenchmarkResult per row of the JSON report; raises
    BenchmarkToolError when the tool fails or a benchmark reports an
    error, BenchmarkTimeoutError past `timeout` seconds."""
    if "benchmark_out" in kwargs or "benchmark_out_format" in kwargs:
        raise ValueError("benchmark_module reads results from its own JSON file")
    with tempfile.TemporaryDirectory() as directory:
        report = os.path.join(directory, "results.json")
        args, module_bytes = _build_benchmark_args(
            module=module, entry_function=entry_function, inputs=inputs, executable=executable,
            benchmark_out=report, benchmark_out_format="json", **kwargs,
        )
        try:
            done = subprocess.run(args, input=module_bytes, timeout=timeout, capture_output=True)
        except subprocess.TimeoutExpired:
            raise BenchmarkTimeoutError(f"Benchmark timed out after {timeout} seconds") from None
        out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
        if done.returncode != 0:
            raise BenchmarkToolError(f"stderr:\n{err}\nstdout:\n{out}")
        with open(report) as f:
            return _parse_benchmark_results(f.read())


def _parse_benchmark_results(report: str) -> list[BenchmarkResult]:
    if not report.strip():
        return []
    results = []
    for run in json.loads(report)["benchmarks"]:
        if run.get("error_occurred"):
            raise BenchmarkToolError(f"{run['name']}: {run['error_message']}")
        unit = run["time_unit"]
        real_time, cpu_time = run["real_time"], run["cpu_time"]
        if run.get("aggregate_unit") == "percentage":
            unit = "%"
            real_time *= 100
            cpu_time *= 100
        results.append(
            BenchmarkResult(
                benchmark_name=run["name"],
                time=f"{real_time} {unit}",
                cpu_time=f"{cpu_time} {unit}",
                iterations=str(run["iterations"]),
                report=run,
            )
        )
    return results
