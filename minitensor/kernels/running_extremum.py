"""cummax / cummin's indices: where the running maximum (or minimum) of a row was last reached.

PyTorch's rule (``cummax_cummin_helper``, aten/src/ATen/native/ReduceOps.cpp): scanning a row,
element i takes over as the running extremum when ``x[i] >= best`` (``<=`` for the minimum) or is
NaN, so a tie moves the index on, and a NaN stays the extremum (nothing compares greater) until a
later NaN takes its place.  The values are then ``x`` gathered at these indices (``ops/scan.py``:
a ``Gather`` node, whose backward sends each gradient to the element it came from).

The kernel is one pass over each row; the reference (NumPy) takes five: the running extremum, a
mask of where a row element equals it (or is NaN), the positions there, and their running
maximum.  Both run on rows with the dim last (``dispatch.as_rows``).

>>> running_extremum_index(np.array([1.0, 3.0, 2.0, 3.0, np.nan, 5.0]), 0, largest=True)
array([0, 1, 1, 3, 4, 4])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel, as_rows, from_rows
from .runtime.jit import njit


def running_extremum_index(x: np.ndarray, dim: int, largest: bool) -> np.ndarray:
    """For each element of ``x`` along ``dim``: the index (int64) where the running maximum
    (``largest``) or minimum of its row up to it was last reached; x's shape."""
    rows, moved_shape = as_rows(x, dim)
    out = np.empty(rows.shape, np.int64)
    (_MAX if largest else _MIN).on(rows)(rows, out)
    return from_rows(out, moved_shape, dim, x)


def _index_numpy(rows: np.ndarray, out: np.ndarray, largest: bool = True) -> None:
    accumulate = np.maximum.accumulate if largest else np.minimum.accumulate
    record = rows == accumulate(rows, axis=1)  # (a NaN is the extremum from there on, equal to nothing)
    if rows.dtype.kind == "f":
        record |= np.isnan(rows)
    position = np.arange(rows.shape[1])
    out[...] = np.maximum.accumulate(np.where(record, position, -1), axis=1)


def _max_index_numpy(rows, out) -> None:
    _index_numpy(rows, out, largest=True)


def _min_index_numpy(rows, out) -> None:
    _index_numpy(rows, out, largest=False)


@njit(inline="always")
def _takes(v, best, largest):
    """Does ``v`` take over from the running extremum ``best``?  (v != v: NaN.)"""
    return ((v >= best) if largest else (v <= best)) | (v != v)


@njit
def _indices(rows, out, largest):
    """Each row's running-extremum indices, four rows side by side (four independent chains of
    compare-and-select: one row alone waits on each comparison's latency)."""
    count, n = rows.shape
    full = count - count % 4
    for r in range(0, full, 4):
        b0, b1, b2, b3 = rows[r, 0], rows[r + 1, 0], rows[r + 2, 0], rows[r + 3, 0]
        a0 = a1 = a2 = a3 = 0
        for i in range(n):
            v0, v1, v2, v3 = rows[r, i], rows[r + 1, i], rows[r + 2, i], rows[r + 3, i]
            t0, t1, t2, t3 = (
                _takes(v0, b0, largest),
                _takes(v1, b1, largest),
                _takes(v2, b2, largest),
                _takes(v3, b3, largest),
            )
            b0, b1, b2, b3 = (v0 if t0 else b0), (v1 if t1 else b1), (v2 if t2 else b2), (v3 if t3 else b3)
            a0, a1, a2, a3 = (i if t0 else a0), (i if t1 else a1), (i if t2 else a2), (i if t3 else a3)
            out[r, i], out[r + 1, i], out[r + 2, i], out[r + 3, i] = a0, a1, a2, a3
    for r in range(full, count):
        best, at = rows[r, 0], 0
        for i in range(n):
            v = rows[r, i]
            take = _takes(v, best, largest)
            best, at = (v if take else best), (i if take else at)
            out[r, i] = at


@njit
def _max_index(rows, out):
    _indices(rows, out, True)


@njit
def _min_index(rows, out):
    _indices(rows, out, False)


_MAX = Kernel(_max_index_numpy, _max_index)
_MIN = Kernel(_min_index_numpy, _min_index)
