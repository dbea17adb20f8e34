"""Module parity sweep: every ``minitorch.nn`` layer against its PyTorch twin.

For each row of ``CASES`` both libraries build the layer with the same
constructor arguments; PyTorch's state dict (weights and buffers) is copied
into minitorch's; both run forward and backward on the same random float64
input, in train mode and in eval mode; and the test compares output values,
shapes and dtypes, the input gradients, the parameter gradients and the
buffers after the forward (running statistics).  ``test_every_layer_is_swept``
fails for any exported layer without a row, so a new layer cannot skip it.

A case is ``(constructor, inputs)`` plus options: ``constructor(nn)`` returns
``(args, kwargs)`` for the namespace ``nn`` (so containers can hold each
library's own layers); ``inputs`` is a list of input specs (see ``F``, ``I``
and ``C`` below).  Layers whose training forward is random (dropout) are
compared in eval mode only; in train mode only shapes are compared.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np
import pytest

import minitorch
from minitorch import nn as mnn

pytestmark = [
    pytest.mark.nn,
    pytest.mark.cpu_only("every module against PyTorch's CPU build (their ops run on cuda in "
                         "test_nn.py and test_nn_breadth.py)"),
    # PyTorch's own advice to its users (nested tensors, mask types, NLLLoss2d), not ours.
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
    pytest.mark.filterwarnings("ignore:Support for mismatched"),
    pytest.mark.filterwarnings("ignore:`NLLLoss2d` has been deprecated"),
]
torch = pytest.importorskip("torch")


# ---------------------------------------------------------------------------
# Input specs
# ---------------------------------------------------------------------------
class F:
    """A float64 input of ``shape`` (with requires_grad unless ``grad=False``)."""

    def __init__(self, *shape: int, low: float = -2.0, high: float = 2.0, grad: bool = True,
                 sign: bool = False) -> None:
        self.shape, self.low, self.high, self.grad, self.sign = shape, low, high, grad, sign

    def make(self, rng: np.random.Generator) -> np.ndarray:
        if self.sign:
            return rng.choice([-1.0, 1.0], size=self.shape)
        return rng.uniform(self.low, self.high, size=self.shape)


class I:  # noqa: E742  (I for integer, beside F for float)
    """An int64 input of ``shape`` with values in [low, high)."""

    def __init__(self, high: int, *shape: int, low: int = 0) -> None:
        self.shape, self.high, self.low, self.grad = shape, high, low, False

    def make(self, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(self.low, self.high, size=self.shape)


class C:
    """A constant passed as is (a Python value), or built per library by ``fn(lib)``."""

    def __init__(self, value: Any = None, fn: Callable | None = None) -> None:
        self.value, self.fn, self.grad = value, fn, False


def _none(nn: Any) -> tuple:
    return (), {}


def a(*args: Any, **kwargs: Any) -> Callable:
    """A constructor spec with fixed arguments."""
    return lambda nn: (args, kwargs)


IMG = F(2, 3, 5, 5)
VOL = F(2, 2, 4, 4, 4)
SEQ = F(2, 3, 7)
VEC = F(4, 6)


def case(ctor: Callable = _none, inputs: list | None = None, *, random_train: bool = False,
         random: bool = False, forward: bool = True, lazy: bool = False,
         tol: float = 1e-7, grad: bool = True) -> dict:
    """One row: ``random_train`` (random in train mode) or ``random`` (in both modes)
    compare shapes only there; ``forward=False`` compares the state dicts only; ``grad=False``
    skips the gradients (where PyTorch's hand-written backward is not the exact one)."""
    return {"ctor": ctor, "inputs": inputs if inputs is not None else [VEC],
            "random_train": random_train or random, "random_eval": random,
            "forward": forward, "lazy": lazy, "tol": tol, "grad": grad}


def _seq(nn: Any) -> tuple:
    return (nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2)), {}


