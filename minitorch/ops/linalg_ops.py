"""``minitorch.linalg``: determinants, inverses, solves, factorizations and norms of (batches of) matrices.

Every function takes matrices in the last two dims of its input; any leading
dims are a *batch* (``A`` of shape (5, 3, 3) is five 3x3 matrices), as in
PyTorch.  The forward passes call the kernels of ``backends/cpu/linalg.py``
through :func:`minitorch.ops.kernels.linalg`:

* ``det``, ``slogdet``, ``inv``, ``solve``: LU with partial pivoting,
  ``P A = L U`` (a Numba kernel); ``det A = (-1)^swaps * prod(diag U)``, and
  ``solve`` is a forward and a back substitution.
* ``cholesky``, ``solve_triangular``: Numba kernels.
* ``qr``, ``svd``, ``eigh``: ``numpy.linalg`` (LAPACK) inside the CPU backend.

The backward passes are written with other ops (``matmul``, ``solve``,
``solve_triangular``, ``tril``, ...), each itself differentiable, so
``create_graph=True`` gives second derivatives.  The formulas are the
standard ones, as in PyTorch's ``FunctionsManual.cpp``; with ``g`` the
incoming gradient:

=====================  ==========================================================
``det``                ``g * det(A) * A^-T``
``slogdet``            ``g_logabsdet * A^-T``
``inv``  (X = A^-1)    ``-X^T g X^T``
``solve`` (A X = B)    ``gB = A^-T g``, ``gA = -gB X^T``
``cholesky`` (A=LL^T)  ``L^-T Phi(L^T g) L^-1``, ``Phi`` = lower triangle, halved
                       diagonal, symmetrized
``qr``, ``svd``,       the formulas of Walter & Lehmann, Townsend, and Giles
``eigh``               (see each backward's comment)
=====================  ==========================================================

A matrix that cannot be factored (a singular one for ``inv``/``solve``, one
that is not positive-definite for ``cholesky``) raises
:class:`LinAlgError`, a ``RuntimeError``, naming the batch element.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..autograd.function import Function
from ..dtype import float16, float64, int32, int64
from ..layout import broadcast_shapes, normalize_dim
from ..tensor_base import TensorBase
from . import kernels
from .creation import arange, eye, zeros
from .elementwise import where
from .linalg import cross as _cross3, matmul
from .matrix_builders import diag_embed, tril, triu
from .reduction import return_types
from .registry import declare
from .views import cat

__all__ = ["LinAlgError", "det", "slogdet", "logdet", "inv", "inv_ex", "solve", "solve_ex",
           "solve_triangular", "cholesky", "cholesky_ex", "qr", "svd", "svdvals", "eigh",
           "eigvalsh", "matrix_rank", "pinv", "lstsq", "norm", "vector_norm", "matrix_norm",
           "cross", "multi_dot", "vecdot", "matrix_power", "vander", "inverse", "pinverse",
           "cholesky_solve", "cholesky_inverse", "matrix_exp", "torch_svd", "torch_qr", "torch_cholesky",
           "linalg_diagonal", "lu_factor", "lu_factor_ex", "lu", "lu_unpack", "lu_solve", "cond",
           "tensorinv", "tensorsolve"]


class LinAlgError(RuntimeError):
    """A matrix could not be factored (singular, or not positive-definite): ``torch.linalg.LinAlgError``."""


LinAlgError.__module__ = "minitorch.linalg"      # where users name it (PyTorch: torch.linalg)


# ---------------------------------------------------------------------------
# Checks, shared by every function
# ---------------------------------------------------------------------------
def _check_float(A: TensorBase, name: str) -> None:
    if not isinstance(A, TensorBase):
        raise TypeError(f"{name}(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dtype is float16 or A.dtype.name == "bfloat16":
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {A.dtype._legacy}")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy}")


def _check_matrix(A: TensorBase, name: str, square: bool = True) -> None:
    """``A`` is a float tensor of (batches of) matrices; square ones if ``square``."""
    _check_float(A, name)
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")


def _raise_on_info(info: TensorBase, name: str, message: Any) -> None:
    """Raise :class:`LinAlgError` for the first batch element whose ``info`` is non-zero."""
    codes = info._host_array().reshape(-1)
    bad = codes.nonzero()[0]
    if len(bad):
        b = int(bad[0])
        where_ = f"(Batch element {b}): " if info.dim() else ""
        raise LinAlgError(f"{name}: {where_}{message(int(codes[b]))}")


def _singular(name: str) -> Any:
    if name == "linalg.inv":
        return lambda k: (f"The diagonal element {k} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    return lambda k: "The solver failed because the input matrix is singular."


def _eye_like(A: TensorBase) -> TensorBase:
    n = A._shape[-1]
    return eye(n, dtype=A.dtype, device=A.device).expand(A._shape)


def _mT(A: TensorBase) -> TensorBase:
    return A.transpose(-2, -1)


# ---------------------------------------------------------------------------
# LU: det, slogdet, inv, solve
# ---------------------------------------------------------------------------
def _lu_det(A: TensorBase) -> tuple:
    """``(sign, abs_diag)`` pieces of ``det A`` from its LU factorization (no graph)."""
    lu, piv, _ = kernels.linalg("lu_factor", (A,))
    n = A._shape[-1]
    swaps = (piv != arange(n, device=A.device)).sum(-1)
    perm_sign = 1 - 2 * (swaps % 2)                      # (-1) ** swaps
    return perm_sign.to(A.dtype), lu.diagonal(0, -2, -1)


class Det(Function):
    _backward_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase) -> TensorBase:
        perm_sign, diag = _lu_det(A)
        d = perm_sign * diag.prod(-1)
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # d det(A) / dA = det(A) * A^-T  (Jacobi's formula)
        A, d = ctx.saved_tensors
        return (g * d).unsqueeze(-1).unsqueeze(-1) * _mT(inv(A))


def det(A: TensorBase, *, out: Any = None) -> TensorBase:
    """The determinant of each square matrix in ``A`` (..., n, n), by LU factorization."""
    _check_matrix(A, "linalg.det")
    return Det.apply(A)


class Slogdet(Function):
    _backward_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase) -> tuple:
        perm_sign, diag = _lu_det(A)
        sign = perm_sign * diag.sign().prod(-1)
        logabs = diag.abs().log().sum(-1)
        ctx.save_for_backward(A)
        ctx.mark_non_differentiable(sign)
        return sign, logabs

    @staticmethod
    def backward(ctx: Any, g_sign: Any, g_logabs: TensorBase):
        # d log|det A| / dA = A^-T
        (A,) = ctx.saved_tensors
        return g_logabs.unsqueeze(-1).unsqueeze(-1) * _mT(inv(A))


def slogdet(A: TensorBase, *, out: Any = None) -> Any:
    """``(sign, logabsdet)`` with ``det A = sign * exp(logabsdet)``: no overflow for big matrices."""
    _check_matrix(A, "linalg.slogdet")
    sign, logabs = Slogdet.apply(A)
    return return_types.linalg_slogdet(sign, logabs)


def torch_slogdet(input: TensorBase) -> Any:
    """``torch.slogdet``: :func:`slogdet` under PyTorch's older result name."""
    _check_matrix(input, "linalg.slogdet")
    sign, logabs = Slogdet.apply(input)
    return return_types.slogdet(sign, logabs)


