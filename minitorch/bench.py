"""Benchmarks: time the same workloads in minitorch, NumPy and PyTorch, in one process.

``minitorch bench`` (see :mod:`minitorch.cli`) runs the workloads defined here
and prints a table of median times and ratios; the asv suites in
``asv_benchmarks/`` import the same workload builders to track minitorch's
speed across commits.  The page ``docs/benchmarks.md`` explains both.

**How a workload is written.**  A *builder* takes a library module and
sizes, prepares the inputs, and returns a function of no arguments that
does the timed work once::

    def elementwise(lib, op, layout, n):
        ...
        return lambda: x + y

Because minitorch has PyTorch's API, most builders are written once and run
unchanged with ``lib = minitorch`` and ``lib = torch`` (and often with
``lib = numpy`` as well: ``x + y``, ``x.T`` and ``x @ y`` mean the same
there).  Every library gets the same input values: the arrays are made by
NumPy's generator and handed to each library.

**How a time is taken.**  :func:`measure_all` calls each library's
function a few times first (the first minitorch call compiles its Numba
kernels, or loads them from the disk cache; that is start-up cost, measured
separately by :func:`startup`), picks how many calls make one sample last
about ``min_sample_s`` (a 4-element add needs thousands), then takes samples
*round-robin* over the libraries and reports the median seconds per call.
Round-robin matters on a shared machine: when a neighbour's job slows
everything for a second, it slows every library alike and the ratios
survive.

Only ratios measured in one run mean much; absolute times drift with the
machine's load.  Never assert a speed in a unit test.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

import minitorch          # the public API, used the way a user's program uses it

__all__ = [
    "Workload", "Settings", "workloads", "select", "measure_all", "run", "benchmark",
    "format_report", "startup", "startup_script", "thread_report", "set_threads",
    "format_table", "format_startup_table",
    "elementwise", "reduction", "matmul", "conv2d", "tiny_op", "autograd_chain",
    "training_step", "optimizer_step", "lenet", "mlp", "numpy_conv2d", "max_pool2d",
]

LIBRARIES = ("minitorch", "numpy", "torch")


# ---------------------------------------------------------------------------
# inputs: the same values for every library
# ---------------------------------------------------------------------------
def _random(shape: Sequence[int], seed: int = 0) -> np.ndarray:
    """A float32 array of standard normal values (the same for the same seed)."""
    return np.random.default_rng(seed).standard_normal(tuple(shape), dtype=np.float32)


def _to(lib: Any, array: np.ndarray, requires_grad: bool = False) -> Any:
    """A private copy of ``array`` as ``lib``'s array type (``lib`` is a module)."""
    if lib is np:
        return array.copy()
    tensor = lib.from_numpy(array.copy())
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _is_numpy(lib: Any) -> bool:
    return lib is np


def _compiled(lib: Any, fn: Callable, compiled: bool) -> Callable:
    """``minitorch.compile(fn)`` when asked for and ``lib`` is minitorch; else ``fn``.

    The ``-compiled`` workloads compare minitorch's compiler with PyTorch's
    *eager* mode, the baseline the speed targets name (``torch.compile``
    needs a C++ compiler and minutes of start-up).
    """
    return lib.compile(fn) if compiled and getattr(lib, "__name__", "") == "minitorch" else fn


# ---------------------------------------------------------------------------
# the builders: each returns a function of no arguments that does the work once
# ---------------------------------------------------------------------------
def _square(n: int) -> tuple[int, int]:
    """A square 2-D shape with about ``n`` elements (the transposed layout needs 2-D)."""
    side = max(1, round(math.sqrt(n)))
    return side, side


def elementwise(lib: Any, op: str, layout: str, n: int) -> Callable[[], Any]:
    """``op`` ("add", "mul" or "exp") on about ``n`` float32 elements.

    ``layout`` is "contiguous" (two square matrices), "transposed" (the same
    matrices read through ``.T``: non-contiguous, stride ``(1, side)``) or
    "broadcast" (a matrix plus a row vector that is broadcast down it; binary
    ops only).
    """
    shape = _square(n)
    a, b = _to(lib, _random(shape, 1)), _to(lib, _random(shape, 2))
    if layout == "contiguous":
        x, y = a, b
    elif layout == "transposed":
        x, y = a.T, b.T
    elif layout == "broadcast":
        if op == "exp":
            raise ValueError("exp is unary: it has no broadcast layout")
        x, y = a, _to(lib, _random(shape[1:], 3))
    else:
        raise ValueError(f"unknown layout {layout!r}")
    if op == "add":
        return lambda: x + y
    if op == "mul":
        return lambda: x * y
    if op == "exp":
        return lambda: lib.exp(x)
    raise ValueError(f"unknown op {op!r}")


