"""Shared test setup.

The CUDA simulator must be switched on before ``numba.cuda`` is first
imported, so it is set here, before any test module imports minitorch.
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