def logdet(input: TensorBase) -> TensorBase:
    """``log(det A)``: NaN where the determinant is negative, -inf where it is zero."""
    sign, logabs = slogdet(input)
    nan = zeros((), dtype=logabs.dtype, device=logabs.device) + math.nan
    return where(sign < 0, nan, logabs)


class Inv(Function):
    _backward_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, check: bool) -> TensorBase:
        X, info = kernels.linalg("solve", (A, _eye_like(A)))
        if check:
            _raise_on_info(info, "linalg.inv", _singular("linalg.inv"))
        ctx.save_for_backward(X)
        return X

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # X = A^-1: dX = -X dA X, so gA = -X^T g X^T
        (X,) = ctx.saved_tensors
        Xt = _mT(X)
        return -matmul(matmul(Xt, g), Xt), None


def inv(A: TensorBase, *, out: Any = None) -> TensorBase:
    """The inverse of each square matrix in ``A``; :class:`LinAlgError` if one is singular."""
    _check_matrix(A, "linalg.inv")
    return Inv.apply(A, True)


def inv_ex(A: TensorBase, *, check_errors: bool = False, out: Any = None) -> Any:
    """``(inverse, info)``: like :func:`inv`, but ``info`` (0: success) instead of an error."""
    _check_matrix(A, "linalg.inv_ex")
    X = Inv.apply(A, check_errors)
    info = kernels.linalg("lu_factor", (A,))[2]
    return return_types.linalg_inv_ex(X, info)


def _solve_operands(A: TensorBase, B: TensorBase, name: str) -> tuple:
    """``(A, B as a batch of matrices, was B a vector)``, batch dims broadcast."""
    _check_matrix(A, name)
    _check_float(B, name)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of "
                           f"type {A.dtype._legacy} and B of type {B.dtype._legacy} instead.")
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and B._shape == A._shape[:-1])
    B2 = B.unsqueeze(-1) if vector else B
    n = A._shape[-1]
    if B2.dim() < 2 or B2._shape[-2] != n:
        shape = "x".join(str(s) for s in B2._shape[-2:]) if B2.dim() >= 2 else str(B2._shape)
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {shape})")
    batch = broadcast_shapes(A._shape[:-2], B2._shape[:-2])
    A2 = A if A._shape[:-2] == batch else A.expand(batch + A._shape[-2:])
    B2 = B2 if B2._shape[:-2] == batch else B2.expand(batch + B2._shape[-2:])
    return A2, B2, vector


class Solve(Function):
    _backward_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, B: TensorBase, check: bool) -> TensorBase:
        X, info = kernels.linalg("solve", (A, B))
        if check:
            _raise_on_info(info, "torch.linalg.solve", _singular("solve"))
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # A X = B: gB = A^-T g, gA = -gB X^T
        A, X = ctx.saved_tensors
        gB = solve(_mT(A), g)
        gA = -matmul(gB, _mT(X)) if ctx.needs_input_grad[0] else None
        return gA, gB, None


def solve(A: TensorBase, B: TensorBase, *, left: bool = True, out: Any = None) -> TensorBase:
    """``X`` with ``A X = B`` (or ``X A = B`` if not ``left``); ``B`` may be a (batch of) vector(s)."""
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    A2, B2, vector = _solve_operands(A, B, "linalg.solve")
    X = Solve.apply(A2, B2, True)
    return X.squeeze(-1) if vector else X


