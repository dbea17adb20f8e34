"""Matrix multiplication and convolution: compute bound, compared by GFLOP/s."""

from .common import warmed_up


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
