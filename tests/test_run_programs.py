"""``minitorch run prog.py``: unmodified PyTorch programs on minitorch (issue 19, item 2).

Five PyTorch programs of the usual kinds live in ``tests/programs/`` (a
regression with a DataLoader, an MNIST CNN, a character-level LSTM, a small
transformer language model, custom autograd Functions).  Each runs here the
way a user runs it, ``minitorch run prog.py`` in a subprocess, and must
succeed and print sane numbers (losses that fall, accuracy above chance,
gradients equal to NumPy's).

Where PyTorch is installed the same files also run on PyTorch (in the same
test: minitorch's run is not repeated), and every number they print must
agree.  That comparison means something because the programs are
deterministic given their data: initial weights and training windows are
drawn by NumPy (not by ``torch.manual_seed``, whose streams differ between
the libraries), loaders do not shuffle and dropout is off.  So both libraries
perform the same float32 computation and may differ only by rounding: the
first loss must agree to 1e-5 (one forward pass), every later number to 2e-3
relative (tens of optimizer steps of rounding); in practice they agree to six
or seven significant digits.

Cost, measured warm on the shared 2-core machine under load: the five
programs take 17 s of CPU under minitorch (3-4 s each, about 1.4 s of it
starting Python, minitorch and the command); the PyTorch runs share one
process, about 6 s (one ``import torch`` instead of five); the rest, most of
it in this process, about 5 s.  About 28 s of CPU in all, 22 s without
PyTorch.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import minitorch
from minitorch import run as runner

pytestmark = pytest.mark.data

PROGRAMS = Path(__file__).resolve().parent / "programs"
HAVE_TORCH = importlib.util.find_spec("torch") is not None
# Quiet threads: the suite runs on two workers of a two-core machine.
ENV = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def minitorch_command() -> list[str]:
    """The installed ``minitorch`` command (the user's door), next to this Python."""
    script = Path(sys.executable).with_name("minitorch")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "minitorch.cli"]       # a checkout without the script


def minitorch_run(program: Path | str, *args: str, cwd: Path | None = None
                  ) -> subprocess.CompletedProcess:
    return subprocess.run([*minitorch_command(), "run", str(program), *args], cwd=cwd,
                          capture_output=True, text=True, env=ENV, timeout=600)


NUMBER = r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"


def results(stdout: str) -> dict[str, list[float]]:
    """``{"first loss": [3.3], "epoch 1": [1.98], ...}``: each printed ``label: numbers`` line.

    The label is the text before the first colon; the numbers are all those
    after it that stand alone (``result: y = a + b * P3(c + d x)`` gives four: not the 3).
    """
    out = {}
    for line in stdout.splitlines():
        label, sep, rest = line.partition(":")
        if sep and label and not label.startswith("sample"):
            out[label.strip()] = [float(x) for x in re.findall(NUMBER, rest)]
    return out


def samples(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("sample")]


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> Path:
    """The MNIST program's data: 600 training and 300 test digits of minitorch's subset."""
    from minitorch.datasets.mnist import load_mnist_arrays
    x_train, y_train = load_mnist_arrays(train=True)
    x_test, y_test = load_mnist_arrays(train=False)
    path = tmp_path_factory.mktemp("mnist") / "digits.npz"
    np.savez(path, x_train=x_train[:600], y_train=y_train[:600], x_test=x_test[:300],
             y_test=y_test[:300])
    return path


def program_args(name: str, digits: Path) -> list[str]:
    return [str(digits)] if name == "mnist_cnn" else []


# ---------------------------------------------------------------------------
# the five programs: sane results under minitorch run
# ---------------------------------------------------------------------------
def check_regression(r: dict) -> None:
    epochs = [r[f"epoch {i}"][0] for i in range(1, 9)]
    assert epochs[-1] < epochs[0] / 5, epochs
    assert r["final test mse"][0] < r["initial test mse"][0] / 10, r
    assert r["final test mse"][0] < 0.2, r                # noise alone is 0.0025


