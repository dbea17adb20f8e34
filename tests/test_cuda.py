"""The CUDA backend: the same ops, autograd and nn on ``cuda`` as on ``cpu``.

Every test that computes runs on both devices (``DEVICES``) and compares
with NumPy or with the CPU.  Without a GPU the CUDA kernels run on Numba's
CUDA simulator: ``tests/conftest.py`` sets ``NUMBA_ENABLE_CUDASIM=1`` before
``numba.cuda`` is first imported.  The simulator runs every GPU thread as a
Python thread, so every shape here is tiny.  Where a GPU is lent, run this
file without the simulator (``NUMBA_ENABLE_CUDASIM=0``) to compile and run
the kernels for real (see docs/cuda.md).

The CUDA tests skip cleanly when ``numba.cuda`` cannot be used at all.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn
from minitorch.nn import functional as F

pytestmark = pytest.mark.cuda

ROOT = Path(__file__).resolve().parents[1]


def _cuda_usable() -> bool:
    try:
        return torch.cuda.is_available()
    except Exception:   # pragma: no cover - numba.cuda broken beyond repair
        return False


CUDA = _cuda_usable()
requires_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device and no CUDA simulator "
                                   "(set NUMBA_ENABLE_CUDASIM=1)")
DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def T(a, device, **kw) -> torch.Tensor:
    return torch.tensor(np.asarray(a), device=device, **kw)


def host(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def check(t: torch.Tensor, expected, device, rtol=1e-6, atol=1e-6) -> None:
    """``t`` lives on ``device`` and holds ``expected`` (values, shape and dtype)."""
    assert t.device.type == device
    expected = np.asarray(expected)
    got = host(t)
    assert got.shape == expected.shape
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# devices, moves and errors
# ---------------------------------------------------------------------------
@requires_cuda
def test_devices_and_moves():
    assert torch.device("cuda") == torch.device("cuda")
    assert str(torch.device("cuda:0")) == "cuda:0"
    x = torch.arange(6.0).reshape(2, 3)
    for y in (x.cuda(), x.to("cuda"), x.to(torch.device("cuda:0")),
              x.to("cuda", non_blocking=True), x.cuda(0, non_blocking=True),
              torch.tensor(x.tolist(), device="cuda")):
        assert y.is_cuda and not y.is_cpu and y.device == torch.device("cuda", 0)
        assert y.get_device() == 0
        assert y.tolist() == x.tolist()
    y = x.cuda()
    assert y.type() == "torch.cuda.FloatTensor"
    assert repr(y) == "tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='cuda:0')"
    back = y.cpu()
    assert back.device == torch.device("cpu") and back.numpy().tolist() == x.tolist()
    assert y.to("cuda") is y and x.cpu() is x
    assert y.t().tolist() == x.t().tolist() and y[:, ::2].cpu().tolist() == x[:, ::2].tolist()
    z = torch.zeros(2, 2, device="cuda", dtype=torch.int64)
    assert z.dtype is torch.int64 and z.is_cuda and z.sum().item() == 0
    assert x.untyped_storage().device == torch.device("cpu")
    assert y.untyped_storage().device.type == "cuda" and y.untyped_storage().nbytes() == 24
    assert y[1].data_ptr() == y.data_ptr() + 12
    torch.set_default_device("cuda")
    try:
        made = [torch.zeros(2), torch.arange(3), torch.tensor([1.0]), torch.rand(2),
                nn.Linear(2, 1).weight]
        assert all(t.device == torch.device("cuda", 0) for t in made)
    finally:
        torch.set_default_device("cpu")
    assert torch.zeros(1).device.type == "cpu"


@requires_cuda
def test_numpy_of_a_cuda_tensor_raises_type_error():
    y = torch.ones(3, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        y.numpy()
    with pytest.raises(TypeError, match="Use Tensor.cpu"):
        np.asarray(y)
    assert y.cpu().numpy().tolist() == [1.0, 1.0, 1.0]
    assert y.numpy(force=True).tolist() == [1.0, 1.0, 1.0]


@requires_cuda
def test_ops_across_devices_raise_runtime_error():
    a, b = torch.ones(2), torch.ones(2, device="cuda")
    msg = ("Expected all tensors to be on the same device, but found at least two devices, "
           "cuda:0 and cpu!")
    for f in (lambda: a + b, lambda: b * a, lambda: torch.cat([a, b]),
              lambda: torch.where(b > 0, a, b), lambda: a @ b,
              lambda: torch.gather(b, 0, torch.tensor([0])),
              lambda: b.index_select(0, torch.tensor([0])),
              lambda: F.embedding(torch.tensor([0]), b.reshape(2, 1)),
              lambda: b.masked_fill(a > 0, 0.0)):
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            f()
    # A CPU scalar (0-d) tensor mixes with CUDA tensors, as in PyTorch.
    check(b + torch.tensor(2.0), [3.0, 3.0], "cuda")
    # copy_ moves across devices, and so does the gradient of .to()
    c = torch.zeros(2, device="cuda")
    c.copy_(torch.tensor([1.0, 2.0]))
    check(c, [1.0, 2.0], "cuda")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w.cuda() * torch.tensor([3.0, 4.0], device="cuda")).sum().backward()
    check(w.grad, [3.0, 4.0], "cpu")


@requires_cuda
def test_missing_device_index_is_a_clear_error():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(2, device=f"cuda:{torch.cuda.device_count()}")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.cuda.set_device(torch.cuda.device_count())


def test_no_cuda_device_error_names_the_simulator():
    """Without a GPU (and without the simulator) a CUDA tensor is a clear RuntimeError."""
    code = ("import minitorch as torch\n"
            "assert not torch.cuda.is_available()\n"
            "try:\n"
            "    torch.zeros(1, device='cuda')\n"
            "except RuntimeError as e:\n"
            "    print('ERROR', e)\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=str(ROOT))
    probe = subprocess.run([sys.executable, "-c", "from numba import cuda; "
                            "print(cuda.is_available())"], env=env, capture_output=True,
                           text=True, timeout=120)
    if probe.stdout.strip() != "False":
        pytest.skip("a real CUDA device is present")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "ERROR No CUDA device is available" in proc.stdout
    assert "NUMBA_ENABLE_CUDASIM=1" in proc.stdout


def test_import_minitorch_does_not_import_numba_cuda():
    code = ("import sys, minitorch, minitorch.nn\n"
            "print('numba.cuda' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


@requires_cuda
def test_cuda_module_functions():
    assert torch.cuda.is_available() is True
    assert torch.cuda.device_count() >= 1
    assert torch.cuda.current_device() == 0
    torch.cuda.set_device(0)
    torch.cuda.set_device("cuda:0")
    assert isinstance(torch.cuda.get_device_name(), str)
    import gc
    gc.collect()
    before = torch.cuda.memory_allocated()
    x = torch.empty(1000, device="cuda")
    assert torch.cuda.memory_allocated() == before + 4000
    del x
    gc.collect()
    assert torch.cuda.memory_allocated() == before
    torch.ones(3, device="cuda").add_(1)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


# ---------------------------------------------------------------------------
# elementwise: broadcasting, non-contiguous inputs, every kernel family
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_elementwise_broadcasting_and_strides(device):
    r = rng(1)
    a = r.standard_normal((3, 4)).astype(np.float32)
    b = r.standard_normal(4).astype(np.float32)
    x, y = T(a, device), T(b, device)
    check(x + y, a + b, device)                          # broadcast row (stride 0)
    check(x.t() * 2 - 1, a.T * 2 - 1, device)            # transposed (strided kernel)
    check(x[:, ::2] / x[:, 1::2], a[:, ::2] / a[:, 1::2], device)
    check(x.t()[1:] + y[:3, None], a.T[1:] + b[:3, None], device)
    check(2 - y, 2 - b, device)                          # reversed op, scalar
    check(x.exp().sigmoid(), 1 / (1 + np.exp(-np.exp(a))), device, rtol=1e-5)
    check(x.t().tanh(), np.tanh(a.T), device, rtol=1e-5)
    check(x.abs() ** 0.5, np.abs(a) ** 0.5, device, rtol=1e-5)
    check(torch.maximum(x, y), np.maximum(a, b), device)
    check(x.clamp(-0.5, 0.5), np.clip(a, -0.5, 0.5), device)
    check(F.relu(x.t()), np.maximum(a.T, 0), device)
    check(torch.atan2(x, y), np.arctan2(a, b), device, rtol=1e-5)
    check(x > y, a > b, device)
    check((x > 0) & (y < 0), (a > 0) & (b < 0), device)
    check(torch.where(x > 0, x, y), np.where(a > 0, a, b), device)
    check(torch.where(x.t() > 0, 1.0, 0.0), np.where(a.T > 0, 1.0, 0.0).astype(np.float32),
          device)
    i = T(np.array([[7, -7, 9], [3, 4, -5]]), device)
    check(i // 2, np.array([[3, -4, 4], [1, 2, -3]]), device)
    check(i % 3, np.array([[7, -7, 9], [3, 4, -5]]) % 3, device)
    check(-i.t(), -np.array([[7, -7, 9], [3, 4, -5]]).T, device)
    check(i * 2.5, np.array([[7, -7, 9], [3, 4, -5]]) * np.float32(2.5), device)
    check(i.float() / 2, np.array([[3.5, -3.5, 4.5], [1.5, 2.0, -2.5]], np.float32), device)
    check(x.half().float(), a.astype(np.float16).astype(np.float32), device)
    check(x.to(torch.int32), a.astype(np.int32), device)
    check(x.bool(), a != 0, device)
    nan = T(np.array([np.nan, 1.0, -np.inf], np.float32), device)
    check(nan.isnan(), [True, False, False], device)
    check(torch.nan_to_num(nan), np.nan_to_num(np.array([np.nan, 1.0, -np.inf], np.float32)),
          device)


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_ops_and_views(device):
    x = torch.zeros(3, 4, device=device)
    x[1] = 5.0
    x[:, 2] += torch.tensor([1.0, 2.0, 3.0], device=device)
    x.t()[0].fill_(-1.0)
    x.view(-1)[11] = 9.0
    expected = np.zeros((3, 4), np.float32)
    expected[1] = 5
    expected[:, 2] += [1, 2, 3]
    expected[:, 0] = -1
    expected[2, 3] = 9
    check(x, expected, device)
    y = torch.ones(2, 3, device=device).t().contiguous()
    assert y.is_contiguous() and y.shape == (3, 2)
    check(torch.stack([y, y * 2]).sum(0), np.full((3, 2), 3.0, np.float32), device)
    check(torch.cat([y, y.flip(0)], 1), np.ones((3, 4), np.float32), device)
    z = torch.arange(6.0, device=device).reshape(2, 3)
    z.resize_(3, 3)                          # grows the storage, keeps the elements
    z[2] = 7.0
    check(z, [[0, 1, 2], [3, 4, 5], [7, 7, 7]], device)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_reductions(device):
    a = rng(2).standard_normal((3, 4, 5)).astype(np.float32)
    a[1, 2, 3] = a.max() + 1          # a unique maximum
    x = T(a, device)
    check(x.sum(), a.sum(), device, rtol=1e-5)
    check(x.sum((0, 2)), a.sum((0, 2)), device, rtol=1e-5)
    check(x.permute(2, 0, 1).mean(-1, keepdim=True),
          a.transpose(2, 0, 1).mean(-1, keepdims=True), device, rtol=1e-5)
    check(x.max(), a.max(), device)
    values, idx = x.max(1)
    check(values, a.max(1), device)
    check(idx, a.argmax(1), device)
    check(x.argmin(2), a.argmin(2), device)
    check(x.argmax(), a.argmax(), device)
    check(x.prod(0), a.prod(0), device, rtol=1e-5)
    check(x.var(1), a.var(1, ddof=1), device, rtol=1e-4)
    check(x.logsumexp(2), np.log(np.exp(a).sum(2)), device, rtol=1e-5)
    check((x > 0).all(1), (a > 0).all(1), device)
    check((x > 0).any(), (a > 0).any(), device)
    check(x.softmax(-1).sum(-1), np.ones((3, 4), np.float32), device, rtol=1e-5)
    i = T(np.arange(24).reshape(4, 6), device)
    check(i.sum(0), np.arange(24).reshape(4, 6).sum(0), device)
    check(i[:, ::2].t().max(1).values, np.arange(24).reshape(4, 6)[:, ::2].T.max(1), device)
    ties = T(np.array([1.0, 3.0, 3.0, 2.0, 3.0, np.nan, 0.0, np.nan, 3.0]), device)
    check(ties[:5].argmax(), 1, device)            # the first maximum wins
    check(ties.argmax(), 5, device)                # the first NaN wins
    check(ties.max(), np.nan, device)
    check(x.cumsum(1), a.cumsum(1), device, rtol=1e-5)
    check(x.transpose(0, 2).cumprod(0), np.cumprod(a.transpose(2, 1, 0), 0), device,
          rtol=1e-5)
    check(torch.zeros(0, 3, device=device).sum(0), np.zeros(3, np.float32), device)


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_matmul(device):
    r = rng(3)
    a = r.standard_normal((5, 7)).astype(np.float32)
    b = r.standard_normal((7, 6)).astype(np.float32)
    x, y = T(a, device), T(b, device)
    check(x @ y, a @ b, device, rtol=1e-5, atol=1e-5)
    check(y.t() @ x.t(), b.T @ a.T, device, rtol=1e-5, atol=1e-5)       # transposed operands
    check(x[::2, 1:] @ y[1:, ::3], a[::2, 1:] @ b[1:, ::3], device, rtol=1e-5, atol=1e-5)
    c = r.standard_normal((2, 3, 4)).astype(np.float64)
    d = r.standard_normal((4, 2)).astype(np.float64)
    check(T(c, device) @ T(d, device), c @ d, device, rtol=1e-12)      # broadcast batch
    check(torch.bmm(T(c, device), T(c, device).transpose(1, 2)), c @ c.transpose(0, 2, 1),
          device, rtol=1e-12)
    check(x[0] @ y[:, 0], a[0] @ b[:, 0], device, rtol=1e-5)
    e = r.standard_normal((20, 35)).astype(np.float32)    # several tiles and K steps
    f = r.standard_normal((18, 35)).astype(np.float32)
    check(T(e, device) @ T(f, device).t(), e @ f.T, device, rtol=1e-4, atol=1e-4)
    n = np.arange(12).reshape(3, 4)
    check(T(n, device) @ T(n.T, device), n @ n.T, device)
    check(x @ torch.zeros(7, 0, device=device), np.zeros((5, 0), np.float32), device)


# ---------------------------------------------------------------------------
# indexing, gather and scatter
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_indexing_gather_scatter(device):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    x = T(a, device)
    idx = np.array([[0, 2, 1], [3, 3, 0]])
    check(torch.gather(x, 1, T(idx[:, :3], device)), np.take_along_axis(a[:2], idx, 1),
          device)
    check(x[[0, 2, -1]], a[[0, 2, -1]], device)
    check(x[T(np.array([1, 1]), device), 1:3], a[[1, 1], 1:3], device)
    check(x[:, [4, 0]], a[:, [4, 0]], device)
    check(x[x > 10], a[a > 10], device)
    check(x.index_select(1, T(np.array([3, 1, 3]), device)), a[:, [3, 1, 3]], device)
    check(x.t().index_select(0, T(np.array([2]), device)), a.T[[2]], device)
    check(x.take(T(np.array([19, 0, 7]), device)), a.reshape(-1)[[19, 0, 7]], device)
    check(x.nonzero(), np.argwhere(a), device)
    check(x.masked_select(x < 3), a[a < 3], device)
    check(x.masked_fill(x > 15, -1.0), np.where(a > 15, -1, a), device)
    check(x.t().masked_fill(x.t() > 15, -1.0), np.where(a.T > 15, -1, a.T), device)

    z = torch.zeros(3, 4, device=device)
    src = torch.arange(1.0, 9.0, device=device).reshape(2, 4)
    index = T(np.array([[0, 1, 2, 0], [0, 0, 0, 1]]), device)
    expected = np.zeros((3, 4), np.float32)
    np.add.at(expected, (np.array([[0, 1, 2, 0], [0, 0, 0, 1]]), np.arange(4)),
              np.arange(1.0, 9.0).reshape(2, 4))
    check(z.scatter_add(0, index, src), expected, device)        # repeated indices add up
    check(z.scatter(0, index[:1], src[:1]), [[1, 0, 0, 4], [0, 2, 0, 0], [0, 0, 3, 0]],
          device)
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter"):
        product = torch.ones(3, device=device).scatter(
            0, T(np.array([0, 0, 2]), device), torch.tensor([5.0, 6.0, 7.0], device=device),
            reduce="multiply")
    check(product, [30.0, 1.0, 7.0], device)
    check(torch.zeros(4, device=device).index_add(0, T(np.array([1, 3, 1]), device),
                                                  torch.ones(3, device=device)),
          [0.0, 2.0, 0.0, 1.0], device)
    check(torch.zeros(2, 3, device=device).index_copy(1, T(np.array([2, 0]), device),
                                                      torch.ones(2, 2, device=device)),
          [[1, 0, 1], [1, 0, 1]], device)
    x2 = x.clone()
    x2[T(np.array([0, 3]), device)] = torch.tensor(-1.0, device=device)
    x2[[1, 1], [0, 0]] += 100.0
    e2 = a.copy()
    e2[[0, 3]] = -1
    e2[1, 0] += 100
    check(x2, e2, device)
    h = torch.tensor([1.0, 2.0], dtype=torch.float16, device=device)
    check(torch.zeros(3, dtype=torch.float16, device=device).index_add(
        0, T(np.array([2, 2]), device), h), np.array([0, 0, 3], np.float16), device)
    check(h[T(np.array([1, 1, 0]), device)], np.array([2, 2, 1], np.float16), device)


@pytest.mark.parametrize("device", DEVICES)
def test_index_errors_before_any_kernel(device):
    x = torch.arange(6.0, device=device).reshape(2, 3)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1"):
        torch.gather(x, 1, T(np.array([[0, 3]]), device))
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x[T(np.array([0, 5]), device)]
    with pytest.raises(IndexError):
        x[T(np.array([-3]), device)]
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(T(np.array([4]), device), x)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.scatter_add_(1, T(np.array([[9]]), device), x[:, :1])
    with pytest.raises(IndexError):
        x.index_select(0, T(np.array([2]), device))
    check(x, np.arange(6.0).reshape(2, 3), device)        # nothing was written


@pytest.mark.parametrize("device", DEVICES)
def test_sorting(device):
    a = rng(4).integers(0, 6, size=(2, 40)).astype(np.float32)   # ties; rows > one run
    a[0, 5] = np.nan
    x = T(a, device)
    values, indices = x.sort(1)
    check(indices, np.argsort(a, 1, kind="stable"), device)
    check(values, np.sort(a, 1), device)
    values, indices = x.sort(1, descending=True)
    check(values[1], -np.sort(-a[1]), device)
    top = x[1].topk(3)
    check(top.values, -np.sort(-a[1])[:3], device)
    u, inv, counts = torch.unique(x[1], return_inverse=True, return_counts=True)
    eu, einv, ecounts = np.unique(a[1], return_inverse=True, return_counts=True)
    check(u, eu, device)
    check(inv, einv, device)
    check(counts, ecounts, device)


# ---------------------------------------------------------------------------
# convolution and pooling, forward and backward
# ---------------------------------------------------------------------------
def _conv_step(device):
    r = rng(5)
    x = T(r.standard_normal((2, 2, 6, 5)).astype(np.float32), device, requires_grad=True)
    w = T(r.standard_normal((4, 1, 3, 2)).astype(np.float32), device, requires_grad=True)
    b = T(r.standard_normal(4).astype(np.float32), device, requires_grad=True)
    y = F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    z = F.max_pool2d(F.relu(y), 2, stride=1) + F.avg_pool2d(y, 2, stride=1)
    (z * z).sum().backward()
    return y, x.grad, w.grad, b.grad


@requires_cuda
def test_conv_forward_and_backward_match_the_cpu():
    for got, want in zip(_conv_step("cuda"), _conv_step("cpu")):
        assert got.device.type == "cuda"
        np.testing.assert_allclose(host(got), host(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_unfold_fold_are_adjoint(device):
    x = torch.arange(32.0, device=device).reshape(1, 2, 4, 4)
    cols = F.unfold(x, 3, padding=1, stride=2)
    assert cols.shape == (1, 18, 4)
    back = F.fold(cols, (4, 4), 3, padding=1, stride=2)
    ones = F.fold(F.unfold(torch.ones_like(x), 3, padding=1, stride=2), (4, 4), 3, padding=1,
                  stride=2)
    check(back, host(x) * host(ones), device)


# ---------------------------------------------------------------------------
# autograd, nn and optimizers
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_autograd_through_broadcast_views_and_indexing(device):
    a = T(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), device, requires_grad=True)
    b = T(np.array([0.5, -1.0, 2.0]), device, requires_grad=True)
    y = ((a * b).t()[1:].exp().sum() + a[:, [0, 0]].sum() + (a @ b).pow(2).mean()
         + a[a > 2.5].sum())
    y.backward()
    an, bn = host(a), host(b)
    s = an @ bn
    ga = np.zeros_like(an)
    ga[:, 1:] = np.exp(an[:, 1:] * bn[1:]) * bn[1:]
    ga[:, 0] += 2
    ga += an > 2.5
    ga += (s[:, None] * bn[None, :])           # d/da mean((a@b)^2) = 2 s b / 2
    gb = (np.exp(an[:, 1:] * bn[1:]) * an[:, 1:]).sum(0)
    gb = np.concatenate([[0.0], gb]) + (s[:, None] * an).sum(0)
    check(a.grad, ga, device, rtol=1e-10)
    check(b.grad, gb, device, rtol=1e-10)
    g, = torch.autograd.grad((b ** 3).sum(), b, create_graph=True)
    g2, = torch.autograd.grad(g.sum(), b)
    check(g2, 6 * bn, device, rtol=1e-10)


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        # No conv bias: BatchNorm cancels it, so its gradient is rounding noise,
        # which Adam's normalisation would blow up into different steps per device.
        self.conv = nn.Conv2d(1, 2, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(2 * 2 * 2, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


def _train(device):
    torch.manual_seed(0)
    model = Tiny().to(device)
    x = torch.randn(4, 1, 4, 4).to(device)
    y = torch.tensor([0, 2, 1, 2]).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                          weight_decay=1e-3)
    losses = []
    for _ in range(2):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [host(p) for p in model.parameters()], host(model.bn.running_mean)


@requires_cuda
def test_training_steps_match_the_cpu():
    cpu = _train("cpu")
    gpu = _train("cuda")
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-5)
    for g, c in zip(gpu[1], cpu[1]):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gpu[2], cpu[2], rtol=1e-5, atol=1e-6)


OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1,
                                     weight_decay=1e-2),
    "adam": lambda p: torch.optim.Adam(p, lr=0.1, amsgrad=True, weight_decay=1e-2),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.1, maximize=True),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01),
}


def _optimize(device, name):
    w = torch.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]], device=device, requires_grad=True)
    b = torch.tensor([0.1, -0.2], dtype=torch.float64, device=device, requires_grad=True)
    opt = OPTIMIZERS[name]([w, b])
    for step in range(3):
        opt.zero_grad()
        ((w * w).sum(1) * (b + step) + w.t().sum(0) ** 3).sum().backward()
        opt.step()
    return host(w), host(b)


@requires_cuda
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_the_cpu(name):
    for g, c in zip(_optimize("cuda", name), _optimize("cpu", name)):
        np.testing.assert_allclose(g, c, rtol=1e-6, atol=1e-7)


@requires_cuda
def test_module_to_cuda_keeps_parameters_and_state_dict():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    weight = model[0].weight
    assert model.cuda() is model
    assert model[0].weight is weight and weight.is_cuda and isinstance(weight, nn.Parameter)
    assert model[1].running_mean.is_cuda
    sd = model.state_dict()
    assert all(t.is_cuda for t in sd.values())
    model.cpu()
    assert weight.device.type == "cpu"


@requires_cuda
def test_save_and_load_across_devices(tmp_path):
    x = torch.arange(6.0, device="cuda").reshape(2, 3)
    path = tmp_path / "t.pt"
    torch.save({"x": x, "view": x[1]}, path)
    on_cpu = torch.load(path, map_location="cpu")
    assert on_cpu["x"].device.type == "cpu" and on_cpu["x"].tolist() == x.tolist()
    back = torch.load(path)
    assert back["x"].is_cuda and back["view"].tolist() == [3.0, 4.0, 5.0]
    moved = torch.load(path, map_location="cuda")
    assert moved["x"].is_cuda


# ---------------------------------------------------------------------------
# random numbers: the same seed gives the same numbers on every device
# ---------------------------------------------------------------------------
def _draws(device):
    torch.manual_seed(123)
    out = [torch.rand(5, device=device), torch.rand(3, dtype=torch.float64, device=device),
           torch.randn(5, device=device), torch.randint(-3, 9, (6,), device=device),
           torch.randperm(7, device=device),
           torch.bernoulli(torch.full((6,), 0.5, device=device)),
           torch.multinomial(torch.tensor([[0.1, 0.5, 0.4], [1.0, 0.0, 2.0]], device=device),
                             2),
           torch.multinomial(torch.tensor([0.2, 0.8], device=device), 4, replacement=True),
           F.dropout(torch.ones(8, device=device), 0.5),
           torch.empty(4, device=device).uniform_(-1, 1),
           torch.empty(3, device=device).normal_(2.0, 0.5)]
    return [host(t) for t in out]


@requires_cuda
def test_random_numbers_are_identical_across_devices():
    for g, c in zip(_draws("cuda"), _draws("cpu")):
        np.testing.assert_array_equal(g, c)
    torch.manual_seed(5)
    a = torch.rand(3, device="cuda")
    torch.cuda.manual_seed(5)                # seeds the CUDA generator only
    b = torch.rand(3, device="cuda")
    np.testing.assert_array_equal(host(a), host(b))
    state = torch.cuda.get_rng_state()
    c = torch.rand(2, device="cuda")
    torch.cuda.set_rng_state(state)
    np.testing.assert_array_equal(host(torch.rand(2, device="cuda")), host(c))
    gen = torch.Generator()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        torch.rand(2, device="cuda", generator=gen)


@requires_cuda
def test_simulated_kernels_never_grow_their_globals_while_threads_run():
    # Regression: the simulator's threads iterate over a kernel's globals; a
    # first overflow warning inside the counter RNG added __warningregistry__
    # to them mid-launch ("dictionary changed size during iteration", a flaky
    # CI failure).  Every kernel namespace is seeded with the entry up front.
    import sys
    from minitorch.backends.cuda import random as cuda_random
    assert "__warningregistry__" in cuda_random._namespace
    torch.rand(64, device="cuda")
    for name, module in list(sys.modules.items()):
        if name.startswith("minitorch.backends") and module is not None:
            assert "__warningregistry__" in vars(module), name


# ---------------------------------------------------------------------------
# DataParallel: replicate, scatter, apply, gather; gradients sum into the originals
# ---------------------------------------------------------------------------
def _grads(model):
    return [host(p.grad) for p in model.parameters()]


def _dp_case(devices, output_device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = torch.randn(5, 3)
    model(x).pow(2).sum().backward()
    single = _grads(model)
    model.zero_grad()
    replicas = nn.parallel.replicate(model, devices)
    chunks = nn.parallel.scatter(x, devices)
    assert [c.shape[0] for c in chunks] == [3, 2][:len(devices)] or len(devices) != 2
    outs = nn.parallel.parallel_apply(replicas, [(c,) for c in chunks])
    y = nn.parallel.gather(outs, output_device)
    assert y.device == torch.device(output_device) and y.shape == (5, 2)
    y.pow(2).sum().backward()
    for got, want in zip(_grads(model), single):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_data_parallel_functions_on_cpu():
    _dp_case(["cpu", "cpu"], "cpu")


@requires_cuda
def test_data_parallel_functions_across_cpu_and_cuda():
    _dp_case(["cpu", "cuda:0"], "cpu")
    _dp_case(["cpu", "cuda:0", "cuda:0"], "cuda:0")


@requires_cuda
def test_data_parallel_module_on_cuda():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).cuda()
    x = torch.randn(6, 3, device="cuda")
    model(x).sum().backward()
    single = _grads(model)
    model.zero_grad()
    # One simulated GPU: two replicas on cuda:0 still exercise scatter and gather.
    dp = nn.DataParallel(model, device_ids=[0, 0])
    assert dp.device_ids == [0, 0] and dp.output_device == 0
    out = dp(x)
    assert out.is_cuda and out.shape == (6, 2)
    out.sum().backward()
    for got, want in zip(_grads(model), single):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert list(dp.state_dict()) == ["module.0.weight", "module.0.bias", "module.2.weight",
                                     "module.2.bias"]
    one = nn.DataParallel(model)                       # every device: here just one
    np.testing.assert_allclose(host(one(x.cpu())), host(model(x)), rtol=1e-6)
    with pytest.raises(RuntimeError, match="module must have its parameters and buffers on "
                                           "device cuda:0"):
        nn.DataParallel(nn.Linear(3, 2), device_ids=[0, 0])(x)


def test_data_parallel_without_devices_runs_the_module():
    model = nn.Linear(3, 2)
    dp = nn.DataParallel(model, device_ids=[])
    x = torch.randn(4, 3)
    np.testing.assert_allclose(host(dp(x)), host(model(x)))


# ---------------------------------------------------------------------------
# the command line, and Numba's disk cache guards
# ---------------------------------------------------------------------------
@requires_cuda
def test_cli_info_and_train_on_cuda():
    from click.testing import CliRunner

    from minitorch.cli import main
    result = CliRunner().invoke(main, ["info"])
    assert result.exit_code == 0 and "cuda available: True" in result.output
    result = CliRunner().invoke(main, ["train", "xor", "--device", "cuda", "--epochs", "1",
                                       "--limit", "16", "--batch-size", "8", "--no-progress",
                                       "--json"])
    assert result.exit_code == 0, result.output
    assert '"device": "cuda"' in result.output


@requires_cuda
@pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.is_simulator()
                    and not os.environ.get("MINITORCH_SLOW_CUDASIM_TESTS"),
                    reason="about 10-30 s on the CUDA simulator; set "
                           "MINITORCH_SLOW_CUDASIM_TESTS=1 to run it there")
def test_cli_train_mnist_on_cuda():
    from click.testing import CliRunner

    from minitorch.cli import main
    result = CliRunner().invoke(main, ["train", "mnist", "--model", "mlp", "--device", "cuda",
                                       "--epochs", "1", "--limit", "8", "--batch-size", "8",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "epoch   1/1" in result.output


def _constant(path: Path, name: str) -> str:
    return re.search(rf'^{name} = "(\w+)"', path.read_text(), re.M).group(1)


def test_cuda_kernels_carry_the_hashes_of_the_code_they_compile():
    backends = ROOT / "minitorch" / "backends"
    for kernel_file, name, source in [
            ("cuda/elementwise.py", "SCALAR_OPS_SHA256", "scalar_ops.py"),
            ("cuda/random.py", "CPU_RANDOM_SHA256", "cpu/random.py")]:
        digest = hashlib.sha256((backends / source).read_bytes()).hexdigest()
        assert _constant(backends / kernel_file, name) == digest, (
            f"{source} changed: set {name} in minitorch/backends/{kernel_file} to {digest!r} "
            "so that Numba recompiles the CUDA kernels that compile it")