def _mlist(nn: Any) -> tuple:
    return ([nn.Linear(6, 5), nn.Tanh()],), {}


def _mdict(nn: Any) -> tuple:
    return ({"a": nn.Linear(6, 5), "b": nn.ReLU()},), {}


def _plist(nn: Any) -> tuple:
    lib = torch if nn is torch.nn else minitorch
    return ([nn.Parameter(lib.zeros(3)), nn.Parameter(lib.ones(2, 2))],), {}


def _pdict(nn: Any) -> tuple:
    lib = torch if nn is torch.nn else minitorch
    return ({"w": nn.Parameter(lib.zeros(3))},), {}


def _enc(nn: Any) -> tuple:
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    return (layer, 2), {"norm": nn.LayerNorm(8)}


def _dec(nn: Any) -> tuple:
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return (layer, 2), {}


def _causal(lib: Any) -> Any:
    return lib.nn.Transformer.generate_square_subsequent_mask(5, dtype=lib.float64)


def _kpm(lib: Any) -> Any:
    return lib.tensor([[False] * 4 + [True], [False] * 5])


def _cos_dist(lib: Any) -> Any:
    return lambda x, y: 1 - lib.nn.functional.cosine_similarity(x, y)


# ---------------------------------------------------------------------------
# The table: every exported layer, default arguments first where it has them.
# ---------------------------------------------------------------------------
CASES: dict[str, list] = {
    # activations
    **{name: [case(inputs=[F(3, 4)])] for name in (
        "ReLU", "ReLU6", "SELU", "SiLU", "Mish", "Hardsigmoid", "Hardswish", "LeakyReLU",
        "ELU", "CELU", "GELU", "Softplus", "Softsign", "Tanhshrink", "Hardtanh", "Sigmoid",
        "Tanh", "LogSigmoid", "Hardshrink", "Softshrink", "Identity", "Flatten")},
    "Softmax": [case(a(dim=1))], "LogSoftmax": [case(a(dim=1))], "Softmin": [case(a(dim=-1))],
    "Softmax2d": [case(inputs=[IMG])],
    "Threshold": [case(a(0.1, 20.0))],
    "GLU": [case(), case(a(dim=0))],
    "PReLU": [case(inputs=[IMG]), case(a(3), inputs=[IMG])],
    "RReLU": [case(inputs=[F(3, 4)], random_train=True)],
    "Unflatten": [case(a(1, (2, 3)))],
    # linear
    "Linear": [case(a(6, 3)), case(a(6, 3, bias=False))],
    "Bilinear": [case(a(6, 5, 3), inputs=[VEC, F(4, 5)])],
    "LazyLinear": [case(a(3), lazy=True)],
    # convolution
    "Conv1d": [case(a(3, 4, 3), inputs=[SEQ]),
               case(a(3, 6, 3, stride=2, padding=1, dilation=2, groups=3), inputs=[SEQ])],
    "Conv2d": [case(a(3, 4, 3), inputs=[IMG]), case(a(3, 2, 3, padding="same"), inputs=[IMG])],
    "Conv3d": [case(a(2, 3, 2), inputs=[VOL]),
               case(a(2, 4, 3, stride=2, padding=1, groups=2), inputs=[VOL])],
    "ConvTranspose1d": [case(a(3, 2, 3), inputs=[SEQ]),
                        case(a(3, 4, 3, stride=2, padding=1, output_padding=1), inputs=[SEQ])],
    "ConvTranspose2d": [case(a(3, 2, 3), inputs=[IMG]),
                        case(a(3, 2, 3, stride=2, padding=1), inputs=[IMG])],
    "ConvTranspose3d": [case(a(2, 3, 2), inputs=[VOL]),
                        case(a(2, 4, 3, stride=2, padding=1, groups=2), inputs=[VOL])],
    "LazyConv1d": [case(a(4, 3), inputs=[SEQ], lazy=True)],
    "LazyConv2d": [case(a(4, 3), inputs=[IMG], lazy=True)],
    "LazyConv3d": [case(a(3, 2), inputs=[VOL], lazy=True)],
    "LazyConvTranspose1d": [case(a(2, 3), inputs=[SEQ], lazy=True)],
    "LazyConvTranspose2d": [case(a(2, 3), inputs=[IMG], lazy=True)],
    "LazyConvTranspose3d": [case(a(2, 2), inputs=[VOL], lazy=True)],
    "Fold": [case(a((4, 5), 2), inputs=[F(2, 12, 12)])],
    "Unfold": [case(a(2), inputs=[IMG]), case(a((2, 3), padding=1, stride=2), inputs=[IMG])],
    # pooling
    "MaxPool1d": [case(a(2), inputs=[SEQ])],
    "MaxPool2d": [case(a(2), inputs=[IMG]), case(a(3, stride=2, padding=1), inputs=[IMG])],
    "MaxPool3d": [case(a(2), inputs=[VOL]),
                  case(a(3, stride=2, padding=1, ceil_mode=True), inputs=[VOL])],
    "AvgPool1d": [case(a(2), inputs=[SEQ])],
    "AvgPool2d": [case(a(2), inputs=[IMG]),
                  case(a(3, stride=2, padding=1, count_include_pad=False), inputs=[IMG])],
    "AvgPool3d": [case(a(2), inputs=[VOL]),
                  case(a(3, stride=2, padding=1, ceil_mode=True), inputs=[VOL]),
                  case(a(3, stride=2, padding=1, count_include_pad=False), inputs=[VOL])],
    "AdaptiveAvgPool1d": [case(a(3), inputs=[SEQ])],
    "AdaptiveAvgPool2d": [case(a((2, 3)), inputs=[IMG])],
    "AdaptiveAvgPool3d": [case(a(3), inputs=[VOL])],
    "AdaptiveMaxPool1d": [case(a(3), inputs=[SEQ]),
                          case(a(3, return_indices=True), inputs=[SEQ])],
    "AdaptiveMaxPool2d": [case(a((2, 3)), inputs=[IMG])],
    "AdaptiveMaxPool3d": [case(a(3), inputs=[VOL]), case(a(2, True), inputs=[VOL])],
    "LPPool1d": [case(a(2, 3), inputs=[F(2, 3, 7, low=0.1)])],
    "LPPool2d": [case(a(2, 2), inputs=[F(2, 3, 5, 5, low=0.1)])],
    "LPPool3d": [case(a(2, 2), inputs=[F(2, 2, 4, 4, 4, low=0.1)])],
    "MaxUnpool1d": [case(a(2), inputs=[C(fn=lambda lib: "pool1d")])],
    "MaxUnpool2d": [case(a(2), inputs=[C(fn=lambda lib: "pool2d")])],
    "MaxUnpool3d": [case(a(2), inputs=[C(fn=lambda lib: "pool3d")])],
    "FractionalMaxPool2d": [case(a(2, output_size=3), inputs=[IMG], random=True),
                            case(a(2, output_ratio=0.6, return_indices=True,
                                   _random_samples=C(fn=lambda lib: lib.tensor(
                                       np.linspace(0.05, 0.95, 12).reshape(2, 3, 2)))),
                                 inputs=[IMG])],
    "FractionalMaxPool3d": [case(a(2, output_size=2), inputs=[VOL], random=True),
                            case(a(2, output_size=(2, 1, 2),
                                   _random_samples=C(fn=lambda lib: lib.tensor(
                                       np.linspace(0.05, 0.95, 12).reshape(2, 2, 3)))),
                                 inputs=[VOL])],
    # normalisation
    "BatchNorm1d": [case(a(6)), case(a(3, momentum=None), inputs=[SEQ])],
    "BatchNorm2d": [case(a(3), inputs=[IMG]), case(a(3, affine=False), inputs=[IMG])],
    "BatchNorm3d": [case(a(2), inputs=[VOL])],
    "LazyBatchNorm1d": [case(lazy=True)],
    "LazyBatchNorm2d": [case(inputs=[IMG], lazy=True)],
    "LazyBatchNorm3d": [case(inputs=[VOL], lazy=True)],
    "InstanceNorm1d": [case(a(3), inputs=[SEQ]),
                       case(a(3, affine=True, track_running_stats=True), inputs=[SEQ])],
    "InstanceNorm2d": [case(a(3), inputs=[IMG]), case(a(3, affine=True), inputs=[IMG]),
                       case(a(3, track_running_stats=True, momentum=None), inputs=[IMG])],
    "InstanceNorm3d": [case(a(2), inputs=[VOL]),
                       case(a(2, affine=True, track_running_stats=True), inputs=[VOL])],
    "LazyInstanceNorm1d": [case(inputs=[SEQ], lazy=True)],
    "LazyInstanceNorm2d": [case(a(affine=False), inputs=[IMG], lazy=True)],
    "LazyInstanceNorm3d": [case(inputs=[VOL], lazy=True)],
    "LayerNorm": [case(a(6)), case(a((3, 7), elementwise_affine=False), inputs=[SEQ])],
    "RMSNorm": [case(a(6)), case(a([7], eps=1e-3), inputs=[SEQ])],
    "GroupNorm": [case(a(2, 4), inputs=[F(2, 4, 5)])],
    "LocalResponseNorm": [case(a(2), inputs=[IMG]), case(a(3, 1e-2, 0.5, 2.0), inputs=[VOL])],
    # PyTorch's backward (from Lua Torch) uses a symmetric window, not the forward's.
    "CrossMapLRN2d": [case(a(3), inputs=[IMG], grad=False)],
    # dropout (random in training; the identity in eval)
    **{name: [case(a(0.3), inputs=[IMG], random_train=True)] for name in (
        "Dropout", "Dropout2d", "AlphaDropout", "FeatureAlphaDropout")},
    "Dropout1d": [case(a(0.3), inputs=[SEQ], random_train=True)],
    "Dropout3d": [case(a(0.3), inputs=[VOL], random_train=True)],
    # padding
    **{f"{kind}Pad{n}d": [case(a(*((1,) if kind != "Constant" else (1, 0.5))),
                               inputs=[[SEQ, IMG, VOL][n - 1]]),
                          case(a(*(((2, 1) * n,) if kind != "Constant" else ((2, 1) * n, -1.0))),
                               inputs=[[SEQ, IMG, VOL][n - 1]])]
       for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
       for n in (1, 2, 3)},
    # resampling and rearranging
    "PixelShuffle": [case(a(2), inputs=[F(2, 8, 3, 3)])],
    "PixelUnshuffle": [case(a(2), inputs=[F(2, 2, 4, 6)])],
    "ChannelShuffle": [case(a(2), inputs=[F(2, 6, 3, 3)])],
    "Upsample": [case(a(scale_factor=2), inputs=[IMG]),
                 case(a(size=(7, 4), mode="bilinear"), inputs=[IMG]),
                 case(a(scale_factor=1.7, mode="bilinear", align_corners=True), inputs=[IMG]),
                 case(a(size=8, mode="bicubic"), inputs=[IMG]),
                 case(a(scale_factor=2, mode="linear"), inputs=[SEQ]),
                 case(a(size=(3, 5, 6), mode="trilinear"), inputs=[VOL]),
                 case(a(size=(3, 2), mode="area"), inputs=[IMG]),
                 case(a(size=9, mode="nearest-exact"), inputs=[IMG])],
    "UpsamplingNearest2d": [case(a(scale_factor=2), inputs=[IMG])],
    "UpsamplingBilinear2d": [case(a(size=(4, 7)), inputs=[IMG])],
    # distances
    "PairwiseDistance": [case(inputs=[VEC, F(4, 6)]), case(a(p=1.0, keepdim=True),
                                                            inputs=[VEC, F(4, 6)])],
    "CosineSimilarity": [case(inputs=[VEC, F(4, 6)]), case(a(dim=0), inputs=[VEC, F(4, 6)])],
    # embeddings
    "Embedding": [case(a(10, 3), inputs=[I(10, 2, 4)]),
                  case(a(10, 3, padding_idx=0), inputs=[I(10, 2, 4)])],
    "EmbeddingBag": [case(a(10, 3), inputs=[I(10, 2, 4)]),
                     case(a(10, 3, mode="sum"),
                          inputs=[I(10, 7), C(fn=lambda lib: lib.tensor([0, 2, 2, 5]))]),
                     case(a(10, 3, mode="max", padding_idx=1), inputs=[I(10, 3, 4)])],
    # recurrent
    "RNN": [case(a(6, 5), inputs=[F(3, 2, 6)]),
            case(a(6, 5, 2, batch_first=True, bidirectional=True), inputs=[F(2, 3, 6)])],
    "LSTM": [case(a(6, 5), inputs=[F(3, 2, 6)])],
    "GRU": [case(a(6, 5), inputs=[F(3, 2, 6)])],
    "RNNCell": [case(a(6, 5))], "LSTMCell": [case(a(6, 5))], "GRUCell": [case(a(6, 5))],
    "RNNBase": [case(a("LSTM", 6, 5), forward=False)],
    "RNNCellBase": [case(a(6, 5, True, 2), forward=False)],
    # attention and transformers
    "MultiheadAttention": [
        case(a(8, 2), inputs=[F(5, 2, 8), F(4, 2, 8), F(4, 2, 8)]),
        case(a(8, 2, batch_first=True, kdim=6, vdim=3),
             inputs=[F(2, 5, 8), F(2, 4, 6), F(2, 4, 3),
                     C(fn=lambda lib: lib.tensor([[False, False, True, False]] * 2)),
                     C(True), C(fn=lambda lib: lib.zeros(5, 4, dtype=lib.float64)), C(False)]),
        case(a(8, 2, add_bias_kv=True, add_zero_attn=True, batch_first=True),
             inputs=[F(2, 5, 8), F(2, 4, 8), F(2, 4, 8)]),
        case(a(8, 4), inputs=[F(5, 8), F(5, 8), F(5, 8), C(None), C(True), C(fn=_causal),
                              C(True), C(True)])],
    "TransformerEncoderLayer": [
        case(a(8, 2), inputs=[F(5, 2, 8)], random_train=True),
        case(a(8, 2, 16, 0.0, "gelu", batch_first=True, norm_first=True),
             inputs=[F(2, 5, 8), C(fn=_causal), C(fn=_kpm)])],
    "TransformerEncoder": [case(_enc, inputs=[F(5, 2, 8), C(fn=_causal)])],
    "TransformerDecoderLayer": [
        case(a(8, 2), inputs=[F(5, 2, 8), F(4, 2, 8)], random_train=True),
        case(a(8, 2, 16, 0.0, batch_first=True, norm_first=True),
             inputs=[F(2, 5, 8), F(2, 4, 8), C(fn=_causal)])],
    "TransformerDecoder": [case(_dec, inputs=[F(2, 5, 8), F(2, 4, 8), C(fn=_causal)])],
    "Transformer": [
        case(a(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
               dim_feedforward=16, dropout=0.0),
             inputs=[F(4, 2, 8), F(5, 2, 8), C(None), C(fn=_causal)]),
        case(a(8, 2, 1, 2, 16, 0.0, batch_first=True, norm_first=True),
             inputs=[F(2, 4, 8), F(2, 5, 8)])],
    # containers
    "Sequential": [case(_seq)],
    "ModuleList": [case(_mlist, forward=False)],
    "ModuleDict": [case(_mdict, forward=False)],
    "ParameterList": [case(_plist, forward=False)],
    "ParameterDict": [case(_pdict, forward=False)],
    # losses
    "MSELoss": [case(inputs=[VEC, F(4, 6, grad=False)]),
                case(a(reduction="none"), inputs=[VEC, F(4, 6, grad=False)])],
    "L1Loss": [case(inputs=[VEC, F(4, 6, grad=False)])],
    "SmoothL1Loss": [case(inputs=[VEC, F(4, 6, grad=False)]),
                     case(a(beta=0.5, reduction="sum"), inputs=[VEC, F(4, 6, grad=False)])],
    "HuberLoss": [case(inputs=[VEC, F(4, 6, grad=False)])],
    "CrossEntropyLoss": [case(inputs=[VEC, I(6, 4)]),
                         case(a(label_smoothing=0.1), inputs=[F(2, 6, 3), I(6, 2, 3)])],
    "NLLLoss": [case(inputs=[VEC, I(6, 4)])],
    "NLLLoss2d": [case(inputs=[F(2, 3, 4, 4), I(3, 2, 4, 4)])],
    "BCELoss": [case(inputs=[F(4, 6, low=0.05, high=0.95), F(4, 6, low=0, high=1, grad=False)])],
    "BCEWithLogitsLoss": [case(inputs=[VEC, F(4, 6, low=0, high=1, grad=False)])],
    "KLDivLoss": [case(a(reduction="batchmean"), inputs=[VEC, F(4, 6, low=0.1, high=1,
                                                                grad=False)])],
    "PoissonNLLLoss": [case(inputs=[VEC, F(4, 6, low=0, high=4, grad=False)]),
                       case(a(log_input=False, full=True),
                            inputs=[F(4, 6, low=0.1, high=3), F(4, 6, low=0, high=4,
                                                                grad=False)])],
    "GaussianNLLLoss": [case(inputs=[VEC, F(4, 6, grad=False), F(4, 6, low=0.1, high=2)]),
                        case(a(full=True, reduction="sum"),
                             inputs=[VEC, F(4, 6, grad=False), F(4, 1, low=0.1, high=2)])],
    "MarginRankingLoss": [case(inputs=[F(5), F(5), F(5, sign=True, grad=False)]),
                          case(a(margin=0.5), inputs=[F(5), F(5), F(5, sign=True, grad=False)])],
    "HingeEmbeddingLoss": [case(inputs=[VEC, F(4, 6, sign=True, grad=False)])],
    "CosineEmbeddingLoss": [case(inputs=[VEC, F(4, 6), F(4, sign=True, grad=False)]),
                            case(a(margin=0.2), inputs=[VEC, F(4, 6),
                                                       F(4, sign=True, grad=False)])],
    "SoftMarginLoss": [case(inputs=[VEC, F(4, 6, sign=True, grad=False)])],
    "MultiLabelMarginLoss": [case(inputs=[F(2, 4), C(fn=lambda lib: lib.tensor(
        [[3, 0, -1, 1], [1, 2, 3, 0]]))])],
    "MultiLabelSoftMarginLoss": [case(inputs=[VEC, F(4, 6, low=0, high=1, grad=False)])],
    "MultiMarginLoss": [case(inputs=[VEC, I(6, 4)]), case(a(p=2, margin=0.5),
                                                           inputs=[VEC, I(6, 4)])],
    "TripletMarginLoss": [case(inputs=[VEC, F(4, 6), F(4, 6)]),
                          case(a(margin=0.5, p=1.0, swap=True), inputs=[VEC, F(4, 6), F(4, 6)])],
    "TripletMarginWithDistanceLoss": [
        case(inputs=[VEC, F(4, 6), F(4, 6)]),
        case(lambda nn: ((), {"distance_function": _cos_dist(
            torch if nn is torch.nn else minitorch), "swap": True}),
            inputs=[VEC, F(4, 6), F(4, 6)])],
    "CTCLoss": [case(inputs=[C(fn=lambda lib: "ctc_log_probs"),
                             C(fn=lambda lib: lib.tensor([[1, 2, 2], [3, 1, 0]])),
                             C(fn=lambda lib: lib.tensor([6, 5])),
                             C(fn=lambda lib: lib.tensor([3, 2]))])],
    "LinearCrossEntropyLoss": [case(a(6, 5), inputs=[VEC, I(5, 4)])],
    "AdaptiveLogSoftmaxWithLoss": [case(a(16, 10, [3, 6]), inputs=[F(8, 16), C(
        fn=lambda lib: lib.tensor([0, 4, 9, 2, 7, 3, 5, 1]))]),
                                   case(a(16, 10, [4], div_value=2.0, head_bias=True),
                                        inputs=[F(16), C(fn=lambda lib: lib.tensor(7))])],
}