def reduction(lib: Any, kind: str, n: int) -> Callable[[], Any]:
    """``sum`` over about ``n`` float32 elements: "full", "dim0" or "dim1" of a square matrix."""
    x = _to(lib, _random(_square(n), 4))
    if kind == "full":
        return lambda: x.sum()
    if kind == "dim0":
        return lambda: x.sum(0)      # down the columns: the result has one entry per column
    if kind == "dim1":
        return lambda: x.sum(1)      # along each row
    raise ValueError(f"unknown reduction {kind!r}")


def matmul(lib: Any, n: int, batch: int = 0) -> Callable[[], Any]:
    """``x @ y`` of two ``n x n`` float32 matrices, or of two ``(batch, n, n)`` stacks."""
    shape = (batch, n, n) if batch else (n, n)
    x, y = _to(lib, _random(shape, 5)), _to(lib, _random(shape, 6))
    return lambda: x @ y


def matmul_flops(n: int, batch: int = 0) -> float:
    """Floating-point operations of one matmul: ``2 n^3`` per matrix (a multiply and an add)."""
    return 2.0 * n ** 3 * max(batch, 1)


# The convolution layers: (batch, in channels, out channels, kernel, image side, padding).
CONV_LAYERS = {
    "lenet1": (64, 1, 6, 5, 28, 2),     # LeNet's first layer on 28x28 MNIST digits
    "lenet2": (64, 6, 16, 5, 14, 0),    # LeNet's second layer, after 2x2 pooling
    "c64": (8, 64, 64, 3, 32, 1),       # a ResNet-style 64-channel 3x3 layer
}


def numpy_conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, padding: int) -> np.ndarray:
    """A reference forward convolution in NumPy: unfold the patches, then one BLAS product.

    ``sliding_window_view`` gives every ``kh x kw`` patch as a view, shape
    ``(N, C, OH, OW, kh, kw)``; ``tensordot`` contracts it with the weight
    ``(O, C, kh, kw)`` over ``C, kh, kw`` (it copies the patches into one
    matrix first: the classic *im2col*).
    """
    if padding:
        x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    kh, kw = w.shape[2:]
    patches = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    out = np.tensordot(patches, w, axes=([1, 4, 5], [1, 2, 3]))     # N, OH, OW, O
    out += b
    return np.ascontiguousarray(out.transpose(0, 3, 1, 2))           # N, O, OH, OW


def conv2d(lib: Any, layer: str, backward: bool = False,
           batch: int | None = None) -> Callable[[], Any]:
    """One 2-D convolution layer from :data:`CONV_LAYERS`, forward or forward and backward.

    With ``backward``, the step is ``conv2d(x, w, b).sum().backward()``: the
    gradients of the weight and bias, and of the input unless it is the
    image itself (LeNet's first layer), as in a real training step.
    """
    n, cin, cout, k, side, pad = CONV_LAYERS[layer]
    n = batch or n
    x_np, w_np = _random((n, cin, side, side), 7), _random((cout, cin, k, k), 8) * 0.1
    b_np = _random((cout,), 9)
    if _is_numpy(lib):
        if backward:
            raise ValueError("NumPy has no autograd: forward only")
        return partial(numpy_conv2d, x_np, w_np, b_np, pad)
    needs_input_grad = backward and layer != "lenet1"
    x = _to(lib, x_np, requires_grad=needs_input_grad)
    w, b = _to(lib, w_np, requires_grad=backward), _to(lib, b_np, requires_grad=backward)
    conv = lib.nn.functional.conv2d
    if not backward:
        return lambda: conv(x, w, b, padding=pad)

    def forward_backward() -> None:
        x.grad = w.grad = b.grad = None      # as optimizer.zero_grad() does
        conv(x, w, b, padding=pad).sum().backward()
    return forward_backward


def conv2d_flops(layer: str, backward: bool = False, batch: int | None = None) -> float:
    """Multiply-adds times two of the forward pass; a backward pass costs about twice that."""
    n, cin, cout, k, side, pad = CONV_LAYERS[layer]
    n = batch or n
    out_side = side + 2 * pad - k + 1
    forward = 2.0 * n * cout * out_side * out_side * cin * k * k
    return 3 * forward if backward else forward