def solve_ex(A: TensorBase, B: TensorBase, *, left: bool = True, check_errors: bool = False,
             out: Any = None) -> Any:
    """``(result, info)``: like :func:`solve`, with ``info`` (0: success) instead of an error."""
    if not left:
        X, info = solve_ex(_mT(A), _mT(B), check_errors=check_errors)
        return return_types.linalg_solve_ex(_mT(X), info)
    A2, B2, vector = _solve_operands(A, B, "linalg.solve_ex")
    X = Solve.apply(A2, B2, check_errors)
    info = kernels.linalg("lu_factor", (A2,))[2]
    return return_types.linalg_solve_ex(X.squeeze(-1) if vector else X, info)


# ---------------------------------------------------------------------------
# The LU factorization itself: lu_factor, lu, lu_unpack, lu_solve
# ---------------------------------------------------------------------------
def _permutation_matrix(perm: TensorBase, dt: Any) -> TensorBase:
    """``P`` with ``A = P L U`` (PyTorch's convention) from the row order of ``L U``."""
    n = perm._shape[-1]
    rows_of_PA = (perm.unsqueeze(-1) == arange(n, device=perm.device)).to(dt)  # (P A) = this @ A
    return _mT(rows_of_PA)


class LUFactor(Function):
    _backward_name = "LinalgLuFactorExBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase) -> tuple:
        LU, piv, info = kernels.linalg("lu_factor", (A,))
        ctx.save_for_backward(LU, piv)
        ctx.mark_non_differentiable(piv, info)
        return LU, piv, info

    @staticmethod
    def backward(ctx: Any, gLU: TensorBase, *_: Any):
        # A = P L U (square): gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T, with
        # gL, gU the strictly lower and upper parts of gLU (PyTorch's linalg_lu_backward).
        LU, piv = ctx.saved_tensors
        L = tril(LU, -1) + _eye_like(LU)
        U = triu(LU)
        phi = tril(matmul(_mT(L), tril(gLU, -1)), -1) + triu(matmul(triu(gLU), _mT(U)))
        X = solve_triangular(_mT(L), phi, upper=True, unitriangular=True)        # L^-T phi
        X = solve_triangular(_mT(U), X, upper=False, left=False)                 # X U^-T
        (perm,) = kernels.linalg("lu_permutation", (piv.unsqueeze(-1),))
        return matmul(_permutation_matrix(perm.squeeze(-1), LU.dtype), X)


def _lu_factor(A: TensorBase, name: str) -> tuple:
    _check_matrix(A, name)
    return LUFactor.apply(A)


def lu_factor(A: TensorBase, *, pivot: bool = True, out: Any = None) -> Any:
    """``(LU, pivots)``: ``L`` (unit diagonal, not stored) and ``U`` in one matrix, and LAPACK's pivots.

    ``pivots[k] = p`` (1-based, int32) says that row ``k`` was swapped with
    row ``p`` at step ``k`` of the elimination.  Square matrices only.
    """
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, _ = _lu_factor(A, "linalg.lu_factor")
    return return_types.linalg_lu_factor(LU, (piv + 1).to(int32))


def lu_factor_ex(A: TensorBase, *, pivot: bool = True, check_errors: bool = False,
                 out: Any = None) -> Any:
    """``(LU, pivots, info)``: :func:`lu_factor` with ``info = k`` where ``U[k-1, k-1]`` is 0."""
    LU, piv, info = _lu_factor(A, "linalg.lu_factor_ex")
    if check_errors:
        _raise_on_info(info, "linalg.lu_factor_ex", lambda k: (
            f"The factorization could not be completed because the input is singular "
            f"(U[{k}, {k}] is zero)."))
    return return_types.linalg_lu_factor_ex(LU, (piv + 1).to(int32), info.to(int32))


