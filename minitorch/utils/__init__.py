"""Layer 10 utilities (``minitorch.utils.data``, ``minitorch.utils.checkpoint``)."""

from . import checkpoint, data

__all__ = ["data", "checkpoint"]
