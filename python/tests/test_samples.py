"""Five programs written the way IREE's samples and documentation use
iree.runtime (python/tests/data/sample_*.mlir, compiled by iree-compile
3.13), run with `import irvm.compat as ireert` and, when iree.runtime 3.13
is installed, with `import iree.runtime as ireert`: the results must be
equal (test_compat.py's runners)."""

import numpy as np
import pytest

from test_compat import assert_same, run_here, run_in_iree

# Each script leaves its results in RESULT (test_compat.py's convention).
SAMPLES = {
    "simple_abs": """
        # IREE's "simple_abs" sample: SystemContext, VmModule.copy_buffer, a scalar tensor.
        config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        with open(PYDATA + "/sample_abs.vmfb", "rb") as f:
            vm_module = ireert.VmModule.copy_buffer(ctx.instance, f.read())
        ctx.add_vm_module(vm_module)
        f = ctx.modules.module["abs"]
        results = f(np.array(-1.5, np.float32))
        RESULT = {
            "value": results.to_host(),
            "repr": repr(results),
            "python_float": float(results.to_host()),
            "function": repr(f),
            "module": repr(vm_module),
            "names": vm_module.function_names,
            "modules": sorted(ctx.modules),
        }
        try:
            f(np.array([-1.5, 2], np.float32))
            RESULT["wrong_shape"] = None
        except ValueError as e:
            RESULT["wrong_shape"] = ["ValueError", "INVALID_ARGUMENT" in str(e), "rank" in str(e) or "shape" in str(e)]
    """,
    "simple_mul": """
        # IREE's Python docs: load_vm_flatbuffer(backend="llvm-cpu") and simple_mul.
        with open(PYDATA + "/sample_mul.vmfb", "rb") as f:
            flatbuffer = f.read()
        module = ireert.load_vm_flatbuffer(flatbuffer, backend="llvm-cpu")
        arg0 = np.array([1., 2., 3., 4.], dtype=np.float32)
        arg1 = np.array([4., 5., 6., 7.], dtype=np.float32)
        results = module.simple_mul(arg0, arg1)
        RESULT = {
            "results": results.to_host(),
            "array": np.asarray(results),
            "plus": np.asarray(results + 1),
            "dtype": str(results.dtype),
            "shape": list(results.shape),
            "bound": repr(module).split(" : ")[0],
        }
        errors = {}
        for name, call in [
            ("float64", lambda: module.simple_mul(arg0.astype(np.float64), arg1)),
            ("too_few", lambda: module.simple_mul(arg0)),
            ("missing", lambda: module.nope),
        ]:
            try:
                out = call()
                errors[name] = ["ok", np.asarray(out).tolist()]
            except Exception as e:
                errors[name] = [k.__name__ for k in (ValueError, AttributeError, TypeError, RuntimeError) if isinstance(e, k)]
        RESULT["errors"] = errors
    """,
    "counter": """
        # IREE's "variables and state" sample: a global counter, scalar i32 in and out.
        config = ireert.Config("local-sync")
        ctx = ireert.SystemContext(config=config)
        ctx.add_vm_module(ireert.VmModule.mmap(config.vm_instance, PYDATA + "/sample_counter.vmfb"))
        counter = ctx.modules.module
        seen = [counter.get_value()]
        counter.set_value(101)
        seen.append(counter.get_value())
        counter.add_to_value(20)
        counter.add_to_value(-1)
        seen.append(counter.get_value())
        counter.reset()
        seen.append(counter.get_value())
        # A second context has its own global.
        other = ireert.SystemContext(config=config)
        other.add_vm_module(ireert.VmModule.mmap(config.vm_instance, PYDATA + "/sample_counter.vmfb"))
        other.modules.module.set_value(7)
        RESULT = {
            "seen": seen,
            "types": [type(v).__name__ for v in seen],
            "none": counter.reset() is None,
            "own_state": [counter.get_value(), other.modules.module.get_value()],
            "reflection": ctx.modules.module.vm_module.lookup_function("set_value").reflection,
        }
    """,
    "dynamic_shapes": """
        # IREE's "dynamic_shapes" sample: tensors of dynamic dimensions.
        config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        ctx.add_vm_module(ireert.VmModule.mmap(ctx.instance, PYDATA + "/sample_dynamic_shapes.vmfb"))
        m = ctx.modules.module
        RESULT = {
            "sum_1d": [m.reduce_sum_1d(np.arange(n, dtype=np.int32)).to_host() for n in (1, 5, 1000)],
            "sum_2d": m.reduce_sum_2d(np.arange(12, dtype=np.int32).reshape(4, 3)).to_host(),
            "add_one": m.add_one(np.array([1, 10, 100], np.int32)).to_host(),
            "add_one_empty": list(m.add_one(np.zeros(0, np.int32)).shape),
            "sum_1d_shape": list(m.reduce_sum_1d(np.arange(3, dtype=np.int32)).shape),
        }
        try:
            m.reduce_sum_2d(np.zeros((4, 2), np.int32))
            RESULT["wrong_static_dim"] = "ok"
        except ValueError as e:
            RESULT["wrong_static_dim"] = ["ValueError", "dimension 1 mismatch" in str(e)]
    """,
    "low_level_invoke": """
        # The low-level API as IREE's tests use it: VmInstance, create_hal_module,
        # VmContext.invoke with VmVariantList, buffer views from the allocator, and
        # a program's own assertion failing.
        instance = ireert.VmInstance()
        device = ireert.get_device("local-task")
        hal = ireert.create_hal_module(instance, device)
        module = ireert.VmModule.mmap(instance, PYDATA + "/sample_checked_matmul.vmfb")
        context = ireert.VmContext(instance, modules=[hal, module])
        def view(array):
            return device.allocator.allocate_buffer_copy(
                memory_type=ireert.MemoryType.DEVICE_LOCAL, allowed_usage=ireert.BufferUsage.DEFAULT,
                device=device, buffer=array, element_type=ireert.HalElementType.FLOAT_32)
        lhs, rhs = view(np.arange(6, dtype=np.float32).reshape(2, 3)), view(np.ones((3, 2), np.float32))
        args = ireert.VmVariantList(2)
        args.push_ref(lhs)
        args.push_ref(rhs)
        rets = ireert.VmVariantList(1)
        context.invoke(module.lookup_function("matmul"), args, rets)
        out = rets.get_as_object(0, ireert.HalBufferView)
        RESULT = {
            "matmul": np.array(out.map().asarray(out.shape, ireert.HalElementType.map_to_dtype(out.element_type))),
            "args": repr(args),
            "rets": repr(rets),
            "out": repr(out),
            "element_type": int(out.element_type),
        }
        sargs, srets = ireert.VmVariantList(1), ireert.VmVariantList(1)
        sargs.push_float(6.25)
        context.invoke(module.lookup_function("checked_sqrt"), sargs, srets)
        RESULT["sqrt"] = [srets.get_variant(0), repr(srets)]
        bad = ireert.VmVariantList(1)
        bad.push_float(-1.0)
        try:
            context.invoke(module.lookup_function("checked_sqrt"), bad, ireert.VmVariantList(1))
            RESULT["negative"] = "ok"
        except (ValueError, RuntimeError) as e:
            RESULT["negative"] = [[k.__name__ for k in (ValueError, RuntimeError) if isinstance(e, k)], "checked_sqrt: the input is negative" in str(e), "FAILED_PRECONDITION" in str(e)]
        # iree.runtime 3.13 crashes (SIGSEGV) at the interpreter's exit when
        # these outlive the device in the script's namespace: released first.
        del out, rets, args, lhs, rhs, srets, sargs, bad
    """,
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_gives_what_iree_runtime_gives(name):
    ours = run_here(SAMPLES[name])
    theirs = run_in_iree(SAMPLES[name])
    assert_same(ours, theirs)


def test_samples_compute_what_their_programs_say():
    # Checked here without iree.runtime too: the values worked by hand.
    r = run_here(SAMPLES["simple_abs"])
    assert r["python_float"] == 1.5 and r["modules"] == ["hal", "module"]
    assert r["repr"] == "<IREE DeviceArray: shape=[], dtype=float32>"
    r = run_here(SAMPLES["simple_mul"])
    assert r["results"].tolist() == [4, 10, 18, 28] and r["plus"].tolist() == [5, 11, 19, 29]
    assert r["errors"] == {"float64": ["ValueError"], "too_few": ["ValueError"], "missing": ["AttributeError"]}
    r = run_here(SAMPLES["counter"])
    assert r["seen"] == [0, 101, 120, 0] and r["own_state"] == [0, 7] and r["none"]
    r = run_here(SAMPLES["dynamic_shapes"])
    assert [int(s) for s in r["sum_1d"]] == [0, 10, 499500] and r["sum_2d"].tolist() == [18, 22, 26]
    assert r["add_one"].tolist() == [2, 11, 101] and r["wrong_static_dim"] == ["ValueError", True]
    r = run_here(SAMPLES["low_level_invoke"])
    assert r["matmul"].tolist() == [[3, 3], [12, 12]] and r["sqrt"][0] == 2.5
    assert r["rets"] == "<VmVariantList(1): [HalBufferView(2x2:0x20000021)]>"
    assert r["negative"] == [["RuntimeError"], True, True]
