"""Average pooling over windows of planes: the mean of each window, and its transpose (the backward).

The planes and windows are ``pool.py``'s: ``x`` (P, H, W), and per dim each window's ``start`` and
``count`` (step 1).

- ``window_mean``: per window, the sum of its values divided by ``divisor[i, j]`` (the window's
  size, its size with the padding, or ``divisor_override``: the caller's choice).
- ``window_mean_transpose``: the transpose of ``window_mean`` (its backward): each output's value
  divided by its divisor, added to every position of its window.

Per output row, its input rows are summed first (a row of column sums: contiguous, SIMD lanes),
then each window's run of them.  One window over the whole plane (global pooling) is one flat
loop over all the planes.  Each is a numba kernel over the planes (in parallel over planes for big
inputs) beside its NumPy reference, which gathers all windows at once (``pool.windows``).

>>> x = np.array([[[1.0, 5.0, 2.0, 2.0]]])                 # one plane, H = 1, W = 4
>>> rows = np.zeros(1, np.int64), np.ones(1, np.int64)      # start 0, count 1
>>> cols = np.array([0, 2]), np.array([2, 2])               # windows [0, 1] and [2, 3]
>>> window_mean(x, rows, cols, np.full((1, 2), 2.0))
array([[[3., 2.]]])
"""

from __future__ import annotations

import numpy as np

from .pool import windows
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


def window_mean(x: np.ndarray, rows: tuple, cols: tuple, divisor: np.ndarray) -> np.ndarray:
    """The sum of each window of the planes ``x`` (P, H, W) divided by ``divisor`` (Ho, Wo).

    Args:
        rows, cols: ``(start, count)`` of the windows along H and along W (step 1).
    """
    (h0, hn), (w0, wn) = rows, cols
    out = np.empty((x.shape[0], h0.shape[0], w0.shape[0]), x.dtype)
    _MEAN.on(x)(np.ascontiguousarray(x), h0, hn, w0, wn, divisor.astype(x.dtype, copy=False), out)
    return out


def window_mean_transpose(grad: np.ndarray, rows: tuple, cols: tuple, divisor: np.ndarray, size: tuple,
                          shape: tuple | None = None) -> np.ndarray:  # fmt: skip
    """The transpose of ``window_mean``: ``grad`` (P, Ho, Wo) divided by ``divisor`` and added to
    every position of each window, into zeros of (P, *size), returned as ``shape`` (P * size
    elements; default (P, *size)): an array of its own, not a reshaped view (the autograd engine
    takes a leaf's first gradient as it is only when it owns its memory)."""
    (h0, hn), (w0, wn) = rows, cols
    result = np.zeros((grad.shape[0], *size) if shape is None else shape, grad.dtype)
    out = result.reshape((grad.shape[0], *size))
    _MEAN_T.on(out)(np.ascontiguousarray(grad), h0, hn, w0, wn, divisor.astype(grad.dtype, copy=False), out)
    return result


def _mean_numpy(x, h0, hn, w0, wn, divisor, out) -> None:
    values, valid, _ = windows(x, (h0, hn, 1), (w0, wn, 1))
    out[...] = np.sum(np.where(valid, values, 0), axis=-1) / divisor


def _mean_transpose_numpy(grad, h0, hn, w0, wn, divisor, out) -> None:
    planes = out.shape[0]
    _, valid, flat = windows(np.zeros((1, *out.shape[1:]), grad.dtype), (h0, hn, 1), (w0, wn, 1))
    share = np.where(valid, (grad / divisor)[..., None], 0)  # (P, Ho, Wo, K)
    count = share[0].size if planes else 0
    where = np.broadcast_to(flat, share.shape).reshape(planes, count)
    np.add.at(out.reshape(planes, -1), (np.arange(planes)[:, None], where), share.reshape(planes, count))


@njit
def _row_scratch(width, hn, dtype):
    """A row of column sums for the windows of several input rows (none when each has one)."""
    return np.empty(width if hn.size > 0 and hn.max() > 1 else 0, dtype)


@njit(fastmath={"reassoc"})
def _mean_plane(plane, h0, hn, w0, wn, divisor, columns, out):
    """out[i, j] = the sum of window (i, j) / its divisor: per output row, its input rows summed
    first (into ``columns``, the caller's scratch of a row: contiguous, SIMD lanes), then each
    window's run of those column sums.  A window as wide as the plane (global pooling) is one
    contiguous run of its rows, summed at once."""
    width = plane.shape[1]
    if w0.shape[0] == 1 and wn[0] == width:
        flat = plane.reshape(-1)
        for i in range(h0.shape[0]):
            start, total = np.uint64(h0[i] * width), plane.dtype.type(0)
            for k in range(np.uint64(hn[i] * width)):
                total += flat[start + k]
            out[i, 0] = total / divisor[i, 0]
        return
    for i in range(h0.shape[0]):
        if hn[i] == 1:  # (one input row, e.g. 1-D pooling: its windows are summed from it directly)
            source = plane[h0[i]]
        else:
            columns[:] = 0
            for a in range(hn[i]):
                row = plane[h0[i] + a]
                for w in range(np.uint64(columns.shape[0])):  # (unsigned: a signed index keeps LLVM from vectorising)
                    columns[w] += row[w]
            source = columns
        for j in range(w0.shape[0]):
            total, start = plane.dtype.type(0), np.uint64(w0[j])
            for w in range(np.uint64(wn[j])):  # (unsigned: vectorised)
                total += source[start + w]
            out[i, j] = total / divisor[i, j]


