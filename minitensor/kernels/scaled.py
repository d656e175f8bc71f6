"""``a * b`` where one operand scales the other's rows or columns: one kernel pass.

An (..., D) C-contiguous float array times one value per row (an array of shape (..., 1), as a
per-row reduction's backward makes it: a norm's, a dot product's) or one value per column (shape
(D,) or (1, ..., D)).  NumPy's loop reads such an operand with a zero stride: 37 µs for a (512, 256)
float32 array times a (512, 1) one on the AVX2 VM of docs/performance.md, against 24 for two
arrays of one shape; the kernels 16.  Anything else is ``np.multiply``.  Each product is rounded
once in both, so the results are the same bits (NaN and inf included).

>>> multiply(np.ones((2, 3)), np.array([[2.0], [3.0]]))
array([[2., 2., 2.],
       [3., 3., 3.]])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import KERNEL_DTYPES, Kernel
from .runtime.jit import njit

FROM = 4096  # elements: below, NumPy's broadcast loop costs less than choosing the kernel


def multiply(a, b):
    """``np.multiply(a, b)``; an (..., D) float array by a row or column factor of its dtype in one pass."""
    # (for the backward formulas whose factor is per row by construction: a norm's, a dot product's;
    # Mul keeps np.multiply, where these tests would cost ~0.3 µs a product of one shape)
    if type(a) is np.ndarray and type(b) is np.ndarray and a.size != b.size:
        big, small = (a, b) if a.size > b.size else (b, a)
        if (
            big.size >= FROM
            and a.dtype == b.dtype
            and a.dtype in KERNEL_DTYPES
            and big.ndim >= max(2, small.ndim)
            and big.flags.c_contiguous
        ):
            shape = (1,) * (big.ndim - small.ndim) + small.shape
            rows = big.reshape(-1, big.shape[-1])
            if shape == big.shape[:-1] + (1,):
                out = np.empty(big.shape, big.dtype)
                _ROWS.rows(rows, small.reshape(-1), out.reshape(rows.shape))
                return out
            if shape == (1,) * (big.ndim - 1) + big.shape[-1:]:
                out = np.empty(big.shape, big.dtype)
                _COLUMNS.on(big)(rows, small.reshape(-1), out.reshape(rows.shape))
                return out
    return np.multiply(a, b)


def _rows_numpy(x, factor, out) -> None:
    """Reference: out = x (R, D) times factor (R,) along the rows."""
    np.multiply(x, factor[:, None], out=out)


@njit
def _rows(x, factor, out):
    for r in range(x.shape[0]):
        f = factor[r]
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] * f


def _columns_numpy(x, factor, out) -> None:
    """Reference: out = x (R, D) times factor (D,) along the columns."""
    np.multiply(x, factor, out=out)


@njit
def _columns(x, factor, out):
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] * factor[c]


_ROWS = Kernel(_rows_numpy, _rows, ns=0.12)
_COLUMNS = Kernel(_columns_numpy, _columns, ns=0.12)
