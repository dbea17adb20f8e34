"""``t[key]`` and ``t[key] = value``: where each kind of key goes.

A key made only of ints, slices, ``None`` and ``...`` is *basic*: the result
is a view (``ops/basic_indexing.py``).  A key with a list, an integer or
boolean tensor, or an array is *advanced*: the result is a copy gathered at
the indexed positions (``ops/advanced_indexing.py``), and assignment
scatters into them.

The named index ops live one family per module: ``gather_scatter``
(gather, scatter, take), ``index_ops`` (index_select, index_add, ...),
``masked`` (masked_fill, masked_select, nonzero), ``embedding``; what they
share (index checks before any kernel runs) is in ``index_helpers``.
"""

from __future__ import annotations

from typing import Any

from ..tensor_base import TensorBase
from ..trace_mode import recorded   # t[i] = v joins a compiler's trace
from . import advanced_indexing
from .basic_indexing import basic_getitem, basic_setitem, is_basic, normalize_key

__all__ = ["getitem", "setitem"]


def getitem(self: TensorBase, key: Any) -> TensorBase:
    """``self[key]``: a view for basic keys, a copy for advanced ones."""
    normalized = normalize_key(key)
    if is_basic(normalized):
        return basic_getitem(self, normalized)
    return advanced_indexing.getitem(self, key)


@recorded
def setitem(self: TensorBase, key: Any, value: Any) -> None:
    """``self[key] = value``: write ``value`` (broadcast) into the selected elements."""
    normalized = normalize_key(key)
    if is_basic(normalized):
        basic_setitem(self, normalized, value)
    else:
        advanced_indexing.setitem(self, key, value)
