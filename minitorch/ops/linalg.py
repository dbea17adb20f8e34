"""Matrix products: ``matmul`` (the ``@`` operator), ``mm``, ``bmm``, ``dot``, ``outer``, ...

``matmul`` follows NumPy's rules: 1-D operands are treated as a row (left)
or a column (right) vector and that dimension is removed again afterwards;
leading "batch" dimensions broadcast.  The kernel only ever sees 3-D
operands ``(batch, rows, cols)``.

Backward of ``C = A @ B``: ``dA = dC @ B^T`` and ``dB = A^T @ dC``, each
summed over batch dims that were broadcast.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autocast_mode import STATE as AUTOCAST
from ..backends import scalar_ops
from ..dtype import bool_
from ..layout import broadcast_shapes, coalesce, expand_strides, numel
from ..tensor_base import TensorBase
from . import kernels
from .kernels import Operand
from .views import sum_to_shape
from .registry import declare
from .views import stack
from ..layout import normalize_dim

__all__ = ["matmul", "mm", "bmm", "dot", "vdot", "outer", "mv", "cross", "addmm", "inner",
           "baddbmm", "ger", "trace", "linear"]


def _batch_operand(t: TensorBase, batch: tuple) -> Operand:
    """``t`` (..., r, c) broadcast to ``batch + (r, c)`` and flattened to 3-D if possible."""
    shape, strides = expand_strides(t._shape, t._stride, batch + t._shape[-2:])
    bshape, (bstrides,) = coalesce(shape[:-2], strides[:-2])
    if len(bshape) > 1:
        return None
    b = bshape[0] if bshape else 1
    bs = bstrides[0] if bshape else 0
    return kernels.operand(t, (b,) + shape[-2:], (bs,) + strides[-2:])


def _mm_raw(a: TensorBase, b: TensorBase) -> TensorBase:
    """The product of ``a`` (..., n, k) and ``b`` (..., k, m) with broadcast batch dims."""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.name} != {b.dtype.name}")
    kernels.check_same_device(a, b)
    n, k = a._shape[-2:]
    k2, m = b._shape[-2:]
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    batch = broadcast_shapes(a._shape[:-2], b._shape[:-2])
    if a.dtype is bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    dt = kernels.compute_dtype(a.dtype)
    a_, b_ = kernels.cast(a, dt), kernels.cast(b, dt)
    oa = _batch_operand(a_, batch)
    if oa is None:
        a_ = kernels.contiguous(a_.expand(batch + (n, k)))
        oa = _batch_operand(a_, batch)
    ob = _batch_operand(b_, batch)
    if ob is None:
        b_ = kernels.contiguous(b_.expand(batch + (k, m)))
        ob = _batch_operand(b_, batch)
    out = kernels.empty(batch + (n, m), dt, a.device)
    nb = max(numel(batch), 1) if batch else 1
    if out.numel():
        kernels.matmul(oa, ob, out, nb, n, m)
    return kernels.cast(out, a.dtype)


class MatMul(Function):
    _backward_name = "MmBackward0"

    @staticmethod
    def forward(ctx: Any, a: TensorBase, b: TensorBase) -> TensorBase:
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[0] else None)
        ctx.shapes = (a._shape, b._shape)
        return _mm_raw(a, b)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        """The gradients of ``a @ b`` for ``a`` and for ``b`` (matrices or batches of them).

        Args:
            ctx: what :meth:`forward` kept: ``ctx.saved_tensors`` is ``(a, b)``, each
            ``None`` unless the other input wants a gradient; ``ctx.shapes`` is
            ``(a.shape, b.shape)``; ``ctx.needs_input_grad``.

            g: the gradient of the loss for ``a @ b``, of shape ``batch + (n, m)``
            where ``batch`` is the broadcast of the inputs' batch dims.

        Returns:
            ``(grad_a, grad_b)`` with the shapes of ``a`` and ``b`` (an input whose
            batch dims were broadcast gets its gradient summed back:
            :func:`~minitorch.ops.views.sum_to_shape`), ``None`` for an input that
            wants no gradient; written with tensor ops, so that
            ``create_graph=True`` works.  Example: ``a`` of shape (2, 3) and ``b``
            of shape (3, 4) with ``g = ones(2, 4)`` give ``grad_a`` of shape (2, 3)
            whose row ``i`` holds the row sums of ``b``.
        """
        # Task 3.6: the gradients of a @ b for a and for b, with the shapes of a and b.
        ### BEGIN SOLUTION
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        ga = sum_to_shape(matmul(g, b.mT), sa) if ctx.needs_input_grad[0] else None
        gb = sum_to_shape(matmul(a.mT, g), sb) if ctx.needs_input_grad[1] else None
        return ga, gb
        ### END SOLUTION


class BMM(MatMul):
    _backward_name = "BmmBackward0"


class UnsafeViewMatMul(MatMul):
    _backward_name = "UnsafeViewBackward0"


def matmul(input: TensorBase, other: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dims."""
    if not isinstance(input, TensorBase) or not isinstance(other, TensorBase):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if input.dim() == 0 or other.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{input.dim()}D and {other.dim()}D")
    if input.dim() == 1 and other.dim() == 1:
        return dot(input, other)
    a = input.unsqueeze(0) if input.dim() == 1 else input
    b = other.unsqueeze(-1) if other.dim() == 1 else other
    if a.dim() > 2 and b.dim() == 2 and input.dim() > 2:
        # (..., n, k) @ (k, m): fold the batch into rows, one big matrix product.
        lead = a._shape[:-1]
        result = UnsafeViewMatMul.apply(a.reshape(-1, a._shape[-1]), b).view(lead + (b._shape[-1],))
    else:
        cls = MatMul if (a.dim() == 2 and b.dim() == 2) else BMM
        result = cls.apply(a, b)
    if input.dim() == 1:
        result = result.squeeze(-2)
    if other.dim() == 1:
        result = result.squeeze(-1)
    if out is not None:
        kernels.copy_into(out.resize_(result._shape), result)
        return out
    return result