# Exported names that are not layers to sweep, and why.
NOT_SWEPT = {
    "Module": "the base class",
    "DataParallel": "wraps a layer across devices (tests/test_cuda.py, test_distributed*)",
    "DistributedDataParallel": "needs a process group (tests/test_distributed_ddp.py)",
}


def _exported_layers() -> list:
    return sorted(n for n in dir(mnn) if inspect.isclass(getattr(mnn, n))
                  and issubclass(getattr(mnn, n), mnn.Module) and n not in NOT_SWEPT)


def test_every_layer_is_swept() -> None:
    missing = [n for n in _exported_layers() if n not in CASES]
    assert not missing, f"add rows to CASES in tests/test_nn_parity.py for: {missing}"


# ---------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------
def _lib_value(v: Any, lib: Any) -> Any:
    if isinstance(v, C):
        return v.fn(lib) if v.fn is not None else v.value
    return v


def _build(nn: Any, lib: Any, spec: dict) -> Any:
    args, kwargs = spec["ctor"](nn)
    args = tuple(_lib_value(x, lib) for x in args)
    kwargs = {k: _lib_value(x, lib) for k, x in kwargs.items()}
    return getattr(nn, spec["name"])(*args, **kwargs)


def _special_inputs(tag: str, lib: Any, rng: np.random.Generator) -> list:
    """Inputs that must come from a pooling or a softmax (indices, log-probabilities)."""
    if tag.startswith("pool"):
        n = int(tag[4])
        x = rng.uniform(-2, 2, size=(2, 3) + (4,) * n)
        pool = getattr(torch.nn.functional, f"max_pool{n}d")
        values, idx = pool(torch.tensor(x), 2, return_indices=True)
        conv = (lambda t: t) if lib is torch else (lambda t: minitorch.tensor(t.numpy()))
        v = conv(values.detach())
        v.requires_grad_(True)
        return [v, conv(idx)]
    if tag == "ctc_log_probs":
        # PyTorch's CTC backward assumes log_softmax inputs (its gradient is the one with
        # respect to the logits), so the gradient is compared at the logits.
        x = rng.normal(size=(6, 2, 4))
        v = torch.tensor(x) if lib is torch else minitorch.tensor(x)
        v.requires_grad_(True)
        _LEAVES.append(v)
        return [v.log_softmax(2)]
    raise KeyError(tag)


