"""The serial CPU kernels and their ``*_parallel`` drivers give the same results.

The backend runs a kernel's parallel driver only for more than one chunk of
work (``elementwise.CHUNK`` elements) with more than one Numba thread, and the
serial kernel otherwise (``backend._parallel``).  Each test here runs the same
large operation on one thread and on two, so both paths run, and compares.
"""

import numba
import numpy as np
import pytest

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.backends.cpu import backend, elementwise

pytestmark = pytest.mark.kernels

needs_two_threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                                       reason="needs two Numba threads")


def on_threads(threads, fn):
    """``fn()`` with Numba limited to ``threads`` threads, as NumPy arrays."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        out = fn()
        return [t.detach().numpy().copy() for t in (out if isinstance(out, tuple) else (out,))]
    finally:
        numba.set_num_threads(before)


def same_on_one_and_two_threads(fn, exact=True):
    one, two = on_threads(1, fn), on_threads(2, fn)
    for a, b in zip(one, two):
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_the_size_test():
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert not backend._parallel(10 * elementwise.CHUNK)
        if numba.config.NUMBA_NUM_THREADS >= 2:
            numba.set_num_threads(2)
            assert backend._parallel(elementwise.CHUNK + 1)
            assert not backend._parallel(elementwise.CHUNK)
    finally:
        numba.set_num_threads(before)


@needs_two_threads
def test_elementwise():
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((300, 301)).astype(np.float32))
    y = torch.tensor(rng.standard_normal((300, 301)).astype(np.float32))
    row = torch.tensor(rng.standard_normal(301).astype(np.float32))
    col = torch.tensor(rng.standard_normal(300).astype(np.float32))
    same_on_one_and_two_threads(lambda: (
        x + y, x.T * y.T, x - row, x * 2, x.relu(), x.T.abs(), x.exp(), x.sin(), x > y,
        x.T < col, torch.where(x > 0, x, y), x.T.contiguous(), x.to(torch.float64),
        x.to(torch.int64) // 3, torch.maximum(x, y), x.T.clone() + 1, x[:, ::2].abs(),
        x[::2].relu(), (x * 10).to(torch.int64).abs()))


@needs_two_threads
def test_reductions():
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((300, 301)).astype(np.float32))
    big = torch.tensor(rng.standard_normal(200_000).astype(np.float32))
    same_on_one_and_two_threads(lambda: (
        x.amax(0), x.amin(1), x.argmax(1), x.T.argmin(1), big.max(), big.argmax(),
        (x > 0).all(1), (x > 0).any(0), x.max(0).indices), exact=True)
    same_on_one_and_two_threads(lambda: (
        x.sum(), x.sum(0), x.sum(1), x.T.sum(0), big.sum(), x[:, ::2].sum(0),
        x.prod(1)), exact=False)


@needs_two_threads
def test_convolution_pooling_and_their_gradients():
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal((8, 3, 32, 32)).astype(np.float32),
                     requires_grad=True)
    w = torch.tensor(rng.standard_normal((6, 3, 5, 5)).astype(np.float32), requires_grad=True)

    def step():
        x.grad = None
        w.grad = None
        y = F.max_pool2d(F.conv2d(x, w, padding=2), 2)
        cols = F.unfold(x, 3, padding=1)                 # im2col, and col2im backward
        (y.sum() + (cols * cols).sum()).backward()
        return y, cols, x.grad, w.grad
    same_on_one_and_two_threads(step, exact=False)


@needs_two_threads
def test_random_fills_do_not_depend_on_threads():
    def draw():
        torch.manual_seed(5)
        return (torch.rand(50_001), torch.randn(50_001), torch.randint(0, 7, (50_001,)),
                torch.bernoulli(torch.full((50_001,), 0.3)),
                torch.empty(50_001).bernoulli_(0.6))
    same_on_one_and_two_threads(draw)


@needs_two_threads
@pytest.mark.parametrize("name, kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                          ("Adam", {"lr": 0.01, "amsgrad": True}),
                                          ("RMSprop", {"lr": 0.01, "centered": True}),
                                          ("Adagrad", {"lr": 0.1})])
def test_optimizer_steps(name, kwargs):
    def run():
        p = torch.tensor(np.linspace(-1, 1, 40_000, dtype=np.float32), requires_grad=True)
        opt = getattr(torch.optim, name)([p], **kwargs)
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
        return p
    same_on_one_and_two_threads(run)


@needs_two_threads
def test_softmax_loss_and_index_rows():
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((600, 40)).astype(np.float32), requires_grad=True)
    target = torch.tensor(rng.integers(0, 40, 600))
    table = torch.tensor(rng.standard_normal((50, 700)).astype(np.float32))
    rows = torch.tensor(rng.integers(-50, 50, 30))

    def step():
        x.grad = None
        loss = F.cross_entropy(x, target) + x.softmax(1).square().sum()
        loss.backward()
        return x.softmax(1), x.grad, table.index_select(0, rows % 50), table[rows]
    same_on_one_and_two_threads(step, exact=False)
