"""Custom autograd Functions, as in PyTorch's tutorial "Defining new autograd Functions".

``python custom_function.py`` on PyTorch, ``minitorch run custom_function.py`` on
minitorch.  A third-order Legendre polynomial P3 written as a Function with
its own backward fits y = sin(x) (the tutorial's program, with fewer steps);
a second Function takes a non-tensor argument and a tensor that needs no
gradient.  ``torch.autograd.gradcheck`` checks both backwards against finite
differences in float64.  Every number is deterministic.
"""

import argparse
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with the derivative 1.5 (5x^2 - 1) written by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


class ScaledSoftplus(torch.autograd.Function):
    """softplus(beta * x) / beta + offset: a float argument and an offset that gets no grad."""

    @staticmethod
    def forward(ctx, x, beta, offset):
        ctx.beta = beta
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(beta * x)) / beta + offset

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad_x = grad_output * torch.sigmoid(ctx.beta * x) if ctx.needs_input_grad[0] else None
        return grad_x, None, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()

    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)

    # y = a + b * P3(c + d * x); the tutorial's starting point, close to the answer.
    a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, dtype=dtype, requires_grad=True)

    learning_rate = 5e-6
    P3 = LegendrePolynomial3.apply
    for t in range(args.steps):
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t == 0:
            print(f"first loss: {loss.item():.6f}")
        if (t + 1) % 100 == 0:
            print(f"step {t + 1}: loss {loss.item():.6f}")
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= learning_rate * p.grad
                p.grad = None
    print(f"final loss: {loss.item():.6f}")
    print(f"result: y = {a.item():.6f} + {b.item():.6f} * P3({c.item():.6f} + {d.item():.6f} x)")

    z = torch.linspace(-2, 2, 7, dtype=torch.float64, requires_grad=True)
    print(f"gradcheck P3: {torch.autograd.gradcheck(LegendrePolynomial3.apply, (z,))}")
    offset = torch.tensor(0.25, dtype=torch.float64)
    ok = torch.autograd.gradcheck(lambda t: ScaledSoftplus.apply(t, 2.0, offset), (z,))
    print(f"gradcheck ScaledSoftplus: {ok}")
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    ScaledSoftplus.apply(w, 3.0, 1.0).sum().backward()
    print("softplus grad:", " ".join(f"{g:.6f}" for g in w.grad.tolist()))


if __name__ == "__main__":
    main()
