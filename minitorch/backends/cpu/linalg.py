"""Dense linear algebra on the CPU: LU, Cholesky and triangular solves in Numba; QR, SVD, eigh in NumPy.

Every function here takes a *stack* of matrices, a C-contiguous NumPy array
of shape ``(batch, rows, cols)`` (float32 or float64), and returns new
arrays; the ops layer (``minitorch/ops/linalg_ops.py``) folds any leading
batch dims into the one ``batch`` dim and gives them back afterwards.

The three factorizations a course on numerical linear algebra teaches first
are written out as readable Numba kernels:

* :func:`lu_factor_kernel`: Gaussian elimination with *partial pivoting*,
  ``P A = L U``.  Column by column, the row with the largest ``|a[i, k]|``
  at or below the diagonal is swapped up (so we never divide by a tiny
  pivot), then the entries below the pivot are eliminated.  ``L`` (unit
  diagonal, not stored) and ``U`` share one array, as in LAPACK's
  ``getrf``.  ``det``, ``inv`` and ``solve`` are built on it.
* :func:`lu_solve_kernel`: with ``P A = L U``, ``A X = B`` becomes two
  triangular solves, ``L Y = P B`` (forward substitution) and ``U X = Y``
  (back substitution).
* :func:`cholesky_kernel`: ``A = L L^T`` for a symmetric positive-definite
  ``A`` (the Cholesky-Banachiewicz order, row by row).

QR, the SVD and the symmetric eigendecomposition need iterative algorithms
(Householder reflections, implicit-shift QR iterations) whose readable
versions are long and slow; for those this module calls ``numpy.linalg``
(LAPACK), which is the one place in minitorch that does.  docs/linalg.md
and docs/differences.md say so.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["lu_factor", "lu_solve", "lu_permutation", "solve", "cholesky", "solve_triangular", "qr", "svd", "eigh"]


# ---------------------------------------------------------------------------
# LU with partial pivoting
# ---------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def lu_factor_kernel(a, piv, info):  # pragma: no cover - compiled by Numba
    """Factor each ``a[b]`` (n, n) in place into ``L\\U``; ``piv[b, k]`` is the row swapped with ``k``.

    ``info[b]`` is 0, or ``k + 1`` for the first zero pivot ``U[k, k]`` (the
    matrix is singular; the factorization is still completed, as LAPACK does).
    """
    nb, n = a.shape[0], a.shape[1]
    for b in range(nb):
        info[b] = 0
        for k in range(n):
            # 1. the pivot: the largest entry of column k on or below the diagonal
            p = k
            best = abs(a[b, k, k])
            for i in range(k + 1, n):
                v = abs(a[b, i, k])
                if v > best:
                    best = v
                    p = i
            piv[b, k] = p
            if p != k:                               # 2. swap rows k and p
                for j in range(n):
                    tmp = a[b, k, j]
                    a[b, k, j] = a[b, p, j]
                    a[b, p, j] = tmp
            pivot = a[b, k, k]
            if pivot == 0:
                if info[b] == 0:
                    info[b] = k + 1
                continue
            # 3. eliminate below the pivot: row_i -= l_ik * row_k, keeping l_ik in place
            for i in range(k + 1, n):
                l_ik = a[b, i, k] / pivot
                a[b, i, k] = l_ik
                if l_ik != 0:
                    for j in range(k + 1, n):
                        a[b, i, j] -= l_ik * a[b, k, j]


@njit(cache=True, error_model="numpy")
def lu_solve_kernel(lu, piv, x):  # pragma: no cover - compiled by Numba
    """Overwrite each ``x[b]`` (n, k) with ``A^-1 x[b]``, given ``lu, piv`` of ``A``."""
    nb, n, m = x.shape[0], x.shape[1], x.shape[2]
    for b in range(nb):
        for k in range(n):                           # apply the row swaps: P B
            p = piv[b, k]
            if p != k:
                for j in range(m):
                    tmp = x[b, k, j]
                    x[b, k, j] = x[b, p, j]
                    x[b, p, j] = tmp
        for j in range(m):
            for i in range(n):                       # L y = P b (unit diagonal)
                s = x[b, i, j]
                for t in range(i):
                    s -= lu[b, i, t] * x[b, t, j]
                x[b, i, j] = s
            for i in range(n - 1, -1, -1):           # U x = y
                s = x[b, i, j]
                for t in range(i + 1, n):
                    s -= lu[b, i, t] * x[b, t, j]
                x[b, i, j] = s / lu[b, i, i]


def lu_factor(a: np.ndarray) -> tuple:
    """``(lu, piv, info)`` for a stack ``a`` (batch, n, n); ``a`` is not modified."""
    lu = np.array(a, copy=True, order="C")
    piv = np.empty(a.shape[:2], np.int64)
    info = np.empty(a.shape[0], np.int64)
    if a.shape[1]:
        lu_factor_kernel(lu, piv, info)
    else:
        info[:] = 0
    return lu, piv, info


def lu_solve(lu: np.ndarray, piv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A^-1 B`` for each matrix of the stacks, from ``lu_factor(A)``; ``b`` is (batch, n, k)."""
    x = np.array(b, copy=True, order="C")
    if x.size:
        lu_solve_kernel(lu, piv, x)
    return x


