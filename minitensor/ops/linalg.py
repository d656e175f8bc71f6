"""Matrix multiplication with NumPy's ``matmul`` semantics.

Batch dims broadcast; a 1-D left operand acts as a row vector, a 1-D right
operand as a column vector, and the added dim is removed from the result.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _blas_ready(x: np.ndarray) -> np.ndarray:
    """A batched operand NumPy can hand to BLAS: batched ``np.matmul`` of a
    transposed view skips BLAS and runs 3-30x slower, so copy it first.
    (2-D transposed views are fine: BLAS takes them with a transpose flag.)"""
    if x.ndim > 2 and not x.flags.c_contiguous:
        return np.ascontiguousarray(x)
    return x


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(_blas_ready(a), _blas_ready(b))


class Matmul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _mm(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:  # dot product: grad is a scalar
            return (grad * b if need_a else None), (grad * a if need_b else None)
        if a.ndim == 1:  # (k) @ (..., k, n) -> (..., n)
            ga = _mm(grad[..., None, :], _swap(b))[..., 0, :] if need_a else None
            gb = a[:, None] * grad[..., None, :] if need_b else None
            return ga, gb
        if b.ndim == 1:  # (..., m, k) @ (k) -> (..., m)
            ga = grad[..., :, None] * b if need_a else None
            gb = _mm(_swap(a), grad[..., :, None])[..., 0] if need_b else None
            return ga, gb
        ga = _mm(grad, _swap(b)) if need_a else None
        gb = _weight_grad(a, b, grad) if need_b else None
        return ga, gb


def _weight_grad(a: np.ndarray, b: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """aᵀ @ grad; for a batched ``a`` and a 2-D ``b`` (a shared weight), one GEMM
    over the flattened batch instead of a batch of GEMMs that are summed later."""
    if b.ndim == 2 and a.ndim > 2:
        m, k, n = math.prod(a.shape[:-1]), a.shape[-1], grad.shape[-1]  # (not -1: k or n may be 0)
        return np.matmul(a.reshape(m, k).T, grad.reshape(m, n))
    return _mm(_swap(a), grad)
