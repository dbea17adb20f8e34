"""Layer 7: every differentiable op, defined once (forward with kernels, backward with ops)."""

from . import (creation, einsum, elementwise, indexing, linalg, reduction,  # noqa: F401
               tensor_methods, views)
