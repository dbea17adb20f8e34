"""Sampling ops: ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, ``bernoulli``,
``multinomial``, the random ``*_like`` factories, and the in-place fills
(``uniform_``, ``normal_``, ``random_``, ``bernoulli_``, ``exponential_``).

Each draws from a :class:`minitorch.random.Generator` (the default one of the
tensor's device unless ``generator=`` is given): the generator reserves a
range of counters, and a kernel turns each counter into a random number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import grad_mode
from ..backends.interface import (BERNOULLI, BERNOULLI_SCALAR, MULTINOMIAL, NORMAL, RANDINT,
                                  RANDPERM, UNIFORM, RandomKind)
from ..autograd.grad_mode import no_grad
from ..device import as_device
from ..dtype import as_dtype, bool_, float32, float64, get_default_dtype, int64
from ..layout import check_shape
from ..random import Generator, generator_for
from ..tensor_base import Size, TensorBase
from ..trace_mode import recorded   # factories join a compiler's trace
from . import kernels
from .creation import like_layout, new_leaf, size_arg
from .registry import declare
from ..layout import broadcast_shapes

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "rand_like", "randn_like", "randint_like", "uniform_", "normal_", "random_",
           "bernoulli_", "exponential_"]


def _float_factory(size: tuple, dtype: Any, device: Any) -> TensorBase:
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{dt._legacy}'")
    return TensorBase._empty(size, dt, as_device(device))


def _fill_random(out: TensorBase, kind: RandomKind, generator: Generator | None,
                 *params: Any) -> TensorBase:
    """Fill ``out`` (any dtype, any layout) with random numbers of ``kind``."""
    n = out.numel()
    if n == 0:
        return out
    # Kernels fill contiguous float32/float64/int64 buffers; anything else goes
    # through a temporary and a cast.
    work_dt = {UNIFORM: float64, NORMAL: float64, RANDINT: int64, BERNOULLI: bool_}[kind]
    if out.dtype in (float32, float64) and kind in (UNIFORM, NORMAL):
        work_dt = out.dtype
    direct = out.is_contiguous() and out.dtype is work_dt
    work = out if direct else TensorBase._empty(out._shape, work_dt, out.device)
    counters = kernels.normal_counters(n) if kind == NORMAL else n
    seed, offset = generator_for(generator, out.device)._take(counters)
    kernels.random_fill(kind, kernels.flat(work), seed, offset, work.device, *params)
    if not direct:
        kernels.copy_into(out, work)
    return out


@recorded
def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None) -> TensorBase:
    """Uniform random numbers in [0, 1)."""
    t = _float_factory(size_arg(size), dtype, device)
    return new_leaf(_fill_random(t, UNIFORM, generator, 0.0, 1.0), requires_grad)


@recorded
def randn(*size: Any, generator: Generator | None = None, dtype: Any = None,
          device: Any = None, requires_grad: bool = False, out: Any = None) -> TensorBase:
    """Standard normal random numbers (mean 0, variance 1)."""
    t = _float_factory(size_arg(size), dtype, device)
    return new_leaf(_fill_random(t, NORMAL, generator, 0.0, 1.0), requires_grad)


@recorded
def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> TensorBase:
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
    t = TensorBase._empty(check_shape(size), dt, as_device(device))
    return new_leaf(_fill_random(t, RANDINT, generator, int(low), int(high)), requires_grad)


@recorded
def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> TensorBase:
    """A random permutation of 0 .. n-1."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = as_dtype(dtype) if dtype is not None else int64
    work = TensorBase._empty((n,), int64, as_device(device))
    if n:
        seed, offset = generator_for(generator, work.device)._take(n)
        kernels.random_fill(RANDPERM, kernels.buffer(work), seed, offset, work.device)
    return new_leaf(work if dt is int64 else work.to(dt), requires_grad)


@recorded
def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, dtype: Any = None, device: Any = None,
           requires_grad: bool = False, out: Any = None) -> TensorBase:
    """Normal random numbers; ``mean`` and ``std`` may be tensors (broadcast) or numbers."""
    if isinstance(mean, TensorBase) or isinstance(std, TensorBase):
        shape = kernels.shape_of(mean) if isinstance(mean, TensorBase) else kernels.shape_of(std)
        if isinstance(mean, TensorBase) and isinstance(std, TensorBase):
            shape = broadcast_shapes(mean._shape, std._shape)
        ref = mean if isinstance(mean, TensorBase) else std
        z = _fill_random(TensorBase._empty(shape, ref.dtype, ref.device), NORMAL, generator,
                         0.0, 1.0)
        with no_grad():
            return z * std + mean
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    t = _float_factory(check_shape(size), dtype, device)
    return new_leaf(_fill_random(t, NORMAL, generator, float(mean), float(std)), requires_grad)


