"""``minitorch bench``: it runs and its JSON has the documented shape.

Tiny sizes (the hidden ``--tiny`` option) keep this to a few seconds.  No
test here looks at a time: speed is measured by the benchmarks, never
asserted in a unit test.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from minitorch import bench
from minitorch.cli import main

pytestmark = pytest.mark.data


def _run(*args: str) -> dict:
    result = CliRunner().invoke(main, ["bench", "--tiny", "--quick", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_quick_json_has_every_quick_workload_and_library():
    report = _run()
    assert set(report) == {"machine", "threads", "settings", "libraries", "torch_missing",
                           "results", "startup"}
    assert report["libraries"][:2] == ["minitorch", "numpy"]
    assert ("torch" in report["libraries"]) == (report["torch_missing"] is None)
    assert report["startup"] is None
    assert report["settings"]["quick"] and report["settings"]["tiny"]
    expected = [w.name for w in bench.select(bench.workloads(tiny=True), quick=True)]
    assert [r["name"] for r in report["results"]] == expected
    for r in report["results"]:
        assert r["unit"] == "s" and r["description"]
        assert "minitorch" in r["times"]
        assert set(r["times"]) <= set(report["libraries"])
        assert all(isinstance(t, float) and t > 0 for t in r["times"].values())
        assert set(r["ratios"]) == set(r["times"]) - {"minitorch"}
    by_name = {r["name"]: r for r in report["results"]}
    assert set(by_name["elementwise/add/contiguous"]["times"]) >= {"minitorch", "numpy"}
    assert "numpy" not in by_name["train/lenet"]["times"]       # NumPy has no autograd
    assert set(by_name["matmul/16"]["gflops"]) == set(by_name["matmul/16"]["times"])
    for key in ("minitorch_numba", "numpy_blas"):
        assert report["threads"][key] >= 1


@pytest.fixture
def restore_threads():
    """``--threads`` changes the process's thread counts: put them back for the other tests."""
    import numba
    before = numba.get_num_threads()
    try:
        import torch
        torch_before = torch.get_num_threads()
    except ImportError:
        torch = None
    yield
    numba.set_num_threads(before)
    if torch is not None:
        torch.set_num_threads(torch_before)


def test_filter_no_torch_and_threads(restore_threads):
    report = _run("--filter", "matmul", "--no-torch", "--threads", "1")
    assert report["libraries"] == ["minitorch", "numpy"]
    assert "no-torch" in report["torch_missing"]
    assert [r["name"] for r in report["results"]] == ["matmul/16"]
    assert report["threads"]["minitorch_numba"] == 1


def test_table_output_names_the_ratios():
    result = CliRunner().invoke(main, ["bench", "--tiny", "--quick", "--filter", "add/contig",
                                       "--no-torch"])
    assert result.exit_code == 0, result.output
    assert "elementwise/add/contiguous" in result.stdout
    assert "mt/np" in result.stdout
    assert "PyTorch: left out" in result.stdout


def test_bad_options_are_usage_errors():
    runner = CliRunner()
    result = runner.invoke(main, ["bench", "--tiny", "--filter", "no-such-workload"])
    assert result.exit_code != 0 and "no workload matches" in result.output
    result = runner.invoke(main, ["bench", "--tiny", "--threads", "100000"])
    assert result.exit_code != 0 and "NUMBA_NUM_THREADS" in result.output


def test_numpy_conv2d_reference_matches_minitorch():
    import numpy as np

    import minitorch
    x, w, b = bench._random((2, 3, 9, 9), 1), bench._random((4, 3, 3, 3), 2), bench._random((4,))
    expected = minitorch.nn.functional.conv2d(minitorch.from_numpy(x), minitorch.from_numpy(w),
                                              minitorch.from_numpy(b), padding=1).numpy()
    np.testing.assert_allclose(bench.numpy_conv2d(x, w, b, 1), expected, rtol=1e-4, atol=1e-4)


def test_startup_script_is_valid_python():
    compile(bench.startup_script("minitorch", cache_dir="", print_json=False), "<startup>",
            "exec")
