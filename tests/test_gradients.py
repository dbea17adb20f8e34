"""Finite-difference checks (float64 gradcheck / gradgradcheck) of every differentiable op.

Each op is one row of ``OPS``: a name, a function of the inputs, the input
shapes and the domain the inputs are drawn from.  Adding an op is one line.
Each row is checked with contiguous inputs and again with non-contiguous
ones (every other element of a larger buffer), and, unless the row says
otherwise, its second derivatives are checked with ``gradgradcheck``.  On
``cuda`` (the ``default_device`` fixture) a row's first and second derivatives
are compared with the CPU's instead (``device_checks``); the tests of
``gradcheck`` itself, at the end, run the real one on both devices.
"""

import numpy as np
import pytest

import minitorch as torch
from device_checks import gradcheck as gradients_check, gradgradcheck as second_gradients_check
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.autograd.gradcheck import GradcheckError
from minitorch.ops import elementwise as E

pytestmark = pytest.mark.autograd

# Domains: how input values are drawn.  Values are kept away from kinks,
# poles and ties (|x| >= 0.2, magnitudes distinct) so that the central
# difference with eps=1e-6 never straddles a discontinuity.
DOMAINS = {
    "any": lambda rng, n: rng.choice([-1, 1], n) * rng.uniform(0.2, 1.5, n),
    "pos": lambda rng, n: rng.uniform(0.3, 2.0, n),
    "unit": lambda rng, n: rng.uniform(-0.8, 0.8, n),
    "gt1": lambda rng, n: rng.uniform(1.2, 3.0, n),
    # away from integers (and half-integers, for round): piecewise constant ops
    "frac": lambda rng, n: rng.integers(-3, 3, n) + rng.uniform(0.1, 0.4, n),
    "small": lambda rng, n: rng.uniform(-0.5, 0.5, n),
}


