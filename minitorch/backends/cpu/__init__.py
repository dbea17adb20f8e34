"""The CPU backend: Numba kernels (``prange`` for parallel loops).

Numba's parallel loops run on an OpenMP thread pool.  By default OpenMP
workers *spin* while they wait for the next loop, which is fastest on an
idle machine but, on a shared machine, burns a core that another process
(or your own second thread) needed: a LeNet training step measured 4x
slower under load.  We ask for passive waiting unless the user chose
otherwise; this must happen before the first parallel loop starts OpenMP.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Numba's disk cache must know which files each kernel's code comes from (the
# shared bodies it compiles in, see kernel_cache.py) before the first kernel
# module below is imported.  Numba's inliner copies less (numba_inline.py): the
# same machine code, compiled in about half the time.
from .. import kernel_cache, numba_inline  # noqa: E402

kernel_cache.install()
numba_inline.install()
