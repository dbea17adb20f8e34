"""Mixed precision: ``autocast``'s op policy and ``GradScaler``."""

import math
import warnings

import numpy as np
import pytest

import minitorch as torch
import minitorch.autocast_mode as policy
from minitorch import ops

pytestmark = pytest.mark.optim


def _function_classes():
    names = set()
    for mod in vars(ops).values():
        for obj in vars(mod).values() if hasattr(mod, "__dict__") else ():
            if isinstance(obj, type) and issubclass(obj, torch.autograd.Function):
                names.add(obj.__name__)
    return names


def test_policy_names_are_minitorch_ops(default_device):
    known = _function_classes()
    for name in ("MatMul", "Linear", "Softmax", "LogSoftmax", "Sum", "Prod", "Exp", "Log",
                 "Pow", "PowTensorScalar", "NllLoss", "LogSumExp", "Cat", "Stack"):
        assert name in known, name


@pytest.mark.cpu_only("CPU autocast casts CPU ops only, as in PyTorch")
@pytest.mark.parametrize("low", [torch.float16, torch.bfloat16])
def test_cpu_autocast_op_dtypes(low):
    x, w = torch.randn(3, 4), torch.randn(4, 5, requires_grad=True)
    with torch.autocast("cpu", dtype=low):
        assert torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled()
        y = x @ w
        assert y.dtype is low                                      # lower-precision list
        assert torch.nn.functional.linear(x, w.t()).dtype is low
        assert y.prod().dtype is torch.float32                     # float32 list (CPU)
        assert torch.nn.functional.cross_entropy(y, torch.tensor([0, 1, 2])).dtype \
            is torch.float32
        assert y.softmax(-1).dtype is low                          # CPU: not listed
        assert (y + x[:, :1]).dtype is torch.float32               # ordinary promotion
        assert (x.double() @ w.double()).dtype is torch.float64    # float64 untouched
        with torch.autocast("cpu", enabled=False):
            assert (x @ w).dtype is torch.float32
        assert torch.autocast("cuda", enabled=False) is not None
    assert not policy.STATE.enabled
    y.float().sum().backward()
    assert w.grad.dtype is torch.float32                           # flows back to float32


@pytest.mark.cpu_only("CPU autocast casts CPU ops only, as in PyTorch")
def test_cpu_autocast_matches_pytorch():
    real = pytest.importorskip("torch")
    a, b = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mine = torch.tensor(a) @ torch.tensor(b)
    with real.autocast("cpu", dtype=real.bfloat16):
        theirs = real.tensor(a) @ real.tensor(b)
    assert str(theirs.dtype) == "torch.bfloat16" and mine.dtype is torch.bfloat16
    np.testing.assert_array_equal(np.array(mine.float().tolist()), theirs.float().numpy())


def test_cuda_lists_cast_up_without_a_gpu_region(default_device):
    # The CUDA lists, applied by hand: a float16 input to exp goes up to float32.
    assert policy.category_of(ops.elementwise.Exp, "cuda") == policy.FLOAT32
    assert policy.category_of(ops.elementwise.Exp, "cpu") is None
    assert policy.category_of(ops.linalg.BMM, "cpu") == policy.LOWER       # a MatMul


@pytest.mark.cpu_only("CPU autocast casts CPU ops only, as in PyTorch")
def test_modules_and_decorator():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    conv = torch.nn.Conv2d(1, 2, 3)

    @torch.autocast("cpu", dtype=torch.float16)
    def run(x):
        return model(x), conv(torch.randn(1, 1, 5, 5))

    out, feature = run(torch.randn(3, 4))
    assert out.dtype is torch.float16 and feature.dtype is torch.float16
    out.float().sum().backward()
    assert model[0].weight.grad.dtype is torch.float32


def test_autocast_arguments(default_device):
    with pytest.raises(ValueError, match="device_type"):
        torch.autocast(3)
    with pytest.warns(UserWarning, match="Disabling autocast"):
        region = torch.autocast("cpu", dtype=torch.float64)
    assert not region._enabled
    assert torch.amp.autocast is torch.autocast
    assert torch.get_autocast_dtype("cpu") is torch.bfloat16
    with torch.cpu.amp.autocast():
        assert torch.is_autocast_enabled("cpu")
    if not torch.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with torch.cuda.amp.autocast():
                assert not torch.is_autocast_enabled("cuda")


# ---------------------------------------------------------------------------
# GradScaler
# ---------------------------------------------------------------------------
def _param(values):
    return torch.nn.Parameter(torch.tensor(values))


def test_scaler_scales_unscales_and_steps(default_device):
    p = _param([1.0, 1.0])
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    assert scaler.get_scale() == 8.0
    loss = scaler.scale(p.sum())
    assert loss.item() == 16.0
    loss.backward()
    assert p.grad.tolist() == [8.0, 8.0]
    scaler.unscale_(opt)
    assert p.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    assert p.detach().tolist() == pytest.approx([0.9, 0.9])
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0 and scaler._get_growth_tracker() == 1
    for _ in range(1):
        opt.zero_grad()
        scaler.scale(p.sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 16.0                  # grown after growth_interval steps


def test_scaler_skips_steps_with_inf_and_backs_off(default_device):
    p = _param([1.0, 2.0])
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    (scaler.scale(p * torch.tensor([1.0, math.inf]))).sum().backward()
    scaler.step(opt)
    assert p.detach().tolist() == [1.0, 2.0]          # skipped
    scaler.update()
    assert scaler.get_scale() == 2.0


def test_scaler_state_dict_and_disabled(default_device):
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=7)
    state = scaler.state_dict()
    assert state == {"scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 7, "_growth_tracker": 0}
    other = torch.amp.GradScaler("cpu")
    other.load_state_dict(state)
    assert other.get_scale() == 1024.0 and other.get_growth_interval() == 7
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        other.load_state_dict({})
    off = torch.amp.GradScaler("cpu", enabled=False)
    x = torch.tensor(3.0)
    assert off.scale(x) is x and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ValueError, match="outputs must be a Tensor"):
        torch.amp.GradScaler("cpu").scale(3.0)
    if not torch.cuda.is_available():
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            assert not torch.cuda.amp.GradScaler().is_enabled()


def test_scaler_sequence_matches_pytorch(default_device):
    real = pytest.importorskip("torch")
    grads = [[1.0, 2.0], [math.inf, 1.0], [0.5, 0.5], [1.0, math.nan], [1.0, 1.0], [2.0, 2.0]]

    def run(lib, make_param):
        p = make_param([0.0, 0.0])
        opt = lib.optim.SGD([p], lr=1.0)
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
        scales, values = [], []
        for g in grads:
            opt.zero_grad()
            scaler.scale((p * lib.tensor(g)).sum()).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
            values.append(p.detach().tolist())
        return scales, values

    mine = run(torch, _param)
    theirs = run(real, lambda v: real.nn.Parameter(real.tensor(v)))
    assert mine == theirs