def max_pool2d(lib: Any, layer: str, backward: bool = False,
               batch: int | None = None) -> Callable[[], Any]:
    """2 x 2 max pooling of a :data:`CONV_LAYERS` layer's output, forward (and backward)."""
    n, cin, cout, k, side, pad = CONV_LAYERS[layer]
    n = batch or n
    out_side = side + 2 * pad - k + 1
    x_np = _random((n, cout, out_side, out_side), 15)
    if _is_numpy(lib):
        if backward:
            raise ValueError("NumPy has no autograd: forward only")
        half = out_side // 2
        return lambda: x_np.reshape(n, cout, half, 2, half, 2).max(axis=(3, 5))
    x = _to(lib, x_np, requires_grad=backward)
    pool = lib.nn.functional.max_pool2d
    if not backward:
        return lambda: pool(x, 2)

    def forward_backward() -> None:
        x.grad = None
        pool(x, 2).sum().backward()
    return forward_backward


def tiny_op(lib: Any, op: str = "add", requires_grad: bool = False) -> Callable[[], Any]:
    """One op on 4-element tensors: what each call costs in Python, the per-op overhead."""
    a = _to(lib, _random((4,), 10), requires_grad=requires_grad)
    b = _to(lib, _random((4,), 11))
    if op == "add":
        return lambda: a + b
    if op == "mul":
        return lambda: a * b
    if op == "sum":
        return lambda: a.sum()
    if op == "exp":
        return lambda: lib.exp(a)
    raise ValueError(f"unknown op {op!r}")


# The chain cycles through these three ops; tanh keeps the values bounded.
_CHAIN_OPS = (lambda y: y * 1.01, lambda y: y + 0.1, lambda y: y.tanh())


def autograd_chain(lib: Any, length: int = 100, n: int = 256,
                   compiled: bool = False) -> Callable[[], None]:
    """``length`` elementwise ops on an ``n``-element tensor, then ``.sum().backward()``.

    The tensors are small, so this measures the autograd engine: recording
    each op's node, then walking the graph backwards.  ``compiled``: the
    chain through ``minitorch.compile`` (one fused kernel each way).
    """
    if _is_numpy(lib):
        raise ValueError("NumPy has no autograd")
    x = _to(lib, _random((n,), 12), requires_grad=True)

    def forward(y: Any) -> Any:
        for i in range(length):
            y = _CHAIN_OPS[i % 3](y)
        return y
    forward = _compiled(lib, forward, compiled)

    def chain() -> None:
        x.grad = None
        forward(x).sum().backward()
    return chain


def lenet(nn: Any) -> Any:
    """LeNet-5 with ReLU (``minitorch.demos.models.LeNet``), built from either library's ``nn``."""
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),       # 6 x 14 x 14
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),                 # 16 x 5 x 5
        nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10),
    )


def mlp(nn: Any) -> Any:
    """The 784-128-10 MLP of ``minitorch.demos.models.MLP``, built from ``nn``."""
    return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 128), nn.ReLU(), nn.Linear(128, 10))


MODELS = {"lenet": lenet, "mlp": mlp}


def _model_and_batch(lib: Any, model: str, batch: int) -> tuple:
    lib.manual_seed(0)
    net = MODELS[model](lib.nn)
    x = _to(lib, _random((batch, 1, 28, 28), 13))
    y = lib.from_numpy(np.random.default_rng(14).integers(0, 10, batch).astype(np.int64))
    return net, x, y


def training_step(lib: Any, model: str = "lenet", batch: int = 64,
                  optimizer: str = "Adam", compiled: bool = False) -> Callable[[], Any]:
    """One training step of ``model`` ("lenet" or "mlp"): what ``minitorch train`` repeats.

    zero the gradients, forward, cross-entropy loss, backward, optimizer step.
    ``compiled``: the model through ``minitorch.compile``.
    """
    if _is_numpy(lib):
        raise ValueError("NumPy has no autograd")
    net, x, y = _model_and_batch(lib, model, batch)
    opt = getattr(lib.optim, optimizer)(net.parameters(), lr=1e-3)
    net = _compiled(lib, net, compiled)
    cross_entropy = lib.nn.functional.cross_entropy

    def step() -> Any:
        opt.zero_grad()
        loss = cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


