"""``sum`` and ``mean`` of arrays: over every element of a float32 array, one vectorised pass
with float64 partial sums; anything else NumPy's.

NumPy's float32 sum of all 2^17 elements took ~18 µs here (its pairwise summation adds a few
elements per instruction), PyTorch's ~4; the kernel (``_sum.py``'s ``vector_sum``: the loop keeps
partial sums in SIMD lanes) ~4.5, and, adding in float64, it rounds once at the end where
float32 partial sums round at every step (NumPy's pairwise sum, PyTorch's cascade).  The order
of the elements does not matter to a sum, so an array of any layout whose elements fill a block
of memory (a transposed one) is read in memory order without a copy (``ravel(order="K")``).
float64 arrays keep NumPy's pairwise sum: the kernel's 8 to 32 running float64 sums would add
more rounding error than it on long arrays, and there is no wider type to add in.

The reference (``MINITENSOR_DISABLE_JIT=1``) is NumPy's sum in float64, rounded to float32;
``tests/kernels/test_total_kernel.py`` holds the two equal.

>>> total_sum(np.ones((3, 4), np.float32), (0, 1), keepdims=False)
np.float32(12.0)
>>> total_mean(np.arange(4.0, dtype=np.float32).reshape(2, 2), (0, 1), keepdims=True)
array([[1.5]], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ._sum import vector_sum
from .runtime.dispatch import Kernel


def total_sum(x: np.ndarray, axis: tuple, keepdims: bool):
    """``np.sum(x, axis=axis, keepdims=keepdims)``; ``axis``: a tuple of distinct dims."""
    if len(axis) != x.ndim or x.dtype != np.float32 or x.size == 0:
        return np.sum(x, axis=axis, keepdims=keepdims)
    return _shaped(x, _TOTAL.on(x)(x.ravel(order="K")), keepdims)


def total_mean(x: np.ndarray, axis: tuple, keepdims: bool):
    """``np.mean(x, axis=axis, keepdims=keepdims)`` (x not empty); ``axis``: a tuple of distinct dims."""
    if len(axis) != x.ndim or x.dtype != np.float32 or x.size == 0:
        return np.mean(x, axis=axis, keepdims=keepdims)
    return _shaped(x, _TOTAL.on(x)(x.ravel(order="K")) / x.size, keepdims)


def _shaped(x: np.ndarray, value: float, keepdims: bool):
    """The float64 ``value`` in x's dtype: a NumPy scalar, as NumPy's full reductions give, or an
    array of x's number of dims with keepdims."""
    value = x.dtype.type(value)
    return np.full((1,) * x.ndim, value) if keepdims else value


def _total_numpy(flat: np.ndarray) -> float:
    """Reference: the sum in float64."""
    return float(np.sum(flat, dtype=np.float64))


_TOTAL = Kernel(_total_numpy, vector_sum, ns=0.035)
