"""Layer 10 utilities (``minitorch.utils.data``)."""

from . import data

__all__ = ["data"]
