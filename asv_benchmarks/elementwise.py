"""Elementwise ops and reductions: bound by memory bandwidth when large, by overhead when small."""

from .common import warmed_up


class Elementwise:
    """``x + y``, ``x * y`` and ``exp(x)``: contiguous, transposed and broadcast float32 inputs."""

    params = (["add", "mul", "exp"], ["contiguous", "transposed", "broadcast"],
              [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7])
    param_names = ["op", "layout", "n"]

    def setup(self, op, layout, n):
        if op == "exp" and layout == "broadcast":
            raise NotImplementedError("exp is unary: no broadcast layout")
        self.fn = warmed_up("elementwise", op, layout, n)

    def time_op(self, op, layout, n):
        self.fn()


class Reductions:
    """``x.sum()``, ``x.sum(0)``, ``x.sum(1)`` of a square float32 matrix of ``n`` elements."""

    params = (["full", "dim0", "dim1"], [10 ** 3, 10 ** 5, 10 ** 6, 10 ** 7])
    param_names = ["kind", "n"]

    def setup(self, kind, n):
        self.fn = warmed_up("reduction", kind, n)

    def time_sum(self, kind, n):
        self.fn()