_LEAVES: list = []      # leaves behind non-leaf special inputs, gradients compared too


def _inputs(spec: dict, rng_seed: int) -> tuple:
    """The same inputs for both libraries: (torch list, minitorch list)."""
    rng = np.random.default_rng(rng_seed)
    t_in, m_in = [], []
    for item in spec["inputs"]:
        if isinstance(item, C):
            tv, mv = _lib_value(item, torch), _lib_value(item, minitorch)
            if isinstance(tv, str):
                t_in += _special_inputs(tv, torch, np.random.default_rng(rng_seed))
                m_in += _special_inputs(mv, minitorch, np.random.default_rng(rng_seed))
            else:
                t_in.append(tv)
                m_in.append(mv)
            continue
        arr = item.make(rng)
        t = torch.tensor(arr)
        m = minitorch.tensor(arr)
        if item.grad:
            t.requires_grad_(True)
            m.requires_grad_(True)
        t_in.append(t)
        m_in.append(m)
    return t_in, m_in


def _flatten(out: Any) -> list:
    if out is None:
        return []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return [out]


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(mine: Any, theirs: Any, what: str, tol: float) -> None:
    assert tuple(mine.shape) == tuple(theirs.shape), \
        f"{what}: shape {tuple(mine.shape)} != PyTorch's {tuple(theirs.shape)}"
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], \
        f"{what}: dtype {mine.dtype} != PyTorch's {theirs.dtype}"
    np.testing.assert_allclose(_np(mine), _np(theirs), rtol=tol, atol=tol, err_msg=what)


