"""The autograd engine: graph, backward, hooks, grad modes, in-place rules, custom Functions.

Expected values are worked out by hand (or are PyTorch's documented
behaviour), so these tests need no PyTorch.
"""

import gc
import warnings
import weakref

import numpy as np
import pytest

import minitorch as torch
from minitorch.autograd import Function, once_differentiable

pytestmark = pytest.mark.autograd


def leaf(values, dtype=None):
    return torch.tensor(values, dtype=dtype or torch.float64, requires_grad=True)


# ---------------------------------------------------------------------------
# accumulation, retain_graph, gradient argument
# ---------------------------------------------------------------------------
def test_backward_accumulates_into_leaf_grad(default_device):
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    (x * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_grad_is_a_leaf_without_history_and_not_aliasing_the_gradient(default_device):
    x = leaf([1.0, 2.0])
    y = x * 1
    y.backward(torch.ones(2, dtype=torch.float64))
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    assert x.grad.dtype == torch.float64 and x.grad.shape == x.shape


def test_same_leaf_used_twice_sums_both_paths(default_device):
    x = leaf([3.0])
    y = x * x + x          # dy/dx = 2x + 1
    y.backward()
    assert x.grad.tolist() == [7.0]


def test_diamond_graph_gradient(default_device):
    x = leaf([2.0])
    a = x * 3
    b = x.exp()
    c = a * b             # d/dx (3x e^x) = 3e^x + 3x e^x
    c.backward()
    np.testing.assert_allclose(x.grad.item(), 3 * np.exp(2.0) * 3)


def test_second_backward_without_retain_graph_raises(default_device):
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward(default_device):
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_saved_tensors_are_freed_after_backward(default_device):
    x = leaf([1.0, 2.0])
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.grad_fn.saved_tensors  # noqa: B018


def test_non_scalar_backward_needs_gradient(default_device):
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * x).backward()


def test_non_scalar_backward_with_gradient(default_device):
    x = leaf([1.0, 2.0])
    (x * x).backward(torch.tensor([1.0, 0.5], dtype=torch.float64))
    assert x.grad.tolist() == [2.0, 2.0]


def test_gradient_of_wrong_shape_raises(default_device):
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * x).backward(torch.ones(3, dtype=torch.float64))


def test_backward_on_tensor_without_grad_raises(default_device):
    with pytest.raises(RuntimeError, match="does not require grad"):
        (torch.ones(2) * 2).sum().backward()


def test_backward_inputs_argument_limits_accumulation(default_device):
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    assert w.grad.tolist() == [1.0, 2.0]


def test_torch_autograd_backward_function_with_several_roots(default_device):
    x = leaf([1.0, 2.0])
    a, b = x * 2, x * x
    torch.autograd.backward([a.sum(), b.sum()])
    assert x.grad.tolist() == [4.0, 6.0]


