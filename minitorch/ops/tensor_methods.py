"""Attach the ops to the Tensor class as methods and operators.

``Tensor`` (layer 5) holds data; the ops (layer 7) are defined as functions.
This module, part of layer 7, makes ``t.sum()``, ``t + 1`` and ``t.view(2, 3)``
call those functions, so that each layer imports only the ones below it.
In-place methods (``add_``, ``mul_``, ...) run the out-of-place op and store
the result back (see ``elementwise.inplace``).
"""

from __future__ import annotations

from typing import Any

from ..autograd import engine
from ..device import as_device
from ..dtype import as_dtype, bool_, float16, float32, float64, int32, int64, uint8, int16, int8
from ..layout import numel
from ..memory_format import preserve_format
from ..tensor import Tensor
from . import _raw, creation, elementwise as ew, indexing, linalg, reduction as rd, views as vw

_METHODS = {
    # views and shape
    "view": vw.view, "reshape": vw.reshape, "transpose": vw.transpose, "permute": vw.permute,
    "squeeze": vw.squeeze, "unsqueeze": vw.unsqueeze, "expand": vw.expand,
    "flatten": vw.flatten, "unflatten": vw.unflatten, "narrow": vw.narrow, "select": vw.select,
    "split": vw.split, "chunk": vw.chunk, "unbind": vw.unbind, "movedim": vw.movedim,
    "moveaxis": vw.movedim, "as_strided": vw.as_strided, "contiguous": vw.contiguous,
    "clone": vw.clone, "detach": vw.detach, "t": vw.t, "flip": vw.flip, "repeat": vw.repeat,
    "tile": vw.tile, "diagonal": vw.diagonal, "swapaxes": vw.swapaxes, "swapdims": vw.swapaxes,
    "broadcast_to": vw.broadcast_to, "tensor_split": vw.tensor_split, "roll": vw.roll,
    # elementwise
    "add": ew.add, "sub": ew.sub, "subtract": ew.sub, "mul": ew.mul, "multiply": ew.mul,
    "div": ew.div, "divide": ew.div, "true_divide": ew.div, "floor_divide": ew.floor_divide,
    "remainder": ew.remainder, "fmod": ew.fmod, "pow": ew.pow, "neg": ew.neg,
    "negative": ew.neg, "abs": ew.abs, "absolute": ew.abs, "exp": ew.exp, "log": ew.log,
    "log2": ew.log2, "log10": ew.log10, "log1p": ew.log1p, "expm1": ew.expm1,
    "sqrt": ew.sqrt, "rsqrt": ew.rsqrt, "sin": ew.sin, "cos": ew.cos, "tan": ew.tan,
    "tanh": ew.tanh, "sigmoid": ew.sigmoid, "asin": ew.asin, "acos": ew.acos,
    "atan": ew.atan, "arcsin": ew.asin, "arccos": ew.acos, "arctan": ew.atan, "sinh": ew.sinh,
    "cosh": ew.cosh, "asinh": ew.asinh, "acosh": ew.acosh, "atanh": ew.atanh, "erf": ew.erf,
    "erfc": ew.erfc, "reciprocal": ew.reciprocal, "floor": ew.floor, "ceil": ew.ceil,
    "round": ew.round, "trunc": ew.trunc, "frac": ew.frac, "sign": ew.sign,
    "relu": ew.relu, "square": ew.square, "clamp": ew.clamp, "clip": ew.clamp,
    "clamp_min": ew.clamp_min, "clamp_max": ew.clamp_max, "maximum": ew.maximum,
    "minimum": ew.minimum, "fmax": ew.fmax, "fmin": ew.fmin, "atan2": ew.atan2,
    "arctan2": ew.atan2, "hypot": ew.hypot, "copysign": ew.copysign, "xlogy": ew.xlogy,
    "lerp": ew.lerp, "addcmul": ew.addcmul, "addcdiv": ew.addcdiv, "nan_to_num": ew.nan_to_num,
    "float_power": ew.float_power,
    "isclose": ew.isclose, "allclose": ew.allclose, "equal": ew.equal,
    "eq": ew.eq, "ne": ew.ne, "lt": ew.lt, "le": ew.le, "gt": ew.gt, "ge": ew.ge,
    "greater": ew.gt, "greater_equal": ew.ge, "less": ew.lt, "less_equal": ew.le,
    "not_equal": ew.ne, "logical_and": ew.logical_and, "logical_or": ew.logical_or,
    "logical_xor": ew.logical_xor, "logical_not": ew.logical_not,
    "bitwise_and": ew.bitwise_and, "bitwise_or": ew.bitwise_or, "bitwise_xor": ew.bitwise_xor,
    "bitwise_not": ew.bitwise_not, "isnan": ew.isnan, "isinf": ew.isinf,
    "isfinite": ew.isfinite, "where": lambda self, condition, other: ew.where(condition, self,
                                                                               other),
    # reductions
    "sum": rd.sum, "mean": rd.mean, "prod": rd.prod, "max": rd.max, "min": rd.min,
    "amax": rd.amax, "amin": rd.amin, "aminmax": rd.aminmax, "argmax": rd.argmax,
    "argmin": rd.argmin, "all": rd.all, "any": rd.any, "var": rd.var, "std": rd.std,
    "logsumexp": rd.logsumexp, "softmax": rd.softmax, "log_softmax": rd.log_softmax,
    "cumsum": rd.cumsum, "cumprod": rd.cumprod, "norm": rd.norm,
    "count_nonzero": rd.count_nonzero, "nansum": rd.nansum,
    # linear algebra
    "matmul": linalg.matmul, "mm": linalg.mm, "bmm": linalg.bmm, "dot": linalg.dot,
    "outer": linalg.outer, "mv": linalg.mv, "cross": linalg.cross, "addmm": linalg.addmm,
    "inner": linalg.inner, "trace": linalg.trace, "ger": linalg.outer,
    "bernoulli": creation.bernoulli, "multinomial": creation.multinomial,
    # indexing
    "gather": indexing.gather, "scatter": indexing.scatter, "scatter_": indexing.scatter_,
    "scatter_add": indexing.scatter_add, "scatter_add_": indexing.scatter_add_,
    "index_select": indexing.index_select, "index_add": indexing.index_add,
    "index_add_": indexing.index_add_, "index_copy": indexing.index_copy,
    "index_copy_": indexing.index_copy_, "index_fill": indexing.index_fill,
    "index_fill_": indexing.index_fill_, "index_put": indexing.index_put,
    "index_put_": indexing.index_put_, "masked_fill": indexing.masked_fill,
    "masked_fill_": indexing.masked_fill_, "masked_select": indexing.masked_select,
    "masked_scatter": indexing.masked_scatter, "masked_scatter_": indexing.masked_scatter_,
    "take": indexing.take, "take_along_dim": indexing.take_along_dim,
    "nonzero": indexing.nonzero, "argwhere": indexing.argwhere,
    "sort": indexing.sort, "argsort": indexing.argsort, "msort": indexing.msort,
    "topk": indexing.topk, "kthvalue": indexing.kthvalue, "median": indexing.median,
    "unique": indexing.unique,
}

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)


