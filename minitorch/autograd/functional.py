"""``minitorch.autograd.functional``: derivatives of whole functions, PyTorch's API.

Where ``backward`` differentiates a graph that is already built, these take a
*function* and its inputs and return derivatives of it:

* :func:`vjp`: ``v^T J``, one reverse pass (the gradient when ``v`` is 1);
* :func:`jvp`: ``J v``, forward-mode's product, computed with the
  *double-vjp trick* (below), as PyTorch's ``functional.jvp`` does;
* :func:`jacobian`: the whole ``J``, one reverse pass per output element;
* :func:`hessian`: the Jacobian of the gradient;
* :func:`vhp` / :func:`hvp`: ``v^T H`` and ``H v`` without building ``H``.

The double-vjp trick.  ``g(u) = J^T u`` is linear in ``u``; so its own
vector-Jacobian product with ``v`` is ``(J^T)^T v = J v``.  Reverse mode
therefore gives forward mode: build ``g`` with ``create_graph=True`` from a
dummy ``u`` that requires grad, then differentiate ``g`` with respect to
``u`` along ``v``::

    u = zeros_like(y).requires_grad_()
    g = grad(y, x, u, create_graph=True)     # J^T u, a function of u
    Jv = grad(g, u, v)                        # d(J^T u . v)/du = J v

``vectorize=True`` is accepted and ignored: minitorch has no batching rules,
so every product is its own pass (see docs/differences.md).  Each function
runs with gradients enabled inside, and returns detached results unless
``create_graph=True``.

Written with tensor methods only (this module is layer 6, below the ops):
the Jacobian's rows are written into a zero tensor with ``jac[j] = row``,
which is differentiable, instead of ``stack``.
"""

from __future__ import annotations

from typing import Any, Callable

from . import grad_mode
from .engine import grad as _grad
from ..tensor_base import TensorBase

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---------------------------------------------------------------------------
# Helpers shared by every function (the same names as in PyTorch's module)
# ---------------------------------------------------------------------------
def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple:
    """``(was_a_tuple, tuple_of_tensors)``; a TypeError for anything not a tensor."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, TensorBase):
            where = (f"the value at index {i} has type {type(el)}" if is_tuple
                     else f"the given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}.")
    return is_tuple, items


def _tuple_postprocess(res: Any, to_unpack: Any) -> Any:
    """Undo the wrapping in tuples for what the user gave as a single tensor."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors to differentiate with respect to.

    With ``create_graph`` an input that already has history stays connected
    to it (a view of it), so the result can be differentiated further;
    otherwise it is detached, so nothing reaches the caller's graph.
    """
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs: tuple, create_graph: bool) -> tuple:
    if inputs and isinstance(inputs[0], TensorBase):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


_STRICT_MESSAGES = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."),
}


def _check_requires_grad(inputs: tuple, input_type: str, strict: bool) -> None:
    """In strict mode, refuse results that do not depend on the inputs."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[input_type].format(i=i))


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """``autograd.grad`` that skips outputs without history and gives None for unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                 retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


_ZERO_MESSAGES = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple:
    """Zeros (shaped like ``refs``) for the gradients autograd found unused (None)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MESSAGES[stage].format(i=i))
            g = refs[i].new_zeros(refs[i].shape)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v: Any, against: tuple, against_is_tuple: bool, create_graph: bool,
               fn_name: str, none_message: str) -> Any:
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, against, against_is_tuple)
    elif len(against) != 1 or against[0].nelement() != 1:
        raise RuntimeError(none_message)
    return v


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a "
                  "single Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function "
                 "is a single Tensor with a single element.")


# ---------------------------------------------------------------------------
# The public functions
# ---------------------------------------------------------------------------
def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product, by one reverse pass."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp", _V_NONE_OUTPUT)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(outputs, inputs, v, create_graph=create_graph),
                             inputs, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-vjp trick."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # g(u) = J^T u, built as a graph in the dummy u ...
        dummies = tuple(out.new_zeros(out.shape).requires_grad_() for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    # ... whose vector-Jacobian product with v is J v.
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(grad_inputs, dummies, v, create_graph=create_graph),
                             outputs, strict, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_outputs_tuple))