def lu_unpack(LU_data: TensorBase, LU_pivots: TensorBase, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """``(P, L, U)`` with ``A = P L U``, from :func:`lu_factor`'s packed result."""
    L = tril(LU_data, -1) + _eye_like(LU_data)
    U = triu(LU_data)
    (perm,) = kernels.linalg("lu_permutation", ((LU_pivots.to(int64) - 1).unsqueeze(-1),))
    P = _permutation_matrix(perm.squeeze(-1), LU_data.dtype)
    return return_types.lu_unpack(P, L, U)


def lu(A: TensorBase, *, pivot: bool = True, out: Any = None) -> Any:
    """``(P, L, U)`` with ``A = P L U``: permutation, unit lower and upper triangular factors."""
    LU, pivots = lu_factor(A, pivot=pivot)
    P, L, U = lu_unpack(LU, pivots)
    return return_types.linalg_lu(P, L, U)


def lu_solve(LU: TensorBase, pivots: TensorBase, B: TensorBase, *, left: bool = True,
             adjoint: bool = False, out: Any = None) -> TensorBase:
    """``X`` with ``A X = B`` from :func:`lu_factor`'s result (``X A = B`` if not ``left``;
    ``A^T`` for ``A`` if ``adjoint``): a permutation and two triangular solves."""
    P, L, U = lu_unpack(LU, pivots)
    if not left:                                     # X A = B  <=>  A^T X^T = B^T
        return _mT(lu_solve(LU, pivots, _mT(B), left=True, adjoint=not adjoint))
    if adjoint:                                      # A^T = U^T L^T P^T
        Y = solve_triangular(_mT(U), B, upper=False)
        Z = solve_triangular(_mT(L), Y, upper=True, unitriangular=True)
        return matmul(P, Z)
    Y = solve_triangular(L, matmul(_mT(P), B), upper=False, unitriangular=True)
    return solve_triangular(U, Y, upper=True)


def torch_lu(A: TensorBase, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """``torch.lu``: ``(LU, pivots)`` (and ``infos``), the older name of :func:`lu_factor_ex`."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def torch_lu_solve(b: TensorBase, LU_data: TensorBase, LU_pivots: TensorBase) -> TensorBase:
    """``torch.lu_solve(b, LU, pivots)``: the older argument order of :func:`lu_solve`."""
    return lu_solve(LU_data, LU_pivots, b)


# ---------------------------------------------------------------------------
# Triangular solves and Cholesky
# ---------------------------------------------------------------------------
class SolveTriangular(Function):
    _backward_name = "LinalgSolveTriangularBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, B: TensorBase, upper: bool,
                unitriangular: bool) -> TensorBase:
        (X,) = kernels.linalg("solve_triangular", (A, B), upper, unitriangular)
        ctx.save_for_backward(A, X)
        ctx.upper, ctx.unit = upper, unitriangular
        return X

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # T X = B: gB = T^-T g (a triangular solve with the other triangle),
        # gA = -gB X^T, kept on T's triangle (the other entries were never read).
        A, X = ctx.saved_tensors
        upper, unit = ctx.upper, ctx.unit
        gB = solve_triangular(_mT(A), g, upper=not upper, unitriangular=unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -matmul(gB, _mT(X))
            gA = triu(gA, 1 if unit else 0) if upper else tril(gA, -1 if unit else 0)
        return gA, gB, None, None


def solve_triangular(A: TensorBase, B: TensorBase, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Any = None) -> TensorBase:
    """``X`` with ``T X = B`` (``X T = B`` if not ``left``), ``T`` the upper or lower triangle of ``A``.

    Back or forward substitution; entries outside the triangle (and the
    diagonal, if ``unitriangular``) are never read.
    """
    if not left:
        return _mT(solve_triangular(_mT(A), _mT(B), upper=not upper,
                                    unitriangular=unitriangular))
    _check_matrix(A, "linalg.solve_triangular")
    _check_float(B, "linalg.solve_triangular")
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {A.dtype._legacy} and B of type "
                           f"{B.dtype._legacy} instead.")
    n = A._shape[-1]
    if B._shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation AX = B ({n}x{n} and {B._shape[-2]}x{B._shape[-1]})")
    batch = broadcast_shapes(A._shape[:-2], B._shape[:-2])
    A2 = A if A._shape[:-2] == batch else A.expand(batch + A._shape[-2:])
    B2 = B if B._shape[:-2] == batch else B.expand(batch + B._shape[-2:])
    return SolveTriangular.apply(A2, B2, bool(upper), bool(unitriangular))


class Cholesky(Function):
    _backward_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, check: bool) -> TensorBase:
        L, info = kernels.linalg("cholesky", (A,))
        if check:
            _raise_on_info(info, "linalg.cholesky", lambda k: (
                "The factorization could not be completed because the input is not "
                f"positive-definite (the leading minor of order {k} is not positive-definite)."))
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def backward(ctx: Any, gL: TensorBase):
        # A = L L^T.  With P = tril(L^T gL), symmetrized with its diagonal kept once,
        # gA = L^-T P L^-1 (two triangular solves), as in PyTorch's cholesky_backward.
        (L,) = ctx.saved_tensors
        P = tril(matmul(_mT(L), gL))
        P = 0.5 * (P + _mT(tril(P, -1)))
        Y = solve_triangular(_mT(L), P, upper=True)                   # L^-T P
        return _mT(solve_triangular(_mT(L), _mT(Y), upper=True)), None  # (L^-T Y^T)^T = Y L^-1


def cholesky(A: TensorBase, *, upper: bool = False, out: Any = None) -> TensorBase:
    """The Cholesky factor ``L`` (lower; ``U = L^T`` if ``upper``) of each symmetric positive-definite matrix.

    Only the lower triangle of ``A`` is read.
    """
    _check_matrix(A, "linalg.cholesky")
    L = Cholesky.apply(A, True)
    return _mT(L) if upper else L


def cholesky_ex(A: TensorBase, *, upper: bool = False, check_errors: bool = False,
                out: Any = None) -> Any:
    """``(L, info)``: like :func:`cholesky`, with ``info`` (0: success) instead of an error."""
    _check_matrix(A, "linalg.cholesky_ex")
    L = Cholesky.apply(A, check_errors)
    _, info = kernels.linalg("cholesky", (A,))
    return return_types.linalg_cholesky_ex(_mT(L) if upper else L, info)


def torch_cholesky(input: TensorBase, upper: bool = False) -> TensorBase:
    """``torch.cholesky`` (deprecated in PyTorch for :func:`cholesky`)."""
    return cholesky(input, upper=upper)


def cholesky_solve(B: TensorBase, L: TensorBase, upper: bool = False) -> TensorBase:
    """``X`` with ``A X = B`` given the Cholesky factor ``L`` of ``A``: two triangular solves."""
    if upper:
        L = _mT(L)
    Y = solve_triangular(L, B, upper=False)
    return solve_triangular(_mT(L), Y, upper=True)


def cholesky_inverse(L: TensorBase, upper: bool = False) -> TensorBase:
    """``A^-1`` given the Cholesky factor ``L`` of ``A``."""
    return cholesky_solve(_eye_like(L), L, upper)


# ---------------------------------------------------------------------------
# QR, SVD, eigh (numpy.linalg inside the CPU backend)
# ---------------------------------------------------------------------------
class QR(Function):
    _backward_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, mode: str) -> tuple:
        Q, R = kernels.linalg("qr", (A,), mode)
        if mode == "r":
            Q = zeros((0,), dtype=A.dtype, device=A.device)
        ctx.save_for_backward(Q, R)
        ctx.mode = mode
        return Q, R

    @staticmethod
    def backward(ctx: Any, gQ: TensorBase, gR: TensorBase):
        Q, R = ctx.saved_tensors
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        m, n = Q._shape[-2], R._shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(Q, R, gQ, gR), None
        # Wide A = [X | Y] with X square: X = Q U, Y = Q V for R = [U | V].
        U, V = R[..., :, :m], R[..., :, m:]
        gU, gV = gR[..., :, :m], gR[..., :, m:]
        Y = matmul(Q, V)
        gX = _qr_backward_tall(Q, U, gQ + matmul(Y, _mT(gV)), gU)
        return cat([gX, matmul(Q, gV)], -1), None


def _qr_backward_tall(Q: TensorBase, R: TensorBase, gQ: TensorBase, gR: TensorBase) -> TensorBase:
    """``gA`` for ``A = QR``, ``A`` (m, n) with m >= n (Walter & Lehmann; Liao et al. 2019).

    ``M = R gR^T - gQ^T Q``; ``gA = (gQ + Q copyltu(M)) R^-T``, where
    ``copyltu`` mirrors the lower triangle of ``M`` onto its upper one.
    """
    M = matmul(R, _mT(gR)) - matmul(_mT(gQ), Q)
    sym = tril(M) + _mT(tril(M, -1))
    b = gQ + matmul(Q, sym)
    return _mT(solve_triangular(R, _mT(b), upper=True))             # b R^-T


def qr(A: TensorBase, mode: str = "reduced", *, out: Any = None) -> Any:
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns, ``R`` upper triangular.

    ``mode``: ``'reduced'`` (Q is m x k, k = min(m, n)), ``'complete'``
    (Q is m x m) or ``'r'`` (only R; Q is empty).  Computed by NumPy (LAPACK).
    """
    _check_matrix(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    Q, R = QR.apply(A, mode)
    return return_types.linalg_qr(Q, R)


def torch_qr(input: TensorBase, some: bool = True) -> Any:
    """``torch.qr``: :func:`qr` with ``some=False`` meaning ``mode='complete'``."""
    Q, R = qr(input, "reduced" if some else "complete")
    return return_types.qr(Q, R)


class SVD(Function):
    _backward_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, full_matrices: bool) -> tuple:
        U, S, Vh = kernels.linalg("svd", (A,), full_matrices)
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx: Any, gU: TensorBase, gS: TensorBase, gVh: TensorBase):
        # Townsend (2016), "Differentiating the singular value decomposition", as in
        # PyTorch's svd_backward (real case).  With E_ij = s_j^2 - s_i^2 (1 on the diagonal)
        # and skew(X) = X - X^T:
        #   gA = U [skew(U^T gU)/E S + S skew(V^T gV)/E + diag(gS)] V^T
        #        + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)
        U, S, Vh = ctx.saved_tensors
        k = S._shape[-1]
        m, n = U._shape[-2], Vh._shape[-1]
        U, Vh, gU, gVh = U[..., :k], Vh[..., :k, :], gU[..., :k], gVh[..., :k, :]
        V, gV = _mT(Vh), _mT(gVh)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye(k, dtype=S.dtype, device=S.device)
        UtgU = matmul(_mT(U), gU)
        VtgV = matmul(_mT(V), gV)
        inner = ((UtgU - _mT(UtgU)) / E * S.unsqueeze(-2)
                 + S.unsqueeze(-1) * ((VtgV - _mT(VtgV)) / E) + diag_embed(gS))
        gA = matmul(matmul(U, inner), Vh)
        if m > k:
            gA = gA + matmul((gU - matmul(U, UtgU)) / S.unsqueeze(-2), Vh)
        if n > k:
            gA = gA + matmul(U, _mT((gV - matmul(V, VtgV)) / S.unsqueeze(-2)))
        return gA, None


def svd(A: TensorBase, full_matrices: bool = True, *, driver: Any = None, out: Any = None) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, ``S`` descending.  Computed by NumPy (LAPACK).

    The gradient is defined when the singular values are distinct (and, for
    ``U``/``Vh``, non-zero), as in PyTorch.
    """
    _check_matrix(A, "linalg.svd", square=False)
    U, S, Vh = SVD.apply(A, bool(full_matrices))
    return return_types.linalg_svd(U, S, Vh)


def svdvals(A: TensorBase, *, driver: Any = None, out: Any = None) -> TensorBase:
    """The singular values of each matrix, descending."""
    _check_matrix(A, "linalg.svdvals", square=False)
    if A.requires_grad:
        return SVD.apply(A, False)[1]
    return kernels.linalg("svd", (A,), False, False)[1]


def torch_svd(input: TensorBase, some: bool = True, compute_uv: bool = True) -> Any:
    """``torch.svd``: ``(U, S, V)`` (``V``, not ``Vh``); ``some=False`` gives square U and V."""
    _check_matrix(input, "linalg.svd", square=False)
    if not compute_uv:
        S = svdvals(input)
        m, n = input._shape[-2:]
        k = min(m, n)
        zeros_u = zeros(input._shape[:-2] + ((m, k) if some else (m, m)), dtype=input.dtype,
                        device=input.device)
        zeros_v = zeros(input._shape[:-2] + ((n, k) if some else (n, n)), dtype=input.dtype,
                        device=input.device)
        return return_types.svd(zeros_u, S, zeros_v)
    U, S, Vh = SVD.apply(input, not some)
    return return_types.svd(U, S, _mT(Vh))


class Eigh(Function):
    _backward_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, upper: bool) -> tuple:
        L, V = kernels.linalg("eigh", (A,), upper)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx: Any, gL: TensorBase, gV: TensorBase):
        # Giles (2008) / PyTorch's linalg_eig_backward for symmetric A = V diag(L) V^T,
        # with E_ij = L_j - L_i (1 on the diagonal):
        #   gA = V [diag(gL) + (skew(V^T gV) / 2) / E] V^T
        L, V = ctx.saved_tensors
        n = L._shape[-1]
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye(n, dtype=L.dtype, device=L.device)
        VtgV = matmul(_mT(V), gV)
        inner = 0.5 * (VtgV - _mT(VtgV)) / E + diag_embed(gL)
        return matmul(matmul(V, inner), _mT(V)), None


def _uplo(UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "U"


def eigh(A: TensorBase, UPLO: str = "L", *, out: Any = None) -> Any:
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix: ascending values, vectors as columns.

    Only the triangle ``UPLO`` (``'L'`` lower, ``'U'`` upper) is read.
    Computed by NumPy (LAPACK).
    """
    _check_matrix(A, "linalg.eigh")
    L, V = Eigh.apply(A, _uplo(UPLO))
    return return_types.linalg_eigh(L, V)


def eigvalsh(A: TensorBase, UPLO: str = "L", *, out: Any = None) -> TensorBase:
    """The eigenvalues of each symmetric matrix, ascending."""
    _check_matrix(A, "linalg.eigvalsh")
    return Eigh.apply(A, _uplo(UPLO))[0]


# ---------------------------------------------------------------------------
# Built on the SVD: rank, pseudo-inverse, least squares
# ---------------------------------------------------------------------------
def _tolerance(S: TensorBase, shape: tuple, atol: Any, rtol: Any) -> TensorBase:
    """``max(atol, rtol * largest singular value)``, PyTorch's rule for rank and pinv."""
    smax = S.amax(-1, keepdim=True) if S._shape[-1] else zeros(S._shape[:-1] + (1,),
                                                                  dtype=S.dtype)
    if atol is None and rtol is None:
        eps = 2.220446049250313e-16 if S.dtype is float64 else 1.1920928955078125e-07
        rtol = eps * max(shape[-2:])
    rtol = 0.0 if rtol is None else rtol
    atol = 0.0 if atol is None else atol
    rel = smax * rtol
    return rel.clamp(min=atol) if not isinstance(atol, TensorBase) else \
        where(rel > atol.unsqueeze(-1), rel, atol.unsqueeze(-1))


def matrix_rank(A: TensorBase, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None, out: Any = None) -> TensorBase:
    """How many singular values exceed ``max(atol, rtol * largest)`` (int64, no gradient)."""
    _check_matrix(A, "linalg.matrix_rank", square=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    S = svdvals(A.detach())
    return (S > _tolerance(S, A._shape, atol, rtol)).sum(-1)


class Pinv(Function):
    _backward_name = "LinalgPinvBackward0"

    @staticmethod
    def forward(ctx: Any, A: TensorBase, atol: Any, rtol: Any) -> TensorBase:
        U, S, Vh = kernels.linalg("svd", (A,), False)
        keep = S > _tolerance(S, A._shape, atol, rtol)
        s_inv = where(keep, 1.0 / where(keep, S, S.new_ones(())), S.new_zeros(()))
        X = matmul(_mT(Vh) * s_inv.unsqueeze(-2), _mT(U))
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # PyTorch's pinv_backward (Golub & Pereyra's derivative of the pseudo-inverse),
        # defined also where singular values repeat (unlike going through the SVD).
        A, P = ctx.saved_tensors
        m, n = A._shape[-2:]
        Ph, gh = _mT(P), _mT(g)
        if m <= n:
            K = matmul(gh, P)
            KPh = matmul(K, Ph)
            gA = (-_mT(matmul(P, K)) + KPh - matmul(matmul(A, P), KPh)
                  + matmul(matmul(Ph, P), gh - matmul(K, A)))
        else:
            K = matmul(P, gh)
            PhK = matmul(Ph, K)
            gA = (-_mT(matmul(K, P)) + matmul(matmul(gh - matmul(A, K), P), Ph) + PhK
                  - matmul(matmul(PhK, P), A))
        return gA, None, None


def pinv(A: TensorBase, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
         out: Any = None) -> TensorBase:
    """The Moore-Penrose pseudo-inverse ``V diag(1/s) U^T``, dropping singular values below tolerance."""
    _check_matrix(A, "linalg.pinv", square=False)
    return Pinv.apply(A, atol, rtol)


def pinverse(input: TensorBase, rcond: float = 1e-15) -> TensorBase:
    """``torch.pinverse``: :func:`pinv` with a relative tolerance ``rcond``."""
    return pinv(input, rtol=rcond)


def lstsq(A: TensorBase, B: TensorBase, rcond: Any = None, *, driver: Any = None) -> Any:
    """The least-squares solution of ``A X = B``: ``(solution, residuals, rank, singular_values)``.

    Computed as ``pinv(A) @ B`` (differentiable).  The other results follow
    PyTorch's ``driver``: with the default ``'gelsy'``, ``residuals`` and
    ``singular_values`` are empty; ``'gelsd'``/``'gelss'`` add the singular
    values, and every driver but ``'gelsy'`` fills ``residuals`` (the squared
    error of each column) when ``m > n`` and every matrix has full rank;
    ``'gels'`` gives no ``rank``.
    """
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of "
                           f"(gels, gelsy, gelsd, gelss)")
    _check_matrix(A, "linalg.lstsq", square=False)
    _check_float(B, "linalg.lstsq")
    if B.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    if A._shape[-2] != B._shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A._shape[-2:]
    X = matmul(pinv(A, rtol=rcond), B)
    rank = matrix_rank(A, rtol=rcond)
    empty = zeros((0,), dtype=A.dtype, device=A.device)
    residuals = empty
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        residuals = ((matmul(A, X) - B) ** 2).sum(-2)
    values = svdvals(A) if driver in ("gelsd", "gelss") else empty
    if driver == "gels":
        rank = zeros((0,), dtype=int64, device=A.device)
    return return_types.linalg_lstsq(X, residuals, rank, values)


# ---------------------------------------------------------------------------
# Norms
# ---------------------------------------------------------------------------
def _norm_dims(x: TensorBase, dim: Any) -> tuple:
    if dim is None:
        return tuple(range(x.dim()))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(normalize_dim(d, max(x.dim(), 1)) for d in dims))


