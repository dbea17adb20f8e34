"""``multi_head_attention_forward``: the function behind ``nn.MultiheadAttention``, in full.

Project the inputs to queries, keys and values, split them into heads
(``(L, N, E) -> (N * heads, L, E / heads)``), optionally append learned bias
keys/values or a zero key, fold the masks into one additive mask, and take
``softmax(Q K^T / sqrt(d) + mask) V``; then concatenate the heads and project.
"""

from __future__ import annotations

import math
from typing import Any

from ..dtype import bool_
from ..ops import reduction as reduction_ops
from ..autograd.grad_mode import no_grad
from ..ops.creation import full, zeros
from ..ops.sampling import bernoulli
from ..ops.linalg import linear, matmul
from ..ops.padding import pad
from ..ops.views import cat
from ..tensor import Tensor

__all__ = ["multi_head_attention_forward"]


def _as_float_mask(mask: Tensor | None, dtype: Any) -> Tensor | None:
    """A boolean mask (True = blocked) as an additive float mask (-inf = blocked)."""
    if mask is None:
        return None
    if mask.dtype is bool_:
        return full(tuple(mask.shape), 0.0, dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf"))
    return mask


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple:
    """Multi-head attention over (L, N, E) query and (S, N, E) key/value (or unbatched 2-D)."""
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    dtype = query.dtype
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight.chunk(3, 0)
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias.chunk(3, 0)
    q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    attn_mask = _as_float_mask(attn_mask, dtype)
    key_padding_mask = _as_float_mask(key_padding_mask, dtype)
    if attn_mask is not None and attn_mask.dim() == 2:
        attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)])
        attn_mask = pad(attn_mask, (0, 1)) if attn_mask is not None else None
        key_padding_mask = pad(key_padding_mask, (0, 1)) if key_padding_mask is not None \
            else None
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None \
        else static_k
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None \
        else static_v
    if add_zero_attn:
        k = cat([k, zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)], 1)
        v = cat([v, zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype, device=v.device)], 1)
        attn_mask = pad(attn_mask, (0, 1)) if attn_mask is not None else None
        key_padding_mask = pad(key_padding_mask, (0, 1)) if key_padding_mask is not None \
            else None
    src_len = k.shape[1]
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    scores = matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))   # (N*H, L, S)
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = reduction_ops.softmax(scores, -1)
    if training and dropout_p > 0.0:
        with no_grad():
            keep = bernoulli(full(tuple(weights.shape), 1.0 - dropout_p, dtype=weights.dtype,
                                  device=weights.device)) / (1.0 - dropout_p)
        weights = weights * keep
    out = matmul(weights, v)                                           # (N*H, L, hd)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    w = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        w = w.mean(1)
    return out, (w.squeeze(0) if unbatched else w)

