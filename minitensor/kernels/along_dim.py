"""Gather, scatter and scatter-add along one dim: loops over the index, one element each.

With ``index`` of the array's number of dims (its other dims at most the array's,
the array cropped to them), along ``dim`` (here for dim 1 of a 3-D array)::

    gather:       out[a, m, b]  = x[a, index[a, m, b], b]
    scatter:      out[a, index[a, m, b], b]  = values[a, m, b]
    scatter_add:  out[a, index[a, m, b], b] += values[a, m, b]   (repeated indices add up)

Every array is seen as (before, dim, after): the dims before ``dim`` merged,
and those after it.  NumPy has ``np.take_along_axis`` / ``np.put_along_axis``
/ ``np.add.at`` for these (the references): they build an index array per dim
and go through the generic fancy-indexing machinery, 5-30 ns per element; the
loops here take ~1.  Along the last dim (``after`` = 1, the usual case) the
kernels walk plain rows (``_*_rows``); otherwise the innermost loop runs over
the ``after`` dims.  Negative indices count from the end (numba's indexing
wraps them as Python's does); the callers check the range.  ``scatter`` with
repeated indices writes them in order (the last one wins; PyTorch leaves it
unspecified).

>>> gather(np.array([[1.0, 2.0, 3.0]]), np.array([[2, 0, 2]]), dim=1)
array([[3., 1., 3.]])
"""

from __future__ import annotations

import math

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import jit_enabled, njit


def gather(x: np.ndarray, index: np.ndarray, dim: int) -> np.ndarray:
    """x's values at ``index`` along ``dim``: an array of index's shape and x's dtype."""
    x = np.ascontiguousarray(_region(x, index.shape, dim))
    out = np.empty(index.shape, x.dtype)
    rows, arrays = _blocks(dim, x, np.ascontiguousarray(index), out)
    (_GATHER_ROWS if rows else _GATHER).on(x)(*arrays)
    return out


def scatter_add(out: np.ndarray, index: np.ndarray, values: np.ndarray, dim: int) -> None:
    """``out[... index ...] += values`` along ``dim``, in place (out: C-contiguous, values: index's shape)."""
    _scatter(out, index, values, dim, _SCATTER_ADD_ROWS, _SCATTER_ADD)


def scatter(out: np.ndarray, index: np.ndarray, values, dim: int) -> None:
    """``out[... index ...] = values`` along ``dim``, in place (values: index's shape, or a number)."""
    _scatter(out, index, values, dim, _SCATTER_ROWS, _SCATTER)


def _scatter(out, index, values, dim, rows_kernel: Kernel, kernel: Kernel) -> None:
    """Run a scatter kernel (``rows_kernel`` along the last dim, else ``kernel``) on the region of
    ``out`` that ``index`` covers (a copy if it is not contiguous)."""
    region = _region(out, index.shape, dim)
    target = region if region.flags.c_contiguous else region.copy()
    if not isinstance(values, np.ndarray) or values.shape != index.shape:
        values = np.broadcast_to(np.asarray(values, out.dtype), index.shape)
    values = np.ascontiguousarray(values, dtype=out.dtype)
    rows, arrays = _blocks(dim, target, np.ascontiguousarray(index), values)
    (rows_kernel if rows else kernel).on(out)(*arrays)
    if target is not region:
        region[...] = target


def index_range(index: np.ndarray) -> tuple:
    """(smallest, largest) value of a non-empty integer ``index``, in one pass (NumPy's min and max
    take two; the callers check the range before running a kernel)."""
    flat = np.ascontiguousarray(index).reshape(-1)
    if jit_enabled() and flat.dtype == np.int64:
        return _range(flat)
    return _range_numpy(flat)


def _region(a: np.ndarray, shape: tuple, dim: int) -> np.ndarray:
    """a's leading block of ``shape`` in every dim but ``dim`` (a itself when it has that shape)."""
    if a.shape[:dim] == shape[:dim] and a.shape[dim + 1 :] == shape[dim + 1 :]:
        return a
    return a[tuple(slice(None) if i == dim else slice(n) for i, n in enumerate(shape))]


