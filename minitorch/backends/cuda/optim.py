"""CUDA kernels for optimizer updates: one fused pass over each parameter.

The update rules of :mod:`minitorch.backends.optimizer_rules`, the CPU's,
with one GPU thread per element instead of a loop: each thread reads its
element's gradient and state once and writes the parameter and state in
place.  All arrays are contiguous and of one float dtype; the
hyper-parameters arrive as one record (``AdamStep``, ...), passed by value
with the launch.

The GPU may fuse ``a * b + c`` into one instruction (an FMA, rounded once),
so results can differ from the CPU's in the last bit.
"""

from numba import cuda

from .bodies import optimizer_rules as rules
from .launch import kernel


# Each thread loads one weight's values, applies the rule, and stores what
# it returns.  A state the settings do not use is the parameter array itself,
# passed in its place: it is read (harmlessly) but never written.  (The CPU
# kernels also avoid the read, for LLVM's vectoriser; a GPU has none.)
@kernel
def sgd(param, grad, momentum_buffer, hyper):
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
        buf, param[i] = rules.sgd_step(param[i], grad[i], momentum_buffer[i], hyper)
        if hyper.momentum != 0:
            momentum_buffer[i] = buf


@kernel
def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, hyper):
    step_size, sqrt_bias2 = rules.adam_scales(hyper)
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
        exp_avg[i], exp_avg_sq[i], vmax, param[i] = rules.adam_step(
            param[i], grad[i], exp_avg[i], exp_avg_sq[i], max_exp_avg_sq[i], hyper, step_size,
            sqrt_bias2)
        if hyper.amsgrad:
            max_exp_avg_sq[i] = vmax


@kernel
def rmsprop(param, grad, square_avg, grad_avg, momentum_buffer, hyper):
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
        square_avg[i], mean, buf, param[i] = rules.rmsprop_step(
            param[i], grad[i], square_avg[i], grad_avg[i], momentum_buffer[i], hyper)
        if hyper.centered:
            grad_avg[i] = mean
        if hyper.momentum > 0:
            momentum_buffer[i] = buf


@kernel
def adagrad(param, grad, state_sum, hyper):
    rate = rules.adagrad_rate(hyper)
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
        state_sum[i], param[i] = rules.adagrad_step(param[i], grad[i], state_sum[i], hyper, rate)
