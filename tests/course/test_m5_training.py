"""Course module 5, training: optimizers (SGD, Adam, RMSprop, Adagrad), a learning-rate
schedule, batching, shuffling, the data loader's epoch and one training step.

``minitorch course test 5.4`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
from minitorch.backends import optimizer_rules
from minitorch.ops.fused import fused_update
from minitorch.demos.data import load_task_data
from minitorch.demos.train import forward_backward
from minitorch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, \
    SequentialSampler, TensorDataset

pytestmark = pytest.mark.data


def _batches_oracle(indices, size, drop_last):
    out = [list(indices[i:i + size]) for i in range(0, len(indices), size)]
    return out[:-1] if out and drop_last and len(out[-1]) < size else out


@pytest.mark.task("5.4")
def test_batch_sampler_groups_indices():
    assert list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)) == [
        [0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)) == [
        [0, 1, 2], [3, 4, 5]]
    assert list(BatchSampler(SequentialSampler(range(6)), 3, drop_last=False)) == [
        [0, 1, 2], [3, 4, 5]]
    assert list(BatchSampler([], 2, drop_last=False)) == []


@pytest.mark.task("5.4")
@given(indices=st.lists(st.integers(0, 99), max_size=20), size=st.integers(1, 6),
       drop_last=st.booleans())
def test_batch_sampler_keeps_the_sampler_order_for_any_size(indices, size, drop_last):
    sampler = BatchSampler(indices, size, drop_last)
    first = list(sampler)
    assert first == _batches_oracle(indices, size, drop_last)
    assert list(sampler) == first                          # every epoch, the same again
    assert len(first) == len(sampler)


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
    assert len(drawn) == 50 and set(drawn) == set(range(5))   # 50 draws: every value seen
    # Independent draws: some run of 5 is not a permutation (each is with probability 0.96).
    assert any(sorted(drawn[k:k + 5]) != list(range(5)) for k in range(0, 50, 5))
    longer = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(longer) == 10 and sorted(longer[:4]) == [0, 1, 2, 3]
    assert sorted(longer[4:8]) == [0, 1, 2, 3]
    a = list(RandomSampler(range(10), generator=torch.Generator().manual_seed(3)))
    b = list(RandomSampler(range(10), generator=torch.Generator().manual_seed(3)))
    assert a == b
    torch.manual_seed(0)                       # without a generator: the global one
    shuffled = list(RandomSampler(range(8)))
    assert sorted(shuffled) == list(range(8)) and shuffled != list(range(8))
    torch.manual_seed(0)
    assert list(RandomSampler(range(8))) == shuffled


@pytest.mark.task("5.5")
@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), extra=st.integers(0, 12), seed=st.integers(0, 9))
def test_random_sampler_gives_whole_permutations_for_any_size(n, extra, seed):
    num = n + extra
    got = list(RandomSampler(range(n), num_samples=num,
                             generator=torch.Generator().manual_seed(seed)))
    assert len(got) == num and all(isinstance(i, int) for i in got)
    for k in range(0, num - n + 1, n):
        assert sorted(got[k:k + n]) == list(range(n))
    assert set(got[num - num % n:]) <= set(range(n))


@pytest.mark.task("5.1")
def test_step_lr_multiplies_by_gamma_every_step_size_epochs():
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    rates = []
    for _ in range(6):
        rates.append(opt.param_groups[0]["lr"])
        sched.step()
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    assert sched.get_last_lr() == [0.125]


@pytest.mark.task("5.1")
@settings(max_examples=30, deadline=None)
@given(step_size=st.integers(1, 4), gamma=st.sampled_from([0.5, 0.1, 2.0]),
       epochs=st.integers(1, 12))
def test_step_lr_follows_the_closed_form_for_every_group(step_size, gamma, epochs):
    a, b = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([{"params": [a], "lr": 1.0}, {"params": [b], "lr": 0.3}], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=step_size, gamma=gamma)
    for epoch in range(epochs):
        for group, base in zip(opt.param_groups, (1.0, 0.3)):
            assert group["lr"] == pytest.approx(base * gamma ** (epoch // step_size))
        sched.step()


@pytest.mark.task("5.1")
def test_step_lr_jumps_to_an_epoch_by_its_own_rule():
    # step(epoch) (PyTorch's older form) replays get_lr from the base rate to that epoch.
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.1)
    for epoch, want in ((5, 0.1), (7, 0.01), (2, 1.0), (9, 0.001), (0, 1.0)):
        sched.step(epoch)
        assert opt.param_groups[0]["lr"] == pytest.approx(want)
        assert sched.last_epoch == epoch


@pytest.mark.task("5.1")
def test_step_lr_builds_on_the_current_rate():
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    sched.step()                              # epoch 1: unchanged
    opt.param_groups[0]["lr"] = 4.0           # changed by hand (as another scheduler may)
    sched.step()                              # epoch 2: decays what is there now
    assert opt.param_groups[0]["lr"] == pytest.approx(2.0)


# ---------------------------------------------------------------------------
# The optimizers' rules for one weight: called as plain Python first, then
# through the compiled kernel (``fused_update``) step after step, with the
# records built here: the optimizers' own step is task 5.9.
# ---------------------------------------------------------------------------
def _zeros(n, k):
    """``k`` state buffers of ``n`` float64 zeros (Adam's moments, RMSprop's averages)."""
    return [torch.zeros(n, dtype=torch.float64) for _ in range(k)]


def _moments(n, amsgrad):
    """Adam's state buffers: the two moments, and the largest second moment (amsgrad)."""
    return _zeros(n, 2) + [torch.zeros(n, dtype=torch.float64) if amsgrad else None]


