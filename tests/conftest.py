"""Shared test setup.

The CUDA simulator must be switched on before ``numba.cuda`` is first
imported, so it is set here, before any test module imports minitorch.
Without a GPU every CUDA kernel then runs on Numba's simulator (one Python
thread per GPU thread: slow, so tests on ``cuda`` keep their tensors tiny).
Where a GPU is lent, run with ``NUMBA_ENABLE_CUDASIM=0`` to compile and run
the kernels for real (see docs/cuda.md).
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pytest  # noqa: E402

# The course's pytest options: --task M.N (run one task's tests) and --course-report FILE.
pytest_plugins = ["minitorch.course.grading"]

from device_checks import cuda_usable  # noqa: E402  (imports minitorch: after the line above)


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request) -> str:
    """The device an op test runs on: every test that asks for it runs on ``cpu`` and on
    ``cuda`` (skipped where neither a GPU nor the simulator is available)."""
    if request.param == "cuda" and not cuda_usable():
        pytest.skip("no CUDA device and no CUDA simulator (set NUMBA_ENABLE_CUDASIM=1)")
    return request.param
