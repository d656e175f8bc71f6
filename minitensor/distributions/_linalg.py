"""The linear algebra MultivariateNormal needs: a lower-triangular solve and Cholesky factors.

minitensor has no ``linalg.solve_triangular`` or ``linalg.cholesky`` op yet.  The solve is written
here as forward substitution in Tensor ops (row i of X = (row i of B - L[i, :i] @ X[:i]) / L[i, i]),
so it is differentiable, to any order, in both L and B; when neither needs a gradient NumPy's
solver answers at once (the two agree to rounding).  The Cholesky factor of a covariance or
precision matrix is computed in NumPy, as a constant: such a matrix may not require grad (the
error says to pass ``scale_tril``, whose gradients flow).
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import is_grad_enabled
from ..ops import functions as fn
from ..tensor import Tensor


def _needs_grad(*tensors: Tensor) -> bool:
    return is_grad_enabled() and any(t.requires_grad for t in tensors)


def solve_lower(lower: Tensor, b: Tensor) -> Tensor:
    """X with ``lower @ X = b``: lower (..., n, n) lower triangular (its upper triangle is not read), b (..., n, m);
    batch dims broadcast."""
    if not _needs_grad(lower, b):
        shape = np.broadcast_shapes(lower.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(np.tril(lower.numpy()), shape + lower.shape[-2:])  # only the lower triangle, as below
        rhs = np.broadcast_to(b.numpy(), shape + b.shape[-2:])
        return Tensor._make(np.linalg.solve(a, rhs).astype(b.dtype, copy=False), False, None)
    rows = []
    for i in range(lower.shape[-1]):
        row = b[..., i : i + 1, :]
        if i:
            row = row - lower[..., i : i + 1, :i] @ fn.cat(rows, -2)
        rows.append(row / lower[..., i : i + 1, i : i + 1])
    return fn.cat(rows, -2)


def _constant(matrix: Tensor, what: str) -> np.ndarray:
    if _needs_grad(matrix):
        raise NotImplementedError(
            f"MultivariateNormal: a {what} that requires grad needs a differentiable Cholesky factorisation, which "
            "minitensor does not have yet; pass scale_tril= (its gradients flow), or use mt.no_grad()"
        )
    return np.asarray(matrix.numpy())


def cholesky(matrix: Tensor, what: str = "covariance_matrix") -> Tensor:
    """The lower Cholesky factor of a (batch of) positive-definite matrix, as a constant."""
    try:
        factor = np.linalg.cholesky(_constant(matrix, what))
    except np.linalg.LinAlgError:
        raise ValueError(f"MultivariateNormal: {what} must be positive definite") from None
    return Tensor._make(factor.astype(matrix.dtype, copy=False), False, None)


def precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower factor L with L L^T = P^-1, computed as PyTorch does: from the Cholesky factor of P with
    its rows and columns reversed (a constant)."""
    p = _constant(precision, "precision_matrix")
    try:
        lf = np.linalg.cholesky(np.flip(p, (-2, -1)))
    except np.linalg.LinAlgError:
        raise ValueError("MultivariateNormal: precision_matrix must be positive definite") from None
    l_inv = np.swapaxes(np.flip(lf, (-2, -1)), -2, -1)
    eye = np.broadcast_to(np.eye(p.shape[-1], dtype=p.dtype), l_inv.shape)
    return Tensor._make(np.linalg.solve(l_inv, eye).astype(precision.dtype, copy=False), False, None)
