"""The committed stubs (minitorch/tensor.pyi, minitorch/__init__.pyi) are what tools/make_stubs.py writes.

Cost: about 1 s (the generator walks the registry of an imported minitorch; the
stubs are parsed, not imported).  The type-check test runs only where mypy or
pyright is installed (neither is a test dependency; ~30 s cold with mypy) and is
skipped elsewhere.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import minitorch
from minitorch.ops.registry import FUNCTIONS, INPLACE, METHODS

ROOT = Path(__file__).resolve().parents[1]


def _load_tool():
    spec = importlib.util.spec_from_file_location("make_stubs", ROOT / "tools" / "make_stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_stubs = _load_tool()


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return make_stubs.generate()


def test_committed_stubs_are_fresh(generated):
    for path, text in generated.items():
        committed = (ROOT / path).read_text()
        assert committed == text, (f"{path} is stale: run `python tools/make_stubs.py` "
                                   "and commit it")


def test_check_mode_rejects_a_stale_stub_and_writes_nothing(tmp_path, monkeypatch, capsys):
    (tmp_path / "minitorch").mkdir()
    for path in make_stubs.STUBS:
        shutil.copy(ROOT / path, tmp_path / path)
    monkeypatch.setattr(make_stubs, "OUT_ROOT", tmp_path)
    assert make_stubs.main(["--check"]) == 0
    stale = tmp_path / "minitorch" / "tensor.pyi"
    stale.write_text(stale.read_text().replace("    def exp(", "    def exp_renamed("))
    before = stale.read_text()
    assert make_stubs.main(["--check"]) == 1
    assert "stale: minitorch/tensor.pyi" in capsys.readouterr().err
    assert stale.read_text() == before                  # --check writes nothing
    (tmp_path / "minitorch" / "__init__.pyi").unlink()  # a missing stub is stale too
    assert make_stubs.main(["--check"]) == 1
    assert make_stubs.main([]) == 0                     # writing repairs both
    assert make_stubs.main(["--check"]) == 0


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a stub binds and exports (bound at top level and listed in ``__all__``)."""
    bound, listed = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            bound.update(a.asname or a.name for a in node.names)
        elif (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id == "__all__"):
            listed = set(ast.literal_eval(node.value))
    assert listed <= bound, listed - bound
    return listed


def _method_names(tree: ast.Module, cls: str) -> set[str]:
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    return {n.name for n in node.body if isinstance(n, ast.FunctionDef)}


def test_stubs_hold_every_exported_name_and_declared_op(generated):
    init = ast.parse(generated["minitorch/__init__.pyi"])
    # Submodules that other imports happened to load (minitorch.layout) are left out.
    public = {n for n, v in vars(minitorch).items()
              if not n.startswith("_") and not (isinstance(v, types.ModuleType)
                                                and getattr(v, "__file__", None))}
    public |= {"__version__", "nn", "optim", "linalg", "cuda", "autograd"}
    assert public - _top_level_names(init) == set()
    assert set(FUNCTIONS) - _top_level_names(init) == set()
    methods = _method_names(ast.parse(generated["minitorch/tensor.pyi"]), "Tensor")
    assert set(METHODS) - methods == set()
    assert {n + "_" for n in INPLACE} - methods == set()
    assert "backward" in methods and "__add__" in methods      # the class body's own


def _definitions(text: str) -> list[tuple[str, str, str]]:
    """Each ``Defined in module.name (path)`` line: (module, name, path)."""
    found = []
    for line in text.splitlines():
        line = line.strip().strip('"')
        if line.startswith("Defined in "):
            target, path = line[len("Defined in "):].rstrip(".").split(" (")
            path = path.rstrip(")")
            module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            assert target.startswith(module + "."), (target, path)
            found.append((module, target[len(module) + 1:], path))
    return found


def test_every_op_names_the_file_and_name_that_define_it(generated):
    # Jump-to-definition of t.exp lands on the stub; its docstring names the op itself.
    assert ("Defined in minitorch.ops.elementwise.exp (minitorch/ops/elementwise.py)."
            in generated["minitorch/tensor.pyi"])
    checked = 0
    for text in generated.values():
        for module_name, name, path in _definitions(text):
            assert (ROOT / path).is_file(), path
            module = importlib.import_module(module_name)
            assert Path(module.__file__).resolve() == (ROOT / path).resolve()
            value = module
            for part in name.split("."):                # Tensor.__add__ is nested
                value = getattr(value, part)
            assert callable(value) or isinstance(value, property), (module_name, name)
            checked += 1
    assert checked >= len(FUNCTIONS) + len(METHODS) + len(INPLACE)


def test_annotations_the_stub_cannot_name_become_any():
    spell = make_stubs.annotation
    assert spell("TensorBase | None") == "Tensor | None"
    assert spell("int") == "builtins.int"          # minitorch.int is a dtype
    assert spell("tuple[int, ...]") == "builtins.tuple[builtins.int, ...]"
    assert spell("np.ndarray") == "np.ndarray"
    assert spell("_size") == "Any"                 # a private alias the stub lacks
    assert spell("Sequence[_Thing]") == "Any"
    assert spell("other.module.Type") == "Any"
    assert spell("not valid (") == "Any"


def test_stubs_are_valid_python(generated):
    for path, text in generated.items():
        compile(text, path, "exec")


def _type_checker() -> list[str] | None:
    options = ["--follow-imports=silent", "--no-incremental"]
    if importlib.util.find_spec("mypy") is not None:
        return [sys.executable, "-m", "mypy", *options]
    if shutil.which("mypy"):
        return [shutil.which("mypy"), *options]
    if shutil.which("pyright"):
        return ["pyright"]
    return None


USE = """\
import minitorch as torch

t = torch.ones(3, requires_grad=True)
y: torch.Tensor = t.exp().sum()
y.backward()
z: torch.Tensor = torch.exp(t) + 1
w: torch.Tensor = t.exp_()
d: torch.dtype = torch.float32
b: torch.dtype = torch.bool
m: torch.Tensor = torch.nn.functional.relu(t)

# The CPU backend module keeps the backend protocol (backends/interface.py) for mypy too.
from minitorch.backends.cpu import backend as cpu_backend  # noqa: E402
from minitorch.backends.interface import Backend  # noqa: E402
kernels: Backend = cpu_backend
"""

WRONG = """\
import minitorch as torch

n: int = torch.ones(3).exp()
"""


@pytest.mark.skipif(_type_checker() is None, reason="neither mypy nor pyright is installed")
def test_the_stubs_type_check(tmp_path):
    command = _type_checker()
    (tmp_path / "use.py").write_text(USE)
    (tmp_path / "wrong.py").write_text(WRONG)
    stubs = [str(ROOT / p) for p in make_stubs.STUBS]
    ok = subprocess.run([*command, *stubs, str(tmp_path / "use.py")], cwd=ROOT,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # ... and the check bites: a Tensor is not an int.
    bad = subprocess.run([*command, *stubs, str(tmp_path / "wrong.py")], cwd=ROOT,
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "wrong.py" in bad.stdout, bad.stdout + bad.stderr