# ---------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------
def _reflect(fn):
    return lambda self, other: fn(other, self)


def _check_other(other: Any) -> bool:
    return isinstance(other, Tensor) or _raw.is_number(other)


def _binary_operator(fn):
    def op(self, other):
        if not _check_other(other):
            return NotImplemented
        return fn(self, other)
    return op


def _rbinary_operator(fn):
    def op(self, other):
        if not _check_other(other):
            return NotImplemented
        return fn(other, self)
    return op


Tensor.__add__ = _binary_operator(ew.add)
Tensor.__radd__ = _binary_operator(ew.add)
Tensor.__sub__ = _binary_operator(ew.sub)
Tensor.__rsub__ = _rbinary_operator(ew.sub)
Tensor.__mul__ = _binary_operator(ew.mul)
Tensor.__rmul__ = _binary_operator(ew.mul)
Tensor.__truediv__ = _binary_operator(ew.div)
Tensor.__rtruediv__ = _rbinary_operator(ew.div)
Tensor.__floordiv__ = _binary_operator(ew.floor_divide)
Tensor.__rfloordiv__ = _rbinary_operator(ew.floor_divide)
Tensor.__mod__ = _binary_operator(ew.remainder)
Tensor.__rmod__ = _rbinary_operator(ew.remainder)
Tensor.__pow__ = _binary_operator(ew.pow)
Tensor.__rpow__ = _rbinary_operator(ew.pow)
Tensor.__matmul__ = lambda self, other: linalg.matmul(self, other) if isinstance(
    other, Tensor) else NotImplemented
