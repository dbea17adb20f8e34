"""Matrix multiplication and convolution: compute bound, compared by GFLOP/s."""

from .common import bench, warmed_up


class Matmul:
    """``x @ y`` of two ``n x n`` float32 matrices (``2 n^3`` floating-point operations)."""

    params = [64, 128, 256, 512, 1024, 2048]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        self.fn = warmed_up("matmul", n, calls=1)

    def time_matmul(self, n):
        self.fn()


class BatchedMatmul:
    """``x @ y`` of two ``(batch, n, n)`` stacks."""

    params = ([8, 64], [32, 128])
    param_names = ["batch", "n"]

    def setup(self, batch, n):
        self.fn = warmed_up("matmul", n, batch)

    def time_matmul(self, batch, n):
        self.fn()


class Conv2d:
    """One conv2d layer, forward or forward + ``.sum().backward()``.

    ``lenet1``: batch 64, 1->6 channels, 5x5 on 28x28, padding 2;
    ``lenet2``: batch 64, 6->16, 5x5 on 14x14; ``c64``: batch 8, 64->64, 3x3
    on 32x32, padding 1 (see ``minitorch.bench.CONV_LAYERS``).
    """

    params = (["lenet1", "lenet2", "c64"], ["forward", "forward_backward"])
    param_names = ["layer", "pass"]
    timeout = 600

    def setup(self, layer, pass_):
        backward = pass_ == "forward_backward"
        self.fn = warmed_up("conv2d", layer, backward)

    def time_conv2d(self, layer, pass_):
        self.fn()


class ConvPaths:
    """LeNet's second conv layer (forward + backward) through each CPU path.

    ``direct``: the stride-1 kernels of ``backends/cpu/conv_direct.py``, which
    ``conv2d`` picks for this layer; ``im2col``: the general path (im2col,
    one matrix product, col2im), forced by raising the direct path's
    threshold.  See docs/kernels.md.
    """

    params = (["direct", "im2col"], ["lenet1", "lenet2"])
    param_names = ["path", "layer"]
    timeout = 600

    def setup(self, path, layer):
        from minitorch.ops import conv as conv_ops
        if not hasattr(conv_ops, "DIRECT_MIN_MACS"):
            raise NotImplementedError("this commit has no direct convolution")
        self.conv_ops, self.saved = conv_ops, conv_ops.DIRECT_MIN_MACS
        conv_ops.DIRECT_MIN_MACS = 0 if path == "direct" else float("inf")
        self.fn = warmed_up("conv2d", layer, True)

    def teardown(self, path, layer):
        self.conv_ops.DIRECT_MIN_MACS = self.saved

    def time_conv2d(self, path, layer):
        self.fn()


class MaxPool2d:
    """2 x 2 max pooling of LeNet's conv outputs, forward + backward (the tiling-window path)."""

    params = ["lenet1", "lenet2"]
    param_names = ["layer"]

    def setup(self, layer):
        if not hasattr(bench, "max_pool2d"):
            raise NotImplementedError("this commit has no max_pool2d workload")
        self.fn = warmed_up("max_pool2d", layer, True)

    def time_max_pool2d(self, layer):
        self.fn()
