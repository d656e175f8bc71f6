"""``cdist`` with p = 2 by a matrix product, as PyTorch computes it for more than 25 rows: the
distance of every pair of rows (a of x1, b of x2) from ``|a|^2 + |b|^2 - 2 a.b``, clamped at 1e-30
before the square root (so coinciding rows give 0, not the square root of a rounding error), and
its gradient::

    forward:   d[i, j] = sqrt(max(n1[i] + n2[j] - 2 (x1 @ x2ᵀ)[i, j], 1e-30))      n1[i] = |x1[i]|^2
    backward:  q = grad / d, 0 where the clamp held (no gradient there, as PyTorch's clamp_min)
               dx1 = rowsum(q) * x1 - q @ x2,    dx2 = colsum(q) * x2 - qᵀ @ x1

The definition in Tensor ops puts the three terms into one product (``[-2 x1, n1, 1] @ [x2, 1,
n2]ᵀ``) and then clamps, takes the square root, and on the way back runs each of those ops'
backward: two concatenations, three products by a scalar, two sums and two elementwise passes over
the (P, R) result beyond the products.  Here the product is x1 @ x2ᵀ itself and the rest is one pass
each way (``_from_products``, ``_distance_grads``: the row and column sums of q made in that pass).
Inputs (..., P, M) and (..., R, M) with batch dims that broadcast; the passes see the result's
batch merged, (B, P, R).  The clamp is recognised on the way back by its distance: a squared
distance that rounds to a distance of exactly sqrt(1e-30) counts as clamped (PyTorch passes the
gradient of one exactly at 1e-30, ~1e15 times the incoming one).

>>> distances(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0], [0.0, 0.0]]))
array([[5.e+00, 1.e-15]])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit, prange

CLAMP = 1e-30  # the least squared distance (PyTorch's)


def distances(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """d (..., P, R) of x1 (..., P, M) and x2 (..., R, M) (see the module docstring), x1's dtype."""
    d = np.matmul(x1, np.swapaxes(x2, -1, -2))  # (batch..., P, R): a new array, made the distances in place
    planes = d.reshape(-1, *d.shape[-2:])
    n1, n2 = _norms(x1, d.shape[:-1]), _norms(x2, d.shape[:-2] + d.shape[-1:])
    _FROM_PRODUCTS.on(planes)(planes, n1, n2)
    return d


def distances_backward(grad: np.ndarray, x1: np.ndarray, x2: np.ndarray, d: np.ndarray, needs: tuple) -> tuple:
    """(dx1, dx2) in the result's batch shape (the engine sums broadcast batch dims away), each None
    where ``needs`` says no gradient is wanted; ``grad`` of d's shape, any layout."""
    shape = d.shape
    planes = d.reshape(-1, *shape[-2:])
    g = flat_operand(grad, d)  # (one value throughout, as sum's and mean's gradients: not copied out)
    q, rows, cols = np.empty_like(planes), np.empty(planes.shape[:2], d.dtype), np.empty(planes.shape[::2], d.dtype)
    _DISTANCE_GRADS.on(planes)(g, planes, q, rows, cols)
    q = q.reshape(shape)
    dx1 = rows.reshape(shape[:-1])[..., None] * x1 - q @ x2 if needs[0] else None
    dx2 = cols.reshape(shape[:-2] + shape[-1:])[..., None] * x2 - np.swapaxes(q, -1, -2) @ x1 if needs[1] else None
    return dx1, dx2


def _norms(x: np.ndarray, shape: tuple) -> np.ndarray:
    """The squared norms of x's rows, broadcast to ``shape`` (batch..., rows) and seen as (B, rows)."""
    norms = np.einsum("...m,...m->...", x, x)
    return np.ascontiguousarray(np.broadcast_to(norms, shape)).reshape(-1, shape[-1])


# ------------------------------------------------------------------ forward
def _from_products_numpy(d, n1, n2) -> None:
    """Reference: d (B, P, R) holding x1 @ x2ᵀ made the distances, n1 (B, P), n2 (B, R)."""
    d[...] = np.sqrt(np.maximum((n1[:, :, None] + n2[:, None, :]) - 2 * d, CLAMP))


@njit
def _from_row(row, a, n2):
    """One row of products made distances: a = |x1[i]|^2, n2 (R,)."""
    two, clamp = row.dtype.type(2), row.dtype.type(CLAMP)
    for j in range(row.size):
        s = (a + n2[j]) - two * row[j]
        row[j] = np.sqrt(clamp if s < clamp else s)  # (a NaN stays: not < clamp)


@njit
def _from_products(d, n1, n2):
    for b in range(d.shape[0]):
        for i in range(d.shape[1]):
            _from_row(d[b, i], n1[b, i], n2[b])


@njit(parallel=True)
def _from_products_parallel(d, n1, n2):
    for k in prange(d.shape[0] * d.shape[1]):
        b, i = k // d.shape[1], k % d.shape[1]
        _from_row(d[b, i], n1[b, i], n2[b])


_FROM_PRODUCTS = Kernel(_from_products_numpy, _from_products, _from_products_parallel, ns=0.6)


# ------------------------------------------------------------------ backward
def _distance_grads_numpy(g, d, q, rows, cols) -> None:
    """Reference: q = g / d where the distance was not clamped, else 0; its row and column sums
    (d, q (B, P, R), rows (B, P), cols (B, R); g flat, d's size or one value: ``flat_operand``)."""
    q[...] = np.where(d > _clamped(d.dtype), (g.reshape(d.shape) if g.size > 1 else g[0]) / d, 0)
    rows[...] = q.sum(axis=2)
    cols[...] = q.sum(axis=1)


def _clamped(dtype) -> np.floating:
    """The distance of a clamped squared distance, in ``dtype``."""
    return np.sqrt(np.asarray(CLAMP, dtype))


@njit
def _distance_grads(g, d, q, rows, cols):
    floor = np.sqrt(d.dtype.type(CLAMP))
    zero = d.dtype.type(0)
    full = g.size > 1
    for b in range(d.shape[0]):
        col = np.zeros(d.shape[2])  # (float64 sums)
        for i in range(d.shape[1]):
            d_row, q_row, at = d[b, i], q[b, i], (b * d.shape[1] + i) * d.shape[2]
            total = 0.0
            for j in range(d.shape[2]):
                v = g[at + j if full else 0] / d_row[j] if d_row[j] > floor else zero
                q_row[j] = v
                total += v
                col[j] += v
            rows[b, i] = total
        for j in range(d.shape[2]):
            cols[b, j] = col[j]


_DISTANCE_GRADS = Kernel(_distance_grads_numpy, _distance_grads, ns=0.8)