OPTIMIZERS = {"sgd": ("SGD", {"lr": 0.01}), "sgd_momentum": ("SGD", {"lr": 0.01, "momentum": 0.9}),
              "adam": ("Adam", {"lr": 1e-3}), "adamw": ("AdamW", {"lr": 1e-3}),
              "rmsprop": ("RMSprop", {"lr": 1e-3}), "adagrad": ("Adagrad", {"lr": 1e-2})}


def optimizer_step(lib: Any, optimizer: str = "adam", model: str = "lenet") -> Callable[[], Any]:
    """``optimizer.step()`` alone, over a model's parameters with their gradients filled in."""
    if _is_numpy(lib):
        raise ValueError("NumPy has no optimizers")
    net, x, y = _model_and_batch(lib, model, 8)
    lib.nn.functional.cross_entropy(net(x), y).backward()
    name, kwargs = OPTIMIZERS[optimizer]
    return getattr(lib.optim, name)(net.parameters(), **kwargs).step


# ---------------------------------------------------------------------------
# the list of workloads that `minitorch bench` runs
# ---------------------------------------------------------------------------
@dataclass
class Workload:
    """A named piece of work: ``build(lib)`` prepares it and returns the function to time."""

    name: str
    description: str
    build: Callable[[Any], Callable[[], Any]]
    libraries: tuple = LIBRARIES            # which libraries can run it
    flops: float | None = None              # per call, to report GFLOP/s
    quick: bool = False                     # part of the --quick subset


def workloads(tiny: bool = False) -> list[Workload]:
    """Every workload of ``minitorch bench``; ``tiny`` shrinks the sizes (for the tests)."""
    n = 32 * 32 if tiny else 1000 * 1000
    mm_sizes = (16, 32) if tiny else (128, 256, 512, 1024)
    conv_batch = 2 if tiny else None
    batch = 4 if tiny else 64
    chain = 10 if tiny else 100
    side = _square(n)[0]
    torch_only = ("minitorch", "torch")
    out: list[Workload] = []
    for op in ("add", "mul", "exp"):
        for layout in ("contiguous", "transposed", "broadcast"):
            if op == "exp" and layout == "broadcast":
                continue
            what = {"contiguous": f"{side}x{side} contiguous",
                    "transposed": f"{side}x{side} read through .T (non-contiguous)",
                    "broadcast": f"{side}x{side} and a row of {side} broadcast down it"}[layout]
            out.append(Workload(f"elementwise/{op}/{layout}", f"{op}, float32, {what}",
                                partial(elementwise, op=op, layout=layout, n=n),
                                quick=op == "add" or (op == "exp" and layout == "contiguous")))
    for kind in ("full", "dim0", "dim1"):
        out.append(Workload(f"reduce/sum/{kind}", f"sum ({kind}) of a {side}x{side} float32 matrix",
                            partial(reduction, kind=kind, n=n), quick=kind != "dim0"))
    for size in mm_sizes:
        out.append(Workload(f"matmul/{size}", f"{size}x{size} @ {size}x{size}, float32",
                            partial(matmul, n=size), flops=matmul_flops(size),
                            quick=size == mm_sizes[0]))
    for layer in ("lenet1", "lenet2"):
        b, cin, cout, k, s, pad = CONV_LAYERS[layer]
        desc = f"batch {conv_batch or b}, {cin}->{cout} {k}x{k} on {s}x{s}, padding {pad}"
        out.append(Workload(f"conv2d/{layer}/forward", desc,
                            partial(conv2d, layer=layer, batch=conv_batch),
                            flops=conv2d_flops(layer, batch=conv_batch), quick=layer == "lenet2"))
        out.append(Workload(f"conv2d/{layer}/forward+backward", desc + ", then .sum().backward()",
                            partial(conv2d, layer=layer, backward=True, batch=conv_batch),
                            libraries=torch_only,
                            flops=conv2d_flops(layer, backward=True, batch=conv_batch),
                            quick=True))
    for layer in ("lenet1", "lenet2"):
        b, cin, cout, k, s, pad = CONV_LAYERS[layer]
        pooled = s + 2 * pad - k + 1
        desc = f"2x2 max pooling of batch {conv_batch or b}, {cout} channels {pooled}x{pooled}"
        out.append(Workload(f"max_pool2d/{layer}/forward", desc,
                            partial(max_pool2d, layer=layer, batch=conv_batch)))
        out.append(Workload(f"max_pool2d/{layer}/forward+backward", desc + ", then backward",
                            partial(max_pool2d, layer=layer, backward=True, batch=conv_batch),
                            libraries=torch_only))
    out.append(Workload("overhead/add-4", "a + b on 4-element tensors (per-op overhead)",
                        partial(tiny_op, op="add"), quick=True))
    out.append(Workload("overhead/add-4-grad", "a + b on 4-element tensors, a requires grad "
                        "(records a graph node)", partial(tiny_op, op="add", requires_grad=True),
                        libraries=torch_only))
    out.append(Workload(f"autograd/chain-{chain}", f"{chain} elementwise ops on 256 elements, "
                        "then .sum().backward()", partial(autograd_chain, length=chain),
                        libraries=torch_only, quick=True))
    out.append(Workload(f"autograd/chain-{chain}-compiled", "the same through "
                        "minitorch.compile (PyTorch: eager)",
                        partial(autograd_chain, length=chain, compiled=True),
                        libraries=torch_only, quick=True))
    out.append(Workload("train/lenet", f"LeNet training step, batch {batch}, Adam",
                        partial(training_step, model="lenet", batch=batch),
                        libraries=torch_only, quick=True))
    out.append(Workload("train/lenet-compiled", "the same, the model through "
                        "minitorch.compile (PyTorch: eager)",
                        partial(training_step, model="lenet", batch=batch, compiled=True),
                        libraries=torch_only))
    small = 2 if tiny else 16
    out.append(Workload(f"train/lenet-b{small}", f"LeNet training step, batch {small}, Adam",
                        partial(training_step, model="lenet", batch=small),
                        libraries=torch_only))
    out.append(Workload("train/mlp", f"MLP 784-128-10 training step, batch {batch}, Adam",
                        partial(training_step, model="mlp", batch=batch),
                        libraries=torch_only, quick=True))
    out.append(Workload("train/mlp-compiled", "the same, the model through minitorch.compile "
                        "(PyTorch: eager)",
                        partial(training_step, model="mlp", batch=batch, compiled=True),
                        libraries=torch_only))
    return out


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------
@dataclass
class Settings:
    """How hard to measure: samples per library, and how long one sample should last."""

    repeats: int = 21             # samples per library (the median is reported)
    min_sample_s: float = 0.02    # one sample repeats the call until it lasts this long
    max_s: float = 3.0            # stop taking samples after this long (at least 3 are taken)
    warmup: int = 2               # calls before timing (the first compiles or loads kernels)


