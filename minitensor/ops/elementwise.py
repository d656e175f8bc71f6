"""Elementwise ops: arithmetic and the unary math functions.

Each backward returns gradients in the broadcast shape of the output; the
engine sums them back to each input's shape.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return np.add(a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        return np.subtract(a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.needs_input_grad[1] else None


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.multiply(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad * b if ctx.needs_input_grad[0] else None
        gb = grad * a if ctx.needs_input_grad[1] else None
        return ga, gb


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.divide(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad / b if ctx.needs_input_grad[0] else None
        gb = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb


class Pow(Function):
    """a ** b for any mix of Tensor and scalar operands."""

    @staticmethod
    def forward(ctx, a, b):
        out = np.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        ga = grad * b * np.power(a, b - 1) if ctx.needs_input_grad[0] else None
        gb = grad * _exponent_grad(a, b, out) if ctx.needs_input_grad[1] else None
        return ga, gb


def _exponent_grad(a, b, out: np.ndarray) -> np.ndarray:
    """d(a ** b)/db = a ** b * log(a); 0 where a == 0 and b >= 0 (as PyTorch), not NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        # dtype=: a Python-scalar base must not turn a float32 gradient into float64
        d = out * np.log(a, dtype=out.dtype)
    return np.where(np.equal(a, 0) & np.greater_equal(b, 0), np.zeros((), out.dtype), d)


class Neg(Function):
    @staticmethod
    def forward(ctx, x):
        return np.negative(x)

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = np.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


class Sqrt(Function):
    @staticmethod
    def forward(ctx, x):
        y = np.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad / (2 * y)


class Abs(Function):
    """|x|; the gradient at 0 is 0, as in PyTorch."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.abs(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * np.sign(x)


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = np.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        # exp of a non-positive number only: never overflows.
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)


class Relu(Function):
    """max(x, 0); the gradient at 0 is 0, as in PyTorch."""

    @staticmethod
    def forward(ctx, x):
        y = np.maximum(x, 0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (y > 0)


class Clamp(Function):
    """Clip to [low, high] (either may be None); gradient 1 inside, 0 outside."""

    @staticmethod
    def forward(ctx, x, low=None, high=None):
        ctx.save_for_backward(x)
        ctx.low, ctx.high = low, high
        return np.clip(x, low, high)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        inside = np.ones(x.shape, dtype=bool)
        if ctx.low is not None:
            inside &= x >= ctx.low
        if ctx.high is not None:
            inside &= x <= ctx.high
        return grad * inside


class Cast(Function):
    """Change dtype; the gradient is cast back to the input's dtype by the engine."""

    @staticmethod
    def forward(ctx, x, dtype=None):
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad
