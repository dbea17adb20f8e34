"""Forward-mode automatic differentiation (``minitorch.autograd.forward_ad``).

Reverse mode (``backward``) gives ``v^T J``: one pass per *output*.
Forward mode gives ``J t``: one pass per *input direction* ``t`` (the
*tangent*), computed alongside the ordinary forward pass::

    import minitorch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)     # x carries (value, direction)
        y = f(x)
        value, jvp = fwAD.unpack_dual(y)        # jvp == J_f(primal) @ tangent

How minitorch does it (a deliberate design; see docs/autograd.md):

* **A tangent slot on the tensor.**  ``make_dual`` returns a view of the
  primal with its tangent attached (in the tensor's ``__dict__``, tagged with
  the level, so exiting the level forgets every tangent at once).
* **One jvp rule for every op, derived from its backward.**  PyTorch writes
  a forward-mode formula per op; minitorch's ops already have a backward
  written with differentiable ops, and the *double-vjp trick* turns any
  such backward into a jvp: ``g(u) = J^T u`` is linear in ``u``, so the
  gradient of ``g(u) . t`` with respect to ``u`` is ``J t``.  When an op runs
  on inputs that carry tangents, :func:`apply_with_tangents` runs it once
  more on detached copies that require grad, and applies the trick to that
  one-op graph.  This costs about three times the op, only inside a
  ``dual_level`` (outside one, ``Function.apply`` pays one attribute check).
* An op whose backward is not itself differentiable (``once_differentiable``)
  has no jvp this way: it raises ``NotImplementedError`` naming the op, as
  PyTorch does for an op without a forward-mode formula.  A custom
  ``autograd.Function`` of the user's must define ``jvp`` (with
  ``ctx.save_for_forward``), exactly as in PyTorch.

As in PyTorch only one level exists at a time (nested ``dual_level`` raises),
tangents never make ``requires_grad`` true, and ``detach()`` drops the tangent.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, NamedTuple

from . import grad_mode
from .engine import grad as _grad
from ..tensor_base import TensorBase

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


class _State:
    enabled = False          # inside a dual level: Function.apply calls apply_with_tangents
    level = -1               # PyTorch's level number (0 inside the one level)
    token: Any = None        # identifies the current level: tangents tagged otherwise are stale
    busy = False             # computing a tangent: ops run inside it get none themselves


STATE = _State()
_tokens = itertools.count()


def enter_dual_level() -> int:
    """Enter the forward-AD level (only one can exist at a time)."""
    if STATE.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    STATE.level = 0
    STATE.token = next(_tokens)
    STATE.enabled = True
    return STATE.level


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the level; every tangent made in it is forgotten."""
    if level is None:
        level = STATE.level
    if level != STATE.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    STATE.level = -1
    STATE.token = None
    STATE.enabled = False


class dual_level:
    """``with dual_level():`` enters the forward-AD level and leaves it on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

    def __call__(self, fn: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the value and its tangent (None if it has none)."""

    primal: Any
    tangent: Any


def get_tangent(t: Any) -> Any:
    """The tangent of ``t`` at the current level, or None."""
    slot = t.__dict__.get("_fw_tangent") if isinstance(t, TensorBase) else None
    if slot is None or slot[0] is not STATE.token or STATE.token is None:
        return None
    return slot[1]


def set_tangent(t: Any, tangent: Any) -> None:
    """Attach ``tangent`` to ``t`` at the current level."""
    t.__dict__["_fw_tangent"] = (STATE.token, tangent)


