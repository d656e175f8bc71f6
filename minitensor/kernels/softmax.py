"""Softmax, log-softmax and logsumexp along one dim, forward and backward, fused per piece of rows.

The kernels work on a C-contiguous (rows, D) array, the dim being the last
one; ``softmax_forward`` and friends move any other dim there (a copy) and back.

Forward (``m`` the row max; a row whose max is not finite is shifted by 0,
as in NumPy, so a row of all -inf gives NaN, like PyTorch; a NaN gives a NaN row)::

    softmax:      y = exp(x - m) / sum(exp(x - m))
    log_softmax:  y = (x - m) - log(sum(exp(x - m)))
    logsumexp:    m + log(sum(exp(x - m)))     (the softmax kernel gives it on the way)

Backward, from the saved output ``y`` and the upstream gradient ``g``::

    softmax:      dx = y * (g - sum(g * y))
    log_softmax:  dx = g - exp(y) * sum(g)
    logsumexp:    dx = g * softmax(x)          (g per row)

NumPy needs four or five passes over the array for each (max, subtract,
exp, sum, divide), each through memory and each with a temporary; a kernel
makes its passes (max; exp of the shifted row, then its sum; scale) over a
*piece* of rows (``_rows.piece_rows``) while it sits in the cache, in the
array's dtype (16 SIMD lanes for float32), with the SIMD ``exp`` of
``_exp.py`` and the SIMD row max of ``_rows.py``.  The parallel versions
split the rows in blocks of 64 over threads (their ``Kernel`` takes them for
large arrays only: a launch costs ~100 µs on a small VM).  The layout (``as_rows``,
``from_rows``) is ``runtime/dispatch.py``'s.

>>> y = softmax_forward(np.array([[1.0, 2.0, 3.0]]), -1)
>>> y.round(4)
array([[0.09  , 0.2447, 0.6652]])
"""

from __future__ import annotations

import numpy as np

from ._exp import exp32, exp64, exp_rows
from ._rows import BLOCK, blocks, piece_rows, row_dot, row_nanmax, row_sum
from .runtime.dispatch import Kernel, as_rows, as_rows_shape, from_rows
from .runtime.jit import njit, prange


# ------------------------------------------------------------------ softmax forward (and logsumexp)
@njit(error_model="numpy")
def _max_and_exp(x, out, shift, total, odd):
    """For a piece of rows: ``shift`` = the row max, or 0 where it is not finite (+inf, all NaN or
    all -inf: ``odd``), ``out = exp(x - shift)`` and ``total`` its row sums (float64).  The odd
    rows are redone the slow way (their shifted values need not be <= 0).  (The max skips NaN: a
    NaN element gives exp NaN, so a NaN sum and a NaN row.)"""
    row_nanmax(x, shift)
    for i in range(x.shape[0]):
        odd[i] = not np.isfinite(shift[i])
        if odd[i]:
            shift[i] = 0
    exp_rows(x, shift, out, total)
    for i in range(x.shape[0]):
        if odd[i]:
            total[i] = 0.0
            for j in range(x.shape[1]):
                out[i, j] = np.exp(x[i, j])
                total[i] += out[i, j]


@njit(error_model="numpy")
def _softmax_piece(x, out, shift, log_total, total, odd):
    """out = softmax(x) for a piece of rows; the shift (max, or 0) and log(sum(exp(x - shift)))."""
    _max_and_exp(x, out, shift, total, odd)
    for i in range(x.shape[0]):
        log_total[i] = np.log(total[i])
        inv = out.dtype.type(1.0 / total[i])
        for j in range(x.shape[1]):
            out[i, j] *= inv


@njit(error_model="numpy")
def _softmax_block(x, out, shift, log_total):
    """``softmax_parts`` of a block of rows (on all of them: the serial kernel), a piece at a time."""
    total = np.empty(x.shape[0])  # scratch, shared by the pieces
    odd = np.empty(x.shape[0], np.bool_)
    step = piece_rows(x.shape[1])
    for start in range(0, x.shape[0], step):
        p = slice(start, start + step)
        _softmax_piece(x[p], out[p], shift[p], log_total[p], total[p], odd[p])


@njit(parallel=True, error_model="numpy")
def _softmax_parallel(x, out, shift, log_total):
    for b in prange(blocks(x.shape[0])):
        rows = slice(b * BLOCK, (b + 1) * BLOCK)
        _softmax_block(x[rows], out[rows], shift[rows], log_total[rows])


