"""DLPack: minitorch tensors shared with NumPy and PyTorch without copies, both ways."""

import numpy as np
import pytest

import minitorch as torch

pytestmark = pytest.mark.tensor


@pytest.mark.cpu_only("DLPack with NumPy and PyTorch's CPU build shares CPU memory")
def test_numpy_imports_a_tensor_and_shares_memory():
    t = torch.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype == np.float32
    a[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    assert t.__dlpack_device__() == (1, 0)


def test_from_dlpack_of_numpy_shares_memory_and_keeps_strides(default_device):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    t = torch.from_dlpack(a)
    assert t.dtype is torch.int32 and t.shape == (3, 2) and t.stride() == (4, 2)
    t[0, 1] = -5
    assert a[0, 1] == -5


@pytest.mark.cpu_only("DLPack with NumPy and PyTorch's CPU build shares CPU memory")
def test_views_and_dtypes_round_trip():
    for t in (torch.arange(6.0).reshape(2, 3).t(), torch.tensor([True, False]),
              torch.arange(4, dtype=torch.int64), torch.ones(2, dtype=torch.float16)):
        back = torch.from_dlpack(t)
        assert back.dtype is t.dtype and back.shape == t.shape and back.stride() == t.stride()
        assert back.data_ptr() == t.data_ptr()


def test_requires_grad_is_refused_like_pytorch(default_device):
    with pytest.raises(RuntimeError, match="require gradient"):
        torch.ones(2, requires_grad=True).__dlpack__()


@pytest.mark.cpu_only("DLPack with NumPy and PyTorch's CPU build shares CPU memory")
def test_pytorch_both_ways():
    real = pytest.importorskip("torch")
    t = torch.arange(6.0).reshape(2, 3)
    theirs = real.from_dlpack(t)
    theirs[1, 1] = 7.0
    assert t[1, 1].item() == 7.0
    ours = torch.from_dlpack(theirs)
    ours[0, 2] = -1.0
    assert theirs[0, 2].item() == -1.0
    capsule = real.utils.dlpack.to_dlpack(real.ones(3))
    assert torch.from_dlpack(capsule).tolist() == [1.0, 1.0, 1.0]
    assert real.from_dlpack(torch.to_dlpack(t)).shape == (2, 3)