def solve(a: np.ndarray, b: np.ndarray) -> tuple:
    """``(A^-1 B, info)`` for each pair of the stacks: LU factorization, then two substitutions.

    ``info[b]`` is non-zero where ``A`` is singular (that result is not finite).
    """
    lu, piv, info = lu_factor(a)
    return lu_solve(lu, piv, b), info


def lu_permutation(piv: np.ndarray) -> np.ndarray:
    """The row order ``perm`` with ``(P A)[i] = A[perm[i]]``, from LAPACK-style swaps ``piv``.

    ``piv[b, k] = p`` means "row k was swapped with row p" at step k; replaying
    the swaps on ``0, 1, ..., n-1`` gives the order of the rows in ``L U``.
    ``piv`` and the result are stacks of columns, (batch, n, 1).
    """
    piv = piv[:, :, 0]
    nb, n = piv.shape
    perm = np.tile(np.arange(n, dtype=np.int64), (nb, 1))
    for k in range(n):
        p = piv[:, k]
        rows = np.arange(nb)
        old = perm[rows, k].copy()
        perm[rows, k] = perm[rows, p]
        perm[rows, p] = old
    return perm[:, :, None]


# ---------------------------------------------------------------------------
# Cholesky and triangular solves
# ---------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def cholesky_kernel(a, out, info):  # pragma: no cover - compiled by Numba
    """``out[b]`` = lower ``L`` with ``L L^T = a[b]``, reading only the lower triangle of ``a``.

    ``info[b]`` is 0, or the order ``k`` of the first leading minor that is
    not positive-definite (then ``out[b]`` is incomplete).
    """
    nb, n = a.shape[0], a.shape[1]
    for b in range(nb):
        info[b] = 0
        for i in range(n):
            for j in range(i + 1):
                s = a[b, i, j]
                for t in range(j):
                    s -= out[b, i, t] * out[b, j, t]
                if i == j:
                    if not s > 0:                    # also catches NaN
                        info[b] = i + 1
                        break
                    out[b, i, i] = np.sqrt(s)
                else:
                    out[b, i, j] = s / out[b, j, j]
            if info[b] != 0:
                break


@njit(cache=True, error_model="numpy")
def triangular_solve_kernel(a, x, upper, unit):  # pragma: no cover - compiled by Numba
    """Overwrite each ``x[b]`` (n, k) with ``T^-1 x[b]``, ``T`` the upper/lower triangle of ``a[b]``."""
    nb, n, m = x.shape[0], x.shape[1], x.shape[2]
    for b in range(nb):
        for j in range(m):
            if upper:                                # back substitution
                for i in range(n - 1, -1, -1):
                    s = x[b, i, j]
                    for t in range(i + 1, n):
                        s -= a[b, i, t] * x[b, t, j]
                    x[b, i, j] = s if unit else s / a[b, i, i]
            else:                                    # forward substitution
                for i in range(n):
                    s = x[b, i, j]
                    for t in range(i):
                        s -= a[b, i, t] * x[b, t, j]
                    x[b, i, j] = s if unit else s / a[b, i, i]


