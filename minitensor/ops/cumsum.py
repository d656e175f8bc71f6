"""``cumsum``: running sums along a dim.

The gradient of a running sum is the running sum of the gradient taken from
the other end (``reverse=True``), and that op's gradient is the forward one.
Floating-point sums accumulate in float64 as PyTorch's do (``kernels/cumsum.py``).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .._args import _dim
from ..autograd.batching import shift
from ..autograd.dual import linear
from ..autograd.function import Op
from .reorder import Clone


class Cumsum(Op):
    """out[i] = x[0] + ... + x[i] along ``dim`` (``reverse``: x[i] + ... + x[n-1])."""

    @staticmethod
    def forward(ctx, x, dim=0, reverse=False):
        ctx.dim, ctx.reverse = dim, reverse
        return backend.cumsum(x, dim, reverse)

    @staticmethod
    def backward(ctx, grad):
        return Cumsum.call(grad, dim=ctx.dim, reverse=not ctx.reverse)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = shift("dim")


def cumsum(input, dim: int, *, dtype=None):  # noqa: A002
    """Running sums along ``dim``; bool and integer inputs give int64 (as PyTorch)."""
    x = input.to(dtype) if dtype is not None else input
    if x.dtype.kind in "biu":
        x = x.to(np.int64)
    if x.ndim == 0:
        _dim(dim, 0)
        return Clone.apply(x)
    return Cumsum.apply(x, dim=_dim(dim, x.ndim))
