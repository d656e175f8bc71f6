"""Resampling planes by a fixed sparse map per dim: interpolation (nearest, linear, cubic) and the
reflect / replicate / circular padding modes, forward and transposed.

A resampling of planes ``x`` (P, H, W) to (P, Ho, Wo) is described per dim by taps: for each
output row ``i``, ``T`` input rows ``index_h[i, t]`` and their weights ``weight_h[i, t]``
(likewise for the columns, ``S`` taps), and computes::

    out[p, i, j] = sum over t, s of  weight_h[i, t] * weight_w[j, s] * x[p, index_h[i, t], index_w[j, s]]

- nearest interpolation and the padding modes: one tap per dim, weight 1 (``weight`` None:
  a pure gather, e.g. reflect padding reads row ``|i - pad|`` mirrored at the edges);
- (bi)linear interpolation: two taps per dim; bicubic: four.

The map is linear in ``x``, so its gradient is its transpose (``resample_transpose``): each
output's gradient times the tap weights added back to the taps' input positions (a
scatter-add: positions read by several outputs collect all their gradients).  The transpose's
own transpose is the resampling again, so both directions are ops of each other's backward.

A 1-D resampling (N, C, L) is the planes (N * C, 1, L) with the identity map along H
(``index_h = [[0]]``).  The numba kernels loop over the planes (in parallel for big inputs);
the NumPy references gather all positions at once (``np.add.at`` for the transpose).  Where NumPy's
BLAS is OpenBLAS on pthreads, the passes split their planes over BLAS's own threads
(``_on_blas_threads``), whose regions cost a fifth of waking numba's pool on a VM.

>>> x = np.array([[[1.0, 2.0, 3.0]]])                     # one plane, H = 1, W = 3
>>> rows = (np.array([[0]]), None)                         # the identity along H
>>> cols = (np.array([[1], [0], [1], [2], [1]]), None)     # W reflect-padded by 1 on each side
>>> resample(x, rows, cols)
array([[[2., 1., 2., 3., 2.]]])
>>> resample_transpose(np.ones((1, 1, 5)), rows, cols, (1, 3))
array([[[1., 3., 1.]]])
"""

from __future__ import annotations

import numpy as np

from .runtime import blas_threads
from .runtime.blas_threads import HEAD, LAUNCH_SECONDS, SLOT, contiguous, fail, record, records, split
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


def resample(x: np.ndarray, rows: tuple, cols: tuple) -> np.ndarray:
    """The planes ``x`` (P, H, W) resampled to (P, Ho, Wo).

    Args:
        rows: ``(index, weight)`` along H: int64 (Ho, T) input rows and their float weights
            (Ho, T), or weight None (one tap of weight 1: a gather).
        cols: the same along W, (Wo, S).
    """
    (ih, wh), (iw, ww) = rows, cols
    out = np.empty((x.shape[0], ih.shape[0], iw.shape[0]), x.dtype)
    x = np.ascontiguousarray(x)
    if _gather_only(rows, cols):
        _GATHER.on(x)(x, np.ascontiguousarray(ih[:, 0]), np.ascontiguousarray(iw[:, 0]), out)
        return out
    wh = _weights(wh, x.dtype)
    iw_t, ww_t = np.ascontiguousarray(iw.T), None if ww is None else _weights(ww.T, x.dtype)  # (S, Wo): see below
    _RESAMPLE.on(x)(x, ih, wh, iw_t, ww_t, out)
    return out


def resample_transpose(grad: np.ndarray, rows: tuple, cols: tuple, size: tuple) -> np.ndarray:
    """The transpose of ``resample`` (its backward): ``grad`` (P, Ho, Wo) times the tap weights,
    added to the taps' positions in zeros of (P, *size)."""
    (ih, wh), (iw, ww) = rows, cols
    out = np.zeros((grad.shape[0], *size), grad.dtype)
    grad = np.ascontiguousarray(grad)
    if _gather_only(rows, cols):
        _SCATTER_ADD.on(grad)(grad, np.ascontiguousarray(ih[:, 0]), np.ascontiguousarray(iw[:, 0]), out)
        return out
    wh, ww = _weights(wh, grad.dtype), _weights(ww, grad.dtype)
    _TRANSPOSE.on(grad)(grad, ih, wh, iw, ww, out)
    return out


