"""README.md's Python example runs and prints what the README shows."""

import re
import subprocess
import sys

from conftest import REPO


def test_readme_python_example_prints_what_the_readme_says():
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown


def test_help_says_what_a_user_needs():
    import irvm

    doc = irvm.load.__doc__
    for word in ("device", "local-sync", "parameters", "fuel", "timeout", "max_memory_bytes", "engine", "GIL", "Ctrl-C"):
        assert word in doc, word
    assert irvm.load.__text_signature__.startswith("(*modules, device=")
    assert "copy=False" in irvm.Function.__doc__


def test_stubs_name_every_public_name():
    import ast

    import irvm

    stub = ast.parse((REPO / "python" / "irvm" / "__init__.pyi").read_text())
    names = {n.name for n in stub.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert set(irvm.__all__) <= names, set(irvm.__all__) - names