# ---------------------------------------------------------------------------
# create_graph and higher-order derivatives
# ---------------------------------------------------------------------------
def test_autograd_grad_create_graph_third_derivative(default_device):
    x = leaf([1.0, 2.0])
    y = (x ** 3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.requires_grad
    (g2,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    assert g2.tolist() == [6.0, 12.0]
    (g3,) = torch.autograd.grad(g2.sum(), x)
    assert g3.tolist() == [6.0, 6.0] and not g3.requires_grad


def test_backward_create_graph_makes_grad_differentiable(default_device):
    x = leaf([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.grad_fn is not None
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_double_backward_through_sin_and_tanh(default_device):
    x = leaf([0.3, -1.2])
    (g,) = torch.autograd.grad(x.sin().sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.cpu().numpy(), -np.sin([0.3, -1.2]))
    (g,) = torch.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    t = np.tanh([0.3, -1.2])
    np.testing.assert_allclose(h.cpu().numpy(), -2 * t * (1 - t * t))


def test_hessian_vector_product_of_matmul_quadratic(default_device):
    a = torch.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=torch.float64)
    x = leaf([1.0, -1.0])
    f = x @ (a @ x)                       # x^T A x, gradient (A + A^T) x, Hessian 2A
    (g,) = torch.autograd.grad(f, x, create_graph=True)
    v = torch.tensor([1.0, 2.0], dtype=torch.float64)
    (hv,) = torch.autograd.grad(g @ v, x)
    np.testing.assert_allclose(hv.cpu().numpy(), 2 * a.cpu().numpy() @ v.cpu().numpy())


# ---------------------------------------------------------------------------
# autograd.grad
# ---------------------------------------------------------------------------
def test_autograd_grad_with_grad_outputs_leaves_grad_untouched(default_device):
    x = leaf([1.0, 2.0])
    y = x * x
    (g,) = torch.autograd.grad(y, x, grad_outputs=torch.tensor([1.0, 3.0], dtype=torch.float64))
    assert g.tolist() == [2.0, 12.0]
    assert x.grad is None


def test_autograd_grad_allow_unused(default_device):
    x, z = leaf([1.0, 2.0]), leaf([1.0, 2.0])
    y = (x * 2).sum()
    gx, gz = torch.autograd.grad(y, [x, z], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gz is None


def test_autograd_grad_unused_input_raises_naming_its_index(default_device):
    x, z = leaf([1.0, 2.0]), leaf([1.0, 2.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="index 1 appears to not have been used"):
        torch.autograd.grad(y, [x, z])


def test_autograd_grad_materialize_grads(default_device):
    x, z = leaf([1.0, 2.0]), leaf([1.0, 2.0])
    _, gz = torch.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0, 0.0]


def test_autograd_grad_of_non_leaf_input(default_device):
    x = leaf([1.0, 2.0])
    y = x * 3
    z = (y * y).sum()
    (gy,) = torch.autograd.grad(z, y)
    assert gy.tolist() == [6.0, 12.0]


def test_autograd_grad_input_not_requiring_grad_raises(default_device):
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad((x * 2).sum(), torch.ones(1))


# ---------------------------------------------------------------------------
# hooks and retain_grad
# ---------------------------------------------------------------------------
def test_leaf_hook_modifies_grad_and_can_be_removed(default_device):
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_leaf_hook_sees_and_changes_the_flowing_gradient(default_device):
    x = leaf([1.0, 2.0])
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.register_hook(lambda g: g + 1)       # runs after the first, changes what flows on
    (y * y).sum().backward()
    assert seen == [[4.0, 8.0]]
    assert x.grad.tolist() == [10.0, 18.0]


def test_hook_returning_none_keeps_gradient(default_device):
    x = leaf([1.0])
    calls = []
    x.register_hook(lambda g: calls.append(1))
    (x * 5).backward()
    assert calls == [1] and x.grad.tolist() == [5.0]


def test_hook_on_tensor_without_grad_raises(default_device):
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.ones(2).register_hook(lambda g: g)


def test_retain_grad_on_non_leaf(default_device):
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    z = y * y
    z.sum().backward()
    assert y.grad.tolist() == [4.0, 8.0]
    assert y.retains_grad and not x.retains_grad and not z.retains_grad


def test_non_leaf_grad_access_warns_and_is_none(default_device):
    y = leaf([1.0]) * 2
    with pytest.warns(UserWarning, match="retain_grad"):
        assert y.grad is None


# ---------------------------------------------------------------------------
# grad modes as context managers and decorators
# ---------------------------------------------------------------------------
def test_no_grad_and_enable_grad_contexts(default_device):
    x = leaf([1.0, 2.0])
    with torch.no_grad():
        y = x * 2
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            z = x * 2
            assert torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert z.requires_grad and z.grad_fn is not None


def test_grad_mode_is_restored_after_exception(default_device):
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    assert torch.is_grad_enabled()


def test_no_grad_and_enable_grad_as_decorators(default_device):
    x = leaf([1.0])

    @torch.no_grad()
    def f(a):
        return a * 2

    @torch.no_grad
    def g(a):
        return a * 2

    @torch.enable_grad()
    def h(a):
        return a * 2

    assert not f(x).requires_grad and not g(x).requires_grad
    assert f.__name__ == "f"
    with torch.no_grad():
        assert h(x).requires_grad


def test_set_grad_enabled_function_context_and_decorator(default_device):
    x = leaf([1.0])
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)

    @torch.set_grad_enabled(False)
    def f(a):
        return a * 2

    assert torch.is_grad_enabled()          # decorating does not switch the mode
    assert not f(x).requires_grad
    assert (x * 2).requires_grad


def test_inference_mode_context_and_decorator(default_device):
    x = leaf([1.0])
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert not torch.is_inference_mode_enabled()

    @torch.inference_mode()
    def f(a):
        return a * 2

    @torch.inference_mode
    def g(a):
        return a * 2

    assert not f(x).requires_grad and not g(x).requires_grad
    with torch.inference_mode(False):
        assert (x * 2).requires_grad


def test_factories_inside_no_grad_still_honour_requires_grad(default_device):
    with torch.no_grad():
        a = torch.ones(2, requires_grad=True)
        b = a * 2
    assert a.requires_grad and a.is_leaf and not b.requires_grad


# ---------------------------------------------------------------------------
# requires_grad, detach
# ---------------------------------------------------------------------------
def test_requires_grad_propagation_and_leaf_rules(default_device):
    x = torch.tensor([1.0, 2.0])
    assert x.is_leaf and not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    z = y.detach()
    assert z.is_leaf and not z.requires_grad


def test_requires_grad_on_integer_tensor_raises(default_device):
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)


def test_requires_grad_false_on_non_leaf_raises(default_device):
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    y.requires_grad_(True)     # allowed: already true


def test_detach_shares_storage_and_version_counter(default_device):
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert d.data_ptr() == y.data_ptr()
    d[0] = 10.0
    assert y.tolist() == [10.0, 4.0]
    assert d._version == y._version == 1


def test_detach_in_place(default_device):
    x = leaf([1.0, 2.0])
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_detach_in_place_on_a_view_raises(default_device):
    y = (leaf([1.0, 2.0]) * 2)[:1]
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        y.detach_()


# ---------------------------------------------------------------------------
# version counter and in-place rules
# ---------------------------------------------------------------------------
def test_version_counter_shared_by_views(default_device):
    x = torch.zeros(3)
    v = x[1:]
    assert x._version == 0
    v.add_(1)
    x[0] = 1
    assert x._version == v._version == 2


def test_modifying_a_saved_tensor_in_place_makes_backward_raise(default_device):
    x = leaf([1.0, 2.0])
    y = x * 2
    z = y * y                                # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*AddBackward0.*"
                                           "version 1; expected version 0"):
        z.sum().backward()


def test_modifying_an_output_saved_by_exp_raises(default_device):
    x = leaf([1.0, 2.0])
    y = x.exp()                              # ExpBackward0 saves its result
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_on_tensor_not_saved_is_fine(default_device):
    x = leaf([1.0, 2.0])
    y = x * 2
    z = y + y                                # add saves nothing
    y.add_(1)
    z.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


@pytest.mark.parametrize("op, args, expected", [
    ("exp_", (), lambda v: np.exp(v)),
    ("log_", (), lambda v: 1 / v),
    ("sigmoid_", (), lambda v: np.exp(-v) / (1 + np.exp(-v)) ** 2),
    ("sin_", (), lambda v: np.cos(v)),
    ("pow_", (3,), lambda v: 3 * v ** 2),
    ("mul_", (2.0,), lambda v: 2 + 0 * v),
    ("clamp_", (0.5, 0.8), lambda v: ((v >= 0.5) & (v <= 0.8)).astype(float)),
    ("floor_", (), lambda v: 0 * v),
])
def test_in_place_op_on_non_leaf_has_the_right_gradient(default_device, op, args, expected):
    v = np.array([0.3, 0.6, 0.9])
    x = leaf(v.tolist())
    y = x * 1
    getattr(y, op)(*args)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected(v), rtol=1e-10)