Tensor.__rmatmul__ = lambda self, other: linalg.matmul(other, self)
Tensor.__neg__ = ew.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = ew.abs
def _invert(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return ew.bitwise_not(self)


Tensor.__invert__ = _invert
Tensor.__and__ = _binary_operator(lambda a, b: ew.bitwise_and(a, b))
Tensor.__rand__ = _binary_operator(lambda a, b: ew.bitwise_and(a, b))
Tensor.__or__ = _binary_operator(lambda a, b: ew.bitwise_or(a, b))
Tensor.__ror__ = _binary_operator(lambda a, b: ew.bitwise_or(a, b))
Tensor.__xor__ = _binary_operator(lambda a, b: ew.bitwise_xor(a, b))
Tensor.__rxor__ = _binary_operator(lambda a, b: ew.bitwise_xor(a, b))
Tensor.__eq__ = _binary_operator(ew.eq)
Tensor.__ne__ = _binary_operator(ew.ne)
Tensor.__lt__ = _binary_operator(ew.lt)
Tensor.__le__ = _binary_operator(ew.le)
Tensor.__gt__ = _binary_operator(ew.gt)
Tensor.__ge__ = _binary_operator(ew.ge)
Tensor.__hash__ = lambda self: id(self)
Tensor.__getitem__ = indexing.getitem
Tensor.__setitem__ = indexing.setitem


# ---------------------------------------------------------------------------
# In-place methods: name_ = compute out of place, store back into self
# ---------------------------------------------------------------------------
def _make_inplace(fn):
    def method(self, *args, **kwargs):
        return ew.inplace(self, lambda x: fn(x, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


for _name in ("add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "sin",
              "cos", "tanh", "sigmoid", "relu", "clamp", "clamp_min", "clamp_max", "floor",
              "ceil", "round", "trunc", "sign", "reciprocal", "fmod", "remainder", "square",
              "rsqrt", "log1p", "expm1", "atan2", "maximum", "minimum", "lerp", "addcmul",
              "addcdiv", "floor_divide", "tan", "erf", "frac", "logical_not", "log2", "log10",
              "nan_to_num", "clip", "subtract", "multiply", "divide", "true_divide",
              "bitwise_and", "bitwise_or", "bitwise_xor",
              "hypot", "copysign", "xlogy", "cumsum", "cumprod", "asin", "acos", "atan",
              "sinh", "cosh", "negative", "absolute"):
    setattr(Tensor, _name + "_", _make_inplace(_METHODS[_name]))

Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ifloordiv__ = Tensor.floor_divide_


def _iand(self, other):
    return ew.inplace(self, lambda x: ew.bitwise_and(x, other))


def _ior(self, other):
    return ew.inplace(self, lambda x: ew.bitwise_or(x, other))


Tensor.__iand__ = _iand
Tensor.__ior__ = _ior


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        return ew.inplace(self, lambda x: value.expand(x._shape).to(x.dtype) + x * 0)
    return ew.inplace(self, lambda x: _filled_like(x, value))


def _filled_like(x: Tensor, value: Any) -> Tensor:
    out = creation.full_like(x, value)
    return out


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy ``src``'s values into ``self`` (broadcasting, casting, differentiable)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    src.expand(self._shape) if src._shape != self._shape else None
    return ew.inplace(self, lambda x: indexing.copy_like(src, x))


Tensor.zero_ = zero_
Tensor.fill_ = fill_
Tensor.copy_ = copy_


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    with _nograd():
        return creation._fill_random(self, "uniform", generator, float(a), float(b)) \
            if _bump(self) else self


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Any = None) -> Tensor:
    with _nograd():
        return creation._fill_random(self, "normal", generator, float(mean), float(std)) \
            if _bump(self) else self


def random_(self: Tensor, from_: int = 0, to: Any = None, *, generator: Any = None) -> Tensor:
    if to is None:
        from_, to = 0, from_ if from_ else 2 ** 24
    with _nograd():
        return creation._fill_random(self, "randint", generator, int(from_), int(to)) \
            if _bump(self) else self


def bernoulli_(self: Tensor, p: float = 0.5, *, generator: Any = None) -> Tensor:
    with _nograd():
        sample = creation.bernoulli(self, p, generator=generator)
        _raw.copy_into(self, sample)
        _bump(self)
    return self


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    with _nograd():
        u = creation.rand(self._shape, dtype=self.dtype, device=self.device,
                          generator=generator)
        _raw.copy_into(self, -(1 - u).log() / lambd)
        _bump(self)
    return self


def _bump(t: Tensor) -> bool:
    _check_leaf_inplace(t)
    t._bump_version()
    return True


def _check_leaf_inplace(t: Tensor) -> None:
    from ..autograd.grad_mode import is_grad_enabled
    if is_grad_enabled() and t.grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _nograd():
    from ..autograd.grad_mode import no_grad
    return no_grad()


Tensor.uniform_ = uniform_
Tensor.normal_ = normal_
Tensor.random_ = random_
Tensor.bernoulli_ = bernoulli_
Tensor.exponential_ = exponential_


# ---------------------------------------------------------------------------
# dtype and device conversion
# ---------------------------------------------------------------------------
def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)``; returns self if nothing changes."""
    dt = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, Tensor):
            dt, dev = a.dtype, a.device
        elif isinstance(a, str) or hasattr(a, "index") and hasattr(a, "type") and not \
                hasattr(a, "itemsize"):
            try:
                dev = as_device(a)
            except (RuntimeError, TypeError):
                dt = as_dtype(a)
        elif isinstance(a, bool):
            pass
        elif a is not None:
            dt = as_dtype(a)
    out = self
    if dt is not None:
        dt = as_dtype(dt)
        if dt is not out.dtype:
            out = ToCopy.apply(out, dt, None)
    if dev is not None:
        dev = as_device(dev)
        if dev != out.device:
            out = ToCopy.apply(out, None, dev)
    if memory_format is not None and memory_format is not preserve_format:
        out = out.contiguous(memory_format=memory_format)
    if copy and out is self:
        out = self.clone()
    return out


from ..autograd.function import Function  # noqa: E402


class ToCopy(Function):
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dt: Any, dev: Any) -> Tensor:
        ctx.dtype, ctx.device = x.dtype, x.device
        if dev is not None:
            return _raw.to_device(x, dev)
        return _raw.cast(x, dt)

    @staticmethod
    def backward(ctx: Any, g: Tensor):
        return g.to(ctx.device).to(ctx.dtype), None, None


Tensor.to = to
Tensor.cpu = lambda self, memory_format=None: self.to("cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: self.to(
    as_device("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int)
                                             else device)))
Tensor.float = lambda self, memory_format=None: self.to(float32)
Tensor.double = lambda self, memory_format=None: self.to(float64)
Tensor.half = lambda self, memory_format=None: self.to(float16)
Tensor.long = lambda self, memory_format=None: self.to(int64)
Tensor.int = lambda self, memory_format=None: self.to(int32)
Tensor.short = lambda self, memory_format=None: self.to(int16)
Tensor.char = lambda self, memory_format=None: self.to(int8)
Tensor.byte = lambda self, memory_format=None: self.to(uint8)
Tensor.bool = lambda self, memory_format=None: self.to(bool_)
Tensor.type_as = lambda self, other: self.to(other.dtype)
Tensor.view_as = lambda self, other: vw.view(self, other._shape)
Tensor.reshape_as = lambda self, other: vw.reshape(self, other._shape)
Tensor.expand_as = lambda self, other: vw.expand(self, other._shape)
Tensor.T = property(lambda self: vw.permute(self, tuple(reversed(range(self.dim())))))
Tensor.mT = property(lambda self: vw.transpose(self, -2, -1))
Tensor.H = Tensor.T
Tensor.mH = Tensor.mT


def _alias(self: Tensor) -> Tensor:
    """A new header identical to ``self`` (shares storage and version)."""
    return Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype,
                        base=self)


Tensor._alias = _alias


@property
def data(self: Tensor) -> Tensor:
    """The same data without history, and with its own version counter (legacy ``.data``)."""
    out = Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype)
    return out


@data.setter
def data(self: Tensor, value: Tensor) -> None:
    self._storage, self._shape, self._stride = value._storage, value._shape, value._stride
    self._offset, self.dtype = value._offset, value.dtype


Tensor.data = data


# ---------------------------------------------------------------------------
# autograd entry points on the tensor
# ---------------------------------------------------------------------------
def backward(self: Tensor, gradient: Any = None, retain_graph: Any = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Compute d(self)/d(leaf) for every leaf and add it into ``leaf.grad``."""
    engine.backward(self, gradient, retain_graph, create_graph, inputs)


def register_hook(self: Tensor, hook: Any):
    """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new grad."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        return self.grad_fn._add_tensor_hook(self._output_nr, hook)
    from ..autograd.graph import RemovableHandle, _HookDict
    if self._hooks is None:
        self._hooks = _HookDict()
    handle = RemovableHandle(self._hooks)
    self._hooks[handle.id] = hook
    return handle


def retain_grad(self: Tensor) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on leaves)."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return
    self._retains_grad = True
    self.grad_fn._add_retain(self._output_nr, self)


def detach_(self: Tensor) -> Tensor:
    if self._base is not None and self._base.requires_grad:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    self.grad_fn = None
    self._requires_grad = False
    return self


Tensor.backward = backward
Tensor.register_hook = register_hook
Tensor.retain_grad = retain_grad
Tensor.detach_ = detach_


# ---------------------------------------------------------------------------
# new_* factories and resize_
# ---------------------------------------------------------------------------
def _new(factory):
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, **kw: Any) -> Tensor:
        return factory(*size, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad)
    return method


Tensor.new_zeros = _new(creation.zeros)
Tensor.new_ones = _new(creation.ones)
Tensor.new_empty = _new(creation.empty)


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    return creation.full(size, fill_value, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)


Tensor.new_full = new_full
Tensor.new_tensor = new_tensor


def resize_(self: Tensor, *sizes: Any) -> Tensor:
    """Change the shape in place; grows the storage if needed (new elements are uninitialised)."""
    from ..layout import check_shape, contiguous_strides
    shape = check_shape(vw._shape_arg(sizes))
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == self._shape:
        return self            # same shape: nothing changes, strides included
    needed = self._offset + numel(shape)
    if needed * self.dtype.itemsize > self._storage.nbytes():
        _grow_storage(self, needed * self.dtype.itemsize)
    self._shape = shape
    self._stride = contiguous_strides(shape)
    return self


def _grow_storage(t: Tensor, nbytes: int) -> None:
    """Grow ``t``'s storage in place to ``nbytes`` (old elements kept, new ones zero)."""
    st = t._storage
    if st.device.type == "cpu":
        st.resize_(nbytes)
        return
    # A device buffer cannot grow: copy it into a bigger one with the backend's kernels.
    from ..backends import Operand
    backend = t._backend
    old = st._data
    n_old = old.shape[0]
    new = backend.zeros(nbytes // old.dtype.itemsize, old.dtype)
    if n_old:
        backend.copy(Operand(old, (n_old,), (1,), 0), Operand(new, (n_old,), (1,), 0))
    st._data = new


def resize_as_(self: Tensor, other: Tensor) -> Tensor:
    return resize_(self, other._shape)


Tensor.resize_ = resize_
Tensor.resize_as_ = resize_as_
