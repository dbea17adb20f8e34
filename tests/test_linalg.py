"""minitorch.linalg against numpy.linalg: values, batches, gradients (float64 gradchecks), errors."""

import math

import numpy as np
import pytest

import minitorch as torch
from device_checks import gradcheck, gradgradcheck

pytestmark = pytest.mark.ops

RNG = np.random.default_rng(0)


def _t(a, requires_grad=False):
    return torch.tensor(np.asarray(a), requires_grad=requires_grad)


def _well_conditioned(*shape):
    """Random square matrices with a dominant diagonal (safely invertible)."""
    n = shape[-1]
    return RNG.standard_normal(shape) + n * np.eye(n)


def _spd(*shape):
    a = RNG.standard_normal(shape)
    n = shape[-1]
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# ---------------------------------------------------------------------------
# values against NumPy, batched
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 3, 2, 2), (1, 1)])
def test_det_inv_slogdet_match_numpy(default_device, shape):
    a = RNG.standard_normal(shape)
    np.testing.assert_allclose(torch.linalg.det(_t(a)).cpu().numpy(), np.linalg.det(a), rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.inv(_t(a)).cpu().numpy(), np.linalg.inv(a), rtol=1e-8,
                               atol=1e-10)
    sign, logabs = torch.linalg.slogdet(_t(a))
    ns, nl = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign.cpu().numpy(), ns)
    np.testing.assert_allclose(logabs.cpu().numpy(), nl, rtol=1e-10)
    assert torch.det(_t(a)).shape == torch.Size(shape[:-2])


def test_float32_results_are_float32(default_device):
    a = _t(_well_conditioned(3, 3).astype(np.float32))
    for fn in (torch.linalg.det, torch.linalg.inv, torch.linalg.svdvals):
        assert fn(a).dtype is torch.float32
    np.testing.assert_allclose(torch.linalg.inv(a).cpu().numpy(), np.linalg.inv(a.cpu().numpy()), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3,)), ((3, 3), (3, 2)),
                                             ((2, 3, 3), (2, 3)), ((2, 3, 3), (3, 4)),
                                             ((4, 1, 3, 3), (2, 3, 1))])
def test_solve_broadcasts_like_numpy(default_device, a_shape, b_shape):
    a, b = _well_conditioned(*a_shape), RNG.standard_normal(b_shape)
    x = torch.linalg.solve(_t(a), _t(b))
    vector = len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and b_shape == a_shape[:-1])
    expected = (np.linalg.solve(a, b[..., None])[..., 0] if vector
                else np.linalg.solve(a, b))
    np.testing.assert_allclose(x.cpu().numpy(), expected, rtol=1e-8, atol=1e-10)
    # left=False: X A = B
    if not vector and b_shape[-2] == a_shape[-1]:
        xr = torch.linalg.solve(_t(a), _t(np.swapaxes(b, -1, -2)), left=False)
        np.testing.assert_allclose((xr @ _t(a)).cpu().numpy(), np.swapaxes(b, -1, -2) + 0 * xr.cpu().numpy(),
                                   atol=1e-9)


def test_cholesky_and_triangular_solve(default_device):
    a = _spd(2, 4, 4)
    L = torch.linalg.cholesky(_t(a))
    np.testing.assert_allclose(L.cpu().numpy(), np.linalg.cholesky(a), rtol=1e-10, atol=1e-12)
    U = torch.linalg.cholesky(_t(a), upper=True)
    np.testing.assert_allclose(U.cpu().numpy(), np.swapaxes(np.linalg.cholesky(a), -1, -2), atol=1e-12)
    b = RNG.standard_normal((2, 4, 3))
    x = torch.linalg.solve_triangular(L, _t(b), upper=False)
    np.testing.assert_allclose(x.cpu().numpy(), np.linalg.solve(L.cpu().numpy(), b), rtol=1e-9)
    xu = torch.linalg.solve_triangular(U, _t(b), upper=True)
    np.testing.assert_allclose(xu.cpu().numpy(), np.linalg.solve(U.cpu().numpy(), b), rtol=1e-9)
    np.testing.assert_allclose(torch.cholesky_solve(_t(b), L).cpu().numpy(), np.linalg.solve(a, b),
                               rtol=1e-9)
    np.testing.assert_allclose(torch.cholesky_inverse(L[0]).cpu().numpy(), np.linalg.inv(a[0]),
                               rtol=1e-9)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_reconstructs(default_device, shape, mode):
    a = RNG.standard_normal(shape)
    Q, R = torch.linalg.qr(_t(a), mode=mode)
    nq, nr = np.linalg.qr(a, mode=mode)
    assert Q.shape == nq.shape and R.shape == nr.shape
    np.testing.assert_allclose((Q @ R).cpu().numpy(), a, atol=1e-12)
    np.testing.assert_allclose(np.abs(R.cpu().numpy()), np.abs(nr), atol=1e-12)
    assert torch.linalg.qr(_t(a), mode="r").Q.shape == (0,)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_svd_and_svdvals(default_device, shape):
    a = RNG.standard_normal(shape)
    U, S, Vh = torch.linalg.svd(_t(a), full_matrices=False)
    np.testing.assert_allclose(S.cpu().numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose((U * S.unsqueeze(-2) @ Vh).cpu().numpy(), a, atol=1e-12)
    np.testing.assert_allclose(torch.linalg.svdvals(_t(a)).cpu().numpy(), S.cpu().numpy())
    full = torch.linalg.svd(_t(a))
    assert full.U.shape[-1] == shape[-2] and full.Vh.shape[-2] == shape[-1]
    u, s, v = torch.svd(_t(a))
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ v.mT).cpu().numpy(), a, atol=1e-12)