@recorded
def bernoulli(input: TensorBase, p: Any = None, *, generator: Generator | None = None) -> TensorBase:
    """0/1 samples: 1 with probability ``input`` (elementwise) or ``p``."""
    if p is None:
        if bool(((input < 0) | (input > 1)).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        probs = kernels.contiguous(kernels.cast(input, float64))
    else:
        probs = None
    work = TensorBase._empty(input._shape, bool_, input.device)
    n = work.numel()
    if n:
        seed, offset = generator_for(generator, work.device)._take(n)
        if probs is None:
            kernels.random_fill(BERNOULLI_SCALAR, kernels.buffer(work), seed, offset,
                                work.device, float(p))
        else:
            kernels.random_fill(BERNOULLI, kernels.buffer(work), seed, offset, work.device,
                                kernels.flat(probs))
    return kernels.cast(work, input.dtype if input.dtype.is_floating_point else float32)


@recorded
def multinomial(input: TensorBase, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> TensorBase:
    """Draw category indices with probabilities proportional to the rows of ``input``."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    probs = kernels.contiguous(kernels.cast(input.reshape(1, -1) if input.dim() == 1 else input,
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
    out = TensorBase._empty((rows, num_samples), int64, input.device)
    seed, offset = generator_for(generator, out.device)._take(
        kernels.multinomial_counters(rows, k, num_samples, replacement))
    kernels.random_fill(MULTINOMIAL, kernels.array_of(out, (rows, num_samples)), seed, offset,
                        out.device, np.ascontiguousarray(host), num_samples, bool(replacement))
    return out.reshape(num_samples) if input.dim() == 1 else out


@recorded
def rand_like(input: TensorBase, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> TensorBase:
    shape, dt, dev, strides = like_layout(input, dtype, device, memory_format)
    return _relaid(rand(shape, dtype=dt, device=dev, requires_grad=requires_grad), strides)


@recorded
def randn_like(input: TensorBase, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> TensorBase:
    shape, dt, dev, strides = like_layout(input, dtype, device, memory_format)
    return _relaid(randn(shape, dtype=dt, device=dev, requires_grad=requires_grad), strides)


@recorded
def randint_like(input: TensorBase, low: int = 0, high: Any = None, *, dtype: Any = None,
                 device: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> TensorBase:
    shape, dt, dev, strides = like_layout(input, dtype, device, memory_format)
    if high is None:
        low, high = 0, low
    return _relaid(randint(low, high, shape, dtype=dt, device=dev,
                           requires_grad=requires_grad), strides)


def _relaid(t: TensorBase, strides: tuple | None) -> TensorBase:
    """A fresh (leaf) tensor's storage read with the dense ``strides`` of a ``*_like`` layout.

    The random stream fills the storage in order; the strides only say which
    index each value lands at, as when PyTorch fills a non-contiguous result.
    """
    if strides is None:
        return t
    return new_leaf(TensorBase._make(t._storage, t._shape, strides, 0, t.dtype), t.requires_grad)


# ---------------------------------------------------------------------------
# In-place fills: t.uniform_(), t.normal_(), ...  (used by nn.init)
# ---------------------------------------------------------------------------
def _check_fill(t: TensorBase) -> None:
    """The checks of an in-place change of ``t``, then its version bump."""
    if grad_mode.is_grad_enabled() and t.grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    t._bump_version()


def uniform_(self: TensorBase, a: float = 0.0, b: float = 1.0, *,
             generator: Generator | None = None) -> TensorBase:
    """Fill with numbers drawn uniformly from [a, b)."""
    _check_fill(self)
    with no_grad():
        return _fill_random(self, UNIFORM, generator, float(a), float(b))


def normal_(self: TensorBase, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> TensorBase:
    """Fill with normal random numbers of the given mean and standard deviation."""
    _check_fill(self)
    with no_grad():
        return _fill_random(self, NORMAL, generator, float(mean), float(std))


def random_(self: TensorBase, from_: int = 0, to: Any = None, *,
            generator: Generator | None = None) -> TensorBase:
    """Fill with integers drawn uniformly from ``[from_, to)`` (``random_(n)``: ``[0, n)``)."""
    if to is None:
        from_, to = 0, from_ if from_ else 2 ** 24
    _check_fill(self)
    with no_grad():
        return _fill_random(self, RANDINT, generator, int(from_), int(to))


def bernoulli_(self: TensorBase, p: float = 0.5, *,
               generator: Generator | None = None) -> TensorBase:
    """Fill with 0/1 samples, 1 with probability ``p``."""
    with no_grad():
        sample = bernoulli(self, p, generator=generator)
        kernels.copy_into(self, sample)
        _check_fill(self)
    return self


def exponential_(self: TensorBase, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> TensorBase:
    """Fill with exponential random numbers of rate ``lambd`` (by inverting the CDF)."""
    with no_grad():
        u = rand(self._shape, dtype=self.dtype, device=self.device, generator=generator)
        kernels.copy_into(self, -(1 - u).log() / lambd)
        _check_fill(self)
    return self


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(bernoulli)
declare(multinomial)
declare(normal, method=False)
declare(rand, method=False)
declare(rand_like, method=False)
declare(randint, method=False)
declare(randint_like, method=False)
declare(randn, method=False)
declare(randn_like, method=False)
declare(randperm, method=False)
declare(uniform_, function=False)
declare(normal_, function=False)
declare(random_, function=False)
declare(bernoulli_, function=False)
declare(exponential_, function=False)
