"""nn.Module, layers, losses and init against NumPy (and PyTorch when installed)."""

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn
from minitorch.nn import functional as F

pytestmark = pytest.mark.nn


def _pt():
    return pytest.importorskip("torch")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x):
        return self.block(self.act(self.fc1(x)))


def test_registration_and_traversal(default_device):
    m = Net()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias"]
    assert [n for n, _ in m.named_buffers()] == ["steps"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "block", "block.0",
                                                  "block.1"]
    assert len(list(m.children())) == 3
    # A module's own parameters and buffers come before its children's (as in PyTorch).
    assert list(m.state_dict()) == ["steps", "fc1.weight", "fc1.bias", "block.0.weight",
                                    "block.0.bias"]


def test_shared_parameter_listed_once(default_device):
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2


def test_state_dict_round_trip_and_strict_errors(default_device):
    a, b = Net(), Net()
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert np.array_equal(a.fc1.weight.detach().cpu().numpy(), b.fc1.weight.detach().cpu().numpy())
    sd = a.state_dict()
    del sd["fc1.bias"]
    sd["extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError, match="Missing key"):
        b.load_state_dict(sd)
    res = b.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias"] and res.unexpected_keys == ["extra"]
    bad = a.state_dict()
    bad["fc1.weight"] = torch.zeros(5, 5)
    with pytest.raises(RuntimeError, match="size mismatch"):
        b.load_state_dict(bad)


def test_train_eval_and_dropout(default_device):
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    assert m.training and m[1].training
    m.eval()
    assert not m[1].training
    x = torch.ones(10, 3)
    assert np.array_equal(m(x).detach().cpu().numpy(), m(x).detach().cpu().numpy())
    d = nn.Dropout(0.5)
    torch.manual_seed(0)
    y = d(torch.ones(1000))
    vals = set(np.unique(y.cpu().numpy()).tolist())
    assert vals <= {0.0, 2.0} and 400 < int((y == 0).sum()) < 600


@pytest.mark.cpu_only("a CPU tensor's repr (cuda's adds device='cuda:0': test_cuda.py)")
def test_repr_matches_pytorch_format():
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))
    assert repr(m) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                       "  (1): ReLU()\n  (2): Sequential(\n    (0): Linear(in_features=3, "
                       "out_features=1, bias=True)\n  )\n)")
    assert repr(nn.Conv2d(1, 6, 5)) == "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))"
    assert repr(nn.Parameter(torch.ones(2))) == ("Parameter containing:\n"
                                                 "tensor([1., 1.], requires_grad=True)")


def test_hooks_capture_features(default_device):
    m = Net()
    seen = {}
    handle = m.fc1.register_forward_hook(lambda mod, inp, out: seen.setdefault("fc1", out))
    m(torch.ones(2, 4))
    assert seen["fc1"].shape == (2, 3)
    handle.remove()
    seen.clear()
    m(torch.ones(2, 4))
    assert not seen
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    out = m(torch.ones(2, 4))
    pre.remove()
    assert np.allclose(out.detach().cpu().numpy(), m(torch.zeros(2, 4)).detach().cpu().numpy())


def test_full_backward_hook(default_device):
    lin = nn.Linear(3, 2)
    got = []
    lin.register_full_backward_hook(lambda mod, gi, go: got.append((gi[0].shape, go[0].shape)))
    x = torch.ones(4, 3, requires_grad=True)
    lin(x).sum().backward()
    assert got == [((4, 3), (4, 2))]


def test_zero_grad_and_to_dtype(default_device):
    m = Net()
    m(torch.ones(1, 4)).sum().backward()
    assert m.fc1.weight.grad is not None
    m.zero_grad()
    assert m.fc1.weight.grad is None
    w = m.fc1.weight
    m.double()
    assert m.fc1.weight is w and w.dtype == torch.float64


def test_lazy_linear(default_device):
    m = nn.LazyLinear(4)
    out = m(torch.ones(2, 7))
    assert out.shape == (2, 4) and m.weight.shape == (4, 7)
    assert type(m) is nn.Linear


