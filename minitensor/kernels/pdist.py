"""``pdist`` with p = 2: the Euclidean distance of every pair of rows i < j of x (N, M), and its
gradient, without the (pairs, M) array of differences.

The definition takes the rows of every pair and their differences: N (N - 1) / 2 * M values (for
N = 512, M = 256: 33 million, 134 MB in float32) written and read several times each way.  Here::

    forward:   y[k] = sqrt(sum_m (x[i, m] - x[j, m])^2)        k: pair (i, j), i < j, row-major
    backward:  dx[i] = sum_j c[i, j] * (x[i] - x[j]),  c[i, j] = c[j, i] = grad[k] / y[k] (0 where y[k] = 0)
                     = (sum_j c[i, j]) * x[i] - (C @ x)[i]

The forward is one loop over the pairs' rows (differences in registers, float64 sums: the pairs'
distances are exact to the input's rounding, as the definition's); the backward spreads ``c`` into
the symmetric (N, N) matrix C and makes dx with one matrix product.  A zero distance gives a zero
gradient, as PyTorch's ``pdist`` (the norm has no derivative there).  With several threads the
rows i are split so that each thread gets about as many pairs.  The references are the NumPy
definitions (``x[i] - x[j]`` over ``np.triu_indices``).

>>> pdist_forward(np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
array([ 5., 10.,  5.])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import choose
from .runtime.jit import njit, prange


def pdist_forward(x: np.ndarray) -> np.ndarray:
    """The distances (N (N - 1) / 2,) of the pairs of rows i < j of x (N, M), in x's dtype."""
    x = np.ascontiguousarray(x)
    n = x.shape[0]
    out = np.empty(n * (n - 1) // 2, x.dtype)
    # ns per element of x: each takes part in (n - 1) / 2 differences, ~0.1 ns each
    choose(x, _forward_numpy, _forward, _forward_parallel, ns=0.1 * max(1, n - 1) / 2)(x, out)
    return out


def pdist_backward(grad: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """dx (N, M) from the distances' gradient ``grad`` and the distances ``y`` (N (N - 1) / 2,)."""
    n = x.shape[0]
    i, j = np.triu_indices(n, k=1)
    c = np.zeros((n, n), x.dtype)
    safe = np.where(y == 0, 1, y)
    c[i, j] = np.where(y == 0, 0, np.asarray(grad, x.dtype).reshape(-1) / safe)
    c[j, i] = c[i, j]
    return c.sum(axis=1, keepdims=True) * x - c @ x


def _forward_numpy(x, out) -> None:
    i, j = np.triu_indices(x.shape[0], k=1)
    d = (x[i] - x[j]).astype(np.float64)
    out[...] = np.sqrt((d * d).sum(axis=1))


@njit(fastmath={"reassoc", "contract"})
def _row_pairs(x, i, out):
    """The distances of row i to the rows after it, at their places in ``out``."""
    n, m = x.shape
    start = i * n - i * (i + 1) // 2  # (the pairs of the rows before i)
    a = x[i]
    for j in range(i + 1, n):
        b = x[j]
        total = 0.0
        for q in range(np.uint64(m)):
            d = np.float64(a[q]) - np.float64(b[q])
            total += d * d
        out[start + j - i - 1] = np.sqrt(total)


@njit
def _forward(x, out):
    for i in range(x.shape[0]):
        _row_pairs(x, i, out)


@njit(parallel=True)
def _forward_parallel(x, out):
    n = x.shape[0]
    for t in prange((n + 1) // 2):  # rows t and n - 1 - t together: n - 1 pairs each task
        _row_pairs(x, t, out)
        if n - 1 - t != t:
            _row_pairs(x, n - 1 - t, out)
