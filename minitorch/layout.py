"""Layer 3: layout, pure functions over shape, stride and offset.

A tensor's element at index ``(i0, i1, ..., ik)`` lives in its storage at::

    position = offset + i0 * stride[0] + i1 * stride[1] + ... + ik * stride[k]

Everything here is arithmetic on those three things; no data is touched.
For a (4, 3) tensor stored row by row the strides are (3, 1)::

    index (i, j)  ->  position 3*i + j

        j=0 j=1 j=2
    i=0 [ 0,  1,  2 ]      storage: [0 1 2 3 4 5 6 7 8 9 10 11]
    i=1 [ 3,  4,  5 ]
    i=2 [ 6,  7,  8 ]      its transpose has shape (3, 4) and strides (1, 3):
    i=3 [ 9, 10, 11 ]      the same storage, read in another order.

A tensor is *contiguous* when its strides are exactly those of a freshly
allocated tensor of its shape (dimensions of size 1 may have any stride).
"""

from __future__ import annotations

import functools
from typing import Iterable, Sequence

__all__ = [
    "Shape", "Strides", "numel", "contiguous_strides", "is_contiguous", "normalize_dim",
    "normalize_dims", "broadcast_shapes", "expand_strides", "view_strides", "infer_size",
    "coalesce", "index_to_position", "to_index", "position_to_index", "storage_span", "check_shape",
    "is_non_overlapping_and_dense", "memory_order", "strides_in_order", "preserved_strides",
    "elementwise_strides", "channels_last_strides", "loop_plan",
]

Shape = tuple
Strides = tuple


def numel(shape: Sequence[int]) -> int:
    """The number of elements of a shape (1 for the empty shape of a scalar)."""
    n = 1
    for s in shape:
        n *= s
    return n