def test_eigh_and_eigvalsh_read_one_triangle(default_device):
    a = RNG.standard_normal((2, 4, 4))
    sym = a + np.swapaxes(a, -1, -2)
    w, v = torch.linalg.eigh(_t(sym))
    np.testing.assert_allclose(w.cpu().numpy(), np.linalg.eigvalsh(sym), rtol=1e-10)
    np.testing.assert_allclose((v @ torch.diag_embed(w) @ v.mT).cpu().numpy(), sym, atol=1e-12)
    # Only the lower triangle is read by default, the upper with UPLO='U'.
    np.testing.assert_allclose(torch.linalg.eigvalsh(_t(np.tril(sym))).cpu().numpy(),
                               np.linalg.eigvalsh(sym), rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.eigvalsh(_t(np.triu(sym)), UPLO="U").cpu().numpy(),
                               np.linalg.eigvalsh(sym), rtol=1e-10)


def test_rank_pinv_lstsq(default_device):
    a = RNG.standard_normal((5, 2)) @ RNG.standard_normal((2, 4))   # rank 2
    assert torch.linalg.matrix_rank(_t(a)).item() == 2
    assert torch.linalg.matrix_rank(_t(a)).dtype is torch.int64
    np.testing.assert_allclose(torch.linalg.pinv(_t(a)).cpu().numpy(), np.linalg.pinv(a), atol=1e-10)
    np.testing.assert_allclose(torch.pinverse(_t(a)).cpu().numpy(), np.linalg.pinv(a), atol=1e-10)
    tall, b = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 2))
    sol = torch.linalg.lstsq(_t(tall), _t(b), driver="gelsd")
    assert torch.linalg.lstsq(_t(tall), _t(b)).residuals.shape == (0,)
    x, res, rank, _ = np.linalg.lstsq(tall, b, rcond=None)
    np.testing.assert_allclose(sol.solution.cpu().numpy(), x, rtol=1e-9)
    np.testing.assert_allclose(sol.residuals.cpu().numpy(), res, rtol=1e-9)
    assert sol.rank.item() == rank


@pytest.mark.parametrize("ord", [None, 1, 2, math.inf, -math.inf, 0, 3, 0.5])
def test_vector_norm(default_device, ord):
    x = RNG.standard_normal((3, 4))
    o = 2 if ord is None else ord
    got = torch.linalg.vector_norm(_t(x), o)
    np.testing.assert_allclose(got.cpu().numpy(), np.linalg.norm(x.ravel(), o), rtol=1e-10)
    got = torch.linalg.vector_norm(_t(x), o, dim=1, keepdim=True)
    np.testing.assert_allclose(got.cpu().numpy(), np.linalg.norm(x, o, axis=1, keepdims=True),
                               rtol=1e-10)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm(default_device, ord):
    x = RNG.standard_normal((2, 3, 4))
    got = torch.linalg.matrix_norm(_t(x), ord)
    np.testing.assert_allclose(got.cpu().numpy(), np.linalg.norm(x, ord, axis=(-2, -1)), rtol=1e-10)
    got = torch.linalg.norm(_t(x), ord, dim=(0, 2), keepdim=True)
    np.testing.assert_allclose(got.cpu().numpy(), np.linalg.norm(x, ord, axis=(0, 2), keepdims=True),
                               rtol=1e-10)


