"""``pad``: grow (or, with negative amounts, crop) the last dims of a tensor.

``pad(x, (left, right, top, bottom))`` pads the last dim by ``left``/``right``
and the one before by ``top``/``bottom``.  Constant padding concatenates
blocks of ``value``; ``reflect``, ``replicate`` and ``circular`` padding pick
existing elements with ``index_select``, so the gradient flows back to the
elements that were copied.  ``nn.functional.pad`` is this function.
"""

from __future__ import annotations

from typing import Any

from ..dtype import int64
from ..tensor_base import TensorBase
from .creation import full, tensor
from .index_ops import index_select
from .views import cat

__all__ = ["pad"]


def pad(input: TensorBase, pad: Any, mode: str = "constant", value: float | None = None) -> TensorBase:
    """Pad the last ``len(pad) // 2`` dims; ``pad = (left, right, top, bottom, ...)``."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.dim()}")
    if mode != "constant":
        # reflect, replicate and circular pad the last 1, 2 or 3 dims of a batch (with or
        # without its batch dim), as PyTorch's kernels for them do: nothing else.
        if input.dim() - len(pad) // 2 not in (1, 2):
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
        return _pad_nonconstant(input, pad, mode)
    out = input
    value = 0.0 if value is None else value
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left < 0:
            out = out.narrow(d, -left, out.shape[d] + left)
            left = 0
        if right < 0:
            out = out.narrow(d, 0, out.shape[d] + right)
            right = 0
        pieces = []
        if left:
            shape = list(out.shape)
            shape[d] = left
            pieces.append(full(tuple(shape), value, dtype=out.dtype, device=out.device))
        pieces.append(out)
        if right:
            shape = list(out.shape)
            shape[d] = right
            pieces.append(full(tuple(shape), value, dtype=out.dtype, device=out.device))
        if len(pieces) > 1:
            out = cat(pieces, d)
    return out


def _pad_nonconstant(input: TensorBase, pad: Any, mode: str) -> TensorBase:
    out = input
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = out.shape[d]
        idx = list(range(-left, n + right))
        if mode == "reflect":
            if left >= n or right >= n:
                raise RuntimeError("Padding size should be less than the corresponding input "
                                   "dimension")
            idx = [abs(j) if j < 0 else (2 * (n - 1) - j if j >= n else j) for j in idx]
        elif mode == "replicate":
            idx = [min(max(j, 0), n - 1) for j in idx]
        elif mode == "circular":
            idx = [j % n for j in idx]
        else:
            raise NotImplementedError(f"padding mode {mode!r} is not supported")
        out = index_select(out, d, tensor(idx, dtype=int64, device=input.device))
    return out
