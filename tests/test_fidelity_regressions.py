"""Regression tests for silent differences from PyTorch (issue 10), one test per bug.

Each was a result that differed from PyTorch's without an error, or a missing
or different exception.  The expected values are PyTorch 2.x's, written out
as literals (checked against torch when these tests were written), so the
tests run without torch installed.  tests/test_fuzz_torch.py found most of
them and keeps looking for their siblings.
"""

import math

import pytest

import minitorch as torch
import minitorch.nn.functional as F

pytestmark = pytest.mark.ops

NAN, INF = math.nan, math.inf


def same(t, expected) -> bool:
    """Elementwise equal to ``expected`` (a list), NaN where NaN, and the sign of zeros too."""
    got = t.tolist()
    if not isinstance(got, list):
        got, expected = [got], [expected]
    return len(got) == len(expected) and all(
        (math.isnan(g) and math.isnan(e)) if isinstance(e, float) and math.isnan(e)
        else (g == e and math.copysign(1, g) == math.copysign(1, e)) for g, e in zip(got, expected))


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------
def test_fmax_fmin_of_integer_tensors(default_device):
    a, b = torch.tensor([1, 5, 3]), torch.tensor([4, 2, 3])
    assert torch.fmax(a, b).tolist() == [4, 5, 3] and torch.fmax(a, b).dtype is torch.int64
    assert torch.fmin(a, b).tolist() == [1, 2, 3]


def test_index_add_of_int64_is_exact(default_device):
    out = torch.zeros(3, dtype=torch.int64).index_add(0, torch.tensor([0, 2, 0]),
                                                      torch.tensor([2 ** 53 + 1, 5, 7]))
    assert out.tolist() == [2 ** 53 + 8, 0, 5] and out.dtype is torch.int64


def test_int64_sum_is_exact(default_device):
    assert torch.tensor([2 ** 53 + 1, 1]).sum().item() == 2 ** 53 + 2
    assert torch.tensor([2 ** 62, 2 ** 62 - 1, 3]).sum().item() == -9223372036854775806  # wraps


def test_rounding_ops_keep_floats_beyond_int64(default_device):
    x = torch.tensor([1e20, -1e20, 1e300, INF, -INF, NAN], dtype=torch.float64)
    expected = [1e20, -1e20, 1e300, INF, -INF, NAN]
    for op in (torch.floor, torch.ceil, torch.trunc, torch.round):
        assert same(op(x), expected), op
    assert same(torch.ceil(torch.tensor([-0.5])), [-0.0])          # the zero keeps its sign
    assert same(torch.round(torch.tensor([2.5, -0.4], dtype=torch.float64)), [2.0, -0.0])


def test_frac_of_huge_and_infinite_floats(default_device):
    x = torch.tensor([1e20, -1e20, INF, -2.5], dtype=torch.float64)
    assert same(torch.frac(x), [0.0, 0.0, NAN, -0.5])