def contiguous_strides(shape: Sequence[int]) -> tuple:
    """Row-major strides: the last dimension moves fastest.

    >>> contiguous_strides((4, 3))
    (3, 1)
    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    if type(shape) is tuple:
        return _contiguous_strides_of_tuple(shape)
    return _contiguous_strides(shape)


@functools.lru_cache(maxsize=4096)
def _contiguous_strides_of_tuple(shape: tuple) -> tuple:
    # Asked for by nearly every op with the same few shapes: remembered.
    return _contiguous_strides(shape)


def _contiguous_strides(shape: Sequence[int]) -> tuple:
    """The strides of a fresh (row-major) tensor of ``shape``, counted in elements.

    Args:
        shape: a sequence of sizes (ints >= 0; a list is fine).

    Returns:
        A tuple of Python ints, one per dim, such that walking the elements in
        row-major order (the last index moving fastest) visits storage
        positions 0, 1, 2, ... in turn: NumPy's ``np.empty(shape).strides``
        divided by the item size.  A dim of size 0 counts as size 1 (as in
        PyTorch), so that the strides are never 0.

    >>> _contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    # Task 1.3: the row-major strides of shape, as a tuple of ints.
    ### BEGIN SOLUTION
    strides = [1] * len(shape)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= max(int(shape[d]), 1)     # Python ints, whatever the shape holds
    return tuple(strides)
    ### END SOLUTION


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's rule: strides match row-major order, ignoring size-1 dims.

    A tensor with no elements is always contiguous.

    >>> is_contiguous((4, 3), (3, 1)), is_contiguous((3, 4), (1, 3))
    (True, False)
    """
    # The strides a fresh tensor of this shape has (task 1.3), compared where they matter:
    # a size-1 dim is never stepped along, so its stride is free.
    want = contiguous_strides(shape)
    if strides == want:
        return True              # the common case, a fresh tensor: one tuple comparison
    if 0 in shape:
        return True
    for d in range(len(shape)):
        if shape[d] != 1 and strides[d] != want[d]:
            return False
    return True


def check_shape(shape: Iterable, what: str = "size") -> tuple:
    """Validate a user-given shape: integers >= 0."""
    out = []
    for s in shape:
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{what} must be a tuple of ints, but got element of type "
                            f"{type(s).__name__}")
        s = s.__index__()
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
        out.append(s)
    return tuple(out)


def normalize_dim(dim: int, ndim: int) -> int:
    """Turn a possibly negative ``dim`` into 0..ndim-1, or raise ``IndexError``.

    A scalar (ndim 0) accepts dims 0 and -1, as in PyTorch.
    """
    if isinstance(dim, bool) or not hasattr(dim, "__index__"):
        raise TypeError(f"dim must be an int, but got {type(dim).__name__}")
    dim = dim.__index__()
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def normalize_dims(dims: Iterable[int], ndim: int) -> tuple:
    """Normalise a list of dims; each may appear once."""
    out = []
    for d in dims:
        nd = normalize_dim(d, ndim)
        if nd in out:
            raise RuntimeError(f"dim {nd} appears multiple times in the list of dims")
        out.append(nd)
    return tuple(out)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple:
    """The shape that all ``shapes`` broadcast to.

    Shapes are aligned at their last dimension; a dimension of size 1 (or a
    missing one) stretches to match::

        (4, 1, 3)
        (   5, 1)   ->  (4, 5, 3)
    """
    # Task 1.4: the shape that all shapes broadcast to, or PyTorch's RuntimeError.
    ### BEGIN SOLUTION
    if len(shapes) == 2:
        # The common cases: nothing to stretch, or a scalar against a tensor.
        if shapes[0] == shapes[1] or not shapes[1]:
            return tuple(shapes[0])
        if not shapes[0]:
            return tuple(shapes[1])
    ndim = max((len(s) for s in shapes), default=0)
    if len(shapes) == 2:
        # PyTorch's message for two operands: the first mismatch from the right,
        # counted as a dimension of the result.
        a, b = shapes
        for j in range(ndim - 1, -1, -1):
            sa = a[j - ndim + len(a)] if j - ndim + len(a) >= 0 else 1
            sb = b[j - ndim + len(b)] if j - ndim + len(b) >= 0 else 1
            if sa != sb and sa != 1 and sb != 1:
                raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor "
                                   f"b ({sb}) at non-singleton dimension {j}")
    out = [1] * ndim
    owner = [0] * ndim          # which shape set out[j], for the error message
    for si, shape in enumerate(shapes):
        pad = ndim - len(shape)
        for i, size in enumerate(shape):
            j = i + pad
            if size == out[j] or size == 1:
                continue
            if out[j] == 1:
                out[j], owner[j] = size, si
                continue
            if len(shapes) == 2:
                raise RuntimeError(
                    f"The size of tensor a ({out[j]}) must match the size of tensor b ({size}) "
                    f"at non-singleton dimension {j}")
            raise RuntimeError(
                "Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                f"between arg {owner[j]} and arg {si}.")
    return tuple(out)
    ### END SOLUTION


def expand_strides(shape: Sequence[int], strides: Sequence[int], target: Sequence[int]) -> tuple:
    """Strides that present ``shape`` as the larger ``target`` without copying.

    A stretched dimension gets stride 0: every index along it reads the same
    element.  ``-1`` in ``target`` keeps the existing size.
    """
    # Task 1.5: the shape and strides that show shape/strides as target without copying, or
    # PyTorch's RuntimeError.
    ### BEGIN SOLUTION
    if len(target) < len(shape):
        raise RuntimeError(
            f"expand(size={list(target)}): the number of sizes provided ({len(target)}) must be "
            f"greater or equal to the number of dimensions in the tensor ({len(shape)})")
    pad = len(target) - len(shape)
    out_shape, out_strides = [], []
    for i, t in enumerate(target):
        j = i - pad
        if j < 0:
            if t < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({t}) isn't allowed in a leading, "
                    f"non-existing dimension {i}")
            out_shape.append(t)
            out_strides.append(0)
            continue
        size = shape[j]
        if t == -1:
            t = size
        if size == t:
            out_shape.append(t)
            out_strides.append(strides[j])
        elif size == 1:
            if t < 0:
                raise RuntimeError(f"The expanded size of the tensor ({t}) is not allowed")
            out_shape.append(t)
            out_strides.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({t}) must match the existing size ({size}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(target)}.  "
                f"Tensor sizes: {list(shape)}")
    return tuple(out_shape), tuple(out_strides)
    ### END SOLUTION


def infer_size(shape: Sequence[int], total: int) -> tuple:
    """Resolve one ``-1`` in a requested shape so that it holds ``total`` elements."""
    shape = list(shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"shape must be a tuple of ints, but got element of type "
                            f"{type(s).__name__}")
        s = s.__index__()
        shape[i] = s
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer is not None:
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of {total} elements into shape "
                               f"{shape} because the unspecified dimension size -1 can be any "
                               "value and is ambiguous")
        if total % known == 0:
            shape[infer] = total // known
            return tuple(shape)
    elif known == total:
        return tuple(shape)
    raise RuntimeError(f"shape '{shape}' is invalid for input of size {total}")


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]):
    """Strides that show the same elements with ``new_shape``, or ``None``.

    ``view`` never copies, so it works only when each run of new dimensions
    falls inside a run of old dimensions that are laid out contiguously
    *with respect to each other* (a "chunk").  A transposed matrix has two
    separate chunks, so it cannot be flattened, but each of its dimensions
    can still be split.  This is PyTorch's ``computeStride``.
    """
    # Task 1.6: strides that read the same elements as new_shape, or None if view must copy.
    ### BEGIN SOLUTION
    if len(shape) == 0:
        return tuple(1 for _ in new_shape)
    total = numel(shape)
    if total == 0:
        if tuple(shape) == tuple(new_shape):
            return tuple(strides)
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        # A chunk ends where the next-outer dim is not laid out right after this one.
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and
                             strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)
    ### END SOLUTION


def coalesce(shape: Sequence[int], *stride_lists: Sequence[int]):
    """Merge neighbouring dimensions that every operand walks through in step.

    Dims ``d`` and ``d+1`` merge when, for every operand,
    ``stride[d] == stride[d+1] * shape[d+1]``.  A contiguous (2, 3, 4) tensor
    becomes one dimension of 24; kernels then run one long inner loop instead
    of many short ones.  This is what PyTorch's TensorIterator does.  Size-1
    dimensions are dropped first.
    """
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return (), tuple(() for _ in stride_lists)
    new_shape = [shape[dims[0]]]
    new_strides = [[s[dims[0]]] for s in stride_lists]
    for d in dims[1:]:
        size = shape[d]
        if all(ns[-1] == s[d] * size for ns, s in zip(new_strides, stride_lists)):
            new_shape[-1] *= size
            for ns, s in zip(new_strides, stride_lists):
                ns[-1] = s[d]
        else:
            new_shape.append(size)
            for ns, s in zip(new_strides, stride_lists):
                ns.append(s[d])
    return tuple(new_shape), tuple(tuple(ns) for ns in new_strides)


# ---------------------------------------------------------------------------
# Memory order: which dimension moves fastest through memory?
# ---------------------------------------------------------------------------
def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Do the elements fill a block of memory exactly, each position once, in *some* order?

    A contiguous tensor does, and so does its transpose (the same block read
    column by column); a slice with a step, or an expanded tensor (stride 0),
    does not.  Dims of size 1 are ignored: their stride never matters.

    >>> is_non_overlapping_and_dense((3, 4), (1, 3))
    True
    >>> is_non_overlapping_and_dense((3, 4), (8, 2))
    False
    """
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def memory_order(shape: Sequence[int], *stride_lists: Sequence[int]) -> list:
    """The dims sorted from the one with the largest strides to the smallest.

    Elementwise work may visit elements in any order, so it visits them in
    the order the operands are laid out in memory: then a transposed tensor
    is read (and a new result written) front to back.  This is the rule of
    PyTorch's TensorIterator.  Two dims are compared by the first operand
    whose strides tell them apart; a stride of 0 (a broadcast dim) says
    nothing, and equal strides are broken by the larger size going outward.
    The sort is stable: dims nothing can tell apart keep their order.

    >>> memory_order((3, 4), (1, 3))        # a transpose: dim 0 moves fastest
    [1, 0]
    >>> memory_order((3, 4), (0, 1), (4, 1))
    [0, 1]
    """
    def outer_first(d0: int, d1: int) -> int:
        """1 if ``d0`` must lie inside ``d1`` (further right), -1 if not, 0 if unknown."""
        for strides in stride_lists:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    # perm[0] is the innermost dim; start from row-major order and insertion-sort.
    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(perm)):
        j = i
        for k in range(i - 1, -1, -1):
            c = outer_first(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm[::-1]


def strides_in_order(shape: Sequence[int], order: Sequence[int]) -> tuple:
    """Dense strides that lay ``shape`` out in memory in ``order`` (outermost dim first).

    >>> strides_in_order((3, 4), [1, 0])    # column-major
    (1, 3)
    """
    strides = [0] * len(shape)
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def preserved_strides(shape: Sequence[int], strides: Sequence[int]) -> tuple:
    """Strides for a new tensor laid out like an existing one (``preserve_format``).

    ``empty_like``, ``clone`` and ``.to(dtype)`` keep the memory order of their
    input, as PyTorch does: a dense input's strides are copied exactly; any
    other input (a slice with a step, an expanded view) gets dense strides
    in the order of its own.

    >>> preserved_strides((3, 4), (1, 3))
    (1, 3)
    >>> preserved_strides((3, 4), (2, 12))   # x.t()[:, ::2]-like: same order, now dense
    (1, 3)
    """
    if is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    return strides_in_order(shape, memory_order(shape, strides))


def elementwise_strides(shape: Sequence[int], *input_strides: Sequence[int]) -> tuple:
    """Strides of a new elementwise result, from its inputs' (broadcast) strides.

    PyTorch's TensorIterator: if every input is contiguous, so is the result;
    if every input is dense with the same strides, the result copies them;
    otherwise the result is dense in the inputs' memory order, so that
    ``x.t() + y.t()`` is itself a transpose and runs as one pass over memory.
    ``input_strides`` are already broadcast to ``shape`` (stride 0 where a
    dim was stretched).

    >>> elementwise_strides((3, 4), (1, 3), (0, 0))
    (1, 3)
    >>> elementwise_strides((3, 4), (1, 3), (4, 1))   # the first input decides
    (1, 3)
    """
    if all(is_contiguous(shape, s) for s in input_strides):
        return contiguous_strides(shape)
    first = input_strides[0]
    if all(tuple(s) == tuple(first) for s in input_strides) and \
            is_non_overlapping_and_dense(shape, first):
        return tuple(first)
    return strides_in_order(shape, memory_order(shape, *input_strides))


def channels_last_strides(shape: Sequence[int]) -> tuple:
    """NHWC strides for an (N, C, H, W) shape: the channels of a pixel sit together.

    >>> channels_last_strides((2, 3, 4, 5))
    (60, 1, 15, 3)
    """
    if len(shape) != 4:
        raise RuntimeError(f"required rank 4 tensor to use channels_last format, got shape "
                           f"{tuple(shape)}")
    return strides_in_order(shape, [0, 2, 3, 1])


def loop_plan(shape: Sequence[int], *stride_lists: Sequence[int]):
    """The loops an elementwise kernel runs: dims merged, in memory order.

    The *last* stride list is the output's.  First :func:`coalesce` merges
    what it can; if more than one dim is left and the output's strides do
    not already decrease, the dims are sorted into memory order (output
    first, then the inputs: :func:`memory_order`) and merged again, so the
    innermost loop walks memory with the smallest steps.  A transposed
    output written from transposed inputs becomes one contiguous run.

    >>> loop_plan((3, 4), (1, 3), (1, 3))
    ((12,), ((1,), (1,)))
    """
    cshape, cstrides = coalesce(shape, *stride_lists)
    if len(cshape) > 1:
        out = cstrides[-1]
        if any(out[d] < out[d + 1] for d in range(len(out) - 1)):
            order = memory_order(cshape, out, *cstrides[:-1])
            cshape, cstrides = coalesce([cshape[d] for d in order],
                                        *([st[d] for d in order] for st in cstrides))
    return cshape, cstrides


def index_to_position(index: Sequence[int], strides: Sequence[int], offset: int = 0) -> int:
    """The storage position that a multi-index reads in a strided tensor.

    Args:
        index: one coordinate per dim (each ``0 <= index[d] < shape[d]``): a
        tuple, a list or a 1-D int array, as long as ``strides``.

        strides: the tensor's strides, in elements (any sign, 0 included).

        offset: the storage position of element ``(0, 0, ...)``.

    Returns:
        The position in storage of element ``index``.  Example: in a (2, 3)
        matrix with strides (3, 1) and offset 0, element (1, 2) is at 5; in its
        transpose (strides (1, 3)) element (2, 1) is at 5 too.

    The kernels run this very function: every strided kernel, on the CPU and
    on the GPU, finds its operands' positions with it (through
    :func:`minitorch.backends.index_maps.position`).  So it must be code that
    Numba compiles: a loop over the dims that indexes ``index`` and
    ``strides`` with integer arithmetic (no generators, no ``sum`` of a
    comprehension, no new tuples or lists).
    """
    # Task 1.1: the storage position of index in a tensor with these strides and offset.
    ### BEGIN SOLUTION
    pos = offset
    for d in range(len(strides)):
        pos += index[d] * strides[d]
    return pos
    ### END SOLUTION


def to_index(ordinal: int, shape: Sequence[int], out_index) -> None:
    """Write the multi-index of the ``ordinal``-th element (row-major order) into ``out_index``.

    Args:
        ordinal: which element, counting from 0 in row-major order (the last
        index moving fastest); ``0 <= ordinal < numel(shape)``.

        shape: the tensor's shape (sizes >= 1): a tuple, a list or a 1-D int array.

        out_index: where the coordinates go: a list or a 1-D int array with
        ``len(shape)`` entries, overwritten.

    Returns:
        Nothing: ``out_index[d]`` is the coordinate along dim ``d``, what
        ``np.unravel_index(ordinal, shape)[d]`` gives.  Example: the element
        number 5 of a (2, 3) tensor is ``(1, 2)``: ``out_index`` becomes ``[1, 2]``.

    The kernels run this very function: a strided kernel turns an element
    number into a multi-index with it (the CPU once per chunk of work, in
    ``cpu/odometer.py``; a GPU thread for every element it computes).  So it
    must be code that Numba compiles: a loop over the dims with integer
    arithmetic (``%``, ``//``) that stores into ``out_index`` (no new tuples
    or lists).  ``torch.unravel_index`` runs it too, on a tensor of ordinals,
    whose ``%`` and ``//`` work element by element.
    """
    # Task 1.2: the multi-index of the ordinal-th element in row-major order, written into
    # out_index.
    ### BEGIN SOLUTION
    for d in range(len(shape) - 1, -1, -1):
        size = shape[d]
        out_index[d] = ordinal % size
        ordinal //= size
    ### END SOLUTION


def position_to_index(ordinal: int, shape: Sequence[int]) -> tuple:
    """The multi-index of the ``ordinal``-th element in row-major order, as a tuple.

    :func:`to_index` (course task 1.2) into a fresh list.  Example: the element
    number 5 of a (2, 3) tensor is ``(1, 2)``.
    """
    index = [0] * len(shape)
    to_index(ordinal, shape, index)
    return tuple(int(i) for i in index)


def storage_span(shape: Sequence[int], strides: Sequence[int], offset: int) -> tuple:
    """The lowest and one-past-highest storage positions a header can reach.

    ``(offset, offset)`` for a tensor with no elements.
    """
    if numel(shape) == 0:
        return offset, offset
    lo = hi = offset
    for size, st in zip(shape, strides):
        if st >= 0:
            hi += (size - 1) * st
        else:
            lo += (size - 1) * st
    return lo, hi + 1
