"""Host modules written in Python: irvm.compat's PyModuleInterface (each
case of iree.runtime's py_module_test.py as a script run through irvm.compat
and, when iree.runtime 3.13 is installed, through it too with equal
results), a compiled program importing a Python module through both
runtimes, and irvm's own irvm.HostModule with irvm.load: errors, threads and
Ctrl-C."""

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import irvm
import irvm.compat
from conftest import PYDATA
from test_compat import assert_same, run_here, run_in_iree

PROGRAM = PYDATA / "py_module.vmfb"

# Each script leaves its results in RESULT (plain values), as test_compat's.
SCRIPTS = {
    "empty_module_lifecycle": """
        import gc
        iface = ireert.PyModuleInterface("test1", lambda iface: None)
        texts = [str(iface)]
        before = iface.initialized
        m = iface.create()
        texts.append(str(iface))
        after = iface.initialized
        alive = iface.destroyed
        module = repr(m)
        m = None
        gc.collect()
        texts.append(str(iface))
        RESULT = {"before": before, "after": after, "alive": alive, "destroyed": iface.destroyed,
                  "texts": texts, "module": module}
    """,
    "empty_module_instance": """
        import gc
        iface = ireert.PyModuleInterface("test1", lambda iface: None)
        m = iface.create()
        context = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        initialized = iface.initialized
        context = None
        m = None
        gc.collect()
        RESULT = {"initialized": initialized, "destroyed": iface.destroyed}
    """,
    "multi_module_instance": """
        import gc
        calls = []
        def ctor(iface):
            calls.append(iface)
            return None
        iface = ireert.PyModuleInterface("test1", ctor)
        m = iface.create()
        context1 = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        context2 = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        count, given = len(calls), all(c is iface for c in calls)
        calls = None
        context1 = None
        m = None
        alive = not iface.destroyed
        context2 = None
        gc.collect()
        RESULT = {"count": count, "given": given, "alive_with_a_context": alive,
                  "destroyed": iface.destroyed}
    """,
    "void_function_export": """
        import gc
        messages = []
        class Methods:
            def __init__(self, iface):
                self.iface = iface
                self.counter = 0
            def say_hello(self):
                messages.append(f"Hello! Your number is {self.counter}")
                self.counter += 1
        iface = ireert.PyModuleInterface("test1", Methods)
        iface.export("say_hello", "0v", Methods.say_hello)
        m = iface.create()
        context = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        f = m.lookup_function("say_hello")
        args = ireert.VmVariantList(0)
        results = ireert.VmVariantList(0)
        context.invoke(f, args, results)
        context.invoke(f, args, results)
        context = None
        m = None
        gc.collect()
        RESULT = {"messages": messages, "results": len(results), "function": repr(f),
                  "destroyed": iface.destroyed}
    """,
    "python_exception": """
        import gc
        class Methods:
            def __init__(self, iface):
                pass
            def do_it(self):
                raise ValueError("This is from Python")
        iface = ireert.PyModuleInterface("test1", Methods)
        iface.export("do_it", "0v", Methods.do_it)
        m = iface.create()
        context = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        try:
            context.invoke(m.lookup_function("do_it"), ireert.VmVariantList(0), ireert.VmVariantList(0))
            raised = None
        except RuntimeError as e:
            raised = ("ValueError: This is from Python" in str(e), "UNKNOWN" in str(e))
        # The context stays usable.
        try:
            context.invoke(m.lookup_function("do_it"), ireert.VmVariantList(0), ireert.VmVariantList(0))
        except RuntimeError:
            again = True
        context = None
        m = None
        gc.collect()
        RESULT = {"raised": raised, "again": again, "destroyed": iface.destroyed}
    """,
    "primitive_arguments": """
        import gc
        values = []
        class Methods:
            def __init__(self, iface):
                pass
            def do_it(self, a, b):
                values.append((a, b))
        iface = ireert.PyModuleInterface("test1", Methods)
        iface.export("do_it_i32", "0ii", Methods.do_it)
        iface.export("do_it_i64", "0II", Methods.do_it)
        iface.export("do_it_f32", "0ff", Methods.do_it)
        iface.export("do_it_f64", "0FF", Methods.do_it)
        m = iface.create()
        context = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        args = ireert.VmVariantList(2)
        results = ireert.VmVariantList(0)
        args.push_int(42)
        args.push_int(43)
        context.invoke(m.lookup_function("do_it_i32"), args, results)
        context.invoke(m.lookup_function("do_it_i64"), args, results)
        args = ireert.VmVariantList(2)
        args.push_float(2.0)
        args.push_float(4.0)
        context.invoke(m.lookup_function("do_it_f32"), args, results)
        context.invoke(m.lookup_function("do_it_f64"), args, results)
        context = None
        m = None
        gc.collect()
        RESULT = {"values": repr(values), "types": [type(a).__name__ for a, _ in values],
                  "destroyed": iface.destroyed}
    """,
    "primitive_results": """
        import gc
        next_results = None
        class Methods:
            def __init__(self, iface):
                pass
            def do_it(self):
                return next_results
        iface = ireert.PyModuleInterface("test1", Methods)
        iface.export("do_it_i32", "0v_ii", Methods.do_it)
        iface.export("do_it_i64", "0v_II", Methods.do_it)
        iface.export("do_it_f32", "0v_ff", Methods.do_it)
        iface.export("do_it_f64", "0v_FF", Methods.do_it)
        iface.export("do_it_unary_i32", "0v_i", Methods.do_it)
        m = iface.create()
        context = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        args = ireert.VmVariantList(0)
        out = {}
        for name, given in [("do_it_i32", (42, 43)), ("do_it_i64", (42, 43)), ("do_it_f32", (2.0, 4.0)),
                            ("do_it_f64", (2.0, 4.0)), ("do_it_unary_i32", 42)]:
            results = ireert.VmVariantList(2)
            next_results = given
            context.invoke(m.lookup_function(name), args, results)
            out[name] = repr(results)
        context = None
        m = None
        gc.collect()
        RESULT = {"results": out, "destroyed": iface.destroyed}
    """,
    "ref_arguments": """
        values = []
        class Methods:
            def __init__(self, iface):
                pass
            def do_it(self, a, b):
                values.append((a.deref(ireert.VmVariantList), b.deref(ireert.VmVariantList)))
                kinds.append((a.isinstance(ireert.VmVariantList), a.isinstance(ireert.HalBufferView),
                              repr(a).startswith("<VmRef vm.list at 0x")))
        kinds = []
        iface = ireert.PyModuleInterface("test1", Methods)
        iface.export("do_it", "0rr", Methods.do_it)
        m = iface.create()
        context = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        arg0 = ireert.VmVariantList(1)
        arg0.push_int(42)
        arg1 = ireert.VmVariantList(1)
        arg1.push_int(84)
        args = ireert.VmVariantList(2)
        args.push_list(arg0)
        args.push_list(arg1)
        results = ireert.VmVariantList(2)
        context.invoke(m.lookup_function("do_it"), args, results)
        RESULT = {"values": repr(values), "kinds": kinds}
    """,
    "ref_results": """
        class Methods:
            def __init__(self, iface):
                pass
            def do_it(self):
                r0 = ireert.VmVariantList(1)
                r0.push_int(42)
                r1 = ireert.VmVariantList(2)
                r1.push_float(1.5)
                r1.push_int(84)
                return r0.ref, r1.ref
        iface = ireert.PyModuleInterface("test1", Methods)
        iface.export("do_it", "0v_rr", Methods.do_it)
        m = iface.create()
        context = ireert.VmContext(ireert.VmInstance(), modules=(m,))
        results = ireert.VmVariantList(2)
        context.invoke(m.lookup_function("do_it"), ireert.VmVariantList(0), results)
        RESULT = {"results": repr(results), "first": repr(results.get_as_list(0)),
                  "second": results.get_as_list(1).get_variant(0)}
    """,
    "export_refusals": """
        iface = ireert.PyModuleInterface("test1", lambda iface: None)
        iface.export("f", "0i_i", lambda s, a: a)
        refused = {}
        for name, cconv in [("f", "0i_i"), ("variadic", "0CiD_i"), ("variadic_results", "0i_CiD"),
                            ("version", "1i_i")]:
            try:
                iface.export(name, cconv, lambda s: None)
                refused[name] = None
            except Exception as e:
                refused[name] = type(e).__name__
        m = iface.create()
        try:
            iface.create()
            again = None
        except RuntimeError as e:
            again = str(e)
        RESULT = {"refused": refused, "again": again, "names": m.function_names,
                  "module": repr(m), "function": repr(m.lookup_function("f"))}
    """,
    "python_module_imported_by_a_program": """
        calls = []
        class Ext:
            def __init__(self, iface):
                self.count = 0
            def add_one(self, a):
                self.count += 1
                calls.append(self.count)
                return a + 1
            def mix(self, a, b):
                return b * 3, a - 1
            def scale(self, x, c):
                view = x.deref(ireert.HalBufferView)
                dtype = ireert.HalElementType.map_to_dtype(view.element_type)
                data = np.array(view.map().asarray(view.shape, dtype)) * c
                device = ireert.get_device("local-task")
                out = device.allocator.allocate_buffer_copy(
                    memory_type=ireert.MemoryType.DEVICE_LOCAL, allowed_usage=ireert.BufferUsage.DEFAULT,
                    device=device, buffer=data, element_type=view.element_type)
                return out.ref
        iface = ireert.PyModuleInterface("pyext", Ext)
        iface.export("add_one", "0i_i", Ext.add_one)
        iface.export("mix", "0IF_FI", Ext.mix)
        iface.export("scale", "0rf_r", Ext.scale)
        config = ireert.Config("local-task")
        program = ireert.VmModule.mmap(config.vm_instance, PYDATA + "/py_module.vmfb")
        ctx = ireert.SystemContext(vm_modules=[iface.create(), program], config=config)
        x = np.arange(4, dtype=np.float32)
        wide = ctx.modules.module.wide(7, 0.25)
        RESULT = {
            "main": ctx.modules.module.main(6),
            "count": ctx.modules.module.count(10),
            "wide": list(wide),
            "tensors": ctx.modules.module.tensors(x).to_host(),
            "calls": len(calls),
        }
    """,
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_runs_on_irvm_compat(name):
    run_here(SCRIPTS[name])


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_gives_what_iree_runtime_gives(name):
    ours = run_here(SCRIPTS[name])
    theirs = run_in_iree(SCRIPTS[name])
    assert_same(ours, theirs)


def test_compat_results_are_iree_runtimes():
    # What the scripts give on irvm.compat, written out: py_module_test.py's
    # expectations (its "List[42]" repr included).
    assert run_here(SCRIPTS["empty_module_lifecycle"]) == {
        "before": False,
        "after": True,
        "alive": False,
        "destroyed": True,
        "texts": [
            "<iree.runtime.PyModuleInterface 'test1'>",
            "<iree.runtime.PyModuleInterface 'test1' initialized>",
            "<iree.runtime.PyModuleInterface 'test1' destroyed>",
        ],
        "module": "<VmModule test1 : []>",
    }
    assert run_here(SCRIPTS["multi_module_instance"]) == {
        "count": 2,
        "given": True,
        "alive_with_a_context": True,
        "destroyed": True,
    }
    void = run_here(SCRIPTS["void_function_export"])
    assert void["messages"] == ["Hello! Your number is 0", "Hello! Your number is 1"]
    assert void["destroyed"] and void["function"] == "<VmFunction say_hello(0v), reflection = {}>"
    assert run_here(SCRIPTS["python_exception"]) == {"raised": (True, True), "again": True, "destroyed": True}
    primitive = run_here(SCRIPTS["primitive_arguments"])
    assert primitive["values"] == "[(42, 43), (42, 43), (2.0, 4.0), (2.0, 4.0)]"
    assert run_here(SCRIPTS["primitive_results"])["results"] == {
        "do_it_i32": "<VmVariantList(2): [42, 43]>",
        "do_it_i64": "<VmVariantList(2): [42, 43]>",
        "do_it_f32": "<VmVariantList(2): [2.000000, 4.000000]>",
        "do_it_f64": "<VmVariantList(2): [2.000000, 4.000000]>",
        "do_it_unary_i32": "<VmVariantList(1): [42]>",
    }
    refs = run_here(SCRIPTS["ref_arguments"])
    assert refs["values"] == "[(<VmVariantList(1): [42]>, <VmVariantList(1): [84]>)]"
    assert refs["kinds"] == [(True, False, True)]
    assert run_here(SCRIPTS["ref_results"])["results"] == "<VmVariantList(2): [List[42], List[1.500000, 84]]>"
    program = run_here(SCRIPTS["python_module_imported_by_a_program"])
    assert program["main"] == 49 and program["count"] == 10 and program["calls"] == 11
    assert program["wide"] == [12, 1.5]
    np.testing.assert_array_equal(program["tensors"], [0, 3, 6, 9])
