"""minitorch: PyTorch's API and semantics, with every kernel written in readable Python.

``import minitorch as torch`` and most tensor and autograd code written for
PyTorch runs unchanged.  The package is built in layers, each importing only
those below it (see docs/):

1. :mod:`.dtype`, :mod:`.device`   element types and where data lives
2. :mod:`.storage`                 flat buffers shared by tensors
3. :mod:`.layout`                  shape/stride arithmetic
4. :mod:`.backends`                Numba kernels (CPU; CUDA)
5. :mod:`.tensor`                  the Tensor header and autograd metadata
6. :mod:`.autograd`                the graph and the backward engine
7. :mod:`.ops`                     every op, forward and backward
"""

from . import autograd
from .autograd import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                       set_grad_enabled)
from .autograd.grad_mode import is_inference_mode_enabled
from .device import device, get_default_device, set_default_device
from .dtype import (bool_ as bool, double, dtype, float, float16, float32, float64, get_default_dtype,  # noqa: A001
                    half, int, int8, int16, int32, int64, long, promote_types, result_type,
                    set_default_dtype, short, uint8, can_cast)
from .layout import broadcast_shapes as _broadcast_shapes
from ._printing import get_printoptions, set_printoptions
from .memory_format import channels_last, contiguous_format, memory_format, preserve_format
from .storage import TypedStorage, UntypedStorage
from .tensor import Size, Tensor, strided
from . import ops
from .ops.creation import (Generator, arange, as_tensor, asarray, bernoulli, default_generator,
                           empty, empty_like, empty_strided, eye, from_numpy, full, full_like,
                           get_rng_state, initial_seed, linspace, logspace, manual_seed,
                           multinomial, normal, ones, ones_like, rand, rand_like, randint,
                           randint_like, randn, randn_like, randperm, scalar_tensor, seed,
                           set_rng_state, tensor, zeros, zeros_like)
from .ops.elementwise import (abs, absolute, allclose, equal, isclose, acos, acosh, add, addcdiv, addcmul, arccos,
                              arcsin, arctan, arctan2, asin, asinh, atan, atan2, atanh,
                              bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil, clamp,
                              clamp_max, clamp_min, clip, copysign, cos, cosh, div, divide, eq,
                              erf, erfc, exp, expm1, fix, float_power, floor, floor_divide, fmax,
                              fmin, fmod, frac, ge, greater, greater_equal, gt, hypot, isfinite,
                              isinf, isnan, le, lerp, less, less_equal, log, log10, log1p, log2,
                              logical_and, logical_not, logical_or, logical_xor, lt, maximum,
                              minimum, mul, multiply, nan_to_num, ne, neg, negative, not_equal,
                              pow, reciprocal, relu, remainder, round, rsqrt, sigmoid, sign, sin,
                              sinh, sqrt, square, sub, subtract, tan, tanh, true_divide, trunc,
                              where, xlogy)
from .ops.einsum import einsum
from .ops.linalg import (addmm, baddbmm, bmm, cross, dot, ger, inner, matmul, mm, mv, outer,
                         trace, vdot)
from .ops.reduction import (all, amax, amin, aminmax, any, argmax, argmin, count_nonzero,
                            cumprod, cumsum, log_softmax, logsumexp, max, mean, min, nansum,
                            norm, prod, return_types, softmax, std, std_mean, sum, var,
                            var_mean)
from .ops.views import (as_strided, broadcast_to, cat, chunk, clone, concat, concatenate,
                        contiguous, detach, diagonal, flatten, flip, hstack, movedim, narrow,
                        permute, repeat, reshape, roll, select, split, squeeze, stack, swapaxes,
                        t, tensor_split, tile, transpose, unbind, unflatten, unsqueeze, view,
                        vstack)
from .ops.views import movedim as moveaxis  # noqa: E402
from .ops.indexing import (argwhere, embedding, gather, index_add, index_copy, index_fill,
                           index_select, masked_fill, masked_scatter, masked_select, nonzero,
                           scatter, scatter_add, take, take_along_dim)
from .ops.advanced_indexing import index_put, index_put_
from .ops.legacy_types import CPU_TYPES as _LEGACY_TYPES, set_default_tensor_type
from .ops.sorting import argsort, kthvalue, median, msort, sort, topk, unique

__version__ = "0.1.0"

# The legacy tensor types: FloatTensor, DoubleTensor, LongTensor, ... (ops/legacy_types.py)
globals().update(_LEGACY_TYPES)



def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of all ``shapes`` broadcast to (see layout.broadcast_shapes)."""
    return Size(_broadcast_shapes(*shapes))


def is_tensor(obj) -> "bool":
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> "bool":
    return input.dtype.is_floating_point


def numel(input: Tensor) -> "int":
    return input.numel()


def is_storage(obj) -> "bool":
    return isinstance(obj, (TypedStorage, UntypedStorage))
from . import nn  # noqa: E402  (layer 8)
from . import optim  # noqa: E402  (layer 9)
from . import utils  # noqa: E402  (layer 10)
from . import cuda  # noqa: E402
from .serialization import load, save  # noqa: E402  (layer 11)
from . import datasets  # noqa: E402  (layer 12)
