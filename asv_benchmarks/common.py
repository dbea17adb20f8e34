"""What every suite imports: minitorch, its workload builders, and a JIT warm-up helper.

``asv run --python=same`` benchmarks whatever ``import minitorch`` finds;
from a checkout that was never ``pip install``-ed, that is the checkout
itself (the directory above this one).  Over a range of commits, asv
installs each commit into its own environment and that copy is imported.
"""

import os
import sys

try:
    import minitorch
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import minitorch

try:
    from minitorch import bench
except ImportError:          # a commit older than minitorch/bench.py
    bench = None

__all__ = ["minitorch", "bench", "warmed_up"]


def warmed_up(builder, *args, calls=2, **kwargs):
    """``minitorch.bench.<builder>(minitorch, *args)``, already called ``calls`` times.

    The first call compiles the workload's Numba kernels (or loads them from
    the disk cache): that is start-up cost, measured by ``startup.py``, not
    steady-state speed.  Raising NotImplementedError in ``setup`` makes asv
    skip a benchmark, as it does on commits that predate ``minitorch.bench``.
    """
    if bench is None:
        raise NotImplementedError("this commit has no minitorch.bench")
    try:
        fn = getattr(bench, builder)(minitorch, *args, **kwargs)
    except TypeError as e:          # an older commit: no such option (``compiled=``) yet
        raise NotImplementedError(str(e)) from None
    for _ in range(calls):
        fn()
    return fn
