"""RMS norm of each row of a (rows, D) array, forward and backward (no centring, no bias)::

    rstd = 1 / sqrt(sum(x^2) / D + eps)        y = x * rstd * weight

Only ``rstd`` (one number per row) is saved besides x.  Backward, with ``g = dy * weight``
(``rstd`` depends on every x of the row: d rstd / d x_j = -rstd^3 x_j / D)::

    dx = rstd * (g - x * rstd^2 * mean(g * x))      dweight = sum over rows of dy * x * rstd

The composite (``x * rsqrt(mean(x * x) + eps) * weight``) takes about twelve passes over the array,
forward and backward, each with a temporary; a kernel takes two passes over each piece of rows
while it is in the cache (``_rows.piece_rows``): the sum of squares (float64), then y; backward,
the row sums of ``g * x`` (float64), then dx, with dweight as float64 column sums.  The parallel
kernels split the rows in blocks of ``BLOCK`` over the threads (each block its own column sums,
added at the end).

>>> y, rstd = rms_norm_forward(np.array([[3.0, -3.0], [1.0, 7.0]]), None, 0.0)
>>> y.round(12).tolist(), rstd.round(12).tolist()
([[1.0, -1.0], [0.2, 1.4]], [0.333333333333, 0.2])
"""

from __future__ import annotations

import numpy as np

from ._rows import BLOCK, add_rows, blocks, clear, piece_rows
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


def _weight_row(weight, d: int, dtype) -> np.ndarray:
    """weight as a contiguous (D,) row in x's dtype; ones for None (one kernel serves both cases)."""
    return np.ones(d, dtype) if weight is None else np.ascontiguousarray(weight.reshape(d), dtype=dtype)


# ------------------------------------------------------------------ forward
@njit(fastmath={"reassoc", "contract"}, error_model="numpy")
def _reciprocal_rms(x, eps, rstd):
    """rstd[i] = 1 / sqrt(sum(x[i]^2) / D + eps), the squares summed in float64."""
    d = x.shape[1]
    for i in range(x.shape[0]):
        row, total = x[i], 0.0
        for j in range(d):
            v = np.float64(row[j])
            total += v * v
        rstd[i] = 1.0 / np.sqrt(total / d + eps)


@njit(error_model="numpy")
def _scale_rows(x, w, rstd, y):
    """y[i] = x[i] * rstd[i] * w, in x's dtype."""
    for i in range(x.shape[0]):
        row, out, r = x[i], y[i], x.dtype.type(rstd[i])
        for j in range(x.shape[1]):
            out[j] = row[j] * r * w[j]


@njit
def _forward_block(x, w, eps, y, rstd):
    step = piece_rows(x.shape[1])
    for start in range(0, x.shape[0], step):
        p = slice(start, min(x.shape[0], start + step))
        _reciprocal_rms(x[p], eps, rstd[p])
        _scale_rows(x[p], w, rstd[p], y[p])


@njit(parallel=True)
def _forward_parallel(x, w, eps, y, rstd):
    for k in prange(blocks(x.shape[0])):
        p = slice(k * BLOCK, (k + 1) * BLOCK)
        _forward_block(x[p], w, eps, y[p], rstd[p])


def _forward_numpy(x, w, eps, y, rstd) -> None:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rstd[:] = 1.0 / np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float64) / x.shape[1] + eps)
        y[:] = x * rstd[:, None].astype(x.dtype) * w


_FORWARD = Kernel(_forward_numpy, _forward_block, _forward_parallel, ns=0.3)


def rms_norm_forward(x: np.ndarray, weight, eps: float, shape=None) -> tuple:
    """``(y, rstd)``: each row of x (rows, D) divided by its root mean square (+ eps inside the root)
    and scaled by weight (D,) (or None); y in x's dtype shaped ``shape`` (default x's), rstd float64
    (rows,)."""
    rows, d = x.shape
    x = np.ascontiguousarray(x)
    w = _weight_row(weight, d, x.dtype)
    y, rstd = np.empty(x.shape if shape is None else shape, x.dtype), np.empty(rows)
    if x.size:
        _FORWARD.on(x)(x, w, float(eps), y.reshape(rows, d), rstd)
    return y, rstd


# ------------------------------------------------------------------ backward
@njit(fastmath={"reassoc", "contract"}, error_model="numpy")
def _row_slopes(dy, x, w, rstd, slope):
    """slope[i] = rstd^3 * mean(dy * w * x) over row i (float64 sums): what x[i] is taken off dx."""
    d = x.shape[1]
    for i in range(x.shape[0]):
        grow, row, total = dy[i], x[i], 0.0
        for j in range(d):
            total += np.float64(grow[j] * w[j]) * np.float64(row[j])
        r = rstd[i]
        slope[i] = r * r * r * total / d


@njit(error_model="numpy")
def _input_gradient(dy, x, w, rstd, slope, dx, dw):
    """dx = rstd * dy * w - x * slope row by row; dy * x * rstd added to the float64 column sums dw."""
    for i in range(x.shape[0]):
        grow, row, out = dy[i], x[i], dx[i]
        r, s = x.dtype.type(rstd[i]), x.dtype.type(slope[i])
        for j in range(x.shape[1]):
            out[j] = r * grow[j] * w[j] - row[j] * s
            dw[j] += np.float64(grow[j] * row[j] * r)


@njit
def _backward_block(dy, x, w, rstd, dx, dw):
    rows, d = x.shape
    step = piece_rows(d)
    slope = np.empty(min(rows, step))
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        p = slice(start, stop)
        _row_slopes(dy[p], x[p], w, rstd[p], slope[: stop - start])
        _input_gradient(dy[p], x[p], w, rstd[p], slope[: stop - start], dx[p], dw)


@njit(parallel=True)
def _backward_parallel(dy, x, w, rstd, dx, dw):
    count = blocks(x.shape[0])
    parts = np.empty((count, x.shape[1]))  # each block's column sums
    for k in prange(count):
        clear(parts[k])
        p = slice(k * BLOCK, (k + 1) * BLOCK)
        _backward_block(dy[p], x[p], w, rstd[p], dx[p], parts[k])
    add_rows(parts, dw)


def _backward_numpy(dy, x, w, rstd, dx, dw) -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        r = rstd[:, None]
        dot = np.einsum("ij,ij->i", (dy * w).astype(np.float64), x.astype(np.float64))
        slope = (rstd**3 * dot / x.shape[1])[:, None]
        dx[:] = r.astype(x.dtype) * dy * w - x * slope.astype(x.dtype)
        dw += (dy * x * r.astype(x.dtype)).sum(axis=0, dtype=np.float64)


_BACKWARD = Kernel(_backward_numpy, _backward_block, _backward_parallel, ns=0.5)


def rms_norm_backward(grad, x: np.ndarray, rstd: np.ndarray, weight) -> tuple:
    """``(dx, dweight)`` of ``rms_norm_forward`` from d(loss)/dy ``grad`` (any shape of rows x D), x
    (rows, D) and the saved rstd: dx of grad's shape (an array of its own), dweight (D,), both in
    x's dtype."""
    rows, d = x.shape
    x = np.ascontiguousarray(x)
    w = _weight_row(weight, d, x.dtype)
    dx, dw = np.empty(np.shape(grad), x.dtype), np.zeros(d)
    if x.size:
        dy = np.ascontiguousarray(grad, dtype=x.dtype).reshape(rows, d)
        _BACKWARD.on(x)(dy, x, w, rstd, dx.reshape(rows, d), dw)
    return dx, dw.astype(x.dtype)
