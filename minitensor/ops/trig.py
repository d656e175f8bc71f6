"""Trigonometric ops: sin and cos (each one's derivative is the other).

float32 arrays go through vectorised kernels (``backend.sin``, ``backend.cos``: within 1.5 ulp),
float64 through NumPy's functions.
"""

from __future__ import annotations

from .. import backend, dtypes
from ..autograd.batching import elementwise
from ..autograd.function import Op


class Sin(Op):
    """sin(x);  dx = grad * cos(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Cos.call(x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Cos(Op):
    """cos(x);  dx = -grad * sin(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.cos(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -(grad * Sin.call(x))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def _floating(x):
    """Integer and bool inputs are computed in the default float dtype (as PyTorch)."""
    return x if x.dtype.kind == "f" else x.to(dtypes.get_default_dtype())


def sin(input):  # noqa: A002
    """sin of each element (radians)."""
    return Sin.apply(_floating(input))


def cos(input):  # noqa: A002
    """cos of each element (radians)."""
    return Cos.apply(_floating(input))
