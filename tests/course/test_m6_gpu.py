"""Course module 6, the GPU: map and zip as ``numba.cuda`` kernels, on Numba's simulator.

``tests/conftest.py`` switches the simulator on (``NUMBA_ENABLE_CUDASIM=1``)
before ``numba.cuda`` is imported, so these run on any machine; with a GPU,
``NUMBA_ENABLE_CUDASIM=0`` runs them for real.  The launches are tiny: the
simulator runs each GPU thread as a Python thread.
"""

from __future__ import annotations

import numpy as np
import pytest

from device_checks import cuda_usable

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda_usable(), reason="no CUDA device and no simulator")]


def _kernels():
    from minitorch.backends import scalar_ops
    from minitorch.backends.cuda import elementwise
    return scalar_ops, elementwise


@pytest.mark.task("6.1")
def test_gpu_map_covers_every_element_with_a_grid_stride_loop():
    ops, ew = _kernels()
    a = np.linspace(-1, 1, 10)
    out = np.zeros(12)
    ew.unary_contiguous[2, 3](ops.EXP, a, 0, 1, out, 1, 10, 0.0, 0.0)   # 6 threads, 10 items
    np.testing.assert_allclose(out[1:11], np.exp(a))
    assert out[0] == 0 and out[11] == 0


@pytest.mark.task("6.2")
def test_gpu_zip_with_runs_and_a_repeated_value():
    ops, ew = _kernels()
    a, b = np.arange(8.0), np.array([0.0, 10.0])
    out = np.zeros(8)
    ew.arith_contiguous[2, 2](ops.ADD, a, 0, 1, b, 1, 0, out, 0, 8)     # b[1] repeated
    np.testing.assert_allclose(out, a + 10.0)
    ew.arith_contiguous[1, 4](ops.MUL, a, 2, 1, a, 0, 1, out, 0, 6)     # a[2:8] * a[0:6]
    np.testing.assert_allclose(out[:6], a[2:8] * a[:6])


@pytest.mark.task("6.3")
def test_gpu_strided_zip_of_a_transpose_and_a_broadcast_row():
    ops, ew = _kernels()
    a = np.arange(6.0)                   # read as (3, 2) transposed: strides (1, 3)
    b = np.array([100.0, 200.0])         # a row broadcast down: strides (0, 1)
    out = np.zeros(6)
    ew.arith_strided[2, 2](ops.ADD, a, 0, (1, 3), b, 0, (0, 1), out, 0, (2, 1), (3, 2), 6)
    expect = a.reshape(2, 3).T + b
    np.testing.assert_allclose(out.reshape(3, 2), expect)