def test_in_place_op_on_leaf_requiring_grad_raises(default_device):
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0] = 5.0


def test_in_place_on_leaf_is_allowed_under_no_grad(default_device):
    x = leaf([1.0, 2.0])
    with torch.no_grad():
        x.add_(1)
        x[0] = 5.0
    assert x.tolist() == [5.0, 3.0] and x.is_leaf and x.requires_grad


def test_in_place_on_view_of_non_leaf_records_copy_slices(default_device):
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    y[1:] *= torch.tensor([10.0, 100.0], dtype=torch.float64)
    assert "CopySlices" in y.grad_fn.name()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 20.0, 200.0]


def test_setitem_of_a_value_requiring_grad_into_a_clone(default_device):
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    w = leaf([5.0, 6.0])
    y = x.clone()
    y[:, 0] = w * w
    (y * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0], [0.0, 4.0]]
    assert w.grad.tolist() == [10.0, 36.0]


def test_gradient_through_a_view_modified_in_place(default_device):
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    v = y[1:]
    v.exp_()
    (y * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), [1.0, 2 * np.exp(2.0), 3 * np.exp(3.0)])
    # the view sees the new history too
    assert v.grad_fn is not None and v.grad_fn is not y.grad_fn


def test_in_place_on_base_is_seen_by_gradient_through_earlier_view(default_device):
    x = leaf([1.0, 2.0])
    y = x * 1
    v = y.view(2)
    y.mul_(3)
    v.sum().backward()                       # v shows the tripled values
    assert x.grad.tolist() == [3.0, 3.0]


