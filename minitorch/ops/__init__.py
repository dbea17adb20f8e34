"""Layer 7: every differentiable op, defined once (forward with kernels, backward with ops).

Each module holds one family of ops and ends with a table of ``declare``
calls (see :mod:`.registry`) that says which public forms each op has.
Importing this package imports every family, so that the tables are complete
before ``minitorch.Tensor`` and ``minitorch/__init__.py`` read them.
"""

from . import (advanced_indexing, basic_indexing, conversion, creation, einsum,  # noqa: F401
               elementwise, embedding, gather_scatter, index_helpers, index_ops, indexing,
               inplace_views, padding,
               legacy_types, linalg, masked, reduction, registry, sampling, sorting, views)
from . import (composite_math, linalg_ops, matrix_builders, rearranging,  # noqa: F401
               dlpack, scans_and_counts, scatter_reduce, special_functions, tensor_extras)