QUICK = Settings(repeats=7, min_sample_s=0.005, max_s=1.0)
TINY = Settings(repeats=2, min_sample_s=0.0, max_s=0.05, warmup=1)


def measure_all(functions: dict[str, Callable[[], Any]], settings: Settings) -> dict[str, float]:
    """Median seconds per call of each function, sampled round-robin (see the module docstring)."""
    timer = time.perf_counter
    number = {}
    for lib, fn in functions.items():
        for _ in range(settings.warmup):
            fn()
        t0 = timer()
        fn()
        once = timer() - t0
        number[lib] = max(1, int(settings.min_sample_s / max(once, 1e-9)))
    samples: dict[str, list[float]] = {lib: [] for lib in functions}
    started = timer()
    for r in range(settings.repeats):
        for lib, fn in functions.items():
            k = number[lib]
            t0 = timer()
            for _ in range(k):
                fn()
            samples[lib].append((timer() - t0) / k)
        if r >= 2 and timer() - started > settings.max_s:
            break
    return {lib: statistics.median(s) for lib, s in samples.items()}


def load_libraries(use_torch: bool = True) -> tuple[dict[str, Any], str | None]:
    """``({name: module}, why_torch_is_missing)``: minitorch, NumPy and PyTorch if importable."""
    libs: dict[str, Any] = {"minitorch": minitorch, "numpy": np}
    if not use_torch:
        return libs, "left out (--no-torch)"
    try:
        libs["torch"] = importlib.import_module("torch")
    except ImportError as e:
        return libs, f"not installed ({e}); comparing with NumPy alone"
    return libs, None