def check_mnist_cnn(r: dict) -> None:
    assert abs(r["first batch loss"][0] - math.log(10)) < 0.3, r     # near chance at first
    assert r["final train loss"][0] < r["first batch loss"][0] / 2, r
    assert 0.6 < r["test accuracy"][0] <= 1.0, r           # chance is 0.1
    assert 0 < r["test loss"][0] < 1.5, r


def check_language_model(r: dict) -> None:
    uniform = r["uniform loss"][0]
    assert abs(r["first loss"][0] - uniform) < 0.3, r      # untrained: near uniform
    assert r["final loss"][0] < 0.7 * r["first loss"][0], r


def check_custom_function(r: dict) -> None:
    assert r["final loss"][0] < r["first loss"][0] / 3, r
    a, b, c, d = r["result"]
    assert abs(a) < 1e-3 and abs(c) < 1e-3 and b < -1 and 0 < d < 0.3, r
    assert r["gradcheck P3"] == [] and r["gradcheck ScaledSoftplus"] == []  # "True", below
    w = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(r["softplus grad"], 1 / (1 + np.exp(-3 * w)), atol=2e-6)


PROGRAM_CHECKS = {
    "regression": check_regression,
    "mnist_cnn": check_mnist_cnn,
    "char_lstm": check_language_model,
    "transformer_lm": check_language_model,
    "custom_function": check_custom_function,
}


@pytest.mark.parametrize("name", list(PROGRAM_CHECKS))
def test_program_runs_under_minitorch_run(name, digits, request):
    """Each program through the user's door; where PyTorch is installed, its numbers too.

    One subprocess per test and no shared fixture for minitorch's runs: the
    suite's two workers may split these tests, and a module-scoped fixture
    would then run all five programs on both.
    """
    res = minitorch_run(PROGRAMS / f"{name}.py", *program_args(name, digits))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    PROGRAM_CHECKS[name](results(res.stdout))
    if name == "custom_function":
        assert "gradcheck P3: True" in res.stdout and "ScaledSoftplus: True" in res.stdout
    if HAVE_TORCH:
        compare_with_pytorch(res.stdout, request.getfixturevalue("torch_outputs")[name], name)


# ---------------------------------------------------------------------------
# the same files on PyTorch: the same numbers
# ---------------------------------------------------------------------------
TORCH_DRIVER = """
import contextlib, io, json, runpy, sys
import torch
torch.set_num_threads(1)
for path, *args in json.loads(sys.argv[1]):
    sys.argv = [path, *args]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(path, run_name="__main__")
    print(json.dumps([path, out.getvalue()]))
"""


