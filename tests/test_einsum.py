"""einsum against NumPy, and its gradients."""

import numpy as np
import pytest

import minitorch as torch

pytestmark = pytest.mark.ops

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 2)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
]


@pytest.mark.parametrize("equation,shapes", CASES)
def test_einsum_matches_numpy(default_device, equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    out = torch.einsum(equation, *[torch.tensor(a) for a in arrays])
    np.testing.assert_allclose(out.cpu().numpy(), np.einsum(equation, *arrays), rtol=1e-10,
                               atol=1e-12)


def test_einsum_gradient_matches_matmul(default_device):
    rng = np.random.default_rng(1)
    a = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = torch.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    torch.einsum("ij,jk->ik", a, b).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), np.ones((3, 5)) @ b.detach().cpu().numpy().T)
    np.testing.assert_allclose(b.grad.cpu().numpy(), a.detach().cpu().numpy().T @ np.ones((3, 5)))


def test_einsum_list_operands_and_errors(default_device):
    a = torch.ones(2, 3)
    assert torch.einsum("ij->j", [a]).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError):
        torch.einsum("ijk->i", a)
    with pytest.raises(ValueError):
        torch.einsum("ij,jk->ik", a)