def _keep(t: TensorBase, dims: tuple, keepdim: bool) -> TensorBase:
    """A reduction's result (or gradient) with the reduced ``dims`` back as size-1 dims."""
    if keepdim:
        return t
    for d in dims:
        t = t.unsqueeze(d)
    return t


class VectorNorm(Function):
    _backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, ord: float, dims: tuple, keepdim: bool) -> TensorBase:
        a = x.abs()
        if ord == math.inf:
            out = a.amax(dims, keepdim)
        elif ord == -math.inf:
            out = a.amin(dims, keepdim)
        elif ord == 0:
            out = (a != 0).to(x.dtype).sum(dims, keepdim)
        elif ord == 1:
            out = a.sum(dims, keepdim)
        elif ord == 2:
            out = (a * a).sum(dims, keepdim).sqrt()
        else:
            out = (a ** ord).sum(dims, keepdim) ** (1.0 / ord)
        ctx.save_for_backward(x, out)
        ctx.ord, ctx.dims, ctx.keepdim = ord, dims, keepdim
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # As PyTorch's norm_backward: 0 where the norm is 0 (not NaN), and for
        # ord=+-inf the gradient shared equally by the elements that tie for the max/min.
        x, norm = ctx.saved_tensors
        ord, dims = ctx.ord, ctx.dims
        g = _keep(g, dims, ctx.keepdim)
        norm = _keep(norm, dims, ctx.keepdim)
        zero = x.new_zeros(())
        if ord == 0:
            return x * 0, None, None, None
        if ord == 1:
            return g * x.sign(), None, None, None
        if ord in (math.inf, -math.inf):
            hit = (x.abs() == norm).to(x.dtype)
            return g * x.sign() * hit / hit.sum(dims, True), None, None, None
        safe = where(norm == 0, x.new_ones(()), norm)
        if ord == 2:
            scale = x / safe
        else:
            scale = x * x.abs() ** (ord - 2) / safe ** (ord - 1)
        return where(norm == 0, zero, g * scale), None, None, None