def test_floor_divide_of_floats_matches_pytorch(default_device):
    a = torch.tensor([1.0, -1.0, 7.0, -7.0, 1e20, -5.0, INF], dtype=torch.float64)
    b = torch.tensor([0.1, 0.1, 2.0, 2.0, 3.0, INF, 3.0], dtype=torch.float64)
    assert same(a // b, [9.0, -10.0, 3.0, -4.0, 3.3333333333333332e19, -1.0, NAN])


def test_fmod_and_remainder_of_huge_quotients_are_exact(default_device):
    x = torch.tensor([1e30, -1e30, 1e20], dtype=torch.float64)
    assert same(torch.fmod(x, 3.0), [1.0, -1.0, 1.0])
    assert same(torch.remainder(x[:2], 7.0), [5.0, 2.0])
    assert same(torch.fmod(torch.tensor([5.0, -5.0]), INF), [5.0, -5.0])


def test_relu_of_nan_negative_and_minus_inf(default_device):
    # NaN stays NaN; negatives (even -inf) give +0.0, not -0.0 or NaN.
    assert same(torch.relu(torch.tensor([NAN, -1.0, -INF, 2.0])), [NAN, 0.0, 0.0, 2.0])


def test_pow_gives_inf_where_pytorch_does(default_device):
    base = torch.tensor([0.0, -0.0, -0.0, -8.0, -INF, -2.0, -0.5])
    exponent = torch.tensor([-1.0, -1.0, -2.0, 1 / 3, 0.5, INF, INF])
    assert same(base ** exponent, [INF, -INF, INF, NAN, INF, INF, 0.0])
    assert same(torch.tensor([-0.0]) ** -3, [-INF])


def test_clamp_with_a_nan_bound_gives_nan(default_device):
    assert same(torch.clamp(torch.tensor([1.0, -2.0]), min=NAN), [NAN, NAN])
    assert same(torch.clamp(torch.tensor([1.0]), 0, NAN), [NAN])


def test_float16_gradient_is_not_zero(default_device):
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float16, requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.dtype is torch.float16 and x.grad.tolist() == [2.0, 4.0, 6.0]


# ---------------------------------------------------------------------------
# Result dtypes
# ---------------------------------------------------------------------------
def test_nansum_of_integers_is_int64(default_device):
    assert torch.nansum(torch.tensor([1, 2, 3])).dtype is torch.int64
    assert torch.nansum(torch.tensor([True, True])).item() == 2


def test_addcmul_of_int64_stays_int64(default_device):
    out = torch.addcmul(torch.tensor([1, 2]), torch.tensor([1, 2]), torch.tensor([3, 4]))
    assert out.tolist() == [4, 10] and out.dtype is torch.int64
    # value is converted to the result dtype: 0.5 becomes 0.
    assert torch.addcmul(torch.tensor([1]), torch.tensor([1]), torch.tensor([1]),
                         value=0.5).tolist() == [1]


def test_addmm_of_int64_stays_int64(default_device):
    out = torch.addmm(torch.tensor([[1]]), torch.tensor([[1, 2]]), torch.tensor([[3], [4]]))
    assert out.tolist() == [[12]] and out.dtype is torch.int64


def test_square_of_bool_is_int64(default_device):
    out = torch.square(torch.tensor([True, False]))
    assert out.tolist() == [1, 0] and out.dtype is torch.int64


# ---------------------------------------------------------------------------
# requires_grad / is_leaf
# ---------------------------------------------------------------------------
def test_floor_divide_result_requires_grad_and_backward_raises(default_device):
    x = torch.tensor([1.5, 2.5], requires_grad=True)
    y = x // 2
    assert (y.requires_grad, y.is_leaf) == (True, False)
    with pytest.raises(RuntimeError, match="floor_divide"):
        y.sum().backward()


def test_div_with_rounding_mode_has_a_zero_gradient(default_device):
    for mode in ("floor", "trunc"):
        x = torch.tensor([1.5, -2.5], requires_grad=True)
        y = torch.div(x, 2, rounding_mode=mode)
        assert (y.requires_grad, y.is_leaf) == (True, False)
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]


def test_zero_norm_requires_grad(default_device):
    x = torch.tensor([1.5, 0.0, 2.0], requires_grad=True)
    n = x.norm(0)
    assert (n.item(), n.requires_grad, n.is_leaf) == (2.0, True, False)
    n.backward()
    assert x.grad is None            # PyTorch defines no derivative for the 0-norm


def test_integer_results_never_require_grad(default_device):
    x = torch.tensor([1.5, 2.5], requires_grad=True)
    for y in (x.to(torch.int64), x.type(torch.int32), x.long(), x.bool(), x > 1, x.argmax()):
        assert (y.requires_grad, y.is_leaf, y.grad_fn) == (False, True, None)
    for y in (x.to(torch.float64), x.type(torch.float64), x.double()):
        assert (y.requires_grad, y.is_leaf) == (True, False)


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------
def test_cosine_similarity_broadcasts_and_divides_by_each_norm(default_device):
    x1 = torch.tensor([[1e-10, 0.0], [3.0, 4.0]])
    out = F.cosine_similarity(x1, torch.tensor([1.0, 0.0]))
    assert out.shape == (2,)
    # |x1| is clamped to eps = 1e-8 before dividing, so a tiny vector gives 1e-10 / 1e-8.
    assert out.tolist() == pytest.approx([0.01, 0.6])
    assert F.cosine_similarity(torch.ones(2, 1, 3), torch.ones(4, 3), dim=-1).shape == (2, 4)


def test_cross_entropy_and_nll_loss_return_0d(default_device):
    logits = torch.tensor([[1.0, 2.0, 3.0]])
    ce = F.cross_entropy(logits, torch.tensor([2]))
    assert ce.shape == () and ce.item() == pytest.approx(0.40760594606399536)
    assert F.nll_loss(logits.log_softmax(1), torch.tensor([2])).shape == ()
    assert F.cross_entropy(torch.tensor([1.0, 2.0, 3.0]), torch.tensor(2)).shape == ()


# ---------------------------------------------------------------------------
# Errors PyTorch raises
# ---------------------------------------------------------------------------
def test_bool_subtraction_raises(default_device):
    b = torch.tensor([True])
    for f in (lambda: b - b, lambda: b - 1, lambda: 1 - b, lambda: torch.tensor([1]) - b,
              lambda: b - 1.5):
        with pytest.raises(RuntimeError, match="Subtraction"):
            f()


