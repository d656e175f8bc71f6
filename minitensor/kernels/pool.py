"""Pooling over windows of planes: the argmax of each window (max pooling) and the mean of each
window (average pooling), forward and transposed.

Every pooling of ``minitensor`` reaches these kernels with its input seen as planes
``x`` (P, H, W) (the batch and channel dims merged into P; a 1-D pooling has H = 1)
and its windows described per dim by three things, computed once by the caller::

    start (O,)  the first input position of each output's window (inside the input)
    count (O,)  how many positions the window has inside the input (>= 1)
    step        the distance between them (the dilation; 1 for average pooling)

so output ``(i, j)`` pools ``x[p, start_h[i] + a * step_h, start_w[j] + b * step_w]`` for
``a < count_h[i]`` and ``b < count_w[j]``.  Padding, ``ceil_mode`` and adaptive windows are
all just other starts and counts: the kernels never see them.

- ``max_pool_index``: per window, the flat index ``h * W + w`` of its largest value, with
  PyTorch's rule: the first of equal maxima in row-major order, and a NaN wins (the last NaN
  of the window).  The values are then a gather at these indices (the op's job).  Narrow windows
  (most poolings) are searched along W for every row, then along H (``_max_index_separable``);
  wide ones (global pooling) window by window.
- ``window_mean``: per window, the sum of its values divided by ``divisor[i, j]`` (the
  window's size, its size with the padding, or ``divisor_override``: the caller's choice).
- ``window_mean_transpose``: the transpose of ``window_mean`` (its backward): each output's
  value divided by its divisor, added to every position of its window.

Each is a numba kernel over the planes (in parallel over planes for big inputs) beside its
NumPy reference, which gathers all windows at once as a (P, Ho, Wo, kh, kw) array.

>>> x = np.array([[[1.0, 5.0, 2.0, 2.0]]])                 # one plane, H = 1, W = 4
>>> one = np.zeros(1, np.int64), np.ones(1, np.int64)       # rows: start 0, count 1
>>> cols = np.array([0, 2]), np.array([2, 2])               # windows [0, 1] and [2, 3]
>>> max_pool_index(x, (*one, 1), (*cols, 1))
array([[[1, 2]]])
>>> window_mean(x, one, cols, np.full((1, 2), 2.0))
array([[[3., 2.]]])
"""

from __future__ import annotations

import numpy as np

from ._rows import calls_intrinsics, maximum
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