def run(selected: list[Workload], libs: dict[str, Any], settings: Settings,
        progress: Callable[[str], None] | None = None) -> list[dict]:
    """Measure each workload in each library that can run it; one result dict per workload."""
    results = []
    for w in selected:
        if progress:
            progress(w.name)
        functions = {name: w.build(lib) for name, lib in libs.items() if name in w.libraries}
        times = measure_all(functions, settings)
        mt = times["minitorch"]
        result = {"name": w.name, "description": w.description, "unit": "s",
                  "times": times,
                  # > 1 means minitorch is slower by that factor
                  "ratios": {name: mt / t for name, t in times.items()
                             if name != "minitorch" and t > 0}}
        if w.flops:
            result["gflops"] = {name: w.flops / t / 1e9 for name, t in times.items() if t > 0}
        results.append(result)
    return results


# ---------------------------------------------------------------------------
# threads
# ---------------------------------------------------------------------------
def set_threads(n: int, libs: dict[str, Any]) -> None:
    """Use ``n`` threads in minitorch's Numba kernels and in PyTorch.

    NumPy's BLAS (OpenBLAS) reads its thread count once, when NumPy is
    imported: it cannot be changed here.  For one-thread comparisons start
    the process with ``OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1``.
    """
    # Imported here, as minitorch is everywhere in this module: only when a benchmark runs.
    from .backends.cpu.threads import max_num_threads, set_num_threads
    if n > max_num_threads():
        raise ValueError(f"--threads {n}: Numba started with at most "
                         f"{max_num_threads()} threads (NUMBA_NUM_THREADS); "
                         f"start with NUMBA_NUM_THREADS={n} to use more")
    set_num_threads(n)          # minitorch.set_num_threads
    if "torch" in libs:
        libs["torch"].set_num_threads(n)


def _blas_threads() -> tuple[int, str]:
    """OpenBLAS's thread count, fixed at import: from its environment variables, else all cores."""
    for var in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.isdigit() and int(value) > 0:
            return int(value), f"{var}={value}"
    return os.cpu_count() or 1, "default: one per core"


def thread_report(libs: dict[str, Any]) -> dict[str, Any]:
    """The thread counts in effect for each library."""
    import numba
    try:
        layer = numba.threading_layer()          # known once a parallel kernel has run
    except ValueError:
        layer = "not yet chosen"
    blas, why = _blas_threads()
    report = {"minitorch_numba": numba.get_num_threads(), "numba_threading_layer": layer,
              "numpy_blas": blas, "numpy_blas_source": why}
    if "torch" in libs:
        report["torch"] = libs["torch"].get_num_threads()
    return report


def machine_report(libs: dict[str, Any]) -> dict[str, Any]:
    """What ran the benchmarks: CPU, cores, the load, versions."""
    import numba
    info = {"platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__,
            "minitorch": getattr(libs["minitorch"], "__version__", "?")}
    if "torch" in libs:
        info["torch"] = libs["torch"].__version__
    if hasattr(os, "getloadavg"):
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return info


# ---------------------------------------------------------------------------
# start-up: import and the first training step, in a fresh process
# ---------------------------------------------------------------------------
# The script a fresh interpreter runs.  ``__CONFIG__`` is replaced by a dict
# literal.  It counts Numba compilations with Numba's event API
# ("numba:compile" fires only when a kernel is really compiled: loading one
# from the disk cache does not fire it).  asv's ``timeraw_`` benchmarks run
# the same script (with "print": False) and time it from the outside.
STARTUP_SCRIPT = r'''
import json, os, shutil, sys, tempfile, time
config = __CONFIG__
started = time.perf_counter()
fresh_cache = None
if config["lib"] == "minitorch":
    cache = config["cache_dir"]
    if not cache:                              # an empty cache of our own, removed at the end
        cache = fresh_cache = tempfile.mkdtemp(prefix="minitorch-numba-cache-")
    os.environ["NUMBA_CACHE_DIR"] = cache      # before Numba is imported
    if config["threads"]:
        os.environ["NUMBA_NUM_THREADS"] = str(config["threads"])
    from numba.core import event

    class CompileCounter(event.Listener):
        """Counts compilations and the time spent in the outermost ones."""
        def __init__(self):
            self.count, self.seconds, self.depth = 0, 0.0, 0
        def on_start(self, ev):
            self.count += 1
            self.depth += 1
            if self.depth == 1:
                self.t0 = time.perf_counter()
        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0:
                self.seconds += time.perf_counter() - self.t0

    compiles = CompileCounter()
    event.register("numba:compile", compiles)
sys.path.insert(0, config["root"])
lib = __import__(config["lib"])
import_s = time.perf_counter() - started
if config["threads"] and config["lib"] == "torch":
    lib.set_num_threads(config["threads"])
from minitorch.bench import training_step


def rss_mb(field):
    """VmRSS (now) or VmHWM (the peak so far) of this process, in MiB (Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return float("nan")
    return float("nan")


step = training_step(lib, config["model"], config["batch"])
rss_before = rss_mb("VmRSS")
t0 = time.perf_counter()
step().item()
first_s = time.perf_counter() - t0
steady = []
for _ in range(config["steps"]):
    t0 = time.perf_counter()
    step().item()
    steady.append(time.perf_counter() - t0)
result = {"lib": config["lib"], "import_s": import_s, "first_step_s": first_s,
          "steady_step_s": sorted(steady)[len(steady) // 2] if steady else None,
          "rss_before_step_mb": rss_before, "peak_rss_mb": rss_mb("VmHWM")}
if config["lib"] == "minitorch":
    result["compiled_functions"] = compiles.count
    result["compile_s"] = compiles.seconds
if fresh_cache:
    shutil.rmtree(fresh_cache, ignore_errors=True)
if config["print"]:
    print(json.dumps(result))
'''