def _softmax_numpy(x: np.ndarray, out: np.ndarray, shift: np.ndarray, log_total: np.ndarray) -> None:
    m = np.fmax.reduce(x, axis=1, initial=-np.inf)  # the max skipping NaN, as the kernel; -inf for no element
    shift[:] = np.where(np.isfinite(m), m, 0)
    np.subtract(x, shift[:, None], out=out)
    np.exp(out, out=out)
    total = out.sum(axis=1, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # all -inf: log(0) = -inf, 0/0 = NaN (as the kernel)
        log_total[:] = np.log(total)
        out /= total[:, None].astype(out.dtype)


_SOFTMAX = Kernel(_softmax_numpy, _softmax_block, _softmax_parallel, ns=0.6)


def softmax_parts(x: np.ndarray) -> tuple:
    """``(p, shift, log_total)`` for the (rows, D) C-contiguous ``x``: ``p = softmax(x)`` by rows,
    ``shift`` the row max skipping NaN (0 where it is not finite) and ``log_total = log(sum(exp(x - shift)))``
    ((rows,) arrays in x's dtype): ``logsumexp(x) = shift + log_total``."""
    p = np.empty_like(x)
    shift = np.empty(x.shape[0], x.dtype)
    log_total = np.empty(x.shape[0], x.dtype)
    _SOFTMAX.rows(x, p, shift, log_total)
    return p, shift, log_total


def softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    """softmax(x) along ``dim``, in x's dtype."""
    rows, moved_shape = as_rows(x, dim)
    return from_rows(softmax_parts(rows)[0], moved_shape, dim, x)


def logsumexp_forward(x: np.ndarray, dim: int) -> tuple:
    """``(logsumexp(x) along dim, p)``: the first with ``dim`` removed, ``p`` = softmax(x) along
    ``dim`` as (rows, D) (``as_rows``), the state of ``logsumexp_backward``."""
    rows, moved_shape = as_rows(x, dim)
    p, shift, log_total = softmax_parts(rows)
    return (shift + log_total).reshape(moved_shape[:-1]), p


def logsumexp_backward(p: np.ndarray, grad: np.ndarray, dim: int, like: np.ndarray) -> np.ndarray:
    """d(loss)/dx = grad * softmax(x) of logsumexp along ``dim``, from ``p`` of ``logsumexp_forward``
    and d(loss)/d(logsumexp) ``grad`` (``dim`` removed or kept), in the layout of ``like`` (x)."""
    return from_rows(scaled_rows(p, np.reshape(grad, -1)), as_rows_shape(like, dim), dim, like)


# ------------------------------------------------------------------ rows scaled (and a one-hot taken off)
@njit
def _scaled_rows(p, scale, index, at, out):
    for i in range(p.shape[0]):
        c, ps, o = out.dtype.type(scale[i]), p[i], out[i]
        for j in range(ps.size):
            o[j] = ps[j] * c
        if index is not None:
            o[index[i]] -= at[i]


def _scaled_rows_numpy(p, scale, index, at, out) -> None:
    np.multiply(p, scale[:, None], out=out)
    if index is not None:
        out[np.arange(p.shape[0]), index] -= at


_SCALED_ROWS = Kernel(_scaled_rows_numpy, _scaled_rows, ns=0.1)


def scaled_rows(p: np.ndarray, scale: np.ndarray, index: np.ndarray | None = None, at=None) -> np.ndarray:
    """``p * scale[:, None]`` for the (rows, D) ``p`` and (rows,) ``scale``; with ``index`` (rows,)
    and ``at`` (rows,), ``at[i]`` is then taken off column ``index[i]`` of each row: cross-entropy's
    ``(softmax - onehot) * scale``.  (NumPy's product with a broadcast column is 2x slower.)"""
    out = np.empty_like(p)
    _SCALED_ROWS.on(p)(p, scale, index, at, out)
    return out


# ------------------------------------------------------------------ softmax backward
@njit
def _softmax_backward_piece(y, g, dx, dots):
    row_dot(g, y, dots)
    for i in range(y.shape[0]):
        d = y.dtype.type(dots[i])  # (the elementwise pass in y's dtype)
        for j in range(y.shape[1]):
            dx[i, j] = y[i, j] * (g[i, j] - d)


@njit
def _softmax_backward_block(y, g, dx):
    """dx = y * (g - rowsum(g * y)) on a block of rows, a piece at a time."""
    dots = np.empty(y.shape[0])
    step = piece_rows(y.shape[1])
    for start in range(0, y.shape[0], step):
        p = slice(start, start + step)
        _softmax_backward_piece(y[p], g[p], dx[p], dots[p])


@njit(parallel=True)
def _softmax_backward_parallel(y, g, dx):
    for b in prange(blocks(y.shape[0])):
        rows = slice(b * BLOCK, (b + 1) * BLOCK)
        _softmax_backward_block(y[rows], g[rows], dx[rows])


def _softmax_backward_numpy(y: np.ndarray, g: np.ndarray, dx: np.ndarray) -> None:
    np.multiply(g, y, out=dx)
    s = dx.sum(axis=1, keepdims=True)
    np.subtract(g, s, out=dx)
    dx *= y


_SOFTMAX_BACKWARD = Kernel(_softmax_backward_numpy, _softmax_backward_block, _softmax_backward_parallel, ns=0.27)


def softmax_backward(y: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    """d(loss)/dx from the softmax output ``y`` and d(loss)/dy ``grad``."""
    return _SOFTMAX_BACKWARD.along(y, dim, grad)


# ------------------------------------------------------------------ log-softmax forward
@njit(error_model="numpy")
def _log_softmax_piece(x, out, e, shift, total, odd):
    """out = log_softmax(x) for a piece of rows (``e``: scratch for exp(x - max))."""
    _max_and_exp(x, e, shift, total, odd)
    for i in range(x.shape[0]):
        s, log_total = shift[i], out.dtype.type(np.log(total[i]))
        for j in range(x.shape[1]):
            out[i, j] = (x[i, j] - s) - log_total


@njit(error_model="numpy")
def _log_softmax_block(x, out):
    """out = log_softmax(x) on a block of rows, a piece at a time."""
    rows, n = x.shape
    step = piece_rows(n)
    e = np.empty((min(step, rows), n), x.dtype)  # scratch, shared by the pieces
    shift = np.empty(rows, x.dtype)
    total = np.empty(rows)
    odd = np.empty(rows, np.bool_)
    for start in range(0, rows, step):
        p = slice(start, start + step)
        m = min(step, rows - start)
        _log_softmax_piece(x[p], out[p], e[:m], shift[p], total[p], odd[p])


@njit(parallel=True, error_model="numpy")
def _log_softmax_parallel(x, out):
    for b in prange(blocks(x.shape[0])):
        _log_softmax_block(x[b * BLOCK : (b + 1) * BLOCK], out[b * BLOCK : (b + 1) * BLOCK])


def _log_softmax_numpy(x: np.ndarray, out: np.ndarray) -> None:
    m = np.max(x, axis=1, keepdims=True, initial=-np.inf)
    np.subtract(x, np.where(np.isfinite(m), m, 0), out=out)
    if x.shape[1]:  # (the log of an empty sum would warn)
        out -= np.log(np.sum(np.exp(out), axis=1, keepdims=True))


_LOG_SOFTMAX = Kernel(_log_softmax_numpy, _log_softmax_block, _log_softmax_parallel, ns=0.62)


def log_softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    """log(softmax(x)) along ``dim``, in x's dtype."""
    return _LOG_SOFTMAX.along(x, dim)


# ------------------------------------------------------------------ log-softmax backward
@njit(fastmath={"contract"}, error_model="numpy")
def _log_softmax_backward_piece(y, g, dx, total):
    """dx = g - exp(y) * sum(g) for a piece of rows (exp(y) = softmax, y <= 0: the SIMD exp, inline)."""
    row_sum(g, total)
    for i in range(y.shape[0]):
        t, ys, gs, out = y.dtype.type(total[i]), y[i], g[i], dx[i]
        if y.itemsize == 4:
            for j in range(ys.size):
                out[j] = gs[j] - exp32(ys[j]) * t
        else:
            for j in range(ys.size):
                out[j] = gs[j] - exp64(ys[j]) * t


@njit
def _log_softmax_backward_block(y, g, dx):
    """dx = g - exp(y) * rowsum(g) on a block of rows, a piece at a time."""
    total = np.empty(y.shape[0])
    step = piece_rows(y.shape[1])
    for start in range(0, y.shape[0], step):
        p = slice(start, start + step)
        _log_softmax_backward_piece(y[p], g[p], dx[p], total[p])


@njit(parallel=True)
def _log_softmax_backward_parallel(y, g, dx):
    for b in prange(blocks(y.shape[0])):
        rows = slice(b * BLOCK, (b + 1) * BLOCK)
        _log_softmax_backward_block(y[rows], g[rows], dx[rows])


def _log_softmax_backward_numpy(y: np.ndarray, g: np.ndarray, dx: np.ndarray) -> None:
    np.exp(y, out=dx)
    dx *= g.sum(axis=1, keepdims=True)
    np.subtract(g, dx, out=dx)


_LOG_SOFTMAX_BACKWARD = Kernel(
    _log_softmax_backward_numpy, _log_softmax_backward_block, _log_softmax_backward_parallel, ns=0.45
)


def log_softmax_backward(y: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    """d(loss)/dx from the log-softmax output ``y`` and d(loss)/dy ``grad``."""
    return _LOG_SOFTMAX_BACKWARD.along(y, dim, grad)
