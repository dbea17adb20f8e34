"""The odometer: how a CPU kernel walks a strided tensor element by element.

A strided kernel visits the elements of an iteration ``shape`` in row-major
order, over a range of flat element numbers ``start..stop``, reading up to
three operands (each with its own strides).  It finds the multi-index of
``start`` once (:func:`start`), then moves like an odometer
(:func:`advance`): run along the last dimension, and when a dimension wraps
around, carry into the next one.  Each operand's position is updated by
additions only; no division per element.

(A GPU thread instead jumps to its element and computes the positions from
scratch, with ``index_maps.positions3``: the threads of a grid-stride loop
are far apart, so there is no "next element" to move to.)
"""

from numba import njit

from .bodies import layout

_JIT = dict(cache=True, error_model="numpy")


@njit(inline="always", **_JIT)
def start(first, shape, idx, a_pos, a_st, b_pos, b_st, c_pos, c_st):
    """Set ``idx`` to the multi-index of flat element ``first``; return the three positions.

    Written with the course's layout functions (tasks 1.2 and 1.1, the
    students' own): ``layout.to_index`` finds the multi-index,
    ``layout.index_to_position`` each operand's position.
    """
    layout.to_index(first, shape, idx)
    return (layout.index_to_position(idx, a_st, a_pos), layout.index_to_position(idx, b_st, b_pos),
            layout.index_to_position(idx, c_st, c_pos))


@njit(inline="always", **_JIT)
def advance(run, shape, idx, a_st, b_st, c_st, a_pos, b_pos, c_pos):
    """Move ``run`` steps along the last dim, then carry wrapped dims outward."""
    last = shape.shape[0] - 1
    idx[last] += run
    a_pos += run * a_st[last]
    b_pos += run * b_st[last]
    c_pos += run * c_st[last]
    d = last
    while d > 0 and idx[d] == shape[d]:
        a_pos -= shape[d] * a_st[d]
        b_pos -= shape[d] * b_st[d]
        c_pos -= shape[d] * c_st[d]
        idx[d] = 0
        d -= 1
        idx[d] += 1
        a_pos += a_st[d]
        b_pos += b_st[d]
        c_pos += c_st[d]
    return a_pos, b_pos, c_pos


@njit(inline="always", **_JIT)
def total(shape):
    """The number of elements of ``shape`` (a 1-D int64 array)."""
    n = 1
    for d in range(shape.shape[0]):
        n *= shape[d]
    return n
