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
from .modules import (  # noqa: E402  (the layers added for PyTorch parity, issue 10)
    AdaptiveAvgPool3d, AdaptiveLogSoftmaxWithLoss, AdaptiveMaxPool1d, AdaptiveMaxPool3d,
    AvgPool3d, BatchNorm3d, CTCLoss,
    ChannelShuffle, CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
    ConstantPad3d, Conv3d, ConvTranspose1d, ConvTranspose3d, CosineEmbeddingLoss,
    CosineSimilarity, CrossMapLRN2d, Dropout3d, EmbeddingBag, FeatureAlphaDropout, Fold,
    FractionalMaxPool2d, FractionalMaxPool3d, GaussianNLLLoss, Hardshrink, HingeEmbeddingLoss,
    InstanceNorm1d, InstanceNorm3d, LPPool1d, LPPool2d, LPPool3d, LazyBatchNorm1d,
    LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
    LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
    LazyInstanceNorm3d, LinearCrossEntropyLoss, LinearCrossEntropyOptions, LocalResponseNorm,
    MarginRankingLoss,
    MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss2d, PairwiseDistance, PixelShuffle,
    PixelUnshuffle, PoissonNLLLoss, RNNBase, RNNCellBase, RReLU, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
    SoftMarginLoss, Softmax2d, Softshrink, Transformer, TransformerDecoder,
    TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer, TripletMarginLoss,
    TripletMarginWithDistanceLoss, Unfold, Upsample, UpsamplingBilinear2d,
    UpsamplingNearest2d, ZeroPad1d, ZeroPad2d, ZeroPad3d,
)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from . import parallel  # noqa: E402  (data parallelism over devices)
from .parallel import DataParallel, DistributedDataParallel  # noqa: E402
