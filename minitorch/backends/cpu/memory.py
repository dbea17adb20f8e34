"""A small caching allocator for large CPU buffers.

Why cache memory at all?  A training step allocates the same big buffers
every time: the im2col matrix of a convolution (5 MiB for LeNet's first
layer at batch 64), layer outputs, gradients.  The C library's ``malloc``
serves large requests with fresh pages from the operating system and gives
them back on ``free``; the next step's request gets fresh pages again, and
the first write to each 4 KiB page traps into the kernel (a *page fault*).
Measured here: a quarter of a LeNet step went to those faults.  PyTorch's
CUDA backend has a caching allocator for the same reason.

How it works: a large request is rounded up to a *size class* (four
classes per doubling, so at most 19% is wasted) and served as a view of a
NumPy byte array, a *block*, that the pool keeps.  A block is free again
when nothing but the pool refers to it: every tensor (and every NumPy view)
holding part of it keeps a reference to the block, so Python's reference
count says exactly when the last user is gone.  No explicit ``free`` is
needed.  Small requests (below ``MIN_BYTES``) go straight to NumPy, whose
small allocations ``malloc`` already recycles well, and the pool stops
growing at ``MAX_BYTES``: beyond that, requests are plain ``np.empty``.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

__all__ = ["allocate", "size_class", "cached_bytes", "empty_cache", "MIN_BYTES", "MAX_BYTES"]

MIN_BYTES = 128 << 10        # below malloc's default mmap threshold (128 KiB): not pooled
MAX_BYTES = 512 << 20        # the pool holds at most this much (in use or free)

_blocks: dict[int, list[np.ndarray]] = {}   # size class -> blocks of that size
_held = 0                                   # bytes in all blocks
_lock = threading.Lock()                    # DataParallel runs replicas in threads
# References to a free block while it is tested: the pool's list, the loop
# variable, and getrefcount's own argument.
_FREE_REFS = 3


def size_class(nbytes: int) -> int:
    """The block size that serves ``nbytes``: 4 classes per power of two (whole pages from 16 KiB).

    >>> size_class(5 * 2**20) // 2**10         # 5 MiB -> 5 MiB (a class boundary)
    5120
    >>> size_class(5 * 2**20 + 1) // 2**10     # just above -> the next class, 6 MiB
    6144
    """
    if nbytes <= 4096:
        return 4096
    top = 1 << (math.ceil(math.log2(nbytes)) - 1)     # the power of two below
    step = top // 4
    return -(-nbytes // step) * step


def allocate(n: int, dtype: np.dtype) -> np.ndarray:
    """An uninitialised 1-D array of ``n`` elements of ``dtype`` (pooled if large)."""
    if n < MIN_BYTES // 8:          # small whatever the dtype: the common case, decided fast
        return np.empty(n, dtype)
    dtype = np.dtype(dtype)
    nbytes = n * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(n, dtype)
    size = size_class(nbytes)
    global _held
    with _lock:
        blocks = _blocks.setdefault(size, [])
        for block in blocks:
            if sys.getrefcount(block) == _FREE_REFS:
                return block[:nbytes].view(dtype)
        if _held + size > MAX_BYTES:
            return np.empty(n, dtype)
        block = np.empty(size, np.uint8)
        blocks.append(block)
        _held += size
        return block[:nbytes].view(dtype)


def cached_bytes() -> int:
    """Bytes held by the pool's blocks, in use or free."""
    return _held


def empty_cache() -> None:
    """Give the free blocks back (blocks still in use stay)."""
    global _held
    with _lock:
        for size, blocks in _blocks.items():
            keep = []
            for block in blocks:
                if sys.getrefcount(block) == _FREE_REFS:
                    _held -= size
                else:
                    keep.append(block)
            blocks[:] = keep
