"""Course module 1, tensors: index <-> position, strides, broadcasting, the view rule.

Each test calls its task's function directly (``minitorch/layout.py``), with
NumPy as the oracle, so that it fails with that task's message in a student
edition.  ``minitorch course test 1.3`` runs the tests of one task.

Tasks 1.1 and 1.2 are also run by every strided kernel of the engine,
compiled by Numba (``index_maps.position``, ``cpu/odometer.py``): their tests
compile them as the kernels do, on the CPU's int64 arrays (about 1 s each,
once per process).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import njit
from numba.core.errors import NumbaError

from minitorch import layout

pytestmark = pytest.mark.tensor

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


def _numpy_strides(shape: tuple) -> tuple:
    return tuple(s // 8 for s in np.empty(shape, dtype=np.float64).strides)


@st.composite
def strided_views(draw, max_dims=4):
    """A random view of ``np.arange``: sliced (steps of any sign), transposed, maybe expanded.

    Returns ``(base, view)``: ``view[index]`` is the storage position it reads.
    """
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=max_dims)))
    base = np.arange(int(np.prod(shape)), dtype=np.int64)
    view = base.reshape(shape)
    slices = tuple(slice(None, None, draw(st.sampled_from([1, 2, -1, -2]))) for _ in shape)
    view = view[slices] if slices else view     # ``x[()]`` of a 0-d array is a number
    view = view.transpose(draw(st.permutations(range(len(shape)))))
    if view.ndim < max_dims and draw(st.booleans()):
        # A new size-1 dim (NumPy gives it stride 0): its stride must never matter.
        at = draw(st.integers(0, view.ndim))
        view = view[(slice(None),) * at + (None,)]
    return base, view


def _header(base, view):
    """``(shape, strides, offset)`` of a NumPy view of ``base``, in elements."""
    strides = tuple(s // base.itemsize for s in view.strides)
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) \
        // base.itemsize
    return view.shape, strides, offset


@pytest.mark.task("1.1")
def test_index_to_position_examples():
    assert layout.index_to_position((1, 2), (3, 1)) == 5
    assert layout.index_to_position((1, 2), (1, 2)) == 5       # a transposed (2, 3) matrix
    assert layout.index_to_position((0, 0, 0), (12, 4, 1), offset=7) == 7
    assert layout.index_to_position((), ()) == 0


@pytest.mark.task("1.1")
@settings(max_examples=30, deadline=None)
@given(shapes, st.data())
def test_index_to_position_matches_numpy(shape, data):
    index = tuple(data.draw(st.integers(0, s - 1)) for s in shape)
    arr = np.arange(int(np.prod(shape))).reshape(shape)
    assert layout.index_to_position(index, _numpy_strides(shape)) == arr[index]


@pytest.mark.task("1.1")
@settings(max_examples=60, deadline=None)
@given(strided_views(), st.data())
def test_index_to_position_of_any_view_matches_numpy(views, data):
    # Negative and transposed strides, and an offset: the view's elements are their positions.
    base, view = views
    shape, strides, offset = _header(base, view)
    index = tuple(data.draw(st.integers(0, s - 1)) for s in shape)
    assert layout.index_to_position(index, strides, offset) == view[index]
    assert layout.index_to_position(list(index), list(strides), offset) == view[index]


def _compiled(fn):
    """``fn`` compiled by Numba as the kernels compile it; a function Numba cannot compile
    fails the test in one line (the kernels could not run it either)."""
    compiled = njit(fn)

    def run(*args):
        try:
            return compiled(*args)
        except NumbaError as e:
            first = str(e).strip().splitlines()[0]
            pytest.fail(f"layout.{fn.__name__} must compile with Numba (every strided kernel "
                        f"runs it): write it as a loop over the dims that indexes its arguments"
                        f" ({type(e).__name__}: {first})", pytrace=False)
    return run


@pytest.mark.task("1.1")
def test_index_to_position_compiles_for_the_kernels():
    # The CPU passes strides as int64 arrays; a GPU thread as tuples.
    i64 = np.int64
    run = _compiled(layout.index_to_position)
    assert run(np.array([1, 2], i64), np.array([3, 1], i64), 0) == 5
    assert run(np.array([2, 1, 0], i64), np.array([-1, 3, 0], i64), 9) == 10
    assert run((1, 2), (1, 2), 4) == 9


@pytest.mark.task("1.2")
def test_to_index_writes_the_index():
    out = [9, 9]
    assert layout.to_index(5, (2, 3), out) is None
    assert out == [1, 2]
    out = np.full(3, -1, np.int64)
    layout.to_index(23, np.array([2, 3, 4]), out)
    assert out.tolist() == [1, 2, 3]


@pytest.mark.task("1.2")
def test_to_index_compiles_for_the_kernels():
    i64 = np.int64
    run = _compiled(layout.to_index)
    out = np.full(3, -1, i64)
    run(17, np.array([2, 3, 4], i64), out)
    assert out.tolist() == [1, 1, 1]
    out = np.full(2, -1, i64)
    run(7, (3, 4), out)
    assert out.tolist() == [1, 3]


@pytest.mark.task("1.2")
def test_position_to_index_examples():
    assert layout.position_to_index(5, (2, 3)) == (1, 2)
    assert layout.position_to_index(0, (2, 3, 4)) == (0, 0, 0)
    assert layout.position_to_index(23, (2, 3, 4)) == (1, 2, 3)
    assert layout.position_to_index(7, (3, 4)) == (1, 3)
    assert layout.position_to_index(3, (1, 4, 1)) == (0, 3, 0)
    assert layout.position_to_index(0, ()) == ()


@pytest.mark.task("1.2")
@settings(max_examples=30, deadline=None)
@given(shapes, st.data())
def test_position_to_index_inverts_a_row_major_walk(shape, data):
    n = int(np.prod(shape))
    ordinal = data.draw(st.integers(0, n - 1))
    assert layout.position_to_index(ordinal, shape) == np.unravel_index(ordinal, shape)


@pytest.mark.task("1.3")
@settings(max_examples=40, deadline=None)
@given(shapes)
def test_contiguous_strides_match_numpy(shape):
    assert layout._contiguous_strides(shape) == _numpy_strides(shape)


@pytest.mark.task("1.3")
def test_contiguous_strides_examples():
    assert layout._contiguous_strides((4, 3)) == (3, 1)
    assert layout._contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert layout._contiguous_strides(()) == ()
    assert layout._contiguous_strides((2, 0, 3)) == (3, 3, 1)    # size 0 counts as 1
    assert layout._contiguous_strides([5]) == (1,)


@pytest.mark.task("1.4")
@settings(max_examples=40, deadline=None)
@given(shapes, st.data())
def test_broadcast_shapes_match_numpy(shape, data):
    other = tuple(data.draw(st.sampled_from([1, s])) for s in shape[data.draw(
        st.integers(0, len(shape))):])
    assert layout.broadcast_shapes(shape, other) == np.broadcast_shapes(shape, other)
    assert layout.broadcast_shapes(other, shape) == np.broadcast_shapes(other, shape)


shapes0 = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)


def _numpy_broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


@pytest.mark.task("1.4")
@settings(max_examples=100, deadline=None)
@given(st.lists(shapes0, min_size=1, max_size=4))
def test_broadcast_shapes_of_several_shapes_match_numpy_or_raise(shapes):
    # Sizes 0 and 1 and mismatches: NumPy's answer, or PyTorch's RuntimeError where NumPy refuses.
    want = _numpy_broadcast(*shapes)
    if want is None:
        with pytest.raises(RuntimeError):
            layout.broadcast_shapes(*shapes)
    else:
        assert layout.broadcast_shapes(*shapes) == want


@pytest.mark.task("1.4")
def test_broadcast_shapes_examples_and_errors():
    assert layout.broadcast_shapes((4, 1, 3), (5, 1)) == (4, 5, 3)
    assert layout.broadcast_shapes((), (2, 3)) == (2, 3)
    assert layout.broadcast_shapes((2, 1), (1, 3), (1, 1, 1)) == (1, 2, 3)
    assert layout.broadcast_shapes((0,), (1,)) == (0,)
    assert layout.broadcast_shapes((3, 1), (1,), (1, 1), (3, 5)) == (3, 5)
    assert layout.broadcast_shapes((2, 3)) == (2, 3)
    with pytest.raises(RuntimeError):
        layout.broadcast_shapes((0,), (2,))
    with pytest.raises(RuntimeError):
        layout.broadcast_shapes((1, 3), (2, 1), (1, 4))
    with pytest.raises(RuntimeError):
        layout.broadcast_shapes((2, 3), (3, 2))
    with pytest.raises(RuntimeError):
        layout.broadcast_shapes((2,), (3,), (1,))


@pytest.mark.task("1.5")
def test_expand_strides_gives_stride_zero_to_stretched_dims():
    assert layout.expand_strides((3, 1), (1, 1), (3, 4)) == ((3, 4), (1, 0))
    assert layout.expand_strides((3,), (1,), (2, 3)) == ((2, 3), (0, 1))
    assert layout.expand_strides((3, 1), (1, 1), (-1, 4)) == ((3, 4), (1, 0))
    assert layout.expand_strides((), (), (2, 3)) == ((2, 3), (0, 0))
    assert layout.expand_strides((2, 1), (5, 7), (2, 3)) == ((2, 3), (5, 0))   # a strided input
    assert layout.expand_strides((2, 3), (1, 2), (2, -1)) == ((2, 3), (1, 2))  # a transpose
    with pytest.raises(RuntimeError):
        layout.expand_strides((3,), (1,), (-1, 3))        # -1 in a new leading dim
    with pytest.raises(RuntimeError):
        layout.expand_strides((3,), (1,), (4,))
    with pytest.raises(RuntimeError):
        layout.expand_strides((2, 3), (3, 1), (3,))


@pytest.mark.task("1.5")
@settings(max_examples=30, deadline=None)
@given(shapes, st.data())
def test_expand_strides_read_what_numpy_broadcast_to_reads(shape, data):
    target = tuple(data.draw(st.integers(1, 3)) if s == 1 else s for s in shape)
    target = (2,) + target
    arr = np.arange(int(np.prod(shape))).reshape(shape)
    new_shape, strides = layout.expand_strides(shape, _numpy_strides(shape), target)
    assert new_shape == target
    view = np.lib.stride_tricks.as_strided(arr, target, tuple(s * 8 for s in strides))
    np.testing.assert_array_equal(view, np.broadcast_to(arr, target))


@pytest.mark.task("1.6")
def test_view_strides_split_and_merge_contiguous_dims():
    assert layout.view_strides((2, 3), (3, 1), (6,)) == (1,)
    assert layout.view_strides((6,), (1,), (2, 3)) == (3, 1)
    assert layout.view_strides((2, 3, 4), (12, 4, 1), (6, 4)) == (4, 1)


@pytest.mark.task("1.6")
def test_view_strides_refuse_to_merge_a_transpose_but_split_it():
    # A transposed (3, 2) matrix: its dims are not one contiguous chunk.
    assert layout.view_strides((2, 3), (1, 2), (6,)) is None
    # ... but each dim can still be split on its own.
    assert layout.view_strides((2, 3), (1, 2), (2, 3, 1)) == (1, 2, 2)
    assert layout.view_strides((4, 3), (1, 4), (2, 2, 3)) == (2, 1, 4)


@pytest.mark.task("1.6")
def test_view_strides_ignore_the_stride_of_a_size_one_dim():
    # A size-1 dim is never stepped along: whatever its stride, it splits no chunk.
    assert layout.view_strides((2, 1, 3), (3, 99, 1), (6,)) == (1,)
    assert layout.view_strides((1, 4), (0, 1), (2, 2)) == (2, 1)
    assert layout.view_strides((3, 1), (1, 1), (3,)) == (1,)


def _numpy_view(view, new_shape):
    """``view`` shown with ``new_shape`` without copying, as NumPy does it, or None."""
    out = view.view()
    try:
        out.shape = new_shape         # NumPy refuses (AttributeError) when it would copy
    except AttributeError:
        return None
    return out


@st.composite
def reshapes(draw, size):
    """A random shape of ``size`` elements (size >= 1), with size-1 dims sprinkled in."""
    dims = []
    left = size
    while left > 1 and len(dims) < 4:
        d = draw(st.sampled_from([k for k in range(2, left + 1) if left % k == 0]))
        dims.append(d)
        left //= d
    if left > 1:
        dims.append(left)
    for _ in range(draw(st.integers(0, 2))):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(draw(st.permutations(dims)))


@pytest.mark.task("1.6")
@settings(max_examples=150, deadline=None)
@given(strided_views(), st.data())
def test_view_strides_of_any_view_agree_with_numpy(views, data):
    # Sliced, reversed and transposed inputs: None exactly when NumPy must copy; otherwise
    # strides that read what NumPy's reshape reads.
    base, view = views
    shape, strides, offset = _header(base, view)
    new_shape = data.draw(reshapes(view.size))
    got = layout.view_strides(shape, strides, new_shape)
    want = _numpy_view(view, new_shape)
    if want is None:
        assert got is None
        return
    assert got is not None and len(got) == len(new_shape)
    read = np.lib.stride_tricks.as_strided(base[offset:] if offset >= 0 else base, new_shape,
                                           tuple(s * base.itemsize for s in got))
    np.testing.assert_array_equal(read, want)


@pytest.mark.task("1.6")
@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), st.data())
def test_view_strides_on_contiguous_tensors_match_numpy_reshape(shape, data):
    n = int(np.prod(shape))
    dims = data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    new_shape = tuple(dims) + (n // int(np.prod(dims)),) if n % int(np.prod(dims or [1])) == 0 \
        else (n,)
    strides = layout.view_strides(shape, _numpy_strides(shape), new_shape)
    assert strides == _numpy_strides(new_shape)
