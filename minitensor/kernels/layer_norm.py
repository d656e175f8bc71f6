"""Layer norm of each row of a (rows, D) array, forward and backward; optionally fused with
the residual sum before it (``LayerNorm(x + dropout(r))``, the "add & norm" of a Transformer).

Forward, for each row ``s`` (``s = x``, or ``s = x + r * keep * scale`` when fused)::

    mean = sum(s) / D         rstd = 1 / sqrt(sum((s - mean)^2) / D + eps)
    xhat = (s - mean) * rstd  y = xhat * weight + bias

Only ``mean`` and ``rstd`` (one number per row) are saved besides ``s``;
backward recomputes ``xhat``.  With ``g = dy * weight``::

    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
    dweight = sum over rows of dy * xhat      dbias = sum over rows of dy

(and ``dr = dx * keep * scale`` for the residual).  NumPy needs about ten
passes over the array for this; a kernel makes two passes over each piece of
rows while it is in the cache: forward, the sum and the sum of squares of
``s - s[0]`` together (``_moments``, in float64), then ``y``; backward, the
row means of ``g`` and ``g * xhat`` (``_gradient_means``), then ``dx`` with
``dweight`` and ``dbias`` as float64 column sums (``_input_gradient``).  For
float32 the row reductions and the column sums stay in separate loops, and the
per-row ``1 / sqrt`` has a loop over the rows of its own: each loop vectorises
(float64 arrays take the column sums in the row sums' loop, faster for them).  A
constant row has ``s - mean = 0``: ``xhat = 0``, never NaN.

>>> x = np.array([[1.0, 2.0, 4.0]])
>>> y, mean, rstd = layer_norm_forward(x, None, None, 1e-5)
>>> y.round(3), mean, rstd.round(3)
(array([[-1.069, -0.267,  1.336]]), array([2.33333333]), array([0.802]))
"""

from __future__ import annotations

import numpy as np

from ._rows import BLOCK, add_rows, blocks, clear, piece_rows, rows_of
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange

CHUNK = 128  # elements per partial sum in s's dtype of the backward's row sums (bounds their rounding)


def _affine(weight: np.ndarray | None, bias: np.ndarray | None, d: int, dtype) -> tuple:
    """weight and bias as (D,) arrays (ones / zeros for None: one kernel serves all cases)."""
    w = np.ones(d, dtype) if weight is None else weight.reshape(d)
    b = np.zeros(d, dtype) if bias is None else bias.reshape(d)
    return w, b


# ------------------------------------------------------------------ forward
@njit(fastmath={"reassoc", "contract"}, error_model="numpy")
def _moments(x, shift, sums, squares):
    """Per row, in float64: ``shift[i] = x[i, 0]``, the sum of ``x - shift`` and the sum of its
    squares (one pass).

    Shifted by an element of the row, the variance ``squares/d - (sums/d)^2`` loses at most a
    factor ``d`` of precision to cancellation (``(x[i, 0] - mean)^2 <= d * var``), where the
    unshifted ``x^2`` would lose ``mean^2 / var`` (unbounded)."""
    for i in range(x.shape[0]):
        row = x[i]
        x0, a, b = np.float64(row[0]), 0.0, 0.0
        for j in range(row.shape[0]):
            c = np.float64(row[j]) - x0  # (in float64: as fast here as float32 sums with float64 totals)
            a += c
            b += c * c
        shift[i] = row[0]
        sums[i] = a
        squares[i] = b


@njit(error_model="numpy")
def _statistics(d, sums, squares, eps, mean, rstd):
    """mean (holding the shift) and rstd of each row from ``_moments``: a loop of its own over the
    rows, which LLVM vectorises (8 square roots and divisions at once; the "numpy" error model
    drops the zero-division test that would stop it)."""
    for i in range(mean.shape[0]):
        shifted_mean = sums[i] / d
        var = squares[i] / d - shifted_mean * shifted_mean
        mean[i] = mean[i] + shifted_mean
        rstd[i] = 1.0 / np.sqrt((0.0 if var < 0.0 else var) + eps)  # (a NaN stays NaN)


