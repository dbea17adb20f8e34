"""The layers of ``minitorch.nn``."""

from .activation import (CELU, ELU, GELU, GLU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, SELU, SiLU, Sigmoid,
                         Softmax, Softmin, Softplus, Softsign, Tanh, Tanhshrink, Threshold)
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, LazyLinear, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Module
from .normalization import (BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm2d, LayerNorm,
                            RMSNorm)
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool1d,
                      AvgPool2d, MaxPool1d, MaxPool2d)
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNCell
from .sparse import Embedding
