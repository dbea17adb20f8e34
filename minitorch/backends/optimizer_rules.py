"""The optimizers' update rules, one element at a time, and their hyper-parameters.

Written with tensor ops, an Adam step is a dozen separate passes over memory
(``m = b1*m + (1-b1)*g``, ``v = ...``, ``p -= lr * m_hat / (sqrt(v_hat) + eps)``,
each allocating a temporary).  The fused kernels instead read each weight's
gradient and state once and write the weight and state in place.  What they
do for *one* weight is written here, once, for every device: the CPU runs
it in a loop, the GPU on one thread per weight (``cpu/optim.py``,
``cuda/optim.py``).  The formulas are PyTorch's (see each optimizer's docs).

**Hyper-parameters travel as a record.**  Each rule takes one small typed
record (a ``NamedTuple``) holding the hyper-parameters of one step:
:class:`SGDStep`, :class:`AdamStep`, :class:`RMSpropStep`,
:class:`AdagradStep`.  The optimizer builds it by name
(``AdamStep(step=3.0, lr=1e-3, ...)``), the kernels receive it as one
argument (Numba passes a ``NamedTuple`` to a CPU or GPU kernel as a plain
struct), and the rules read ``hyper.lr``: no positional list of eleven
numbers to keep in step between three files.  The record's type also says
which rule to run: the backends look the kernel up by it.  Every field is a
``float`` or a ``bool`` (pass ``float(...)``/``bool(...)``): Numba compiles
one version of a kernel per combination of argument types.

Each record lists the state arrays its rule updates, in the order the
kernel takes them after the parameter and its gradient (``STATE``).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Union


class SGDStep(NamedTuple):
    """One SGD step: momentum, dampening, Nesterov and weight decay, as ``torch.optim.SGD``.

    ``first_step`` is true on the step that creates the momentum buffer
    (PyTorch starts the buffer at the gradient itself, not at 0).
    """

    lr: float
    momentum: float
    dampening: float
    weight_decay: float
    nesterov: bool
    maximize: bool
    first_step: bool

    STATE = ("momentum_buffer",)


class AdamStep(NamedTuple):
    """One Adam step (``decoupled=True``: AdamW's weight decay); ``step`` counts from 1."""

    step: float
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float
    amsgrad: bool
    maximize: bool
    decoupled: bool

    STATE = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")


class RMSpropStep(NamedTuple):
    """One RMSprop step (``alpha`` smooths the running mean of squared gradients)."""

    lr: float
    alpha: float
    eps: float
    weight_decay: float
    momentum: float
    centered: bool
    maximize: bool

    STATE = ("square_avg", "grad_avg", "momentum_buffer")


class AdagradStep(NamedTuple):
    """One Adagrad step; ``step`` counts from 1."""

    step: float
    lr: float
    lr_decay: float
    weight_decay: float
    eps: float
    maximize: bool

    STATE = ("sum",)


#: Any of the records (for type hints).
OptimizerStep = Union[SGDStep, AdamStep, RMSpropStep, AdagradStep]

#: The kernel that applies each record's rule, by name (``cpu/optim.py``, ``cuda/optim.py``).
KERNELS = {SGDStep: "sgd", AdamStep: "adam", RMSpropStep: "rmsprop", AdagradStep: "adagrad"}


# ---------------------------------------------------------------------------
# The rules.  Each takes one weight's values (the parameter ``p``, its
# gradient ``g`` and its state) and returns the new state values and the new
# parameter.  The kernel does the loads and stores, so that its loop stays
# one tight loop that LLVM vectorises (a body that indexed the arrays itself
# came out fifteen times slower on the CPU).
#
# A state array that the settings do not use (no momentum, no amsgrad, not
# centered) is the parameter array itself, passed in its place: the rule
# returns its value unchanged, and the kernel does not store it.
# ---------------------------------------------------------------------------
def sgd_step(p, g, buf, hyper):
    """One step of ``torch.optim.SGD`` for one weight: ``(buf, p)`` after the step.

    Args:
        p: the weight (a float); g: its gradient.

        buf: its momentum buffer before the step (ignored on the first step,
        and when there is no momentum: then return it unchanged).

        hyper: an :class:`SGDStep`: ``lr``, ``momentum``, ``dampening``,
        ``weight_decay``, ``nesterov``, ``maximize`` and ``first_step`` (True
        when the buffer does not exist yet).

    Returns:
        ``(buf, p)``: the buffer and the weight after the step, exactly as
        PyTorch's documented algorithm for SGD computes them.

    Example: ``sgd_step(1.0, 0.5, 0.0, SGDStep(0.1, 0, 0, 0, False, False, False))``
    is ``(0.0, 0.95)``.
    """
    # Task 5.2: one step of torch.optim.SGD for one weight: the new momentum buffer and the
    # new weight, with every option of SGDStep.
    ### BEGIN SOLUTION
    if hyper.maximize:
        g = -g
    if hyper.weight_decay != 0:
        g = g + hyper.weight_decay * p
    if hyper.momentum != 0:
        if hyper.first_step:
            buf = g
        else:
            buf = hyper.momentum * buf + (1 - hyper.dampening) * g
        g = g + hyper.momentum * buf if hyper.nesterov else buf
    p = p - hyper.lr * g
    ### END SOLUTION
    return buf, p


def adam_scales(hyper):
    """``(step_size, sqrt(bias2))``: Adam's bias corrections, the same for every element.

    The running averages start at 0, so early on they underestimate;
    dividing by ``1 - beta ** step`` corrects that.  Computed once per
    kernel (per GPU thread), not once per element.
    """
    bias1 = 1 - hyper.beta1 ** hyper.step
    bias2 = 1 - hyper.beta2 ** hyper.step
    return hyper.lr / bias1, math.sqrt(bias2)


def adam_step(p, g, exp_avg, exp_avg_sq, max_exp_avg_sq, hyper, step_size, sqrt_bias2):
    """One step of ``torch.optim.Adam`` (``torch.optim.AdamW`` when ``hyper.decoupled``).

    Args:
        p: the weight (a float); g: its gradient.

        exp_avg, exp_avg_sq, max_exp_avg_sq: its state before the step: the
        running averages of the gradient and of its square, and the largest
        of the latter so far (used under ``amsgrad`` only; return it unchanged
        otherwise).

        hyper: an :class:`AdamStep` (``step`` counts from 1).

        step_size, sqrt_bias2: :func:`adam_scales` of ``hyper``: the bias
        corrections, computed once for all weights; use them rather than
        recomputing ``1 - beta ** step`` per weight.

    Returns:
        ``(exp_avg, exp_avg_sq, max_exp_avg_sq, p)`` after the step, as PyTorch's
        documented algorithms for Adam and AdamW compute them (AdamW's weight
        decay shrinks the weight; Adam's is added to the gradient).

    Example: the first step (``step = 1``, no weight decay) moves ``p`` by ``lr``
    against the sign of ``g``, whatever ``g``'s size (up to ``eps``).
    """
    # Task 5.3: one step of torch.optim.Adam / AdamW for one weight: its new state and the
    # new weight, with every option of AdamStep.
    ### BEGIN SOLUTION
    if hyper.maximize:
        g = -g
    if hyper.weight_decay != 0:
        if hyper.decoupled:
            p = p * (1 - hyper.lr * hyper.weight_decay)
        else:
            g = g + hyper.weight_decay * p
    exp_avg = hyper.beta1 * exp_avg + (1 - hyper.beta1) * g
    exp_avg_sq = hyper.beta2 * exp_avg_sq + (1 - hyper.beta2) * g * g
    if hyper.amsgrad:
        # max(max_exp_avg_sq, v), written out: the builtin would be one more
        # function for Numba to compile.
        max_exp_avg_sq = exp_avg_sq if exp_avg_sq > max_exp_avg_sq else max_exp_avg_sq
        denom = math.sqrt(max_exp_avg_sq) / sqrt_bias2 + hyper.eps
    else:
        denom = math.sqrt(exp_avg_sq) / sqrt_bias2 + hyper.eps
    p = p - step_size * exp_avg / denom
    ### END SOLUTION
    return exp_avg, exp_avg_sq, max_exp_avg_sq, p


def rmsprop_step(p, g, square_avg, grad_avg, buf, hyper):
    """One step of ``torch.optim.RMSprop`` for one weight: ``(square_avg, grad_avg, buf, p)``.

    RMSprop divides the gradient by a running root-mean-square of recent
    gradients (``alpha`` smooths it).  ``centered`` uses an estimate of the
    gradient's variance instead of its second moment; ``momentum`` keeps a
    buffer of the scaled steps.

    Args:
        p: the weight (a float); g: its gradient.

        square_avg, grad_avg, buf: its state before the step (all start at 0):
        the running average of the squared gradient, of the gradient (used
        only when ``centered``), and the momentum buffer (used only when
        ``momentum > 0``).  Return an unused one unchanged.

        hyper: an :class:`RMSpropStep`.

    Returns:
        ``(square_avg, grad_avg, buf, p)`` after the step, as PyTorch's
        documented algorithm for RMSprop computes them.

    Example: ``alpha = 0.75``, ``lr = 0.1``, ``eps = 0``, from zero state with
    ``g = 2``: ``square_avg = 1``, so ``p`` moves by ``0.1 * 2 / 1 = 0.2``.
    """
    # Task 5.8: one step of torch.optim.RMSprop for one weight: its new state and the new
    # weight, with every option of RMSpropStep.
    ### BEGIN SOLUTION
    if hyper.maximize:
        g = -g
    if hyper.weight_decay != 0:
        g = g + hyper.weight_decay * p
    square_avg = hyper.alpha * square_avg + (1 - hyper.alpha) * g * g
    variance = square_avg
    if hyper.centered:            # the variance instead of the second moment
        grad_avg = hyper.alpha * grad_avg + (1 - hyper.alpha) * g
        variance = square_avg - grad_avg * grad_avg
    avg = math.sqrt(variance) + hyper.eps
    if hyper.momentum > 0:
        buf = hyper.momentum * buf + g / avg
        p = p - hyper.lr * buf
    else:
        p = p - hyper.lr * g / avg
    ### END SOLUTION
    return square_avg, grad_avg, buf, p


def adagrad_rate(hyper):
    """Adagrad's learning rate for this step: ``lr / (1 + (step - 1) * lr_decay)``."""
    return hyper.lr / (1 + (hyper.step - 1) * hyper.lr_decay)


def adagrad_step(p, g, state_sum, hyper, rate):
    """One step of ``torch.optim.Adagrad`` for one weight: ``(state_sum, p)`` after the step.

    Adagrad divides each step by the root of the sum of all the weight's past
    squared gradients: weights with large or frequent gradients get ever
    smaller steps.

    Args:
        p: the weight (a float); g: its gradient.

        state_sum: the sum of its past squared gradients (it starts at the
        optimizer's ``initial_accumulator_value``).

        hyper: an :class:`AdagradStep` (``weight_decay``, ``eps``, ``maximize``...).

        rate: this step's learning rate, :func:`adagrad_rate` of ``hyper``
        (``lr_decay`` already applied).

    Returns:
        ``(state_sum, p)`` after the step, as PyTorch's documented algorithm
        for Adagrad computes them.

    Example: from ``state_sum = 0`` with ``g = 2``, ``rate = 0.1``, ``eps = 0``: ``state_sum = 4``
    and ``p`` moves by ``0.1 * 2 / 2 = 0.1``.
    """
    # Task 5.10: one step of torch.optim.Adagrad for one weight: the new sum of squared
    # gradients and the new weight, with every option of AdagradStep.
    ### BEGIN SOLUTION
    if hyper.maximize:
        g = -g
    if hyper.weight_decay != 0:
        g = g + hyper.weight_decay * p
    state_sum = state_sum + g * g
    p = p - rate * g / (math.sqrt(state_sum) + hyper.eps)
    ### END SOLUTION
    return state_sum, p