def _gather_only(rows: tuple, cols: tuple) -> bool:
    """One tap of weight 1 per dim (nearest interpolation, the padding modes): a plain gather, whose
    kernels (``_gather_plane``, ``_scatter_add_plane``) skip the taps' loops."""
    return rows[1] is None and cols[1] is None and rows[0].shape[1] == 1 and cols[0].shape[1] == 1


def _weights(w, dtype):
    return None if w is None else np.ascontiguousarray(w, dtype=dtype)


def _taps(index: np.ndarray, weight) -> list:
    """[(index column, weight column or None)] of each tap."""
    return [(index[:, t], None if weight is None else weight[:, t]) for t in range(index.shape[1])]


def _resample_numpy(x, ih, wh, iw_t, ww_t, out) -> None:
    """Reference (the column taps as (S, Wo), as the kernel takes them)."""
    out[...] = 0
    for rows, row_weight in _taps(ih, wh):
        for cols, col_weight in _taps(iw_t.T, None if ww_t is None else ww_t.T):
            term = x[:, rows[:, None], cols[None, :]]
            if row_weight is not None:
                term = term * row_weight[:, None]
            if col_weight is not None:
                term = term * col_weight[None, :]
            out += term


def _transpose_numpy(grad, ih, wh, iw, ww, out) -> None:
    planes = np.arange(grad.shape[0])[:, None, None]
    for rows, row_weight in _taps(ih, wh):
        for cols, col_weight in _taps(iw, ww):
            term = grad
            if row_weight is not None:
                term = term * row_weight[:, None]
            if col_weight is not None:
                term = term * col_weight[None, :]
            np.add.at(out, (planes, rows[None, :, None], cols[None, None, :]), term)


@njit
def _resample_plane(x, ih, wh, iw_t, ww_t, out):
    """One plane, a row of the output at a time: its input rows combined first (``row``: the
    taps along H, weighted), then the output row from ``row``, tap by tap along W (``iw_t``,
    ``ww_t``: the column taps as (S, Wo), so that each tap is one loop over the output row, which
    LLVM vectorises with gathers): W * T + Wo * S operations per output row instead of Wo * T * S.
    With no weights (numba compiles that case apart) a gather of one tap per dim."""
    row = np.empty(x.shape[1], x.dtype)
    for i in range(ih.shape[0]):
        if wh is None and ih.shape[1] == 1:
            src = x[ih[i, 0]]
        else:
            src = row
            _weighted_rows(x, ih[i], None if wh is None else wh[i], row)
        dst = out[i]
        for j in range(np.uint64(dst.shape[0])):
            dst[j] = 0
        for s in range(iw_t.shape[0]):
            index = iw_t[s]
            if ww_t is None:
                for j in range(np.uint64(dst.shape[0])):
                    dst[j] += src[index[j]]
            else:
                weight = ww_t[s]
                for j in range(np.uint64(dst.shape[0])):
                    dst[j] += src[index[j]] * weight[j]


@njit
def _weighted_rows(x, index, weight, row):
    """row = the sum over taps t of weight[t] * x[index[t]] (weight None: 1)."""
    for b in range(row.shape[0]):
        row[np.uint64(b)] = 0
    for t in range(index.shape[0]):
        src, w = x[index[t]], x.dtype.type(1) if weight is None else weight[t]
        for b in range(row.shape[0]):
            row[np.uint64(b)] += w * src[np.uint64(b)]


@njit
def _resample_planes(x, ih, wh, iw_t, ww_t, out):
    _resample_range(x, ih, wh, iw_t, ww_t, out, 0, x.shape[0])


@njit
def _resample_range(x, ih, wh, iw_t, ww_t, out, start, stop):
    for p in range(start, stop):
        _resample_plane(x[p], ih, wh, iw_t, ww_t, out[p])


@njit(parallel=True)
def _resample_parallel(x, ih, wh, iw_t, ww_t, out):
    for p in prange(x.shape[0]):
        _resample_plane(x[p], ih, wh, iw_t, ww_t, out[p])


