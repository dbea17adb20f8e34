"""Course module 5, training: optimizers, learning-rate schedules, batching and shuffling.

``minitorch course test 5.4`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as torch
from minitorch.backends import optimizer_rules
from minitorch.demos.data import load_task_data
from minitorch.demos.train import forward_backward
from minitorch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler, \
    TensorDataset

pytestmark = pytest.mark.data


@pytest.mark.task("5.4")
def test_batch_sampler_groups_indices():
    assert list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)) == [
        [0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)) == [
        [0, 1, 2], [3, 4, 5]]
    assert list(BatchSampler(SequentialSampler(range(6)), 3, drop_last=False)) == [
        [0, 1, 2], [3, 4, 5]]


@pytest.mark.task("5.4")
def test_data_loader_batches_in_order():
    x = torch.arange(10.0).reshape(5, 2)
    y = torch.arange(5)
    batches = list(DataLoader(TensorDataset(x, y), batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0][0].shape == (2, 2)
    assert len(DataLoader(TensorDataset(x, y), batch_size=2, drop_last=True)) == 2


@pytest.mark.task("5.5")
def test_random_sampler_is_a_fresh_permutation_each_epoch():
    g = torch.Generator().manual_seed(0)
    sampler = RandomSampler(range(20), generator=g)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != second
    assert first != list(range(20))


@pytest.mark.task("5.5")
def test_random_sampler_replacement_num_samples_and_seeding():
    g = torch.Generator().manual_seed(1)
    drawn = list(RandomSampler(range(5), replacement=True, num_samples=50, generator=g))
    assert len(drawn) == 50 and set(drawn) <= set(range(5))
    longer = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(longer) == 10 and sorted(longer[:4]) == [0, 1, 2, 3]
    a = list(RandomSampler(range(10), generator=torch.Generator().manual_seed(3)))
    b = list(RandomSampler(range(10), generator=torch.Generator().manual_seed(3)))
    assert a == b
    torch.manual_seed(0)                       # without a generator: the global one
    shuffled = list(RandomSampler(range(8)))
    assert sorted(shuffled) == list(range(8)) and shuffled != list(range(8))


@pytest.mark.task("5.1")
def test_step_lr_multiplies_by_gamma_every_step_size_epochs():
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    rates = []
    for _ in range(6):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    assert sched.get_last_lr() == [0.125]


# ---------------------------------------------------------------------------
# The optimizers' rules for one weight (called as plain Python first, then
# through the compiled kernels by the optimizers themselves).
# ---------------------------------------------------------------------------
def _sgd(lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
         maximize=False, first_step=False):
    return optimizer_rules.SGDStep(lr, momentum, dampening, weight_decay, nesterov, maximize,
                                   first_step)


@pytest.mark.task("5.2")
def test_sgd_rule_plain_weight_decay_and_maximize():
    assert optimizer_rules.sgd_step(1.0, 0.5, 0.0, _sgd())[1] == pytest.approx(0.95)
    assert optimizer_rules.sgd_step(1.0, 0.5, 0.0, _sgd(weight_decay=0.1))[1] == \
        pytest.approx(1.0 - 0.1 * 0.6)
    assert optimizer_rules.sgd_step(1.0, 0.5, 0.0, _sgd(maximize=True))[1] == pytest.approx(1.05)


@pytest.mark.task("5.2")
def test_sgd_rule_momentum_buffer_dampening_and_nesterov():
    buf, p = optimizer_rules.sgd_step(1.0, 0.5, 123.0, _sgd(momentum=0.9, first_step=True))
    assert (buf, p) == (pytest.approx(0.5), pytest.approx(0.95))      # the buffer starts at g
    buf, p = optimizer_rules.sgd_step(p, 0.5, buf, _sgd(momentum=0.9, dampening=0.5))
    assert buf == pytest.approx(0.9 * 0.5 + 0.5 * 0.5) and p == pytest.approx(0.95 - 0.1 * buf)
    buf, p = optimizer_rules.sgd_step(1.0, 0.5, 0.5, _sgd(momentum=0.9, nesterov=True))
    assert buf == pytest.approx(0.95) and p == pytest.approx(1.0 - 0.1 * (0.5 + 0.9 * 0.95))


def _momentum_sgd_oracle(p, grads, lr, momentum, weight_decay, nesterov):
    """torch.optim.SGD's documented update, in NumPy."""
    buf = None
    for g in grads:
        g = g + weight_decay * p
        buf = g.copy() if buf is None else momentum * buf + g
        p = p - lr * (g + momentum * buf if nesterov else buf)
    return p


