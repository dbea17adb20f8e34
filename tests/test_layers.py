"""The package's structure: layers import one way, no import cycles, ops declared once.

These are the promises of the README's "How it is built" table, checked on
every run so that they cannot silently break again.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "minitorch"


def test_layers_contract_holds():
    """import-linter's layers contract (pyproject.toml): each layer imports only those below."""
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def _module_graph() -> dict:
    import grimp
    graph = grimp.build_graph("minitorch", include_external_packages=False)
    return {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}


def test_no_import_cycles():
    """No module reaches itself through imports (Tarjan's strongly connected components)."""
    graph = _module_graph()
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    cycles: list = []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


def _local_package_imports(path: pathlib.Path) -> list:
    """Function-local ``from .x import y`` / ``import minitorch...`` statements in a file."""
    tree = ast.parse(path.read_text())
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                relative = isinstance(node, ast.ImportFrom) and node.level > 0
                absolute = (isinstance(node, ast.ImportFrom) and node.level == 0
                            and (node.module or "").startswith("minitorch")) or (
                    isinstance(node, ast.Import)
                    and any(a.name.startswith("minitorch") for a in node.names))
                if relative or absolute:
                    found.append(node.lineno)
    return sorted(set(found))


def test_function_local_imports_say_why():
    """A function-local import of the package's own modules carries a comment saying why.

    Imports belong at the top of a module; inside a function they usually dodge
    a cycle the layers should not have.  The few legitimate ones (an optional
    dependency, a heavy module only one command needs) say so in a comment on
    the line or the line above.
    """
    unexplained = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().split("\n")
        for lineno in _local_package_imports(path):
            here, above = lines[lineno - 1], lines[lineno - 2]
            if "#" not in here and not above.strip().startswith("#"):
                unexplained.append(f"{path.relative_to(ROOT)}:{lineno}: {here.strip()}")
    assert not unexplained, "function-local imports without a reason:\n" + "\n".join(
        unexplained)


def test_every_op_form_is_bound():
    """Each op declared in ops/registry.py is reachable as PyTorch names it."""
    import minitorch
    from minitorch.ops import registry
    for name, fn in registry.FUNCTIONS.items():
        assert getattr(minitorch, name) is fn, name
    for name, fn in registry.METHODS.items():
        bound = getattr(minitorch.Tensor, name)
        # a method written in Tensor's class body may refine a declared op (``where``)
        assert bound is fn or name in vars(minitorch.Tensor), name
    for name in registry.INPLACE:
        assert callable(getattr(minitorch.Tensor, name + "_")), name + "_"


def test_declare_refuses_a_second_op_under_one_name():
    from minitorch.ops.registry import declare

    def exp(x):      # a different function under an existing public name
        return x
    with pytest.raises(ValueError, match="declared twice"):
        declare(exp)