@njit(inline="always")
def _whole_planes(h0, hn, w0, wn, height: int, width: int) -> bool:
    """One window covering the whole plane (global pooling)."""
    return h0.shape[0] == 1 and w0.shape[0] == 1 and hn[0] == height and wn[0] == width


@njit(fastmath={"reassoc"})
def _plane_means(x, divisor, out) -> None:
    """out[p] = the sum of the contiguous plane p of x (P, H, W) / divisor: one flat loop, no view of
    a plane (a call per 8 x 8 plane costs 3x its sum)."""
    flat, area = x.reshape(-1), np.uint64(x.shape[1] * x.shape[2])
    for p in range(x.shape[0]):
        start, total = np.uint64(p) * area, x.dtype.type(0)
        for k in range(area):  # (unsigned: vectorised)
            total += flat[start + k]
        out[p] = total / divisor


@njit(read_only=("x", "h0", "hn", "w0", "wn", "divisor"))
def _mean_planes(x, h0, hn, w0, wn, divisor, out):
    if _whole_planes(h0, hn, w0, wn, x.shape[1], x.shape[2]):
        return _plane_means(x, divisor[0, 0], out.reshape(-1))
    columns = _row_scratch(x.shape[2], hn, x.dtype)
    for p in range(x.shape[0]):
        _mean_plane(x[p], h0, hn, w0, wn, divisor, columns, out[p])


@njit(parallel=True)
def _mean_parallel(x, h0, hn, w0, wn, divisor, out):
    if _whole_planes(h0, hn, w0, wn, x.shape[1], x.shape[2]):  # (one pass at memory speed: no threads)
        return _plane_means(x, divisor[0, 0], out.reshape(-1))
    for p in prange(x.shape[0]):
        columns = _row_scratch(x.shape[2], hn, x.dtype)
        _mean_plane(x[p], h0, hn, w0, wn, divisor, columns, out[p])


@njit
def _mean_transpose_plane(grad, h0, hn, w0, wn, divisor, columns, out):
    """The transpose of ``_mean_plane``: per output row, each window's share spread over its run of
    ``columns``, then ``columns`` added to each of the window's input rows (contiguous); a window as
    wide as the plane adds its share to its rows' one contiguous run."""
    width = out.shape[1]
    if w0.shape[0] == 1 and wn[0] == width:
        flat = out.reshape(-1)
        for i in range(h0.shape[0]):
            start, share = np.uint64(h0[i] * width), grad[i, 0] / divisor[i, 0]
            for k in range(np.uint64(hn[i] * width)):
                flat[start + k] += share
        return
    for i in range(h0.shape[0]):
        target = out[h0[i]] if hn[i] == 1 else columns  # (one input row: the shares go straight to it)
        if hn[i] != 1:
            columns[:] = 0
        for j in range(w0.shape[0]):
            share, start = grad[i, j] / divisor[i, j], np.uint64(w0[j])
            for w in range(np.uint64(wn[j])):  # (unsigned: vectorised)
                target[start + w] += share
        if hn[i] == 1:
            continue
        for a in range(hn[i]):
            row = out[h0[i] + a]
            for w in range(np.uint64(columns.shape[0])):  # (unsigned: vectorised)
                row[w] += columns[w]


@njit
def _plane_shares(grad, divisor, out) -> None:
    """The transpose of ``_plane_means``: every element of plane p of out (P, H, W) += grad[p] /
    divisor."""
    flat, area = out.reshape(-1), np.uint64(out.shape[1] * out.shape[2])
    for p in range(out.shape[0]):
        start, share = np.uint64(p) * area, grad[p] / divisor
        for k in range(area):  # (unsigned: vectorised)
            flat[start + k] += share


@njit
def _mean_transpose_planes(grad, h0, hn, w0, wn, divisor, out):
    if _whole_planes(h0, hn, w0, wn, out.shape[1], out.shape[2]):
        return _plane_shares(grad.reshape(-1), divisor[0, 0], out)
    columns = _row_scratch(out.shape[2], hn, out.dtype)
    for p in range(grad.shape[0]):
        _mean_transpose_plane(grad[p], h0, hn, w0, wn, divisor, columns, out[p])


@njit(parallel=True)
def _mean_transpose_parallel(grad, h0, hn, w0, wn, divisor, out):
    if _whole_planes(h0, hn, w0, wn, out.shape[1], out.shape[2]):
        return _plane_shares(grad.reshape(-1), divisor[0, 0], out)
    for p in prange(grad.shape[0]):
        columns = _row_scratch(out.shape[2], hn, out.dtype)
        _mean_transpose_plane(grad[p], h0, hn, w0, wn, divisor, columns, out[p])


_MEAN = Kernel(_mean_numpy, _mean_planes, _mean_parallel, ns=0.5)
# (ns per element written: one gradient value spreads over a whole plane in global pooling)
_MEAN_T = Kernel(_mean_transpose_numpy, _mean_transpose_planes, _mean_transpose_parallel, ns=0.5)