def _kernel_steps(start, grads, record, buffers):
    """``start`` after ``fused_update(record(t), p, g_t, buffers)`` for t = 1, 2, ..."""
    p = torch.tensor(start)
    for t, g in enumerate(grads, start=1):
        fused_update(record(t), p, torch.tensor(g), buffers)
    return p.numpy()
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
def test_sgd_rule_in_the_kernel_steps_like_pytorch(nesterov):
    rng = np.random.default_rng(0)
    start, grads = rng.standard_normal(5), rng.standard_normal((3, 5))
    got = _kernel_steps(start, grads, lambda t: _sgd(lr=0.1, momentum=0.9, weight_decay=0.01,
                                                     nesterov=nesterov, first_step=t == 1),
                        [torch.zeros(5, dtype=torch.float64)])
    np.testing.assert_allclose(got, _momentum_sgd_oracle(start, grads, 0.1, 0.9, 0.01, nesterov))


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
def test_adam_rule_in_the_kernel_steps_like_pytorch(kind):
    rng = np.random.default_rng(1)
    start, grads = rng.standard_normal(6), rng.standard_normal((4, 6))
    options = {"adam": {}, "adam_l2": {"weight_decay": 0.1}, "amsgrad": {"amsgrad": True},
               "adamw": {"weight_decay": 0.1}}[kind]
    got = _kernel_steps(start, grads, lambda t: optimizer_rules.AdamStep(
        step=float(t), lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8,
        weight_decay=options.get("weight_decay", 0.0), amsgrad=kind == "amsgrad",
        maximize=False, decoupled=kind == "adamw"), _moments(6, kind == "amsgrad"))
    expected = _adam_oracle(start, grads, decoupled=kind == "adamw",
                            weight_decay=options.get("weight_decay", 0.0),
                            amsgrad=kind == "amsgrad")
    np.testing.assert_allclose(got, expected, rtol=1e-10)


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