def test_overflowing_fill_values_raise(default_device):
    with pytest.raises(RuntimeError, match="value cannot be converted to type int without"):
        torch.zeros(2, dtype=torch.int32).fill_(2 ** 31)
    with pytest.raises(RuntimeError, match="int8_t"):
        torch.full((2,), 300, dtype=torch.int8)
    with pytest.raises(RuntimeError, match="c10::Half"):
        torch.zeros(2, dtype=torch.float16).fill_(1e10)
    with pytest.raises(RuntimeError, match="int64_t"):
        torch.zeros(2, dtype=torch.int64).fill_(NAN)
    with pytest.raises(RuntimeError):
        torch.zeros(2, dtype=torch.int32).masked_fill(torch.tensor([True, False]), 2 ** 31)
    with pytest.raises(OverflowError):
        torch.zeros(2).fill_(2 ** 70)
    x = torch.zeros(2, dtype=torch.int32)
    with pytest.raises(RuntimeError):
        x[0] = 2 ** 40
    # What fits is fine: the type's limits, infinities in floats, anything in bool.
    assert torch.zeros(1, dtype=torch.int32).fill_(2 ** 31 - 1).tolist() == [2 ** 31 - 1]
    assert torch.zeros(1).fill_(INF).tolist() == [INF]
    assert torch.zeros(1, dtype=torch.bool).fill_(5).tolist() == [True]


def test_scalar_other_where_a_tensor_is_required_raises_type_error(default_device):
    x = torch.tensor([1.0])
    for name in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "logical_and",
                 "logical_or", "logical_xor"):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'other'"):
            getattr(torch, name)(x, 2.0)
    assert torch.clamp(x, min=torch.tensor([2.0]), max=3.0).tolist() == [2.0]


def test_invalid_pooling_padding_raises(default_device):
    for pool in (F.avg_pool2d, F.max_pool2d):
        with pytest.raises(RuntimeError, match="pad should be at most half"):
            pool(torch.ones(1, 1, 4, 4), 2, padding=2)
        with pytest.raises(RuntimeError, match="pad must be non-negative"):
            pool(torch.ones(1, 1, 4, 4), 2, padding=-1)
    with pytest.raises(RuntimeError):
        F.avg_pool1d(torch.ones(1, 1, 4), 2, padding=2)


def test_exception_types_match_pytorch(default_device):
    b = torch.tensor([[True]])
    with pytest.raises(NotImplementedError):
        b @ b                                                   # no bool matmul
    with pytest.raises(NotImplementedError):
        b ** b
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        torch.relu(torch.tensor([True]))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.addmm(torch.zeros(1, 1), torch.ones(1, 1, dtype=torch.int32),
                    torch.ones(1, 1, dtype=torch.int32))
    with pytest.raises(RuntimeError, match="must be a matrix"):
        torch.addmm(torch.zeros(1), torch.ones(2), torch.ones(2, 1))
    with pytest.raises(RuntimeError):
        torch.addmm(torch.zeros(1, 3), torch.ones(1, 2), torch.ones(2, 1))  # (1, 3) vs (1, 1)
    with pytest.raises(RuntimeError, match="expected dtype"):
        torch.lerp(torch.tensor([1.0]), torch.tensor([2.0], dtype=torch.float64), 0.5)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        torch.addcdiv(torch.tensor([1.0]), torch.tensor([1]), torch.tensor([1]))
    with pytest.raises(IndexError):
        torch.tensor(1.0).transpose(-1, 1)
    with pytest.raises(RuntimeError, match="cannot compute the inf norm"):
        torch.zeros(0, 2).norm(INF, 0)
    with pytest.raises(ValueError, match="batch_size"):
        F.cross_entropy(torch.ones(2, 3), torch.tensor(1))


def test_addmm_with_beta_zero_ignores_nan_in_input(default_device):
    out = torch.addmm(torch.tensor([[NAN]]), torch.ones(1, 2), torch.ones(2, 1), beta=0)
    assert out.tolist() == [[2.0]]


# ---------------------------------------------------------------------------
# Siblings found by tests/test_fuzz_torch.py
# ---------------------------------------------------------------------------
def test_integers_in_a_float16_op_are_rounded_to_float16_first(default_device):
    # 2**62 is inf in float16, so inf + -inf is NaN (computing in float32 would give -inf).
    a = torch.tensor([2 ** 62, 70000, -1])
    b = torch.tensor([-INF, 0.0, -100.0], dtype=torch.float16)
    assert same((a + b).float(), [NAN, INF, -101.0])


def test_pow_gradient_is_zero_where_the_exponent_is_zero(default_device):
    x = torch.tensor([1.0, -0.0, 0.5], requires_grad=True)
    (x ** x).sum().backward()
    assert x.grad.tolist() == pytest.approx([1.0, 0.0, 0.21698], abs=1e-5)


