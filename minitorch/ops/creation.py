"""Creation ops: ``tensor``, ``zeros``, ``arange``, ``rand``, ... and the random generator.

Every factory takes ``dtype``, ``device`` and ``requires_grad`` keywords.
The result is a leaf: it has no ``grad_fn``.

Random numbers come from a counter-based generator: a :class:`Generator`
is just ``(seed, offset)``, and the k-th number is a hash of
``(seed, offset + k)`` (see ``backends/cpu/random.py``).  Filling a tensor of
n numbers advances the offset by n, so results depend only on the seed and
on how many numbers were drawn before, never on threads or devices.
"""

from __future__ import annotations

import math
import time
from typing import Any, Sequence

import numpy as np

from ..device import as_device, get_default_device
from ..dtype import (as_dtype, bool_, dtype, float32, float64, from_numpy_dtype,
                     get_default_dtype, int64)
from ..layout import check_shape, contiguous_strides, numel
from ..storage import TypedStorage, UntypedStorage
from ..tensor import Size, Tensor
from .. import tensor as tensor_module
from . import _raw

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye",
           "arange", "linspace", "logspace", "zeros_like", "ones_like", "full_like",
           "empty_like", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
           "multinomial", "rand_like", "randn_like", "randint_like", "manual_seed", "seed",
           "initial_seed", "Generator", "default_generator", "get_rng_state", "set_rng_state",
           "empty_strided", "scalar_tensor", "asarray"]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _size_arg(size: Sequence) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    return check_shape(size)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _from_host(arr: np.ndarray, dev: Any) -> Tensor:
    """A tensor that owns a contiguous copy (on CPU: maybe the array itself) of ``arr``."""
    from ..backends import get_backend
    # (np.ascontiguousarray would turn a 0-d array into 1-d)
    arr = arr if arr.flags.c_contiguous else arr.copy()
    dt = from_numpy_dtype(arr.dtype)
    data = get_backend(dev).from_host(arr.reshape(-1))
    return Tensor._make(UntypedStorage(data, dev), arr.shape, contiguous_strides(arr.shape), 0,
                        dt)