@njit
def _transpose_plane(grad, ih, wh, iw, ww, out):
    """The transpose of ``_resample_plane``, a row of the gradient at a time: its values sent along W
    into ``row`` (a scatter-add by the W taps), then ``row`` added to each of the H taps' rows."""
    row = np.empty(out.shape[1], out.dtype)
    for i in range(ih.shape[0]):
        src = grad[i]
        direct = wh is None and ih.shape[1] == 1
        dst = out[ih[i, 0]] if direct else row
        if not direct:
            for b in range(row.shape[0]):
                row[np.uint64(b)] = 0
        for j in range(iw.shape[0]):
            for s in range(iw.shape[1]):
                dst[iw[j, s]] += src[j] if ww is None else src[j] * ww[j, s]
        if not direct:
            for t in range(ih.shape[1]):
                target, w = out[ih[i, t]], out.dtype.type(1) if wh is None else wh[i, t]
                for b in range(row.shape[0]):
                    target[np.uint64(b)] += w * row[np.uint64(b)]


@njit
def _transpose_planes(grad, ih, wh, iw, ww, out):
    _transpose_range(grad, ih, wh, iw, ww, out, 0, grad.shape[0])


@njit
def _transpose_range(grad, ih, wh, iw, ww, out, start, stop):
    for p in range(start, stop):
        _transpose_plane(grad[p], ih, wh, iw, ww, out[p])


@njit(parallel=True)
def _transpose_parallel(grad, ih, wh, iw, ww, out):
    for p in prange(grad.shape[0]):
        _transpose_plane(grad[p], ih, wh, iw, ww, out[p])


# ------------------------------------------------------------------ one tap, weight 1: gather
def _gather_numpy(x, ih, iw, out) -> None:
    out[...] = x[:, ih[:, None], iw[None, :]]


def _scatter_add_numpy(grad, ih, iw, out) -> None:
    np.add.at(out, (np.arange(grad.shape[0])[:, None, None], ih[:, None], iw[None, :]), grad)


@njit
def _gather_plane(x, ih, iw, out):
    """out[i, j] = x[ih[i], iw[j]] for one plane."""
    for i in range(ih.shape[0]):
        src, dst = x[ih[i]], out[i]
        for j in range(iw.shape[0]):
            dst[j] = src[iw[j]]


@njit
def _gather_planes(x, ih, iw, out):
    _gather_range(x, ih, iw, out, 0, x.shape[0])


@njit
def _gather_range(x, ih, iw, out, start, stop):
    for p in range(start, stop):
        _gather_plane(x[p], ih, iw, out[p])


@njit(parallel=True)
def _gather_parallel(x, ih, iw, out):
    for p in prange(x.shape[0]):
        _gather_plane(x[p], ih, iw, out[p])


@njit
def _scatter_add_plane(grad, ih, iw, out):
    """out[ih[i], iw[j]] += grad[i, j] for one plane (the transpose of ``_gather_plane``)."""
    for i in range(ih.shape[0]):
        src, dst = grad[i], out[ih[i]]
        for j in range(iw.shape[0]):
            dst[iw[j]] += src[j]


@njit
def _scatter_add_planes(grad, ih, iw, out):
    _scatter_add_range(grad, ih, iw, out, 0, grad.shape[0])


@njit
def _scatter_add_range(grad, ih, iw, out, start, stop):
    for p in range(start, stop):
        _scatter_add_plane(grad[p], ih, iw, out[p])


@njit(parallel=True)
def _scatter_add_parallel(grad, ih, iw, out):
    for p in prange(grad.shape[0]):
        _scatter_add_plane(grad[p], ih, iw, out[p])


# ------------------------------------------------------------------ the planes on BLAS's threads
def _resample_threaded(x, ih, wh, iw_t, ww_t, out) -> None:
    _on_blas_threads(_weighted_task, False, _resample_planes, _resample_parallel, (x, ih, wh, iw_t, ww_t, out))


def _transpose_threaded(grad, ih, wh, iw, ww, out) -> None:
    _on_blas_threads(_weighted_task, True, _transpose_planes, _transpose_parallel, (grad, ih, wh, iw, ww, out))


def _gather_threaded(x, ih, iw, out) -> None:
    _on_blas_threads(_gather_task, False, _gather_planes, _gather_parallel, (x, ih, iw, out))


