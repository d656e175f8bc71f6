"""``product``: the product of an array's elements along one dim (``prod(dim)``'s forward).

Along the last dim of a C-contiguous array NumPy's ``np.multiply.reduce`` multiplies one
element after another, each product waiting for the one before: 94 µs for 256 rows of 512
float32 on the 2-core VM of docs/performance.md, where PyTorch took 4.  The kernel lets LLVM
reorder the products (the ``reassoc`` fast-math flag, as ``_sum.py``'s ``vector_sum`` does for
sums), so it keeps partial products in SIMD lanes and multiplies them at the end: ~7 µs there.
It multiplies in float64 and rounds once (a float32 row of large factors whose running product
overflows float32 but whose product does not comes out finite).  Along any other dim NumPy's
reduction already runs down the rows in SIMD lanes, and stays.

The reference (``MINITENSOR_DISABLE_JIT=1``) is NumPy's product in float64, rounded;
``tests/kernels/test_product_kernel.py`` holds the two equal.

>>> product(np.array([[1.0, 2.0, 3.0], [0.5, 4.0, 2.0]], np.float32), 1, keepdims=False)
array([6., 4.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


def product(x: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """``np.multiply.reduce(x, axis=axis, keepdims=keepdims)``; ``axis`` a non-negative dim of ``x``."""
    if axis != x.ndim - 1 or not x.flags.c_contiguous or x.size == 0:
        return np.multiply.reduce(x, axis=axis, keepdims=keepdims)
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty(x.shape[:-1] + ((1,) if keepdims else ()), x.dtype)
    _ROWS.on(x)(rows, out.reshape(-1))
    return out


def _rows_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Reference: each row's product in float64, rounded to out's dtype."""
    out[...] = np.prod(x, axis=1, dtype=np.float64)


@njit(fastmath={"reassoc"}, error_model="numpy")
def _row_product(row):
    total = 1.0
    for i in range(row.size):
        total *= row[i]
    return total


@njit
def _rows(x, out):
    for i in range(x.shape[0]):
        out[i] = _row_product(x[i])


@njit(parallel=True)
def _rows_parallel(x, out):
    for i in prange(x.shape[0]):
        out[i] = _row_product(x[i])


_ROWS = Kernel(_rows_numpy, _rows, _rows_parallel, ns=0.035)
