"""``tril`` / ``triu``: keep the lower / upper triangle of the last two dims, zero the rest.

``diagonal`` shifts the boundary: 0 is the main diagonal, > 0 above it, < 0
below it (as PyTorch).  The gradient is the same triangle of the incoming
gradient, so the op is its own backward.  ``backend.triangle`` runs it (one pass).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import leading
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor


class Triangle(Op):
    """x with the elements outside the triangle set to 0 (``upper``: triu, else tril)."""

    @staticmethod
    def forward(ctx, x, diagonal=0, upper=False):
        ctx.diagonal, ctx.upper = diagonal, upper
        return backend.triangle(x, diagonal, upper)

    @staticmethod
    def backward(ctx, grad):
        return Triangle.call(grad, diagonal=ctx.diagonal, upper=ctx.upper)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = leading  # vmap: the batch dim is one more leading dim


def _triangle(input, diagonal, upper: bool, fn: str):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if not isinstance(diagonal, (int, np.integer)) or isinstance(diagonal, bool):
        raise TypeError(f"{fn}: diagonal must be an int, got {type(diagonal).__name__}")
    if input.ndim < 2:
        raise ValueError(f"{fn}: input must have at least 2 dims, got shape {input.shape}")
    return Triangle.apply(input, diagonal=int(diagonal), upper=upper)


def tril(input, diagonal: int = 0):  # noqa: A002  (PyTorch's names)
    """The lower triangle (on and below ``diagonal``) of the last two dims; the rest is 0."""
    return _triangle(input, diagonal, False, "tril")


def triu(input, diagonal: int = 0):  # noqa: A002
    """The upper triangle (on and above ``diagonal``) of the last two dims; the rest is 0."""
    return _triangle(input, diagonal, True, "triu")