def _scatter_add_threaded(grad, ih, iw, out) -> None:
    _on_blas_threads(_gather_task, True, _scatter_add_planes, _scatter_add_parallel, (grad, ih, iw, out))


def _on_blas_threads(make_task, transposed: bool, serial, parallel, args: tuple) -> None:
    """A pass (``args``: the planes, the taps' arrays, out) with its planes split over the threads: as
    tasks on BLAS's threads (``runtime/blas_threads.py``: ~20 µs a region, where numba's pool takes
    ~100 µs to wake on a VM), else (no BLAS threads, or the task compiling: ``jit.py``) numba's ``parallel``."""
    x, *taps, out = args
    count = blas_threads.shares(x.shape[0])
    weights = taps[1::2] if len(taps) == 4 else []  # (None or not: a task each)
    usable = count > 1 and blas_threads.available() and blas_threads.one_dtype(x, *weights, out)
    task = make_task(transposed, x.dtype.name, *(w is not None for w in weights)) if usable else None
    if task is None:
        return (serial if count == 1 else parallel)(*args)
    slots = [None if a is None else _slot(a) for a in args]
    blas_threads.run(task, records(split(x.shape[0], count), slots))


def _slot(a: np.ndarray) -> np.ndarray:
    """``a`` as a task reads it: C-contiguous, 4-D (leading 1s), indices as int64."""
    a = np.ascontiguousarray(a, dtype=np.int64 if a.dtype.kind in "iu" else None)
    return a.reshape((1,) * (4 - a.ndim) + a.shape)


@blas_threads.task_factory
def _weighted_task(transposed: bool, dtype_name: str, has_wh: bool, has_ww: bool):
    """The task running ``_resample_range`` (``transposed``: ``_transpose_range``) on one record row:
    slots the planes (1, P, H, W), ih, wh, the column taps and their weights (1, 1, ., .), out (1, P, ., .)."""
    dtype = np.dtype(dtype_name).type

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 6)
        x, out = contiguous(row, 0, dtype)[0], contiguous(row, 5, dtype)[0]
        ih, iw = contiguous(row, 1, np.int64)[0, 0], contiguous(row, 3, np.int64)[0, 0]
        wh = contiguous(row, 2, dtype)[0, 0] if has_wh else None
        ww = contiguous(row, 4, dtype)[0, 0] if has_ww else None
        try:
            if transposed:
                _transpose_range(x, ih, wh, iw, ww, out, row[0], row[1])
            else:
                _resample_range(x, ih, wh, iw, ww, out, row[0], row[1])
        except Exception:  # (e.g. no memory for the row scratch: reported by ``blas_threads.run``)
            fail(row)

    return task


@blas_threads.task_factory
def _gather_task(transposed: bool, dtype_name: str):
    """The task running ``_gather_range`` (``transposed``: ``_scatter_add_range``): slots the planes
    (1, P, H, W), ih, iw (1, 1, 1, .), out (1, P, ., .)."""
    dtype = np.dtype(dtype_name).type

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 4)
        x, out = contiguous(row, 0, dtype)[0], contiguous(row, 3, dtype)[0]
        ih, iw = contiguous(row, 1, np.int64)[0, 0, 0], contiguous(row, 2, np.int64)[0, 0, 0]
        try:
            if transposed:
                _scatter_add_range(x, ih, iw, out, row[0], row[1])
            else:
                _gather_range(x, ih, iw, out, row[0], row[1])
        except Exception:
            fail(row)

    return task


# ns: serial time an output element (measured; bilinear 2x upsampling's forward 1.7)
_GATHER = Kernel(_gather_numpy, _gather_planes, _gather_threaded, ns=0.4, launch=LAUNCH_SECONDS)
_SCATTER_ADD = Kernel(_scatter_add_numpy, _scatter_add_planes, _scatter_add_threaded, ns=0.5, launch=LAUNCH_SECONDS)
_RESAMPLE = Kernel(_resample_numpy, _resample_planes, _resample_threaded, ns=1.7, launch=LAUNCH_SECONDS)
_TRANSPOSE = Kernel(_transpose_numpy, _transpose_planes, _transpose_threaded, ns=1.0, launch=LAUNCH_SECONDS)
