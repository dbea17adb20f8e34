"""The CPU backend: plans each call and picks the kernel that fits.

"Planning" means: merge dimensions that every operand walks in step
(:func:`minitorch.layout.coalesce`); if what is left is one dimension of
stride 1 (a value repeated, stride 0, is fine for inputs), run the
contiguous fast path on flat slices, else run the strided kernel.
"""

from __future__ import annotations

import numba
import numpy as np

from ...layout import coalesce, contiguous_strides, numel
from .. import Operand
from . import elementwise as ew
from . import matmul as mm
from . import random as rk
from . import reduce as rd

_F16 = np.dtype(np.float16)
_I64 = np.int64


def allocate(n: int, dtype: np.dtype) -> np.ndarray:
    return np.empty(n, dtype)


def zeros(n: int, dtype: np.dtype) -> np.ndarray:
    return np.zeros(n, dtype)


def from_host(arr: np.ndarray) -> np.ndarray:
    return arr


def to_host(data: np.ndarray) -> np.ndarray:
    return data


def num_threads() -> int:
    return numba.get_num_threads()


def numpy_view(op: Operand) -> np.ndarray:
    """A NumPy array that shares memory with the operand (no copy)."""
    item = op.data.dtype.itemsize
    if numel(op.shape) == 0:
        return np.empty(op.shape, op.data.dtype)
    return np.lib.stride_tricks.as_strided(
        op.data[op.offset:], shape=op.shape, strides=tuple(s * item for s in op.strides))


def _plan(shape, *strides):
    """Coalesced shape and strides; a single element becomes shape (1,), stride 1."""
    cshape, cstrides = coalesce(shape, *strides)
    if not cshape:
        return (1,), tuple((1,) for _ in strides)
    return cshape, cstrides


def _flat(op: Operand, stride: int, n: int) -> np.ndarray:
    """The 1-D slice a contiguous kernel reads: n elements, or 1 if broadcast."""
    return op.data[op.offset: op.offset + (n if stride else 1)]


def _arr(t) -> np.ndarray:
    return np.array(t, dtype=_I64)


# ---------------------------------------------------------------------------
# copy and fill
# ---------------------------------------------------------------------------
def copy(src: Operand, dst: Operand) -> None:
    """``dst[...] = src[...]`` elementwise, converting to dst's dtype."""
    n = numel(dst.shape)
    if n == 0:
        return
    if src.data.dtype == _F16 or dst.data.dtype == _F16:
        # Numba has no float16 arithmetic on the CPU; NumPy converts.
        np.copyto(numpy_view(dst), numpy_view(src), casting="unsafe")
        return
    shape, (ss, ds) = _plan(dst.shape, src.strides, dst.strides)
    if len(shape) == 1 and ds[0] == 1 and ss[0] in (0, 1):
        ew.copy_contiguous(_flat(src, ss[0], n), _flat(dst, 1, n))
    else:
        ew.copy_strided(src.data, src.offset, _arr(ss), dst.data, dst.offset, _arr(ds),
                        _arr(shape))


def fill(dst: Operand, value) -> None:
    """Set every element of ``dst`` to ``value``."""
    src = np.array([value]).astype(dst.data.dtype)
    copy(Operand(src, dst.shape, (0,) * len(dst.shape), 0), dst)


# ---------------------------------------------------------------------------
# map and zip
# ---------------------------------------------------------------------------
def _contiguous_input(a: Operand, shape, strides) -> tuple:
    """A flat array and stride (1, or 0 for one repeated value) for operand ``a``.

    ``shape``/``strides`` are the coalesced plan.  If the operand cannot be
    read as one run, it is copied into a fresh contiguous array first.
    """
    n = numel(shape)
    if len(shape) == 1 and strides[0] in (0, 1):
        return _flat(a, strides[0], n), strides[0]
    tmp = np.empty(n, a.data.dtype)
    copy_strided_run(a.data, a.offset, strides, tmp, shape)
    return tmp, 1


def copy_strided_run(data, offset, strides, dst, shape) -> None:
    ew.copy_strided(data, offset, _arr(strides), dst, 0, _arr(contiguous_strides(shape)),
                    _arr(shape))


