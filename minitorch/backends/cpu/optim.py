"""CPU kernels for optimizer updates: one fused pass over each parameter.

Written with tensor ops, an Adam step is a dozen separate passes over memory
(``m = b1*m + (1-b1)*g``, ``v = ...``, ``p -= lr * m_hat / (sqrt(v_hat) + eps)``,
each allocating a temporary).  Here each optimizer is one loop that reads
the gradient and state once and writes the parameter and state in place.
All arrays are contiguous and of one float dtype; hyper-parameters are
float64 scalars.  The formulas are PyTorch's (see each optimizer's docs).

Each kernel is a serial loop; ``<kernel>_parallel`` runs it on slices of
``CHUNK`` elements in a ``prange`` loop, and the backend uses it only for
large parameters on more than one thread (see
:mod:`minitorch.backends.cpu.elementwise`).
"""

import math

from numba import njit, prange

# Elements per parallel task.  (Defined here, not imported: Numba freezes a
# global into the compiled code and re-checks only this file's text when it
# loads a cached kernel.)
CHUNK = 16384

# NumPy's error model: x / 0 is inf.  With Python's (Numba's default outside a
# prange loop) every division first tests for zero and may raise
# ZeroDivisionError; that branch keeps LLVM from vectorising the loop, which
# then runs about four times slower.
_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, **_JIT)


@njit(**_JIT)
def sgd(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize,
        first_step):
    """SGD with momentum, dampening, Nesterov and weight decay (``buf`` ignored if momentum=0)."""
    for i in range(param.shape[0]):
        g = -grad[i] if maximize else grad[i]
        if weight_decay != 0:
            g += weight_decay * param[i]
        if momentum != 0:
            if first_step:
                b = g
            else:
                b = momentum * buf[i] + (1 - dampening) * g
            buf[i] = b
            g = g + momentum * b if nesterov else b
        param[i] -= lr * g


@njit(**_JIT)
def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2, eps,
         weight_decay, amsgrad, maximize, decoupled):
    """Adam (``decoupled=True`` gives AdamW's weight decay)."""
    bias1 = 1 - beta1 ** step
    bias2 = 1 - beta2 ** step
    step_size = lr / bias1
    sqrt_bias2 = math.sqrt(bias2)
    for i in range(param.shape[0]):
        g = -grad[i] if maximize else grad[i]
        p = param[i]
        if weight_decay != 0:
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g += weight_decay * p
        m = beta1 * exp_avg[i] + (1 - beta1) * g
        v = beta2 * exp_avg_sq[i] + (1 - beta2) * g * g
        exp_avg[i] = m
        exp_avg_sq[i] = v
        if amsgrad:
            vmax = max(max_exp_avg_sq[i], v)
            max_exp_avg_sq[i] = vmax
            denom = math.sqrt(vmax) / sqrt_bias2 + eps
        else:
            denom = math.sqrt(v) / sqrt_bias2 + eps
        param[i] = p - step_size * m / denom


@njit(**_JIT)
def rmsprop(param, grad, square_avg, grad_avg, buf, lr, alpha, eps, weight_decay, momentum,
            centered, maximize):
    for i in range(param.shape[0]):
        g = -grad[i] if maximize else grad[i]
        if weight_decay != 0:
            g += weight_decay * param[i]
        sq = alpha * square_avg[i] + (1 - alpha) * g * g
        square_avg[i] = sq
        if centered:
            ga = alpha * grad_avg[i] + (1 - alpha) * g
            grad_avg[i] = ga
            avg = math.sqrt(sq - ga * ga) + eps
        else:
            avg = math.sqrt(sq) + eps
        if momentum > 0:
            b = momentum * buf[i] + g / avg
            buf[i] = b
            param[i] -= lr * b
        else:
            param[i] -= lr * g / avg


@njit(**_JIT)
def adagrad(param, grad, state_sum, step, lr, lr_decay, weight_decay, eps, maximize):
    clr = lr / (1 + (step - 1) * lr_decay)
    for i in range(param.shape[0]):
        g = -grad[i] if maximize else grad[i]
        if weight_decay != 0:
            g += weight_decay * param[i]
        s = state_sum[i] + g * g
        state_sum[i] = s
        param[i] -= clr * g / (math.sqrt(s) + eps)


# ---------------------------------------------------------------------------
# The parallel drivers: each chunk of the parameter is an independent update.
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def sgd_parallel(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize,
                 first_step):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        sgd(param[s:e], grad[s:e], buf[s:e], lr, momentum, dampening, weight_decay, nesterov,
            maximize, first_step)


@njit(**_PARALLEL)
def adam_parallel(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2, eps,
                  weight_decay, amsgrad, maximize, decoupled):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        adam(param[s:e], grad[s:e], exp_avg[s:e], exp_avg_sq[s:e], max_exp_avg_sq[s:e], step, lr,
             beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled)


@njit(**_PARALLEL)
def rmsprop_parallel(param, grad, square_avg, grad_avg, buf, lr, alpha, eps, weight_decay,
                     momentum, centered, maximize):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        rmsprop(param[s:e], grad[s:e], square_avg[s:e], grad_avg[s:e], buf[s:e], lr, alpha, eps,
                weight_decay, momentum, centered, maximize)


@njit(**_PARALLEL)
def adagrad_parallel(param, grad, state_sum, step, lr, lr_decay, weight_decay, eps, maximize):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        adagrad(param[s:e], grad[s:e], state_sum[s:e], step, lr, lr_decay, weight_decay, eps,
                maximize)
