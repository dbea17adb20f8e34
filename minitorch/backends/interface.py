"""The backend contract: every entry point a device's kernel module provides.

A *backend* is a module (``cpu/backend.py``, ``cuda/backend.py``) that the
layers above reach through :func:`minitorch.backends.get_backend`.  They hand
it :class:`~minitorch.backends.operand.Operand` s (a buffer plus the header
that says how to read it) and flat buffers, and it runs the loops.  This file
says, in one place, what such a module must hold:

* :class:`Backend`, a :class:`typing.Protocol`: the functions every backend
  has, with their signatures.  A type checker reads ``get_backend(...).unary``
  from here, and ``tests/test_backend_interface.py`` checks that both
  backends have every member with the same parameters (:func:`problems`).
* The *kernel families* and *kinds* that pick a kernel, as named constants
  (:data:`FAST`, :data:`ARITH`, :data:`UNIFORM`, ...) with ``Literal`` types.
  They are plain strings, so a table keyed by them costs nothing at run time.
* *Capabilities*: kernels only some backends have (the CPU's direct
  convolution, the CUDA backend's cached scalar buffers).  A backend lists the
  ones it has in its ``CAPABILITIES`` set, and callers ask
  ``THRESHOLD_BACKWARD in backend.CAPABILITIES`` (or :func:`has`), never
  ``hasattr``: a misspelt name is then an error the check finds, not a
  kernel silently never used.  Each capability's members are declared below
  (:data:`CAPABILITY_MEMBERS`), so they are checked like the rest.

Optimizer steps are not named here: each backend finds the kernel of a step
in a table keyed by the step record's type (``optimizer_rules.SGDStep`` ->
the SGD kernel), see ``fused_update``.

To add a backend, write a module with these functions (copy the CPU's
signatures), declare its ``CAPABILITIES``, and run the interface test.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Final, Literal, Protocol

from .operand import Operand
from .optimizer_rules import OptimizerStep

__all__ = [
    "Backend", "problems", "has",
    "UnaryFamily", "BinaryFamily", "RandomKind", "ReduceOp", "ScanOp", "ScatterOp",
    "FAST", "MATH", "INT", "ARITH", "COMPARE", "UNARY_FAMILIES", "BINARY_FAMILIES",
    "UNIFORM", "NORMAL", "RANDINT", "BERNOULLI", "BERNOULLI_SCALAR", "RANDPERM", "MULTINOMIAL",
    "RANDOM_KINDS",
    "SCALAR_BUFFER", "THRESHOLD_BACKWARD", "DIRECT_CONV", "HOST_VIEW", "DENSE_LINALG",
    "FUSED_ELEMENTWISE", "DEVICES", "CAPABILITY_MEMBERS",
]

# ---------------------------------------------------------------------------
# Kernel families: which compiled loop runs an elementwise op code
# (the op codes themselves are the constants of ``scalar_ops.py``).
# ---------------------------------------------------------------------------
#: Unary, float: the ops whose body is cheap enough for a strided kernel of their own
#: (neg, abs, relu, ...): ``scalar_ops.unary_fast``.
FAST: Final = "fast"
#: Float maths (exp, log, sin, ... for unary; pow, atan2, ... for binary): ``scalar_ops.unary``.
MATH: Final = "math"
#: Integer and bool tensors: ``scalar_ops.unary_int`` / ``binary_int``.
INT: Final = "int"
#: Binary, float: + - * / and the other one-instruction ops: ``scalar_ops.arith``.
ARITH: Final = "arith"
#: Binary comparisons, writing bools: ``scalar_ops.compare``.
COMPARE: Final = "compare"

UnaryFamily = Literal["fast", "math", "int"]
BinaryFamily = Literal["arith", "math", "int", "compare"]
UNARY_FAMILIES: Final = (FAST, MATH, INT)
BINARY_FAMILIES: Final = (ARITH, MATH, INT, COMPARE)

# ---------------------------------------------------------------------------
# Random fills (``random_fill``'s ``kind``; the generator is ``rng.py``).
# ---------------------------------------------------------------------------
UNIFORM: Final = "uniform"                  # params: low, high
NORMAL: Final = "normal"                    # params: mean, std
RANDINT: Final = "randint"                  # params: low, high (int64 buffer)
BERNOULLI: Final = "bernoulli"              # params: a buffer of probabilities
BERNOULLI_SCALAR: Final = "bernoulli_scalar"  # params: one probability
RANDPERM: Final = "randperm"                # params: none (the buffer holds 0..n-1 after)
MULTINOMIAL: Final = "multinomial"          # params: probs (rows, k), num_samples, replacement

RandomKind = Literal["uniform", "normal", "randint", "bernoulli", "bernoulli_scalar",
                     "randperm", "multinomial"]
RANDOM_KINDS: Final = (UNIFORM, NORMAL, RANDINT, BERNOULLI, BERNOULLI_SCALAR, RANDPERM,
                       MULTINOMIAL)

#: Reductions by name (PyTorch's names; ``reduce_ops.CODES`` maps them to op codes).
ReduceOp = Literal["sum", "prod", "max", "min", "argmax", "argmin", "all", "any", "nansum"]
#: Running reductions along rows.
ScanOp = Literal["cumsum", "cumprod"]
#: How a scatter combines (``index_maps.SCATTER_CODES``; PyTorch's ``reduce=`` names).
ScatterOp = Literal["set", "add", "multiply", "amax", "amin"]

# ---------------------------------------------------------------------------
# Capabilities: optional kernels, each a name and the members it brings.
# ---------------------------------------------------------------------------
#: ``scalar_buffer(value, dtype)``: a cached one-element buffer for a Python number
#: (a GPU saves a host-to-device copy per ``x * 0.5``; the CPU reads numbers in place).
SCALAR_BUFFER: Final = "scalar_buffer"
#: ``threshold_backward(y, g, out)``: ReLU's backward in one pass (else two kernels).
THRESHOLD_BACKWARD: Final = "threshold_backward"
#: ``conv2d_direct`` and its backward: stride-1 convolution without a column matrix.
DIRECT_CONV: Final = "conv2d_direct"
#: ``numpy_view(op)``: a NumPy array sharing the buffer's memory (host memory only).
HOST_VIEW: Final = "numpy_view"
#: ``linalg``: a module of dense linear algebra kernels (LU, QR, SVD, ...).
DENSE_LINALG: Final = "linalg"
#: ``fused_elementwise`` and friends: runs ``minitorch.compile``'s fused programs.
FUSED_ELEMENTWISE: Final = "fused_elementwise"
#: ``activate(index)``: the backend drives several devices; make one current.
DEVICES: Final = "activate"

#: Each capability -> the members a backend that declares it must have.
CAPABILITY_MEMBERS: Final[dict[str, tuple[str, ...]]] = {
    SCALAR_BUFFER: ("scalar_buffer",),
    THRESHOLD_BACKWARD: ("threshold_backward",),
    DIRECT_CONV: ("conv2d_direct", "conv2d_direct_backward"),
    HOST_VIEW: ("numpy_view",),
    DENSE_LINALG: ("linalg",),
    FUSED_ELEMENTWISE: ("fused_elementwise", "fused_elementwise_source",
                        "fused_elementwise_backward"),
    DEVICES: ("activate",),
}


class Backend(Protocol):
    """What every backend module provides.  Buffers are ``Any``: a NumPy array on
    the CPU, a device array on a GPU.  Every kernel trusts its caller: shapes
    agree, indices are in range, dtypes are the ones named (the ops check)."""

    #: The optional kernels this backend has (names from this module).
    CAPABILITIES: frozenset[str]
    #: Reduction name -> op code (``reduce_ops.CODES``).
    REDUCE_OPS: dict[str, int]
    #: Scatter combine name -> code (``index_maps.SCATTER_CODES``).
    SCATTER_OPS: dict[str, int]

    # -- buffers ------------------------------------------------------------
    def allocate(self, n: int, dtype: Any) -> Any:
        """A new flat buffer of ``n`` elements of NumPy dtype ``dtype`` (not initialised)."""

    def zeros(self, n: int, dtype: Any) -> Any:
        """A new flat buffer of ``n`` zeros."""

    def from_host(self, arr: Any) -> Any:
        """A buffer on this device holding a NumPy array's elements (may be ``arr`` itself)."""

    def to_host(self, data: Any) -> Any:
        """A NumPy array with a buffer's elements (may be ``data`` itself)."""

    def to_numpy(self, op: Operand) -> Any:
        """A NumPy array (a copy) with an operand's elements, in its shape."""

    def num_threads(self) -> int:
        """How many threads the kernels may run on (Numba's count; a GPU's grid)."""

    # -- elementwise --------------------------------------------------------
    def copy(self, src: Operand, dst: Operand) -> None:
        """``dst[...] = src[...]`` for any strides, casting to ``dst``'s dtype."""

    def fill(self, dst: Operand, value: Any) -> None:
        """Every element of ``dst`` set to ``value``."""

    def unary(self, op: int, a: Operand, out: Operand, p0: float = 0.0, p1: float = 0.0,
              family: UnaryFamily = "math") -> None:
        """``out = f(a)`` for the op code ``op`` of ``family`` (:data:`FAST`, :data:`MATH`,
        :data:`INT`); ``p0``, ``p1`` are the op's float parameters (float families)."""

    def binary(self, op: int, a: Operand, b: Operand, out: Operand,
               family: BinaryFamily = "arith") -> None:
        """``out = f(a, b)`` for the op code ``op`` of ``family`` (:data:`ARITH`,
        :data:`MATH`, :data:`INT`, :data:`COMPARE`); broadcasting is stride 0."""

    def binary_runs(self, op: int, family: BinaryFamily, a: Any, a_offset: int, b: Any,
                    b_offset: int, b_step: int, out: Any, n: int) -> None:
        """``out[:n] = f(a[a_offset:][:n], b[b_offset:][:n])`` on flat buffers, no planning
        (``b_step`` 0 repeats ``b[b_offset]``): the lean entry for the commonest calls."""

    def where(self, cond: Operand, a: Operand, b: Operand, out: Operand) -> None:
        """``out = a if cond else b`` elementwise."""

    # -- reductions and rows ------------------------------------------------
    def reduce(self, op: ReduceOp, a: Operand, dims: tuple, out: Any,
               out_idx: Any = None) -> None:
        """Reduce ``a`` over ``dims`` into the contiguous ``out`` (and the winners'
        indices into ``out_idx`` for max/min/argmax/argmin when given)."""

    def scan(self, op: ScanOp, x: Any, out: Any) -> None:
        """Running sum/product along the rows of 2-D contiguous ``x``."""

    def softmax(self, x: Any, out: Any, log: bool) -> None:
        """Softmax (``log_softmax`` if ``log``) of each row of 2-D contiguous ``x``."""

    def softmax_backward(self, g: Any, y: Any, out: Any, log: bool) -> None:
        """The input gradient of softmax from its output ``y`` and output gradient ``g``."""

    def nll_loss(self, logp: Any, target: Any, weight: Any, ignore_index: int, losses: Any,
                 weights: Any) -> int:
        """Per-row losses and weights; returns the first row with a bad target, or -1."""

    def nll_loss_backward(self, target: Any, weight: Any, ignore_index: int, out: Any) -> None:
        """``out[r, target[r]] = -weight[target[r]]``, 0 elsewhere."""

    def sort_rows(self, keys: Any, descending: bool, k: int | None = None) -> tuple:
        """Stable sort of each row of a 2-D array (the first ``k`` only if given):
        ``(values, indices)``."""

    def unique_sorted(self, values: Any, order: Any) -> tuple:
        """Group ascending ``values``: ``(unique values, inverse, counts)``."""

    # -- matrices and convolution -------------------------------------------
    def matmul(self, a: Operand, b: Operand, out: Any) -> None:
        """``out[i] = a[i] @ b[i]`` for 3-D operands; ``out`` contiguous 3-D."""

    def im2col(self, x: Any, geometry: tuple, cols: Any) -> None:
        """Receptive fields of ``x`` (N, C, H, W) as columns of ``cols`` (N, C*kh*kw, L)."""

    def col2im(self, cols: Any, geometry: tuple, x: Any) -> None:
        """Sum columns back into the image ``x`` (im2col's backward)."""

    def im2col_batch(self, x: Any, geometry: tuple, cols: Any) -> None:
        """im2col with all samples' columns side by side: ``cols`` (C*kh*kw, N*L)."""

    def col2im_batch(self, cols: Any, geometry: tuple, x: Any) -> None:
        """im2col_batch's backward."""

    def max_pool2d(self, x: Any, geometry: tuple, out: Any, idx: Any) -> None:
        """Each window's maximum into ``out`` and its flat position into ``idx``."""

    def max_pool2d_backward(self, grad: Any, idx: Any, out: Any,
                            geometry: tuple | None = None) -> None:
        """Route each window's gradient to its winner (``out`` zeroed by the caller)."""

    # -- random numbers -------------------------------------------------------
    def random_fill(self, kind: RandomKind, buf: Any, seed: Any, offset: Any,
                    *params: Any) -> None:
        """Fill contiguous ``buf`` from the counter-based stream ``(seed, offset)``
        with numbers of ``kind`` (:data:`RANDOM_KINDS`)."""

    # -- indexing ---------------------------------------------------------------
    def index_bounds(self, idx: Any) -> tuple:
        """``(min, max)`` of a non-empty contiguous int64 buffer."""

    def add_index_offsets(self, acc: Any, idx: Any, size: int, stride: int) -> None:
        """``acc += (idx wrapped into [0, size)) * stride``."""

    def gather(self, src: Operand, dim: int, idx: Operand, out: Operand) -> None:
        """``out[p] = src[p with coordinate dim replaced by idx[p]]``."""

    def index_select(self, src: Operand, dim: int, idx: Any, out: Operand) -> None:
        """``out = src`` with coordinate ``dim`` read through the 1-D ``idx``."""

    def scatter(self, op: ScatterOp, tgt: Operand, dim: int, idx: Operand,
                src: Operand) -> None:
        """``tgt[p with coordinate dim replaced by idx[p]] (op)= src[p]``."""

    def index_reduce(self, op: ScatterOp, tgt: Operand, dim: int, idx: Any,
                     src: Operand) -> None:
        """``tgt[.., idx[k], ..] (op)= src[.., k, ..]`` along ``dim``."""

    def masked_select(self, src: Operand, mask: Operand) -> Any:
        """The elements of ``src`` where ``mask`` is true, in row-major order."""

    def masked_scatter(self, tgt: Any, mask: Operand, source: Any) -> None:
        """``tgt[mask] = source[:count]`` (flat contiguous ``tgt``)."""

    def count_true(self, mask: Operand) -> int:
        """How many elements of a bool operand are true."""

    def masked_fill(self, tgt: Any, mask: Operand, value: Any) -> None:
        """``tgt[i] = value`` where ``mask`` is true (flat contiguous ``tgt``)."""

    def nonzero(self, mask: Operand) -> Any:
        """``(count, ndim)`` int64 coordinates of the true elements."""

    # -- optimizers -----------------------------------------------------------
    def fused_update(self, hyper: OptimizerStep, arrays: list) -> None:
        """One optimizer step in place; the kernel is found by ``type(hyper)``."""


