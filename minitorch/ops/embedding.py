"""``embedding``: rows of a weight matrix picked by integer ids (``nn.Embedding``).

``embedding(weight, ids)`` is ``weight[ids]``: an ``index_select`` of rows,
after checking every id is in range.  Its backward adds each output row's
gradient into the weight row it came from (``index_add``), skipping
``padding_idx``.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..dtype import int32, int64
from ..tensor_base import TensorBase
from . import kernels
from .index_helpers import as_index, check_dtype, check_index, fresh, header, zeros_like_grad
from .index_ops import index_add, index_select, index_select_raw
from .masked import masked_fill
from .registry import declare


class Embedding(Function):
    _backward_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx: Any, weight: TensorBase, indices: TensorBase, padding_idx: int,
                scale_grad_by_freq: bool) -> TensorBase:
        ctx.shape, ctx.padding_idx, ctx.scale = weight._shape, padding_idx, scale_grad_by_freq
        ctx.save_for_backward(indices)
        rows = index_select_raw(weight, 0, header(indices, (indices.numel(),)))
        return header(rows, indices._shape + (weight._shape[1],))

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (indices,) = ctx.saved_tensors
        idx = indices.reshape(-1)
        g2 = g.reshape(-1, ctx.shape[1])
        if ctx.padding_idx >= 0:
            # the padding row is a constant: it never receives gradient
            g2 = masked_fill(g2, (idx == ctx.padding_idx).unsqueeze(1), 0.0)
        if ctx.scale:
            counts = index_add(fresh((ctx.shape[0],), g.dtype, g.device, 0), 0, idx,
                               fresh((idx.numel(),), g.dtype, g.device, 1))
            g2 = g2 / index_select(counts, 0, idx).unsqueeze(1)
        return index_add(zeros_like_grad(g, ctx.shape), 0, idx, g2), None, None, None


def embedding(weight: TensorBase, indices: TensorBase, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> TensorBase:
    """Rows of the 2-D ``weight`` picked by integer ``indices``: shape ``indices.shape + (dim,)``.

    ``torch.embedding``'s argument order (``nn.functional.embedding`` takes
    ``(input, weight)``).  Row ``padding_idx`` (if >= 0) gets no gradient.
    """
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    kernels.check_same_device(weight, indices)
    check_dtype(indices, (int64, int32), lambda: RuntimeError(
        f"Expected tensor for argument #1 'indices' to have one of the following scalar "
        f"types: Long, Int; but got {indices.type()} instead (while checking arguments for "
        f"embedding)"))
    idx = as_index(indices)
    check_index(idx, weight._shape[0], lambda v: IndexError("index out of range in self"))
    return Embedding.apply(weight, idx, int(padding_idx), bool(scale_grad_by_freq))


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(embedding, method=False)