# ---------------------------------------------------------------------------
# 5.2 / 5.3 every option, against PyTorch's documented algorithms in NumPy
# ---------------------------------------------------------------------------
def _sgd_oracle(p, grads, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """torch.optim.SGD's documented algorithm, in NumPy."""
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


@pytest.mark.task("5.2")
@settings(max_examples=25, deadline=None)
@given(momentum=st.sampled_from([0.0, 0.9]), dampening=st.sampled_from([0.0, 0.3]),
       weight_decay=st.sampled_from([0.0, 0.1]), nesterov=st.booleans(), maximize=st.booleans(),
       seed=st.integers(0, 9))
def test_sgd_every_option_matches_numpy(momentum, dampening, weight_decay, nesterov, maximize,
                                        seed):
    if nesterov and (momentum == 0 or dampening != 0):
        nesterov = False
    rng = np.random.default_rng(seed)
    start, grads = rng.standard_normal(4), rng.standard_normal((3, 4))
    got = _kernel_steps(start, grads, lambda t: _sgd(
        lr=0.1, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
        nesterov=nesterov, maximize=maximize, first_step=t == 1 and momentum != 0),
        [torch.zeros(4, dtype=torch.float64) if momentum else None])
    np.testing.assert_allclose(got, _sgd_oracle(
        start, grads, 0.1, momentum, dampening, weight_decay, nesterov, maximize), rtol=1e-12)


@pytest.mark.task("5.3")
@settings(max_examples=25, deadline=None)
@given(weight_decay=st.sampled_from([0.0, 0.1]), amsgrad=st.booleans(), decoupled=st.booleans(),
       maximize=st.booleans(), seed=st.integers(0, 9))
def test_adam_every_option_matches_numpy(weight_decay, amsgrad, decoupled, maximize, seed):
    rng = np.random.default_rng(seed)
    start, grads = rng.standard_normal(4), rng.standard_normal((4, 4))
    got = _kernel_steps(start, grads, lambda t: optimizer_rules.AdamStep(
        step=float(t), lr=1e-2, beta1=0.8, beta2=0.9, eps=1e-8, weight_decay=weight_decay,
        amsgrad=amsgrad, maximize=maximize, decoupled=decoupled), _moments(4, amsgrad))
    expected = _adam_oracle(start, -grads if maximize else grads, b1=0.8, b2=0.9,
                            weight_decay=weight_decay, decoupled=decoupled, amsgrad=amsgrad)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


# ---------------------------------------------------------------------------
# 5.7 the data loader's epoch (explicit batch samplers: no other task needed)
# ---------------------------------------------------------------------------
class _Squares(Dataset):
    """Sample i is (i, i*i); counts how samples are fetched."""

    def __init__(self, n, many=False):
        self.n, self.single, self.batches = n, 0, []
        if many:
            self.__getitems__ = self._getitems

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.single += 1
        return (float(i), i * i)

    def _getitems(self, indices):
        self.batches.append(list(indices))
        return [(float(i), i * i) for i in indices]


@pytest.mark.task("5.7")
def test_data_loader_collates_each_batch_of_the_batch_sampler():
    data = _Squares(6)
    loader = DataLoader(data, batch_sampler=[[4, 1], [0], [5, 2, 3]])
    batches = list(loader)
    assert [b[1].tolist() for b in batches] == [[16, 1], [0], [25, 4, 9]]
    assert batches[0][0].dtype == torch.float64 and batches[0][1].dtype == torch.int64
    assert data.single == 6
    assert [b[1].tolist() for b in loader] == [[16, 1], [0], [25, 4, 9]]   # a second epoch


@pytest.mark.task("5.7")
def test_data_loader_fetches_a_batch_at_once_when_the_dataset_can():
    data = _Squares(5, many=True)
    seen = []
    loader = DataLoader(data, batch_sampler=[[3, 1], [2]],
                        collate_fn=lambda samples: seen.append(samples) or len(samples))
    assert list(loader) == [2, 1]
    assert data.batches == [[3, 1], [2]] and data.single == 0
    assert seen[0] == [(3.0, 9), (1.0, 1)]


@pytest.mark.task("5.7")
def test_data_loader_without_batching_yields_each_sample():
    x = torch.arange(8.0).reshape(4, 2)
    loader = DataLoader(TensorDataset(x), batch_size=None, sampler=[2, 0, 3])
    got = list(loader)
    assert len(got) == 3 and [s[0].tolist() for s in got] == [[4.0, 5.0], [0.0, 1.0],
                                                               [6.0, 7.0]]
    assert got[0][0].shape == (2,)                           # not stacked into a batch


# ---------------------------------------------------------------------------
# 5.8 RMSprop's rule
# ---------------------------------------------------------------------------
def _rmsprop_oracle(p, grads, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    """torch.optim.RMSprop's documented algorithm, in NumPy."""
    v, gavg, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        vt = v
        if centered:
            gavg = alpha * gavg + (1 - alpha) * g
            vt = v - gavg * gavg
        if momentum > 0:
            buf = momentum * buf + g / (np.sqrt(vt) + eps)
            p = p - lr * buf
        else:
            p = p - lr * g / (np.sqrt(vt) + eps)
    return p


@pytest.mark.task("5.8")
def test_rmsprop_rule_for_one_weight():
    hyper = optimizer_rules.RMSpropStep(0.1, 0.75, 0.0, 0.0, 0.0, False, False)
    v, gavg, buf, p = optimizer_rules.rmsprop_step(1.0, 2.0, 0.0, 7.0, 8.0, hyper)
    assert (v, p) == (pytest.approx(1.0), pytest.approx(0.8))
    assert (gavg, buf) == (7.0, 8.0)                              # unused: unchanged
    hyper = optimizer_rules.RMSpropStep(0.1, 0.75, 0.0, 0.0, 0.5, True, True)
    v, gavg, buf, p = optimizer_rules.rmsprop_step(1.0, -2.0, 0.0, 0.0, 0.0, hyper)
    # maximize: g = 2; v = 1, grad_avg = 0.5, centered: sqrt(1 - 0.25); buf = 2 / sqrt(0.75)
    assert v == pytest.approx(1.0) and gavg == pytest.approx(0.5)
    assert buf == pytest.approx(2 / np.sqrt(0.75)) and p == pytest.approx(1 - 0.1 * buf)


@pytest.mark.task("5.8")
@settings(max_examples=25, deadline=None)
@given(weight_decay=st.sampled_from([0.0, 0.1]), momentum=st.sampled_from([0.0, 0.5]),
       centered=st.booleans(), maximize=st.booleans(), seed=st.integers(0, 9))
def test_rmsprop_every_option_matches_numpy(weight_decay, momentum, centered, maximize, seed):
    rng = np.random.default_rng(seed)
    start, grads = rng.standard_normal(4), rng.standard_normal((4, 4))
    square_avg, grad_avg, buf = _zeros(4, 3)
    got = _kernel_steps(start, grads, lambda t: optimizer_rules.RMSpropStep(
        lr=1e-2, alpha=0.9, eps=1e-6, weight_decay=weight_decay, momentum=momentum,
        centered=centered, maximize=maximize),
        [square_avg, grad_avg if centered else None, buf if momentum > 0 else None])
    expected = _rmsprop_oracle(start, grads, 1e-2, 0.9, 1e-6, weight_decay, momentum, centered,
                               maximize)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


# ---------------------------------------------------------------------------
# 5.9 the optimizers' step (the rules, tasks 5.2/5.10, done by the test) and 5.10
# Adagrad's rule
# ---------------------------------------------------------------------------
def _adagrad_oracle(p, grads, lr, lr_decay, weight_decay, eps, maximize, initial=0.0):
    """torch.optim.Adagrad's documented algorithm, in NumPy."""
    total = np.full_like(p, initial)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        g = g + weight_decay * p
        rate = lr / (1 + (t - 1) * lr_decay)
        total = total + g * g
        p = p - rate * g / (np.sqrt(total) + eps)
    return p


@pytest.fixture
def numpy_adagrad_rule(monkeypatch):
    """``fused_update`` in Optimizer.step replaced by NumPy's Adagrad rule (other records are
    only recorded); records every call."""
    import minitorch.optim.optimizer as optimizer

    calls = []

    def fused_update(hyper, param, grad, state):
        calls.append((hyper, param, state))
        if not isinstance(hyper, optimizer_rules.AdagradStep):
            return
        (total,) = state
        g = grad.numpy() * (-1 if hyper.maximize else 1) + hyper.weight_decay * param.detach().numpy()
        rate = hyper.lr / (1 + (hyper.step - 1) * hyper.lr_decay)
        new_total = total.numpy() + g * g
        total.copy_(torch.tensor(new_total, dtype=total.dtype))
        param.copy_(torch.tensor(param.detach().numpy() - rate * g / (np.sqrt(new_total) + hyper.eps),
                                 dtype=param.dtype))

    monkeypatch.setattr(optimizer, "fused_update", fused_update)
    return calls


@pytest.mark.task("5.9")
def test_adagrad_step_applies_the_rule_with_each_groups_settings(numpy_adagrad_rule):
    rng = np.random.default_rng(2)
    a0, b0 = rng.standard_normal(3), rng.standard_normal(2)
    a, b = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    c = torch.zeros(2, requires_grad=True)                   # never gets a gradient
    opt = torch.optim.Adagrad([{"params": [a, c], "lr": 0.1, "lr_decay": 0.5},
                               {"params": [b], "lr": 0.2, "weight_decay": 0.1,
                                "maximize": True, "initial_accumulator_value": 0.3}])
    ga, gb = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    for k in range(3):
        a.grad, b.grad = torch.tensor(ga[k]), torch.tensor(gb[k])
        assert opt.step() is None
    assert [h.step for h, _, _ in numpy_adagrad_rule] == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert all(p is not c for _, p, _ in numpy_adagrad_rule)
    np.testing.assert_allclose(a.detach().numpy(),
                               _adagrad_oracle(a0, ga, 0.1, 0.5, 0.0, 1e-10, False), rtol=1e-12)
    np.testing.assert_allclose(b.detach().numpy(), _adagrad_oracle(
        b0, gb, 0.2, 0.0, 0.1, 1e-10, True, initial=0.3), rtol=1e-12)
    assert opt.state[a]["step"].item() == 3.0 and c.detach().tolist() == [0.0, 0.0]


@pytest.mark.task("5.9")
def test_adagrad_step_returns_the_closures_loss(numpy_adagrad_rule):
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.Adagrad([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(5.0) and len(numpy_adagrad_rule) == 1
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 1.9], rtol=1e-6)


@pytest.mark.task("5.9")
def test_every_optimizer_steps_through_it(numpy_adagrad_rule):
    # SGD and Adam give their own records and buffers; the step applies them in order,
    # once per parameter with a gradient, each record made once (it counts the step).
    a, b = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
    sgd = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    a.grad, b.grad = torch.ones(2), torch.ones(3)
    sgd.step()
    sgd.step()
    records = [h for h, _, _ in numpy_adagrad_rule]
    assert [(h.lr, h.first_step) for h in records] == [(0.1, True), (0.5, True), (0.1, False),
                                                       (0.5, False)]
    assert [p is q for (_, p, _), q in zip(numpy_adagrad_rule, [a, b, a, b])] == [True] * 4
    assert numpy_adagrad_rule[2][2] == [sgd.state[a]["momentum_buffer"]]
    numpy_adagrad_rule.clear()
    b.grad = None
    adam = torch.optim.Adam([a, b], lr=0.01)
    for _ in range(3):
        adam.step()
    assert [h.step for h, _, _ in numpy_adagrad_rule] == [1.0, 2.0, 3.0]
    assert all(p is a for _, p, _ in numpy_adagrad_rule) and not adam.state[b]


@pytest.mark.task("5.10")
def test_adagrad_rule_for_one_weight():
    hyper = optimizer_rules.AdagradStep(1.0, 0.1, 0.0, 0.0, 0.0, False)
    total, p = optimizer_rules.adagrad_step(1.0, 2.0, 0.0, hyper, 0.1)
    assert (total, p) == (pytest.approx(4.0), pytest.approx(0.9))
    hyper = optimizer_rules.AdagradStep(2.0, 0.1, 0.5, 0.5, 1e-3, True)
    total, p = optimizer_rules.adagrad_step(2.0, 1.0, 3.0, hyper, 0.05)
    g = -1.0 + 0.5 * 2.0                                        # maximize, then weight decay
    assert total == pytest.approx(3.0 + g * g) and p == pytest.approx(2.0 - 0.05 * g / (
        np.sqrt(3.0 + g * g) + 1e-3))


@pytest.mark.task("5.10")
@settings(max_examples=25, deadline=None)
@given(lr_decay=st.sampled_from([0.0, 0.5]), weight_decay=st.sampled_from([0.0, 0.1]),
       maximize=st.booleans(), dtype=st.sampled_from([torch.float64, torch.float32]),
       seed=st.integers(0, 9))
def test_adagrad_rule_in_the_compiled_kernel_matches_numpy(lr_decay, weight_decay, maximize,
                                                           dtype, seed):
    rng = np.random.default_rng(seed)
    start, grads = rng.standard_normal(5), rng.standard_normal((3, 5))
    p = torch.tensor(start, dtype=dtype)
    total = torch.full((5,), 0.25, dtype=dtype)
    for step, g in enumerate(grads, start=1):
        hyper = optimizer_rules.AdagradStep(float(step), 0.1, lr_decay, weight_decay, 1e-6,
                                            maximize)
        fused_update(hyper, p, torch.tensor(g, dtype=dtype), [total])
    expected = _adagrad_oracle(start, grads, 0.1, lr_decay, weight_decay, 1e-6, maximize, 0.25)
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-5 if dtype == torch.float32 else 1e-12)
