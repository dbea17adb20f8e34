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

import types

from numba import njit, types as numba_types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from ... import layout as layout_source
from .. import index_maps as index_maps_source
from .. import optimizer_rules as optimizer_rules_source
from .. import reduce_ops as reduce_ops_source
from .. import rng as rng_source
from .. import rows as rows_source
from .. import scalar_ops as scalar_ops_source
from ..shared_bodies import compile_module
from .vmath import _exp as vectorised_exp

_cpu_body = njit(inline="always")


@intrinsic
def _stack_array(typingctx, shape, dtype):
    """``stack_array(n, np.int64)``: a 1-D array of ``n`` (a constant) items on the stack.

    What ``numba.cuda.local.array`` is on the GPU, for the CPU: the scratch
    multi-index of ``index_maps.position`` costs no heap allocation (``np.empty``
    per element made a narrow scatter twice as slow).  The space is reserved
    once in the calling kernel's frame (``alloca`` in its entry block), so a
    loop that calls it reuses it; the array must not outlive that kernel call.
    """
    if not isinstance(shape, numba_types.IntegerLiteral) or not hasattr(dtype, "dtype"):
        return None
    n = shape.literal_value
    item = dtype.dtype
    array_type = numba_types.Array(item, 1, "C")

    def codegen(context, builder, signature, args):
        data = cgutils.alloca_once(builder, context.get_value_type(item), size=n)
        size = context.get_abi_sizeof(context.get_value_type(item))
        array = context.make_array(array_type)(context, builder)
        populate_array(array, data=data, shape=[context.get_constant(numba_types.intp, n)],
                       strides=[context.get_constant(numba_types.intp, size)],
                       itemsize=context.get_constant(numba_types.intp, size), meminfo=None)
        return array._getvalue()
    return array_type(shape, dtype), codegen


#: ``device.local.array`` for the bodies, spelled as in ``numba.cuda`` (see index_maps.py).
cpu_device = types.ModuleType("cpu_device", "the CPU's scratch arrays, as numba.cuda names them")
cpu_device.local = types.ModuleType("local", "scratch arrays on the kernel's stack")
cpu_device.local.array = _stack_array

scalar_ops = compile_module(scalar_ops_source, _cpu_body)
# The layout functions the kernels run (course tasks 1.1 and 1.2: index <-> position).
layout = compile_module(layout_source, _cpu_body)
index_maps = compile_module(index_maps_source, _cpu_body, layout=layout, device=cpu_device)
reduce_ops = compile_module(reduce_ops_source, _cpu_body)
optimizer_rules = compile_module(optimizer_rules_source, _cpu_body)
# The softmax bodies call ``exp``: on the CPU, the vectorisable one of vmath.py.
rows = compile_module(rows_source, _cpu_body, exp=vectorised_exp)
# rng's multinomial sorts arrival times with the rows' merge sort.
rng = compile_module(rng_source, _cpu_body, rows=rows)
