"""The CUDA backend: the same kernels as ``backends/cpu``, written with ``numba.cuda``.

Importing this package imports ``numba.cuda``, so nothing imports it until a
tensor is put on a CUDA device (or a ``minitorch.cuda`` query is made).
Without a GPU, set ``NUMBA_ENABLE_CUDASIM=1`` before Python starts and the
same kernels run on Numba's CUDA simulator (slowly: one Python thread per
GPU thread).  See docs/cuda.md.

=================  ============================================================
``launch``         launch geometry (threads, blocks, tiles) and device functions
``backend``        the backend interface, as in ``cpu/backend.py``
``elementwise``    strided copy, fill, map (unary), zip (binary), where
``reduce``         reductions over dims, cumulative sums and products
``matmul``         the batched matrix product, tiled in shared memory
``random``         counter-based random fills (the CPU generator's own hash)
``index``          gather, scatter, index bounds, masks, nonzero
``sort``           a stable merge sort per row, unique
``conv``           im2col, col2im, max pooling
``optim``          fused optimizer updates
=================  ============================================================
"""