@pytest.mark.task("5.2")
@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_optimizer_steps_like_pytorch(nesterov):
    rng = np.random.default_rng(0)
    start, grads = rng.standard_normal(5), rng.standard_normal((3, 5))
    p = torch.tensor(start, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=nesterov)
    for g in grads:
        p.grad = torch.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(),
                               _momentum_sgd_oracle(start, grads, 0.1, 0.9, 0.01, nesterov))


def _adam_oracle(p, grads, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0,
                 decoupled=False, amsgrad=False):
    """torch.optim.Adam's / AdamW's documented update, in NumPy."""
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt((vmax if amsgrad else v) / (1 - b2 ** t)) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p


@pytest.mark.task("5.3")
def test_adam_rule_first_step_moves_by_lr():
    hyper = optimizer_rules.AdamStep(1.0, 0.01, 0.9, 0.999, 1e-8, 0.0, False, False, False)
    step_size, sqrt_bias2 = optimizer_rules.adam_scales(hyper)
    m, v, vmax, p = optimizer_rules.adam_step(1.0, 3.0, 0.0, 0.0, 0.0, hyper, step_size,
                                              sqrt_bias2)
    assert m == pytest.approx(0.3) and v == pytest.approx(0.001 * 9)
    assert p == pytest.approx(1.0 - 0.01, rel=1e-6)       # Adam's first step is lr * sign(g)


@pytest.mark.task("5.3")
@pytest.mark.parametrize("kind", ["adam", "adam_l2", "adamw", "amsgrad"])
def test_adam_optimizers_step_like_pytorch(kind):
    rng = np.random.default_rng(1)
    start, grads = rng.standard_normal(6), rng.standard_normal((4, 6))
    p = torch.tensor(start, requires_grad=True)
    options = {"adam": {}, "adam_l2": {"weight_decay": 0.1}, "amsgrad": {"amsgrad": True},
               "adamw": {"weight_decay": 0.1}}[kind]
    make = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
    opt = make([p], lr=1e-2, **options)
    for g in grads:
        p.grad = torch.tensor(g)
        opt.step()
    expected = _adam_oracle(start, grads, decoupled=kind == "adamw",
                            weight_decay=options.get("weight_decay", 0.0),
                            amsgrad=kind == "amsgrad")
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-10)


# ---------------------------------------------------------------------------
# The training step of ``minitorch train``.
# ---------------------------------------------------------------------------
@pytest.mark.task("5.6")
def test_forward_backward_replaces_the_old_gradients():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(2):                               # the second call must not add to the first
        logits, loss = forward_backward(net, loss_fn, opt, x, y)
    assert logits.shape == (4, 2) and loss.shape == ()
    expected = torch.autograd.grad(loss_fn(net(x), y), [net.weight, net.bias])
    np.testing.assert_allclose(net.weight.grad.numpy(), expected[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(net.bias.grad.numpy(), expected[1].numpy(), rtol=1e-6)


class _PlainSGD:
    """``p -= lr * p.grad`` with tensor ops: an optimizer that needs no other task."""

    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with torch.no_grad():
            for p in self.params:
                p.sub_(self.lr * p.grad)


@pytest.mark.task("5.6")
def test_training_steps_on_the_shipped_mnist_digits_learn():
    data = load_task_data("mnist", limit=2000, test_limit=500)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 10))
    opt, loss_fn = _PlainSGD(net.parameters(), lr=0.1), torch.nn.CrossEntropyLoss()
    for epoch in range(2):
        order = torch.randperm(data.train_x.shape[0])
        for b in range(0, len(order), 32):
            idx = order[b:b + 32]
            forward_backward(net, loss_fn, opt, data.train_x[idx], data.train_y[idx])
            opt.step()
    with torch.no_grad():
        accuracy = (net(data.test_x).argmax(1) == data.test_y).float().mean().item()
    assert accuracy >= 0.8                               # ~0.9 after two epochs; chance is 0.1