def test_two_norm_of_a_large_float32_value_does_not_overflow(default_device):
    assert torch.tensor([3e19]).norm().item() == pytest.approx(3e19)
    # (PyTorch gives inf for [3e19, 4e19]; minitorch squares in float64 and gives 5e19,
    # see docs/differences.md.)
    assert torch.tensor([3e19, 4e19]).norm().item() == pytest.approx(5e19)


def test_two_norm_gradient_is_zero_at_zero(default_device):
    x = torch.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    x.norm(dim=1).sum().backward()
    assert x.grad.reshape(-1).tolist() == pytest.approx([0.0, 0.0, 0.6, 0.8])


def test_cosine_similarity_promotes_integer_inputs(default_device):
    out = F.cosine_similarity(torch.tensor([1, 0]), torch.tensor([1.0, 1.0]), dim=0)
    assert out.dtype is torch.float32 and out.item() == pytest.approx(0.70710677)


def test_reductions_refuse_integer_results_that_need_grad(default_device):
    x = torch.ones(2, requires_grad=True)
    for f in (lambda: x.sum(dtype=torch.int64), lambda: x.prod(dtype=torch.int64),
              lambda: x.cumsum(0, dtype=torch.int64)):
        with pytest.raises(RuntimeError, match="Autograd not support dtype: Long"):
            f()


def test_more_exception_types_match_pytorch(default_device):
    with pytest.raises(NotImplementedError, match="hypot_cpu"):
        torch.hypot(torch.tensor([3]), torch.tensor([4]))
    with pytest.raises(RuntimeError, match="does not support bool input"):
        torch.tensor(True).argmax(1)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        torch.ones(0, 2).amax(())
    with pytest.raises(IndexError):
        torch.softmax(torch.tensor([1, 2]), 3)                # the dim is checked first
    with pytest.raises(NotImplementedError, match="fmod_cpu"):
        torch.fmod(torch.tensor([True]), torch.tensor([False]))
    with pytest.raises(NotImplementedError, match="div_floor_cpu"):
        torch.tensor([True]) // torch.tensor([True])
    with pytest.raises(TypeError):
        torch.tensor([1.0]).permute()
    with pytest.raises(NotImplementedError, match="mse_cpu"):
        F.mse_loss(torch.tensor([1]), torch.tensor([2]))
    assert torch.tensor([True, False]).pow_(True).tolist() == [True, False]


def test_reduction_dtype_converts_the_input_first(default_device):
    x = torch.tensor([2 ** 40, -4, 2 ** 40, 2, -3, 5])
    assert x.prod().item() == 0                                      # int64 wraps around
    assert x.prod(dtype=torch.float32).item() == pytest.approx(1.4507109835e26, rel=1e-6)
    assert torch.tensor([2 ** 62, 2 ** 62]).sum(dtype=torch.float64).item() == 2.0 ** 63


def test_addcmul_result_dtype_comes_from_the_three_tensors(default_device):
    a, b = torch.tensor(-3, dtype=torch.int32), torch.tensor([[True, False]])
    assert torch.addcmul(a, b, a, value=0.5).dtype is torch.int32


def test_cumsum_and_cumprod_of_a_0d_tensor_have_a_backward(default_device):
    for op in (torch.cumsum, torch.cumprod):
        x = torch.tensor(7.25, dtype=torch.float64, requires_grad=True)
        y = op(x, 0)
        assert y.shape == () and y.item() == 7.25
        y.sum().backward()
        assert x.grad.item() == 1.0


def test_clamp_gradient_is_zero_not_nan_outside_the_bounds(default_device):
    x = torch.tensor([5.0, 0.5], requires_grad=True)
    (INF * torch.clamp(x, -1, 1)).sum().backward()       # inf * 0 would be NaN
    assert same(x.grad, [0.0, INF])


def test_copysign_backward_with_a_number_and_at_zero(default_device):
    x = torch.tensor([-0.0, -1.75, 3.0], dtype=torch.float64, requires_grad=True)
    torch.copysign(x, 2).sum().backward()              # crashed: 'int' has no new_full
    assert x.grad.tolist() == [0.0, -1.0, 1.0]


def test_cross_entropy_with_same_shaped_integer_target_raises(default_device):
    with pytest.raises(RuntimeError, match="class probabilities"):
        F.cross_entropy(torch.tensor(1.0), torch.tensor(0))


def test_std_of_large_float32_values_does_not_overflow(default_device):
    x = torch.tensor([0.0, 0.0, 1e20])
    assert x.std().item() == pytest.approx(5.773503e19, rel=1e-6)
    assert x.var().item() == INF                  # 3.3e39 is beyond float32, as in PyTorch


def test_floor_gradient_is_zero_even_for_an_infinite_upstream_gradient(default_device):
    x = torch.tensor([0.0], requires_grad=True)
    torch.reciprocal(x.clone().floor_()).sum().backward()
    assert x.grad.tolist() == [0.0]