@njit(error_model="numpy")
def _normalize(s, w, b, mean, rstd, y):
    """y = (s - mean) * rstd * w + b, row by row (in s's dtype)."""
    for i in range(s.shape[0]):
        row, out, m, r = s[i], y[i], mean[i], rstd[i]
        for j in range(row.shape[0]):
            out[j] = (row[j] - m) * r * w[j] + b[j]


@njit
def _normalize_piece(s, w, b, eps, y, mean, rstd, sums, squares):
    """y of a piece of rows; mean and rstd saved (in s's dtype: the elementwise pass stays in it).
    The moments are accumulated in float64 (scratch: sums, squares)."""
    _moments(s, mean, sums, squares)
    _statistics(s.shape[1], sums, squares, eps, mean, rstd)
    _normalize(s, w, b, mean, rstd, y)


@njit
def _add_residual(x, r, keep, scale, s):
    """s = x + r, or x + r * scale where keep (a dropout mask on r)."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if keep is None:
                s[i, j] = x[i, j] + r[i, j]
            else:
                s[i, j] = x[i, j] + r[i, j] * (scale if keep[i, j] else 0.0)


@njit
def _forward_block(x, r, keep, scale, w, b, eps, s, y, mean, rstd):
    """Normalise x, or s = x + r (times scale where keep, when keep is given) into y, a piece of
    rows at a time (the second pass over a piece finds it in the cache)."""
    sums = np.empty(x.shape[0])
    squares = np.empty(x.shape[0])
    step = piece_rows(x.shape[1])
    for start in range(0, x.shape[0], step):
        p = slice(start, start + step)
        if r is None:
            _normalize_piece(x[p], w, b, eps, y[p], mean[p], rstd[p], sums[p], squares[p])
        else:
            _add_residual(x[p], r[p], rows_of(keep, start, start + step), scale, s[p])
            _normalize_piece(s[p], w, b, eps, y[p], mean[p], rstd[p], sums[p], squares[p])


@njit(parallel=True)
def _forward_parallel(x, r, keep, scale, w, b, eps, s, y, mean, rstd):
    for k in prange(blocks(x.shape[0])):
        start, stop = k * BLOCK, (k + 1) * BLOCK
        _forward_block(
            x[start:stop], rows_of(r, start, stop), rows_of(keep, start, stop), scale, w, b, eps,
            rows_of(s, start, stop), y[start:stop], mean[start:stop], rstd[start:stop],
        )  # fmt: skip


def _forward_numpy(x, r, keep, scale, w, b, eps, s, y, mean, rstd) -> None:
    with np.errstate(invalid="ignore", over="ignore"):  # (an inf or NaN gives a NaN row, as the kernel)
        if r is not None:
            np.add(x, r if keep is None else r * (keep * np.asarray(scale, r.dtype)), out=s)
            x = s
        mean[:] = x.mean(axis=1, dtype=np.float64)  # float64 sums, as the kernel: a constant row's mean is exact
        xhat = x - mean[:, None]
        rstd[:] = 1.0 / np.sqrt(np.mean(xhat * xhat, axis=1, dtype=np.float64) + eps)
        xhat *= rstd[:, None]
        np.multiply(xhat, w, out=y)
        y += b


_FORWARD = Kernel(_forward_numpy, _forward_block, _forward_parallel, ns=0.3)


def layer_norm_forward(x, weight, bias, eps: float, residual=None, keep=None, scale: float = 1.0, shape=None) -> tuple:
    """Normalise the rows of ``x`` (rows, D) (of ``x + residual``, when given).

    Args:
        x: (rows, D), C-contiguous.
        weight, bias: (D,) (any shape of D elements) or None.
        eps: added to the variance.
        residual: None, or (rows, D) added to x first.
        keep: None, or a (rows, D) bool dropout mask on ``residual`` (its kept
            elements are multiplied by ``scale``).
        shape: the shape of ``y`` (rows * D elements; default (rows, D)): the op's output shape, so
            that ``y`` is an array of its own rather than a reshaped view (a view makes the autograd
            core look for the input it might view).

    Returns:
        ``(y, mean, rstd)`` without a residual, ``(y, s, mean, rstd)`` with
        one (``s`` = the sum that was normalised).
    """
    rows, d = x.shape
    w, b = _affine(weight, bias, d, x.dtype)
    y = np.empty(x.shape if shape is None else shape, x.dtype)
    s = None if residual is None else np.empty_like(x)
    mean = np.empty(rows, x.dtype)
    rstd = np.empty(rows, x.dtype)
    _FORWARD.on(x)(x, residual, keep, x.dtype.type(scale), w, b, float(eps), s, y.reshape(rows, d), mean, rstd)
    return (y, mean, rstd) if residual is None else (y, s, mean, rstd)


# ------------------------------------------------------------------ backward
@njit(fastmath={"reassoc", "contract"}, error_model="numpy")
def _gradient_means(dy, s, mean, rstd, w, g_mean, gx_mean):
    """Per row: mean(g) and mean(g * xhat) with g = dy * w.  Summed in s's dtype on chunks of
    ``CHUNK`` elements (SIMD lanes of 16 float32, without the conversions to float64 that halve
    them), the chunks' sums added in float64: each mean is off by a few roundings of its terms,
    which dx, computed in s's dtype from g itself, cannot resolve anyway (measured: dx's largest
    error against float64 arithmetic is the same as with float64 sums, ~1e-7 of max|dx|)."""
    d = s.shape[1]
    for i in range(s.shape[0]):
        row, grow, m = s[i], dy[i], mean[i]
        total_g, total_gx = 0.0, 0.0
        for start in range(0, d, CHUNK):
            sc, gc, wc = row[start : start + CHUNK], grow[start : start + CHUNK], w[start : start + CHUNK]
            a, c = sc.dtype.type(0), sc.dtype.type(0)
            for j in range(sc.shape[0]):
                g = gc[j] * wc[j]
                a += g
                c += g * (sc[j] - m)
            total_g += a
            total_gx += c
        g_mean[i] = total_g / d
        gx_mean[i] = total_gx * rstd[i] / d


@njit(fastmath={"reassoc", "contract"}, error_model="numpy")
def _gradient_means_and_columns(dy, s, mean, rstd, w, g_mean, gx_mean, dw, db):
    """float64: the row means of ``_gradient_means``, and dy * xhat added to dw and dy to db in the
    same loop (with nothing to convert, this is faster for float64 than a column loop of its own:
    ~20% on 1.5M elements)."""
    d = s.shape[1]
    for i in range(s.shape[0]):
        row, grow, m, r = s[i], dy[i], mean[i], rstd[i]
        a, c = 0.0, 0.0
        for j in range(d):
            g = grow[j] * w[j]
            xhat = (row[j] - m) * r
            a += g
            c += g * xhat
            dw[j] += grow[j] * xhat
            db[j] += grow[j]
        g_mean[i] = a / d
        gx_mean[i] = c / d


@njit(error_model="numpy")
def _input_gradient(dy, s, mean, rstd, w, g_mean, gx_mean, dx, dw, db):
    """dx = rstd * (dy * w - mean(g) - xhat * mean(g * xhat)) row by row; unless dw is None, adds
    dy * xhat to dw and dy to db (float64 column sums: no reduction inside a row, so the loop stays
    elementwise; numba compiles the None case without them)."""
    for i in range(s.shape[0]):
        row, grow, out = s[i], dy[i], dx[i]
        m, r, a, c = mean[i], rstd[i], g_mean[i], gx_mean[i]
        for j in range(row.shape[0]):
            xhat = (row[j] - m) * r
            out[j] = r * (grow[j] * w[j] - a - xhat * c)
            if dw is not None:
                dw[j] += np.float64(grow[j] * xhat)
                db[j] += np.float64(grow[j])


@njit
def _backward_block(dy, s, mean, rstd, w, dx, dw, db):
    """dx of a block of rows, a piece of rows at a time (the second pass finds it in the cache);
    adds the block's share to the float64 accumulators dw and db: float32 in the dx loop, float64
    in the row sums' loop (whichever is faster for the dtype)."""
    rows, d = s.shape
    step = piece_rows(d)
    g_mean = np.empty(min(rows, step), s.dtype)
    gx_mean = np.empty(min(rows, step), s.dtype)
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        p, n = slice(start, stop), stop - start
        if s.itemsize == 8:
            _gradient_means_and_columns(dy[p], s[p], mean[p], rstd[p], w, g_mean[:n], gx_mean[:n], dw, db)
            _input_gradient(dy[p], s[p], mean[p], rstd[p], w, g_mean[:n], gx_mean[:n], dx[p], None, None)
        else:
            _gradient_means(dy[p], s[p], mean[p], rstd[p], w, g_mean[:n], gx_mean[:n])
            _input_gradient(dy[p], s[p], mean[p], rstd[p], w, g_mean[:n], gx_mean[:n], dx[p], dw, db)


