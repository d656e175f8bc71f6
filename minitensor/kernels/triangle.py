"""``tril`` / ``triu`` in one pass: each row of each matrix is a copied part and a zeroed part.

Row ``i`` of a matrix keeps the columns ``j <= i + diagonal`` (lower) or
``j >= i + diagonal`` (upper) and zeroes the rest.  NumPy's ``np.tril`` builds
the whole boolean mask with ``np.tri`` and then runs ``np.where`` over it
(three passes and two temporaries); the kernel copies and clears two slices
per row.  The reference is ``np.tril`` / ``np.triu``.

>>> triangle(np.ones((2, 3), np.float32), diagonal=0, upper=False)
array([[1., 0., 0.],
       [1., 1., 0.]], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit


def triangle(x: np.ndarray, diagonal: int, upper: bool) -> np.ndarray:
    """The lower (``upper``: upper) triangle of the last two dims of ``x``, the rest zero.  Matrices
    stored transposed (a transposed gradient) are not copied: the lower triangle of x is the
    transpose of the upper triangle of xᵀ, on the diagonal -``diagonal``."""
    t = x.swapaxes(-1, -2)
    if not x.flags.c_contiguous and t.flags.c_contiguous:
        return triangle(t, -diagonal, not upper).swapaxes(-1, -2)
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    m, n = x.shape[-2:]
    _TRIANGLE.on(x)(x.reshape(-1, m, n), out.reshape(-1, m, n), diagonal, upper)
    return out


def _triangle_numpy(x: np.ndarray, out: np.ndarray, diagonal: int, upper: bool) -> None:
    """Reference (3-D: a stack of matrices)."""
    out[...] = np.triu(x, diagonal) if upper else np.tril(x, diagonal)


@njit
def _triangle(x, out, diagonal, upper):
    batch, m, n = x.shape
    for b in range(batch):
        for i in range(m):
            src, dst = x[b, i], out[b, i]
            if upper:  # zeros, then the columns from i + diagonal on
                cut = min(max(i + diagonal, 0), n)
                dst[:cut] = 0
                dst[cut:] = src[cut:]
            else:  # the columns up to i + diagonal, then zeros
                cut = min(max(i + diagonal + 1, 0), n)
                dst[:cut] = src[:cut]
                dst[cut:] = 0


_TRIANGLE = Kernel(_triangle_numpy, _triangle)
