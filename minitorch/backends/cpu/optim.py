"""CPU kernels for optimizer updates: one fused pass over each parameter.

Each kernel is a loop that applies one optimizer's update rule
(:mod:`minitorch.backends.optimizer_rules`, shared with the GPU) to every
element: it reads the gradient and state once and writes the parameter and
state in place.  All arrays are contiguous and of one float dtype; the
hyper-parameters arrive as one record (``AdamStep``, ...), which Numba
passes as a plain struct.

Each kernel is a serial loop; ``<kernel>_parallel`` runs it on slices of
``CHUNK`` elements in a ``prange`` loop, and the backend uses it only for
large parameters on more than one thread (see
:mod:`minitorch.backends.cpu.elementwise`).
"""

from numba import njit, prange

from .bodies import optimizer_rules as rules

# Elements per parallel task.
CHUNK = 16384

# NumPy's error model: x / 0 is inf.  With Python's (Numba's default outside a
# prange loop) every division first tests for zero and may raise
# ZeroDivisionError; that branch keeps LLVM from vectorising the loop, which
# then runs about four times slower.
_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, **_JIT)


# Each loop loads one weight's values, applies the rule, and stores what it
# returns.  A state the settings do not use is the parameter array itself
# (see optimizer_rules.py): it must be neither loaded nor stored, since
# reading or writing the parameter's memory through a second array keeps
# LLVM from vectorising the loop.  Adam and RMSprop therefore have one loop
# per combination of their optional states (LLVM vectorises each; a single
# loop with "load it if used" inside came out two to four times slower).
@njit(**_JIT)
def sgd(param, grad, momentum_buffer, hyper):
    """SGD (``momentum_buffer`` is the parameter itself when ``hyper.momentum`` is 0)."""
    live = hyper.momentum != 0
    for i in range(param.shape[0]):
        buf, param[i] = rules.sgd_step(param[i], grad[i], momentum_buffer[i] if live else 0.0,
                                       hyper)
        if live:
            momentum_buffer[i] = buf


@njit(**_JIT)
def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, hyper):
    """Adam, or AdamW with ``hyper.decoupled`` (``max_exp_avg_sq`` used with amsgrad)."""
    step_size, sqrt_bias2 = rules.adam_scales(hyper)
    if hyper.amsgrad:
        for i in range(param.shape[0]):
            exp_avg[i], exp_avg_sq[i], max_exp_avg_sq[i], param[i] = rules.adam_step(
                param[i], grad[i], exp_avg[i], exp_avg_sq[i], max_exp_avg_sq[i], hyper,
                step_size, sqrt_bias2)
    else:
        for i in range(param.shape[0]):
            exp_avg[i], exp_avg_sq[i], _, param[i] = rules.adam_step(
                param[i], grad[i], exp_avg[i], exp_avg_sq[i], 0.0, hyper, step_size, sqrt_bias2)


@njit(**_JIT)
def rmsprop(param, grad, square_avg, grad_avg, momentum_buffer, hyper):
    """RMSprop (``grad_avg`` used only when centered, ``momentum_buffer`` with momentum)."""
    n = param.shape[0]
    if hyper.centered and hyper.momentum > 0:
        for i in range(n):
            square_avg[i], grad_avg[i], momentum_buffer[i], param[i] = rules.rmsprop_step(
                param[i], grad[i], square_avg[i], grad_avg[i], momentum_buffer[i], hyper)
    elif hyper.centered:
        for i in range(n):
            square_avg[i], grad_avg[i], _, param[i] = rules.rmsprop_step(
                param[i], grad[i], square_avg[i], grad_avg[i], 0.0, hyper)
    elif hyper.momentum > 0:
        for i in range(n):
            square_avg[i], _, momentum_buffer[i], param[i] = rules.rmsprop_step(
                param[i], grad[i], square_avg[i], 0.0, momentum_buffer[i], hyper)
    else:
        for i in range(n):
            square_avg[i], _, _, param[i] = rules.rmsprop_step(
                param[i], grad[i], square_avg[i], 0.0, 0.0, hyper)


@njit(**_JIT)
def adagrad(param, grad, state_sum, hyper):
    """Adagrad."""
    rate = rules.adagrad_rate(hyper)
    for i in range(param.shape[0]):
        state_sum[i], param[i] = rules.adagrad_step(param[i], grad[i], state_sum[i], hyper, rate)


# ---------------------------------------------------------------------------
# The parallel drivers: each chunk of the parameter is an independent update.
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def sgd_parallel(param, grad, momentum_buffer, hyper):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        sgd(param[s:e], grad[s:e], momentum_buffer[s:e], hyper)


@njit(**_PARALLEL)
def adam_parallel(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, hyper):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        adam(param[s:e], grad[s:e], exp_avg[s:e], exp_avg_sq[s:e], max_exp_avg_sq[s:e], hyper)


@njit(**_PARALLEL)
def rmsprop_parallel(param, grad, square_avg, grad_avg, momentum_buffer, hyper):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        rmsprop(param[s:e], grad[s:e], square_avg[s:e], grad_avg[s:e], momentum_buffer[s:e],
                hyper)


@njit(**_PARALLEL)
def adagrad_parallel(param, grad, state_sum, hyper):
    n = param.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        adagrad(param[s:e], grad[s:e], state_sum[s:e], hyper)
