"""``minitorch.func``'s derivative transforms: grad, vjp, jvp, jacrev, jacfwd, hessian.

A *transform* takes a function and returns a new function: ``grad(f)`` is
the function ``x -> df/dx``.  PyTorch builds these (functorch) on levels of
wrapped tensors; minitorch builds them on its ordinary reverse-mode engine:

* each transform differentiates with respect to fresh tensors it makes from
  the arguments: a detached copy that requires grad or, when an enclosing
  transform is already watching the argument (it requires grad), a
  differentiable view of it;
* when something outside watches (an enclosing transform, or an input that
  requires grad), derivatives are computed with ``create_graph=True``, so
  they can be differentiated again: ``grad(grad(f))`` and
  ``jacfwd(jacrev(f))`` (the Hessian) compose;
* :func:`jvp` (forward mode) uses the double-vjp trick of
  :mod:`minitorch.autograd.functional` rather than ``forward_ad``: it
  composes with every other transform in both orders, at the price of two
  reverse passes instead of one forward pass.

Arguments and outputs may be nested tuples, lists and dicts of tensors
(see :mod:`.tree`).
"""

from __future__ import annotations

from functools import wraps
from typing import Any, Callable

from ..autograd import engine, grad_mode
from ..ops.views import stack
from ..tensor import Tensor
from .tree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------
def _track(t: Any) -> Any:
    """A tensor to differentiate with respect to, made from argument ``t``."""
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    return t.view_as(t) if t.requires_grad else t.detach().requires_grad_()


def _argnums_tuple(argnums: Any, n_args: int, api: str) -> tuple:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError(f"{api}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{api}: argnums must be int or Tuple[int, ...], got: "
                               f"{type(a)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnums={a}, but only {n_args} positional inputs")
    return tuple(a % n_args for a in nums)


def _prepare(args: tuple, argnums: Any, api: str) -> tuple:
    """Track the arguments at ``argnums``: ``(new_args, tracked_leaves, spec_per_argnum, watched)``."""
    nums = _argnums_tuple(argnums, len(args), api)
    new_args = list(args)
    leaves: list = []
    specs = []
    watched = False
    for a in nums:
        flat, spec = tree_flatten(args[a])
        watched = watched or any(isinstance(x, Tensor) and x.requires_grad for x in flat)
        tracked = [_track(x) for x in flat]
        leaves.extend(tracked)
        specs.append((len(flat), spec))
        new_args[a] = tree_unflatten(tracked, spec)
    return tuple(new_args), leaves, specs, watched


def _rebuild(flat: list, specs: list, argnums: Any) -> Any:
    """Per-leaf results back into the argnums' structure (a tuple when argnums is one)."""
    out, pos = [], 0
    for n, spec in specs:
        out.append(tree_unflatten(flat[pos:pos + n], spec))
        pos += n
    return tuple(out) if isinstance(argnums, tuple) else out[0]


def _grads(outputs: list, inputs: list, grad_outputs: list | None, create_graph: bool,
           retain_graph: bool = False) -> list:
    """d(outputs)/d(inputs) along ``grad_outputs``; zeros where an input is unused."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs or [None] * len(outputs))
             if o.requires_grad]
    if not pairs:
        res = [None] * len(inputs)
    else:
        res = list(engine.grad([o for o, _ in pairs], inputs,
                               [g for _, g in pairs] if grad_outputs is not None else None,
                               retain_graph=retain_graph or create_graph,
                               create_graph=create_graph, allow_unused=True))
    return [g if g is not None else x.new_zeros(x.shape) for g, x in zip(res, inputs)]


def _finish(t: Any, keep_graph: bool) -> Any:
    return t if keep_graph or not isinstance(t, Tensor) else t.detach()


def _split_aux(out: Any, has_aux: bool, api: str) -> tuple:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}(f)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out


# ---------------------------------------------------------------------------
# grad, grad_and_value
# ---------------------------------------------------------------------------
def grad_and_value(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """Like :func:`grad`, but the new function returns ``(gradient, value)``."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with grad_mode.enable_grad():
            new_args, leaves, specs, watched = _prepare(args, argnums, "grad_and_value")
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.dim()} dims. Maybe you "
                                   "wanted to use the vjp or jacrev APIs instead?")
            grads = _grads([out], leaves, None, create_graph=watched)
        grads = [_finish(g, watched) for g in grads]
        value = _finish(out, watched)
        result = _rebuild(grads, specs, argnums)
        if has_aux:
            return result, (value, tree_map(lambda a: _finish(a, watched), aux))
        return result, value

    return wrapper