# ------------------------------------------------------------------ the argmax of each window
def max_pool_index(x: np.ndarray, rows: tuple, cols: tuple) -> np.ndarray:
    """The flat index (``h * W + w``) of the max of each window of the planes ``x`` (P, H, W).

    Args:
        rows, cols: ``(start, count, step)`` of the windows along H and along W (see the module
            docstring): start and count int64 arrays of the output's height (width), step an int.

    Returns: int64 (P, Ho, Wo).
    """
    (h0, hn, dh), (w0, wn, dw) = rows, cols
    index = np.empty((x.shape[0], h0.shape[0], w0.shape[0]), np.int64)
    x = np.ascontiguousarray(x)
    if wn.max(initial=1) <= _NARROW:  # along W then along H (see _max_index_separable)
        k = int(np.sort(wn)[wn.size // 2]) if wn.size else 1  # (the median count: searched for all at once)
        _MAX_INDEX_SEPARABLE.on(x)(x, h0, hn, int(dh), w0, wn, int(dw), k, index)
    else:  # wide windows (global pooling): window by window
        _MAX_INDEX.on(x)(x, h0, hn, int(dh), w0, wn, int(dw), index)
    return index


def _positions(start: np.ndarray, count: np.ndarray, step: int) -> tuple:
    """(positions (O, K), valid (O, K)): each window's input positions, K the largest count (the
    positions past a window's count repeat its start, marked invalid)."""
    k = np.arange(max(int(count.max(initial=1)), 1))
    valid = k < count[:, None]
    return np.where(valid, start[:, None] + step * k, start[:, None]), valid


def _windows(x: np.ndarray, rows: tuple, cols: tuple) -> tuple:
    """(values (P, Ho, Wo, kh * kw), valid (Ho, Wo, kh * kw), flat index (Ho, Wo, kh * kw))."""
    (hp, hv), (wp, wv) = _positions(*rows), _positions(*cols)
    values = x[:, hp[:, None, :, None], wp[None, :, None, :]]  # (P, Ho, Wo, kh, kw)
    valid = hv[:, None, :, None] & wv[None, :, None, :]
    flat = hp[:, None, :, None] * x.shape[2] + wp[None, :, None, :]
    shape = values.shape[:3] + (values.shape[3] * values.shape[4],)
    return values.reshape(shape), valid.reshape(shape[1:]), flat.reshape(shape[1:])


def _max_index_numpy(x, h0, hn, dh, w0, wn, dw, index) -> None:
    values, valid, flat = _windows(x, (h0, hn, dh), (w0, wn, dw))
    nan = np.isnan(values) & valid
    k = values.shape[-1]
    last_nan = k - 1 - np.argmax(nan[..., ::-1], axis=-1)
    first_max = np.argmax(np.where(valid & ~nan, values, -np.inf), axis=-1)  # (all -inf: the first, valid)
    choice = np.where(nan.any(axis=-1), last_nan, first_max)
    index[...] = np.take_along_axis(np.broadcast_to(flat, values.shape), choice[..., None], axis=-1)[..., 0]


@calls_intrinsics
def _max_index_plane(plane, h0, hn, dh, w0, wn, dw, index):
    """index[i, j] = the flat index of the max of window (i, j) of one plane: the window's max first
    (``maximum``: no branch, NaN if a NaN is there), then the first position holding it, or the
    last NaN (PyTorch's order: a larger value or a NaN replaces the best so far).  Two passes over
    a window without a mispredicted branch per element are faster than one with."""
    for i in range(h0.shape[0]):
        for j in range(w0.shape[0]):
            m = plane[h0[i], w0[j]]
            for a in range(hn[i]):
                row = plane[h0[i] + a * dh]
                for b in range(wn[j]):
                    m = maximum(m, row[np.uint64(w0[j] + b * dw)])  # (unsigned: no wrap-around test)
            index[i, j] = _first_at(plane, h0[i], hn[i], dh, w0[j], wn[j], dw, m)


@njit
def _first_at(plane, h0, hn, dh, w0, wn, dw, m):
    """The flat index of the first element of the window equal to ``m`` (the last NaN when m is NaN)."""
    width = plane.shape[1]
    found = h0 * width + w0
    for a in range(hn):
        row = plane[h0 + a * dh]
        for b in range(wn):
            v = row[np.uint64(w0 + b * dw)]
            if m != m:
                if v != v:
                    found = (h0 + a * dh) * width + w0 + b * dw
            elif v == m:
                return (h0 + a * dh) * width + w0 + b * dw
    return found


@njit
def _max_index_planes(x, h0, hn, dh, w0, wn, dw, index):
    for p in range(x.shape[0]):
        _max_index_plane(x[p], h0, hn, dh, w0, wn, dw, index[p])


@njit(parallel=True)
def _max_index_parallel(x, h0, hn, dh, w0, wn, dw, index):
    for p in prange(x.shape[0]):
        _max_index_plane(x[p], h0, hn, dh, w0, wn, dw, index[p])


_MAX_INDEX = Kernel(_max_index_numpy, _max_index_planes, _max_index_parallel, ns=1.0)


# Narrow windows (up to _NARROW wide along W, as most poolings have) go along W, then along H:
# each input row's maximum of k taps (the windows' median count) from every start at once
# (``run``: contiguous, in SIMD lanes; a window with more taps goes on from there, one with fewer,
# cut by the edge, on its own),
# read at the windows' starts (``row_max``, ``row_at``: per input row and output column), then
# per output row the maximum of its rows' (contiguous again).  Along W first, the first maximum
# of a row wins, then the first row holding the window's maximum: PyTorch's row-major first
# maximum; and the last NaN of a row, then the last row with one: its last NaN.
_NARROW = 8


@njit
def _max_index_separable_plane(plane, h0, hn, dh, w0, wn, dw, k, index, run, at, row_max, row_at, best):
    height, width = plane.shape
    span = run.shape[0]  # the starts w of k taps inside the row (w + (k - 1) * dw < width)
    for h in range(height):  # along W (unsigned indices: a signed one keeps LLVM from vectorising)
        row = plane[h]
        for w in range(np.uint64(span)):
            run[w], at[w] = row[w], np.int32(w)
        for b in range(1, k):
            shift = np.uint64(b * dw)
            for w in range(np.uint64(span)):
                v = row[w + shift]
                take = (v > run[w]) | (v != v)  # (a larger value, or a NaN: PyTorch's rule)
                run[w] = v if take else run[w]
                at[w] = np.int32(w + shift) if take else at[w]
        for j in range(w0.shape[0]):
            if wn[j] >= k:  # the window's first k taps from run, then its others (adaptive windows)
                m, first, b0 = run[w0[j]], at[w0[j]], k
            else:  # a window cut by the edge: its own taps
                m, first, b0 = row[w0[j]], w0[j], 1
            for b in range(b0, wn[j]):
                v = row[w0[j] + b * dw]
                if v > m or v != v:
                    m, first = v, w0[j] + b * dw
            row_max[h, j], row_at[h, j] = m, h * width + first
    for i in range(h0.shape[0]):  # along H
        out = index[i]
        best[:] = row_max[h0[i]]
        out[:] = row_at[h0[i]]
        for a in range(1, hn[i]):
            h = h0[i] + a * dh
            for j in range(out.shape[0]):
                v = row_max[h, j]
                take = (v > best[j]) | (v != v)
                best[j] = v if take else best[j]
                out[j] = row_at[h, j] if take else out[j]


@njit
def _max_index_separable_planes(x, h0, hn, dh, w0, wn, dw, k, index):
    span, wo = x.shape[2] - (k - 1) * dw, w0.shape[0]
    run, at = np.empty(span, x.dtype), np.empty(span, np.int32)
    row_max, row_at, best = (
        np.empty((x.shape[1], wo), x.dtype),
        np.empty((x.shape[1], wo), np.int64),
        np.empty(wo, x.dtype),
    )
    for p in range(x.shape[0]):
        _max_index_separable_plane(x[p], h0, hn, dh, w0, wn, dw, k, index[p], run, at, row_max, row_at, best)


@njit(parallel=True)
def _max_index_separable_parallel(x, h0, hn, dh, w0, wn, dw, k, index):
    span, wo = x.shape[2] - (k - 1) * dw, w0.shape[0]
    for p in prange(x.shape[0]):
        run, at = np.empty(span, x.dtype), np.empty(span, np.int32)
        row_max, row_at = np.empty((x.shape[1], wo), x.dtype), np.empty((x.shape[1], wo), np.int64)
        _max_index_separable_plane(x[p], h0, hn, dh, w0, wn, dw, k, index[p], run, at, row_max, row_at,
                                   np.empty(wo, x.dtype))  # fmt: skip


def _max_index_separable_numpy(x, h0, hn, dh, w0, wn, dw, k, index) -> None:
    _max_index_numpy(x, h0, hn, dh, w0, wn, dw, index)


_MAX_INDEX_SEPARABLE = Kernel(
    _max_index_separable_numpy, _max_index_separable_planes, _max_index_separable_parallel, ns=3.0
)


# ------------------------------------------------------------------ the mean of each window
def window_mean(x: np.ndarray, rows: tuple, cols: tuple, divisor: np.ndarray) -> np.ndarray:
    """The sum of each window of the planes ``x`` (P, H, W) divided by ``divisor`` (Ho, Wo).

    Args:
        rows, cols: ``(start, count)`` of the windows along H and along W (step 1).
    """
    (h0, hn), (w0, wn) = rows, cols
    out = np.empty((x.shape[0], h0.shape[0], w0.shape[0]), x.dtype)
    _MEAN.on(x)(np.ascontiguousarray(x), h0, hn, w0, wn, divisor.astype(x.dtype, copy=False), out)
    return out


def window_mean_transpose(grad: np.ndarray, rows: tuple, cols: tuple, divisor: np.ndarray, size: tuple) -> np.ndarray:
    """The transpose of ``window_mean``: ``grad`` (P, Ho, Wo) divided by ``divisor`` and added to
    every position of each window, into zeros of (P, *size)."""
    (h0, hn), (w0, wn) = rows, cols
    out = np.zeros((grad.shape[0], *size), grad.dtype)
    _MEAN_T.on(grad)(np.ascontiguousarray(grad), h0, hn, w0, wn, divisor.astype(grad.dtype, copy=False), out)
    return out


def _mean_numpy(x, h0, hn, w0, wn, divisor, out) -> None:
    values, valid, _ = _windows(x, (h0, hn, 1), (w0, wn, 1))
    out[...] = np.sum(np.where(valid, values, 0), axis=-1) / divisor


def _mean_transpose_numpy(grad, h0, hn, w0, wn, divisor, out) -> None:
    planes = out.shape[0]
    _, valid, flat = _windows(np.zeros((1, *out.shape[1:]), grad.dtype), (h0, hn, 1), (w0, wn, 1))
    share = np.where(valid, (grad / divisor)[..., None], 0)  # (P, Ho, Wo, K)
    count = share[0].size if planes else 0
    where = np.broadcast_to(flat, share.shape).reshape(planes, count)
    np.add.at(out.reshape(planes, -1), (np.arange(planes)[:, None], where), share.reshape(planes, count))


@njit(fastmath={"reassoc"})
def _mean_plane(plane, h0, hn, w0, wn, divisor, out):
    """out[i, j] = the sum of window (i, j) / its divisor: per output row, its input rows summed
    first (``columns``: contiguous, SIMD lanes), then each window's run of those column sums."""
    columns = np.empty(plane.shape[1], plane.dtype)
    for i in range(h0.shape[0]):
        columns[:] = 0
        for a in range(hn[i]):
            row = plane[h0[i] + a]
            for w in range(np.uint64(columns.shape[0])):  # (unsigned: a signed index keeps LLVM from vectorising)
                columns[w] += row[w]
        for j in range(w0.shape[0]):
            total = plane.dtype.type(0)
            for w in range(w0[j], w0[j] + wn[j]):
                total += columns[w]
            out[i, j] = total / divisor[i, j]


@njit
def _mean_planes(x, h0, hn, w0, wn, divisor, out):
    for p in range(x.shape[0]):
        _mean_plane(x[p], h0, hn, w0, wn, divisor, out[p])


@njit(parallel=True)
def _mean_parallel(x, h0, hn, w0, wn, divisor, out):
    for p in prange(x.shape[0]):
        _mean_plane(x[p], h0, hn, w0, wn, divisor, out[p])


@njit
def _mean_transpose_plane(grad, h0, hn, w0, wn, divisor, out):
    """The transpose of ``_mean_plane``: per output row, each window's share spread over its run of
    ``columns``, then ``columns`` added to each of the window's input rows (contiguous)."""
    columns = np.empty(out.shape[1], out.dtype)
    for i in range(h0.shape[0]):
        columns[:] = 0
        for j in range(w0.shape[0]):
            share = grad[i, j] / divisor[i, j]
            for w in range(w0[j], w0[j] + wn[j]):
                columns[w] += share
        for a in range(hn[i]):
            row = out[h0[i] + a]
            for w in range(np.uint64(columns.shape[0])):  # (unsigned: vectorised)
                row[w] += columns[w]


@njit
def _mean_transpose_planes(grad, h0, hn, w0, wn, divisor, out):
    for p in range(grad.shape[0]):
        _mean_transpose_plane(grad[p], h0, hn, w0, wn, divisor, out[p])


@njit(parallel=True)
def _mean_transpose_parallel(grad, h0, hn, w0, wn, divisor, out):
    for p in prange(grad.shape[0]):
        _mean_transpose_plane(grad[p], h0, hn, w0, wn, divisor, out[p])


_MEAN = Kernel(_mean_numpy, _mean_planes, _mean_parallel, ns=0.5)
_MEAN_T = Kernel(_mean_transpose_numpy, _mean_transpose_planes, _mean_transpose_parallel, ns=2.0)