@pytest.mark.parametrize("create_graph", [False, True])
def test_relu_backward_is_thresholds_backward_nan_passes_inf_is_cut(default_device, create_graph):
    # PyTorch: grad_input = 0 where relu(x) <= 0, else grad: a NaN output passes
    # its gradient, and an infinite gradient where x <= 0 gives 0, not NaN.
    x = torch.tensor([-1.0, 0.0, 2.0, math.nan], requires_grad=True)
    g, = torch.autograd.grad(torch.relu(x), x, torch.tensor([math.inf, 1.0, 3.0, 1.0]),
                             create_graph=create_graph)
    assert g.tolist() == [0.0, 0.0, 3.0, 1.0]


@pytest.mark.parametrize("shape", [(0,), (3,)])
def test_cosine_similarity_promotes_the_expanded_inputs(default_device, shape):
    # PyTorch expands x1 and x2 first, then promotes: a 0-d float64 is a float64 vector.
    got = F.cosine_similarity(torch.zeros((), dtype=torch.float64), torch.ones(shape), dim=0)
    assert got.dtype == torch.float64 and tuple(got.shape) == ()


def test_atan2_gradient_at_the_origin_is_zero_as_in_pytorch(default_device):
    x = torch.tensor(0.0, requires_grad=True)
    y = torch.tensor(0.0, requires_grad=True)
    torch.atan2(x, y).backward()
    assert x.grad.item() == 0.0 and y.grad.item() == 0.0
    a = torch.tensor([1.0, 0.0], requires_grad=True)
    torch.atan2(a, torch.tensor([1.0, 2.0])).sum().backward()
    assert a.grad.tolist() == [0.5, 0.5]


def test_clamp_of_an_integer_tensor_with_crossed_bounds_still_promotes_to_float(default_device):
    # (the empty-tensor case was found by the long fuzz profile; torch: float32)
    for x in (torch.tensor([3]), torch.zeros(0, dtype=torch.int64)):
        got = torch.clamp(x, 0.5, -2)
        assert got.dtype == torch.float32
        assert got.tolist() == [-2.0] * x.numel()


# ---------------------------------------------------------------------------
# Issue 23: PyTorch's other spellings, its errors, and silent differences
# ---------------------------------------------------------------------------
def test_numpy_names_of_dim_and_keepdim(default_device):
    # PyTorch's argument parser takes NumPy's `axis` and `keepdims` for every op with a
    # `dim` or `keepdim` argument; so does every public form here (ops/registry.py).
    x = torch.arange(24.0).reshape(2, 3, 4)
    assert x.sum(axis=1).shape == (2, 4) and x.sum(axis=1).tolist() == x.sum(1).tolist()
    assert x.mean(axis=(1, 2)).tolist() == x.mean((1, 2)).tolist()
    values, indices = x.max(axis=1)
    assert values.tolist() == x.max(1).values.tolist() and indices.tolist() == [[2] * 4] * 2
    assert x.std(axis=1).shape == (2, 4) and x.var(axis=0, keepdims=True).shape == (1, 3, 4)
    assert torch.std_mean(x, axis=2)[0].shape == (2, 3)
    assert (x > 3).any(axis=0).shape == (3, 4) and (x > 3).all(axis=2, keepdims=True).shape \
        == (2, 3, 1)
    assert x.sum(1, keepdims=True).shape == (2, 1, 4)
    assert torch.sum(x, axis=0).shape == (3, 4) and torch.cat([x, x], axis=2).shape == (2, 3, 8)
    assert x.unsqueeze(axis=0).shape == (1, 2, 3, 4) and x.cumsum(axis=0).shape == (2, 3, 4)
    assert x.amax(axis=0, keepdims=True).shape == (1, 3, 4)
    with pytest.raises(TypeError, match="got both 'dim' and 'axis'"):
        x.sum(dim=0, axis=1)
    with pytest.raises(TypeError):
        x.sum(axes=1)                   # only NumPy's names for PyTorch's, nothing else


def test_shift_operators(default_device):
    i = torch.tensor([1, 2, -3])
    assert (i << 1).tolist() == [2, 4, -6] and (i >> 1).tolist() == [0, 1, -2]
    assert (2 << i.abs()).tolist() == [4, 8, 16] and (16 >> torch.tensor([1, 2])).tolist() == [8, 4]
    assert (i << 1).dtype is torch.int64
    j = i.clone()
    j <<= 2
    assert j.tolist() == [4, 8, -12]
    j >>= 1
    assert j.tolist() == [2, 4, -6]
    assert (torch.tensor([1, 2], dtype=torch.uint8) << 7).tolist() == [128, 0]
    with pytest.raises(NotImplementedError, match="\"lshift_.*\" not implemented for 'Float'"):
        torch.tensor([1.5]) << 1
    with pytest.raises(NotImplementedError, match="\"rshift_.*\" not implemented for 'Float'"):
        torch.bitwise_right_shift(torch.tensor([1.5]), 1)


