"""The package's shape: stubs and py.typed ship beside the module, every public name is typed
and documented."""

import ast
from pathlib import Path

import simdup
import simdup.compat


def stub_names(path):
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):  # re-exports: `from .client import Client as Client`
            names.update(a.asname for a in node.names if a.asname == a.name)
    return names


def test_stubs_and_py_typed_ship_with_the_module():
    pkg = Path(simdup.__file__).parent
    assert (pkg / "py.typed").exists()
    assert set(simdup.__all__) <= stub_names(pkg / "__init__.pyi")
    assert set(simdup.compat.__all__) <= stub_names(pkg / "compat.pyi")
    assert list(pkg.glob("_core*.so")) and (pkg / "_core.pyi").exists()


def test_public_names_have_docstrings():
    for name in simdup.__all__:
        obj = getattr(simdup, name)
        if callable(obj):
            assert obj.__doc__, name
    for name in simdup.compat.__all__:
        assert getattr(simdup.compat, name).__doc__, name


def test_version_is_the_project_version():
    import re
    from conftest import SOURCE_DIR
    cmake = (SOURCE_DIR / "CMakeLists.txt").read_text()
    assert simdup.__version__ == re.search(r"project\(simdup VERSION ([0-9.]+)", cmake).group(1)
