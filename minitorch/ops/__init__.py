"""Layer 7: every differentiable op, defined once (forward with kernels, backward with ops)."""

from . import (creation, elementwise, indexing, linalg, reduction, tensor_methods,  # noqa: F401
               views)