def _blocks(dim: int, *arrays: np.ndarray) -> tuple:
    """(rows, the arrays reshaped): each C-contiguous array as (before, dim, after) (the dims before
    ``dim`` merged, and those after it), or as 2-D rows (before, dim) when nothing comes after."""
    shape = arrays[0].shape
    before, after = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
    if after == 1:
        return True, [a.reshape(before, a.shape[dim]) for a in arrays]
    return False, [a.reshape(before, a.shape[dim], after) for a in arrays]


def _along_key(index: np.ndarray) -> tuple:
    """The fancy-indexing key of ``index`` along axis 1 (``arange`` grids on the other axes)."""
    grids = list(np.ogrid[tuple(slice(n) for n in index.shape)])
    grids[1] = index
    return tuple(grids)


# ---------------------------------------------------------------- references (2-D or 3-D, along axis 1)
def _range_numpy(flat: np.ndarray) -> tuple:
    return flat.min(), flat.max()


def _gather_numpy(x: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
    out[...] = np.take_along_axis(x, index, axis=1)


def _scatter_add_numpy(out: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    np.add.at(out, _along_key(index), values)


def _scatter_numpy(out: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    np.put_along_axis(out, index, values, axis=1)


# ---------------------------------------------------------------- kernels: rows (2-D), then 3-D
@njit
def _range(flat):
    low = high = flat[0]
    for i in range(flat.shape[0]):
        low = min(low, flat[i])
        high = max(high, flat[i])
    return low, high


@njit
def _gather_rows(x, index, out):
    for a in range(index.shape[0]):
        src, idx, dst = x[a], index[a], out[a]
        for m in range(idx.shape[0]):
            dst[m] = src[idx[m]]


@njit(read_only=("index", "values"))
def _scatter_add_rows(out, index, values):
    """A run of equal indices (cummax's and cummin's gradients have long ones) is summed in a register
    and added once: adding each value to memory would wait for the previous addition to the same place."""
    for a in range(index.shape[0]):
        dst, idx, src = out[a], index[a], values[a]
        if idx.shape[0] == 0:
            continue
        last, total = idx[0], src[0]
        for m in range(1, idx.shape[0]):
            if idx[m] == last:
                total += src[m]
            else:
                dst[last] += total
                last, total = idx[m], src[m]
        dst[last] += total


@njit(read_only=("index", "values"))
def _scatter_rows(out, index, values):
    for a in range(index.shape[0]):
        dst, idx, src = out[a], index[a], values[a]
        for m in range(idx.shape[0]):
            dst[idx[m]] = src[m]


@njit(read_only=("x", "index"))
def _gather(x, index, out):
    for a in range(index.shape[0]):
        src, idx, dst = x[a], index[a], out[a]
        for m in range(idx.shape[0]):
            for b in range(idx.shape[1]):
                dst[m, b] = src[idx[m, b], b]


@njit
def _scatter_add(out, index, values):
    for a in range(index.shape[0]):
        dst, idx, src = out[a], index[a], values[a]
        for m in range(idx.shape[0]):
            for b in range(idx.shape[1]):
                dst[idx[m, b], b] += src[m, b]


@njit
def _scatter_put(out, index, values):
    for a in range(index.shape[0]):
        dst, idx, src = out[a], index[a], values[a]
        for m in range(idx.shape[0]):
            for b in range(idx.shape[1]):
                dst[idx[m, b], b] = src[m, b]


# Along the last dim (rows), else along a dim with more after it; each against its NumPy reference.
_GATHER_ROWS, _GATHER = Kernel(_gather_numpy, _gather_rows), Kernel(_gather_numpy, _gather)
_SCATTER_ADD_ROWS, _SCATTER_ADD = (
    Kernel(_scatter_add_numpy, _scatter_add_rows),
    Kernel(_scatter_add_numpy, _scatter_add),
)
_SCATTER_ROWS, _SCATTER = Kernel(_scatter_numpy, _scatter_rows), Kernel(_scatter_numpy, _scatter_put)