def grad(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """``grad(f)(x)``: the gradient of the scalar ``f`` with respect to argument ``argnums``.

    ``argnums`` may be a tuple (a tuple of gradients comes back); with
    ``has_aux=True`` ``f`` returns ``(value, aux)`` and the new function
    ``(gradient, aux)``.
    """
    gv = grad_and_value(func, argnums, has_aux)

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# ---------------------------------------------------------------------------
# vjp, jvp
# ---------------------------------------------------------------------------
def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives ``v^T J`` for each primal.

    ``vjp_fn`` may be called many times (the graph is kept).
    """
    with grad_mode.enable_grad():
        new_args, leaves, specs, watched = _prepare(primals, tuple(range(len(primals))), "vjp")
        out, aux = _split_aux(func(*new_args), has_aux, "vjp")
    out_leaves, out_spec = tree_flatten(out)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"non-empty output, returning Tensors, got {type(o)}")

    def vjp_fn(cotangents: Any) -> tuple:
        cot_leaves, cot_spec = tree_flatten(cotangents)
        if len(cot_leaves) != len(out_leaves):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function")
        for o, c in zip(out_leaves, cot_leaves):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{c.shape} and output[0] has a shape of {o.shape}.")
        keep = watched or any(c.requires_grad for c in cot_leaves)
        with grad_mode.enable_grad():
            grads = _grads(out_leaves, leaves, cot_leaves, create_graph=keep, retain_graph=True)
        return _rebuild([_finish(g, keep) for g in grads], specs,
                        tuple(range(len(primals))))

    value = tree_unflatten([_finish(o, watched) for o in out_leaves], out_spec)
    if has_aux:
        return value, vjp_fn, aux
    return value, vjp_fn


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product.

    Computed with the double-vjp trick (see the module docstring): the
    vector-Jacobian product ``g(u) = J^T u`` is linear in ``u``, and its own
    vjp with the tangents is ``J t``.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. "
                           "it should be valid to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure.")
    for p, t in zip(p_leaves, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to "
                               f"have the same shape, got {tuple(p.shape)} and "
                               f"{tuple(t.shape)}.")
    watched = any(isinstance(x, Tensor) and x.requires_grad for x in p_leaves + t_leaves)
    with grad_mode.enable_grad():
        new_args, leaves, _, _ = _prepare(primals, tuple(range(len(primals))), "jvp")
        out, aux = _split_aux(func(*new_args), has_aux, "jvp")
        out_leaves, out_spec = tree_flatten(out)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to be a "
                                   f"tensor or python tuple of tensors, got {type(o)}")
        dummies = [o.new_zeros(o.shape).requires_grad_() for o in out_leaves]
        vjps = _grads(out_leaves, leaves, dummies, create_graph=True)        # J^T u
        terms = [(g * t).sum() for g, t in zip(vjps, t_leaves) if g.requires_grad]
        if terms:
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            tangents_out = _grads([total], dummies, None, create_graph=watched)   # J t
        else:
            tangents_out = [d.detach() * 0 for d in dummies]
    value = tree_unflatten([_finish(o, watched) for o in out_leaves], out_spec)
    tangent = tree_unflatten([_finish(t, watched) for t in tangents_out], out_spec)
    if has_aux:
        return value, tangent, aux
    return value, tangent


# ---------------------------------------------------------------------------
# jacrev, jacfwd, hessian
# ---------------------------------------------------------------------------
def _jacobian_tree(out: Any, blocks: list, specs: list, argnums: Any) -> Any:
    """``blocks[i][k]``: d output leaf i / d input leaf k, arranged like PyTorch's result.

    The result has the output's structure; each of its leaves has the
    structure of the differentiated arguments.
    """
    out_leaves, out_spec = tree_flatten(out)
    per_output = [_rebuild(blocks[i], specs, argnums) for i in range(len(out_leaves))]
    return tree_unflatten(per_output, out_spec)


def jacrev(func: Callable, argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian by reverse mode: one vjp per output element (rows of J).

    Each Jacobian has shape ``output.shape + input.shape``.
    """

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with grad_mode.enable_grad():
            new_args, leaves, specs, watched = _prepare(args, argnums, "jacrev")
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, "jacrev")
            out_leaves, _ = tree_flatten(out)
            blocks = []
            for o in out_leaves:
                rows: list = [[] for _ in leaves]
                flat = o.reshape(-1)
                for j in range(o.numel()):
                    for k, g in enumerate(_grads([flat[j]], leaves, None, create_graph=watched,
                                                 retain_graph=True)):
                        rows[k].append(g)
                blocks.append([
                    (stack(rows[k]) if rows[k] else x.new_zeros((0,) + tuple(x.shape)))
                    .reshape(tuple(o.shape) + tuple(x.shape)) for k, x in enumerate(leaves)])
        blocks = [[_finish(b, watched) for b in row] for row in blocks]
        jac = _jacobian_tree(out, blocks, specs, argnums)
        return (jac, aux) if has_aux else jac

    return wrapper


