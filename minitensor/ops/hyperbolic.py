"""Hyperbolic ops: sinh, cosh and the inverses asinh, acosh, atanh (tanh is ``elementwise.Tanh``).

    d sinh x  = cosh x               d cosh x  = sinh x
    d asinh x = 1 / sqrt(x^2 + 1)    d acosh x = 1 / sqrt(x^2 - 1)    d atanh x = 1 / (1 - x^2)

Integer inputs are computed in the default float dtype; ``arcsinh``, ``arccosh`` and ``arctanh``
are PyTorch's aliases.

>>> mt.asinh(mt.sinh(mt.tensor([0.5, -2.0])))
tensor([ 0.5, -2. ])
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.function import Op
from .arguments import float_input


class Sinh(Op):
    """sinh(x);  dx = grad * cosh(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.sinh(x)  # (inf beyond |x| ~ 89 / 710, silently as PyTorch)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Cosh.call(x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Cosh(Op):
    """cosh(x);  dx = grad * sinh(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.cosh(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Sinh.call(x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Asinh(Op):
    """asinh(x);  dx = grad / sqrt(x^2 + 1)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.asinh(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / np.sqrt(x * x + 1)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Acosh(Op):
    """acosh(x) for x >= 1 (NaN below);  dx = grad / sqrt(x^2 - 1)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.acosh(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / np.sqrt(x * x - 1)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Atanh(Op):
    """atanh(x) on (-1, 1) (±inf at ±1, NaN outside);  dx = grad / (1 - x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.atanh(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 - x * x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def sinh(input):  # noqa: A002
    return Sinh.apply(float_input(input, "sinh"))


def cosh(input):  # noqa: A002
    return Cosh.apply(float_input(input, "cosh"))


def asinh(input):  # noqa: A002
    return Asinh.apply(float_input(input, "asinh"))


def acosh(input):  # noqa: A002
    return Acosh.apply(float_input(input, "acosh"))


def atanh(input):  # noqa: A002
    return Atanh.apply(float_input(input, "atanh"))


arcsinh, arccosh, arctanh = asinh, acosh, atanh
