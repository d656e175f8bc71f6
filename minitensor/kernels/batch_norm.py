"""Batch norm's passes over an input ``x`` (N, C, L): the statistics of each channel, the
normalisation, and the backward.  (Every batch norm reaches them with its spatial dims merged
into L; ``BatchNorm1d`` on (N, C) has L = 1.)

Each channel ``c`` is normalised over its ``M = N * L`` values::

    mean = sum(x) / M          var = sum((x - mean)^2) / M  (biased)     invstd = 1 / sqrt(var + eps)
    y = (x - mean) * invstd * weight + bias = x * a + b,   a = invstd * weight,  b = bias - mean * a

Backward, with ``xhat = (x - mean) * invstd`` and sums over the channel's M values::

    dbias = sum(dy)      dweight = sum(dy * xhat) = invstd * sum(dy * (x - mean))
    dx = (dy - dbias / M - xhat * dweight / M) * invstd * weight     (training: the statistics
         depend on x)
    dx = dy * invstd * weight                                          (evaluation: they do not)

so both ``y`` and ``dx`` are one pass of a per-channel affine map, ``y = x * a + b`` and
``dx = dy * A + x * B + C`` with per-channel coefficients computed in float64 from the sums.
PyTorch's CPU kernels use the same ``x * a + b`` form.  The sums are accumulated in float64, each
channel's values shifted by one of them (``x[0, c, 0]`` for the statistics, the mean for the
backward), so the variance does not lose its digits to ``mean^2`` cancelling.

Two layouts of the loops: with L > 1 each (n, c) is a row of L values (``_rows`` kernels); with
L = 1 the C channels of a sample are one row (``_columns`` kernels), so the inner loop runs over
the channels and vectorises.  The parallel kernels split the samples (N) between the threads.

>>> x = np.array([[[1.0, 3.0]], [[5.0, 7.0]]])          # N = 2, C = 1, L = 2
>>> mean, var = batch_norm_stats(x)
>>> mean, var
(array([4.]), array([5.]))
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange

SAMPLES = 64  # samples per block of partial sums in the L = 1 layout (a parallel task each)


def _layout(x: np.ndarray) -> np.ndarray:
    """x (N, C, L) as the kernels see it: (N, C, L) rows for L > 1, (N, C) for L = 1 (contiguous)."""
    x = np.ascontiguousarray(x)
    return x.reshape(x.shape[:2]) if x.shape[2] == 1 else x


# ------------------------------------------------------------------ statistics
def batch_norm_stats(x: np.ndarray) -> tuple:
    """``(mean, var)`` of each channel of ``x`` (N, C, L), float64 (C,), the variance biased."""
    n, c, length = x.shape
    shift = x[0, :, 0].astype(np.float64) if n and length else np.zeros(c)
    sums, squares = _partial_sums(x), _partial_sums(x)
    if x.size:
        kernel, shifts = (_STATS_ROWS, shift[None]) if length > 1 else (_STATS_COLUMNS, shift)
        kernel.on(x)(_layout(x), shifts, sums, squares)
    count = n * length
    shifted_mean = sums.sum(axis=0) / count
    var = np.maximum(squares.sum(axis=0) / count - shifted_mean * shifted_mean, 0.0)
    return shift + shifted_mean, var


def _partial_sums(x: np.ndarray) -> np.ndarray:
    """Zeros for the float64 partial sums of each channel that the kernels add to: one row per
    sample with L > 1, one per block of ``SAMPLES`` samples with L = 1 (rows summed afterwards)."""
    n, c, length = x.shape
    return np.zeros((n if length > 1 else -(-n // SAMPLES), c))


def _stats_numpy(x, shift, sums, squares) -> None:
    if x.ndim == 2:  # (the columns layout: all of it in the first partial sum)
        d = x - shift
        sums[0], squares[0] = d.sum(axis=0, dtype=np.float64), (d * d).sum(axis=0, dtype=np.float64)
        return
    d = x - shift[:, :, None]  # (the rows layout: a shift per channel, or per sample and channel)
    sums[...] = d.sum(axis=2, dtype=np.float64)
    squares[...] = (d * d).sum(axis=2, dtype=np.float64)


@njit(fastmath={"reassoc", "contract"})
def _stats_sample_rows(x, shift, sums, squares):
    """One sample (C, L): per channel, the sum of x - shift and of its square (float64)."""
    for c in range(x.shape[0]):
        row, s = x[c], shift[c]
        a, b = 0.0, 0.0
        for j in range(row.shape[0]):
            d = np.float64(row[j]) - s
            a += d
            b += d * d
        sums[c] = a
        squares[c] = b


@njit
def _stats_rows(x, shift, sums, squares):
    for n in range(x.shape[0]):
        _stats_sample_rows(x[n], _sample(shift, n), sums[n], squares[n])


@njit(parallel=True)
def _stats_rows_parallel(x, shift, sums, squares):
    for n in prange(x.shape[0]):
        _stats_sample_rows(x[n], _sample(shift, n), sums[n], squares[n])


@njit(inline="always")
def _sample(coefficients, n):
    """Sample n's row of per-channel ``coefficients`` (S, C): one row for every sample (S = 1), or a
    row per sample."""
    return coefficients[np.int64(n) if coefficients.shape[0] > 1 else np.int64(0)]  # (prange's n: unsigned)


@njit
def _stats_block_columns(x, shift, sums, squares):
    """A block of samples (S, C): their contributions added to each channel's sums (float64)."""
    for n in range(x.shape[0]):
        row = x[n]
        for c in range(row.shape[0]):
            d = np.float64(row[c]) - shift[c]
            sums[c] += d
            squares[c] += d * d