# ---------------------------------------------------------------------------
# a long chain: the engine must not recurse
# ---------------------------------------------------------------------------
class _Identity(Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.cpu_only("the autograd engine's depth (a 100,000-node graph), not a kernel")
def test_backward_through_a_100000_op_chain():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = _Identity.apply(y)
    y.backward()
    assert x.grad.tolist() == [1.0]


# ---------------------------------------------------------------------------
# custom Functions
# ---------------------------------------------------------------------------
class MultiplyAdd(Function):
    """The seeds' example: w * x + b with a hand-written backward."""

    @staticmethod
    def forward(ctx, w, x, b):
        ctx.save_for_backward(w, x)
        ctx.seen_needs = ctx.needs_input_grad
        return w * x + b

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        grad_w = grad_output * x if ctx.needs_input_grad[0] else None
        grad_x = grad_output * w if ctx.needs_input_grad[1] else None
        return grad_w, grad_x, grad_output


def test_custom_function_multiply_add(default_device):
    w, x, b = leaf([2.0]), torch.tensor([3.0], dtype=torch.float64), leaf([1.0])
    y = MultiplyAdd.apply(w, x, b)
    assert y.tolist() == [7.0]
    assert y.grad_fn.name() == "MultiplyAddBackward"
    assert y.grad_fn.seen_needs == (True, False, True)
    y.backward()
    assert w.grad.tolist() == [3.0] and x.grad is None and b.grad.tolist() == [1.0]


def test_custom_function_forward_runs_without_recording(default_device):
    inside = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a):
            out = a * 2
            inside.append((torch.is_grad_enabled(), out.requires_grad))
            return out

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Probe.apply(leaf([1.0]))
    assert inside == [(False, False)] and y.requires_grad


def test_custom_function_next_functions_only_for_tensor_arguments(default_device):
    class Scale(Function):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.k = k
            return a * k + b

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None, g

    a, b = leaf([1.0]), torch.ones(1, dtype=torch.float64)
    y = Scale.apply(a, 3.0, b)
    nf = y.grad_fn.next_functions
    assert len(nf) == 2
    assert nf[0][0].name() == "AccumulateGrad" and nf[0][0].variable is a
    assert nf[1] == (None, 0)
    y.backward()
    assert a.grad.tolist() == [3.0]


