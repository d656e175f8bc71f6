"""``flip``: a copy of an array reversed along some dims.

Reversing dims other than the last is a view with negative strides whose copy
moves whole rows (fast).  Reversing the last dim is the slow part: NumPy copies
a negative-stride row one element at a time (~3x a plain copy).  The kernel
reverses each row with SIMD shuffles; it indexes with unsigned integers,
because numba's indexing with a signed integer checks for a negative index
(Python's wrap-around) on every element, which stops LLVM from vectorising
the loop.  The reference is ``x[:, ::-1]``.

>>> flip(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), (0, 1))
array([[6., 5., 4.],
       [3., 2., 1.]])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit


def flip(x: np.ndarray, dims: tuple) -> np.ndarray:
    """A C-contiguous copy of ``x`` (at least 1-D) reversed along each of ``dims`` (non-negative dims)."""
    view = x[tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(x.ndim - 1))]
    if x.ndim - 1 not in dims:
        return view.copy()
    src = np.ascontiguousarray(view)  # (a copy only when other dims were flipped too)
    out = np.empty(x.shape, x.dtype)
    n = x.shape[-1]
    _REVERSE_ROWS.on(x)(src.reshape(-1, n), out.reshape(-1, n))
    return out


def _reverse_rows_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Reference: out = each row of the 2-D ``x`` reversed."""
    out[...] = x[:, ::-1]


@njit
def _reverse_rows(x, out):
    n = x.shape[1]
    for r in range(x.shape[0]):
        src, dst = x[r], out[r]
        for j in range(n):  # unsigned indices: no wrap-around check, so the loop vectorises
            dst[np.uint64(j)] = src[np.uint64(n - 1 - j)]


_REVERSE_ROWS = Kernel(_reverse_rows_numpy, _reverse_rows)