def make(shape, domain="any", seed=0, noncontig=False):
    """A float64 leaf requiring grad; with ``noncontig`` it reads every other element."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    values = DOMAINS[domain](rng, n).reshape(shape)
    if noncontig and len(shape) >= 1:
        big = np.zeros(tuple(shape[:-1]) + (2 * shape[-1],))
        big[..., ::2] = values
        t = torch.tensor(big)[..., ::2]            # on the default device
        assert not t.is_contiguous() or shape[-1] <= 1
        return t.detach().requires_grad_(True)
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def _first(fn):
    """For ops returning (values, indices): the differentiable part."""
    return lambda *a: fn(*a)[0]


def _in_place_chain(a):
    b = a * 1
    b[1:].mul_(a[:1])        # in-place on a view of a non-leaf (CopySlices)
    b.exp_()                 # in-place op whose backward needs its result
    return b


def _setitem_of_a_value(a, v):
    c = a.clone()
    c[:, 1] = v * v          # overwritten region gets v's gradient, not a's
    return c


# (name, function, input shapes, domain, gradgradcheck?)
OPS = [
    # --- in-place ops recorded by autograd --------------------------------------------------
    ("in_place_chain", _in_place_chain, [(3,)], "any", True),
    ("setitem_value", _setitem_of_a_value, [(2, 3), (2,)], "any", True),
    # --- binary arithmetic, with broadcasting --------------------------------------------
    ("add", lambda a, b: a + b, [(2, 3), (3,)], "any", True),
    ("add_alpha", lambda a, b: torch.add(a, b, alpha=2.5), [(2, 1), (1, 3)], "any", True),
    ("add_scalar", lambda a: a + 1.5, [(2, 3)], "any", True),
    ("sub", lambda a, b: a - b, [(2, 3), (2, 3)], "any", True),
    ("sub_alpha", lambda a, b: torch.sub(a, b, alpha=-0.5), [(3,), (2, 3)], "any", True),
    ("rsub", lambda a: 2.0 - a, [(2, 3)], "any", True),
    ("mul", lambda a, b: a * b, [(2, 3), (2, 1)], "any", True),
    ("mul_scalar_tensor", lambda a, b: a * b, [(2, 3), ()], "any", True),
    ("div", lambda a, b: a / b, [(2, 3), (3,)], "pos", True),
    ("rdiv", lambda a: 2.0 / a, [(2, 3)], "pos", True),
    ("pow_tensor", lambda a, b: a ** b, [(2, 3), (2, 3)], "pos", True),
    ("pow_scalar", lambda a: a ** 3, [(2, 3)], "any", True),
    ("pow_frac", lambda a: a ** 1.5, [(2, 3)], "pos", True),
    ("pow_square", lambda a: a ** 2, [(2, 3)], "any", True),
    ("pow_neg", lambda a: torch.pow(a, -2), [(2, 3)], "pos", True),
    ("rpow", lambda a: 2.0 ** a, [(2, 3)], "any", True),
    ("float_power", lambda a: torch.float_power(a, 2.5), [(2, 3)], "pos", True),
    ("maximum", torch.maximum, [(2, 3), (3,)], "any", True),
    ("minimum", torch.minimum, [(2, 3), (2, 3)], "any", True),
    ("fmax", torch.fmax, [(2, 3), (2, 3)], "any", True),
    ("fmin", torch.fmin, [(2, 3), (2, 1)], "any", True),
    ("atan2", torch.atan2, [(2, 3), (2, 3)], "any", True),
    ("hypot", torch.hypot, [(2, 3), (3,)], "any", True),
    ("fmod", torch.fmod, [(2, 3), (2, 3)], "pos", False),
    ("fmod_scalar", lambda a: torch.fmod(a, 0.7), [(2, 3)], "frac", False),
    ("remainder", torch.remainder, [(2, 3), (2, 3)], "pos", False),
    ("copysign", torch.copysign, [(2, 3), (2, 3)], "any", True),
    ("xlogy", torch.xlogy, [(2, 3), (2, 3)], "pos", True),
    ("lerp", lambda a, b: torch.lerp(a, b, 0.3), [(2, 3), (2, 3)], "any", True),
    ("addcmul", lambda a, b, c: torch.addcmul(a, b, c, value=0.5), [(2, 3), (3,), (2, 1)],
     "any", True),
    ("addcdiv", lambda a, b, c: torch.addcdiv(a, b, c, value=2), [(2, 3), (2, 3), (2, 3)],
     "pos", True),
    ("where", lambda a, b: torch.where(a > 0, a, b), [(2, 3), (2, 3)], "any", True),
    ("where_scalar", lambda a: torch.where(a > 0, a, 0.5), [(2, 3)], "any", True),
    ("clamp", lambda a: torch.clamp(a, -0.5, 0.5), [(2, 3)], "any", True),
    ("clamp_min", lambda a: a.clamp(min=0.1), [(2, 3)], "any", True),
    ("clamp_max", lambda a: torch.clamp_max(a, 0.1), [(2, 3)], "any", True),
    ("clamp_tensor", lambda a, lo, hi: torch.clamp(a, lo, hi + 3), [(2, 3), (3,), (3,)],
     "any", True),
    # --- unary math -------------------------------------------------------------------------
    ("neg", torch.neg, [(2, 3)], "any", True),
    ("abs", torch.abs, [(2, 3)], "any", True),
    ("exp", torch.exp, [(2, 3)], "any", True),
    ("exp2", torch.exp2, [(2, 3)], "any", True),
    ("expm1", torch.expm1, [(2, 3)], "any", True),
    ("log", torch.log, [(2, 3)], "pos", True),
    ("log2", torch.log2, [(2, 3)], "pos", True),
    ("log10", torch.log10, [(2, 3)], "pos", True),
    ("log1p", torch.log1p, [(2, 3)], "pos", True),
    ("sqrt", torch.sqrt, [(2, 3)], "pos", True),
    ("rsqrt", torch.rsqrt, [(2, 3)], "pos", True),
    ("square", torch.square, [(2, 3)], "any", True),
    ("reciprocal", torch.reciprocal, [(2, 3)], "pos", True),
    ("sin", torch.sin, [(2, 3)], "any", True),
    ("cos", torch.cos, [(2, 3)], "any", True),
    ("tan", torch.tan, [(2, 3)], "unit", True),
    ("tanh", torch.tanh, [(2, 3)], "any", True),
    ("sigmoid", torch.sigmoid, [(2, 3)], "any", True),
    ("asin", torch.asin, [(2, 3)], "unit", True),
    ("acos", torch.acos, [(2, 3)], "unit", True),
    ("atan", torch.atan, [(2, 3)], "any", True),
    ("sinh", torch.sinh, [(2, 3)], "any", True),
    ("cosh", torch.cosh, [(2, 3)], "any", True),
    ("asinh", torch.asinh, [(2, 3)], "any", True),
    ("acosh", torch.acosh, [(2, 3)], "gt1", True),
    ("atanh", torch.atanh, [(2, 3)], "unit", True),
    ("erf", torch.erf, [(2, 3)], "any", True),
    ("erfc", torch.erfc, [(2, 3)], "any", True),
    ("relu", torch.relu, [(2, 3)], "any", True),
    ("floor", torch.floor, [(2, 3)], "frac", True),
    ("ceil", torch.ceil, [(2, 3)], "frac", True),
    ("round", torch.round, [(2, 3)], "frac", True),
    ("round_decimals", lambda a: torch.round(a, decimals=1), [(2, 3)], "frac", False),
    ("trunc", torch.trunc, [(2, 3)], "frac", True),
    ("frac", torch.frac, [(2, 3)], "frac", True),
    ("sign", torch.sign, [(2, 3)], "any", True),
    ("nan_to_num", torch.nan_to_num, [(2, 3)], "any", True),
    ("silu", E.silu, [(2, 3)], "any", True),
    ("mish", E.mish, [(2, 3)], "any", True),
    ("gelu", E.gelu, [(2, 3)], "any", True),
    ("gelu_tanh", lambda a: E.gelu(a, approximate="tanh"), [(2, 3)], "any", True),
    ("leaky_relu", lambda a: E.leaky_relu(a, 0.2), [(2, 3)], "any", True),
    ("elu", lambda a: E.elu(a, 0.7), [(2, 3)], "any", True),
    ("softplus", lambda a: E.softplus(a, 2.0, 1.0), [(2, 3)], "any", True),
    ("logsigmoid", E.logsigmoid, [(2, 3)], "any", True),
    ("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"), [(2, 3), (2, 3)],
     "pos", False),
    # --- reductions -------------------------------------------------------------------------
    ("sum", torch.sum, [(2, 3)], "any", True),
    ("sum_dim", lambda a: a.sum(1), [(2, 3)], "any", True),
    ("sum_dims_keepdim", lambda a: a.sum((0, 2), keepdim=True), [(2, 3, 2)], "any", True),
    ("sum_neg_dim", lambda a: a.sum(-1), [(3,)], "any", True),
    ("nansum", torch.nansum, [(2, 3)], "any", True),
    ("mean", torch.mean, [(2, 3)], "any", True),
    ("mean_dim", lambda a: a.mean(0, keepdim=True), [(2, 3)], "any", True),
    ("prod", torch.prod, [(2, 3)], "any", True),
    ("prod_dim", lambda a: a.prod(1), [(2, 3)], "any", True),
    ("prod_with_zero", lambda a: (a * torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]],
                                                   dtype=torch.float64)).prod(1),
     [(2, 3)], "any", True),
    ("prod_two_zeros", lambda a: (a * torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64)).prod(),
     [(3,)], "any", True),
    ("max", torch.max, [(2, 3)], "any", True),
    ("min", torch.min, [(2, 3)], "any", True),
    ("max_dim", _first(lambda a: a.max(1)), [(2, 3)], "any", True),
    ("min_dim_keepdim", _first(lambda a: a.min(0, keepdim=True)), [(2, 3)], "any", True),
    ("amax", lambda a: a.amax(1), [(2, 3)], "any", True),
    ("amin", lambda a: a.amin((0, 1)), [(2, 3)], "any", True),
    ("aminmax", lambda a: torch.aminmax(a, dim=0), [(2, 3)], "any", True),
    ("logsumexp", lambda a: torch.logsumexp(a, 1), [(2, 3)], "any", True),
    ("logsumexp_keepdim", lambda a: torch.logsumexp(a, (0, 1), keepdim=True), [(2, 3)],
     "any", True),
    ("softmax", lambda a: torch.softmax(a, 1), [(2, 3)], "any", True),
    ("softmax_dim0", lambda a: a.softmax(0), [(2, 3)], "any", True),
    ("log_softmax", lambda a: torch.log_softmax(a, -1), [(2, 3)], "any", True),
    ("var", torch.var, [(2, 3)], "any", True),
    ("var_dim", lambda a: a.var(1, keepdim=True), [(2, 3)], "any", True),
    ("var_correction0", lambda a: torch.var(a, 0, correction=0), [(2, 3)], "any", True),
    ("std", torch.std, [(2, 3)], "any", True),
    ("std_dim", lambda a: a.std(0), [(2, 3)], "any", True),
    ("var_mean", lambda a: torch.var_mean(a, 1), [(2, 3)], "any", True),
    ("std_mean", lambda a: torch.std_mean(a, 0), [(2, 3)], "any", True),
    ("norm", torch.norm, [(2, 3)], "any", True),
    ("norm_1", lambda a: torch.norm(a, 1, dim=1), [(2, 3)], "any", True),
    ("norm_3", lambda a: torch.norm(a, 3), [(2, 3)], "any", True),
    ("norm_inf", lambda a: torch.norm(a, float("inf"), dim=0), [(2, 3)], "any", True),
    ("cumsum", lambda a: torch.cumsum(a, 1), [(2, 3)], "any", True),
    ("cumsum_dim0", lambda a: a.cumsum(0), [(2, 3)], "any", True),
    ("cumprod", lambda a: torch.cumprod(a, 1), [(2, 3)], "any", True),
    ("cumprod_with_zero", lambda a: (a * torch.tensor([1.0, 0.0, 1.0],
                                                      dtype=torch.float64)).cumprod(0),
     [(3,)], "any", True),
    # --- views and shape ops ---------------------------------------------------------------
    ("view", lambda a: a.view(3, 2), [(2, 3)], "any", True),
    ("view_infer", lambda a: a.view(-1), [(2, 3)], "any", True),
    ("reshape_copy", lambda a: a.t().reshape(6), [(2, 3)], "any", True),
    ("transpose", lambda a: a.transpose(0, 2), [(2, 3, 2)], "any", True),
    ("t", torch.t, [(2, 3)], "any", True),
    ("T", lambda a: a.T, [(2, 3)], "any", True),
    ("mT", lambda a: a.mT, [(2, 2, 3)], "any", True),
    ("permute", lambda a: a.permute(2, 0, 1), [(2, 3, 2)], "any", True),
    ("movedim", lambda a: torch.movedim(a, 0, -1), [(2, 3, 2)], "any", True),
    ("swapaxes", lambda a: torch.swapaxes(a, 0, 1), [(2, 3)], "any", True),
    ("squeeze", lambda a: a.squeeze(), [(2, 1, 3)], "any", True),
    ("squeeze_dim", lambda a: a.squeeze(1), [(2, 1, 3)], "any", True),
    ("unsqueeze", lambda a: a.unsqueeze(1), [(2, 3)], "any", True),
    ("expand", lambda a: a.expand(2, 3, 3), [(3, 1)], "any", True),
    ("broadcast_to", lambda a: torch.broadcast_to(a, (2, 3)), [(3,)], "any", True),
    ("flatten", lambda a: a.flatten(1), [(2, 3, 2)], "any", True),
    ("unflatten", lambda a: a.unflatten(1, (2, 3)), [(2, 6)], "any", True),
    ("narrow", lambda a: a.narrow(1, 1, 2), [(2, 3)], "any", True),
    ("select", lambda a: a.select(1, -1), [(2, 3)], "any", True),
    ("getitem", lambda a: a[1:, ::2], [(3, 4)], "any", True),
    ("getitem_none_ellipsis", lambda a: a[None, ..., 1], [(2, 3)], "any", True),
    ("split", lambda a: torch.split(a, [1, 2], 1), [(2, 3)], "any", True),
    ("chunk", lambda a: a.chunk(2, 0), [(3, 2)], "any", True),
    ("unbind", lambda a: a.unbind(1), [(2, 3)], "any", True),
    ("tensor_split", lambda a: a.tensor_split(2, 1), [(2, 3)], "any", True),
    ("diagonal", lambda a: a.diagonal(1), [(3, 4)], "any", True),
    ("as_strided", lambda a: a.as_strided((2, 2), (1, 2)), [(2, 3)], "any", True),
    ("contiguous", lambda a: a.t().contiguous(), [(2, 3)], "any", True),
    ("clone", torch.clone, [(2, 3)], "any", True),
    ("cat", lambda a, b: torch.cat([a, b], 1), [(2, 3), (2, 2)], "any", True),
    ("cat_dim0", lambda a, b: torch.cat([a, b, a]), [(2, 3), (1, 3)], "any", True),
    ("stack", lambda a, b: torch.stack([a, b], 1), [(2, 3), (2, 3)], "any", True),
    ("hstack", lambda a, b: torch.hstack([a, b]), [(2, 3), (2, 1)], "any", True),
    ("vstack", lambda a, b: torch.vstack([a, b]), [(3,), (2, 3)], "any", True),
    ("flip", lambda a: a.flip(0, 1), [(2, 3)], "any", True),
    ("roll", lambda a: a.roll(1, 1), [(2, 3)], "any", True),
    ("roll_flat", lambda a: torch.roll(a, 2), [(2, 3)], "any", True),
    ("repeat", lambda a: a.repeat(2, 1, 2), [(2, 3)], "any", True),
    ("tile", lambda a: a.tile(2), [(2, 3)], "any", True),
    ("to_same_dtype", lambda a: a.to(torch.float64) * 1, [(2, 3)], "any", True),
    # --- linear algebra -------------------------------------------------------------------
    ("matmul", torch.matmul, [(2, 3), (3, 2)], "any", True),
    ("matmul_batched", torch.matmul, [(2, 2, 3), (2, 3, 2)], "any", True),
    ("matmul_broadcast", torch.matmul, [(2, 2, 3), (3, 2)], "any", True),
    ("matmul_broadcast_left", torch.matmul, [(2, 3), (2, 3, 2)], "any", True),
    ("matmul_vec_mat", torch.matmul, [(3,), (3, 2)], "any", True),
    ("matmul_mat_vec", torch.matmul, [(2, 3), (3,)], "any", True),
    ("matmul_batch_vec", torch.matmul, [(2, 2, 3), (3,)], "any", True),
    ("matmul_op", lambda a, b: a @ b, [(1, 2, 3), (2, 3, 1)], "any", True),
    ("mm", torch.mm, [(2, 3), (3, 2)], "any", True),
    ("linear", torch.nn.functional.linear, [(4, 3), (2, 3), (2,)], "any", True),
    ("linear_no_bias", torch.nn.functional.linear, [(4, 3), (2, 3)], "any", True),
    ("linear_batched", torch.nn.functional.linear, [(2, 4, 3), (2, 3), (2,)], "any", True),
    ("linear_vector", torch.nn.functional.linear, [(3,), (2, 3), (2,)], "any", True),
    ("bmm", torch.bmm, [(2, 2, 3), (2, 3, 2)], "any", True),
    ("dot", torch.dot, [(3,), (3,)], "any", True),
    ("vdot", torch.vdot, [(3,), (3,)], "any", True),
    ("inner", torch.inner, [(3,), (3,)], "any", True),
    ("outer", torch.outer, [(2,), (3,)], "any", True),
    ("mv", torch.mv, [(2, 3), (3,)], "any", True),
    ("addmm", lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2), [(2, 2), (2, 3), (3, 2)],
     "any", True),
    ("baddbmm", torch.baddbmm, [(2, 2, 2), (2, 2, 3), (2, 3, 2)], "any", True),
    ("cross", lambda a, b: torch.cross(a, b, dim=1), [(2, 3), (2, 3)], "any", True),
    ("trace", torch.trace, [(3, 3)], "any", True),
]

IDS = [row[0] for row in OPS]


def _inputs(shapes, domain, noncontig=False):
    return tuple(make(s, domain, seed=i, noncontig=noncontig) for i, s in enumerate(shapes))


@pytest.mark.parametrize("name, fn, shapes, domain, gg", OPS, ids=IDS)
def test_gradcheck(default_device, name, fn, shapes, domain, gg):
    assert gradients_check(fn, _inputs(shapes, domain))


@pytest.mark.parametrize("name, fn, shapes, domain, gg", OPS, ids=IDS)
def test_gradcheck_non_contiguous_inputs(default_device, name, fn, shapes, domain, gg):
    inputs = _inputs(shapes, domain, noncontig=True)
    assert any(not t.is_contiguous() for t in inputs if t.numel() > 1)
    assert gradients_check(fn, inputs)


@pytest.mark.parametrize("name, fn, shapes, domain, gg",
                         [row for row in OPS if row[4]], ids=[row[0] for row in OPS if row[4]])
def test_gradgradcheck(default_device, name, fn, shapes, domain, gg):
    assert second_gradients_check(fn, _inputs(shapes, domain))


def test_every_differentiable_op_is_in_the_table(default_device):
    """A new public op in these modules must get a row (or be listed as not differentiable)."""
    from minitorch.ops import linalg, reduction, registry, views
    not_differentiable = {
        # comparisons, logic, integer-only and index-valued results
        "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
        "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
        "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite",
        "floor_divide", "argmax", "argmin", "all", "any", "count_nonzero", "isclose",
        "allclose", "equal",
        # aliases of ops that have a row
        "absolute", "arccos", "arcsin", "arctan", "arctan2", "clip", "concat", "concatenate",
        "divide", "fix", "ger", "multiply", "negative", "subtract", "true_divide", "moveaxis",
        "swapdims", "arccosh", "arcsinh", "arctanh", "unsafe_chunk", "unsafe_split",
        # not differentiable by nature
        "detach",
    }
    modules = {mod.__name__ for mod in (E, reduction, views, linalg)}
    names = {n for table in (registry.FUNCTIONS, registry.METHODS) for n, fn in table.items()
             if getattr(fn, "__module__", None) in modules}
    rows = {row[0] for row in OPS}
    missing = sorted(n for n in names - not_differentiable
                     if n not in rows and not any(r.startswith(n + "_") for r in rows))
    assert not missing, f"ops without a gradcheck row: {missing}"


# ---------------------------------------------------------------------------
# gradcheck itself
# ---------------------------------------------------------------------------
class _WrongBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g          # should be 2 * g


def test_gradcheck_detects_a_wrong_backward(default_device):
    x = make((2,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect "
                                             "to input 0") as info:
        gradcheck(_WrongBackward.apply, (x,))
    assert "numerical:" in str(info.value) and "analytical:" in str(info.value)
    assert issubclass(GradcheckError, RuntimeError)
    assert gradcheck(_WrongBackward.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_detects_a_backward_that_is_not_differentiable(default_device):
    class CubeWithConstantBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2     # detached: second derivative lost

    x = make((3,))
    assert gradcheck(CubeWithConstantBackward.apply, (x,))
    with pytest.raises(GradcheckError):
        gradgradcheck(CubeWithConstantBackward.apply, (x,))


def test_gradcheck_warns_for_float32_inputs(default_device):
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        gradcheck(torch.exp, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_gradcheck_needs_an_input_that_requires_grad(default_device):
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(torch.exp, (torch.ones(2, dtype=torch.float64),))


def test_gradcheck_refuses_overlapping_inputs(default_device):
    x = torch.ones(1, dtype=torch.float64).expand(3).detach().requires_grad_(True)
    with pytest.raises(RuntimeError, match="stride 0"):
        gradcheck(torch.exp, (x,))


def test_gradcheck_accepts_non_tensor_arguments_and_a_single_tensor(default_device):
    x = make((2, 3))
    assert gradcheck(lambda a, k, flag: a.sum(k) if flag else a, (x, 1, True))
    assert gradcheck(torch.sin, x)


def test_gradcheck_output_that_does_not_require_grad_must_not_depend_on_input(default_device):
    x = make((3,))

    def leaky(a):
        with torch.no_grad():
            return a * 2                   # depends on a but is cut from the graph

    with pytest.raises(GradcheckError, match="expected to be zero"):
        gradcheck(lambda a: (a * 1, leaky(a)), (x,))


def test_gradcheck_non_reentrant_backward(default_device):
    calls = []

    class Noisy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (1 + 1e-3 * len(calls))

    with pytest.raises(GradcheckError, match="not reentrant|Jacobian mismatch"):
        gradcheck(Noisy.apply, (make((2,)),), rtol=1e-1, atol=1e-1)


def test_gradcheck_skips_integer_outputs_in_any_position(default_device):
    x = make((2, 3))
    assert gradcheck(lambda a: (a.argmax(1), a.max(1).values, a.max(1).indices), (x,))


def test_gradcheck_leaves_inputs_unchanged_and_returns_true(default_device):
    x = make((2, 3), noncontig=True)
    before = x.detach().cpu().numpy().copy()
    assert gradcheck(lambda a: a.exp().sum(), (x,)) is True
    np.testing.assert_array_equal(x.detach().cpu().numpy(), before)
    assert x.grad is None


def test_gradcheck_with_explicit_grad_outputs_in_gradgradcheck(default_device):
    x = make((2, 3))
    g = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    assert gradgradcheck(lambda a: a ** 3, (x,), (g,))
    assert gradgradcheck(lambda a: a ** 3, (x,), gen_non_contig_grad_outputs=True)