def _plain_view(t: Any) -> Any:
    """A view of ``t`` (shares storage, differentiable) that gets no tangent of its own."""
    busy, STATE.busy = STATE.busy, True
    try:
        return t.view_as(t)
    finally:
        STATE.busy = busy


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """A view of ``tensor`` that carries ``tangent``: the direction to differentiate along."""
    if level is None:
        level = STATE.level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    dual = _plain_view(tensor)
    set_tangent(dual, tangent if tangent.dtype is tensor.dtype else tangent.to(tensor.dtype))
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: a view of the value (without tangent) and the tangent or None."""
    if level is None:
        level = STATE.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = get_tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_plain_view(tensor), tangent)


# ---------------------------------------------------------------------------
# Propagation: called by Function.apply while a level is active
# ---------------------------------------------------------------------------
def _jvp_not_implemented(name: str) -> NotImplementedError:
    return NotImplementedError(f"Trying to use forward AD with {name} that does not support it "
                               "because it has not been implemented yet.")


def _is_builtin(cls: type) -> bool:
    return cls.__module__.startswith("minitorch.")


def apply_with_tangents(cls: Any, ctx: Any, args: tuple, kwargs: dict,
                        run: Callable) -> Any:
    """Run the op (``run(cls, ctx, args, kwargs)``) and give its outputs their tangents."""
    if STATE.busy:
        return run(cls, ctx, args, kwargs)
    tangents = [get_tangent(a) for a in args]
    if all(t is None for t in tangents):
        return run(cls, ctx, args, kwargs)
    STATE.busy = True            # ops inside (the op's own parts, the trick) get no tangents
    try:
        if not _is_builtin(cls) or "jvp" in cls.__dict__:
            outputs = run(cls, ctx, args, kwargs)
            out_tangents = _custom_jvp(cls, ctx, tangents)
        else:
            # The trick runs the op on copies: taken before the real run, which
            # may change its inputs in place (an op that marks them dirty).
            out_tangents = _tangents_by_double_vjp(cls, args, kwargs, tangents)
            outputs = run(cls, ctx, args, kwargs)
    finally:
        STATE.busy = False
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    for out, t in zip(outs, out_tangents):
        if isinstance(out, TensorBase) and t is not None and out.dtype.is_floating_point:
            set_tangent(out, t)
    return outputs


def _custom_jvp(cls: Any, ctx: Any, tangents: list) -> tuple:
    """A custom Function's own ``jvp``, reading what ``ctx.save_for_forward`` kept."""
    saved = ctx.__dict__.get("_saved_for_forward")
    kept = ctx._to_save, ctx._saved
    if saved is not None:
        ctx._to_save, ctx._saved = saved, None
    try:
        out = cls.jvp(ctx, *tangents)
    finally:
        ctx._to_save, ctx._saved = kept
    return out if isinstance(out, tuple) else (out,)


def _tangents_by_double_vjp(cls: Any, args: tuple, kwargs: dict, tangents: list) -> tuple:
    """``J t`` for one op from its backward: the gradient of ``(J^T u) . t`` with respect to ``u``."""
    with grad_mode.enable_grad():
        inputs = [a.detach().clone().requires_grad_() if t is not None else a
                  for a, t in zip(args, tangents)]
        outputs = cls.apply(*inputs, **kwargs)
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        diff_inputs = [x for x, t in zip(inputs, tangents) if t is not None]
        diff_tangents = [t for t in tangents if t is not None]
        result: list = [None] * len(outs)
        live = [i for i, o in enumerate(outs)
                if isinstance(o, TensorBase) and o.dtype.is_floating_point and o.requires_grad]
        if not live:
            return tuple(result)
        dummies = [outs[i].new_zeros(outs[i].shape).requires_grad_() for i in live]
        node = outs[live[0]].grad_fn
        name = node.name() if node is not None else cls.__name__
        if getattr(cls.backward, "_once_differentiable", False):
            raise _jvp_not_implemented(name)
        try:
            vjps = _grad([outs[i] for i in live], diff_inputs, dummies, create_graph=True,
                         allow_unused=True)
        except RuntimeError as e:
            raise _jvp_not_implemented(name) from e
        # A vjp that does not depend on u is identically zero (floor, sign...).
        terms = [(g * t).sum() for g, t in zip(vjps, diff_tangents)
                 if g is not None and g.requires_grad]
        jvps = [None] * len(live)
        if terms:
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            try:
                jvps = _grad(total, dummies, allow_unused=True)
            except RuntimeError as e:
                raise _jvp_not_implemented(name) from e
    for i, j in zip(live, jvps):
        result[i] = j.detach() if j is not None else outs[i].new_zeros(outs[i].shape).detach()
    return tuple(result)


def copy_tangent(dst: Any, src: Any) -> None:
    """After ``dst`` took ``src``'s values in place, it takes its tangent too."""
    t = get_tangent(src)
    if t is not None:
        set_tangent(dst, t)
    elif get_tangent(dst) is not None:
        set_tangent(dst, None)
