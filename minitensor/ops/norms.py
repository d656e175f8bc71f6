"""Vector norms: ``norm(p)`` and ``linalg.vector_norm(ord)``.

The 2-norm is an op of its own, ``sqrt(sum(x * x))`` with the gradient
``x / norm`` and 0 (not NaN) where the norm is 0, as PyTorch; the other
orders are compositions of ``abs``, ``sum``, ``amax`` and powers.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from .._args import _axes
from ..autograd.batching import shift
from ..autograd.function import Op
from .reduce import _unsqueeze


class Norm2(Op):
    """sqrt(sum(x**2)) over ``axis``;  dx = x * (grad / norm) (0 where the norm is 0: one pass over x).
    Over the last dim alone the squares are summed by ``backend.row_dots`` (one pass, float64 sums)."""

    @staticmethod
    def forward(ctx, x, axis=(), keepdim=False):
        ctx.axis, ctx.keepdim = axis, keepdim
        if axis == (x.ndim - 1,) and x.ndim:
            squares = backend.row_dots(x, x)
            squares = squares[..., None] if keepdim else squares
        else:
            squares = backend.reduce_sum(x * x, axis, keepdim)
        out = np.asarray(np.sqrt(squares))  # 0-d: an array, not a scalar
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        norm = _unsqueeze(out, ctx.axis, ctx.keepdim)
        norm = backend.where(norm == 0, np.inf, norm)  # x is 0 there too: 0 / inf = 0
        return backend.multiply(x, _unsqueeze(grad, ctx.axis, ctx.keepdim) / norm)

    @staticmethod
    def jvp(ctx, dx):
        x, out = ctx.inputs[0], ctx.output
        return np.sum(x * dx, axis=ctx.axis, keepdims=ctx.keepdim) / backend.where(out == 0, np.inf, out)

    batch = shift("axis")  # vmap: the reduced dims move one up


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """``(sum |x|**ord) ** (1 / ord)`` over ``dim`` (all dims by default); ``ord`` may be inf, -inf or 0."""
    if not isinstance(ord, (int, float)) or isinstance(ord, bool):
        raise TypeError(f"vector_norm: ord must be a number, got {type(ord).__name__}")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.kind != "f":
        raise TypeError(f"vector_norm: expected a floating point input, got dtype {x.dtype}")
    axis = _axes(dim, x.ndim)
    if ord == 2:
        return Norm2.apply(x, axis=axis, keepdim=keepdim)
    a = x.abs()
    if ord == math.inf:
        return a.amax(axis, keepdim=keepdim)
    if ord == -math.inf:
        return a.amin(axis, keepdim=keepdim)
    if ord == 0:
        return (a != 0).to(x.dtype).sum(axis, keepdim=keepdim)
    if ord == 1:
        return a.sum(axis, keepdim=keepdim)
    return (a**ord).sum(axis, keepdim=keepdim) ** (1.0 / ord)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):  # noqa: A002
    """PyTorch's ``torch.norm``: ``p`` is ``'fro'`` (the 2-norm of all given dims), a number, inf or -inf."""
    if p == "fro":
        p = 2
    elif isinstance(p, str):
        raise ValueError(f"norm: p must be 'fro' or a number, got {p!r} ('nuc' is not supported)")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)