def _run_contiguous(kernel, out: Operand, shape, so, inputs, extra=()) -> None:
    """Run a contiguous kernel, through a temporary if ``out`` is not one run."""
    n = numel(shape)
    if len(shape) == 1 and so[0] == 1:
        kernel(*inputs, _flat(out, 1, n), *extra)
        return
    tmp = np.empty(n, out.data.dtype)
    kernel(*inputs, tmp, *extra)
    ew.copy_strided(tmp, 0, _arr(contiguous_strides(shape)), out.data, out.offset, _arr(so),
                    _arr(shape))


_UNARY = {
    "fast": (ew.unary_fast_contiguous, ew.unary_fast_strided),
    "math": (ew.unary_contiguous, None),
    "int": (ew.unary_int_contiguous, None),
}


def unary(op: int, a: Operand, out: Operand, p0: float = 0.0, p1: float = 0.0,
          family: str = "math") -> None:
    """``out = f(a)``; ``family`` is 'fast', 'math' or 'int' (see scalar_ops)."""
    n = numel(out.shape)
    if n == 0:
        return
    contiguous_kernel, strided_kernel = _UNARY[family]
    shape, (sa, so) = _plan(out.shape, a.strides, out.strides)
    extra = () if family == "int" else (float(p0), float(p1))
    if strided_kernel is not None and not (len(shape) == 1 and sa[0] == 1 and so[0] == 1):
        strided_kernel(op, a.data, a.offset, _arr(sa), out.data, out.offset, _arr(so),
                       _arr(shape), *extra)
        return
    flat_a, step = _contiguous_input(a, shape, sa)
    if step == 0:   # one value repeated: compute it once, then broadcast it
        one = np.empty(1, out.data.dtype)
        contiguous_kernel(op, flat_a, one, *extra)
        copy(Operand(one, out.shape, (0,) * len(out.shape), 0), out)
        return
    _run_contiguous(lambda *args: contiguous_kernel(op, *args), out, shape, so, (flat_a,),
                    extra)


_BINARY = {
    "arith": (ew.arith_contiguous, ew.arith_strided),
    "math": (ew.binary_contiguous, None),
    "int": (ew.binary_int_contiguous, None),
    "compare": (ew.compare_contiguous, ew.compare_strided),
}


def binary(op: int, a: Operand, b: Operand, out: Operand, family: str = "arith") -> None:
    """``out = f(a, b)``; ``family`` is 'arith', 'math', 'int' or 'compare'."""
    n = numel(out.shape)
    if n == 0:
        return
    contiguous_kernel, strided_kernel = _BINARY[family]
    shape, (sa, sb, so) = _plan(out.shape, a.strides, b.strides, out.strides)
    one_run = (len(shape) == 1 and so[0] == 1 and sa[0] in (0, 1) and sb[0] in (0, 1)
               and (sa[0] or sb[0] or n == 1))
    if one_run:
        contiguous_kernel(op, _flat(a, sa[0], n), _flat(b, sb[0], n), _flat(out, 1, n))
    elif strided_kernel is not None:
        strided_kernel(op, a.data, a.offset, _arr(sa), b.data, b.offset, _arr(sb),
                       out.data, out.offset, _arr(so), _arr(shape))
    else:
        flat_a, step_a = _contiguous_input(a, shape, sa)
        flat_b, step_b = _contiguous_input(b, shape, sb)
        if step_a == 0 and step_b == 0:
            flat_a = np.repeat(flat_a, n)   # both scalars: let one of them be a run
        _run_contiguous(lambda *args: contiguous_kernel(op, *args), out, shape, so,
                        (flat_a, flat_b))


