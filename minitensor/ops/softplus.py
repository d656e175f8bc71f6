"""``softplus``: a smooth relu, ``log(1 + exp(beta * x)) / beta``.

Where ``beta * x > threshold`` it is ``x`` itself (as PyTorch: exp would
overflow and the difference is below rounding).  The derivative is
``sigmoid(beta * x)`` (1 above the threshold).
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from .elementwise import Sigmoid


class Softplus(Op):
    """log1p(exp(beta * x)) / beta, linear above ``threshold``;  dx = grad * sigmoid(beta * x)."""

    @staticmethod
    def forward(ctx, x, beta=1.0, threshold=20.0):
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(x)
        z = x * beta
        linear = z > threshold
        smooth = np.log1p(np.exp(np.where(linear, 0, z))) / beta
        return np.where(linear, x, smooth).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        z = x * ctx.beta
        return np.where(z > ctx.threshold, grad, grad * Sigmoid.call(z))


def softplus(input, beta: float = 1.0, threshold: float = 20.0):  # noqa: A002
    """``log(1 + exp(beta * x)) / beta`` elementwise, ``x`` where ``beta * x > threshold``."""
    for name, value in (("beta", beta), ("threshold", threshold)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"softplus: {name} must be a number, got {type(value).__name__}")
    if input.dtype.kind != "f":
        raise TypeError(f"softplus: expected a floating point input, got dtype {input.dtype}")
    return Softplus.apply(input, beta=float(beta), threshold=float(threshold))


def silu(input):  # noqa: A002
    """``x * sigmoid(x)`` (also called swish)."""
    return input * input.sigmoid()
