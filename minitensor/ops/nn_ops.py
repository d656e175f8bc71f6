"""Row-wise normalising ops: softmax and log-softmax along one dim.

Both subtract the row max before ``exp``, so no finite input overflows.  A
row of all ``-inf`` gives NaN in softmax (0/0), as in PyTorch and NumPy.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function


def _shifted(x: np.ndarray, dim: int) -> np.ndarray:
    m = np.max(x, axis=dim, keepdims=True)
    return x - np.where(np.isfinite(m), m, 0)


class Softmax(Function):
    """y = exp(x) / sum(exp(x)) along ``dim``;  dx = y * (dy - sum(dy * y))."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(_shifted(x, dim))
        y = e / np.sum(e, axis=dim, keepdims=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - np.sum(grad * y, axis=ctx.dim, keepdims=True))


class LogSoftmax(Function):
    """y = x - logsumexp(x) along ``dim``;  dx = dy - exp(y) * sum(dy)."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        z = _shifted(x, dim)
        y = z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad - np.exp(y) * np.sum(grad, axis=ctx.dim, keepdims=True)
