"""Trigonometric ops: sin, cos, tan, their inverses asin, acos, atan, and atan2.

sin and cos are each other's derivative; the others' derivatives are algebraic::

    d tan x  = 1 + tan^2 x          d asin x = 1 / sqrt(1 - x^2)      d acos x = -1 / sqrt(1 - x^2)
    d atan x = 1 / (1 + x^2)        atan2(a, b): da = b / (a^2 + b^2), db = -a / (a^2 + b^2)

float32 sin and cos go through vectorised kernels (``backend.sin``, ``backend.cos``: within 1.5 ulp),
the rest through NumPy's functions.  Integer inputs are computed in the default float dtype.
The ``arc*`` names are PyTorch's aliases (``arcsin`` is ``asin``...).

>>> mt.atan2(mt.tensor([1.0, -1.0]), mt.tensor([0.0, 0.0]))
tensor([ 1.5708, -1.5708])
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.dual import plus
from ..autograd.function import Op
from .arguments import float_input
from .operands import _binary


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


class Tan(Op):
    """tan(x);  dx = grad * (1 + y^2), y the output."""

    @staticmethod
    def forward(ctx, x):
        y = backend.tan(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 + y * y)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Asin(Op):
    """asin(x) on [-1, 1] (NaN outside);  dx = grad / sqrt(1 - x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.asin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / np.sqrt(1 - x * x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Acos(Op):
    """acos(x) on [-1, 1] (NaN outside);  dx = -grad / sqrt(1 - x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.acos(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad / np.sqrt(1 - x * x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Atan(Op):
    """atan(x);  dx = grad / (1 + x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.atan(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + x * x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Atan2(Op):
    """atan2(a, b), the angle of the point (b, a) in (-pi, pi];  da = grad * b / r2, db = -grad * a / r2,
    r2 = a^2 + b^2 (at the origin NaN, as PyTorch's)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return backend.atan2(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        scale = grad / (a * a + b * b)
        return (scale * b if ctx.needs_input_grad[0] else None), (-(scale * a) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        return plus(None if da is None else da * b, None if db is None else -(db * a)) / (a * a + b * b)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def sin(input):  # noqa: A002
    """sin of each element (radians)."""
    return Sin.apply(float_input(input, "sin"))


def cos(input):  # noqa: A002
    """cos of each element (radians)."""
    return Cos.apply(float_input(input, "cos"))


def tan(input):  # noqa: A002
    """tan of each element (radians)."""
    return Tan.apply(float_input(input, "tan"))


def asin(input):  # noqa: A002
    """The inverse sine, in [-pi/2, pi/2] (NaN outside [-1, 1])."""
    return Asin.apply(float_input(input, "asin"))


def acos(input):  # noqa: A002
    """The inverse cosine, in [0, pi] (NaN outside [-1, 1])."""
    return Acos.apply(float_input(input, "acos"))


def atan(input):  # noqa: A002
    """The inverse tangent, in (-pi/2, pi/2)."""
    return Atan.apply(float_input(input, "atan"))


def atan2(input, other):  # noqa: A002
    """The angle of the point (other, input): ``atan(input / other)`` in the right quadrant, in (-pi, pi]."""
    float_input(input, "atan2")
    return _binary(Atan2, input, other, "atan2", floating=True)


arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