def has(backend: Any, capability: str) -> bool:
    """Does ``backend`` declare ``capability`` (one of :data:`CAPABILITY_MEMBERS`)?"""
    return capability in backend.CAPABILITIES


# ---------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------
_PROTOCOL_SELF = "self"


def _declared(protocol: type) -> dict[str, Any]:
    """The protocol's members: name -> function (or None for a data attribute)."""
    members: dict[str, Any] = {name: None for name in protocol.__annotations__}
    for name, value in vars(protocol).items():
        if inspect.isfunction(value) and not name.startswith("_"):
            members[name] = value
    return members


def _shape(fn: Any, drop_self: bool) -> list[tuple[str, Any, bool]]:
    """A signature's parameters as (name, kind, has a default)."""
    params = list(inspect.signature(fn).parameters.values())
    if drop_self and params and params[0].name == _PROTOCOL_SELF:
        params = params[1:]
    return [(p.name, p.kind, p.default is not inspect.Parameter.empty) for p in params]


def _compare(backend: Any, name: str, declared: Any, where: str) -> list[str]:
    label = getattr(backend, "__name__", repr(backend))
    if not hasattr(backend, name):
        return [f"{label}: {where} member {name!r} is missing"]
    actual = getattr(backend, name)
    if declared is None:
        return []
    if not callable(actual):
        return [f"{label}.{name}: declared a function, found {type(actual).__name__}"]
    want, got = _shape(declared, True), _shape(actual, False)
    if want != got:
        def show(ps: list) -> str:
            return "(" + ", ".join(n + ("=..." if d else "") for n, _, d in ps) + ")"
        return [f"{label}.{name}{show(got)} does not match the interface's "
                f"{name}{show(want)}"]
    return []


