"""Guards for Numba's disk cache, which only checks each kernel file's own text."""

import hashlib
from pathlib import Path

import pytest

from minitorch.backends import scalar_ops
from minitorch.backends.cpu import elementwise

pytestmark = pytest.mark.kernels


def test_elementwise_kernels_carry_the_hash_of_scalar_ops():
    digest = hashlib.sha256(Path(scalar_ops.__file__).read_bytes()).hexdigest()
    assert elementwise.SCALAR_OPS_SHA256 == digest, (
        "scalar_ops.py changed: set SCALAR_OPS_SHA256 in minitorch/backends/cpu/elementwise.py "
        f"to {digest!r} so that Numba recompiles the kernels that inline it")
