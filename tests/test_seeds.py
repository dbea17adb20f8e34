"""The behaviours shown in the seed documents (shared/seeds), as tests."""

import numpy as np
import pytest

import minitorch as torch

pytestmark = pytest.mark.seeds


def test_transpose_is_not_contiguous_and_view_fails():
    a = torch.arange(1, 13).view(4, 3)
    a_t = a.t()
    assert a.is_contiguous() and not a_t.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        a_t.view(-1)
    assert a_t.contiguous().view(-1).tolist() == [1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12]


def test_strides_of_transpose_and_contiguous():
    a = torch.arange(1, 13).view(4, 3)
    assert a.stride() == (3, 1)
    assert a.t().stride() == (1, 3)
    assert a.t().contiguous().stride() == (4, 1)


def test_view_shares_storage():
    a = torch.arange(0, 6)
    b = a.view(2, 3)
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    a[1] = 10
    assert b.tolist() == [[0, 10, 2], [3, 4, 5]]


def test_slicing_shares_storage_and_offsets():
    a = torch.arange(0, 6).float()
    b = a.view(2, 3)
    c = a[2:]
    assert c.storage_offset() == 2
    assert c.data_ptr() == a[2].data_ptr()
    e = b[::2, ::2]
    assert e.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    assert b.stride() == (3, 1) and e.stride() == (6, 2)
    assert not e.is_contiguous()
    f = e.contiguous()
    assert f.untyped_storage().data_ptr() != e.untyped_storage().data_ptr()
    g = f.contiguous()
    assert g.untyped_storage().data_ptr() == f.untyped_storage().data_ptr()


def test_tensor_from_storage_shares_it():
    a = torch.arange(0, 6).float()
    c = a[2:]
    d = torch.Tensor(c.storage())
    d[0] = 20
    assert a[0].item() == 20


def test_legacy_constructor_and_type_strings():
    assert repr(torch.Tensor([1, 2])) == "tensor([1., 2.])"
    assert repr(torch.tensor([1, 2])) == "tensor([1, 2])"
    assert torch.tensor([1, 2]).type() == "torch.LongTensor"
    assert torch.tensor([1., 2.]).type() == "torch.FloatTensor"
    assert torch.tensor(np.zeros(2, dtype=np.float64)).type() == "torch.DoubleTensor"


def test_leaf_rules():
    x = torch.randn(3)
    assert x.is_leaf and not x.requires_grad
    y = torch.randn(3, requires_grad=True)
    assert y.is_leaf and y.requires_grad
    z = x + y
    assert not z.is_leaf and z.requires_grad
    w = z.detach()
    assert w.is_leaf and not w.requires_grad
    assert w.untyped_storage().data_ptr() == z.untyped_storage().data_ptr()


def test_no_grad_blocks_tracking():
    x = torch.ones(5, requires_grad=True)
    c = x * 2
    with torch.no_grad():
        d = x * 2
        assert not torch.is_grad_enabled()
        b = torch.ones(5, requires_grad=True)
    assert c.requires_grad and not d.requires_grad and b.requires_grad
    assert torch.is_grad_enabled()


def test_grad_fn_and_backward():
    x = torch.randn(3, requires_grad=True)
    z = x * 2
    assert x.grad_fn is None
    assert z.grad_fn.name() == "MulBackward0"
    assert x.grad is None
    x.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_multiply_add_custom_function():
    from minitorch.autograd import Function

    class MultiplyAdd(Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            return grad_output * x, grad_output * w, grad_output

    x = torch.ones(1)
    w = torch.rand(1, requires_grad=True)
    b = torch.rand(1, requires_grad=True)
    z = MultiplyAdd.apply(w, x, b)
    z.backward()
    assert np.allclose(w.grad.numpy(), x.numpy())
    assert b.grad.tolist() == [1.0]
    assert z.grad_fn.name() == "MultiplyAddBackward"


def test_hooks_and_autograd_grad_on_intermediate():
    x = torch.ones(3, requires_grad=True)
    w = torch.rand(3, requires_grad=True)
    y = x * w
    z = y.sum()
    (dz_dy,) = torch.autograd.grad(z, y)
    assert dz_dy.tolist() == [1.0, 1.0, 1.0]
    seen = []
    x2 = torch.ones(3, requires_grad=True)
    y2 = x2 * w
    y2.register_hook(lambda g: seen.append(g.tolist()))
    y2.sum().backward()
    assert seen == [[1.0, 1.0, 1.0]]


def test_numpy_shares_memory_both_ways():
    a = np.array([1, 2, 3])
    t = torch.from_numpy(a)
    a[0] = 10
    assert t[0].item() == 10
    t[1] = 20
    assert a[1] == 20
    n = t.numpy()
    n[2] = 30
    assert t[2].item() == 30
    c = torch.tensor(a)
    a[0] = 99
    assert c[0].item() == 10


def test_none_indexing_and_squeeze():
    a = torch.zeros(2, 3)
    assert a[None].shape == (1, 2, 3)
    assert a.unsqueeze(0).shape == (1, 2, 3)
    assert a[None].squeeze(0).shape == (2, 3)


def test_reshape_copies_only_when_needed():
    x = torch.tensor([[1, 2, 3], [4, 5, 6]])
    assert x.reshape(3, 2).data_ptr() == x.data_ptr()
    a = x.t()
    # Same shape: PyTorch's stride rule allows a view even though a is transposed.
    assert a.view(3, 2).data_ptr() == a.data_ptr()
    c = a.reshape(6)           # flattening a transpose needs a copy
    assert c.data_ptr() != a.data_ptr()
    assert c.tolist() == [1, 4, 2, 5, 3, 6]
    with pytest.raises(RuntimeError):
        a.view(6)


def test_resize_grows_and_keeps_data():
    a = torch.arange(6)
    a.resize_(2, 2)
    assert a.tolist() == [[0, 1], [2, 3]]
    a.resize_(3, 3)
    assert a.shape == (3, 3)
    assert a.view(-1)[:6].tolist() == [0, 1, 2, 3, 4, 5]


def test_model_grad_defaults_printed():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2., 3.], requires_grad=True)"
    assert repr(x + 2) == "tensor([3., 4., 5.], grad_fn=<AddBackward0>)"
