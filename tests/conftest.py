"""Shared test setup.

The CUDA simulator must be switched on before ``numba.cuda`` is first
imported, so it is set here, before any test module imports minitorch.
Without a GPU every CUDA kernel then runs on Numba's simulator (one Python
thread per GPU thread: slow, so tests on ``cuda`` keep their tensors tiny).
Where a GPU is lent, run with ``NUMBA_ENABLE_CUDASIM=0`` to compile and run
the kernels for real (see docs/cuda.md).
"""

import os
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# Every CUDA launch of the suite must be listed in tests/cuda_signatures.json, which
# tests/test_cuda_ptx.py compiles for real GPUs (backends/cuda/launch.py checks each launch;
# tools/cuda_signatures.py records the list again).  Not in a student's edition
# (COURSE_EDITION.json): a student's kernels are compiled by their own tests.
_ROOT = Path(__file__).resolve().parents[1]
if (_ROOT / "tests" / "cuda_signatures.json").is_file() \
        and not (_ROOT / "COURSE_EDITION.json").is_file():
    os.environ.setdefault("MINITORCH_CUDA_SIGNATURES", str(_ROOT / "tests" / "cuda_signatures.json"))

import pytest  # noqa: E402
from hypothesis import HealthCheck, Phase, settings  # noqa: E402

# Hypothesis profiles.  "ci" (the default) keeps hypothesis' usual budget of 100 examples
# for tests that set none, and is derandomized so that every CI run draws the same examples
# (a failure reproduces on the next run).  "long" is for bug hunting by hand, for example
# `pytest -n0 --hypothesis-profile=long tests/test_fuzz_torch.py` (thousands of random
# programs compared with PyTorch).  Tests that pass their own max_examples keep them.
# The op tests' ``default_device`` fixture is function-scoped on purpose: it sets the
# device once for all of a test's examples, so hypothesis' check against such fixtures is off.
settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None,
                          print_blob=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.register_profile("long", max_examples=5000, derandomize=False, deadline=None,
                          print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.function_scoped_fixture])
settings.load_profile("ci")
# "course-edition": tests/test_course_edition.py runs the course's task tests in student
# editions only to see which pass and which fail with a stub's NotImplementedError.  The
# examples are those of "ci"; a failing test is reported at its first failing example,
# without the shrinking (and explaining) that would take most of the run's time.
settings.register_profile("course-edition", parent=settings.get_profile("ci"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target],
                          print_blob=False)
# "course": `minitorch course test` (a student's run): the examples of "ci", shrunk to the
# smallest failing one, without the reproduce blob (the run is derandomized: it reproduces).
settings.register_profile("course", parent=settings.get_profile("ci"), print_blob=False)

# The course's pytest options: --task M.N (run one task's tests) and --course-report FILE.
pytest_plugins = ["minitorch.course.pytest_plugin"]

from device_checks import cuda_usable  # noqa: E402  (imports minitorch: after the line above)

import minitorch  # noqa: E402


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request) -> str:
    """The device an op test runs on: every test that asks for it runs on ``cpu`` and on
    ``cuda`` (skipped where neither a GPU nor the simulator is available)."""
    if request.param == "cuda" and not cuda_usable():
        pytest.skip("no CUDA device and no CUDA simulator (set NUMBA_ENABLE_CUDASIM=1)")
    return request.param


#: Hypothesis examples per test on ``cuda``.  The simulator runs each GPU thread as a
#: Python thread (about a millisecond per launch), the CPU case of the same test draws
#: its full count, and both devices run the same kernel bodies
#: (minitorch/backends/shared_bodies.py), so on ``cuda`` a few examples cover the launches.
CUDA_EXAMPLES = 3


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run a hypothesis test's ``cuda`` case with at most :data:`CUDA_EXAMPLES` examples."""
    callspec = getattr(pyfuncitem, "callspec", None)
    test = getattr(pyfuncitem.obj, "__func__", pyfuncitem.obj)
    if callspec is None or callspec.params.get("device") != "cuda" \
            or not getattr(test, "is_hypothesis_test", False):
        yield
        return
    from hypothesis import settings

    chosen = test._hypothesis_internal_use_settings     # what @settings gave the test
    test._hypothesis_internal_use_settings = settings(
        chosen, max_examples=min(chosen.max_examples, CUDA_EXAMPLES))
    try:
        yield
    finally:
        test._hypothesis_internal_use_settings = chosen


@pytest.fixture
def default_device(device):
    """Tensors made without ``device=`` go to ``device`` (``cpu``, then ``cuda``: the
    ``device`` fixture above) for the length of a test."""
    minitorch.set_default_device(device)
    try:
        yield device
    finally:
        minitorch.set_default_device("cpu")


def pytest_configure(config) -> None:
    """Tests under tests/course run in one process unless ``-n`` is on the command line.

    The suite's ``-n 2`` (addopts) pays two workers' start-up, each importing the
    engine and loading its kernels: for a module's task tests, the command the module
    pages give, that is most of the run (44.6 s against 7 s in one process for module 1).
    (This runs before pytest-xdist's own ``pytest_configure``, which starts the workers.)
    """
    from pathlib import Path

    if any(a.startswith("-n") or a.startswith("--numprocesses") or a == "--dist"
           for a in map(str, config.invocation_params.args)):
        return
    course = (Path(__file__).parent / "course").resolve()
    here = Path(config.invocation_params.dir)
    paths = [(here / str(a).split("::")[0]).resolve() for a in config.args]
    if paths and all(p == course or course in p.parents for p in paths) \
            and getattr(config.option, "numprocesses", None):
        config.option.numprocesses = 0
        config.option.dist = "no"
        config.option.tx = []


#: Test files whose tests take a minute or more each (measured in CI: the course's edition
#: checks 40-210 s, the docs build 70 s).
LONGEST = ("tests/test_course_edition.py", "tests/test_docs.py",
           "tests/test_cuda_ptx.py::test_every_kernel_compiles_for")


def _fail_with_the_device_rule() -> None:
    pytest.fail("an op test runs on cpu and on cuda (it takes the `device` or `default_device` "
                "fixture), or says why not with @pytest.mark.cpu_only(\"why\") (docs/cuda.md)",
                pytrace=False)


def pytest_collection_modifyitems(config, items) -> None:
    """Start each of the two workers on half of the longest tests.

    The suite runs on two workers with pytest-xdist's work stealing (``--dist
    worksteal`` in pyproject.toml's addopts): the first worker to start takes
    the first half of the collection, the other the second half, and a worker
    that runs out takes the later half of the other's queue.  So the long tests
    go at the head of each half, alternately, and the short tests behind them
    are what moves between workers at the end: neither worker waits long for
    the other.  (Every worker collects the same order, as pytest-xdist requires.)

    First, an op test that neither runs on both devices nor says why not
    (``device_checks.not_on_both_devices``) is made to fail with the rule.
    """
    from device_checks import not_on_both_devices

    refused = set(not_on_both_devices(items))
    for item in items:
        if item.nodeid in refused:
            item.runtest = _fail_with_the_device_rule
    long = [item for item in items if item.nodeid.startswith(LONGEST)]
    if not long or len(long) == len(items):
        return
    short = [item for item in items if not item.nodeid.startswith(LONGEST)]
    first = long[0::2]
    cut = max(0, len(items) // 2 - len(first))
    items[:] = first + short[:cut] + long[1::2] + short[cut:]
