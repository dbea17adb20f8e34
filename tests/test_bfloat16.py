"""``minitorch.bfloat16``: float32's range, 8 significant bits, values as PyTorch's."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch as torch
from minitorch.ops.bfloat16 import round_array

pytestmark = pytest.mark.tensor


def _reference_round(x: float) -> float:
    """Round-to-nearest-even to 8 significant bits, by arithmetic (not by bits)."""
    if not np.isfinite(x) or x == 0:
        return x
    m, e = np.frexp(np.float64(x))                  # x = m * 2**e, 0.5 <= |m| < 1
    e = max(e, -125)                                # bfloat16's subnormals share float32's
    q = np.round(np.ldexp(np.float64(x), 8 - e))    # np.round: ties to even
    out = np.ldexp(q, e - 8)
    return float(np.float32(out)) if abs(out) < 3.3961514e38 else float(np.copysign(np.inf, x))


@settings(max_examples=200, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_rounding_is_round_to_nearest_even(default_device, x):
    assert round_array(np.array([x], dtype=np.float32))[0] == _reference_round(x)


def test_values_match_pytorch_examples(default_device):
    b = torch.tensor([1.001, 1 / 3, 3.14159, -2.71828, 1e-40, 65504.0, 3.4e38],
                     dtype=torch.bfloat16)
    assert b.tolist() == [1.0, 0.333984375, 3.140625, -2.71875, 9.183549615799121e-41,
                          65536.0, float("inf")]
    assert repr(torch.tensor([1.001], dtype=torch.bfloat16)).startswith("tensor([1.]")
    assert str(torch.tensor([1 / 3], dtype=torch.bfloat16)).startswith("tensor([0.3340]")
    assert torch.tensor([float("nan")], dtype=torch.bfloat16).isnan().item()


@pytest.mark.cpu_only("CPU type strings (cuda's: test_cuda.py)")
def test_dtype_properties_promotion_and_conversion():
    bf = torch.bfloat16
    assert bf.is_floating_point and bf.itemsize == 2
    assert torch.ones(3, dtype=bf).element_size() == 2
    assert torch.promote_types(bf, torch.float16) is torch.float32
    assert torch.promote_types(bf, torch.float32) is torch.float32
    assert torch.promote_types(bf, torch.int64) is bf
    x = torch.tensor([1.0, 2.0, 3.0]).bfloat16()
    assert x.dtype is bf and (x + torch.ones(3, dtype=torch.float16)).dtype is torch.float32
    assert (x * 2).dtype is bf and (x + 1.5).dtype is bf
    third = (x / 3).to(torch.float32)
    assert third.dtype is torch.float32
    assert third.tolist() == [0.333984375, 0.66796875, 1.0]     # exact, no second rounding
    assert x.type() == "torch.BFloat16Tensor"
    with pytest.raises(TypeError, match="BFloat16"):
        x.numpy()


def test_every_write_rounds(default_device):
    q = torch.ones(3, dtype=torch.bfloat16)
    q.add_(0.001)                                    # 1.001 rounds back to 1
    assert q.tolist() == [1.0, 1.0, 1.0]
    q[0] = 1 / 3
    assert q.tolist()[0] == 0.333984375
    assert torch.full((2,), 3.14159, dtype=torch.bfloat16).tolist() == [3.140625] * 2
    r = torch.rand(100, dtype=torch.bfloat16).to(torch.float32).cpu().numpy()
    np.testing.assert_array_equal(r, round_array(r))


def test_ops_and_gradients(default_device):
    p = torch.ones(3, dtype=torch.bfloat16, requires_grad=True)
    (p * 1.5).sum().backward()
    assert p.grad.dtype is torch.bfloat16 and p.grad.tolist() == [1.5, 1.5, 1.5]


def test_ops_match_pytorch(default_device):
    real = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    x, y = torch.tensor(a).bfloat16(), torch.tensor(b).bfloat16()
    rx, ry = real.tensor(a).bfloat16(), real.tensor(b).bfloat16()
    for mine, theirs in [(x @ y, rx @ ry), (x.exp(), rx.exp()), (x.softmax(-1), rx.softmax(-1)),
                         (x.sum(1), rx.sum(1)), (x * 0.1 + 1, rx * 0.1 + 1), (x / 3, rx / 3)]:
        assert mine.dtype is torch.bfloat16
        np.testing.assert_array_equal(np.array(mine.float().tolist(), dtype=np.float32),
                                      theirs.float().cpu().numpy())


def test_optimizer_steps_save_and_load_keep_bfloat16(default_device, tmp_path):
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16))
    opt = torch.optim.SGD([p], lr=0.0123)
    (p * p).sum().backward()
    opt.step()
    values = np.array(p.detach().float().tolist(), dtype=np.float32)
    np.testing.assert_array_equal(values, round_array(values))
    assert p.dtype is torch.bfloat16
    torch.save({"p": p.detach()}, tmp_path / "p.pt")
    loaded = torch.load(tmp_path / "p.pt")["p"]
    assert loaded.dtype is torch.bfloat16 and loaded.tolist() == values.tolist()
    assert torch.nn.Linear(2, 2).bfloat16().weight.dtype is torch.bfloat16