def test_matrix_transposes_check_their_dims(default_device):
    for name in ("mT", "mH"):
        with pytest.raises(RuntimeError, match=rf"tensor.{name} is only supported on matrices "
                                               r"or batches of matrices. Got 1-D tensor."):
            getattr(torch.ones(3), name)
        with pytest.warns(UserWarning, match=f"Tensor.{name} is deprecated on 0-D tensors"):
            assert getattr(torch.tensor(2.0), name).item() == 2.0
        assert getattr(torch.ones(4, 2, 3), name).shape == (4, 3, 2)
    with pytest.raises(RuntimeError, match=r"tensor.H is only supported on matrices \(2-D "
                                           r"tensors\). Got 3-D tensor."):
        torch.ones(4, 2, 3).H
    assert torch.ones(2, 3).H.shape == (3, 2)


def test_all_and_any_of_uint8_stay_uint8(default_device):
    u = torch.tensor([[1, 2], [0, 3]], dtype=torch.uint8)
    assert u.all().dtype is torch.uint8 and u.all().item() == 0
    assert u.any(1).dtype is torch.uint8 and u.any(1).tolist() == [1, 1]
    assert u.all(0).tolist() == [0, 1]
    assert torch.tensor([1, 2]).all().dtype is torch.bool


def test_a_float_modulo_an_integer_tensor_is_a_float(default_device):
    r = 100.5 % torch.tensor([3, 4])
    assert r.dtype is torch.float32 and r.tolist() == [1.5, 0.5]
    assert torch.remainder(7, torch.tensor([3, 4])).dtype is torch.int64


def test_flip_of_a_0d_tensor_is_a_copy(default_device):
    t = torch.tensor(1.5, requires_grad=True)
    f = t.flip(0)
    assert f.shape == () and f.item() == 1.5 and f.requires_grad
    f.backward()
    assert t.grad.item() == 1.0
    assert torch.flip(torch.tensor(2.0), (-1,)).item() == 2.0
    with pytest.raises(IndexError):
        torch.tensor(2.0).flip(1)


def test_linspace_and_logspace_refuse_bool(default_device):
    for fn in (torch.linspace, torch.logspace):
        with pytest.raises(NotImplementedError, match=f"\"{fn.__name__}_.*\" not implemented "
                                                      "for 'Bool'"):
            fn(0, 1, 3, dtype=torch.bool)


@pytest.mark.cpu_only("apply_ and map_ are CPU-only in PyTorch; the cuda refusal is checked here")
def test_apply_and_map_call_python_for_each_element():
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.apply_(lambda v: v * 10) is t and t.tolist() == [[10.0, 20.0], [30.0, 40.0]]
    t.map_(torch.tensor([1.0, 2.0]), lambda v, w: v + w)     # broadcast over the rows
    assert t.tolist() == [[11.0, 22.0], [31.0, 42.0]]
    i = torch.tensor([1, 2])
    assert i.apply_(lambda v: v * 3).tolist() == [3, 6] and i.dtype is torch.int64
    with pytest.raises(TypeError, match="map_\\(\\): argument 'tensor' must be Tensor"):
        t.map_(2.0, lambda v, w: v)
    if torch.cuda.is_available():
        with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
            torch.ones(2, device="cuda").apply_(lambda v: v)


def test_in_place_ops_refuse_a_tensor_whose_elements_share_memory(default_device):
    # An expanded tensor's elements are one memory cell: an in-place op would silently keep
    # one element's result.  PyTorch refuses; so does every in-place op here.
    x = torch.zeros(1).expand(3)
    for op in (lambda t: t.relu_(), lambda t: t.add_(1), lambda t: t.frac_(),
               lambda t: t.lt_(1), lambda t: t.mul_(torch.ones(3))):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor "
                                               "refers to a single memory location"):
            op(x)
    assert x.tolist() == [0.0, 0.0, 0.0]
    y = torch.zeros(3).as_strided((3, 1), (1, 0))    # a 0 stride on a size-1 dim: no overlap
    y.add_(1)
    assert y.tolist() == [[1.0], [1.0], [1.0]]


def test_adaptive_pools_keep_a_dim_given_as_none(default_device):
    x = torch.arange(2 * 4 * 6.0).reshape(1, 2, 4, 6)
    for pool in (F.adaptive_avg_pool2d, F.adaptive_max_pool2d):
        assert pool(x, (None, 3)).shape == (1, 2, 4, 3)
        assert pool(x, (2, None)).shape == (1, 2, 2, 6)
        assert pool(x[0], (None, 2)).shape == (2, 4, 2)
    assert F.adaptive_max_pool2d(x, (None, 3))[0, 0, 0].tolist() == [1.0, 3.0, 5.0]