def _infer_data(data: Any, exact: bool = False) -> np.ndarray:
    """Nested Python lists/numbers/tensors -> a NumPy array with PyTorch's dtype choice.

    Python floats become the default float dtype, NumPy scalars keep their
    own dtype.  With ``exact=True`` (the caller casts to a requested dtype
    afterwards) Python floats are kept in float64, so that
    ``tensor([0.1], dtype=float64)`` is not rounded through float32.
    """
    if isinstance(data, Tensor):
        return np.array(data._host_array())
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (list, tuple)):
        items = [_infer_item(x) for x in data]
        if any(isinstance(x, Tensor) for x in data) and any(
                isinstance(x, Tensor) and x.dim() > 0 for x in data):
            raise ValueError("only one element tensors can be converted to Python scalars")
        return _nested_array(items, exact)
    if isinstance(data, (bool, np.bool_)):
        return np.array(bool(data))
    if isinstance(data, (np.integer, np.floating)):
        return np.array(data)
    if isinstance(data, int):
        return np.array(int(data), dtype=np.int64)
    if isinstance(data, float):
        return np.array(float(data), dtype=np.float64 if exact else get_default_dtype().np)
    if isinstance(data, complex):
        raise TypeError("complex tensors are not supported by minitorch")
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _infer_item(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.item()
    return x


def _numpy_float_types(items: Any, found: set) -> set:
    """The dtypes of NumPy floating scalars and arrays inside nested lists."""
    for x in items:
        if isinstance(x, (list, tuple)):
            _numpy_float_types(x, found)
        elif isinstance(x, (np.floating, np.ndarray)) and x.dtype.kind == "f":
            found.add(x.dtype)
    return found


def _nested_array(items: list, exact: bool = False) -> np.ndarray:
    try:
        arr = np.array(items)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal length lists: {e}") from None
    if arr.dtype == object:
        raise ValueError("too many dimensions or ragged nested sequence: every sublist must "
                         "have the same length")
    if arr.dtype.kind == "f" and not exact:
        # Python floats give the default dtype; NumPy float64 scalars win over it.
        arr = arr.astype(np.result_type(get_default_dtype().np,
                                        *_numpy_float_types(items, set())))
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "U" or arr.dtype.kind == "S":
        raise TypeError("new(): invalid data type 'str'")
    if arr.size == 0 and arr.dtype.kind == "f" and not exact:
        arr = arr.astype(get_default_dtype().np)
    return arr


# ---------------------------------------------------------------------------
# from data
# ---------------------------------------------------------------------------
def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a *copy* of ``data`` (nested lists, numbers, NumPy arrays).

    Python ints give int64, floats the default float dtype, bools bool; a
    NumPy array keeps its dtype.
    """
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    arr = _infer_data(data, exact=dtype is not None)
    if dtype is not None:
        arr = arr.astype(as_dtype(dtype).np)
    from_numpy_dtype(arr.dtype)   # raises TypeError for unsupported NumPy dtypes
    out = _from_host(np.array(arr, copy=True), as_device(device))
    return _finish(out, requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    return tensor(s, dtype=dtype or get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a tensor or NumPy array when it can."""
    dt = as_dtype(dtype) if dtype is not None else None
    dev = as_device(device) if device is not None else None
    if isinstance(data, Tensor):
        out = data
        if dt is not None and dt is not data.dtype:
            out = out.to(dt)
        if dev is not None and dev != out.device:
            out = out.to(dev)
        return out
    if isinstance(data, np.ndarray) and (dev is None or dev.type == "cpu"):
        out = from_numpy(data)
        return out.to(dt) if dt is not None and dt is not out.dtype else out
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array: writes to one show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = from_numpy_dtype(ndarray.dtype)
    item = ndarray.itemsize
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if any(s % item for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    strides = tuple(s // item for s in ndarray.strides)
    if ndarray.size == 0:
        buf = np.empty(0, ndarray.dtype)
        return Tensor._make(UntypedStorage(buf), ndarray.shape, contiguous_strides(ndarray.shape),
                            0, dt)
    span = 1 + sum((n - 1) * s for n, s in zip(ndarray.shape, strides))
    # A flat view of the memory the array covers, so the storage is shared.
    flat = np.lib.stride_tricks.as_strided(ndarray, shape=(span,), strides=(item,))
    t = Tensor._make(UntypedStorage(flat), tuple(ndarray.shape), strides, 0, dt)
    t._numpy_owner = ndarray  # keep the array alive as long as the tensor
    return t


# ---------------------------------------------------------------------------
# filled tensors
# ---------------------------------------------------------------------------
def _factory(size: tuple, dt: Any, device: Any, fill: Any, strides: tuple | None = None
             ) -> Tensor:
    dt = as_dtype(dt) if dt is not None else get_default_dtype()
    dev = as_device(device)
    out = Tensor._empty(size, dt, dev, strides)
    if fill is not None and out.numel():
        out._backend.fill(out._operand(), fill)
    return out


def zeros(*size: Any, out: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    return _finish(_factory(_size_arg(size), dtype, device, 0), requires_grad)


def ones(*size: Any, out: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    return _finish(_factory(_size_arg(size), dtype, device, 1), requires_grad)


def empty(*size: Any, out: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, layout: Any = None, pin_memory: bool = False,
          memory_format: Any = None) -> Tensor:
    return _finish(_factory(_size_arg(size), dtype, device, None), requires_grad)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False) -> Tensor:
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    from ..layout import storage_span
    _, hi = storage_span(tuple(size), tuple(stride), 0)
    base = Tensor._empty((hi,), dt, as_device(device))
    return _finish(Tensor._make(base._storage, tuple(size), tuple(stride), 0, dt), requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value by default."""
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = bool_
        elif isinstance(fill_value, int):
            dtype = int64
        elif isinstance(fill_value, Tensor):
            dtype = fill_value.dtype
            fill_value = fill_value.item()
    return _finish(_factory(_size_arg((size,)) if not isinstance(size, int) else (size,),
                            dtype, device, fill_value), requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    m = n if m is None else m
    out = zeros(n, m, dtype=dtype, device=device)
    k = min(n, m)
    if k:
        from ..backends import Operand
        out._backend.fill(Operand(out._storage._data, (k,), (m + 1,), 0), 1)
    return _finish(out, requires_grad)


def _like(input: Tensor, dtype: Any, device: Any, memory_format: Any = None) -> tuple:
    """Shape, dtype, device and strides of a ``*_like`` result (layout kept by default)."""
    return (input._shape, dtype if dtype is not None else input.dtype,
            device if device is not None else input.device,
            _raw.layout_strides(input, memory_format))


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev, strides = _like(input, dtype, device, memory_format)
    return _finish(_factory(shape, dt, dev, 0, strides), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev, strides = _like(input, dtype, device, memory_format)
    return _finish(_factory(shape, dt, dev, 1, strides), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev, strides = _like(input, dtype, device, memory_format)
    return _finish(_factory(shape, dt, dev, None, strides), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev, strides = _like(input, dtype, device, memory_format)
    return _finish(_factory(shape, dt, dev, fill_value, strides), requires_grad)


# ---------------------------------------------------------------------------
# ranges
# ---------------------------------------------------------------------------
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False, out: Any = None) -> Tensor:
    """Values from ``start`` up to (not including) ``end``, ``step`` apart."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = int64 if all(isinstance(v, int) and not isinstance(v, bool) for v in vals) \
            else get_default_dtype()
    dt = as_dtype(dtype)
    n = max(0, math.ceil((end - start) / step))
    # start + i * step computed in float64 (or int64), as PyTorch does, then cast.
    if dt.is_floating_point:
        host = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
    else:
        host = (int(start) + np.arange(n, dtype=np.int64) * int(step)) if all(
            isinstance(v, int) for v in vals) else \
            np.floor(start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
        host = host.astype(dt.np)
    return _finish(_from_host(host, as_device(device)), requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    host = np.linspace(start, end, steps, dtype=np.float64)
    if not dt.is_floating_point:
        host = np.trunc(host)
    return _finish(_from_host(host.astype(dt.np), as_device(device)), requires_grad)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    host = np.power(base, np.linspace(start, end, steps, dtype=np.float64))
    return _finish(_from_host(host.astype(dt.np), as_device(device)), requires_grad)


# ---------------------------------------------------------------------------
# random numbers
# ---------------------------------------------------------------------------
class Generator:
    """A random stream: ``(seed, offset)``; see the module docstring.

    ``manual_seed(s)`` restarts the stream; ``get_state``/``set_state`` save and
    restore it (as a 2-element int64 tensor).
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = as_device(device)
        self._seed = 67280421310721     # PyTorch's default seed
        self._offset = 0

    def manual_seed(self, seed: int) -> "Generator":
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
            raise RuntimeError(f"Overflow when unpacking long long: {seed}")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = 0
        return self

    def seed(self) -> int:
        s = time.time_ns() & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        return tensor([self._seed - (1 << 64) if self._seed >= (1 << 63) else self._seed,
                       self._offset], dtype=int64)

    def set_state(self, state: Tensor) -> "Generator":
        seed, offset = (int(v) for v in state.tolist())
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = offset
        return self

    def _take(self, n: int) -> tuple:
        """Reserve ``n`` counters; returns the (seed, offset) to fill with."""
        start = self._offset
        self._offset += n
        return np.uint64(self._seed), np.uint64(start)


default_generator = Generator()

# One default generator per CUDA device, as in PyTorch (``minitorch.cuda.manual_seed``),
# made on first use and started at ``_cuda_seed``.  Every generator computes the same
# stream from the same seed, so a seed gives the same numbers on every device.
_cuda_generators: dict = {}
_cuda_seed = default_generator.initial_seed()


def cuda_generator(device: Any) -> Generator:
    """The default generator of a CUDA device (``minitorch.cuda.default_generators``)."""
    dev = as_device(device)
    gen = _cuda_generators.get(dev)
    if gen is None:
        gen = _cuda_generators[dev] = Generator(dev).manual_seed(_cuda_seed)
    return gen


def seed_cuda(seed: int, device: Any = None) -> None:
    """Seed the default generator of one CUDA device, or (``device=None``) of all of them."""
    global _cuda_seed
    if device is not None:
        cuda_generator(device).manual_seed(seed)
        return
    _cuda_seed = Generator().manual_seed(seed).initial_seed()
    for gen in _cuda_generators.values():
        gen.manual_seed(seed)


def manual_seed(seed: int) -> Generator:
    """Seed the default generators of the CPU and of every CUDA device (as PyTorch does)."""
    default_generator.manual_seed(seed)
    seed_cuda(seed)
    return default_generator


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def _gen(generator: Generator | None, device: Any = None) -> Generator:
    """The generator to draw from for a tensor on ``device`` (checked against ``generator``)."""
    dev = as_device(device) if device is not None else None
    if generator is None:
        if dev is not None and dev.type == "cuda":
            return cuda_generator(dev)
        return default_generator
    if dev is not None and generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def _float_factory(size: tuple, dtype: Any, device: Any) -> Tensor:
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{dt._legacy}'")
    return Tensor._empty(size, dt, as_device(device))


def _fill_random(out: Tensor, kind: str, generator: Generator | None, *params: Any) -> Tensor:
    """Fill ``out`` (any dtype, any layout) with random numbers of ``kind``."""
    n = out.numel()
    if n == 0:
        return out
    backend = out._backend
    # Kernels fill contiguous float32/float64/int64 buffers; anything else goes
    # through a temporary and a cast.
    work_dt = {"uniform": float64, "normal": float64, "randint": int64, "bernoulli": bool_}[kind]
    if out.dtype in (float32, float64) and kind in ("uniform", "normal"):
        work_dt = out.dtype
    direct = out.is_contiguous() and out.dtype is work_dt
    work = out if direct else Tensor._empty(out._shape, work_dt, out.device)
    from ..backends.cpu import random as rk
    counters = rk.normal_counters(n) if kind == "normal" else n
    seed, offset = _gen(generator, out.device)._take(counters)
    buf = work._storage._data[work._offset:work._offset + n]
    backend.random_fill(kind, buf, seed, offset, *params)
    if not direct:
        _raw.copy_into(out, work)
    return out


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None) -> Tensor:
    """Uniform random numbers in [0, 1)."""
    t = _float_factory(_size_arg(size), dtype, device)
    return _finish(_fill_random(t, "uniform", generator, 0.0, 1.0), requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None,
          device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    """Standard normal random numbers (mean 0, variance 1)."""
    t = _float_factory(_size_arg(size), dtype, device)
    return _finish(_fill_random(t, "normal", generator, 0.0, 1.0), requires_grad)


def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform random integers in [low, high)."""
    if size is None:
        if isinstance(high, (tuple, list, Size)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = as_dtype(dtype) if dtype is not None else int64
    t = Tensor._empty(check_shape(size), dt, as_device(device))
    return _finish(_fill_random(t, "randint", generator, int(low), int(high)), requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = as_dtype(dtype) if dtype is not None else int64
    work = Tensor._empty((n,), int64, as_device(device))
    if n:
        seed, offset = _gen(generator, work.device)._take(n)
        work._backend.random_fill("randperm", work._storage._data, seed, offset)
    return _finish(work if dt is int64 else work.to(dt), requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, dtype: Any = None, device: Any = None,
           requires_grad: bool = False, out: Any = None) -> Tensor:
    """Normal random numbers; ``mean`` and ``std`` may be tensors (broadcast) or numbers."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        shape = _raw.shape_of(mean) if isinstance(mean, Tensor) else _raw.shape_of(std)
        if isinstance(mean, Tensor) and isinstance(std, Tensor):
            from ..layout import broadcast_shapes
            shape = broadcast_shapes(mean._shape, std._shape)
        ref = mean if isinstance(mean, Tensor) else std
        z = _fill_random(Tensor._empty(shape, ref.dtype, ref.device), "normal", generator,
                         0.0, 1.0)
        with _no_grad():
            return z * std + mean
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    t = _float_factory(check_shape(size), dtype, device)
    return _finish(_fill_random(t, "normal", generator, float(mean), float(std)), requires_grad)


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None) -> Tensor:
    """0/1 samples: 1 with probability ``input`` (elementwise) or ``p``."""
    if p is None:
        if bool(((input < 0) | (input > 1)).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        probs = _raw.contiguous(_raw.cast(input, float64))
    else:
        probs = None
    work = Tensor._empty(input._shape, bool_, input.device)
    n = work.numel()
    if n:
        seed, offset = _gen(generator, work.device)._take(n)
        if probs is None:
            work._backend.random_fill("bernoulli_scalar", work._storage._data, seed, offset,
                                      float(p))
        else:
            work._backend.random_fill("bernoulli", work._storage._data, seed, offset,
                                      probs._storage._data[probs._offset:probs._offset + n])
    return _raw.cast(work, input.dtype if input.dtype.is_floating_point else float32)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Draw category indices with probabilities proportional to the rows of ``input``."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    probs = _raw.contiguous(_raw.cast(input.reshape(1, -1) if input.dim() == 1 else input,
                                      float64))
    host = probs._host_array()
    k = host.shape[1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if (host < 0).any() or not np.isfinite(host).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (host.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not replacement and ((host > 0).sum(axis=1) < num_samples).any():
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                           "enough non-negative category to sample)")
    rows = host.shape[0]
    out = Tensor._empty((rows, num_samples), int64, input.device)
    from ..backends.cpu import random as rk
    seed, offset = _gen(generator, out.device)._take(
        rk.multinomial_counters(rows, k, num_samples, replacement))
    out._backend.random_fill("multinomial", out._storage._data.reshape(rows, num_samples), seed,
                             offset, np.ascontiguousarray(host), num_samples, bool(replacement))
    return out.reshape(num_samples) if input.dim() == 1 else out


def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev, strides = _like(input, dtype, device, memory_format)
    return _relaid(rand(shape, dtype=dt, device=dev, requires_grad=requires_grad), strides)


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev, strides = _like(input, dtype, device, memory_format)
    return _relaid(randn(shape, dtype=dt, device=dev, requires_grad=requires_grad), strides)


def randint_like(input: Tensor, low: int = 0, high: Any = None, *, dtype: Any = None,
                 device: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    shape, dt, dev, strides = _like(input, dtype, device, memory_format)
    if high is None:
        low, high = 0, low
    return _relaid(randint(low, high, shape, dtype=dt, device=dev,
                           requires_grad=requires_grad), strides)


def _relaid(t: Tensor, strides: tuple | None) -> Tensor:
    """A fresh (leaf) tensor's storage read with the dense ``strides`` of a ``*_like`` layout.

    The random stream fills the storage in order; the strides only say which
    index each value lands at, as when PyTorch fills a non-contiguous result.
    """
    if strides is None:
        return t
    return _finish(Tensor._make(t._storage, t._shape, strides, 0, t.dtype), t.requires_grad)


# ---------------------------------------------------------------------------
# Tensor(...): the legacy constructor
# ---------------------------------------------------------------------------
def _legacy_constructor(*args: Any, device: Any = None, dtype: Any = None) -> Tensor:
    """``Tensor(data)``, ``Tensor(*sizes)`` or ``Tensor(storage)``: always the default float type."""
    dt = get_default_dtype() if dtype is None else as_dtype(dtype)
    if len(args) == 0:
        return empty(0, dtype=dt, device=device)
    if len(args) == 1 and isinstance(args[0], (TypedStorage, UntypedStorage)):
        st = args[0].untyped() if isinstance(args[0], TypedStorage) else args[0]
        n = st._data.shape[0]
        return Tensor._make(st, (n,), (1,), 0, from_numpy_dtype(st._data.dtype))
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return empty(*args, dtype=dt, device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        return empty(tuple(args[0]), dtype=dt, device=device)
    if len(args) == 1:
        return tensor(_infer_data(args[0]).astype(dt.np), device=device)
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")


tensor_module._legacy_constructor = _legacy_constructor
