"""Start-up: ``import minitorch`` and the first LeNet training step in a fresh process.

Numba compiles each kernel the first time it runs and, because every kernel
is declared with ``cache=True``, saves the machine code to its disk cache
(``NUMBA_CACHE_DIR``).  The first process on a machine pays the compile;
later ones load it.  These benchmarks measure both, with a cache directory
of their own so that the one in the checkout is neither used nor disturbed.
"""

import os

from .common import bench


class Startup:
    """Cold (empty Numba cache) and warm (cache filled by an earlier process) starts."""

    timeout = 1200
    number = 1                  # one fresh process per sample
    repeat = (1, 3, 600.0)      # at least 1, at most 3 samples, stop after 10 minutes
    warmup_time = 0

    def setup_cache(self):
        """Run the script once with a new cache: it compiles everything and fills the cache."""
        if bench is None:
            return {"cache_dir": None}
        cache_dir = os.path.abspath("numba-cache")      # asv's per-suite scratch directory
        cold = bench.startup("minitorch", cache_dir=cache_dir, steps=3)
        return {"cache_dir": cache_dir, "cold": cold}
    setup_cache.timeout = 1200

    def setup(self, cached):
        if cached["cache_dir"] is None:
            raise NotImplementedError("this commit has no minitorch.bench")

    def timeraw_import_and_first_step_empty_cache(self, cached):
        return bench.startup_script("minitorch", cache_dir="", print_json=False)

    def timeraw_import_and_first_step_warm_cache(self, cached):
        return bench.startup_script("minitorch", cache_dir=cached["cache_dir"],
                                    print_json=False)

    def track_compile_seconds(self, cached):
        """Seconds spent compiling kernels before the first step, with an empty cache."""
        return cached["cold"]["compile_s"]
    track_compile_seconds.unit = "seconds"

    def track_compiled_functions_empty_cache(self, cached):
        """How many (function, signature) pairs Numba compiled, with an empty cache."""
        return cached["cold"]["compiled_functions"]
    track_compiled_functions_empty_cache.unit = "functions"

    def track_compiled_functions_warm_cache(self, cached):
        """The same in a second process with the cache warm: the target is 0."""
        return bench.startup("minitorch", cache_dir=cached["cache_dir"],
                             steps=0)["compiled_functions"]
    track_compiled_functions_warm_cache.unit = "functions"

    def track_first_over_steady_step_warm_cache(self, cached):
        """With a warm cache, the first step's time over a steady step's (target <= 1.5)."""
        r = bench.startup("minitorch", cache_dir=cached["cache_dir"], steps=5)
        return r["first_step_s"] / r["steady_step_s"]
    track_first_over_steady_step_warm_cache.unit = "ratio"
