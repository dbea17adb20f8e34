"""Course module 1, tensors: index <-> position, strides, broadcasting, the view rule.

Each test calls its task's function directly (``minitorch/layout.py``), with
NumPy as the oracle, so that it fails with that task's message in a student
edition.  ``minitorch course test 1.3`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from minitorch import layout

pytestmark = pytest.mark.tensor

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


def _numpy_strides(shape: tuple) -> tuple:
    return tuple(s // 8 for s in np.empty(shape, dtype=np.float64).strides)


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


@pytest.mark.task("1.2")
def test_position_to_index_examples():
    assert layout.position_to_index(5, (2, 3)) == (1, 2)
    assert layout.position_to_index(0, (2, 3, 4)) == (0, 0, 0)
    assert layout.position_to_index(23, (2, 3, 4)) == (1, 2, 3)


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


@pytest.mark.task("1.4")
def test_broadcast_shapes_examples_and_errors():
    assert layout.broadcast_shapes((4, 1, 3), (5, 1)) == (4, 5, 3)
    assert layout.broadcast_shapes((), (2, 3)) == (2, 3)
    assert layout.broadcast_shapes((2, 1), (1, 3), (1, 1, 1)) == (1, 2, 3)
    with pytest.raises(RuntimeError):
        layout.broadcast_shapes((2, 3), (3, 2))
    with pytest.raises(RuntimeError):
        layout.broadcast_shapes((2,), (3,), (1,))


@pytest.mark.task("1.5")
def test_expand_strides_gives_stride_zero_to_stretched_dims():
    assert layout.expand_strides((3, 1), (1, 1), (3, 4)) == ((3, 4), (1, 0))
    assert layout.expand_strides((3,), (1,), (2, 3)) == ((2, 3), (0, 1))
    assert layout.expand_strides((3, 1), (1, 1), (-1, 4)) == ((3, 4), (1, 0))
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
@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), st.data())
def test_view_strides_on_contiguous_tensors_match_numpy_reshape(shape, data):
    n = int(np.prod(shape))
    dims = data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    new_shape = tuple(dims) + (n // int(np.prod(dims)),) if n % int(np.prod(dims or [1])) == 0 \
        else (n,)
    strides = layout.view_strides(shape, _numpy_strides(shape), new_shape)
    assert strides == _numpy_strides(new_shape)
