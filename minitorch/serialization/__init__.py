"""Layer 11: ``save`` and ``load`` (see :mod:`minitorch.serialization.minitorch_format`)."""

from .minitorch_format import FORMAT_VERSION, load, save

__all__ = ["save", "load", "FORMAT_VERSION"]