def where(cond: Operand, a: Operand, b: Operand, out: Operand) -> None:
    """``out = a if cond else b`` elementwise (all four already broadcast to out's shape)."""
    n = numel(out.shape)
    if n == 0:
        return
    shape, (sc, sa, sb, so) = _plan(out.shape, cond.strides, a.strides, b.strides, out.strides)
    flat = [_contiguous_input(x, shape, st)[0] for x, st in ((cond, sc), (a, sa), (b, sb))]
    _run_contiguous(ew.where_contiguous, out, shape, so, tuple(flat))


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
REDUCE_OPS = {"sum": rd.SUM, "prod": rd.PROD, "max": rd.MAX, "min": rd.MIN,
              "argmax": rd.ARGMAX, "argmin": rd.ARGMIN, "all": rd.ALL, "any": rd.ANY,
              "nansum": rd.NANSUM}


def reduce(op: str, a: Operand, dims: tuple, out: np.ndarray, out_idx: np.ndarray | None = None
           ) -> None:
    """Reduce ``a`` over ``dims`` into the contiguous ``out`` (kept dims, in order).

    ``out_idx`` receives the index along the reduced dims of the chosen element
    (for max/min/argmax/argmin).  Sums and products accumulate in float64 or
    int64 and are converted when stored.
    """
    code = REDUCE_OPS[op]
    keep = [d for d in range(len(a.shape)) if d not in dims]
    keep_shape, (keep_st,) = coalesce([a.shape[d] for d in keep], [a.strides[d] for d in keep])
    red_shape, (red_st,) = coalesce([a.shape[d] for d in dims], [a.strides[d] for d in dims])
    n_out = numel(keep_shape)
    n_red = numel(red_shape)
    if n_out == 0:
        return
    floating = a.data.dtype.kind == "f"
    if code == rd.PROD:
        acc0 = np.float64(1.0) if floating else np.int64(1)
    elif code == rd.ALL:
        acc0 = np.float64(1.0) if floating else np.int64(1)
    else:
        acc0 = np.float64(0.0) if floating else np.int64(0)
    if out_idx is None:
        out_idx = np.empty(n_out, _I64)
    if not red_shape:
        red_shape, red_st = (1,), (0,)
        if n_red == 0:
            red_shape = (0,)
    nsplit = rd.plan_split(n_out, n_red, num_threads())
    rd.reduce_strided(code, a.data, a.offset, _arr(keep_shape), _arr(keep_st),
                      _arr(red_shape), _arr(red_st), nsplit, acc0, out, out_idx)


def scan(op: str, x: np.ndarray, out: np.ndarray) -> None:
    """Running sum/product along the rows of 2-D contiguous ``x`` into ``out``."""
    if x.size == 0:
        return
    floating = out.dtype.kind == "f"
    code = rd.CUMSUM if op == "cumsum" else rd.CUMPROD
    one = 1 if code == rd.CUMPROD else 0
    rd.scan_rows(code, x, out, np.float64(one) if floating else np.int64(one))


# ---------------------------------------------------------------------------
# matmul and random fills
# ---------------------------------------------------------------------------
def matmul(a: Operand, b: Operand, out: np.ndarray) -> None:
    """``out[i] = a[i] @ b[i]`` for 3-D operands (batch, rows, cols); ``out`` contiguous 3-D."""
    mm.batched_matmul(numpy_view(a), numpy_view(b), out)


def random_fill(kind: str, buf: np.ndarray, seed: np.uint64, offset: np.uint64, *params) -> None:
    """Fill the contiguous ``buf`` from the counter-based stream ``(seed, offset)``."""
    if kind == "uniform":
        rk.fill_uniform(buf, seed, offset, float(params[0]), float(params[1]))
    elif kind == "normal":
        rk.fill_normal(buf, seed, offset, float(params[0]), float(params[1]))
    elif kind == "randint":
        rk.fill_randint(buf, seed, offset, np.int64(params[0]), np.int64(params[1]))
    elif kind == "bernoulli":
        rk.fill_bernoulli(buf, params[0], seed, offset)
    elif kind == "bernoulli_scalar":
        rk.fill_bernoulli_scalar(buf, float(params[0]), seed, offset)
    elif kind == "randperm":
        rk.randperm(buf, seed, offset)
    elif kind == "multinomial":
        probs, num_samples, replacement = params
        rk.multinomial(probs, num_samples, replacement, buf, seed, offset)
    else:
        raise ValueError(f"unknown random fill {kind!r}")
