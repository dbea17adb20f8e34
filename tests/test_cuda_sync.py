"""The CUDA path waits for the GPU and allocates only where it must (issue 20, item 5).

Each read of a value back to the host waits for every kernel queued before it,
and each allocation costs a driver call, so an op that needs neither must not
do either.  These tests count both on the simulator, by wrapping the device
array's ``copy_to_host`` (every read) and ``numba.cuda``'s ``device_array`` and
``to_device`` (every allocation): a loss reads nothing back and allocates no
work buffer, a sum allocates no index buffer, and the bounds of an index are
one read.  A target out of range is still an ``IndexError``, raised where the
host next waits for the GPU (PyTorch's CUDA loss reports it with a device-side
assert there too).  Sums of float32 accumulate in float32, as PyTorch's CUDA
sums do, and a float64 result in float64.

Cost: about 4 s on the simulator (tiny shapes).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import minitorch as torch
from device_checks import cuda_usable
from minitorch.nn import functional as F

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda_usable(), reason="no CUDA device and no CUDA "
                                 "simulator (set NUMBA_ENABLE_CUDASIM=1)")]


@pytest.fixture
def gpu(monkeypatch):
    """The CUDA backend, and a counter of its reads back and its allocations from now on."""
    from numba import cuda

    from minitorch.backends.cuda import backend

    counts = {"reads": 0, "allocations": 0}
    array_type = type(cuda.device_array(1, np.float32))
    copy_to_host = array_type.copy_to_host

    def counted_read(self, *args, **kwargs):
        counts["reads"] += 1
        return copy_to_host(self, *args, **kwargs)

    def counted(name):
        make = getattr(cuda, name)

        def allocation(*args, **kwargs):
            counts["allocations"] += 1
            return make(*args, **kwargs)
        return allocation

    def start():
        counts.update(reads=0, allocations=0)
        monkeypatch.setattr(array_type, "copy_to_host", counted_read)
        for name in ("device_array", "to_device"):
            monkeypatch.setattr(cuda, name, counted(name))
        return counts

    with contextlib.suppress(IndexError):
        backend.check_errors()          # nothing left over from another test
    return backend, start


def _operand(backend, host: np.ndarray):
    from minitorch.backends.operand import Operand
    from minitorch.layout import contiguous_strides

    return Operand(backend.from_host(host.reshape(-1)), host.shape,
                   contiguous_strides(host.shape), 0)


# ---------------------------------------------------------------------------
# losses: no read back, no work buffer; a bad target raised at the next wait
# ---------------------------------------------------------------------------
def test_a_loss_and_its_gradient_read_nothing_back(gpu):
    backend, start = gpu
    x = torch.randn(4, 3, device="cuda", requires_grad=True)
    t = torch.tensor([0, 2, 1, 0], device="cuda")
    F.cross_entropy(x, t).backward()                # warm: cached scalars, the error flag
    counts = start()
    loss = F.cross_entropy(x, t)
    loss.backward()
    assert counts["reads"] == 0
    # the backend's own loss kernels allocate nothing (the tensors are the op's)
    lp, tg = torch.randn(4, 3, device="cuda"), torch.tensor([0, 2, 1, 0], device="cuda")
    losses, weights = torch.empty(4, device="cuda"), torch.empty(4, device="cuda")
    grad = torch.empty(4, 3, device="cuda")
    counts = start()
    arr = lambda u: u._storage._data              # noqa: E731
    assert backend.nll_loss(arr(lp).reshape(4, 3), arr(tg), None, -100, arr(losses),
                            arr(weights)) == -1
    backend.nll_loss_backward(arr(tg), None, -100, arr(grad).reshape(4, 3))
    assert counts == {"reads": 0, "allocations": 0}
    # and the values are the CPU's
    xc = x.detach().cpu().requires_grad_()
    F.cross_entropy(xc, t.cpu()).backward()
    np.testing.assert_allclose(loss.item(), F.cross_entropy(xc, t.cpu()).item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * xc.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("bad", [3, -1, 10**12])
def test_a_bad_target_raises_at_the_next_wait(gpu, bad):
    backend, start = gpu
    x = torch.randn(4, 3, device="cuda", requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor([0, bad, 1, bad], device="cuda"))
    loss.backward()                                 # queued: nothing waits, nothing raises
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds.*Row [13] of an "
                                         "nll_loss or cross_entropy on cuda:0"):
        x.grad.cpu()
    # The flag is cleared once reported; no kernel wrote through the bad target: its
    # rows' gradients are 0 and the others are the CPU's.
    grad = x.grad.cpu().numpy()
    assert np.all(grad[[1, 3]] == 0)
    xc = x.detach().cpu().requires_grad_()
    (F.cross_entropy(xc[[0, 2]], torch.tensor([0, 1]), reduction="sum") / 2).backward()
    np.testing.assert_allclose(grad[[0, 2]], xc.grad.numpy()[[0, 2]], rtol=1e-5)
    # the backend's synchronize() and every read report a flagged error too
    F.nll_loss(x, torch.tensor([0, 1, bad, 2], device="cuda"))
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        backend.synchronize()
    F.nll_loss(x, torch.tensor([bad, 1, 0, 2], device="cuda"))
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        torch.ones(2, device="cuda").tolist()
    F.nll_loss(x, torch.tensor([0, bad, 0, 2], device="cuda"))
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        torch.cuda.synchronize()                    # the public one, as in PyTorch


def test_good_and_ignored_targets_raise_nothing(gpu):
    backend, start = gpu
    x = torch.randn(3, 4, device="cuda")
    for target in ([0, 3, 2], [-100, 3, -100], [-100, -100, -100]):
        loss = F.cross_entropy(x, torch.tensor(target, device="cuda"))
        want = F.cross_entropy(x.cpu(), torch.tensor(target))
        np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-6)      # no IndexError
    # ignore_index is the one out-of-range value allowed
    assert np.isfinite(F.cross_entropy(x, torch.tensor([5, 1, 2], device="cuda"),
                                       ignore_index=5).item())
    with pytest.raises(IndexError, match="Target -100 is out of bounds"):
        F.cross_entropy(x, torch.tensor([-100, 1, 2], device="cuda"), ignore_index=5).item()


# ---------------------------------------------------------------------------
# sums: no index buffer, float32 in float32
# ---------------------------------------------------------------------------
def _rows_of_one_and_tiny(rows: int, tiny: int) -> np.ndarray:
    """Rows ``[1, 2**-24, 2**-24, ...]``: added in float32 in order, every ``2**-24`` is
    lost (1 + 2**-24 rounds to 1, ties to even); in float64 they add up."""
    x = np.full((rows, 1 + tiny), 2.0 ** -24, np.float32)
    x[:, 0] = 1
    return x


def _float32_sum(x: np.ndarray, nsplit: int) -> np.ndarray:
    """The rows' sums as the kernels add them in float32: ``nsplit`` interleaved parts,
    each in order, then the parts in order."""
    out = np.empty(x.shape[0], np.float32)
    for r, row in enumerate(x):
        parts = []
        for s in range(nsplit):
            acc = np.float32(0)
            for v in row[s::nsplit]:
                acc = np.float32(acc + v)
            parts.append(acc)
        total = parts[0]
        for p in parts[1:]:
            total = np.float32(total + p)
        out[r] = total
    return out


@pytest.mark.parametrize("rows", [8, 1])     # one thread per row; and a split (8 parts)
def test_a_sum_allocates_nothing_and_adds_in_its_result_type(gpu, rows):
    backend, start = gpu
    host = _rows_of_one_and_tiny(rows, 8)
    x = _operand(backend, host)
    for out_type in (np.float32, np.float64):
        out = backend.allocate(rows, np.dtype(out_type))
        backend.reduce("sum", x, (1,), out)                  # warm: the work buffers
        counts = start()
        backend.reduce("sum", x, (1,), out)
        assert counts == {"reads": 0, "allocations": 0}
        got = out.copy_to_host()
        if out_type is np.float64:
            assert np.all(got == 1 + 8 * 2.0 ** -24)        # float64 adds every 2**-24
        else:
            assert np.all(got == _float32_sum(host, backend.plan_split(rows, 9)))
    if rows == 8:
        assert np.all(_float32_sum(host, 1) == 1)            # float32, in order: all lost
    y = torch.tensor(host, device="cuda").sum(1)
    assert y.dtype is torch.float32
    assert np.all(y.cpu().numpy() == _float32_sum(host, backend.plan_split(rows, 9)))
    # the extrema still get their indices (the caller's buffer)
    idx = backend.allocate(rows, np.dtype(np.int64))
    out = backend.allocate(rows, np.dtype(np.float32))
    backend.reduce("max", x, (1,), out, idx)
    assert np.all(idx.copy_to_host() == 0) and np.all(out.copy_to_host() == 1)


def test_a_cumsum_adds_in_its_result_type(gpu):
    host = _rows_of_one_and_tiny(2, 8)
    got = torch.tensor(host, device="cuda").cumsum(1).cpu().numpy()
    assert np.all(got == 1)                                 # float32 in float32
    got = torch.tensor(host.astype(np.float64), device="cuda").cumsum(1).cpu().numpy()
    np.testing.assert_array_equal(got[:, -1], 1 + 8 * 2.0 ** -24)


# ---------------------------------------------------------------------------
# index bounds and mask counts: one read each, no allocation
# ---------------------------------------------------------------------------
def test_index_bounds_and_mask_counts_are_one_read_each(gpu):
    backend, start = gpu
    idx = backend.from_host(np.array([3, -2, 7, 0, 5, 1, 9, 4, 2], np.int64))
    assert backend.index_bounds(idx) == (-2, 9)              # warm
    mask = _operand(backend, np.array([True, False, True, True, False] * 3))
    assert backend.count_true(mask) == 9
    counts = start()
    assert backend.index_bounds(idx) == (-2, 9)
    assert counts == {"reads": 1, "allocations": 0}
    counts = start()
    assert backend.count_true(mask) == 9
    assert counts == {"reads": 1, "allocations": 0}
    # a one-element index: one thread's partials
    assert backend.index_bounds(backend.from_host(np.array([-5], np.int64))) == (-5, -5)