def vector_norm(x: TensorBase, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None, out: Any = None) -> TensorBase:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all dims if None); ord = inf, -inf, 0 too."""
    _check_float(x, "linalg.vector_norm")
    if dtype is not None:
        x = x.to(dtype)
    ord = float(ord) if not isinstance(ord, str) else ord
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Expected a number for ord, got {ord!r}")
    dims = _norm_dims(x, dim)
    if x.numel() == 0 and ord < 0 or (x.numel() == 0 and ord == math.inf and
                                      any(x._shape[d] == 0 for d in dims)):
        raise RuntimeError("linalg.vector_norm cannot compute the "
                           f"{'inf' if ord == math.inf else ord} norm on an empty tensor because "
                           "the operation does not have an identity")
    return VectorNorm.apply(x, ord, dims, bool(keepdim))


def matrix_norm(A: TensorBase, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None, out: Any = None) -> TensorBase:
    """A matrix norm over the two dims ``dim``: ``'fro'``, ``'nuc'``, 1, -1, 2, -2, inf, -inf."""
    _check_float(A, "linalg.matrix_norm")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (normalize_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        S = svdvals(moved)
        out = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        return _keep(out, tuple(sorted((d0, d1))), False) if keepdim else out
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(inner, keepdim=True)
        out = sums.amax(outer, keepdim=True) if ord > 0 else sums.amin(outer, keepdim=True)
        return out if keepdim else out.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: TensorBase, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None, out: Any = None) -> TensorBase:
    """A vector norm (``dim`` an int, or a 1-D input) or a matrix norm (``dim`` a pair, or a 2-D input)."""
    _check_float(A, "linalg.norm")
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dims)}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D "
                       f"or 2D. Got {A.dim()}D.")


# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------
def cross(input: TensorBase, other: TensorBase, *, dim: int = -1, out: Any = None) -> TensorBase:
    """The cross product of 3-vectors along ``dim``, batch dims broadcast."""
    shape = broadcast_shapes(input._shape, other._shape)
    d = normalize_dim(dim, len(shape))
    if shape[d] != 3 or input._shape[d - len(shape) + input.dim()] != 3:
        a = input._shape[dim] if input.dim() else 0
        b = other._shape[dim] if other.dim() else 0
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a} "
                           f"and {b}")
    return _cross3(input.expand(shape), other.expand(shape), d)


def multi_dot(tensors: Sequence[TensorBase], *, out: Any = None) -> TensorBase:
    """The product of a chain of matrices (the first may be a row vector, the last a column one)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = ([tensors[0].unsqueeze(0)] if first_vec else [tensors[0]]) + tensors[1:-1] + \
        ([tensors[-1].unsqueeze(-1)] if last_vec else [tensors[-1]])
    for k, t in enumerate(mats):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {k} must be 2D but got {t.dim()}D")
    result = mats[0]
    for t in mats[1:]:
        result = matmul(result, t)
    if first_vec:
        result = result.squeeze(0)
    if last_vec:
        result = result.squeeze(-1)
    return result


