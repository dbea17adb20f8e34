"""The Python cost of each op: tiny tensors, where the kernel's work is nothing."""

from .common import warmed_up


class TinyOp:
    """One op on 4-element tensors; with ``requires_grad`` it also records a graph node."""

    params = (["add", "mul", "sum", "exp"], [False, True])
    param_names = ["op", "requires_grad"]

    def setup(self, op, requires_grad):
        self.fn = warmed_up("tiny_op", op, requires_grad)

    def time_op(self, op, requires_grad):
        self.fn()


class AutogradChain:
    """``length`` elementwise ops on 256 elements, then ``.sum().backward()``."""

    params = [10, 100]
    param_names = ["length"]

    def setup(self, length):
        self.fn = warmed_up("autograd_chain", length)

    def time_chain_backward(self, length):
        self.fn()


class CompiledAutogradChain:
    """``AutogradChain`` through ``minitorch.compile``: one fused kernel forward, one backward."""

    params = [10, 100]
    param_names = ["length"]

    def setup(self, length):
        self.fn = warmed_up("autograd_chain", length, compiled=True)

    def time_chain_backward(self, length):
        self.fn()
