"""CUDA kernels for optimizer updates: one fused pass over each parameter.

The update rules of ``cpu/optim.py``, line for line, with one GPU thread
per element instead of a ``prange`` loop: each thread reads its element's
gradient and state once and writes the parameter and state in place.  All
arrays are contiguous and of one float dtype; hyper-parameters are float64
scalars, flags are booleans (see the CPU module for the formulas' sources).

The GPU may fuse ``a * b + c`` into one instruction (an FMA, rounded once),
so results can differ from the CPU's in the last bit.
"""

import math

from numba import cuda


@cuda.jit(cache=True)
def sgd(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize,
        first_step):
    """SGD with momentum, dampening, Nesterov and weight decay (``buf`` ignored if momentum=0)."""
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
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


@cuda.jit(cache=True)
def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2, eps,
         weight_decay, amsgrad, maximize, decoupled):
    """Adam (``decoupled=True`` gives AdamW's weight decay)."""
    bias1 = 1 - beta1 ** step
    bias2 = 1 - beta2 ** step
    step_size = lr / bias1
    sqrt_bias2 = math.sqrt(bias2)
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
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


@cuda.jit(cache=True)
def rmsprop(param, grad, square_avg, grad_avg, buf, lr, alpha, eps, weight_decay, momentum,
            centered, maximize):
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
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


@cuda.jit(cache=True)
def adagrad(param, grad, state_sum, step, lr, lr_decay, weight_decay, eps, maximize):
    clr = lr / (1 + (step - 1) * lr_decay)
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
        g = -grad[i] if maximize else grad[i]
        if weight_decay != 0:
            g += weight_decay * param[i]
        s = state_sum[i] + g * g
        state_sum[i] = s
        param[i] -= clr * g / (math.sqrt(s) + eps)
