"""The CPU reduction kernels (``minitorch/backends/cpu/reduce.py``) against NumPy.

Each reduction takes one of two kernels of its family (``*_strided`` or
``*_cols``) and, inside ``*_strided``, contiguous runs or runs gathered from
strided memory, chosen by the layout.  So the inputs here vary what decides that
choice: shapes large enough for whole vector loops plus leftovers, layouts
(contiguous, transposed, sliced, broadcast), which dims are reduced, and
dtypes (float32, float64, int64, int32, bool).  Floats may hold NaN, which
must win in max/min.  Sizes past the splitting threshold check that
partial results are combined correctly.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitorch as torch
from minitorch.backends.cpu import reduce as rd

pytestmark = pytest.mark.kernels

SETTINGS = settings(max_examples=40, deadline=None)
DTYPES = {"float32": (np.float32, torch.float32), "float64": (np.float64, torch.float64),
          "int64": (np.int64, torch.int64), "int32": (np.int32, torch.int32),
          "bool": (np.bool_, torch.bool)}


@st.composite
def layouts(draw, dtype_names=tuple(DTYPES), max_side=40, nan=True):
    """``(array, tensor)`` holding the same values; the tensor in a random layout."""
    name = draw(st.sampled_from(dtype_names))
    np_dt, t_dt = DTYPES[name]
    ndim = draw(st.integers(1, 3))
    side = max_side if ndim < 3 else 12
    shape = draw(hnp.array_shapes(min_dims=ndim, max_dims=ndim, min_side=0, max_side=side))
    if name == "bool":
        elements = st.booleans()
    elif name.startswith("int"):
        elements = st.integers(-1000, 1000)
    else:
        elements = st.floats(-4, 4, width=32)
        if nan and draw(st.booleans()):
            elements = st.one_of(elements, st.just(float("nan")))
    arr = draw(hnp.arrays(np_dt, shape, elements=elements))
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced", "broadcast"]))
    if layout == "transposed":
        perm = tuple(reversed(range(ndim)))
        arr_t = np.ascontiguousarray(arr.transpose(perm))
        return arr, torch.tensor(arr_t, dtype=t_dt).permute(*perm)
    if layout == "sliced":
        axis = draw(st.integers(0, ndim - 1))
        big = np.repeat(arr, 2, axis=axis)          # every other element along axis
        index = tuple(slice(None, None, 2) if d == axis else slice(None) for d in range(ndim))
        return arr, torch.tensor(big, dtype=t_dt)[index]
    if layout == "broadcast" and shape[0] > 1:
        arr = np.broadcast_to(arr[:1], shape)
        return arr, torch.tensor(np.ascontiguousarray(arr[:1]), dtype=t_dt).expand(*shape)
    return arr, torch.tensor(arr, dtype=t_dt)


@st.composite
def dims_of(draw, ndim):
    """None (everything), one dim, or a tuple of distinct dims."""
    kind = draw(st.sampled_from(["all", "one", "tuple"]))
    if kind == "all":
        return None
    if kind == "one":
        return draw(st.integers(0, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim,
                               unique=True)))


def reduced_size(shape, dim):
    if dim is None:
        return int(np.prod(shape))
    return int(np.prod([shape[d] for d in np.atleast_1d(dim)]))


def assert_sum_close(got, want_f64, arr):
    """float32 results: float64 accumulation, then one rounding to float32."""
    got = np.asarray(got, np.float64)
    scale = np.sum(np.abs(np.nan_to_num(arr.astype(np.float64))), keepdims=True)
    np.testing.assert_allclose(got, want_f64, rtol=2e-7, atol=1e-12 + 1e-7 * float(scale.max()),
                               equal_nan=True)


@SETTINGS
@given(data=st.data())
def test_sum_matches_numpy(data):
    arr, t = data.draw(layouts())
    dim = data.draw(dims_of(arr.ndim))
    got = (t.sum() if dim is None else t.sum(dim)).numpy()
    if arr.dtype.kind in "bi":
        want = np.sum(arr, axis=dim, dtype=np.int64)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)
    else:
        assert got.dtype == arr.dtype
        assert_sum_close(got, np.sum(arr.astype(np.float64), axis=dim), arr)


@SETTINGS
@given(data=st.data())
def test_amax_amin_match_numpy_with_nan_winning(data):
    arr, t = data.draw(layouts())
    dim = data.draw(dims_of(arr.ndim))
    if reduced_size(arr.shape, dim) == 0:
        return                       # max of nothing is an error (tested elsewhere)
    dims = tuple(range(arr.ndim)) if dim is None else dim
    for mt, ref in ((t.amax, np.max), (t.amin, np.min)):
        got = mt(dims).numpy()
        want = ref(arr, axis=dim)
        assert got.dtype == arr.dtype
        np.testing.assert_array_equal(got, want)    # NaN == NaN here


@SETTINGS
@given(data=st.data())
def test_max_with_indices_picks_the_first(data):
    # Small integers make ties common: the index must be the first maximum.
    arr, t = data.draw(layouts(dtype_names=("float32", "int32"), max_side=30))
    if arr.dtype.kind == "i":
        arr = arr % 3
        t = torch.tensor(np.ascontiguousarray(arr), dtype=torch.int32)
    dim = data.draw(st.integers(0, arr.ndim - 1))
    if arr.shape[dim] == 0:
        return
    got = t.max(dim)
    np.testing.assert_array_equal(got.values.numpy(), np.max(arr, axis=dim))
    np.testing.assert_array_equal(got.indices.numpy(), np.argmax(arr, axis=dim))
    got = t.min(dim)
    np.testing.assert_array_equal(got.values.numpy(), np.min(arr, axis=dim))
    np.testing.assert_array_equal(got.indices.numpy(), np.argmin(arr, axis=dim))


@SETTINGS
@given(data=st.data())
def test_all_any_match_numpy(data):
    arr, t = data.draw(layouts())
    dim = data.draw(dims_of(arr.ndim))
    if isinstance(dim, tuple):
        dim = dim[0]                 # all/any take one dim
    for mt, ref in ((torch.all, np.all), (torch.any, np.any)):
        got = (mt(t) if dim is None else mt(t, dim)).numpy()
        np.testing.assert_array_equal(got, ref(arr, axis=dim))


@SETTINGS
@given(data=st.data())
def test_prod_matches_numpy(data):
    arr, t = data.draw(layouts(dtype_names=("float32", "float64", "int64", "bool"),
                               max_side=12))
    if arr.dtype.kind == "f":        # factors 0.96 to 1.04: 1728 of them stay in float32's range
        arr = (1 + arr / 100).astype(arr.dtype)
        t = torch.tensor(np.ascontiguousarray(arr), dtype=t.dtype)
    elif arr.dtype.kind == "i":
        arr = np.sign(arr)
        t = torch.tensor(np.ascontiguousarray(arr), dtype=t.dtype)
    dim = data.draw(st.one_of(st.none(), st.integers(0, arr.ndim - 1)))
    got = (t.prod() if dim is None else t.prod(dim)).numpy()
    if arr.dtype.kind in "bi":
        np.testing.assert_array_equal(got, np.prod(arr, axis=dim, dtype=np.int64))
    else:
        np.testing.assert_allclose(got, np.prod(arr.astype(np.float64), axis=dim), rtol=1e-5,
                                   equal_nan=True)


# ---------------------------------------------------------------------------
# Large inputs: split segments, wide column blocks, many rows.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(300_001,), (3, 100_003), (100_003, 3), (1031, 1029),
                                   (4, 33, 1500), (70_000, 9)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_large_sums_and_extrema(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    if dtype == "float32":
        arr = rng.standard_normal(shape).astype(np.float32)
    else:
        arr = rng.integers(-2**31, 2**31 - 1, shape, dtype=np.int64).astype(np.int32)
    layouts_ = [torch.tensor(arr)]
    if arr.ndim == 2:                # the same values read through .T
        layouts_.append(torch.tensor(np.ascontiguousarray(arr.T)).T)
    for t in layouts_:
        for dim in [None] + list(range(arr.ndim)):
            got = (t.sum() if dim is None else t.sum(dim)).numpy()
            if dtype == "float32":
                assert_sum_close(got, np.sum(arr.astype(np.float64), axis=dim), arr)
            else:                    # int32 sums accumulate (and come back) in int64
                np.testing.assert_array_equal(got, np.sum(arr, axis=dim, dtype=np.int64))
            dims = tuple(range(arr.ndim)) if dim is None else dim
            np.testing.assert_array_equal(t.amax(dims).numpy(), np.max(arr, axis=dim))
            np.testing.assert_array_equal(t.amin(dims).numpy(), np.min(arr, axis=dim))


def test_float32_sums_accumulate_in_float64():
    # A float32 accumulator would drift by about 1e-3 relative here.
    arr = np.full(1 << 21, 0.1, np.float32)
    want = float(np.sum(arr.astype(np.float64)))
    t = torch.tensor(arr)
    assert abs(t.sum().item() - want) <= 1e-6 * want
    cols = torch.tensor(arr.reshape(-1, 64))
    np.testing.assert_allclose(cols.sum(0).numpy(), arr.reshape(-1, 64).astype(np.float64).sum(0),
                               rtol=1e-7)
    rows = torch.tensor(arr.reshape(64, -1))
    np.testing.assert_allclose(rows.sum(1).numpy(), arr.reshape(64, -1).astype(np.float64).sum(1),
                               rtol=1e-7)


@pytest.mark.parametrize("where", [0, 1, 77_777, 299_999])
def test_nan_wins_in_every_segment_and_block(where):
    arr = np.random.default_rng(where).standard_normal(300_000).astype(np.float32)
    arr[where] = np.nan
    t = torch.tensor(arr)
    for got in (t.max(), t.min(), t.amax(0), t.sum()):
        assert np.isnan(got.item())
    assert t.argmax().item() == where and t.argmin().item() == where
    cols = torch.tensor(arr.reshape(-1, 100))     # the NaN lands in column where % 100
    col = where % 100
    for got in (cols.amax(0).numpy(), cols.amin(0).numpy(), cols.sum(0).numpy()):
        assert np.isnan(got[col]) and np.isnan(got).sum() == 1


def test_empty_reductions_give_the_identity():
    for dtype in (torch.float32, torch.int64, torch.bool):
        e = torch.zeros((0, 5), dtype=dtype)
        assert e.sum(0).tolist() == [0] * 5
        assert e.prod(0).tolist() == [1] * 5
        assert e.all(0).tolist() == [True] * 5
        assert e.any(0).tolist() == [False] * 5
        assert e.sum().item() == 0


def test_plans():
    assert rd.plan_split(1000, 100, 8) == 1
    assert rd.plan_split(1, 10_000_000, 8) > 1
    assert rd.plan_cols(1, 1024, 1) == 1024
    assert rd.plan_cols(1, 1024, 2) == 512
    assert rd.plan_cols(1, 5000, 1) == rd.COL_BLOCK
    assert rd.plan_cols(8, 100, 2) == 100
    assert rd.plan_cols(1, 20, 4) == 16


@pytest.mark.parametrize("threads", [1, 2])
def test_results_do_not_depend_on_the_thread_plan(threads):
    # The plans (segments per output, columns per task) depend on the thread
    # count; the answers must not, beyond float rounding.
    import numba
    threads = min(threads, numba.config.NUMBA_NUM_THREADS)
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        arr = np.random.default_rng(threads).standard_normal((700, 1500)).astype(np.float32)
        arr[5, 7] = np.nan
        t = torch.tensor(arr)
        for dim in (None, 0, 1):
            got = (t.sum() if dim is None else t.sum(dim)).numpy()
            assert_sum_close(got, np.sum(arr.astype(np.float64), axis=dim), arr)
            dims = (0, 1) if dim is None else dim
            np.testing.assert_array_equal(t.amax(dims).numpy(), np.max(arr, axis=dim))
        np.testing.assert_array_equal(t.argmax(1).numpy(), np.argmax(arr, axis=1))
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("step", [1, 2, 3, 4, 5])
def test_column_reductions_of_sliced_columns(step):
    # Columns `step` apart: up to MAX_COL_STEP the *_cols kernels reduce the
    # columns in between too and keep every step-th result; beyond, *_strided.
    rng = np.random.default_rng(step)
    arr = rng.standard_normal((37, 6, 8 * step + 3)).astype(np.float32)
    arr[5, 2, 0] = np.nan
    arr[7, 1, step] = np.nan
    view = arr[..., ::step]
    t = torch.tensor(arr)[..., ::step]
    for dim in (0, 1, (0, 1)):
        np.testing.assert_array_equal(t.amax(dim).numpy(), np.max(view, axis=dim))
        np.testing.assert_array_equal(t.amin(dim).numpy(), np.min(view, axis=dim))
        assert_sum_close(t.sum(dim).numpy(), np.sum(view.astype(np.float64), axis=dim), view)
