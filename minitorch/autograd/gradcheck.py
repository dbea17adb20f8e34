"""Gradient checks: compare autograd's gradients with finite differences.

``gradcheck(func, inputs)`` builds two Jacobians for every pair (output,
input that requires grad), each of shape ``(input.numel(), output.numel())``:

* the **numerical** one, column by column: nudge one input element by
  ``+eps`` and ``-eps`` and take the central difference
  ``(f(x + eps) - f(x - eps)) / (2 * eps)`` of every output element;
* the **analytical** one, row by row of the transposed problem: one
  ``autograd.grad`` call per output element, with a one-hot ``grad_output``
  (a vector-Jacobian product), which gives d(that output element)/d(input).

They must agree within ``atol + rtol * |numerical|`` element by element, or
:class:`GradcheckError` is raised with both Jacobians in the message.  The
finite differences are only accurate in float64, so inputs that require grad
should be float64 (a ``UserWarning`` says so otherwise), exactly as in
PyTorch.

``gradgradcheck(func, inputs)`` checks second derivatives: it runs
``gradcheck`` on the function that returns ``autograd.grad(func(inputs),
inputs, grad_outputs, create_graph=True)``, so the backward formulas are
themselves differentiated.

Differences from PyTorch (see docs/differences.md): minitorch has no
forward-mode AD and no ``vmap``, so ``check_forward_ad``,
``check_batched_grad``, ``check_batched_forward_grad`` and
``check_fwd_over_rev`` cannot be switched on (``NotImplementedError``);
``fast_mode=True`` runs the full (slow, stricter) check.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..device import CPU
from ..dtype import float64, from_numpy_dtype
from ..random import Generator
from ..storage import UntypedStorage
from ..tensor_base import TensorBase
from .engine import _execute, grad as autograd_grad
from .graph import edge_of

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck", "get_numerical_jacobian",
           "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails."""


def _is_tensor(x: Any) -> bool:
    return isinstance(x, TensorBase)


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x: Any) -> tuple:
    return tuple(o for o in _as_tuple(x) if _is_tensor(o) and o.requires_grad)


def _check_inputs(inputs: tuple) -> None:
    """Warn about non-double inputs; refuse overlapping ones; need one that requires grad."""
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype.name != "float64":
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not "
                    "of double precision floating point or complex. ", UserWarning,
                    stacklevel=4)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")


def _host_float64(t: Any) -> np.ndarray:
    """A float64 NumPy copy of a tensor's elements (any device, any layout)."""
    return np.array(t.detach()._host_array(), dtype=np.float64)


class _Perturber:
    """Reads and writes single elements of an input *in place*, outside autograd.

    Writes go through ``t.data`` (same storage, its own version counter), so
    graphs that saved the input do not see a version change, as in PyTorch.
    """

    def __init__(self, t: Any) -> None:
        self.data = t.data
        self.cpu = self.data.device.type == "cpu"
        self.view = self.data._host_array() if self.cpu else None

    def get(self, idx: tuple) -> float:
        if self.cpu:
            return self.view[idx].item()
        return self.data[idx].item()

    def set(self, idx: tuple, value: float) -> None:
        if self.cpu:
            self.view[idx] = value
        else:
            self.data[idx] = value


def _float_outputs(outputs: Any) -> list:
    """The floating-point tensors among a function's outputs (the ones with Jacobians)."""
    return [o for o in _as_tuple(outputs) if _is_tensor(o) and o.dtype.is_floating_point]


def _outputs_as_arrays(func: Callable, inputs: tuple) -> list:
    """``func(*inputs)``: each floating-point tensor output as a flat float64 NumPy copy."""
    return [_host_float64(o).reshape(-1) for o in _float_outputs(func(*inputs))]