def mm(input: TensorBase, mat2: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"self must be a matrix" if input.dim() != 2 else
                           "mat2 must be a matrix")
    return matmul(input, mat2, out=out)


def bmm(input: TensorBase, mat2: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    if input.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor")
    if input._shape[0] != mat2._shape[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input._shape[0]}, {input._shape[2]}] but got: "
                           f"[{mat2._shape[0]}, {mat2._shape[1]}].")
    return matmul(input, mat2, out=out)


class Dot(Function):
    _backward_name = "DotBackward0"

    @staticmethod
    def forward(ctx: Any, a: TensorBase, b: TensorBase) -> TensorBase:
        ctx.save_for_backward(a, b)
        return _mm_raw(a.reshape(1, -1), b.reshape(-1, 1)).reshape(())

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        a, b = ctx.saved_tensors
        return g * b, g * a


def dot(input: TensorBase, tensor: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    """Inner product of two 1-D tensors of equal length."""
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D "
                           "tensors")
    if input._shape[0] != tensor._shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._shape[0]}] and "
                           f"src [{tensor._shape[0]}] to have the same number of elements, but "
                           "got 0 elements respectively" .replace(
                               "0 elements respectively",
                               f"{input._shape[0]} and {tensor._shape[0]} elements "
                               "respectively"))
    if input.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{input.dtype.name.title()} and {tensor.dtype.name.title()}")
    return Dot.apply(input, tensor)


vdot = dot
inner = dot


def outer(input: TensorBase, vec2: TensorBase) -> TensorBase:
    """``out[i, j] = input[i] * vec2[j]``."""
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer


def mv(input: TensorBase, vec: TensorBase) -> TensorBase:
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, "
                           f"{vec.dim()}")
    return matmul(input, vec)


def _t(w: TensorBase) -> TensorBase:
    """The transpose of a matrix as a bare header (no graph node): for use inside an op."""
    return TensorBase._make(w._storage, (w._shape[1], w._shape[0]), (w._stride[1], w._stride[0]),
                        w._offset, w.dtype)


class Linear(Function):
    """``x @ w.T + b`` as one node (a Linear layer's whole forward).

    Built from ``matmul``, ``t`` and ``+`` it would record three nodes and,
    in backward, run transposes, a reduction to the bias's shape and their
    Python overhead; here forward is one matrix product plus the bias added
    in place, and backward is a few whole-matrix operations (course task 4.1).
    """

    _backward_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, w: TensorBase, b: TensorBase | None) -> TensorBase:
        needs = ctx.needs_input_grad
        ctx.save_for_backward(x if needs[1] else None, w if needs[0] else None)
        out = _mm_raw(x, _t(w))
        if b is not None:
            out = kernels.arith(out, b, scalar_ops.ADD, out=out)
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        """The gradients of ``out = x @ w.T + b`` with respect to ``x``, ``w`` and ``b``.

        Args:
            ctx: what forward saved: ``ctx.saved_tensors`` is ``(x, w)`` (each ``None``
            when its partner's gradient is not needed), and ``ctx.needs_input_grad``
            says which of ``x, w, b`` want a gradient (``b``'s entry exists only when
            forward got a bias).

            g: the gradient of the loss with respect to ``out``, shape ``(rows, out_features)``.

        Returns:
            ``(gx, gw, gb)``: the same shapes as ``x`` (rows, in), ``w`` (out, in) and
            ``b`` (out,); ``None`` for each one not needed.  Under ``create_graph``
            (``is_grad_enabled()`` is True in backward) they must be built from
            differentiable ops, so that they can be differentiated again.

        Example: ``x = [[1., 2.]]``, ``w = [[3., 4.]]``, ``b = [0.]`` and ``g = [[1.]]``
        give ``gx = [[3., 4.]]``, ``gw = [[1., 2.]]``, ``gb = [1.]``.
        """
        # Task 4.1: the gradients of the linear layer's output with respect to its input, its
        # weight and its bias, each in its input's shape, only those needed.
        ### BEGIN SOLUTION
        x, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if is_grad_enabled():          # create_graph: differentiable ops
            gx = matmul(g, w) if needs[0] else None
            gw = matmul(g.t(), x) if needs[1] else None
            gb = g.sum(0) if len(needs) > 2 and needs[2] else None
            return gx, gw, gb
        gx = _mm_raw(g, w) if needs[0] else None
        gw = _mm_raw(_t(g), x) if needs[1] else None
        gb = kernels.reduce(g, "sum", (0,), False, g.dtype) if len(needs) > 2 and needs[2] else None
        return gx, gw, gb
        ### END SOLUTION