def test_nanmedian_of_integers_along_a_dim(default_device):
    r = torch.tensor([[3, 1, 2], [7, 5, 6]]).nanmedian(1)
    assert r.values.tolist() == [2, 6] and r.values.dtype is torch.int64
    assert r.indices.tolist() == [2, 2]


def test_roll_shifts_and_dims_must_align(default_device):
    x = torch.arange(6).reshape(2, 3)
    assert x.roll((1,)).tolist() == [[5, 0, 1], [2, 3, 4]]       # one shift, flattened
    assert x.roll((1,), (0,)).tolist() == [[3, 4, 5], [0, 1, 2]]
    for shifts, dims, message in (((1, 2), None, "shifts: 2, dims:0"),
                                  (1, (0, 1), "shifts: 1, dims:2"),
                                  ((1, 2), (0,), "shifts: 2, dims:1")):
        with pytest.raises(RuntimeError, match=f"shifts and dimensions must align. {message}"):
            x.roll(shifts, dims)


def test_movedim_of_a_0d_tensor(default_device):
    assert torch.tensor(1.5).movedim(0, 0).item() == 1.5
    assert torch.tensor(1.5).movedim(-1, 0).shape == ()


def test_contractions_over_empty_dims(default_device):
    a, b = torch.zeros(2, 0), torch.zeros(0, 3)
    for r in (torch.tensordot(a, b, 1), torch.einsum("ij,jk->ik", a, b), a @ b):
        assert r.shape == (2, 3) and r.tolist() == [[0.0] * 3] * 2
    assert torch.tensordot(torch.zeros(0, 4), torch.zeros(4, 5), 1).shape == (0, 5)
    assert torch.einsum("bij,bjk->bik", torch.zeros(0, 2, 3), torch.zeros(0, 3, 4)).shape \
        == (0, 2, 4)


def test_padding_of_the_wrong_length_is_refused_in_pytorchs_words(default_device):
    x = torch.zeros(1, 2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1, 1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two "
                                           "times the input dimension but got padding length 8"):
        F.pad(x, (1,) * 8)
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input"):
        F.pad(torch.zeros(3), (1, 1), mode="reflect")
    assert F.pad(x, (1, 1, 1, 1), mode="reflect").shape == (1, 4, 5)
    x4, w = torch.zeros(1, 1, 4, 4), torch.zeros(1, 1, 2, 2)
    with pytest.raises(RuntimeError, match=r"expected padding to be a single integer value or a "
                                           r"list of 2 values .* but got padding=\[1, 1, 1\]"):
        F.conv2d(x4, w, padding=(1, 1, 1))
    with pytest.raises(RuntimeError, match="expected stride to be a single integer value"):
        F.conv2d(x4, w, stride=(1, 1, 1))
    for pool in ("max_pool2d", "avg_pool2d"):
        with pytest.raises(RuntimeError, match=f"{pool}: padding must either be a single int, "
                                               "or a tuple of two ints"):
            getattr(F, pool)(x4, 2, padding=(1, 1, 1))
        with pytest.raises(RuntimeError, match=f"{pool}: kernel_size must either be a single"):
            getattr(F, pool)(x4, (2, 2, 2))
        with pytest.raises(RuntimeError, match=f"{pool}: stride must either be omitted, a single "
                                               "int, or a tuple of two ints"):
            getattr(F, pool)(x4, 2, stride=(1, 1, 1))
        assert getattr(F, pool)(x4, 2, stride=(2,)).shape == (1, 1, 2, 2)


def test_split_of_an_empty_dim_gives_one_empty_piece(default_device):
    pieces = torch.zeros(0, 3).split(2)
    assert len(pieces) == 1 and pieces[0].shape == (0, 3)
    assert len(torch.zeros(0, 3).split(0)) == 1


def test_prelu_keeps_the_input_shape(default_device):
    r = F.prelu(torch.tensor(-1.0), torch.tensor([0.25]))
    assert r.shape == () and r.item() == -0.25
    assert F.prelu(torch.tensor([[-2.0, 2.0]]), torch.tensor([0.5])).tolist() == [[-1.0, 2.0]]


def test_instance_norm_of_one_spatial_element(default_device):
    with pytest.raises(ValueError, match=r"Expected more than 1 spatial element when training, "
                                         r"got input size .*\[1, 2, 1\]"):
        F.instance_norm(torch.zeros(1, 2, 1))


def test_round_of_integers_to_decimal_places_is_refused(default_device):
    i = torch.tensor([1, 2])
    assert i.round().tolist() == [1, 2] and i.round().dtype is torch.int64
    with pytest.raises(NotImplementedError, match="\"round_cpu\" not implemented for 'Long'"):
        i.round(decimals=1)