@njit(parallel=True)
def _backward_parallel(dy, s, mean, rstd, w, dx, dw, db):
    count = blocks(s.shape[0])
    dw_parts = np.empty((count, s.shape[1]))  # partial sums per block of rows
    db_parts = np.empty((count, s.shape[1]))
    for k in prange(count):
        clear(dw_parts[k])
        clear(db_parts[k])
        start, stop = k * BLOCK, (k + 1) * BLOCK
        _backward_block(
            dy[start:stop], s[start:stop], mean[start:stop], rstd[start:stop], w, dx[start:stop],
            dw_parts[k], db_parts[k],
        )  # fmt: skip
    add_rows(dw_parts, dw)
    add_rows(db_parts, db)


def _backward_numpy(dy, s, mean, rstd, w, dx, dw, db) -> None:
    with np.errstate(invalid="ignore", over="ignore"):  # (an inf or NaN gives a NaN row, as the kernel)
        xhat = (s - mean[:, None]) * rstd[:, None]
        dw += (dy * xhat).sum(axis=0, dtype=np.float64)  # (float64 column sums, as the kernel)
        db += dy.sum(axis=0, dtype=np.float64)
        g = dy * w
        dx[:] = rstd[:, None] * (g - g.mean(axis=1, keepdims=True) - xhat * np.mean(g * xhat, axis=1, keepdims=True))


_BACKWARD = Kernel(_backward_numpy, _backward_block, _backward_parallel, ns=0.6)


def layer_norm_backward(grad, s, mean, rstd, weight) -> tuple:
    """``(dx, dweight, dbias)`` of layer norm, from d(loss)/dy ``grad`` (any shape of rows x D), the
    normalised input ``s`` (rows, D) and the saved ``mean`` and ``rstd``; dx has grad's shape (an
    array of its own: the autograd engine keeps it as a leaf's gradient without a copy), dweight
    and dbias are (D,), all in s's dtype."""
    rows, d = s.shape
    w = np.ones(d, s.dtype) if weight is None else weight.reshape(d)
    dx = np.empty(np.shape(grad), s.dtype)
    grad = np.ascontiguousarray(grad, dtype=s.dtype).reshape(rows, d)
    dw = np.zeros(d)
    db = np.zeros(d)
    _BACKWARD.on(s)(grad, s, mean, rstd, w, dx.reshape(rows, d), dw, db)
    return dx, dw.astype(s.dtype), db.astype(s.dtype)