def test_custom_function_returning_too_many_gradients_raises(default_device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(leaf([1.0])).backward()


def test_mark_dirty_in_place_custom_function(default_device):
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = leaf([1.0])
    b = a * 1
    v0 = b._version
    c = AddOne.apply(b)
    assert c is b and b.tolist() == [2.0] and b._version > v0
    assert b.grad_fn.name() == "AddOneBackward"
    c.sum().backward()
    assert a.grad.tolist() == [1.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOne.apply(leaf([1.0]))


def test_mark_non_differentiable_output(default_device):
    class WithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            idx = torch.tensor([1, 0])
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            assert g_idx is None or float(g_idx.abs().sum()) == 0
            return g * 2

    x = leaf([1.0, 2.0])
    v, i = WithIndex.apply(x)
    assert v.requires_grad and not i.requires_grad and i.grad_fn is None
    v.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_set_materialize_grads_false_passes_none(default_device):
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1 is None, g2 is None)
            out = torch.zeros_like(g1 if g1 is not None else g2)
            if g1 is not None:
                out = out + g1
            if g2 is not None:
                out = out + 2 * g2
            return out

    x = leaf([1.0])
    a, b = TwoOut.apply(x)
    b.sum().backward()
    assert b.grad_fn.got == (True, False)
    assert x.grad.tolist() == [2.0]


def test_once_differentiable_backward_is_not_recorded(default_device):
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    a = leaf([3.0])
    (g,) = torch.autograd.grad(Square.apply(a), a, create_graph=True)
    assert g.tolist() == [6.0] and not g.requires_grad


def test_legacy_function_instance_raises(default_device):
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        MultiplyAdd()


def test_custom_function_returning_an_input_gives_a_new_tensor(default_device):
    class Id(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf([1.0])
    y = Id.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn is not None
    y.backward()
    assert x.grad.tolist() == [3.0]


# ---------------------------------------------------------------------------
# graph structure
# ---------------------------------------------------------------------------
def test_grad_fn_names_and_next_functions(default_device):
    x = torch.tensor([[1.0, 2.0]], requires_grad=True)
    y = (x * 2 + 1).sum()
    assert y.grad_fn.name() == "SumBackward0"
    (add, nr), = y.grad_fn.next_functions
    assert add.name() == "AddBackward0" and nr == 0
    (mul, _), (none, _) = add.next_functions
    assert mul.name() == "MulBackward0" and none is None
    (acc, _), (none, _) = mul.next_functions
    assert "AccumulateGrad" in acc.name() and acc.variable is x and none is None
    assert acc.next_functions == ()


def test_accumulate_grad_node_is_shared_by_uses_of_a_leaf(default_device):
    x = leaf([1.0])
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


def test_output_nr_of_multi_output_function(default_device):
    x = torch.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    values, indices = x.max(1)
    assert values.grad_fn.name() == "MaxBackward0"
    assert values.output_nr == 0 and not indices.requires_grad


@pytest.mark.parametrize("expr, name", [
    ("x.sum()", "SumBackward0"), ("x.sum(0)", "SumBackward1"), ("x.mean()", "MeanBackward0"),
    ("x.mean(1)", "MeanBackward1"), ("x.view(6)", "ViewBackward0"),
    ("x.t()", "TBackward0"), ("x.transpose(0, 1)", "TransposeBackward0"),
    ("x[0]", "SelectBackward0"), ("x[:, 1:]", "SliceBackward0"),
    ("x.unsqueeze(0)", "UnsqueezeBackward0"), ("x.permute(1, 0)", "PermuteBackward0"),
    ("x.expand(2, 2, 3)", "ExpandBackward0"), ("x.exp()", "ExpBackward0"),
    ("x.pow(3)", "PowBackward0"), ("x ** x", "PowBackward1"), ("x - x", "SubBackward0"),
    ("x / x", "DivBackward0"), ("2 - x", "RsubBackward1"), ("x.relu()", "ReluBackward0"),
    ("x.sigmoid()", "SigmoidBackward0"), ("x.clone()", "CloneBackward0"),
    ("x @ x.t()", "MmBackward0"), ("x.max()", "MaxBackward1"), ("x.amax(1)", "AmaxBackward0"),
    ("x.softmax(1)", "SoftmaxBackward0"), ("x.log_softmax(1)", "LogSoftmaxBackward0"),
    ("x.to(minitorch.float64)", "ToCopyBackward0"), ("x.cumsum(1)", "CumsumBackward0"),
    ("minitorch.cat([x, x])", "CatBackward0"), ("x.flip(0)", "FlipBackward0"),
    ("x.t().reshape(6)", "UnsafeViewBackward0"), ("x.abs()", "AbsBackward0"),
    ("x.clamp(0, 1)", "ClampBackward1"), ("x.log1p()", "Log1PBackward0"),
    ("x.var()", "VarBackward0"), ("x.std(1)", "StdBackward0"),
    ("x.repeat(2, 1)", "RepeatBackward0"), ("2 / x", "MulBackward0"),
    ("minitorch.stack([x, x])", "StackBackward0"),
])
def test_grad_fn_names_match_pytorch(default_device, expr, name):
    x = torch.ones(2, 3, requires_grad=True)
    y = eval(expr, {"x": x, "minitorch": torch})
    assert y.grad_fn.name() == name


def test_graph_is_freed_when_outputs_die(default_device):
    x = leaf([1.0])
    y = x * 2
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------------------
# anomaly detection
# ---------------------------------------------------------------------------
def test_detect_anomaly_names_the_backward_of_the_forward_op(default_device):
    x = leaf([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            y = x.sqrt()
            with pytest.raises(RuntimeError,
                               match="Function 'SqrtBackward0' returned nan values in its 0th"):
                (y * 0).sum().backward()


def test_detect_anomaly_warns_with_forward_traceback(default_device):
    x = leaf([0.0, 1.0])
    with torch.autograd.detect_anomaly():
        y = x / x
        with pytest.warns(UserWarning, match="Traceback of forward call"):
            with pytest.raises(RuntimeError, match="DivBackward0"):
                y.sum().backward()


def test_without_anomaly_detection_nan_gradients_pass_silently(default_device):
    x = leaf([0.0, 1.0])
    (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.cpu().numpy()[0])
    assert not torch.autograd.is_anomaly_enabled()


def test_detect_anomaly_as_decorator_and_set_detect_anomaly(default_device):
    @torch.autograd.detect_anomaly()
    def f():
        return torch.autograd.is_anomaly_enabled()

    assert f() and not torch.autograd.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True):
        assert torch.autograd.is_anomaly_enabled()
    assert not torch.autograd.is_anomaly_enabled()

# ---------------------------------------------------------------------------
# On every device (the ``device`` fixture: cpu, and cuda on Numba's simulator
# without a GPU; tensors stay tiny there).
# ---------------------------------------------------------------------------
from device_checks import check, host, on  # noqa: E402


def test_autograd_through_broadcast_views_and_indexing_on_every_device(device):
    a = on(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), device, requires_grad=True)
    b = on(np.array([0.5, -1.0, 2.0]), device, requires_grad=True)
    y = ((a * b).t()[1:].exp().sum() + a[:, [0, 0]].sum() + (a @ b).pow(2).mean()
         + a[a > 2.5].sum())
    y.backward()
    an, bn = host(a), host(b)
    s = an @ bn
    ga = np.zeros_like(an)
    ga[:, 1:] = np.exp(an[:, 1:] * bn[1:]) * bn[1:]
    ga[:, 0] += 2
    ga += an > 2.5
    ga += (s[:, None] * bn[None, :])           # d/da mean((a@b)^2) = 2 s b / 2
    gb = (np.exp(an[:, 1:] * bn[1:]) * an[:, 1:]).sum(0)
    gb = np.concatenate([[0.0], gb]) + (s[:, None] * an).sum(0)
    check(a.grad, ga, device, rtol=1e-10)
    check(b.grad, gb, device, rtol=1e-10)
    g, = torch.autograd.grad((b ** 3).sum(), b, create_graph=True)
    g2, = torch.autograd.grad(g.sum(), b)
    check(g2, 6 * bn, device, rtol=1e-10)


def test_a_leafs_accumulation_runs_as_soon_as_its_gradient_is_ready(default_device):
    """As in PyTorch, AccumulateGrad runs before other ready nodes, every step.

    A leaf's accumulator node is made once and reused, so ordering by creation
    would run it last from the second backward on; DistributedDataParallel
    starts its all-reduce in the leaf's hook and needs it early.
    """
    import minitorch as torch
    x = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    order = []
    b.register_hook(lambda g: order.append("b"))
    for _ in range(2):
        order.clear()
        y = x * 2
        y.register_hook(lambda g: order.append("y"))
        out = (y * 3 + b).sum()
        out.backward()
        assert order == ["b", "y"]
