"""The shared kernel bodies, compiled for the GPU.

The per-element and per-row arithmetic of the kernels is written once, in
the device-neutral modules of ``minitorch/backends`` (see
:mod:`minitorch.backends.shared_bodies`), and compiled here a second time,
as CUDA *device functions* (``numba.cuda.jit(device=True)``, see
:func:`~minitorch.backends.cuda.launch.device_function`): functions a GPU
kernel calls, which the CUDA compiler inlines.  So ``a + b``, a random
number or an Adam step on a GPU run exactly the arithmetic they run on the
CPU; only the loop around them differs.

A CUDA kernel uses them as ``scalar_ops.unary(op, x, p0, p1)`` or
``rng.random_bits(seed, counter)``, after ``from .bodies import rng, ...``.
"""

from numba import cuda

from ... import layout as layout_source
from .. import index_maps as index_maps_source
from .. import optimizer_rules as optimizer_rules_source
from .. import reduce_ops as reduce_ops_source
from .. import rng as rng_source
from .. import rows as rows_source
from .. import scalar_ops as scalar_ops_source
from ..shared_bodies import compile_module
from .launch import SIMULATOR, device_function

scalar_ops = compile_module(scalar_ops_source, device_function)
# The layout functions the kernels run (course tasks 1.1 and 1.2: index <-> position).
layout = compile_module(layout_source, device_function)
# A thread's scratch multi-index is a local array (``cuda.local.array``): registers, once
# the loops over the dims are unrolled (a kernel is compiled per number of dims).  The
# simulator runs the bodies as Python, with index_maps' own NumPy arrays: it swaps its fake
# ``cuda`` into a device function's globals at each call, and a thread that returns puts
# the real one back under the threads still running.
index_maps = compile_module(index_maps_source, device_function, layout=layout,
                            device=index_maps_source.device if SIMULATOR else cuda)
reduce_ops = compile_module(reduce_ops_source, device_function)
optimizer_rules = compile_module(optimizer_rules_source, device_function)
rows = compile_module(rows_source, device_function)
# rng's multinomial sorts arrival times with the rows' merge sort.
rng = compile_module(rng_source, device_function, rows=rows)
