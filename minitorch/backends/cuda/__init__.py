"""The CUDA backend: the same kernels as ``backends/cpu``, written with ``numba.cuda``.

Importing the kernel modules imports ``numba.cuda``, so nothing imports them
until a tensor is put on a CUDA device; ``runtime`` (what ``minitorch.cuda``
asks: is there a device, how many...) imports ``numba.cuda`` only when a
question is asked.
Without a GPU, set ``NUMBA_ENABLE_CUDASIM=1`` before Python starts and the
same kernels run on Numba's CUDA simulator (slowly: one Python thread per
GPU thread).  See docs/cuda.md.

=================  ============================================================
``runtime``        the devices: how many, their names, the current one
``launch``         launch geometry (threads, blocks, tiles) and device functions
``signatures``     the argument types kernels are launched with, checked in the tests
``bodies``         the shared kernel bodies (``backends/*.py``), compiled for the GPU
``backend``        the backend interface, as in ``cpu/backend.py``
``elementwise``    strided copy, fill, map (unary), zip (binary), where
``reduce``         reductions over dims, cumulative sums and products
``matmul``         the batched matrix product, tiled in shared memory
``random``         counter-based random fills (``backends/rng.py``)
``index``          gather, scatter, index bounds, masks, nonzero
``sort``           a stable merge sort per row, unique
``conv``           im2col, col2im, max pooling
``optim``          fused optimizer updates
=================  ============================================================
"""

# The disk cache of the CUDA kernels is numba-cuda's own (``numba.cuda.core.caching``,
# not Numba's): ``launch.py``, which every kernel module imports before decorating a
# kernel, gives it the kernel stamps (``kernel_cache.install_cuda()``).  Not here:
# this package is imported by ``import minitorch`` (``runtime``), which must not
# import ``numba.cuda``.