def _package_root() -> str:
    """The directory holding the ``minitorch`` package (so a child imports this same copy)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(minitorch.__file__)))


def startup_script(lib: str = "minitorch", model: str = "lenet", batch: int = 64,
                   cache_dir: str = "", steps: int = 0, threads: int | None = None,
                   print_json: bool = True) -> str:
    """The source of :data:`STARTUP_SCRIPT` for one configuration.

    ``cache_dir`` is the Numba cache to use; ``""`` means a new empty one.
    """
    config = {"lib": lib, "model": model, "batch": batch, "cache_dir": cache_dir, "steps": steps,
              "threads": threads, "print": print_json, "root": _package_root()}
    return STARTUP_SCRIPT.replace("__CONFIG__", repr(config))


def startup(lib: str = "minitorch", cache_dir: str = "", model: str = "lenet", batch: int = 64,
            steps: int = 5, threads: int | None = None, timeout: float = 900) -> dict:
    """Run :data:`STARTUP_SCRIPT` in a fresh interpreter and return what it measured."""
    code = startup_script(lib, model, batch, cache_dir, steps, threads)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"the start-up script for {lib} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - started
    return result


def startup_report(libs: dict[str, Any], threads: int | None = None, tiny: bool = False,
                   progress: Callable[[str], None] | None = None) -> dict:
    """LeNet's first training step in fresh processes: minitorch with an empty Numba cache,
    minitorch again with that (now warm) cache, and PyTorch."""
    batch, steps = (4, 2) if tiny else (64, 10)
    report = {}
    with tempfile.TemporaryDirectory(prefix="minitorch-bench-cache-") as cache:
        for label, lib, cache_dir in (("minitorch, empty cache", "minitorch", cache),
                                      ("minitorch, warm cache", "minitorch", cache),
                                      ("torch", "torch", "")):
            if lib not in libs:
                continue
            if progress:
                progress(f"start-up: {label}")
            report[label] = startup(lib, cache_dir, batch=batch, steps=steps, threads=threads)
    return report


# ---------------------------------------------------------------------------
# printing
# ---------------------------------------------------------------------------
def format_time(seconds: float | None) -> str:
    """``1.23 ms``: seconds in the unit that keeps three significant digits readable."""
    if seconds is None:
        return "-"
    if seconds == 0:
        return "0 s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _ratio(value: float | None) -> str:
    """``0.85x``, ``12.3x``, ``923x``: about three significant digits."""
    if value is None:
        return "-"
    return f"{value:.0f}x" if value >= 100 else f"{value:.1f}x" if value >= 10 else f"{value:.2f}x"


def format_table(results: list[dict], libraries: Sequence[str]) -> str:
    """A fixed-width table: one row per workload, one time column per library, then ratios."""
    others = [lib for lib in libraries if lib != "minitorch"]
    header = ["workload", *libraries, *(f"mt/{'np' if o == 'numpy' else o}" for o in others),
              "GFLOP/s (mt, np, torch)"]
    rows = []
    for r in results:
        gf = r.get("gflops")
        gflops = ""
        if gf:
            gflops = ", ".join(f"{gf[lib]:.1f}" if lib in gf else "-" for lib in libraries)
        rows.append([r["name"], *(format_time(r["times"].get(lib)) for lib in libraries),
                     *(_ratio(r["ratios"].get(o)) for o in others), gflops])
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for k, row in enumerate([header, *rows]):
        cells = [str(c).ljust(w) if i in (0, len(row) - 1) else str(c).rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_startup_table(report: dict) -> str:
    """The start-up measurements, one row per fresh process."""
    header = ["process", "import", "first step", "steady step", "first/steady", "compiled",
              "compile time", "peak RSS growth"]
    rows = []
    for label, r in report.items():
        steady = r.get("steady_step_s")
        rows.append([label, format_time(r["import_s"]), format_time(r["first_step_s"]),
                     format_time(steady), _ratio(r["first_step_s"] / steady if steady else None),
                     str(r.get("compiled_functions", "-")), format_time(r.get("compile_s")),
                     f"{r['peak_rss_mb'] - r['rss_before_step_mb']:.0f} MiB"])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def select(all_workloads: list[Workload], quick: bool = False,
           pattern: str | None = None) -> list[Workload]:
    """The workloads to run: the ``quick`` subset and/or those whose name contains ``pattern``."""
    return [w for w in all_workloads
            if (not quick or w.quick) and (not pattern or pattern in w.name)]


def benchmark(quick: bool = False, pattern: str | None = None, threads: int | None = None,
              cold: bool = False, use_torch: bool = True, tiny: bool = False,
              repeats: int | None = None,
              progress: Callable[[str], None] | None = None) -> dict:
    """Everything ``minitorch bench`` does, returned as one dict (its ``--json`` output).

    Keys: ``machine``, ``threads`` (the counts in effect), ``settings``,
    ``libraries``, ``torch_missing`` (why PyTorch is not compared, or None),
    ``results`` (one dict per workload: ``times`` in seconds per call,
    ``ratios`` = minitorch's time / the other library's, ``gflops`` where it
    applies) and ``startup`` (with ``cold``; else None).
    """
    libs, torch_missing = load_libraries(use_torch)
    if threads is not None:
        set_threads(threads, libs)
    settings = TINY if tiny else QUICK if quick else Settings()
    if repeats is not None:
        settings = Settings(repeats, settings.min_sample_s, settings.max_s, settings.warmup)
    machine = machine_report(libs)
    results = run(select(workloads(tiny), quick, pattern), libs, settings, progress)
    startup_results = startup_report(libs, threads, tiny, progress) if cold else None
    if "load_average" in machine and hasattr(os, "getloadavg"):
        machine["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return {"machine": machine, "threads": thread_report(libs),
            "settings": {"quick": quick, "tiny": tiny, "filter": pattern,
                         "repeats": settings.repeats, "min_sample_s": settings.min_sample_s},
            "libraries": list(libs), "torch_missing": torch_missing,
            "results": results, "startup": startup_results}


def format_report(report: dict) -> str:
    """The human-readable form of :func:`benchmark`'s result."""
    m, t = report["machine"], report["threads"]
    lines = [f"minitorch {m['minitorch']}, numpy {m['numpy']}, numba {m['numba']}"
             + (f", torch {m['torch']}" if "torch" in m else "")
             + f"; python {m['python']} on {m['cpu_count']} cores ({m['processor']})"]
    if "load_average" in m:
        lines.append(f"load average (1, 5, 15 min): {m['load_average']} before, "
                     f"{m.get('load_average_after')} after")
    threads = (f"threads: minitorch (Numba, {t['numba_threading_layer']} layer) "
               f"{t['minitorch_numba']}, numpy BLAS {t['numpy_blas']} ({t['numpy_blas_source']})")
    if "torch" in t:
        threads += f", torch {t['torch']}"
    lines.append(threads)
    if report["torch_missing"]:
        lines.append(f"PyTorch: {report['torch_missing']}")
    lines.append(f"median time per call over up to {report['settings']['repeats']} samples; "
                 "mt/x = minitorch's time / x's time (above 1: minitorch is slower)")
    lines.append("")
    lines.append(format_table(report["results"], report["libraries"]))
    if report["startup"]:
        lines.append("")
        lines.append("start-up in fresh processes (LeNet, Adam): import, the first training step "
                     "and a steady one")
        lines.append(format_startup_table(report["startup"]))
    return "\n".join(lines)
