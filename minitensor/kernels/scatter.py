"""``out[key] += values`` where repeated positions add up: ``np.add.at``, fast.

The backward of every gather-like op is this scatter-add: an embedding's weight
gradient (token ids repeat), ``x[int array]``, ``gather``, ``scatter_add``.
``np.add.at`` does it right but element by element through a generic ufunc
loop (about 10-30 ns per element).  When the key is integer arrays on the
leading dims of ``out`` (one position per row of the trailing dims), the work is
"add row i of values into row idx[i] of out", a loop that numba compiles to
vectorised row additions::

    out2 = out.reshape(rows, -1)          (rows: the indexed leading dims, flattened)
    idx  = flat row position of each key entry
    for i in range(len(idx)):
        out2[idx[i]] += values2[i]

``_add_rows_numpy`` is the same thing with ``np.add.at`` (the reference); any
other key (slices, booleans, ``None``) goes to ``np.add.at`` directly.

>>> out = np.zeros((3, 2))
>>> index_add(out, (np.array([0, 2, 0]),), np.ones((3, 2)))
>>> out
array([[2., 2.],
       [0., 0.],
       [1., 1.]])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit


def index_add(out: np.ndarray, key, values) -> None:
    """``np.add.at(out, key, values)``: ``out[key] += values``, repeated positions adding up."""
    rows = _flat_rows(out, key)
    if rows is None:
        np.add.at(out, key, values)
        return
    idx, shape = rows
    values = np.broadcast_to(values, shape)
    if values.size == 0:  # nothing to add
        return
    values2 = values.reshape(idx.size, -1)
    out2 = out.reshape(-1, values2.shape[1])
    if values2.dtype != out.dtype:
        np.add.at(out2, idx, values2)
        return
    if not any(values2.strides):  # one value throughout (the gradient ``sum`` hands back): read once
        _ADD_VALUE.on(out2)(out2, idx, values2[:1, 0])
        return
    _ADD_ROWS.on(values2)(out2, idx, values2)


def _flat_rows(out: np.ndarray, key) -> tuple | None:
    """(flat row index per key entry, the shape ``values`` broadcasts to) when ``key`` is integer
    arrays on the leading dims of a C-contiguous ``out``; else None."""
    parts = key if isinstance(key, tuple) else (key,)
    if not out.flags.c_contiguous or not parts or len(parts) > out.ndim:
        return None
    if not all(isinstance(p, np.ndarray) and p.dtype.kind in "iu" for p in parts):
        return None
    if len(parts) == 1:  # (the usual key: one index array, e.g. an embedding's token ids)
        return _in_range(parts[0], out.shape[0]).reshape(-1), parts[0].shape + out.shape[1:]
    k = len(parts)
    dims = out.shape[:k]
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    flat = np.zeros((), np.intp)
    for a, n, stride in zip(parts, dims, _row_strides(dims)):  # flat = sum(a_i * stride_i), broadcast
        a = _in_range(a, n)
        flat = flat + (a * stride if stride != 1 else a)
    return np.broadcast_to(flat, shape).reshape(-1), shape + out.shape[k:]


def _in_range(a: np.ndarray, n: int) -> np.ndarray:
    """The index array ``a`` into a dim of size ``n`` with negative entries counted from the end;
    IndexError naming the range when an entry is outside [-n, n)."""
    if not a.size:
        return a
    low, high = a.min(), a.max()
    if low < -n or high >= n:
        raise IndexError(f"index_add: index out of range for dim of size {n}: values {low}..{high}")
    return np.where(a < 0, a + n, a) if low < 0 else a


def _row_strides(dims: tuple) -> list:
    """Strides (in rows) of the leading dims ``dims`` of a C-contiguous array."""
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    return strides


def _add_rows_numpy(out: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
    """Reference: out[idx[i]] += values[i] for every i (out, values 2-D; idx 1-D)."""
    np.add.at(out, idx, values)


@njit
def _add_rows(out, idx, values):
    """out[idx[i]] += values[i] for every i, in order (the same sums as the reference)."""
    for i in range(idx.shape[0]):
        row = out[idx[i]]
        src = values[i]
        for j in range(src.shape[0]):
            row[j] += src[j]


_ADD_ROWS = Kernel(_add_rows_numpy, _add_rows)


def _add_value_numpy(out: np.ndarray, idx: np.ndarray, value: np.ndarray) -> None:
    """Reference: out[idx[i]] += value[0] for every i (out 2-D; idx 1-D; value one element)."""
    np.add.at(out, idx, value[0])


@njit
def _add_value(out, idx, value):
    """out[idx[i]] += value[0] for every i, in order: ``_add_rows`` of rows that are all one value (a
    numba loop reading a stride-0 view of it ran ~3x slower)."""
    v = value[0]
    for i in range(idx.shape[0]):
        row = out[idx[i]]
        for j in range(np.uint64(row.shape[0])):  # (unsigned: vectorised)
            row[j] += v


_ADD_VALUE = Kernel(_add_value_numpy, _add_value)


def add_picked_rows(out: np.ndarray, rows: np.ndarray, source: np.ndarray, picked: np.ndarray) -> None:
    """``out[rows[k]] += source[picked[k]]`` for every k, in place: ``index_add`` of the rows ``picked``
    from ``source`` without making them (an embedding bag's sums, and its gradient the other way).
    out (R, D) C-contiguous, source (S, D) of out's dtype, rows and picked int64 (K,) in range."""
    source = np.ascontiguousarray(source)
    if rows.size and out.shape[1]:
        _ADD_PICKED.on(out)(out, rows, source, picked)


def _add_picked_numpy(out: np.ndarray, rows: np.ndarray, source: np.ndarray, picked: np.ndarray) -> None:
    """Reference: ``np.add.at`` of the picked rows."""
    np.add.at(out, rows, source[picked])


@njit
def _add_picked(out, rows, source, picked):
    """out[rows[k]] += source[picked[k]] for every k, in order (the reference's sums)."""
    for k in range(rows.shape[0]):
        dst, src = out[rows[k]], source[picked[k]]
        for j in range(np.uint64(src.shape[0])):  # (unsigned: vectorised)
            dst[j] += src[j]


_ADD_PICKED = Kernel(_add_picked_numpy, _add_picked, ns=0.1)
