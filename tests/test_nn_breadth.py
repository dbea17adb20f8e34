"""``nn.functional`` breadth: the functions no layer of the parity sweep reaches, against PyTorch.

Also checks the API-coverage tool's exclusion tables (they must parse without
PyTorch) and that the committed coverage page exists.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch
from minitorch.nn import functional as F

pytestmark = pytest.mark.nn
ROOT = Path(__file__).resolve().parent.parent


def _load_coverage_tool():
    spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "tools" /
                                                  "api_coverage.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("api_coverage", module)       # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_coverage_exclusions_parse(default_device) -> None:
    tool = _load_coverage_tool()
    titles = {ns.title for ns in tool.NAMESPACES}
    for rule in tool.EXCLUSIONS:
        assert rule.topic and rule.reason.strip(), rule
        for pattern in rule.patterns:
            re.compile(pattern)
        assert set(rule.namespaces) <= titles, rule.namespaces
        assert all(isinstance(n, str) and n for n in rule.names)
    assert tool.exclusion_for("torch.Tensor", "to_sparse") is not None
    assert tool.exclusion_for("torch.nn", "Linear") is None


def test_coverage_page_exists(default_device) -> None:
    page = (ROOT / "docs" / "coverage.md").read_text()
    assert "python tools/api_coverage.py" in page
    assert "coverage" in (ROOT / "docs" / "index.md").read_text()


# ---------------------------------------------------------------------------
# Against PyTorch
# ---------------------------------------------------------------------------
def _pair(rng: np.random.Generator, *shape: int, grad: bool = True) -> tuple:
    torch = pytest.importorskip("torch")
    x = rng.normal(size=shape)
    t, m = torch.tensor(x, requires_grad=grad), minitorch.tensor(x, requires_grad=grad)
    return t, m


def _check(m_out, t_out, *leaves, tol: float = 1e-7) -> None:
    np.testing.assert_allclose(m_out.detach().cpu().numpy(), t_out.detach().cpu().numpy(), rtol=tol,
                               atol=tol)
    assert tuple(m_out.shape) == tuple(t_out.shape)
    if leaves:
        w = np.random.default_rng(9).normal(size=tuple(t_out.shape))
        torch = pytest.importorskip("torch")
        (t_out * torch.tensor(w)).sum().backward()
        (m_out * minitorch.tensor(w)).sum().backward()
        for tl, ml in leaves:
            np.testing.assert_allclose(ml.grad.cpu().numpy(), tl.grad.cpu().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal", "scale", "gqa"])
def test_scaled_dot_product_attention(default_device, mask: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    tq, mq = _pair(rng, 2, 4, 5, 8)
    kv_heads = 2 if mask == "gqa" else 4
    tk, mk = _pair(rng, 2, kv_heads, 6, 8)
    tv, mv = _pair(rng, 2, kv_heads, 6, 8)
    kwargs_t, kwargs_m = {}, {}
    if mask == "bool":
        b = rng.random((5, 6)) > 0.3
        b[:, 0] = True
        kwargs_t["attn_mask"], kwargs_m["attn_mask"] = torch.tensor(b), minitorch.tensor(b)
    elif mask == "float":
        f = rng.normal(size=(2, 1, 5, 6))
        kwargs_t["attn_mask"], kwargs_m["attn_mask"] = torch.tensor(f), minitorch.tensor(f)
    elif mask == "causal":
        kwargs_t["is_causal"] = kwargs_m["is_causal"] = True
    elif mask == "scale":
        kwargs_t["scale"] = kwargs_m["scale"] = 0.3
    elif mask == "gqa":
        kwargs_t["enable_gqa"] = kwargs_m["enable_gqa"] = True
    t = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **kwargs_t)
    m = F.scaled_dot_product_attention(mq, mk, mv, **kwargs_m)
    _check(m, t, (tq, mq), (tk, mk), (tv, mv))


@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_multi_head_attention_forward(default_device, need_weights: bool, average: bool) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    tq, mq = _pair(rng, 5, 2, 8)
    tk, mk = _pair(rng, 4, 2, 8)
    tw, mw = _pair(rng, 24, 8)
    tb, mb = _pair(rng, 24)
    tow, mow = _pair(rng, 8, 8)
    tob, mob = _pair(rng, 8)
    tbk, mbk = _pair(rng, 1, 1, 8)
    tbv, mbv = _pair(rng, 1, 1, 8)
    kpm = np.array([[False, False, True, False], [False] * 4])
    mask = rng.normal(size=(5, 4))
    t_out = torch.nn.functional.multi_head_attention_forward(
        tq, tk, tk, 8, 2, tw, tb, tbk, tbv, True, 0.0, tow, tob, training=False,
        key_padding_mask=torch.tensor(kpm), need_weights=need_weights,
        attn_mask=torch.tensor(mask > 1.0), average_attn_weights=average)
    m_out = F.multi_head_attention_forward(
        mq, mk, mk, 8, 2, mw, mb, mbk, mbv, True, 0.0, mow, mob, training=False,
        key_padding_mask=minitorch.tensor(kpm), need_weights=need_weights,
        attn_mask=minitorch.tensor(mask > 1.0), average_attn_weights=average)
    _check(m_out[0], t_out[0], (tq, mq), (tw, mw), (tbk, mbk))
    if need_weights:
        _check(m_out[1], t_out[1])
    else:
        assert m_out[1] is None


@pytest.mark.parametrize("mode,align", [("nearest", None), ("bilinear", False),
                                        ("bilinear", True), ("bicubic", True),
                                        ("nearest-exact", None), ("area", None)])
def test_interpolate_scale_factor(default_device, mode: str, align: bool | None) -> None:
    torch = pytest.importorskip("torch")
    tx, mx = _pair(np.random.default_rng(2), 1, 2, 5, 6)
    t = torch.nn.functional.interpolate(tx, scale_factor=(1.5, 0.7), mode=mode,
                                        align_corners=align)
    m = F.interpolate(mx, scale_factor=(1.5, 0.7), mode=mode, align_corners=align)
    _check(m, t, (tx, mx), tol=1e-6)


@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_affine_grid_and_grid_sample(default_device, padding_mode: str, align: bool, mode: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    # Random (not round) coefficients: no sample point falls exactly on a pixel, where
    # bilinear sampling has a kink and the two libraries' roundings pick different sides.
    theta = np.array([[[1, 0, 0], [0, 1, 0]]] * 2) + rng.normal(scale=0.2, size=(2, 2, 3))
    tt, mt = torch.tensor(theta, requires_grad=True), minitorch.tensor(theta,
                                                                      requires_grad=True)
    tg = torch.nn.functional.affine_grid(tt, [2, 3, 4, 5], align_corners=align)
    mg = F.affine_grid(mt, [2, 3, 4, 5], align_corners=align)
    _check(mg, tg)
    tx, mx = _pair(rng, 2, 3, 5, 6)
    t = torch.nn.functional.grid_sample(tx, tg, mode, padding_mode, align_corners=align)
    m = F.grid_sample(mx, mg, mode, padding_mode, align_corners=align)
    _check(m, t, (tx, mx), *(((tt, mt),) if mode == "bilinear" else ()))


def test_embedding_bag_per_sample_weights_and_last_offset(default_device) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    tw, mw = _pair(rng, 10, 3)
    idx = [1, 2, 4, 5, 4, 3, 2, 9]
    tp, mp = _pair(rng, 8)
    t = torch.nn.functional.embedding_bag(torch.tensor(idx), tw, torch.tensor([0, 3, 3, 8]),
                                          mode="sum", per_sample_weights=tp,
                                          include_last_offset=True)
    m = F.embedding_bag(minitorch.tensor(idx), mw, minitorch.tensor([0, 3, 3, 8]), mode="sum",
                        per_sample_weights=mp, include_last_offset=True)
    _check(m, t, (tw, mw), (tp, mp))


def test_small_functions(default_device) -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(5)
    tx, mx = _pair(rng, 5, 3)
    _check(F.pdist(mx), tf.pdist(tx), (tx, mx))
    _check(F.pdist(mx, 1.0), tf.pdist(tx.detach(), 1.0))
    ti, mi = _pair(rng, 3, 2, 4)
    tw, mw = _pair(rng, 3, 4, 5)
    tb, mb = _pair(rng, 5)
    _check(F.conv_tbc(mi, mw, mb, 1), torch.conv_tbc(ti, tw, tb, 1), (ti, mi), (tw, mw))
    x = rng.normal(size=(3, 4))
    for name in ("relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_"):
        t, m = torch.tensor(x), minitorch.tensor(x)
        out = getattr(F, name)(m)
        assert out is m
        _check(m, getattr(tf, name)(t))
    t, m = torch.tensor(x), minitorch.tensor(x)
    _check(F.threshold_(m, 0.2, -1.0), tf.threshold_(t, 0.2, -1.0))
    _check(F.rrelu(minitorch.tensor(x)), tf.rrelu(torch.tensor(x)))
    tlog, mlog = _pair(rng, 4, 6)
    target = rng.integers(0, 5, size=4)
    tlw, mlw = _pair(rng, 5, 6)
    _check(F.linear_cross_entropy(mlog, mlw, minitorch.tensor(target)),
           tf.linear_cross_entropy(tlog, tlw, torch.tensor(target)), (tlog, mlog), (tlw, mlw))
    y = F.gumbel_softmax(minitorch.tensor(x), tau=0.5, hard=True)
    assert np.allclose(y.cpu().numpy().sum(1), 1.0) and set(np.unique(y.cpu().numpy())) <= {0.0, 1.0}


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_pool_indices_round_trip(default_device, n: int) -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    tx, mx = _pair(np.random.default_rng(6), 2, 2, *([6] * n))
    t_out, t_idx = getattr(tf, f"max_pool{n}d_with_indices")(tx, 2, padding=1)
    m_out, m_idx = getattr(F, f"max_pool{n}d_with_indices")(mx, 2, padding=1)
    _check(m_out, t_out)
    assert (m_idx.cpu().numpy() == t_idx.cpu().numpy()).all()
    t_back = getattr(tf, f"max_unpool{n}d")(t_out, t_idx, 2, padding=1)
    m_back = getattr(F, f"max_unpool{n}d")(m_out, m_idx, 2, padding=1)
    _check(m_back, t_back, (tx, mx))


def test_buffer_assignment_registers_a_buffer(default_device) -> None:
    from minitorch import nn

    class Stats(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mean = nn.Buffer(minitorch.zeros(3))
            self.scratch = nn.Buffer(minitorch.ones(2), persistent=False)

    m = Stats()
    assert list(m.state_dict()) == ["mean"]
    assert [n for n, _ in m.named_buffers()] == ["mean", "scratch"]
    assert isinstance(m.mean, nn.Buffer) and not isinstance(minitorch.zeros(1), nn.Buffer)
    assert list(m.parameters()) == []
    b = nn.UninitializedBuffer()
    b.materialize((2, 3))
    assert tuple(b.shape) == (2, 3) and type(b) is minitorch.Tensor


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_concatenated_targets_and_infeasible_alignments(default_device, reduction: str) -> None:
    torch = pytest.importorskip("torch")
    # Gradients are compared at the logits: PyTorch's CTC backward assumes log_softmax inputs.
    tx, mx = _pair(np.random.default_rng(7), 6, 3, 5)
    targets, in_lens, tg_lens = [1, 2, 3, 3, 4, 1], [6, 2, 5], [2, 3, 1]   # row 1: infeasible
    t = torch.nn.functional.ctc_loss(tx.log_softmax(2), torch.tensor(targets),
                                     torch.tensor(in_lens), torch.tensor(tg_lens),
                                     reduction=reduction, zero_infinity=True)
    m = F.ctc_loss(mx.log_softmax(2), minitorch.tensor(targets), minitorch.tensor(in_lens),
                   minitorch.tensor(tg_lens), reduction=reduction, zero_infinity=True)
    _check(m, t, (tx, mx))
