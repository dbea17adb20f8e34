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
7. :mod:`.ops`                     every op, forward and backward;
   :mod:`.tensor`                  ``Tensor``, whose methods are the ops
8. :mod:`.nn` ... (see the README's table)
"""

from types import ModuleType as _ModuleType

# -- the layers, in order (each imports only those above it in this list) ----------------
from . import autograd
from .autograd import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                       set_grad_enabled)
from .autograd.grad_mode import is_inference_mode_enabled
from .device import device, get_default_device, set_default_device
from .dtype import (bool_ as bool, double, dtype, float, float16, float32, float64, get_default_dtype,  # noqa: A001
                    half, int, int8, int16, int32, int64, long, promote_types, result_type,
                    set_default_dtype, short, uint8, can_cast)
from .dtype import bfloat16
from .layout import broadcast_shapes as _broadcast_shapes
from ._printing import get_printoptions, set_printoptions
from .memory_format import channels_last, contiguous_format, memory_format, preserve_format
from .storage import TypedStorage, UntypedStorage
from .tensor_base import Size, strided
from .backends.cpu.threads import get_num_threads, set_num_threads  # torch.set_num_threads
from . import ops
from . import random
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
from .ops.legacy_types import CPU_TYPES as _LEGACY_TYPES
from .ops.reduction import return_types
from .ops.registry import FUNCTIONS as _OP_FUNCTIONS
from .tensor import Tensor                  # layer 7: the Tensor class with its methods
from . import nn                            # layer 8
from . import optim                         # layer 9
from . import utils                         # layer 10
from . import cuda
from . import linalg                        # torch.linalg
from . import special                       # torch.special
from .serialization import load, save       # layer 11
from . import datasets                      # layer 12
from . import amp, func                     # mixed precision; function transforms
from .amp import (autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled,
                  set_autocast_enabled)
from . import compiler
from .compiler import compile  # noqa: A001

# -- names made from the registries ------------------------------------------------------
# Every op declared with function=True in minitorch.ops (see ops/registry.py):
# minitorch.add, minitorch.exp, minitorch.matmul, minitorch.zeros, ...
# (Editors and type checkers read them from __init__.pyi, which tools/make_stubs.py
# writes from the same registry.)
globals().update(_OP_FUNCTIONS)

# The legacy tensor types: FloatTensor, DoubleTensor, LongTensor, ... (ops/legacy_types.py)
globals().update(_LEGACY_TYPES)

__version__ = "0.1.0"

cuda.amp = amp.cuda_amp          # minitorch.cuda.amp.autocast / GradScaler (older spelling)
cpu = _ModuleType("minitorch.cpu")  # torch.cpu: only its amp namespace here
cpu.amp = amp.cpu_amp            # minitorch.cpu.amp.autocast


# -- functions written here --------------------------------------------------------------
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