def cholesky(a: np.ndarray) -> tuple:
    """``(L, info)``: the lower Cholesky factor of each matrix (zeros above the diagonal)."""
    out = np.zeros_like(a, order="C")
    info = np.zeros(a.shape[0], np.int64)
    if a.shape[1]:
        cholesky_kernel(np.ascontiguousarray(a), out, info)
    return out, info


def solve_triangular(a: np.ndarray, b: np.ndarray, upper: bool, unitriangular: bool) -> np.ndarray:
    """``T^-1 B`` for each pair of the stacks, ``T`` the upper or lower triangle of ``a``."""
    x = np.array(b, copy=True, order="C")
    if x.size:
        triangular_solve_kernel(np.ascontiguousarray(a), x, bool(upper), bool(unitriangular))
    return x


# ---------------------------------------------------------------------------
# Iterative factorizations: numpy.linalg (LAPACK), see the module docstring
# ---------------------------------------------------------------------------
def qr(a: np.ndarray, mode: str) -> tuple:
    """``(Q, R)`` of each matrix; ``mode`` is ``'reduced'``, ``'complete'`` or ``'r'``.

    NumPy's Householder QR (LAPACK ``geqrf``/``orgqr``), like PyTorch's.
    """
    if a.size == 0:
        m, n = a.shape[1:]
        k = min(m, n)
        qcols = m if mode == "complete" else k
        q = np.zeros((a.shape[0], m, qcols), a.dtype)
        q[:, range(min(m, qcols)), range(min(m, qcols))] = 1
        return q, np.zeros((a.shape[0], qcols if mode == "complete" else k, n), a.dtype)
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.empty((0,), a.dtype), np.ascontiguousarray(r, dtype=a.dtype)
    q, r = np.linalg.qr(a, mode=mode)
    return np.ascontiguousarray(q, dtype=a.dtype), np.ascontiguousarray(r, dtype=a.dtype)


def svd(a: np.ndarray, full_matrices: bool, compute_uv: bool = True) -> tuple:
    """``(U, S, Vh)`` of each matrix (NumPy's LAPACK ``gesdd``, PyTorch's default driver on CPU)."""
    m, n = a.shape[1:]
    k = min(m, n)
    if a.size == 0:
        ucols, vrows = (m, n) if full_matrices else (k, k)
        u = np.zeros((a.shape[0], m, ucols), a.dtype)
        v = np.zeros((a.shape[0], vrows, n), a.dtype)
        u[:, range(min(m, ucols)), range(min(m, ucols))] = 1
        v[:, range(min(vrows, n)), range(min(vrows, n))] = 1
        return u, np.zeros((a.shape[0], k), a.dtype), v
    if not compute_uv:
        s = np.linalg.svd(a, compute_uv=False)
        return None, np.ascontiguousarray(s, dtype=a.dtype), None
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return (np.ascontiguousarray(u, dtype=a.dtype), np.ascontiguousarray(s, dtype=a.dtype),
            np.ascontiguousarray(vh, dtype=a.dtype))


def eigh(a: np.ndarray, upper: bool) -> tuple:
    """``(eigenvalues ascending, eigenvectors as columns)`` of each symmetric matrix.

    Only the lower (``upper=False``) or upper triangle is read, as in PyTorch.
    """
    if a.size == 0:
        n = a.shape[1]
        return np.zeros((a.shape[0], n), a.dtype), np.zeros_like(a)
    w, v = np.linalg.eigh(a, UPLO="U" if upper else "L")
    return np.ascontiguousarray(w, dtype=a.dtype), np.ascontiguousarray(v, dtype=a.dtype)
