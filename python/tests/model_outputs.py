"""Outputs of the model corpus (tests/models: vmvx, and llvm-cpu in
embedded/ and system/) under a runtime with iree.runtime's API, for the
same inputs: made from each function's declared tensor types with a fixed
seed.

    python model_outputs.py OUT.npz     # with iree.runtime: records them

`python/tests/data/iree_outputs.npz` was made this way with iree.runtime
3.13 (the peer environment of ../shared/tools/setup-iree-peer);
test_models.py compares irvm's outputs with it, and with iree.runtime live
when it is installed.
"""

import pathlib
import re
import sys

import numpy as np

MODELS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "models"

# Functions without an `iree.abi.declaration` (imported from ONNX): their
# argument types, from the MLIR source.
UNDECLARED = {"onnx_mlp": "(%arg0: tensor<2x4xf32>) -> ()"}

# Programs needing parameter archives, and `global` (state across calls),
# are left out; the others run once each. So are programs iree.runtime 3.13
# cannot call: `async_external` (its functions take fences, which
# iree.runtime's callers pass themselves), `inline_dynamic` (it imports
# hal_inline and hal_loader, which iree.runtime does not register; irvm
# calls both, test_models.py compares them with iree-run-module's output),
# `output_refs` (results that are not tensors) and `stablehlo_ops` (unsigned
# 64-bit tensors).
SKIP = {
    "params", "params_global", "params_keys", "onnx_params",
    "async_external", "inline_dynamic", "output_refs", "stablehlo_ops",
}

DTYPES = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
}


def modules():
    """(key, path) of every module the corpus runs."""
    out = []
    for sub in ("", "embedded", "system"):
        for path in sorted((MODELS / sub).glob("*.vmfb")):
            if path.stem not in SKIP:
                out.append((f"{sub or 'vmvx'}/{path.stem}", path))
    return out


def arguments(declaration, rng):
    """Inputs for `sync func @f(%a: tensor<2x3xf32>, %n: i32) -> ...`."""
    args_text = declaration[declaration.index("(") + 1 : declaration.index(") ->") if ") ->" in declaration else -1]
    out = []
    for ty in re.findall(r":\s*(tensor<[^>]*>|i32|i64|f32)", args_text):
        if not ty.startswith("tensor<"):
            out.append(3 if ty.startswith("i") else 0.5)
            continue
        parts = ty[len("tensor<") : -1].split("x")
        dims = [3 if d == "?" else int(d) for d in parts[:-1]]
        dtype = DTYPES[parts[-1]]
        if dtype == np.bool_:
            a = rng.integers(0, 2, dims).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            a = rng.integers(-8, 8, dims).astype(dtype)
        else:
            a = rng.standard_normal(dims).astype(dtype)
        out.append(a)
    return out


def run(ireert, inputs=None):
    """{key: (inputs, outputs)} for every module and exported function;
    `inputs` (a previous run's) are used when given."""
    results = {}
    for key, path in modules():
        config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        vm_module = ireert.VmModule.mmap(ctx.instance, str(path))
        ctx.add_vm_module(vm_module)
        for name in vm_module.function_names:
            if name.startswith("__") or "$" in name:
                continue
            f = vm_module.lookup_function(name)
            declaration = f.reflection.get("iree.abi.declaration", UNDECLARED.get(name))
            fkey = f"{key}.{name}"
            if inputs is not None and fkey in inputs:
                args = inputs[fkey]
            else:
                args = arguments(declaration, np.random.default_rng(len(fkey)))
            out = ctx.modules[vm_module.name][name](*args)
            if not isinstance(out, tuple):
                out = (out,)
            results[fkey] = (args, [np.array(o.to_host() if hasattr(o, "to_host") else o) for o in out])
    return results


def save(results, path):
    flat = {}
    for fkey, (args, outs) in results.items():
        for k, a in enumerate(args):
            kind = "in" if isinstance(a, np.ndarray) else "scalar"
            flat[f"{fkey}|{kind}|{k}"] = np.asarray(a)
        for k, o in enumerate(outs):
            flat[f"{fkey}|out|{k}"] = o
    np.savez_compressed(path, **flat)


def load(path):
    """{key: (inputs, outputs)} from a file `save` wrote."""
    data = np.load(path)
    out = {}
    for name in data.files:
        fkey, kind, k = name.split("|")
        args, outs = out.setdefault(fkey, ([], []))
        value = data[name].item() if kind == "scalar" else data[name]
        (outs if kind == "out" else args).append((int(k), value))
    return {
        fkey: ([a for _, a in sorted(args, key=lambda t: t[0])], [o for _, o in sorted(outs, key=lambda t: t[0])])
        for fkey, (args, outs) in out.items()
    }


if __name__ == "__main__":
    import iree.runtime

    save(run(iree.runtime), sys.argv[1])