def vecdot(x: TensorBase, y: TensorBase, *, dim: int = -1, out: Any = None) -> TensorBase:
    """The dot product of vectors along ``dim``, batch dims broadcast."""
    return (x * y).sum(dim)


def matrix_power(A: TensorBase, n: int) -> TensorBase:
    """``A`` multiplied by itself ``n`` times (``n < 0``: of its inverse; ``n = 0``: identity)."""
    if A.dim() < 2 or A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A._shape[-2] if A.dim() > 1 else 1} by "
                           f"{A._shape[-1] if A.dim() else 1} matrices")
    if n == 0:
        return _eye_like(A).contiguous()
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:                                # square-and-multiply: log2(n) products
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def cond(A: TensorBase, p: Any = None, *, out: Any = None) -> TensorBase:
    """The condition number ``norm(A) * norm(A^-1)`` (``p=None`` or 2: ``s_max / s_min``)."""
    _check_matrix(A, "linalg.cond", square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        S = svdvals(A)
        ratio = S[..., 0] / S[..., -1]
        return ratio if p != -2 else 1.0 / ratio
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def tensorinv(A: TensorBase, ind: int = 2, *, out: Any = None) -> TensorBase:
    """The inverse of ``A`` seen as a matrix: the first ``ind`` dims are rows, the rest columns."""
    rows, cols = A._shape[:ind], A._shape[ind:]
    n = 1
    for s in rows:
        n *= s
    return inv(A.reshape(n, -1)).reshape(cols + rows)


def tensorsolve(A: TensorBase, B: TensorBase, dims: Any = None, *, out: Any = None) -> TensorBase:
    """``X`` with ``tensordot(A, X, X.ndim) = B``: a linear solve with ``A`` reshaped to a matrix."""
    if dims is not None:
        moved = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in moved] + moved)
    x_shape = A._shape[B.dim():]
    n = B.numel()
    return solve(A.reshape(n, -1), B.reshape(n)).reshape(x_shape)