def get_numerical_jacobian(func: Callable, inputs: Any, outputs: Any = None,
                           eps: float = 1e-6) -> list:
    """Central-difference Jacobians: ``result[i][j]`` is d(output i)/d(input j).

    Only floating-point outputs count as ``i`` and only inputs that require
    grad as ``j`` (in order); each Jacobian is a float64 NumPy array of shape
    ``(input.numel(), output.numel())``.
    """
    inputs = _as_tuple(inputs)
    if outputs is None:
        outputs = func(*inputs)
    diff = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    sizes = [o.numel() for o in _float_outputs(outputs)]
    jac = [[np.zeros((t.numel(), n)) for t in diff] for n in sizes]
    for j, t in enumerate(diff):
        p = _Perturber(t)
        for k, idx in enumerate(np.ndindex(*t.shape)):
            orig = p.get(idx)
            p.set(idx, orig - eps)
            # Read the perturbed value back: in float32 ``orig - eps`` rounds,
            # and dividing by the step actually taken is more accurate.
            lo = p.get(idx)
            outa = _outputs_as_arrays(func, inputs)
            p.set(idx, orig + eps)
            hi = p.get(idx)
            outb = _outputs_as_arrays(func, inputs)
            p.set(idx, orig)
            step = hi - lo if hi != lo else 2 * eps
            for i, (a, b) in enumerate(zip(outa, outb)):
                if a.shape == b.shape == (sizes[i],):
                    jac[i][j][k, :] = (b - a) / step
    return jac


def _analytical_rows(output: Any, diff_inputs: list) -> tuple:
    """The analytical Jacobians of one output w.r.t. each input, and checks on the grads.

    Returns ``(jacobians, types_ok, sizes_ok)``.
    """
    n_out = output.numel()
    jac = [np.zeros((t.numel(), n_out)) for t in diff_inputs]
    types_ok = sizes_ok = True
    for k in range(n_out):
        onehot = np.zeros(n_out, dtype=output.dtype.np)
        onehot[k] = 1
        g_out = output.new_tensor(onehot.reshape(tuple(output.shape)))
        grads = autograd_grad(output, diff_inputs, g_out, retain_graph=True, allow_unused=True)
        for j, (g, t) in enumerate(zip(grads, diff_inputs)):
            if g is None:
                continue
            if g.dtype is not t.dtype or g.device != t.device:
                types_ok = False
            if tuple(g.shape) != tuple(t.shape):
                sizes_ok = False
                continue
            jac[j][:, k] = _host_float64(g).reshape(-1)
    return jac, types_ok, sizes_ok


def get_analytical_jacobian(inputs: Any, output: Any) -> list:
    """Autograd's Jacobians of ``output`` w.r.t. each input that requires grad (NumPy)."""
    diff = [t for t in _as_tuple(inputs) if _is_tensor(t) and t.requires_grad]
    return _analytical_rows(output, diff)[0]


