"""How many threads the CPU kernels use: ``minitorch.set_num_threads`` / ``get_num_threads``.

The parallel kernels are Numba ``prange`` loops.  Numba starts its thread
pool once, with ``NUMBA_NUM_THREADS`` workers (by default one per core), and
``numba.set_num_threads(n)`` then lets a loop use only the first ``n`` of
them.  So, unlike PyTorch, the count can be lowered and raised again freely
but never above the pool's size: asking for more uses the whole pool and
warns (start Python with ``NUMBA_NUM_THREADS=N`` for a bigger pool).

Like Numba's setting, the count belongs to the calling thread: a thread you
start yourself begins with the whole pool.
"""

from __future__ import annotations

import builtins
import numbers
import warnings

import numba

__all__ = ["set_num_threads", "get_num_threads", "max_num_threads"]


def max_num_threads() -> int:
    """The size of Numba's thread pool (``NUMBA_NUM_THREADS``), fixed when Python starts."""
    return int(numba.config.NUMBA_NUM_THREADS)


def get_num_threads() -> int:
    """The number of threads the CPU kernels use, as ``torch.get_num_threads()``.

    >>> import minitorch
    >>> minitorch.get_num_threads() >= 1
    True
    """
    return int(numba.get_num_threads())


def set_num_threads(int: int) -> None:  # noqa: A002  (PyTorch's parameter name)
    """Use ``int`` threads in the CPU kernels, as ``torch.set_num_threads(int)``.

    A count that is not a positive ``int`` raises ``RuntimeError`` with
    PyTorch's messages.  A count above the pool's size
    (:func:`max_num_threads`) uses the whole pool and warns, where PyTorch
    would start more threads.

    >>> import minitorch
    >>> before = minitorch.get_num_threads()
    >>> minitorch.set_num_threads(1)
    >>> minitorch.get_num_threads()
    1
    >>> minitorch.set_num_threads(before)
    """
    n = int
    # bool is an int subclass in Python; PyTorch refuses it, and so do we.
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    limit = max_num_threads()
    if n > limit:
        warnings.warn(f"set_num_threads({n}): Numba's thread pool has {limit} threads "
                      f"(NUMBA_NUM_THREADS, fixed at start-up); using {limit}. Start Python "
                      f"with NUMBA_NUM_THREADS={n} for more.", stacklevel=2)
        n = limit
    # ``int`` names the argument here (PyTorch's name), so the type is builtins.int.
    numba.set_num_threads(builtins.int(n))
