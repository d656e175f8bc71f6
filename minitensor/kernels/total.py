"""``sum`` and ``mean`` of arrays: over every element of a float32 array, one vectorised pass
with float64 partial sums; over its last dims (a C-contiguous array's rows, from ``ROWS_FROM`` of
them), the same for each row (NumPy's float32 sums of 512 rows of 256 took ~23 µs, the kernel ~8);
anything else NumPy's.

NumPy's float32 sum of all 2^17 elements took ~18 µs here (its pairwise summation adds a few
elements per instruction), PyTorch's ~4; the kernel (``_sum.py``'s ``vector_sum``: the loop keeps
partial sums in SIMD lanes) ~4.5, and, adding in float64, it rounds once at the end where
float32 partial sums round at every step (NumPy's pairwise sum, PyTorch's cascade).  The order
of the elements does not matter to a sum, so an array of any layout whose elements fill a block
of memory (a transposed one) is read in memory order without a copy (``ravel(order="K")``).
float64 arrays keep NumPy's pairwise sum: the kernel's 8 to 32 running float64 sums would add
more rounding error than it on long arrays, and there is no wider type to add in.

``row_dots(a, b)``: the dot products of the rows (last dim) of two float arrays of one shape, each
added in float64 lanes and rounded once (a vector norm's or ``vecdot``'s sum of products), one pass
without the (a * b) temporary: 512 rows of 256 float32 in ~22 µs against ~60 for ``(a * b).sum(-1)``.
float64 rows are summed in the same lanes (as BLAS's dot products are: rows of a norm or a dot
product are far shorter than the arrays whose total keeps NumPy's pairwise sum above).

The reference (``MINITENSOR_DISABLE_JIT=1``) is NumPy's sum in float64, rounded to float32;
``tests/kernels/test_total_kernel.py`` holds the two equal.

>>> total_sum(np.ones((3, 4), np.float32), (0, 1), keepdims=False)
np.float32(12.0)
>>> total_mean(np.arange(4.0, dtype=np.float32).reshape(2, 2), (0, 1), keepdims=True)
array([[1.5]], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from ._rows import row_dot
from ._sum import vector_sum
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


def total_sum(x: np.ndarray, axis: tuple, keepdims: bool):
    """``np.sum(x, axis=axis, keepdims=keepdims)``; ``axis``: a tuple of distinct dims."""
    if x.dtype != np.float32 or x.size == 0:
        return np.sum(x, axis=axis, keepdims=keepdims)
    if len(axis) == x.ndim:
        return _shaped(x, _TOTAL.on(x)(x.ravel(order="K")), keepdims)
    if _trailing(x, axis):
        return _row_totals(x, len(axis), keepdims, False)
    return np.sum(x, axis=axis, keepdims=keepdims)


def total_mean(x: np.ndarray, axis: tuple, keepdims: bool):
    """``np.mean(x, axis=axis, keepdims=keepdims)`` (x not empty); ``axis``: a tuple of distinct dims."""
    if x.dtype != np.float32 or x.size == 0:
        return np.mean(x, axis=axis, keepdims=keepdims)
    if len(axis) == x.ndim:
        return _shaped(x, _TOTAL.on(x)(x.ravel(order="K")) / x.size, keepdims)
    if _trailing(x, axis):
        return _row_totals(x, len(axis), keepdims, True)
    return np.mean(x, axis=axis, keepdims=keepdims)


ROWS_FROM = 128  # rows from which the kernel beats NumPy's sums (its ~12 ns a row against ~2 µs a call)


def _trailing(x: np.ndarray, axis: tuple) -> bool:
    """Are ``axis`` the last dims of the C-contiguous ``x``, whose rows (each the elements they span)
    are then the rows of a 2-D view, and enough of them for the kernel to pay (``ROWS_FROM``)?"""
    if not x.flags.c_contiguous or x.size < ROWS_FROM * x.shape[-1]:
        return False
    return sorted(d % x.ndim for d in axis) == list(range(x.ndim - len(axis), x.ndim))


def _row_totals(x: np.ndarray, count: int, keepdims: bool, mean: bool) -> np.ndarray:
    """The sums (means) over the last ``count`` dims of the C-contiguous float32 ``x``, each added in
    float64 and rounded once, shaped as NumPy's reduction."""
    kept = x.shape[: x.ndim - count]
    rows = math.prod(kept)
    width = x.size // max(rows, 1)
    out = np.empty(kept + (1,) * count if keepdims else kept, x.dtype)
    _ROWS.on(x)(x.reshape(rows, width), float(width) if mean else 1.0, out.reshape(rows))
    return out


def _shaped(x: np.ndarray, value: float, keepdims: bool):
    """The float64 ``value`` in x's dtype: a NumPy scalar, as NumPy's full reductions give, or an
    array of x's number of dims with keepdims."""
    value = x.dtype.type(value)
    return np.full((1,) * x.ndim, value) if keepdims else value


def _total_numpy(flat: np.ndarray) -> float:
    """Reference: the sum in float64."""
    return float(np.sum(flat, dtype=np.float64))


_TOTAL = Kernel(_total_numpy, vector_sum, ns=0.035)


def _rows_numpy(x: np.ndarray, divisor: float, out: np.ndarray) -> None:
    """Reference: each row's sum in float64, divided by ``divisor`` (1 for sums), rounded to out's dtype."""
    out[...] = np.sum(x, axis=1, dtype=np.float64) / divisor


@njit
def _rows(x, divisor, out):
    for i in range(x.shape[0]):
        out[i] = vector_sum(x[i]) / divisor


@njit(parallel=True)
def _rows_parallel(x, divisor, out):
    for i in prange(x.shape[0]):
        out[i] = vector_sum(x[i]) / divisor


_ROWS = Kernel(_rows_numpy, _rows, _rows_parallel, ns=0.035)


# ------------------------------------------------------------------ dot products of rows
def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(...,): the sums of ``a * b`` over the last dim of the float arrays ``a`` and ``b`` of one
    shape (..., D) and dtype, each added in float64 and rounded to their dtype."""
    if a.size == 0:
        return np.zeros(a.shape[:-1], a.dtype)  # (the sum of no products)
    shape = (math.prod(a.shape[:-1]), a.shape[-1])
    rows_a, rows_b = np.ascontiguousarray(a).reshape(shape), np.ascontiguousarray(b).reshape(shape)
    out = np.empty(rows_a.shape[0], a.dtype)
    _ROW_DOTS.rows(rows_a, rows_b, out)
    return out.reshape(a.shape[:-1])


def _row_dots_numpy(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Reference: each row's sum of products in float64, rounded to out's dtype."""
    out[...] = np.einsum("ij,ij->i", a.astype(np.float64), b.astype(np.float64))


_ROW_DOTS = Kernel(_row_dots_numpy, row_dot, ns=0.17)
