"""The shared kernel bodies, compiled for the CPU.

The per-element and per-row arithmetic of the kernels is written once, in
the device-neutral modules of ``minitorch/backends`` (see
:mod:`minitorch.backends.shared_bodies`).  This module compiles each of them
for the CPU with ``numba.njit(inline="always")``: Numba pastes a body into
the loop of the kernel that calls it, so a kernel's loop is as tight as if
the body were written inside it, and LLVM can lift a loop-invariant
``if op == ...`` out of the loop and vectorise what is left.

A CPU kernel uses them as ``scalar_ops.unary(op, x, p0, p1)`` or
``rng.random_bits(seed, counter)``, after ``from .bodies import rng, ...``.
Nothing here is compiled until a kernel that uses it is.
"""

from numba import njit

from .. import index_maps as index_maps_source
from .. import optimizer_rules as optimizer_rules_source
from .. import reduce_ops as reduce_ops_source
from .. import rng as rng_source
from .. import rows as rows_source
from .. import scalar_ops as scalar_ops_source
from ..shared_bodies import compile_module
from .vmath import _exp as vectorised_exp

_cpu_body = njit(inline="always")

scalar_ops = compile_module(scalar_ops_source, _cpu_body)
index_maps = compile_module(index_maps_source, _cpu_body)
reduce_ops = compile_module(reduce_ops_source, _cpu_body)
optimizer_rules = compile_module(optimizer_rules_source, _cpu_body)
# The softmax bodies call ``exp``: on the CPU, the vectorisable one of vmath.py.
rows = compile_module(rows_source, _cpu_body, exp=vectorised_exp)
# rng's multinomial sorts arrival times with the rows' merge sort.
rng = compile_module(rng_source, _cpu_body, rows=rows)