@pytest.fixture(scope="module")
def torch_outputs(digits) -> dict[str, str]:
    """Each program's stdout on real PyTorch, as ``python prog.py`` runs it.

    One process runs all five (one ``import torch`` instead of five, about 8 s
    of CPU saved); each still runs as ``__main__`` with its own ``sys.argv``.
    """
    runs = [[str(PROGRAMS / f"{name}.py"), *program_args(name, digits)]
            for name in PROGRAM_CHECKS]
    res = subprocess.run([sys.executable, "-c", TORCH_DRIVER, json.dumps(runs)],
                         capture_output=True, text=True, env=ENV, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return {Path(path).stem: out for path, out in map(json.loads, res.stdout.splitlines())}


def compare_with_pytorch(ours: str, theirs_out: str, name: str) -> None:
    """Every printed number of minitorch's run against PyTorch's run of the same file."""
    mine, theirs = results(ours), results(theirs_out)
    PROGRAM_CHECKS[name](theirs)           # the checks hold for PyTorch too
    assert mine.keys() == theirs.keys()
    for label in theirs:
        tight = label.startswith("first")
        np.testing.assert_allclose(mine[label], theirs[label], rtol=1e-5 if tight else 2e-3,
                                   atol=1e-5, err_msg=label)
    assert samples(ours) == samples(theirs_out)


def test_results_parser_reads_labels_and_numbers():
    out = "first loss: 3.25\nepoch 2: train mse 1e-3\nresult: y = -0.5 + 2 * P3(.1 + 3. x)\n" \
          "sample: 'a: 1'\nno colon here 5\n"
    assert results(out) == {"first loss": [3.25], "epoch 2": [1e-3],
                            "result": [-0.5, 2.0, 0.1, 3.0]}


# ---------------------------------------------------------------------------
# how the program runs: __main__, argv, its folder on sys.path, no real PyTorch
# ---------------------------------------------------------------------------
SEMANTICS = """
import os, sys
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
import torch.optim.lr_scheduler
from torch.optim.lr_scheduler import StepLR
import torch.autograd, torch.linalg, torch.cuda.amp
from torch.autograd import Function
import helper                                  # a module beside the program
import minitorch
print("name", __name__)
print("argv", sys.argv[1:])
print("argv0", os.path.basename(sys.argv[0]))
print("path0", sys.path[0])
print("file", os.path.isabs(__file__))
print("same", torch is minitorch, nn is minitorch.nn, F is minitorch.nn.functional,
      DataLoader is minitorch.utils.data.DataLoader, StepLR is minitorch.optim.lr_scheduler.StepLR,
      Function is minitorch.autograd.Function, torch.cuda.amp is minitorch.cuda.amp,
      helper.VALUE)
real = [m for m, mod in list(sys.modules.items())
        if os.sep + "torch" + os.sep in (getattr(mod, "__file__", None) or "")]
print("real torch modules", len(real))
print("nn spec", minitorch.nn.__spec__.name, minitorch.nn.__name__)
sys.exit(int(sys.argv[-1]))
"""


def write_program(folder: Path, text: str, name: str = "prog.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def test_python_dash_m_runs_a_program_as_python_would(tmp_path):
    """__main__, sys.argv, the program's folder first on sys.path, its exit status; torch and
    every torch.* are minitorch's own modules; not one module of real PyTorch is loaded."""
    (tmp_path / "sub").mkdir()
    prog = write_program(tmp_path / "sub", SEMANTICS)
    (prog.parent / "helper.py").write_text("VALUE = 42\n")
    res = subprocess.run([sys.executable, "-m", "minitorch.run", str(prog), "--lr", "0.1",
                          "-x", "3"], capture_output=True, text=True, env=ENV, timeout=600,
                         cwd=tmp_path)
    assert res.returncode == 3, res.stdout + res.stderr
    lines = dict(line.split(" ", 1) for line in res.stdout.splitlines())
    assert lines["name"] == "__main__"
    assert lines["argv"] == "['--lr', '0.1', '-x', '3']"
    assert lines["argv0"] == "prog.py"
    assert lines["path0"] == str(prog.parent)
    assert lines["file"] == "True"
    assert lines["same"] == "True True True True True True True 42"
    assert lines["real"] == "torch modules 0"
    assert lines["nn"] == "spec minitorch.nn minitorch.nn"   # minitorch's modules untouched


def test_missing_name_through_the_command(tmp_path):
    """The real door: one line on stderr, exit status 1, no traceback."""
    prog = write_program(tmp_path, """
        import torch
        print("before")
        spectrum = torch.fft.rfft(torch.ones(8))
    """)
    res = minitorch_run(prog, cwd=tmp_path)
    assert res.returncode == 1
    assert res.stdout == "before\n"
    assert res.stderr.splitlines() == [
        f"Error: {prog}, line 4: torch.fft is not in minitorch; docs/coverage.md lists the "
        "PyTorch names it has"]


def test_command_line_mistakes_get_one_line():
    res = CliRunner().invoke(_cli(), ["run", "no/such/prog.py", "--epochs", "3"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == ["Error: no/such/prog.py: no such file"]
    res = CliRunner().invoke(_cli(), ["run"])
    assert res.exit_code == 2 and "Missing argument 'PROGRAM.py'" in res.output
    assert "Traceback" not in res.output


def _cli():
    from minitorch.cli import main
    return main


def test_python_dash_m_mistakes(tmp_path, capsys):
    assert runner.main([]) == 2
    assert "usage: minitorch run PROGRAM.py" in capsys.readouterr().err
    assert runner.main([str(tmp_path / "nope.py")]) == 2
    assert capsys.readouterr().err == f"Error: {tmp_path / 'nope.py'}: no such file\n"
    assert runner.main([str(tmp_path)]) == 2
    assert "is a directory without a __main__.py" in capsys.readouterr().err
    assert runner.main(["--help"]) == 0
    assert "usage" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# in this process: the finder, the one-line messages and Python's tracebacks
# ---------------------------------------------------------------------------
def run_here(tmp_path: Path, text: str, *args: str) -> int:
    return runner.run_program(str(write_program(tmp_path, text)), list(args))


def test_finder_maps_torch_paths_to_the_same_minitorch_modules():
    with runner.torch_is_minitorch():
        import torch
        import torch.nn.functional as F
        import torch.utils.data
        from torch.optim import lr_scheduler
        import torch.cpu
        assert torch is minitorch
        assert F is minitorch.nn.functional
        assert torch.utils.data is minitorch.utils.data
        assert lr_scheduler is minitorch.optim.lr_scheduler
        assert sys.modules["torch.cpu"] is minitorch.cpu           # a namespace made in code
        assert sys.modules["torch.nn.functional"] is minitorch.nn.functional
        with pytest.raises(ModuleNotFoundError) as e:
            import torch.distributions  # noqa: F401
        assert e.value.name == "torch.distributions"
        with pytest.raises(ModuleNotFoundError) as e:
            import torch.nn.utils.rnn  # noqa: F401     (minitorch.nn.utils is no package)
        assert e.value.name == "torch.nn.utils.rnn"
    # Outside, nothing of it is left behind.
    assert not any(isinstance(f, runner.TorchAliasFinder) for f in sys.meta_path)
    assert sys.modules.get("torch") is not minitorch
    assert "torch.nn.functional" not in sys.modules or \
        sys.modules["torch.nn.functional"] is not minitorch.nn.functional
    assert minitorch.nn.__spec__.name == "minitorch.nn"


def test_a_name_that_is_no_module_stays_what_it_is():
    """import torch.device fails as in PyTorch, and minitorch.device is still the class
    (importing the file device.py would have replaced it on the package)."""
    with runner.torch_is_minitorch():
        for name in ("torch.device", "torch.tensor", "torch.func.vmap"):
            with pytest.raises(ModuleNotFoundError, match="not a module") as e:
                importlib.import_module(name)
            assert e.value.name == name
            assert runner.missing_name_message(e.value) is None   # there: no "missing" line
    assert isinstance(minitorch.device, type) and callable(minitorch.tensor)
    assert minitorch.tensor([1.0]).shape == (1,)


def test_finder_lets_other_names_pass():
    finder = runner.TorchAliasFinder()
    for name in ("torchvision", "torch_geometric", "numpy", "minitorch.nn"):
        assert finder.find_spec(name) is None


def test_finder_does_not_hide_a_missing_dependency(monkeypatch):
    """A minitorch module that exists but needs a missing package says which package."""
    real = runner.importlib.import_module

    def fake(name, package=None):
        if name == "minitorch.distributed":
            raise ModuleNotFoundError("No module named 'mpi4py'", name="mpi4py")
        return real(name, package)
    monkeypatch.setattr(runner.importlib, "import_module", fake)
    with pytest.raises(ModuleNotFoundError) as e:
        runner.minitorch_module("torch.distributed")
    assert e.value.name == "mpi4py"


@pytest.mark.parametrize("code, name, kind", [
    ("import torch.distributions", "torch.distributions", " (no such module)"),
    ("from torch.nn.utils.rnn import pad_sequence", "torch.nn.utils.rnn", " (no such module)"),
    ("from torch import fft", "torch.fft", ""),
    ("from torch.nn import NoSuchLayer", "torch.nn.NoSuchLayer", ""),
    ("import torch\nx = torch.fft.rfft(torch.ones(4))", "torch.fft", ""),
    ("import torch.nn.functional as F\nF.no_such_loss", "torch.nn.functional.no_such_loss", ""),
    ("import torch\ntorch.ones(2).lgamma()", "torch.Tensor.lgamma", ""),
    ("import torch\ntorch.Tensor.no_such_method", "torch.Tensor.no_such_method", ""),
    ("import torch\ntorch.nn.Module.no_such_classmethod",
     "torch.nn.Module.no_such_classmethod", ""),
    ("import torch\nfrom torch.utils.data import DataLoader\nDataLoader.no_such",
     "torch.utils.data.DataLoader.no_such", ""),
])
def test_a_missing_pytorch_name_ends_in_one_line(tmp_path, capsys, code, name, kind):
    assert run_here(tmp_path, "print('ran')\n" + code) == 1
    out = capsys.readouterr()
    assert out.out == "ran\n"
    line = code.count("\n") + 2
    assert out.err == (f"Error: {tmp_path / 'prog.py'}, line {line}: {name} is not in "
                       f"minitorch{kind}; docs/coverage.md lists the PyTorch names it has\n")


@pytest.mark.parametrize("code, error", [
    # The program's own mistakes keep Python's traceback, not the one line:
    ("import torch\nclass Net(torch.nn.Module):\n    pass\nNet().fc3", "AttributeError"),
    ("import torch\ntorch.nn.Linear(2, 2).no_such_attribute", "AttributeError"),
    ("import no_such_package_anywhere", "ModuleNotFoundError"),
    ("import torch\nraise ValueError('boom')", "ValueError: boom"),
    ("import torch.device", "ModuleNotFoundError: No module named 'torch.device'"),
    ("import torch\ntorch.ones(2, 3) @ torch.ones(2, 3)", "RuntimeError"),
])
def test_other_errors_keep_pythons_traceback(tmp_path, capsys, code, error):
    assert run_here(tmp_path, code) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n"), err
    assert error in err.splitlines()[-1]
    # From the program's first frame on, as python prog.py shows it: no frame of the runner.
    assert err.splitlines()[1].startswith(f'  File "{tmp_path / "prog.py"}", line ')
    assert "runpy" not in err and "minitorch/run.py" not in err


def test_a_missing_name_inside_minitorch_is_a_bug_with_a_traceback(tmp_path, capsys,
                                                                    monkeypatch):
    """An AttributeError raised in minitorch's own code is not blamed on the program."""
    def broken(self, *args, **kwargs):
        return self.no_such_internal_helper
    monkeypatch.setattr(minitorch.nn.Linear, "forward", broken)
    assert run_here(tmp_path, "import torch\ntorch.nn.Linear(2, 2)(torch.ones(2))") == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and "no_such_internal_helper" in err


def test_syntax_error_and_exit_status(tmp_path, capsys):
    assert run_here(tmp_path, "x = (\n") == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "SyntaxError" in err
    assert run_here(tmp_path, "print('ok')") == 0
    with pytest.raises(SystemExit) as e:
        run_here(tmp_path, "import sys\nsys.exit('bad input')")
    assert e.value.code == "bad input"
    assert run_here(tmp_path, "raise KeyboardInterrupt") == 130


def test_run_program_puts_argv_and_path_back(tmp_path):
    argv, path = list(sys.argv), list(sys.path)
    assert run_here(tmp_path, "import sys\nassert sys.argv[1:] == ['a', 'b']\n"
                    "assert __name__ == '__main__'", "a", "b") == 0
    assert sys.argv == argv and sys.path == path


def test_a_directory_runs_its_main(tmp_path, capsys):
    """minitorch run src/ runs src/__main__.py, as python src/ does, with src/ on sys.path."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "helper.py").write_text("VALUE = 7\n")
    (src / "__main__.py").write_text("import helper\nfrom torch import nn\n"
                                     "print(helper.VALUE, nn.Linear.__module__)\n"
                                     "raise ValueError('x')\n")
    path = list(sys.path)
    assert runner.run_program(str(src)) == 1
    out = capsys.readouterr()
    assert out.out == "7 minitorch.nn.modules.linear\n"
    assert out.err.splitlines()[1] == f'  File "{src / "__main__.py"}", line 4, in <module>'
    assert sys.path == path
