"""Data parallelism over several devices: ``DataParallel`` and its four steps.

``DataParallel(model)(x)`` runs one forward pass on several GPUs, the way
``torch.nn.DataParallel`` does:

1. **scatter** the batch: cut ``x`` along ``dim`` into one chunk per
   device and copy each chunk there;
2. **replicate** the model: one copy per device, whose parameters are
   ``p.to(device)``.  That copy is an op with a backward (``ToCopy``), so a
   replica's parameters are *differentiable functions of the originals*;
3. **apply** each replica to its chunk;
4. **gather** the outputs on the output device (``cat`` along ``dim``,
   again differentiable).

Nothing else is needed for training: ``loss.backward()`` runs back through
``gather``, the replicas and the copies, and each original parameter
receives the **sum** of its replicas' gradients, since each was used once
per replica.  That sum is exactly the gradient of the whole batch on one
device, the "reduce gradients" step of data parallelism, done by autograd.

The four steps are also functions (:func:`scatter`, :func:`replicate`,
:func:`parallel_apply`, :func:`gather`) that accept any devices, CPU
included, which is how they are tested on a machine with one (simulated)
GPU.  Differences from PyTorch: the replicas run one after the other in the
calling thread (their kernels still overlap on the GPUs, since launches
return at once); and with no CUDA device ``DataParallel`` simply runs the
module, as PyTorch's does.

>>> import minitorch as torch
>>> model = torch.nn.Linear(3, 2)
>>> dp = torch.nn.DataParallel(model, device_ids=["cpu", "cpu"])
>>> x = torch.randn(4, 3)
>>> bool((dp(x) - model(x)).abs().max() < 1e-6)
True
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Sequence

from ..autograd.grad_mode import no_grad
from ..cuda import device_count as cuda_device_count, is_available as cuda_is_available
from ..device import as_device, device
from ..ops.views import cat
from ..tensor import Tensor
from .modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "scatter", "replicate", "parallel_apply",
           "gather"]


def _as_device(d: Any) -> device:
    """``0`` -> ``cuda:0``; strings and devices as usual."""
    if isinstance(d, int) and not isinstance(d, bool):
        return device("cuda", d)
    return as_device(d)


# ---------------------------------------------------------------------------
# scatter
# ---------------------------------------------------------------------------
def _scatter_one(obj: Any, devices: list, dim: int) -> list:
    """``obj`` cut into at most ``len(devices)`` pieces, piece ``i`` on ``devices[i]``."""
    if isinstance(obj, Tensor):
        chunks = obj.chunk(len(devices), dim) if obj.dim() else [obj] * len(devices)
        return [c.to(d) for c, d in zip(chunks, devices)]
    if isinstance(obj, (tuple, list)) and obj:
        parts = [_scatter_one(o, devices, dim) for o in obj]
        return [type(obj)(p) for p in zip(*parts)]
    if isinstance(obj, dict) and obj:
        parts = [_scatter_one(v, devices, dim) for v in obj.values()]
        return [type(obj)(zip(obj.keys(), p)) for p in zip(*parts)]
    return [obj for _ in devices]


def scatter(inputs: Any, devices: Sequence[Any], dim: int = 0) -> list:
    """Cut the tensors in ``inputs`` along ``dim``: one piece per device (fewer if the
    batch is smaller); other objects are repeated.  Differentiable."""
    devs = [_as_device(d) for d in devices]
    return _scatter_one(inputs, devs, dim)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, devices: Sequence[Any],
                   dim: int = 0) -> tuple:
    """:func:`scatter` of the positional and keyword arguments, padded to equal length."""
    ins = scatter(inputs, devices, dim) if inputs else []
    kws = scatter(kwargs, devices, dim) if kwargs else []
    if len(ins) < len(kws):
        ins.extend(() for _ in range(len(kws) - len(ins)))
    elif len(kws) < len(ins):
        kws.extend({} for _ in range(len(ins) - len(kws)))
    return tuple(ins), tuple(kws)


# ---------------------------------------------------------------------------
# replicate
# ---------------------------------------------------------------------------
def _replica(module: Module, dev: device, memo: dict) -> Module:
    if id(module) in memo:          # a module used twice is replicated once
        return memo[id(module)]
    replica = object.__new__(type(module))
    replica.__dict__.update(module.__dict__)
    memo[id(module)] = replica
    # The copies are ops (ToCopy): each replica parameter is a differentiable
    # function of the original.  On the original's own device .to() returns
    # the parameter itself, so that replica shares it (as PyTorch's does).
    replica.__dict__["_parameters"] = OrderedDict(
        (name, None if p is None else p.to(dev)) for name, p in module._parameters.items())
    with no_grad():
        replica.__dict__["_buffers"] = OrderedDict(
            (name, None if b is None else b.to(dev)) for name, b in module._buffers.items())
    replica.__dict__["_modules"] = OrderedDict(
        (name, None if m is None else _replica(m, dev, memo))
        for name, m in module._modules.items())
    return replica


def replicate(module: Module, devices: Sequence[Any]) -> list:
    """One copy of ``module`` per device, with parameters ``p.to(device)`` (differentiable)."""
    return [_replica(module, _as_device(d), {}) for d in devices]


# ---------------------------------------------------------------------------
# apply and gather
# ---------------------------------------------------------------------------
def parallel_apply(modules: Sequence[Module], inputs: Sequence[Any],
                   kwargs_tup: Sequence[dict] | None = None, devices: Any = None) -> list:
    """``[modules[i](*inputs[i], **kwargs_tup[i]) for each i]`` (one after the other)."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of inputs {len(inputs)}")
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    outputs = []
    for m, inp, kw in zip(modules, inputs, kwargs_tup):
        args = inp if isinstance(inp, (tuple, list)) else (inp,)
        outputs.append(m(*args, **kw))
    return outputs


