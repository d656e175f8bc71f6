"""Matrix multiplication with NumPy's ``matmul`` semantics.

Batch dims broadcast; a 1-D left operand acts as a row vector, a 1-D right
operand as a column vector, and the added dim is removed from the result.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.dual import plus
from ..autograd.function import Op


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _mm(a, b):
    """a @ b (arrays: ``backend.matmul``; Tensors: the differentiable Matmul)."""
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return backend.matmul(a, b)
    return np.matmul(a, b)


class Matmul(Op):
    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.ndims = (a.ndim, b.ndim)
        backend.adapt_threads()  # (the thread policy: BLAS takes the cores free now)
        return _mm(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        a_ndim, b_ndim = ctx.ndims
        if a_ndim == 1 and b_ndim == 1:  # dot product: grad is a scalar
            return (grad * b if need_a else None), (grad * a if need_b else None)
        if a_ndim == 1:  # (k) @ (..., k, n) -> (..., n)
            ga = _mm(grad[..., None, :], _swap(b))[..., 0, :] if need_a else None
            gb = a[:, None] * grad[..., None, :] if need_b else None
            return ga, gb
        if b_ndim == 1:  # (..., m, k) @ (k) -> (..., m)
            ga = grad[..., :, None] * b if need_a else None
            gb = _mm(_swap(a), grad[..., :, None])[..., 0] if need_b else None
            return ga, gb
        ga = _mm(grad, _swap(b)) if need_a else None
        gb = _weight_grad(a, b_ndim, grad) if need_b else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        return plus(None if da is None else Matmul.call(da, b), None if db is None else Matmul.call(a, db))

    @staticmethod
    def batch(b):
        """vmap: a vector operand becomes a one-row (or one-column) matrix, the batched operands get the
        same rank, and the batch dim is one more matrix batch dim; the added row/column goes again."""
        (a, c), (na, nc) = b.values, b.ndims
        if na == 1:
            a = a.unsqueeze(-2)  # (B, 1, k) or (1, k)
        if nc == 1:
            c = c.unsqueeze(-1)  # (B, k, 1) or (k, 1)
        rank = max(na, nc, 2)
        a = a.reshape(b.size, *([1] * (rank - max(na, 2))), *a.shape[1:]) if b.batched[0] else a
        c = c.reshape(b.size, *([1] * (rank - max(nc, 2))), *c.shape[1:]) if b.batched[1] else c
        out = b.run(a, c)
        if nc == 1:
            out = out.squeeze(-1)
        return out.squeeze(-1 if nc == 1 else -2) if na == 1 else out


def _weight_grad(a, b_ndim: int, grad):
    """aᵀ @ grad; for a batched ``a`` and a 2-D ``b`` (a shared weight), one GEMM
    over the flattened batch instead of a batch of GEMMs that are summed later."""
    if b_ndim == 2 and a.ndim > 2:
        m, k, n = math.prod(a.shape[:-1]), a.shape[-1], grad.shape[-1]  # (not -1: k or n may be 0)
        return np.matmul(a.reshape(m, k).T, grad.reshape(m, n))
    return _mm(_swap(a), grad)
