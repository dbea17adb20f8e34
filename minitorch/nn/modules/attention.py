"""``MultiheadAttention``: several attention heads side by side.

Each head projects queries, keys and values to ``head_dim = embed_dim /
num_heads`` dimensions, runs ``softmax(Q K^T / sqrt(head_dim)) V``, and the
heads' outputs are concatenated and projected back.  Parameters follow
PyTorch's layout (``in_proj_weight`` stacks the Q, K and V projections) so
state dicts load either way.
"""

from __future__ import annotations

import math
from typing import Any

from ...ops.creation import empty
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module
from ...dtype import bool_
from ...ops.creation import arange

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for the output projection; a plain Linear."""


class MultiheadAttention(Module):
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, device=device,
                                                  dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, device=device,
                                                 dtype=dtype))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, device=device,
                                                 dtype=dtype))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, device=device,
                                                 dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, device=device, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            # A learned key and value appended to every sequence (an "attention sink").
            self.bias_k = Parameter(empty(1, 1, embed_dim, device=device, dtype=dtype))
            self.bias_v = Parameter(empty(1, 1, embed_dim, device=device, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple:
        if self.bias_k is not None or self.add_zero_attn:
            return self._forward_general(query, key, value, key_padding_mask, need_weights,
                                         attn_mask, average_attn_weights, is_causal)
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        L, N, E = query.shape
        S = key.shape[0]
        H, D = self.num_heads, self.head_dim
        if self._qkv_same_embed_dim:
            wq, wk, wv = self.in_proj_weight.chunk(3, 0)
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        bq = bk = bv = None
        if self.in_proj_bias is not None:
            bq, bk, bv = self.in_proj_bias.chunk(3, 0)
        q = F.linear(query, wq, bq)
        k = F.linear(key, wk, bk)
        v = F.linear(value, wv, bv)
        # (T, N, E) -> (N, H, T, D)
        q = q.reshape(L, N, H, D).permute(1, 2, 0, 3)
        k = k.reshape(S, N, H, D).permute(1, 2, 0, 3)
        v = v.reshape(S, N, H, D).permute(1, 2, 0, 3)
        scores = q.matmul(k.transpose(-2, -1)) / math.sqrt(D)          # (N, H, L, S)
        if is_causal and attn_mask is None:
            attn_mask = arange(L).unsqueeze(1) < arange(S)              # True = blocked
        if attn_mask is not None:
            mask = attn_mask if attn_mask.dim() == 2 else attn_mask.reshape(N, H, L, S)
            if mask.dtype is bool_:
                scores = scores.masked_fill(mask, float("-inf"))        # True = not allowed
            else:
                scores = scores + mask
        if key_padding_mask is not None:
            kpm = key_padding_mask.reshape(N, 1, 1, S)
            if kpm.dtype is bool_:
                scores = scores.masked_fill(kpm, float("-inf"))
            else:
                scores = scores + kpm
        weights = F.softmax(scores, -1)
        if self.dropout and self.training:
            weights = F.dropout(weights, self.dropout, True)
        out = weights.matmul(v)                                          # (N, H, L, D)
        out = out.permute(2, 0, 1, 3).reshape(L, N, E)
        out = self.out_proj(out)
        if unbatched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        w = weights.mean(1) if average_attn_weights else weights
        if unbatched:
            w = w.squeeze(0)
        return out, w

    def _forward_general(self, query: Tensor, key: Tensor, value: Tensor,
                         key_padding_mask: Tensor | None, need_weights: bool,
                         attn_mask: Tensor | None, average_attn_weights: bool,
                         is_causal: bool) -> tuple:
        """The path with ``add_bias_kv``/``add_zero_attn``: ``F.multi_head_attention_forward``."""
        if self.batch_first and query.dim() == 3:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and query.dim() == 3:
            out = out.transpose(0, 1)
        return out, weights