@njit
def _stats_columns(x, shift, sums, squares):
    for k in range(sums.shape[0]):
        _stats_block_columns(x[k * SAMPLES : (k + 1) * SAMPLES], shift, sums[k], squares[k])


@njit(parallel=True)
def _stats_columns_parallel(x, shift, sums, squares):
    for k in prange(sums.shape[0]):
        _stats_block_columns(x[k * SAMPLES : (k + 1) * SAMPLES], shift, sums[k], squares[k])


_STATS_ROWS = Kernel(_stats_numpy, _stats_rows, _stats_rows_parallel, ns=0.4)
_STATS_COLUMNS = Kernel(_stats_numpy, _stats_columns, _stats_columns_parallel, ns=0.6)


# ------------------------------------------------------------------ y = x * a + b per channel
def channel_affine(x: np.ndarray, a: np.ndarray, b: np.ndarray, other=None, c=None, shape=None) -> np.ndarray:
    """``x * a[c] + b[c]`` per channel of ``x`` (N, C, L), or, given ``other`` (x's shape) and ``c``,
    ``x * a[c] + other * b[c] + c[c]``: a new array of x's dtype (the coefficients are cast to it)
    and shape, or ``shape`` (as many elements: the op's (N, C, H, W), so that the result is an array
    of its own, not a reshaped view, which the engine would copy as a leaf's first gradient).  The
    coefficients are (C,), or (N, C): one per sample and channel (group norm's)."""
    dtype = x.dtype
    result = np.empty(x.shape if shape is None else shape, dtype)
    a, b = _per_sample(a, dtype), _per_sample(b, dtype)
    view = _layout(result.reshape(x.shape))
    if other is None:
        _AFFINE.on(x)(_layout(x), a, b, view)
    else:
        _AFFINE2.on(x)(_layout(x), _layout(other.astype(dtype, copy=False)), a, b, _per_sample(c, dtype), view)
    return result


def _per_sample(coefficients: np.ndarray, dtype) -> np.ndarray:
    """(C,) or (N, C) coefficients as the (S, C) rows the kernels read, in ``dtype``."""
    return np.ascontiguousarray(coefficients.reshape(-1, coefficients.shape[-1]), dtype=dtype)


def _affine_numpy(x, a, b, out) -> None:
    shape = a.shape + (1,) * (x.ndim - 2)  # (S, C), broadcast over the samples (S = 1) and L
    np.multiply(x, a.reshape(shape), out=out)
    out += b.reshape(shape)


def _affine2_numpy(x, y, a, b, c, out) -> None:
    shape = a.shape + (1,) * (x.ndim - 2)
    np.multiply(x, a.reshape(shape), out=out)
    out += y * b.reshape(shape) + c.reshape(shape)


@njit
def _affine_sample(x, a, b, out):
    """One sample: (C, L) rows, or (C,) when L = 1."""
    if x.ndim == 1:
        for c in range(x.shape[0]):
            out[c] = x[c] * a[c] + b[c]
    else:
        for c in range(x.shape[0]):
            row, dst, ac, bc = x[c], out[c], a[c], b[c]
            for j in range(row.shape[0]):
                dst[j] = row[j] * ac + bc


@njit
def _affine(x, a, b, out):
    for n in range(x.shape[0]):
        _affine_sample(x[n], _sample(a, n), _sample(b, n), out[n])


@njit(parallel=True)
def _affine_parallel(x, a, b, out):
    for n in prange(x.shape[0]):
        _affine_sample(x[n], _sample(a, n), _sample(b, n), out[n])


@njit
def _affine2_sample(x, y, a, b, c, out):
    if x.ndim == 1:
        for k in range(x.shape[0]):
            out[k] = x[k] * a[k] + y[k] * b[k] + c[k]
    else:
        for k in range(x.shape[0]):
            xr, yr, dst, ak, bk, ck = x[k], y[k], out[k], a[k], b[k], c[k]
            for j in range(xr.shape[0]):
                dst[j] = xr[j] * ak + yr[j] * bk + ck


@njit
def _affine2(x, y, a, b, c, out):
    for n in range(x.shape[0]):
        _affine2_sample(x[n], y[n], _sample(a, n), _sample(b, n), _sample(c, n), out[n])


