"""Layer 4: kernels, one module family per device behind one small interface.

The layers above never call Numba.  They hand a backend *operands*, each a
buffer plus the header that says how to read it, and the backend runs the
loop.  The interface every backend provides (``cpu/backend.py``,
``cuda/backend.py``) is declared, with every signature, in ``interface.py``
(:class:`~minitorch.backends.interface.Backend`); in short:

=========================  =====================================================
``allocate(n, dt)``        a new flat buffer of ``n`` elements of NumPy dtype ``dt``
``from_host(arr)``         a buffer on this device holding a NumPy array's elements
``to_host(buf)``           a NumPy array with a buffer's elements
``copy(src, dst)``         ``dst[...] = src[...]`` for any strides, casting dtypes
``fill(dst, value)``       every element of ``dst`` set to ``value``
``unary(op, a, out)``      ``out = f(a)``; families ``FAST``, ``MATH``, ``INT``
``binary(op, a, b, out)``  ``out = f(a, b)``; families ``ARITH``, ``MATH``,
                           ``INT``, ``COMPARE`` (constants of ``interface.py``)
``where(c, a, b, out)``    ``out = a if c else b``
``reduce(...)``            sum/prod/max/min/argmax/argmin/all/any over dims
``scan(...)``              cumulative sum and product along rows
``matmul(a, b, out)``      batched matrix product
index kernels              gather, scatter, index_select, masked ops, sort, ...
conv kernels               im2col, col2im, max pooling
``random_fill(...)``       counter-based uniform/normal/randint/bernoulli/...
``fused_update(...)``      one-pass optimizer updates (SGD, Adam, RMSprop, ...)
=========================  =====================================================

Kernels only some backends have (the CPU's direct convolution, the CUDA
backend's cached scalar buffers) are *capabilities*: a backend lists them in
its ``CAPABILITIES`` set and callers ask that set (``interface.py``).

An :class:`Operand` is ``(data, shape, strides, offset)``: element
``(i, j, ...)`` is ``data[offset + i*strides[0] + j*strides[1] + ...]``.
Broadcasting is expressed with stride 0, so kernels never see it.

**Kernels written once.**  A kernel is a loop around a body.  The loops and
launches belong to a device (``cpu/``, ``cuda/``; neither imports the
other); the bodies, the arithmetic of one element or one row, are written
once in the device-neutral modules of this package and compiled by both
devices (``cpu/bodies.py``, ``cuda/bodies.py``):

=======================  ===================================================
``scalar_ops.py``        the scalar maths of every elementwise op (op codes)
``rng.py``               the counter-based random number generator
``rows.py``              per-row bodies: sort, top-k, unique, softmax, nll, scan
``reduce_ops.py``        reduction op codes; how partial results combine
``index_maps.py``        positions, scatter ownership, mask chunks, im2col maps
``optimizer_rules.py``   optimizer hyper-parameter records and update rules
``interface.py``         the backend contract: protocol, families, capabilities
``operand.py``           ``Operand``, what the ops hand the kernels
``planning.py``          host-side planning shared by both backends
``shared_bodies.py``     how a body module is compiled for one device
``kernel_cache.py``      Numba's disk cache, told which code a kernel uses
=======================  ===================================================
"""

from __future__ import annotations

from typing import Any

from .interface import Backend
from .operand import Operand

__all__ = ["Operand", "get_backend"]


_cpu_backend = None   # the CPU backend module, imported on first use (it compiles nothing)


def get_backend(device: Any) -> Backend:
    """The kernel module for a device ('cpu' or 'cuda'), which keeps the contract of
    :class:`~minitorch.backends.interface.Backend` (``tests/test_backend_interface.py``).

    The CUDA backend (and with it ``numba.cuda``) is imported on first use,
    and the device is made current (``cuda:N`` must exist).
    """
    if device.type == "cpu":
        global _cpu_backend
        if _cpu_backend is None:
            # Imported on first use: a program that never computes loads no kernels.
            from .cpu import backend
            _cpu_backend = backend
        return _cpu_backend
    try:
        from .cuda import backend as cuda_backend  # imports numba.cuda on first use
    except ImportError as e:
        from .cuda.runtime import NO_CUDA_MESSAGE  # the message, only when it is needed
        raise RuntimeError(f"{NO_CUDA_MESSAGE} (importing numba.cuda failed: {e})") from None
    cuda_backend.activate(device.index or 0)
    return cuda_backend