@pytest.mark.parametrize("make", [
    lambda nn_: nn_.Linear(5, 3),
    lambda nn_: nn_.Conv2d(2, 4, 3, padding=1),
    lambda nn_: nn_.Conv2d(4, 4, 3, stride=2, groups=2, bias=False),
    lambda nn_: nn_.Conv1d(2, 3, 3, padding="same"),
    lambda nn_: nn_.BatchNorm2d(2),
    lambda nn_: nn_.LayerNorm(5),
    lambda nn_: nn_.GroupNorm(2, 4),
    lambda nn_: nn_.Bilinear(5, 5, 2),
])
def test_layers_match_pytorch(default_device, make):
    pt = _pt()
    mt_layer, pt_layer = make(nn), make(pt.nn)
    pt_layer.load_state_dict({k: pt.tensor(v.cpu().numpy()) for k, v in mt_layer.state_dict().items()})
    rng = np.random.default_rng(0)
    shapes = {nn.Linear: (3, 5), nn.Conv2d: (2, mt_layer.__dict__.get("in_channels", 2), 6, 6),
              nn.Conv1d: (2, 2, 7), nn.BatchNorm2d: (3, 2, 4, 4), nn.LayerNorm: (3, 5),
              nn.GroupNorm: (2, 4, 3), nn.Bilinear: (3, 5)}
    x = rng.standard_normal(shapes[type(mt_layer)])
    args_mt = (torch.tensor(x, dtype=torch.float32),)
    args_pt = (pt.tensor(x, dtype=pt.float32),)
    if isinstance(mt_layer, nn.Bilinear):
        args_mt, args_pt = args_mt * 2, args_pt * 2
    np.testing.assert_allclose(mt_layer(*args_mt).detach().cpu().numpy(),
                               pt_layer(*args_pt).detach().cpu().numpy(), rtol=1e-4, atol=1e-5)


def test_batchnorm_running_stats_and_eval(default_device):
    bn = nn.BatchNorm1d(3, momentum=0.5)
    x = torch.tensor(np.random.default_rng(1).standard_normal((8, 3)), dtype=torch.float32)
    bn(x)
    a = x.cpu().numpy()
    np.testing.assert_allclose(bn.running_mean.cpu().numpy(), 0.5 * a.mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.cpu().numpy(), 0.5 + 0.5 * a.var(0, ddof=1), rtol=1e-5)
    assert int(bn.num_batches_tracked.item()) == 1
    bn.eval()
    y = bn(x).detach().cpu().numpy()
    expect = (a - bn.running_mean.cpu().numpy()) / np.sqrt(bn.running_var.cpu().numpy() + 1e-5)
    np.testing.assert_allclose(y, expect, rtol=1e-4, atol=1e-5)


def test_losses_against_numpy(default_device):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((5, 4))
    target = np.array([0, 3, 1, 1, 2])
    lg = torch.tensor(logits)
    t = torch.tensor(target)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    assert F.cross_entropy(lg, t).item() == pytest.approx(-logp[np.arange(5), target].mean())
    w = np.array([1.0, 2.0, 0.5, 1.0])
    wt = w[target]
    assert F.cross_entropy(lg, t, weight=torch.tensor(w)).item() == pytest.approx(
        -(logp[np.arange(5), target] * wt).sum() / wt.sum())
    t_ign = torch.tensor([0, -100, 1, 1, 2])
    keep = np.array([0, 2, 3, 4])
    assert F.cross_entropy(lg, t_ign).item() == pytest.approx(
        -logp[keep, target[keep]].mean())
    p = rng.uniform(0.05, 0.95, (6,))
    y = rng.integers(0, 2, (6,)).astype(float)
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
    assert F.binary_cross_entropy(torch.tensor(p), torch.tensor(y)).item() == pytest.approx(bce)
    z = rng.standard_normal(6)
    s = 1 / (1 + np.exp(-z))
    expect = -(y * np.log(s) + (1 - y) * np.log(1 - s)).mean()
    assert F.binary_cross_entropy_with_logits(torch.tensor(z), torch.tensor(y)).item() == \
        pytest.approx(expect)
    a, b = rng.standard_normal(6), rng.standard_normal(6)
    assert F.mse_loss(torch.tensor(a), torch.tensor(b)).item() == pytest.approx(
        ((a - b) ** 2).mean())
    assert F.l1_loss(torch.tensor(a), torch.tensor(b), reduction="sum").item() == \
        pytest.approx(np.abs(a - b).sum())


def test_cross_entropy_matches_pytorch_with_options(default_device):
    pt = _pt()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5))
    t = np.array([0, 4, 2, 2, -100, 1])
    w = rng.uniform(0.5, 2, 5)
    for kw in [dict(), dict(label_smoothing=0.1), dict(weight=w, label_smoothing=0.2),
               dict(reduction="sum"), dict(reduction="none")]:
        mt_kw = {k: (torch.tensor(v) if k == "weight" else v) for k, v in kw.items()}
        pt_kw = {k: (pt.tensor(v) if k == "weight" else v) for k, v in kw.items()}
        a = F.cross_entropy(torch.tensor(x), torch.tensor(t), **mt_kw)
        b = pt.nn.functional.cross_entropy(pt.tensor(x), pt.tensor(t), **pt_kw)
        np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-6)


