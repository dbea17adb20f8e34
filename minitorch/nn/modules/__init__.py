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
from .activation import Hardshrink, RReLU, Softmax2d, Softshrink
from .conv import Conv3d, ConvTranspose1d, ConvTranspose3d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import Dropout3d, FeatureAlphaDropout
from .fold import Fold, Unfold
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d,
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
from .loss import (CTCLoss, CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,
                   LinearCrossEntropyLoss, LinearCrossEntropyOptions, MarginRankingLoss,
                   MultiLabelMarginLoss,
                   MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss2d, PoissonNLLLoss,
                   SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .normalization import (BatchNorm3d, CrossMapLRN2d, InstanceNorm1d, InstanceNorm3d,
                            LocalResponseNorm)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool3d, AvgPool3d,
                      FractionalMaxPool2d, FractionalMaxPool3d, LPPool1d, LPPool2d, LPPool3d,
                      MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .rnn import RNNBase, RNNCellBase
from .sparse import EmbeddingBag
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .adaptive import AdaptiveLogSoftmaxWithLoss