@njit(parallel=True)
def _affine2_parallel(x, y, a, b, c, out):
    for n in prange(x.shape[0]):
        _affine2_sample(x[n], y[n], _sample(a, n), _sample(b, n), _sample(c, n), out[n])


_AFFINE = Kernel(_affine_numpy, _affine, _affine_parallel, ns=0.3)
_AFFINE2 = Kernel(_affine2_numpy, _affine2, _affine2_parallel, ns=0.4)


def batch_norm_forward(x: np.ndarray, mean: np.ndarray, invstd: np.ndarray, weight, bias, shape=None) -> np.ndarray:
    """y = (x - mean) * invstd * weight + bias per channel of x (N, C, L); mean and invstd (C,)
    float64, weight and bias (C,) or None; y shaped ``shape`` (default x's: ``channel_affine``)."""
    a = invstd if weight is None else invstd * weight
    b = -mean * a if bias is None else bias - mean * a
    return channel_affine(x, a, b, shape=shape)


# ------------------------------------------------------------------ backward
def batch_norm_backward(grad, x, mean, invstd, weight, training: bool, shape=None) -> tuple:
    """``(dx, dweight, dbias)`` of ``batch_norm_forward``, from ``grad`` and ``x`` (N, C, L), the
    float64 ``mean`` and ``invstd`` (C,) it used and ``weight`` (C,) or None; ``training``: the
    statistics were x's own.  dx in x's dtype, shaped ``shape`` (default x's), dweight and dbias
    float64 (C,)."""
    n, c, length = x.shape
    grad = np.ascontiguousarray(grad, dtype=x.dtype).reshape(x.shape)
    sums, dots = _partial_sums(x), _partial_sums(x)
    if x.size:
        kernel, means = (_SUMS_ROWS, mean[None]) if length > 1 else (_SUMS_COLUMNS, mean)
        kernel.on(x)(_layout(grad), _layout(x), means, sums, dots)
    dbias, dot = sums.sum(axis=0), dots.sum(axis=0)
    dweight = dot * invstd
    scale = invstd if weight is None else invstd * weight
    if not training:
        return channel_affine(grad, scale, np.zeros(c), shape=shape), dweight, dbias
    count = n * length
    k = dot * invstd * invstd / count  # the slope of (x - mean) in dx, before the scale
    dx = channel_affine(grad, scale, -k * scale, x, (mean * k - dbias / count) * scale, shape=shape)
    return dx, dweight, dbias


def _sums_numpy(g, x, mean, sums, dots) -> None:
    if x.ndim == 2:
        sums[0], dots[0] = g.sum(axis=0, dtype=np.float64), (g * (x - mean)).sum(axis=0, dtype=np.float64)
        return
    sums[...] = g.sum(axis=2, dtype=np.float64)
    dots[...] = (g * (x - mean[:, :, None])).sum(axis=2, dtype=np.float64)  # (a mean per channel, or per sample too)


@njit(fastmath={"reassoc", "contract"})
def _sums_sample_rows(g, x, mean, sums, dots):
    for c in range(x.shape[0]):
        grow, xrow, m = g[c], x[c], mean[c]
        a, b = 0.0, 0.0
        for j in range(xrow.shape[0]):
            gj = np.float64(grow[j])
            a += gj
            b += gj * (np.float64(xrow[j]) - m)
        sums[c] = a
        dots[c] = b


@njit
def _sums_rows(g, x, mean, sums, dots):
    for n in range(x.shape[0]):
        _sums_sample_rows(g[n], x[n], _sample(mean, n), sums[n], dots[n])


@njit(parallel=True)
def _sums_rows_parallel(g, x, mean, sums, dots):
    for n in prange(x.shape[0]):
        _sums_sample_rows(g[n], x[n], _sample(mean, n), sums[n], dots[n])


@njit
def _sums_block_columns(g, x, mean, sums, dots):
    for n in range(x.shape[0]):
        grow, xrow = g[n], x[n]
        for c in range(xrow.shape[0]):
            gc = np.float64(grow[c])
            sums[c] += gc
            dots[c] += gc * (np.float64(xrow[c]) - mean[c])


@njit
def _sums_columns(g, x, mean, sums, dots):
    for k in range(sums.shape[0]):
        part = slice(k * SAMPLES, (k + 1) * SAMPLES)
        _sums_block_columns(g[part], x[part], mean, sums[k], dots[k])


@njit(parallel=True)
def _sums_columns_parallel(g, x, mean, sums, dots):
    for k in prange(sums.shape[0]):
        part = slice(k * SAMPLES, (k + 1) * SAMPLES)
        _sums_block_columns(g[part], x[part], mean, sums[k], dots[k])


_SUMS_ROWS = Kernel(_sums_numpy, _sums_rows, _sums_rows_parallel, ns=0.4)
_SUMS_COLUMNS = Kernel(_sums_numpy, _sums_columns, _sums_columns_parallel, ns=0.6)
