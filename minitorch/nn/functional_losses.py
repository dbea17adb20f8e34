"""More losses for ``nn.functional``: margins, rankings, embeddings, likelihoods and CTC.

Each is written with differentiable ops, following PyTorch's own formula (so
that values agree to rounding, edge cases included); autograd supplies the
gradients.  ``nn.functional`` re-exports every public name here.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..autograd.grad_mode import no_grad
from ..dtype import bool_, int64
from ..ops import elementwise as elementwise_ops, reduction as reduction_ops
from ..ops.creation import arange, full, tensor, zeros_like
from ..ops.views import cat
from ..tensor import Tensor

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss",
           "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss"]


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """Apply ``reduction`` ('mean', 'sum' or 'none') to per-element losses."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """Map the deprecated ``size_average``/``reduce`` flags onto ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -y * (x1 - x2) + margin)``: y = 1 says x1 should rank higher."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {list(input1.shape)}, input2: "
                           f"{list(input2.shape)}, target: {list(target.shape)} ")
    loss = elementwise_ops.clamp_min(-target * (input1 - input2) + margin, 0)
    return reduce_loss(loss, reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``x`` where y = 1, ``max(0, margin - x)`` where y = -1 (x is a distance)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    margin_clamp = elementwise_ops.clamp_min(margin - input, 0)
    out_margin = elementwise_ops.where(target != 1, margin_clamp, 0.0)
    out_self = elementwise_ops.where(target != -1, input, 0.0)
    return reduce_loss(out_margin + out_self, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-y x))`` for targets y in {1, -1}."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = (-target * input).exp().log1p()
    return reduce_loss(loss, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross-entropy on logits, averaged over the classes of each sample."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * elementwise_ops.logsigmoid(input)
             + (1 - target) * elementwise_ops.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return reduce_loss(loss, reduction)


def _as_batch(input: Tensor, target: Tensor) -> tuple:
    if input.dim() == 1:
        return input.unsqueeze(0), target.reshape(1, -1) if target.dim() else target.reshape(1)
    return input, target


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Hinge loss between every target class and every non-target class, over C.

    ``target`` holds class indices, padded with -1 after the last one (the
    classes after the first -1 are ignored).
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.dim() > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    squeeze = input.dim() <= 1
    x, t = (input.reshape(1, -1), target.reshape(1, -1)) if squeeze else (input, target)
    n, c = x.shape[0], x.shape[1]
    with no_grad():
        # valid[n, j]: target j comes before the first -1; is_target[n, k]: k is a target.
        valid = (t != -1).to(int64).cumprod(1) > 0
        safe_t = elementwise_ops.where(valid, t, 0).to(int64)
        hit = (safe_t.unsqueeze(2) == arange(c, device=x.device)) & valid.unsqueeze(2)
        is_target = hit.any(1)
        pair_mask = (valid.unsqueeze(2) & is_target.logical_not().unsqueeze(1)).to(x.dtype)
    x_target = x.gather(1, safe_t)                                   # (N, J)
    margins = elementwise_ops.clamp_min(1 - x_target.unsqueeze(2) + x.unsqueeze(1), 0)
    loss = (margins * pair_mask).sum((1, 2)) / c
    if squeeze:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    squeeze = input.dim() <= 1
    x = input.reshape(1, -1) if squeeze else input
    t = target.reshape(-1, 1).to(int64)
    c = x.shape[1]
    x_target = x.gather(1, t)                                        # (N, 1)
    m = elementwise_ops.clamp_min(margin - x_target + x, 0)
    if p == 2:
        m = m * m
    if weight is not None:
        m = m * weight.gather(0, t.reshape(-1)).unsqueeze(1)
    with no_grad():
        not_target = (arange(c, device=x.device) != t).to(x.dtype)
    loss = (m * not_target).sum(1) / c
    if squeeze:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where y = 1, ``max(0, cos(x1, x2) - margin)`` where y = -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    dim = 1 if input1.dim() == 2 else 0
    eps = 1e-12                             # PyTorch's EPSILON, added to each squared norm
    prod_sum = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    pos = elementwise_ops.where(target == 1, 1 - cos, 0.0)
    neg = elementwise_ops.where(target == -1, elementwise_ops.clamp_min(cos - margin, 0), 0.0)
    return reduce_loss(pos + neg, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of a Poisson target with rate ``exp(input)`` (or ``input``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        # Stirling's approximation of log(target!), counted only where target > 1.
        stirling = (target * target.log() - target
                    + 0.5 * (2 * math.pi * target).log())
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``0.5 * (log(var) + (input - target)^2 / var)``: a Gaussian with predicted variance."""
    if not isinstance(var, Tensor):
        var = full_like_value(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # Clamp for stability without changing the gradient (PyTorch clamps a clone under no_grad).
    var = var + (elementwise_ops.clamp_min(var, eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def full_like_value(like: Tensor, value: float) -> Tensor:
    return full(tuple(like.shape), value, dtype=like.dtype, device=like.device)


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6) -> Tensor:
    return reduction_ops.norm(x1 - x2 + eps, p, -1)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with the p-norm distance."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    d_ap = _pairwise_distance(anchor, positive, p, eps)
    d_an = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = elementwise_ops.minimum(d_an, _pairwise_distance(positive, negative, p, eps))
    loss = elementwise_ops.clamp_min(margin + d_ap - d_an, 0)
    return reduce_loss(loss, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """The triplet loss with any distance function (default: the Euclidean distance)."""
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than "
                         f"0, got {margin} instead")
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_ap = dist(anchor, positive)
    d_an = dist(anchor, negative)
    if swap:
        d_an = elementwise_ops.minimum(d_an, dist(positive, negative))
    loss = elementwise_ops.clamp_min(margin + d_ap - d_an, 0)
    return reduce_loss(loss, reduction)


# ---------------------------------------------------------------------------
# CTC
# ---------------------------------------------------------------------------
def _log_add(*terms: Tensor) -> Tensor:
    """``log(sum(exp(t)))`` of same-shaped tensors, exact at -inf and with finite gradients.

    Where every term is -inf the result is -inf and no gradient flows (a plain
    ``log(0)`` would send ``0 * inf = nan`` back).
    """
    m = terms[0].detach()
    for t in terms[1:]:
        m = elementwise_ops.maximum(m, t.detach())
    finite = m > float("-inf")
    m = elementwise_ops.where(finite, m, 0.0)
    s = terms[0] - m
    total = s.exp()
    for t in terms[1:]:
        total = total + (t - m).exp()
    reachable = total > 0
    safe = elementwise_ops.where(reachable, total, 1.0)
    return elementwise_ops.where(reachable, safe.log() + m, float("-inf"))


def _lengths(v: Any) -> list:
    if isinstance(v, Tensor):
        return [int(x) for x in v.reshape(-1).tolist()]
    return [int(x) for x in v]


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification: -log of the total probability of all alignments.

    ``log_probs`` is (T, N, C) (or (T, C) unbatched); ``targets`` is (N, S)
    padded or the 1-D concatenation of all targets.  The forward (alpha)
    recursion runs over time on the extended label sequence ``blank, l1,
    blank, l2, ..., blank`` for the whole batch at once; autograd gives the
    backward (beta) pass.
    """
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    T, N, C = lp.shape
    in_lens = _lengths(input_lengths)
    tg_lens = _lengths(target_lengths)
    if len(in_lens) != N or len(tg_lens) != N:
        raise RuntimeError(f"input_lengths and target_lengths must have {N} entries, got "
                           f"{len(in_lens)} and {len(tg_lens)}")
    if any(t > T for t in in_lens):
        raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value "
                           f"{max(in_lens)}")
    tg = targets.reshape(1, -1) if unbatched else targets     # unbatched: one padded row
    rows = []
    if tg.dim() == 1:                                   # concatenated targets
        flat = [int(v) for v in tg.tolist()]
        start = 0
        for length in tg_lens:
            rows.append(flat[start:start + length])
            start += length
    else:
        for n, length in enumerate(tg_lens):
            rows.append([int(v) for v in tg[n, :length].tolist()])
    s_max = max(tg_lens) if tg_lens else 0
    L = 2 * s_max + 1
    # The extended labels (N, L) and which states may skip from s-2 (a different non-blank).
    ext = [[blank] * L for _ in range(N)]
    skip = [[False] * L for _ in range(N)]
    for n, row in enumerate(rows):
        for i, lab in enumerate(row):
            ext[n][2 * i + 1] = lab
            if i > 0 and row[i - 1] != lab:
                skip[n][2 * i + 1] = True
    ext_t = tensor(ext, dtype=int64, device=lp.device)
    skip_t = tensor(skip, dtype=bool_, device=lp.device)
    ninf = float("-inf")
    emit = lp.gather(2, ext_t.unsqueeze(0).expand(T, N, L))          # (T, N, L)
    pad1 = full((N, 1), ninf, dtype=lp.dtype, device=lp.device)
    pad2 = full((N, 2), ninf, dtype=lp.dtype, device=lp.device)
    state = arange(L, device=lp.device)
    start_ok = (state < 2).unsqueeze(0).expand(N, L)
    alpha = elementwise_ops.where(start_ok, emit[0], ninf)
    in_len_t = tensor(in_lens, dtype=int64, device=lp.device)
    for t in range(1, T):
        prev1 = cat([pad1, alpha[:, :-1]], 1)
        prev2 = elementwise_ops.where(skip_t, cat([pad2, alpha[:, :-2]], 1), ninf)
        new = _log_add(alpha, prev1, prev2) + emit[t]
        # Sequences that already ended keep their final alpha.
        alpha = elementwise_ops.where((in_len_t > t).unsqueeze(1), new, alpha)
    last = tensor([2 * length for length in tg_lens], dtype=int64, device=lp.device)
    end_blank = alpha.gather(1, last.unsqueeze(1)).squeeze(1)
    end_label = alpha.gather(1, (last - 1).clamp_min(0).unsqueeze(1)).squeeze(1)
    has_label = tensor([length > 0 for length in tg_lens], dtype=bool_, device=lp.device)
    end_label = elementwise_ops.where(has_label, end_label, ninf)
    loss = -_log_add(end_blank, end_label)                            # (N,)
    if zero_infinity:
        loss = elementwise_ops.where(loss == float("inf"), zeros_like(loss), loss)
    if reduction == "mean":
        denom = tensor([max(length, 1) for length in tg_lens], dtype=loss.dtype,
                       device=lp.device)
        return (loss / denom).mean()
    if reduction == "sum":
        return loss.sum()
    if reduction != "none":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return loss.squeeze(0) if unbatched else loss