def gather(outputs: Sequence[Any], target_device: Any, dim: int = 0) -> Any:
    """Concatenate the replicas' outputs along ``dim`` on ``target_device`` (differentiable)."""
    target = _as_device(target_device)
    first = outputs[0]
    if isinstance(first, Tensor):
        if all(o.dim() == 0 for o in outputs):
            warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                          "scalars; will instead unsqueeze and return a vector.", UserWarning,
                          stacklevel=2)
            return cat([o.to(target).reshape(1) for o in outputs], 0)
        return cat([o.to(target) for o in outputs], dim)
    if first is None:
        return None
    if isinstance(first, dict):
        return type(first)((k, gather([o[k] for o in outputs], target, dim)) for k in first)
    if isinstance(first, (tuple, list)):
        return type(first)(gather(list(parts), target, dim) for parts in zip(*outputs))
    return list(outputs)


# ---------------------------------------------------------------------------
# the module
# ---------------------------------------------------------------------------
class DataParallel(Module):
    """Run ``module`` on several devices, each on a slice of the batch (see the module doc).

    ``device_ids`` defaults to every CUDA device, ``output_device`` to
    ``device_ids[0]``, where the module's parameters must be.  With one
    device the module simply runs there; without CUDA it simply runs.
    """

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.dim = dim
        if device_ids is None:
            if not cuda_is_available():
                self.device_ids = []
                self.output_device = None
                return
            device_ids = list(range(cuda_device_count()))
        if not device_ids:
            self.device_ids = []
            self.output_device = None
            return
        self._devices = [_as_device(d) for d in device_ids]
        out = _as_device(output_device if output_device is not None else device_ids[0])
        # As in PyTorch, CUDA devices are kept as their indices.
        self.device_ids = [d.index if d.type == "cuda" else d for d in self._devices]
        self.output_device = out.index if out.type == "cuda" else out
        self.src_device_obj = self._devices[0]

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        inputs, kwargs = self.scatter(inputs, kwargs, self._devices)
        if not inputs and not kwargs:
            inputs, kwargs = ((),), ({},)
        if len(self._devices) == 1:
            return self.module(*inputs[0], **kwargs[0])
        replicas = self.replicate(self.module, self._devices[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module: Module, device_ids: Sequence[Any]) -> list:
        return replicate(module, device_ids)

    def scatter(self, inputs: tuple, kwargs: dict, device_ids: Sequence[Any]) -> tuple:
        return scatter_kwargs(inputs, kwargs, device_ids, self.dim)

    def parallel_apply(self, replicas: Sequence[Module], inputs: Sequence[Any],
                       kwargs: Sequence[dict]) -> list:
        return parallel_apply(replicas, inputs, kwargs)

    def gather(self, outputs: Sequence[Any], output_device: Any) -> Any:
        return gather(outputs, output_device, self.dim)


# Several processes (over MPI) rather than several devices: nn/ddp.py.
from .ddp import DistributedDataParallel  # noqa: E402