class LinearNoBias(Linear):
    _backward_name = "MmBackward0"


def linear(input: TensorBase, weight: TensorBase, bias: TensorBase | None = None) -> TensorBase:
    """``input @ weight.T + bias`` for input (..., in_features) and weight (out, in)."""
    if weight.dim() != 2 or input.dim() == 0:
        out = matmul(input, weight.t())
        return out + bias if bias is not None else out
    if input._shape[-1] != weight._shape[1]:
        rows = numel(input._shape[:-1])
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{input._shape[-1]} and {weight._shape[1]}x{weight._shape[0]})")
    if bias is not None and (bias.dim() != 1 or bias._shape[0] != weight._shape[0]):
        out = matmul(input, weight.t())
        return out + bias                   # let broadcasting rules (or errors) apply
    if bias is not None and bias.dtype is not input.dtype and not AUTOCAST.enabled:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{input.dtype.name} != {bias.dtype.name}")
    if input.dim() == 2:
        return (Linear if bias is not None else LinearNoBias).apply(input, weight, bias)
    lead = input._shape[:-1]
    flat = input.reshape(-1, input._shape[-1]) if input.dim() != 1 else input.unsqueeze(0)
    out = (Linear if bias is not None else LinearNoBias).apply(flat, weight, bias)
    return out.reshape(lead + (weight._shape[0],))


def addmm(input: TensorBase, mat1: TensorBase, mat2: TensorBase, *, beta: Any = 1, alpha: Any = 1) -> TensorBase:
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices; ``input`` broadcasts to the product.

    As in PyTorch, all three share one dtype (the result's: int64 matrices
    give int64, and float ``alpha``/``beta`` are then truncated to integers),
    and with ``beta=0`` ``input`` is ignored, so NaN or inf in it does not
    reach the result.
    """
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.dim()}-D tensor")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{input.dtype._legacy} and {mat2.dtype._legacy}")
    input.expand(mat1._shape[0], mat2._shape[1])      # raises if input does not broadcast
    return _scaled_sum(input, matmul(mat1, mat2), beta, alpha)


def _scaled_sum(input: TensorBase, prod: TensorBase, beta: Any, alpha: Any) -> TensorBase:
    """``beta * input + alpha * prod`` with PyTorch's scalar rules (see :func:`addmm`)."""
    if not prod.dtype.is_floating_point:
        beta, alpha = int(beta), int(alpha)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        # input * 0 keeps input in the graph (with a zero gradient, as PyTorch's);
        # nan_to_num drops the NaN that NaN * 0 and inf * 0 would add.
        return prod + (input * 0).nan_to_num(0.0, 0.0, 0.0)
    return prod + (input if beta == 1 else input * beta)


def baddbmm(input: TensorBase, batch1: TensorBase, batch2: TensorBase, *, beta: Any = 1,
            alpha: Any = 1) -> TensorBase:
    return _scaled_sum(input, matmul(batch1, batch2), beta, alpha)


def cross(input: TensorBase, other: TensorBase, dim: Any = None) -> TensorBase:
    """Cross product of 3-vectors along ``dim`` (the first dim of size 3 if None)."""
    if dim is None:
        dim = next((d for d, s in enumerate(input._shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = normalize_dim(dim, input.dim())
    if input._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input._shape[d]} and {other._shape[d]}")
    a0, a1, a2 = input.unbind(d)
    b0, b1, b2 = other.unbind(d)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def trace(input: TensorBase) -> TensorBase:
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix")
    return input.diagonal().sum()


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(addmm)
declare(baddbmm, method=False)
declare(bmm)
declare(cross)
declare(dot, "dot", "inner")
declare(dot, "vdot", method=False)
declare(outer, "outer", "ger")
declare(matmul)
declare(mm)
declare(mv)
declare(trace)