def test_norm_dispatch_cross_multi_dot_matrix_power(default_device):
    x = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(torch.linalg.norm(_t(x)).cpu().numpy(), np.linalg.norm(x))
    np.testing.assert_allclose(torch.linalg.norm(_t(x), 2).cpu().numpy(), np.linalg.norm(x, 2))
    np.testing.assert_allclose(torch.linalg.norm(_t(x[0]), 1).cpu().numpy(), np.linalg.norm(x[0], 1))
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((1, 3))
    np.testing.assert_allclose(torch.linalg.cross(_t(a), _t(b)).cpu().numpy(), np.cross(a, b))
    ms = [RNG.standard_normal(s) for s in [(3,), (3, 4), (4, 2), (2,)]]
    np.testing.assert_allclose(torch.linalg.multi_dot([_t(m) for m in ms]).cpu().numpy(),
                               np.linalg.multi_dot(ms))
    for n in (0, 1, 3, -2):
        np.testing.assert_allclose(torch.linalg.matrix_power(_t(x), n).cpu().numpy(),
                                   np.linalg.matrix_power(x, n), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(torch.linalg.vander(_t(np.array([1.0, 2, 3]))).cpu().numpy(),
                               np.vander([1.0, 2, 3], increasing=True))
    for p in (None, "fro", 1, -2):
        np.testing.assert_allclose(torch.linalg.cond(_t(x), p).cpu().numpy(), np.linalg.cond(x, p))
    t4 = RNG.standard_normal((4, 6, 8, 3))
    np.testing.assert_allclose(torch.linalg.tensorinv(_t(t4), 2).cpu().numpy(),
                               np.linalg.tensorinv(t4, 2), atol=1e-9)
    a5, b2 = RNG.standard_normal((6, 4, 2, 3, 4)), RNG.standard_normal((6, 4))
    np.testing.assert_allclose(torch.linalg.tensorsolve(_t(a5), _t(b2)).cpu().numpy(),
                               np.linalg.tensorsolve(a5, b2), atol=1e-9)


# ---------------------------------------------------------------------------
# gradients (float64 finite differences), including second order
# ---------------------------------------------------------------------------
def _req(a):
    return _t(a, requires_grad=True)


def test_gradcheck_det_slogdet_inv_solve(default_device):
    a = _req(_well_conditioned(2, 3, 3))
    b = _req(RNG.standard_normal((2, 3, 2)))
    assert gradcheck(torch.linalg.det, (a,))
    assert gradcheck(lambda x: torch.linalg.slogdet(x).logabsdet, (a,))
    assert gradcheck(torch.linalg.inv, (a,))
    assert gradcheck(torch.linalg.solve, (a, b))
    assert gradcheck(lambda x, y: torch.linalg.solve(x, y, left=False), (a, b.mT.detach()
                                                                         .requires_grad_()))
    assert gradgradcheck(torch.linalg.det, (a,))
    assert gradgradcheck(torch.linalg.inv, (a[0].detach().requires_grad_(),))


def test_gradcheck_cholesky_and_solve_triangular(default_device):
    a = _req(_spd(3, 3))
    assert gradcheck(lambda x: torch.linalg.cholesky(x @ x.mT), (a,))
    assert gradcheck(lambda x: torch.linalg.cholesky(x @ x.mT, upper=True), (a,))
    t = _req(_well_conditioned(3, 3))
    b = _req(RNG.standard_normal((3, 2)))
    assert gradcheck(lambda x, y: torch.linalg.solve_triangular(x, y, upper=True), (t, b))
    assert gradcheck(lambda x, y: torch.linalg.solve_triangular(x, y, upper=False,
                                                                unitriangular=True), (t, b))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5)])
def test_gradcheck_qr(default_device, shape):
    a = _req(RNG.standard_normal(shape))
    assert gradcheck(lambda x: tuple(torch.linalg.qr(x)), (a,))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5)])
def test_gradcheck_svd(default_device, shape):
    a = _req(RNG.standard_normal(shape))

    def invariant(x):
        # U @ Vh and S do not depend on the choice of signs of the singular vectors.
        U, S, Vh = torch.linalg.svd(x, full_matrices=False)
        return S, U @ Vh
    assert gradcheck(invariant, (a,))
    assert gradcheck(torch.linalg.svdvals, (a,))


