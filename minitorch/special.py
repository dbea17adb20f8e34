"""``minitorch.special``: PyTorch's ``torch.special``, the special functions under one name.

Most are minitorch's own ops under the names ``torch.special`` gives them
(``expit`` is ``sigmoid``, ``psi`` would be ``digamma``); the ones no other op
computes are in :mod:`minitorch.ops.special_functions`.  Not here yet: the
gamma family (``gammaln``, ``digamma``, ``polygamma``, ``multigammaln``), the
Bessel functions and ``zeta``, which need kernels of their own.
"""

from __future__ import annotations

from .ops.composite_math import logit, sinc
from .ops.elementwise import erf, erfc, exp2, expm1, log1p, round, xlogy  # noqa: A004
from .ops.elementwise import sigmoid as expit
from .ops.reduction import log_softmax, logsumexp, softmax
from .ops.special_functions import entr, erfinv, ndtr, ndtri, xlog1py

__all__ = ["entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax",
           "logit", "logsumexp", "ndtr", "ndtri", "round", "sinc", "softmax", "xlog1py", "xlogy"]
