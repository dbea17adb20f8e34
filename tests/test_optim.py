"""Optimizers and schedulers against PyTorch's formulas."""

import typing

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn, optim

pytestmark = pytest.mark.optim

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
]


def _reference_sgd(w, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0,
                   nesterov=False, maximize=False):
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * w
        if momentum:
            buf = g if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def _reference_adam(w, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                    amsgrad=False, decoupled=False):
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    vmax = np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        if weight_decay:
            if decoupled:
                w = w * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - betas[1] ** t) + eps
        w = w - lr / (1 - betas[0] ** t) * m / denom
    return w


def _run(name, kw, w0, grads, device="cpu"):
    p = nn.Parameter(torch.tensor(w0, device=device))
    opt = getattr(optim, name)([p], **kw)
    for g in grads:
        p.grad = torch.tensor(g, device=device)
        opt.step()
    assert p.device.type == device
    return p.detach().cpu().numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,kw", CASES)
def test_optimizers(name, kw, dtype, device):
    """Each update rule (written once, in backends/optimizer_rules.py) on each device."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((5, 3)).astype(dtype)
    grads = [rng.standard_normal((5, 3)).astype(dtype) for _ in range(4)]
    got = _run(name, kw, w0, grads, device)
    assert got.dtype == dtype
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (1e-5, 1e-6)
    if name == "SGD":
        np.testing.assert_allclose(got, _reference_sgd(w0, grads, **kw), rtol=rtol, atol=atol)
    elif name in ("Adam", "AdamW"):
        ref = _reference_adam(w0, grads, kw["lr"], weight_decay=kw.get("weight_decay",
                                                                       0.01 if name == "AdamW"
                                                                       else 0.0),
                              amsgrad=kw.get("amsgrad", False), decoupled=name == "AdamW")
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
    pt = pytest.importorskip("torch")
    q = pt.nn.Parameter(pt.tensor(w0))
    o = getattr(pt.optim, name)([q], **kw)
    for g in grads:
        q.grad = pt.tensor(g)
        o.step()
    np.testing.assert_allclose(got, q.detach().cpu().numpy(), rtol=rtol * 10, atol=atol)


def test_hyper_parameters_travel_as_one_typed_record(default_device):
    """The optimizers pass the kernels one record per step: named, typed fields."""
    from minitorch.backends import optimizer_rules

    for record in (optimizer_rules.SGDStep, optimizer_rules.AdamStep,
                   optimizer_rules.RMSpropStep, optimizer_rules.AdagradStep):
        assert set(typing.get_type_hints(record).values()) <= {float, bool}
        assert record in optimizer_rules.KERNELS
    step = optimizer_rules.AdamStep(step=1.0, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                                    weight_decay=0.0, amsgrad=False, maximize=False,
                                    decoupled=False)
    assert step.lr == 1e-3 and step.STATE == ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    assert optim.Adagrad.__module__ == "minitorch.optim.adagrad"


def test_parameters_keep_identity_and_non_contiguous_params(default_device):
    w = nn.Parameter(torch.ones(3, 4))
    view = w.t()                                  # optimizer state follows the parameter
    opt = optim.SGD([w], lr=1.0)
    w.grad = torch.ones(3, 4)
    opt.step()
    assert view.tolist()[0] == [0.0, 0.0, 0.0]
    p = nn.Parameter(torch.ones(4, 3).t())        # a non-contiguous parameter
    opt2 = optim.Adam([p], lr=0.5)
    p.grad = torch.ones(3, 4)
    opt2.step()
    np.testing.assert_allclose(p.detach().cpu().numpy(), 0.5, rtol=1e-6)


def test_param_groups_state_dict_round_trip(default_device):
    a, b = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(3))
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[0]["lr"] == 0.1
    a.grad, b.grad = torch.ones(2), torch.ones(3)
    opt.step()
    sd = opt.state_dict()
    assert set(sd["state"]) == {0, 1} and sd["param_groups"][1]["params"] == [1]
    a2, b2 = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(3))
    opt2 = optim.Adam([{"params": [a2]}, {"params": [b2], "lr": 0.5}], lr=0.1)
    opt2.load_state_dict(sd)
    assert float(opt2.state[b2]["step"].item()) == 1.0
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)


def test_zero_grad_sets_none(default_device):
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    opt = optim.SGD([p], lr=0.1)
    opt.zero_grad()
    assert p.grad is None
    p.grad = torch.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]


def _lrs(make, steps=6, lr=1.0):
    p = nn.Parameter(torch.ones(1))
    opt = optim.SGD([p], lr=lr)
    sched = make(opt)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


def test_schedulers(default_device):
    S = optim.lr_scheduler
    assert _lrs(lambda o: S.StepLR(o, 2, 0.5)) == [1.0, 0.5, 0.5, 0.25, 0.25, 0.125]
    assert _lrs(lambda o: S.MultiStepLR(o, [2, 4], 0.1)) == pytest.approx(
        [1.0, 0.1, 0.1, 0.01, 0.01, 0.01])
    assert _lrs(lambda o: S.ExponentialLR(o, 0.5), 3) == pytest.approx([0.5, 0.25, 0.125])
    cos = _lrs(lambda o: S.CosineAnnealingLR(o, 4), 4)
    assert cos == pytest.approx([(1 + np.cos(np.pi * t / 4)) / 2 for t in range(1, 5)])
    assert _lrs(lambda o: S.LambdaLR(o, lambda e: 1 / (e + 1)), 3) == pytest.approx(
        [1 / 2, 1 / 3, 1 / 4])
    p = nn.Parameter(torch.ones(1))
    opt = optim.SGD([p], lr=1.0)
    plateau = S.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    for metric in [1.0, 1.0, 1.0, 1.0]:
        plateau.step(metric)
    assert opt.param_groups[0]["lr"] == 0.5


def test_onecycle_matches_pytorch(default_device):
    pt = pytest.importorskip("torch")
    ours = _lrs(lambda o: optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10), 9)
    q = pt.nn.Parameter(pt.ones(1))
    o = pt.optim.SGD([q], lr=1.0, momentum=0.9)
    s = pt.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10)
    ref = []
    for _ in range(9):
        o.step()
        s.step()
        ref.append(s.get_last_lr()[0])
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
