"""The caching allocator for large CPU buffers (minitorch/backends/cpu/memory.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import minitorch as torch
from minitorch.backends.cpu import memory

pytestmark = pytest.mark.kernels

BIG = memory.MIN_BYTES // 4 + 1000          # float32 elements: just above the pooling threshold


def test_size_classes_cover_the_request_with_little_waste():
    for nbytes in (1, 4096, 4097, memory.MIN_BYTES, 5 * 2**20 + 1, 3 * 2**30 + 7):
        size = memory.size_class(nbytes)
        assert size >= nbytes and (size % 4096 == 0 or nbytes < 16384)
        assert size <= max(4096, 1.25 * nbytes + 4096)


def test_a_freed_block_is_reused_and_a_live_one_is_not():
    a = memory.allocate(BIG, np.float32)
    ptr = a.ctypes.data
    b = memory.allocate(BIG, np.float32)
    assert b.ctypes.data != ptr                 # a is still alive
    del a
    c = memory.allocate(BIG, np.float32)
    assert c.ctypes.data == ptr                 # a's block came back
    view = c[5:10]                              # a view keeps the block in use
    del c
    d = memory.allocate(BIG, np.float32)
    assert d.ctypes.data != ptr
    del view, b, d


def test_tensors_release_their_blocks():
    x = torch.empty(BIG)
    ptr = x.data_ptr()
    shared = x.numpy()                          # shares memory: the block stays in use
    del x
    y = torch.empty(BIG)
    assert y.data_ptr() != ptr
    del shared, y
    z = torch.empty(BIG)
    assert z.data_ptr() == ptr or memory.cached_bytes() > 0


def test_dtypes_and_small_requests():
    for dt in (np.float64, np.int64, np.bool_, np.float16, np.uint8):
        arr = memory.allocate(BIG, dt)
        assert arr.dtype == dt and arr.shape == (BIG,) and arr.flags.c_contiguous
        arr[:] = 1
        assert arr.sum() == BIG
    small = memory.allocate(10, np.float32)
    assert small.base is None                   # plain NumPy, not pooled


def test_pool_is_bounded_and_can_be_emptied(monkeypatch):
    monkeypatch.setattr(memory, "MAX_BYTES", memory.cached_bytes() + memory.size_class(BIG * 4))
    keep = [memory.allocate(BIG, np.float32) for _ in range(3)]   # over the cap: plain arrays
    assert memory.cached_bytes() <= memory.MAX_BYTES
    del keep
    memory.empty_cache()
    before = memory.cached_bytes()
    memory.empty_cache()
    assert memory.cached_bytes() == before


def test_threads_never_share_a_block():
    got, errors = [], []

    def work():
        try:
            for _ in range(20):
                arr = memory.allocate(BIG, np.float32)
                arr[:] = threading.get_ident() % 1000
                got.append(arr)
                assert np.all(arr == threading.get_ident() % 1000)
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ptrs = [a.ctypes.data for a in got]
    assert len(set(ptrs)) == len(ptrs)