def jacfwd(func: Callable, argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian by forward mode: one jvp per input element (columns of J)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        specs = []
        leaves: list = []
        for a in nums:
            flat, spec = tree_flatten(args[a])
            leaves.extend(flat)
            specs.append((len(flat), spec))

        def f_of_leaves(*xs: Any) -> Any:
            new_args, pos = list(args), 0
            for a, (n, spec) in zip(nums, specs):
                new_args[a] = tree_unflatten(list(xs[pos:pos + n]), spec)
                pos += n
            return func(*new_args, **kwargs)

        columns: list = [[] for _ in leaves]     # columns[k][c]: output tangents, flat
        out = aux = None
        for k, x in enumerate(leaves):
            for c in range(x.numel()):
                basis = [y.new_zeros(y.shape) for y in leaves]
                basis[k].view(-1)[c] = 1
                res = jvp(f_of_leaves, tuple(leaves), tuple(basis), has_aux=has_aux)
                out, tangent = res[0], res[1]
                aux = res[2] if has_aux else None
                columns[k].append(tree_flatten(tangent)[0])
        if out is None:                          # no input elements: evaluate for shapes
            out, aux = _split_aux(f_of_leaves(*leaves), has_aux, "jacfwd")
        out_leaves, _ = tree_flatten(out)
        blocks = []
        for i, o in enumerate(out_leaves):
            row = []
            for k, x in enumerate(leaves):
                if columns[k]:
                    cols = stack([col[i].reshape(-1) for col in columns[k]])  # (x.numel, o.numel)
                    row.append(cols.t().reshape(tuple(o.shape) + tuple(x.shape)))
                else:
                    row.append(o.new_zeros(tuple(o.shape) + tuple(x.shape)))
            blocks.append(row)
        jac = _jacobian_tree(out, blocks, specs, argnums)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums: Any = 0) -> Callable:
    """The Hessian of a scalar function: ``jacfwd(jacrev(func))``, as in PyTorch."""
    return jacfwd(jacrev(func, argnums), argnums)
