"""Stacked matrices (..., R, C) as the 4-D arrays (B1, B2, R, C) that the BLAS-calling kernels index.

A kernel loops over the (batch, head) pairs of a 4-D array and hands each (R, C)
matrix to BLAS (``blas.gemm``).  ``shape_4d`` folds any number of leading dims
into two; ``blas_4d`` makes the 4-D view of an operand broadcast to the common
leading dims, and copies it only where BLAS could not read a matrix in place.

>>> shape_4d((2, 3, 4, 5, 6))
(6, 4, 5, 6)
"""

from __future__ import annotations

import math

import numpy as np


def shape_4d(shape: tuple) -> tuple:
    """(..., R, C) -> (B1, B2, R, C): the leading dims as two (the kernels index batch and head)."""
    lead = shape[:-2]
    b1, b2 = (math.prod(lead[:-1]), lead[-1]) if lead else (1, 1)
    return b1, b2, shape[-2], shape[-1]


def blas_4d(a: np.ndarray, lead: tuple) -> np.ndarray:
    """``a`` (..., R, C) broadcast to ``lead`` and viewed as (B1, B2, R, C), copied where BLAS could
    not read it in place (rows must be evenly spaced, with unit stride inside a row)."""
    if a.ndim == 4 and a.shape[:2] == lead:
        a4 = a
    else:
        if a.shape[:-2] != lead:
            a = np.broadcast_to(a, lead + a.shape[-2:])
        a4 = a if a.ndim == 4 else a.reshape(shape_4d(a.shape))
    _, _, rows, cols = a4.shape
    _, _, row_step, col_step = a4.strides
    size = a4.itemsize
    if (cols > 1 and col_step != size) or (rows > 1 and (row_step % size or row_step < cols * size)):
        return np.ascontiguousarray(a4)
    return a4
