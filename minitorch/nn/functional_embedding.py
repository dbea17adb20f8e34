"""``embedding_bag``: sums, means or maxima of bags of embeddings, without the (bags, L, D) tensor.

Each bag is a run of indices (a row of a 2-D ``input``, or a slice of a 1-D
``input`` between ``offsets``).  Sum and mean are one matrix product of a
(bags x indices) membership matrix with the looked-up rows, so the gradient
reaches every row that was read.
"""

from __future__ import annotations


from ..autograd.grad_mode import no_grad
from ..dtype import int64
from ..ops import elementwise as elementwise_ops, reduction as reduction_ops
from ..ops.creation import tensor, zeros
from ..ops.linalg import matmul
from ..ops.views import stack
from ..tensor import Tensor

__all__ = ["embedding_bag"]


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce (``'sum'``, ``'mean'`` or ``'max'``) the embeddings of each bag: (bags, D)."""
    if input.dtype.is_floating_point:
        raise ValueError(f"input has to be an integer tensor, got {input.dtype.name}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences.")
        bags, length = input.shape
        starts = [b * length for b in range(bags)]
        flat = input.reshape(-1)
        psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
        ends = starts[1:] + [flat.shape[0]]
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        flat, psw = input, per_sample_weights
        starts = [int(v) for v in offsets.tolist()]
        if include_last_offset:
            starts, last = starts[:-1], starts[-1]
        else:
            last = flat.shape[0]
        ends = starts[1:] + [last]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    num = weight.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num
    if max_norm is not None:
        with no_grad():
            rows = weight.index_select(0, flat)
            norms = reduction_ops.norm(rows, norm_type, 1, keepdim=True)
            scale = elementwise_ops.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight.index_copy_(0, flat, rows * scale)
    idx = [int(v) for v in flat.tolist()]
    if any(i < 0 or i >= num for i in idx):
        raise IndexError(f"index out of range in self (indices must be in [0, {num}))")
    rows = weight.index_select(0, flat)                                # (N, D)
    if psw is not None:
        rows = rows * psw.unsqueeze(1)
    keep = [padding_idx is None or i != padding_idx for i in idx]
    if mode == "max":
        out = []
        for s, e in zip(starts, ends):
            members = [j for j in range(s, e) if keep[j]]
            if members:
                picked = rows.index_select(0, tensor(members, dtype=int64, device=rows.device))
                out.append(picked.amax(0))
            else:
                out.append(zeros(weight.shape[1], dtype=weight.dtype, device=weight.device))
        return stack(out, 0) if out else zeros(0, weight.shape[1], dtype=weight.dtype)
    member = [[0.0] * len(idx) for _ in starts]
    for b, (s, e) in enumerate(zip(starts, ends)):
        count = sum(keep[s:e])
        for j in range(s, e):
            if keep[j]:
                member[b][j] = 1.0 / count if mode == "mean" else 1.0
    m = tensor(member, dtype=rows.dtype, device=rows.device).reshape(len(starts), len(idx))
    return matmul(m, rows)