def test_gradcheck_eigh_pinv_norms(default_device):
    a = _req(RNG.standard_normal((3, 3)))

    def eigh_sym(x):
        w, v = torch.linalg.eigh(x + x.mT)
        return w, v * v                 # invariant to the eigenvectors' signs
    assert gradcheck(eigh_sym, (a,))
    assert gradcheck(torch.linalg.pinv, (_req(RNG.standard_normal((4, 3))),))
    assert gradcheck(torch.linalg.pinv, (_req(RNG.standard_normal((2, 3))),))
    x = _req(RNG.standard_normal((3, 4)))
    for ord in (1, 2, 3, math.inf):
        assert gradcheck(lambda t: torch.linalg.vector_norm(t, ord, dim=1), (x,))
    for ord in ("fro", "nuc", 2, 1, math.inf):
        assert gradcheck(lambda t: torch.linalg.matrix_norm(t, ord), (x,))


def test_vector_norm_gradient_is_zero_at_zero(default_device):
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    torch.linalg.vector_norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
def test_errors_like_pytorch(default_device):
    with pytest.raises(RuntimeError, match="2 by 3"):
        torch.linalg.inv(torch.zeros(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.linalg.det(torch.zeros(3))
    with pytest.raises(RuntimeError, match="Long"):
        torch.linalg.det(torch.zeros(2, 2, dtype=torch.int64))
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)
    with pytest.raises(torch.linalg.LinAlgError, match="singular"):
        torch.linalg.inv(torch.ones(3, 3))
    with pytest.raises(torch.linalg.LinAlgError, match="Batch element 1"):
        torch.linalg.solve(torch.stack([torch.eye(2), torch.zeros(2, 2)]), torch.ones(2, 2))
    with pytest.raises(torch.linalg.LinAlgError, match="positive-definite"):
        torch.linalg.cholesky(-torch.eye(3))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        torch.linalg.solve(torch.eye(3), torch.ones(4))
    inverse, info = torch.linalg.inv_ex(torch.ones(2, 2))
    assert info.item() != 0
    L, info = torch.linalg.cholesky_ex(-torch.eye(2))
    assert info.item() == 1


def test_matches_torch_where_installed(default_device):
    real = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 3, 3))
    ours, theirs = _req(a), real.tensor(a, requires_grad=True)
    torch.linalg.det(ours).sum().backward()
    real.linalg.det(theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.cpu().numpy(), rtol=1e-8)
    sym = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)
    ours, theirs = _req(sym), real.tensor(sym, requires_grad=True)
    torch.linalg.cholesky(ours).sum().backward()
    real.linalg.cholesky(theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.cpu().numpy(), rtol=1e-8)
    ours, theirs = _req(sym), real.tensor(sym, requires_grad=True)
    torch.linalg.eigh(ours).eigenvalues.sum().backward()
    real.linalg.eigh(theirs).eigenvalues.sum().backward()
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.cpu().numpy(), atol=1e-10)
    assert torch.linalg.det(ours).grad_fn.name() == real.linalg.det(theirs).grad_fn.name()


def test_lu_family(default_device):
    a = RNG.standard_normal((2, 4, 4))
    LU, pivots = torch.linalg.lu_factor(_t(a))
    assert pivots.dtype is torch.int32 and pivots.min().item() >= 1
    P, L, U = torch.linalg.lu(_t(a))
    np.testing.assert_allclose((P @ L @ U).cpu().numpy(), a, atol=1e-12)
    np.testing.assert_allclose(torch.tril(L, -1).cpu().numpy() + np.eye(4), L.cpu().numpy())
    b = RNG.standard_normal((2, 4, 3))
    np.testing.assert_allclose(torch.linalg.lu_solve(LU, pivots, _t(b)).cpu().numpy(),
                               np.linalg.solve(a, b), rtol=1e-9)
    np.testing.assert_allclose(torch.linalg.lu_solve(LU, pivots, _t(b), adjoint=True).cpu().numpy(),
                               np.linalg.solve(np.swapaxes(a, -1, -2), b), rtol=1e-9)
    A = _req(a)
    assert gradcheck(lambda x: torch.linalg.lu_factor(x).LU, (A,))
    assert gradcheck(lambda x, y: torch.linalg.lu_solve(*torch.linalg.lu_factor(x), y),
                     (A, _req(b)))


def test_lu_matches_torch_where_installed(default_device):
    real = pytest.importorskip("torch")
    a = RNG.standard_normal((3, 3))
    LU, piv = torch.linalg.lu_factor(_t(a))
    rLU, rpiv = real.linalg.lu_factor(real.tensor(a))
    np.testing.assert_allclose(LU.cpu().numpy(), rLU.cpu().numpy(), atol=1e-12)
    assert piv.tolist() == rpiv.tolist()
    P, _, _ = torch.linalg.lu(_t(a))
    np.testing.assert_allclose(P.cpu().numpy(), real.linalg.lu(real.tensor(a)).P.cpu().numpy())
