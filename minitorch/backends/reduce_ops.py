"""Reductions: op codes, and how two partial results of one reduction combine.

A reduction folds the elements of each output in *parts* that run on
different threads (segments on the CPU, interleaved parts on the GPU), then
combines the parts' results.  The loops differ per device (see
``cpu/reduce.py`` and ``cuda/reduce.py``); the rules written here do not:
which value wins a max (a NaN, then the lower index on a tie), and how sums,
products and the logical folds merge.  Plain Python, compiled by each device
(see :mod:`minitorch.backends.shared_bodies`).
"""

from __future__ import annotations

import numpy as np

SUM = 0
PROD = 1
MAX = 2
MIN = 3
ARGMAX = 4
ARGMIN = 5
ALL = 6
ANY = 7
NANSUM = 8

#: The op names the backends accept (``backend.reduce("sum", ...)``).
CODES = {"sum": SUM, "prod": PROD, "max": MAX, "min": MIN, "argmax": ARGMAX,
         "argmin": ARGMIN, "all": ALL, "any": ANY, "nansum": NANSUM}

#: The ops that pick an element (and may report its index); the others accumulate.
EXTREMUM_OPS = (MAX, MIN, ARGMAX, ARGMIN)


def identity(op, floating):
    """Where an accumulating op starts: 1 for prod and all, else 0, as float64 or int64.

    The accumulator is wider than the data (float32 sums run in float64,
    int32 sums in int64) and is converted when stored.  (Plain Python, for
    the host: the backends pass it to their kernels.)
    """
    one = op in (PROD, ALL)
    return np.float64(1.0 if one else 0.0) if floating else np.int64(1 if one else 0)


def better(op, acc, acc_i, v, vi):
    """Does candidate ``(v, vi)`` beat ``(acc, acc_i)`` for max/min/argmax/argmin?

    A NaN wins (PyTorch's max of a row with a NaN is NaN); between two NaNs
    or two equal values the lower index wins, so argmax returns the *first*
    index of the maximum whatever order the parts finish in.
    """
    v_nan = v != v
    acc_nan = acc != acc
    if v_nan or acc_nan:
        if v_nan and acc_nan:
            return vi < acc_i
        return v_nan
    if v == acc:
        return vi < acc_i
    if op == MAX or op == ARGMAX:
        return v > acc
    return v < acc


def combine(op, acc, acc_i, v, vi):
    """Merge the partial result ``(v, vi)`` into ``(acc, acc_i)``; returns the new pair.

    Sums add, products multiply, ``all`` keeps the smaller (any 0 makes it
    0), ``any`` the larger; the extrema keep the :func:`better` one.  The
    indices matter only for the extrema.
    """
    if op == SUM or op == NANSUM:
        return acc + v, acc_i
    elif op == PROD:
        return acc * v, acc_i
    elif op == ALL:
        return min(acc, v), acc_i
    elif op == ANY:
        return max(acc, v), acc_i
    elif better(op, acc, acc_i, v, vi):
        return v, vi
    return acc, acc_i


def fold(op, acc, acc_i, v, vi):
    """Fold one element ``v`` (reduced index ``vi``) into ``(acc, acc_i)``.

    Like :func:`combine`, except that ``nansum`` skips a NaN and ``all``/
    ``any`` test the element for zero.  An extremum must start from a real
    element (there is no identity): the caller takes the first one as it is.
    """
    if op == SUM:
        return acc + v, acc_i
    elif op == NANSUM:
        return (acc + v if v == v else acc), acc_i
    elif op == PROD:
        return acc * v, acc_i
    elif op == ALL:
        return (acc if v != 0 else acc * 0), acc_i
    elif op == ANY:
        return (acc * 0 + 1 if v != 0 else acc), acc_i
    elif better(op, acc, acc_i, v, vi):
        return v, vi
    return acc, acc_i