def test_pin_memory_needs_a_gpu_and_pins_nothing(default_device, monkeypatch):
    t = torch.ones(2, device="cpu")
    assert not t.is_pinned()
    if torch.cuda.is_available():       # nothing to pin: minitorch copies from NumPy memory
        assert t.pin_memory() is t
        with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
            t.cuda().pin_memory()
    from minitorch.backends.cuda import runtime
    monkeypatch.setattr(runtime, "is_available", lambda: False)      # a machine with no GPU
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                           "available."):
        t.pin_memory()


def test_a_custom_function_must_return_one_gradient_per_input(default_device):
    class Forgetful(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g                     # forgot b's gradient

    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function ForgetfulBackward returned an incorrect "
                                           r"number of gradients \(expected 2, got 1\)"):
        Forgetful.apply(a, b).sum().backward()


def test_an_in_place_comparison_keeps_the_graph(default_device):
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    b.lt_(1)                               # bool values, written into a float tensor
    assert b.requires_grad and not b.is_leaf and b.grad_fn is not None
    assert b.tolist() == [0.0, 0.0, 0.0]
    b.sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]


def test_shrinks_and_lerp_treat_nan_and_inf_as_pytorch_does(default_device):
    x = torch.tensor([-0.2, 0.2, NAN, -5.0])
    assert same(F.softshrink(x), [-0.0, 0.0, NAN, -4.5])
    assert same(F.hardshrink(x), [0.0, 0.0, NAN, -5.0])
    assert same(torch.lerp(torch.tensor([0.0]), torch.tensor([INF]), 0.5), [NAN])
    assert same(torch.lerp(torch.tensor([1.0]), torch.tensor([3.0]), 0.25), [1.5])
    assert same(torch.lerp(torch.tensor([1.0]), torch.tensor([3.0]), torch.tensor([0.75])), [2.5])


def test_erfinv_and_the_special_namespace(default_device):
    y = torch.tensor([0.0, 0.5, -0.9, 0.999, 1.0, -1.0, 1.5, NAN], dtype=torch.float64)
    expected = [0.0, 0.4769362762044699, -1.1630871536766743, 2.326753765513525, INF, -INF,
                NAN, NAN]
    got = torch.erfinv(y).tolist()
    assert all((math.isnan(g) and math.isnan(e)) or (math.isinf(e) and g == e)
               or abs(g - e) <= 1e-14 * max(1.0, abs(e)) for g, e in zip(got, expected)), got
    assert torch.special.erfinv is torch.erfinv
    assert y.erfinv().dtype is torch.float64 and torch.tensor([0.5]).erfinv().dtype is torch.float32
    assert torch.tensor([0, 1]).erfinv().dtype is torch.float32          # integers: a float
    inner = torch.linspace(-0.99, 0.99, 101, dtype=torch.float64)
    assert (torch.erf(torch.erfinv(inner)) - inner).abs().max().item() < 1e-14
    t = torch.tensor([0.5], dtype=torch.float64)
    t.erfinv_()
    assert abs(t.item() - 0.4769362762044699) < 1e-15
    # d erfinv(y) / dy = sqrt(pi) / 2 * exp(erfinv(y) ** 2)
    x = torch.tensor([-0.7, 0.0, 0.3], dtype=torch.float64, requires_grad=True)
    torch.erfinv(x).sum().backward()
    want = [math.sqrt(math.pi) / 2 * math.exp(v ** 2) for v in torch.erfinv(x.detach()).tolist()]
    assert all(abs(g - w) < 1e-12 for g, w in zip(x.grad.tolist(), want))

    sp = torch.special
    assert abs(sp.ndtr(torch.tensor([1.0], dtype=torch.float64)).item() - 0.8413447460685429) \
        < 1e-15
    assert abs(sp.ndtri(torch.tensor([0.975], dtype=torch.float64)).item() - 1.959963984540054) \
        < 1e-12
    assert same(sp.entr(torch.tensor([0.0, 0.5, -1.0, NAN], dtype=torch.float64)),
                [0.0, 0.34657359027997264, -INF, NAN])
    assert same(sp.xlog1py(torch.tensor([0.0, 2.0], dtype=torch.float64),
                           torch.tensor([-1.0, 1.0], dtype=torch.float64)),
                [0.0, 1.3862943611198906])
    z = torch.tensor([-1.0, 0.0, 2.0])
    assert sp.expit(z).tolist() == torch.sigmoid(z).tolist()
    assert sp.logsumexp(z, 0).item() == torch.logsumexp(z, 0).item()
    assert sp.softmax(z, 0).tolist() == torch.softmax(z, 0).tolist()
