"""Tests for ``minitorch._printing``: tensors must print exactly like PyTorch.

Two kinds of tests live here:

* fixed examples whose expected text was copied from real PyTorch 2.x
  output; they run without torch installed;
* property tests that build random NumPy arrays with hypothesis and compare
  ``format_tensor`` with ``repr(torch.from_numpy(array))`` character by
  character (skipped when torch is missing).

In the comparisons with torch we hand ``format_tensor`` suffixes spelled
``dtype=torch.float64`` rather than ``dtype=minitorch.float64``.  Replacing
the name afterwards would not be fair: "minitorch." is four characters
longer, which legitimately moves line breaks near ``linewidth``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minitorch._printing import format_tensor, get_printoptions, set_printoptions

pytestmark = pytest.mark.tensor

DEFAULT_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3,
                   "linewidth": 80, "sci_mode": None}

# The autouse fixture below resets the options around every test, and each
# hypothesis example resets them itself (see `printoptions`), so sharing the
# fixture between examples is harmless.
PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture,
                           HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _reset_all_printoptions() -> None:
    set_printoptions(profile="default")
    torch = sys.modules.get("torch")   # only touch torch if a test imported it
    if torch is not None:
        torch.set_printoptions(profile="default")


@pytest.fixture(autouse=True)
def _default_printoptions() -> Iterator[None]:
    _reset_all_printoptions()
    yield
    _reset_all_printoptions()


@contextmanager
def printoptions(torch: Any, **options: Any) -> Iterator[None]:
    """Apply the same print options to minitorch and to torch, then undo."""
    set_printoptions(**options)
    torch.set_printoptions(**options)
    try:
        yield
    finally:
        _reset_all_printoptions()


# ---------------------------------------------------------------------------
# Helpers: what a minitorch Tensor would pass, and what torch prints
# ---------------------------------------------------------------------------

def kind_of(array: np.ndarray) -> str:
    if array.dtype == np.bool_:
        return "bool"
    return "float" if array.dtype.kind == "f" else "int"


def dtype_suffixes(array: np.ndarray, module: str = "minitorch") -> list[str]:
    """The dtype suffix PyTorch shows: float32, int64 and bool are implied by
    the printed values, except for empty tensors where only float32 is."""
    name = array.dtype.name            # 'float64', 'int8', 'bool', ...
    implied = ("float32",) if array.size == 0 else ("float32", "int64", "bool")
    return [] if name in implied else [f"dtype={module}.{name}"]


def tensor_from(torch: Any, array: np.ndarray) -> Any:
    # from_numpy shares memory and refuses some layouts: give it a fresh copy.
    return torch.from_numpy(np.array(array, copy=True, order="C"))


def ours(array: np.ndarray, extra: list[str] | None = None,
         module: str = "minitorch", **kwargs: Any) -> str:
    """What a minitorch Tensor holding ``array`` would print."""
    return format_tensor(array, kind=kind_of(array),
                         suffixes=dtype_suffixes(array, module) + (extra or []), **kwargs)


def as_torch(array: np.ndarray, extra: list[str] | None = None, **kwargs: Any) -> str:
    """Like `ours`, but with the dtype spelled as torch spells it."""
    return ours(array, extra, module="torch", **kwargs)


# ---------------------------------------------------------------------------
# Hypothesis strategies
# ---------------------------------------------------------------------------

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8]


@st.composite
def float_arrays(draw: st.DrawFn, max_dims: int = 4, max_side: int = 5) -> np.ndarray:
    """Float arrays whose values trigger every formatting style.

    Each array mixes a random subset of value families, so we get arrays of
    whole numbers (``3.``), of decimals at one scale (fixed point), of wildly
    different magnitudes (scientific) and special values (nan, inf, -0.).
    """
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims,
                                  min_side=0, max_side=max_side))
    scale = 10.0 ** draw(st.integers(-12, 12))
    families = [
        st.integers(-1000, 1000).map(float),
        st.integers(-1000, 1000).map(lambda i: i * max(scale, 1.0)),
        st.integers(-10**5, 10**5).map(lambda i: i / 1000 * scale),
        st.floats(-100, 100, allow_nan=False),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf]),
    ]
    chosen = draw(st.lists(st.sampled_from(families), min_size=1, max_size=3))
    values = draw(hnp.arrays(np.float64, shape, elements=st.one_of(*chosen)))
    with np.errstate(over="ignore"):      # float16 overflows to inf: fine
        return values.astype(dtype)


@st.composite
def int_arrays(draw: st.DrawFn, max_dims: int = 4, max_side: int = 5) -> np.ndarray:
    dtype = draw(st.sampled_from(INT_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims,
                                  min_side=0, max_side=max_side))
    return draw(hnp.arrays(dtype, shape))


@st.composite
def bool_arrays(draw: st.DrawFn, max_dims: int = 4, max_side: int = 5) -> np.ndarray:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims,
                                  min_side=0, max_side=max_side))
    return draw(hnp.arrays(np.bool_, shape))


def any_arrays(max_dims: int = 4, max_side: int = 5) -> st.SearchStrategy[np.ndarray]:
    return st.one_of(float_arrays(max_dims, max_side), int_arrays(max_dims, max_side),
                     bool_arrays(max_dims, max_side))


print_options = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 10),
    "threshold": st.integers(0, 80),
    "edgeitems": st.integers(0, 4),
    "linewidth": st.integers(5, 140),
    "sci_mode": st.sampled_from([None, True, False]),
    "profile": st.sampled_from(["default", "short", "full"]),
})


# ---------------------------------------------------------------------------
# Fixed examples (no torch needed); expected text copied from PyTorch 2.x
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("array, expected", [
    (np.array([[1.0, 2.0]], dtype=np.float32), "tensor([[1., 2.]])"),
    (np.array([1, 2]), "tensor([1, 2])"),
    (np.array(3.0, dtype=np.float32), "tensor(3.)"),
    (np.array(True), "tensor(True)"),
    (np.array([True, False]), "tensor([ True, False])"),
    (np.array([0.1, 2.25, -3.5], dtype=np.float32), "tensor([ 0.1000,  2.2500, -3.5000])"),
    (np.array([1e-5, 1.0], dtype=np.float32), "tensor([1.0000e-05, 1.0000e+00])"),
    (np.array([1e9, 1.0], dtype=np.float32), "tensor([1.0000e+09, 1.0000e+00])"),
    (np.array([123456789.0, 1.0], dtype=np.float32), "tensor([1.2346e+08, 1.0000e+00])"),
    (np.array([1.0, math.nan, -math.inf], dtype=np.float32), "tensor([1., nan, -inf])"),
    (np.array([-0.0, 0.0], dtype=np.float32), "tensor([-0., 0.])"),
    (np.zeros(0, dtype=np.float32), "tensor([])"),
    (np.zeros((0, 3)), "tensor([], size=(0, 3), dtype=minitorch.float64)"),
    (np.zeros(0, dtype=np.int64), "tensor([], dtype=minitorch.int64)"),
    (np.array([0.5, 1.0], dtype=np.float16), "tensor([0.5000, 1.0000], dtype=minitorch.float16)"),
    (np.arange(8).reshape(2, 2, 2),
     "tensor([[[0, 1],\n"
     "         [2, 3]],\n"
     "\n"
     "        [[4, 5],\n"
     "         [6, 7]]])"),
    (np.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (np.arange(30, dtype=np.float64) / 7,
     "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
     "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
     "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
     "        3.8571, 4.0000, 4.1429], dtype=minitorch.float64)"),
    # The dtype no longer fits on the last line, so it wraps.
    (np.full(8, 1.5),
     "tensor([1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000],\n"
     "       dtype=minitorch.float64)"),
])
def test_known_outputs(default_device, array: np.ndarray, expected: str) -> None:
    assert ours(array) == expected


def test_summarised_matrix(default_device) -> None:
    # torch.arange(2000.).reshape(40, 50): summarised in both dimensions, and
    # 49 / 0 is irrelevant but 1999 / 1 > 1000 switches to scientific notation.
    expected = (
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
        "         4.9000e+01],\n"
        "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
        "         9.9000e+01],\n"
        "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
        "         1.4900e+02],\n"
        "        ...,\n"
        "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
        "         1.8990e+03],\n"
        "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
        "         1.9490e+03],\n"
        "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
        "         1.9990e+03]])"
    )
    assert ours(np.arange(2000, dtype=np.float32).reshape(40, 50)) == expected


def test_summarised_3d_with_small_threshold(default_device) -> None:
    set_printoptions(threshold=5, edgeitems=1)
    assert ours(np.arange(24).reshape(2, 3, 4)) == (
        "tensor([[[ 0,  ...,  3],\n"
        "         ...,\n"
        "         [ 8,  ..., 11]],\n"
        "\n"
        "        [[12,  ..., 15],\n"
        "         ...,\n"
        "         [20,  ..., 23]]])"
    )


def test_caller_suffixes_follow_the_data(default_device) -> None:
    grad = np.array([0.0, 2.0, 4.0], dtype=np.float32)
    assert ours(grad, ["grad_fn=<MulBackward0>"]) == "tensor([0., 2., 4.], grad_fn=<MulBackward0>)"
    matrix = np.full((2, 9), 1.5)
    assert ours(matrix, ["requires_grad=True"]) == (
        "tensor([[1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000],\n"
        "        [1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000]],\n"
        "       dtype=minitorch.float64, requires_grad=True)"
    )


def test_parameter_prefix(default_device) -> None:
    text = ours(np.array([1.0, 2.0], dtype=np.float32), ["requires_grad=True"],
                prefix="Parameter containing:\ntensor(")
    assert text == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_explicit_indent(default_device) -> None:
    text = format_tensor(np.arange(4).reshape(2, 2), kind="int", suffixes=[],
                         prefix="T(", indent=4)
    assert text == "T([[0, 1],\n     [2, 3]])"


def test_edgeitems_zero_hides_data_and_shows_size_after_device(default_device) -> None:
    set_printoptions(edgeitems=0)
    # Copied from torch: the size is shown even when nothing is summarised.
    assert ours(np.arange(5, dtype=np.float32)) == "tensor([0., 1., 2., 3., 4.], size=(5,))"
    # PyTorch appends "device=" before "size=" and the dtype after it.
    text = format_tensor(np.arange(2000.0), kind="float",
                         suffixes=["device='cuda:0'", "dtype=minitorch.float64"])
    assert text == "tensor([...], device='cuda:0', size=(2000,), dtype=minitorch.float64)"


def test_precision_and_forced_sci_mode(default_device) -> None:
    set_printoptions(precision=2, sci_mode=True)
    assert ours(np.array([1.0, 2.5], dtype=np.float32)) == "tensor([1.00e+00, 2.50e+00])"
    set_printoptions(profile="default", sci_mode=False)
    assert ours(np.array([1e-5, 1.0], dtype=np.float32)) == "tensor([0.0000, 1.0000])"


def test_short_profile(default_device) -> None:
    set_printoptions(profile="short")
    assert ours(np.arange(2000, dtype=np.float32) / 3) == (
        "tensor([0.00e+00, 3.33e-01,  ..., 6.66e+02, 6.66e+02])")


def test_full_profile_never_summarises(default_device) -> None:
    set_printoptions(profile="full")
    assert "..." not in ours(np.arange(1001))
    assert ours(np.arange(1001)).count(",") == 1000


def test_linewidth_wraps_vectors(default_device) -> None:
    set_printoptions(linewidth=30)
    assert ours(np.arange(12, dtype=np.float32)) == (
        "tensor([ 0.,  1.,  2.,  3.,\n"
        "         4.,  5.,  6.,  7.,\n"
        "         8.,  9., 10., 11.])"
    )


def test_get_printoptions_defaults_and_copy(default_device) -> None:
    options = get_printoptions()
    assert options == DEFAULT_OPTIONS
    options["precision"] = 99          # a copy: changing it changes nothing
    assert get_printoptions() == DEFAULT_OPTIONS


def test_set_printoptions_profiles_and_overrides(default_device) -> None:
    set_printoptions(profile="short")
    assert get_printoptions() == {**DEFAULT_OPTIONS, "precision": 2, "edgeitems": 2}
    set_printoptions(profile="full", precision=6)   # explicit option beats profile
    assert get_printoptions() == {**DEFAULT_OPTIONS, "precision": 6, "threshold": math.inf}
    set_printoptions(linewidth=100, sci_mode=True)
    assert get_printoptions()["sci_mode"] is True
    set_printoptions(precision=3)      # like torch: sci_mode falls back to None
    assert get_printoptions() == {**DEFAULT_OPTIONS, "precision": 3,
                                  "threshold": math.inf, "linewidth": 100}
    set_printoptions(profile="no-such-profile")     # ignored, as in torch
    assert get_printoptions()["precision"] == 3
    set_printoptions(profile="default")
    assert get_printoptions() == DEFAULT_OPTIONS


def test_unknown_kind_is_rejected(default_device) -> None:
    with pytest.raises(ValueError, match="kind"):
        format_tensor(np.array([1.0]), kind="complex", suffixes=[])


def test_kind_decides_the_style(default_device) -> None:
    # A tensor's dtype category wins over the NumPy dtype that carries it.
    assert format_tensor(np.array([1, 2]), kind="float", suffixes=[]) == "tensor([1., 2.])"
    assert format_tensor(np.array([1, 0]), kind="bool", suffixes=[]) == "tensor([ True, False])"


# ---------------------------------------------------------------------------
# Property tests against PyTorch
# ---------------------------------------------------------------------------

@PROPERTY_SETTINGS
@given(array=any_arrays())
def test_matches_torch_with_default_options(default_device, array: np.ndarray) -> None:
    torch = pytest.importorskip("torch")
    assert as_torch(array) == repr(tensor_from(torch, array))


@PROPERTY_SETTINGS
@given(array=any_arrays(max_dims=4, max_side=8), options=print_options)
def test_matches_torch_with_printoptions(default_device, array: np.ndarray, options: dict) -> None:
    torch = pytest.importorskip("torch")
    with printoptions(torch, **options):
        assert as_torch(array) == repr(tensor_from(torch, array))


@PROPERTY_SETTINGS
@given(array=float_arrays(), options=print_options, use_grad_fn=st.booleans())
def test_matches_torch_with_autograd_suffixes(default_device, array: np.ndarray, options: dict,
                                              use_grad_fn: bool) -> None:
    torch = pytest.importorskip("torch")
    leaf = tensor_from(torch, array).requires_grad_()
    if use_grad_fn:
        tensor, extra = leaf * 1, ["grad_fn=<MulBackward0>"]
    else:
        tensor, extra = leaf, ["requires_grad=True"]
    with printoptions(torch, **options):
        assert as_torch(array, extra) == repr(tensor)


@PROPERTY_SETTINGS
@given(array=float_arrays(), options=print_options)
def test_matches_torch_parameter_repr(default_device, array: np.ndarray, options: dict) -> None:
    torch = pytest.importorskip("torch")
    parameter = torch.nn.Parameter(tensor_from(torch, array))
    with printoptions(torch, **options):
        expected = repr(parameter)
        assert as_torch(array, ["requires_grad=True"],
                    prefix="Parameter containing:\ntensor(") == expected


@pytest.mark.parametrize("shape", [(2000,), (40, 50), (3, 400), (1, 1001),
                                   (11, 11, 11), (2, 3, 4, 50), (1000,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int16, np.bool_])
def test_large_arrays_match_torch(default_device, shape: tuple[int, ...], dtype: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(sum(shape))
    array = (rng.standard_normal(shape) * 50).astype(dtype)
    assert as_torch(array) == repr(tensor_from(torch, array))


@pytest.mark.parametrize("profile", ["default", "short", "full"])
def test_profiles_match_torch(default_device, profile: str) -> None:
    torch = pytest.importorskip("torch")
    with printoptions(torch, profile=profile):
        assert get_printoptions() == torch._tensor_str.get_printoptions()
        array = np.arange(1500, dtype=np.float32).reshape(30, 50) / 7
        assert as_torch(array) == repr(tensor_from(torch, array))