def _stack_rows(rows: list, shape: tuple) -> TensorBase:
    """The rows (each shaped like one input) as one tensor of ``shape``: ``torch.stack(rows).view(shape)``."""
    first = rows[0]
    out = first.new_zeros((len(rows),) + tuple(first.shape))
    for j, row in enumerate(rows):
        out[j] = row
    return out.view(shape)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: shape ``output.shape + input.shape``.

    With several inputs (a tuple) the result is a tuple over inputs; with
    several outputs a tuple over outputs; with both, a tuple of tuples
    ``[output][input]``.  ``strategy="forward-mode"`` builds it column by
    column with :func:`jvp` (one pass per input element), the cheaper way
    for functions with more outputs than inputs.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                'torch.autograd.functional.jacobian: `strict=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs)
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        jac: tuple = ()
        for i, out in enumerate(outputs):
            rows: tuple = tuple([] for _ in inputs)       # rows[k][j] = d out[j] / d inputs[k]
            flat_out = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat_out[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not "
                                               "allowed in strict mode.")
                        g = inp.new_zeros(inp.shape)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    rows[k].append(g)
            jac += (tuple(_stack_rows(rows[k], tuple(out.shape) + tuple(inp.shape))
                          if rows[k] else out.new_zeros(tuple(out.shape) + tuple(inp.shape))
                          for k, inp in enumerate(inputs)),)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_forward(func: Callable, inputs: Any) -> Any:
    """The Jacobian column by column: ``J e_k`` for each basis vector ``e_k`` of the inputs."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    columns: list = []           # columns[k][c]: the outputs' tangents for element c of input k
    outputs = is_outputs_tuple = None
    for k, inp in enumerate(inputs):
        cols = []
        for c in range(inp.nelement()):
            basis = tuple(x.new_zeros(x.shape) for x in inputs)
            basis[k].view(-1)[c] = 1
            out, tangent = jvp(func, inputs, basis)
            is_outputs_tuple = isinstance(out, tuple)
            outputs = out if is_outputs_tuple else (out,)
            cols.append(tangent if is_outputs_tuple else (tangent,))
        columns.append(cols)
    if outputs is None:                   # every input is empty: evaluate once for the shapes
        with grad_mode.no_grad():
            out = func(*inputs)
        is_outputs_tuple = isinstance(out, tuple)
        outputs = out if is_outputs_tuple else (out,)
    jac = []
    for i, out in enumerate(outputs):
        row = []
        for k, inp in enumerate(inputs):
            full = out.new_zeros((inp.nelement(), out.nelement()))
            for c, col in enumerate(columns[k]):
                full[c] = col[i].reshape(-1)
            # (input elements, output elements) -> output.shape + input.shape
            row.append(full.t().reshape(tuple(out.shape) + tuple(inp.shape)))
        jac.append(tuple(row))
    return _tuple_postprocess(tuple(jac), (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: the Jacobian of its gradient.

    With several inputs the result is a tuple of tuples ``H[i][j]`` of shape
    ``inputs[i].shape + inputs[j].shape``.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp: Any) -> Any:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, TensorBase):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp: Any) -> Any:
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _single_scalar_output(outputs: tuple, is_outputs_tuple: bool, fn_name: str) -> None:
    if is_outputs_tuple or not isinstance(outputs[0], TensorBase):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)`` for a scalar ``func``: a reverse pass through the gradient."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "vhp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        _single_scalar_output(outputs, is_outputs_tuple, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(jac, inputs, v, create_graph=create_graph),
                             inputs, strict, create_graph, "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-vjp trick on the gradient.

    (H is symmetric, so ``H v`` equals ``v^T H``; :func:`vhp` is cheaper.)
    """
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "hvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        _single_scalar_output(outputs, is_outputs_tuple, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(inp.new_zeros(inp.shape).requires_grad_() for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(double_back, grad_jac, v, create_graph=create_graph),
                             inputs, strict, create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))