def problems(backend: ModuleType | Any) -> list[str]:
    """Every way ``backend`` breaks the contract (empty: it keeps it).

    Checks that each member of :class:`Backend` is present, that each function
    has the interface's parameters (names, order, kind, which have defaults),
    that ``CAPABILITIES`` names only known capabilities, that each declared
    capability's members are present, and that no capability's member is there
    undeclared (callers would never use it).
    """
    found: list[str] = []
    label = getattr(backend, "__name__", repr(backend))
    for name, declared in _declared(Backend).items():
        found += _compare(backend, name, declared, "required")
    caps = getattr(backend, "CAPABILITIES", None)
    if not isinstance(caps, frozenset):
        return found + [f"{label}: CAPABILITIES must be a frozenset, found {type(caps).__name__}"]
    for cap in sorted(caps - CAPABILITY_MEMBERS.keys()):
        found.append(f"{label}: unknown capability {cap!r} (known: "
                     f"{', '.join(sorted(CAPABILITY_MEMBERS))})")
    for cap, members in CAPABILITY_MEMBERS.items():
        for member in members:
            if cap in caps and not hasattr(backend, member):
                found.append(f"{label}: declares {cap!r} but has no {member!r}")
            elif cap not in caps and hasattr(backend, member):
                found.append(f"{label}: has {member!r} but does not declare {cap!r} in "
                             "CAPABILITIES (callers ask the declaration)")
    return found
