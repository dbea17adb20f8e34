"""Layer 8: neural-network building blocks, mirroring ``torch.nn``."""

from . import functional, init, utils
from .modules import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool2d, AlphaDropout, AvgPool1d,
    AvgPool2d, BCELoss, BCEWithLogitsLoss, BatchNorm1d, BatchNorm2d, Bilinear, CELU, Conv1d,
    Conv2d, ConvTranspose2d, CrossEntropyLoss, Dropout, Dropout1d, Dropout2d, ELU, Embedding,
    Flatten, GELU, GLU, GRU, GRUCell, GroupNorm, Hardsigmoid, Hardswish, Hardtanh, HuberLoss,
    Identity, InstanceNorm2d, KLDivLoss, L1Loss, LSTM, LSTMCell, LayerNorm, LazyLinear,
    LeakyReLU, Linear, LogSigmoid, LogSoftmax, MSELoss, MaxPool1d, MaxPool2d, Mish, Module,
    ModuleDict, ModuleList, MultiheadAttention, NLLLoss, PReLU, ParameterDict, ParameterList,
    RMSNorm, RNN, RNNCell, ReLU, ReLU6, SELU, Sequential, SiLU, Sigmoid, SmoothL1Loss, Softmax,
    Softmin, Softplus, Softsign, Tanh, Tanhshrink, Threshold, Unflatten,
)
from .parameter import Parameter, UninitializedParameter
from . import parallel  # noqa: E402  (data parallelism over devices)
from .parallel import DataParallel, DistributedDataParallel  # noqa: E402