def test_rnn_lstm_gru_match_pytorch(default_device):
    pt = _pt()
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    for name, kw in [("RNN", dict(num_layers=2)), ("LSTM", dict(bidirectional=True)),
                     ("GRU", dict(batch_first=True))]:
        m = getattr(nn, name)(4, 6, **kw)
        p = getattr(pt.nn, name)(4, 6, **kw)
        p.load_state_dict({k: pt.tensor(v.cpu().numpy()) for k, v in m.state_dict().items()})
        out, h = m(torch.tensor(x))
        pout, ph = p(pt.tensor(x))
        np.testing.assert_allclose(out.detach().cpu().numpy(), pout.detach().cpu().numpy(), atol=1e-5)


def test_multihead_attention_matches_pytorch(default_device):
    pt = _pt()
    m = nn.MultiheadAttention(8, 2, batch_first=True)
    p = pt.nn.MultiheadAttention(8, 2, batch_first=True)
    p.load_state_dict({k: pt.tensor(v.cpu().numpy()) for k, v in m.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((2, 3, 8)).astype(np.float32)
    out, w = m(torch.tensor(x), torch.tensor(x), torch.tensor(x))
    pout, pw = p(pt.tensor(x), pt.tensor(x), pt.tensor(x))
    np.testing.assert_allclose(out.detach().cpu().numpy(), pout.detach().cpu().numpy(), atol=1e-5)
    np.testing.assert_allclose(w.detach().cpu().numpy(), pw.detach().cpu().numpy(), atol=1e-6)


def test_scaled_dot_product_attention_causal(default_device):
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 4, 3)) for _ in range(3))
    out = F.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                                         is_causal=True).cpu().numpy()
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(3)
    scores = np.where(np.tril(np.ones((4, 4), bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(out, w @ v, rtol=1e-10)


def test_init_statistics(default_device):
    torch.manual_seed(0)
    # 2,048 samples estimate a std within about 1.6% (one sigma): enough for 5%, and
    # small enough for the CUDA simulator.
    fan_out, fan_in = (256, 512) if default_device == "cpu" else (32, 64)
    w = torch.empty(fan_out, fan_in)
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert w.std().item() == pytest.approx(np.sqrt(2 / fan_in), rel=0.05)
    nn.init.xavier_uniform_(w)
    assert abs(w).max().item() <= np.sqrt(6 / (fan_out + fan_in)) + 1e-6
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    q = torch.empty(6, 4)
    nn.init.orthogonal_(q)
    np.testing.assert_allclose(q.t().matmul(q).cpu().numpy(), np.eye(4), atol=1e-5)


def test_clip_grad_norm(default_device):
    p = nn.Parameter(torch.ones(4))
    p.grad = torch.full((4,), 3.0)
    total = nn.utils.clip_grad_norm_([p], 1.0)
    assert total.item() == pytest.approx(6.0)
    assert np.linalg.norm(p.grad.cpu().numpy()) == pytest.approx(1.0, rel=1e-5)
    nn.utils.clip_grad_value_([p], 0.1)
    assert p.grad.max().item() == pytest.approx(0.1)
    vec = nn.utils.parameters_to_vector([p, nn.Parameter(torch.zeros(2))])
    assert vec.shape == (6,)


def test_conv2d_output_is_contiguous_like_pytorch(default_device):
    x = torch.randn(2, 3, 8, 8)
    for bias in (True, False):
        conv = nn.Conv2d(3, 4, 3, bias=bias)
        y = conv(x)
        assert y.is_contiguous() and y.stride() == (144, 36, 6, 1)
        assert y.view(2, -1).shape == (2, 144)          # the classic flatten works
    assert F.conv1d(torch.randn(2, 3, 10), torch.randn(4, 3, 3)).is_contiguous()


def test_embedding_with_default_arguments(default_device):
    """nn.Embedding(10, 3) as every tutorial builds it: padding_idx defaults to None."""
    import minitorch as torch
    emb = torch.nn.Embedding(10, 3)
    out = emb(torch.tensor([1, 2]))
    assert out.shape == (2, 3)
    out.sum().backward()
    assert emb.weight.grad[1].tolist() == [1.0, 1.0, 1.0]
    assert emb.weight.grad[0].tolist() == [0.0, 0.0, 0.0]
    padded = torch.nn.Embedding(10, 3, padding_idx=-1)
    padded(torch.tensor([9, 2])).sum().backward()
    assert padded.weight.grad[9].tolist() == [0.0, 0.0, 0.0]
