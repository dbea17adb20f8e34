"""``minitorch.linalg``: PyTorch's ``torch.linalg``, linear algebra on (batches of) matrices.

Every function reads matrices from the last two dims of its input; leading
dims are a batch.  The ops are defined in :mod:`minitorch.ops.linalg_ops`
(forward with the kernels of ``backends/cpu/linalg.py``, backward with other
ops); this module only gives them PyTorch's public names.  See docs/linalg.md.
"""

from __future__ import annotations

from .ops.linalg import matmul
from .ops.linalg_ops import (LinAlgError, cholesky, cholesky_ex, cond, cross, det, eigh,
                             eigvalsh, inv, inv_ex, lstsq, lu, lu_factor, lu_factor_ex, lu_solve,
                             matrix_exp, matrix_norm, matrix_power, matrix_rank, multi_dot, norm,
                             pinv, qr, slogdet, solve, solve_ex, solve_triangular, svd, svdvals,
                             tensorinv, tensorsolve, vander, vecdot, vector_norm)
from .ops.linalg_ops import linalg_diagonal as diagonal

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
           "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]