def _copy_state(tm: Any, mm: Any) -> None:
    state = {k: minitorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    mm.load_state_dict(state)


def _run(spec: dict, train: bool) -> None:
    torch.manual_seed(0)
    tm = _build(torch.nn, torch, spec)
    mm = _build(mnn, minitorch, spec)
    tm.double()
    mm.double()
    if spec["lazy"]:
        t_in, m_in = _inputs(spec, 1)
        with torch.no_grad():
            tm(*t_in)
        with minitorch.no_grad():
            mm(*m_in)
    _copy_state(tm, mm)
    assert sorted(tm.state_dict()) == sorted(mm.state_dict())
    if not spec["forward"]:
        return
    tm.train(train)
    mm.train(train)
    _LEAVES.clear()
    t_in, m_in = _inputs(spec, 2)
    t_in, m_in = t_in + _LEAVES[0::2], m_in + _LEAVES[1::2]
    n_args = len(t_in) - len(_LEAVES) // 2
    t_out, m_out = _flatten(tm(*t_in[:n_args])), _flatten(mm(*m_in[:n_args]))
    assert len(t_out) == len(m_out)
    compare_values = not (spec["random_train"] if train else spec["random_eval"])
    tol = spec["tol"]
    rng = np.random.default_rng(3)
    t_loss, m_loss = 0, 0
    for i, (to, mo) in enumerate(zip(t_out, m_out)):
        if compare_values:
            _close(mo, to, f"output {i}", tol)
        else:
            assert tuple(mo.shape) == tuple(to.shape)
        if to.requires_grad and to.dtype.is_floating_point:
            w = rng.uniform(-1, 1, size=tuple(to.shape))
            t_loss = t_loss + (to * torch.tensor(w)).sum()
            m_loss = m_loss + (mo * minitorch.tensor(w)).sum()
    for (name, tb), (mname, mb) in zip(sorted(tm.named_buffers()), sorted(mm.named_buffers())):
        if compare_values:
            _close(mb, tb, f"buffer {name} after forward", tol)
    if not isinstance(t_loss, int) and compare_values and spec["grad"]:
        t_loss.backward()
        m_loss.backward()
        for i, (ti, mi) in enumerate(zip(t_in, m_in)):
            if isinstance(ti, torch.Tensor) and ti.requires_grad and ti.is_leaf:
                _close(mi.grad, ti.grad, f"grad of input {i}", tol)
        m_params = dict(mm.named_parameters())
        for name, tp in tm.named_parameters():
            if tp.grad is None:
                assert m_params[name].grad is None or \
                    not np.any(_np(m_params[name].grad)), f"grad of {name}"
            else:
                _close(m_params[name].grad, tp.grad, f"grad of parameter {name}", tol)


_PARAMS = [pytest.param({**spec, "name": name}, id=f"{name}-{i}")
           for name, specs in sorted(CASES.items()) for i, spec in enumerate(specs)]


@pytest.mark.parametrize("spec", _PARAMS)
def test_layer_matches_pytorch(spec: dict) -> None:
    for train in (True, False):
        _run(spec, train)