def matrix_exp(A: TensorBase) -> TensorBase:
    """``exp(A) = I + A + A^2/2! + ...`` of each square matrix, by scaling and squaring.

    ``A`` is first scaled by ``2^-s`` until its 1-norm is at most 1/2, where
    18 terms of the Taylor series are exact to rounding; the result is then
    squared ``s`` times (``exp(A) = exp(A / 2^s)^(2^s)``).  Only matrix
    products and sums: the gradient comes from autograd.
    """
    _check_matrix(A, "linalg.matrix_exp")
    if A.numel() == 0:
        return A.clone()
    norm = float(A.detach().abs().sum(-2).amax().item())
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 and math.isfinite(norm) else 0
    X = A / (2.0 ** s) if s else A
    term = _eye_like(A)
    result = term
    for k in range(1, 19):
        term = matmul(term, X) / k
        result = result + term
    for _ in range(s):
        result = matmul(result, result)
    return result


def vander(x: TensorBase, *, N: int | None = None) -> TensorBase:
    """``linalg.vander``: columns ``1, x, x**2, ..., x**(N-1)`` (increasing powers), batched."""
    n = x._shape[-1] if N is None else int(N)
    if n <= 1 and N is not None and n < 1:
        raise RuntimeError("N must be greater than 1.")
    powers = arange(n, device=x.device)
    base = x if x.dtype.is_floating_point else x.to(int64)
    return base.unsqueeze(-1) ** powers


def linalg_diagonal(A: TensorBase, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> TensorBase:
    """``linalg.diagonal``: :meth:`Tensor.diagonal` over the last two dims by default."""
    return A.diagonal(offset, dim1, dim2)


def inverse(input: TensorBase) -> TensorBase:
    """``torch.inverse``: :func:`inv`."""
    return inv(input)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_.
# (minitorch.linalg.<name> is minitorch/linalg.py.)
# ---------------------------------------------------------------------------
declare(cholesky_inverse)
declare(cholesky_solve)
declare(det)
declare(inverse)
declare(logdet)
declare(lu_unpack, method=False)
declare(matrix_exp)
declare(matrix_power)
declare(pinverse)
declare(torch_cholesky, "cholesky")
declare(torch_lu, "lu")
declare(torch_lu_solve, "lu_solve")
declare(torch_qr, "qr")
declare(torch_slogdet, "slogdet")
declare(torch_svd, "svd")
