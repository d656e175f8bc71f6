"""amax / amin along one dim: the row max or min, and its gradient shared by the tied extrema.

On a C-contiguous (rows, D) array (``amax``, ``amin`` and ``extremum_backward`` move the dim
last, ``runtime/dispatch.py``'s ``as_rows``)::

    forward:   m[i] = max(x[i])  (or min; NaN when the row holds a NaN, as PyTorch)
    backward:  dx[i, j] = g[i] / count[i] * (x[i, j] == m[i])
               (count[i] = how many elements tie for the extremum; a row with a NaN
               has none, and its gradient is NaN: g/0 * 0, as PyTorch's)

NumPy's backward needs five passes and three temporaries (the mask ``x == m``,
its sum, the division, a cast, the product); the kernel makes two passes over
a piece of rows in the L1 cache (count, then write).  The forward is the SIMD
row max/min of ``_rows.py``.

>>> x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
>>> m = amax(x, 1)
>>> m
array([3., 2.])
>>> extremum_backward(x, m, np.array([1.0, 1.0]), 1)
array([[0. , 0.5, 0.5],
       [1. , 0. , 0. ]])
"""

from __future__ import annotations

import numpy as np

from ._rows import piece_rows, row_max, row_min
from .runtime.dispatch import Kernel, as_rows, from_rows
from .runtime.jit import njit


def amax(x: np.ndarray, dim: int) -> np.ndarray:
    """The max of the float array ``x`` along ``dim`` (of size > 0), ``dim`` removed, in x's dtype."""
    rows, moved_shape = as_rows(x, dim)
    return amax_rows(rows).reshape(moved_shape[:-1])


def amin(x: np.ndarray, dim: int) -> np.ndarray:
    """The min of the float array ``x`` along ``dim`` (of size > 0), ``dim`` removed, in x's dtype."""
    rows, moved_shape = as_rows(x, dim)
    return amin_rows(rows).reshape(moved_shape[:-1])


def extremum_backward(x: np.ndarray, m: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    """d(loss)/dx of ``m`` = amax or amin of ``x`` along ``dim``, from d(loss)/dm ``grad`` (``m`` and
    ``grad`` with ``dim`` removed or kept): shared evenly by the tied extrema, in x's layout."""
    rows, moved_shape = as_rows(x, dim)
    return from_rows(extremum_backward_rows(rows, m.ravel(), grad.ravel()), moved_shape, dim, x)


def amax_rows(x: np.ndarray) -> np.ndarray:
    """The max of each row of the (rows, D) C-contiguous ``x`` (D > 0), in x's dtype."""
    out = np.empty(x.shape[0], x.dtype)
    _AMAX.on(x)(x, out)
    return out


def amin_rows(x: np.ndarray) -> np.ndarray:
    """The min of each row of the (rows, D) C-contiguous ``x`` (D > 0), in x's dtype."""
    out = np.empty(x.shape[0], x.dtype)
    _AMIN.on(x)(x, out)
    return out


def extremum_backward_rows(x: np.ndarray, m: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """d(loss)/dx of the row max (or min) ``m`` of the (rows, D) ``x``, from d(loss)/dm ``grad``
    (rows,): shared evenly by the tied extrema of each row."""
    dx = np.empty_like(x)
    _EXTREMUM_BACKWARD.on(x)(x, m, grad, dx)
    return dx


def _amax_rows_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.max(x, axis=1, out=out)


def _amin_rows_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.min(x, axis=1, out=out)


@njit(fastmath={"reassoc"})
def _count_ties(x, m, count):
    """count[i] = how many elements of row i equal m[i] (as a float)."""
    for i in range(x.shape[0]):
        row, top, c = x[i], m[i], 0.0
        for j in range(row.size):
            c += 1.0 if row[j] == top else 0.0
        count[i] = c


@njit(error_model="numpy")
def _extremum_backward_piece(x, m, g, dx, count):
    _count_ties(x, m, count)
    one, zero = dx.dtype.type(1), dx.dtype.type(0)
    for i in range(x.shape[0]):
        share = dx.dtype.type(g[i] / count[i])  # (a row with a NaN: g/0, and share * 0 = NaN)
        top, row, out = m[i], x[i], dx[i]
        for j in range(row.size):
            out[j] = share * (one if row[j] == top else zero)


@njit(error_model="numpy")
def _extremum_backward_rows(x, m, g, dx):
    count = np.empty(x.shape[0])
    step = piece_rows(x.shape[1])
    for start in range(0, x.shape[0], step):
        p = slice(start, start + step)
        _extremum_backward_piece(x[p], m[p], g[p], dx[p], count[p])


def _extremum_backward_rows_numpy(x: np.ndarray, m: np.ndarray, g: np.ndarray, dx: np.ndarray) -> None:
    winners = x == m[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = g / np.sum(winners, axis=1)
        np.multiply(winners, share[:, None], out=dx)


# Serial ns per element (the ``Kernel``'s ``ns``); the max and min are the SIMD ones of ``_rows.py``.
_AMAX = Kernel(_amax_rows_numpy, row_max, ns=0.13)
_AMIN = Kernel(_amin_rows_numpy, row_min, ns=0.13)
_EXTREMUM_BACKWARD = Kernel(_extremum_backward_rows_numpy, _extremum_backward_rows, ns=0.17)