def _allclose(a: np.ndarray, n: np.ndarray, rtol: float, atol: float) -> bool:
    if a.shape != n.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _as_printable(jac: np.ndarray) -> TensorBase:
    """A Jacobian as a tensor, so that it prints like one in the error message."""
    jac = np.ascontiguousarray(jac)
    strides = tuple(s // jac.itemsize for s in jac.strides)
    return TensorBase._make(UntypedStorage(jac.reshape(-1), CPU), jac.shape, strides, 0,
                            from_numpy_dtype(jac.dtype))


def _check_undefined_grad(outputs: tuple, diff_inputs: list) -> bool:
    """Backward with *no* gradient for every output must give no (or zero) input gradients."""
    roots = [edge_of(o) for o in outputs]
    capture = {edge_of(t): None for t in diff_inputs}
    _execute(roots, [None] * len(roots), retain_graph=True, create_graph=False,
             capture=capture)
    for t in diff_inputs:
        g = capture[edge_of(t)]
        if g is not None and np.any(_host_float64(g) != 0):
            return False
    return True


def _gradcheck(func: Callable, inputs: tuple, eps: float, atol: float, rtol: float,
               nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool,
               check_backward_ad: bool) -> bool:
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    diff_inputs = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    float_outputs = _float_outputs(func_out)
    outputs = _differentiable_outputs(func_out)
    numerical = get_numerical_jacobian(func, inputs, tuple(float_outputs), eps)
    # Outputs that do not require grad must not depend on the inputs at all.
    for o, num in zip(float_outputs, numerical):
        if not o.requires_grad:
            for n in num:
                if not _allclose(n, np.zeros_like(n), rtol, atol):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
    if not check_backward_ad:
        return True
    diff_numerical = [num for o, num in zip(float_outputs, numerical) if o.requires_grad]
    for i, (o, num) in enumerate(zip(outputs, diff_numerical)):
        analytical, types_ok, sizes_ok = _analytical_rows(o, diff_inputs)
        again, _, _ = _analytical_rows(o, diff_inputs)
        if check_grad_dtypes and not types_ok:
            raise GradcheckError("Gradient has dtype mismatch")
        if not sizes_ok:
            raise GradcheckError("Analytical gradient has incorrect size")
        for a1, a2 in zip(analytical, again):
            if a1.shape != a2.shape or np.any(np.abs(a1 - a2) > nondet_tol):
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient. The tolerance for nondeterminism "
                    f"was {nondet_tol}.")
        for j, (a, n) in enumerate(zip(analytical, num)):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{_as_printable(n)!r}\nanalytical:{_as_printable(a)!r}\n")
    if check_undefined_grad and outputs and not _check_undefined_grad(outputs, diff_inputs):
        raise GradcheckError(
            "Expected backward function to handle undefined output grads. Please look at "
            "\"Notes about undefined output gradients\" in \"tools/autograd/derivatives.yaml\"")
    return True


def _refuse(**flags: bool) -> None:
    for name, value in flags.items():
        if value:
            raise NotImplementedError(
                f"gradcheck: {name}=True needs forward-mode AD or vmap, which minitorch does "
                "not have")


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: Any = None) -> bool:
    """Check autograd's gradients of ``func`` at ``inputs`` against finite differences.

    ``inputs`` is a tensor or a tuple of arguments; the tensors among them
    with ``requires_grad=True`` are checked.  Returns True, or raises
    :class:`GradcheckError` (returns False if ``raise_exception=False``).
    """
    _refuse(check_batched_grad=check_batched_grad,
            check_batched_forward_grad=check_batched_forward_grad,
            check_forward_ad=check_forward_ad)
    inputs = _as_tuple(inputs)
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: ``gradcheck`` of the gradient of ``func``.

    ``grad_outputs`` (the vectors the first backward is taken with) default to
    random tensors in [-1, 1) that require grad, so that the check covers the
    dependence on them too.
    """
    _refuse(check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev)
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = []
        for o in outputs:
            dt = o.dtype if o.dtype.is_floating_point else float64
            # A private generator on the output's device: the global stream is not disturbed.
            gen = Generator(o.device).manual_seed(0)
            g = o.new_empty(tuple(o.shape), dtype=dt).uniform_(-1, 1, generator=gen)
            if gen_non_contig_grad_outputs and g.dim() > 0:
                # The same values, read with a stride of 2 from a larger buffer.
                big = g.new_zeros(tuple(o.shape[:-1]) + (2 * o.shape[-1],))
                big[..., ::2] = g
                g = big[..., ::2]
            grad_outputs.append(g.requires_grad_(True))
        grad_outputs = tuple(grad_outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_idx = {i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad}

    def new_func(*args: Any) -> tuple:
        input_args = args[:len(args) - n_out] if n_out else args
        g_outs = args[len(args) - n_out:] if n_out else ()
        outs = _differentiable_outputs(func(*input_args))
        diff_args = [x for i, x in enumerate(input_args) if i in diff_idx]
        grads = autograd_grad(outs, diff_args, g_outs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)
