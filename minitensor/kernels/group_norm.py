"""Group norm's passes over an input ``x`` (N, C, L): batch norm's kernels (``batch_norm.py``) with
the statistics of each sample's groups of C / G channels instead of each channel's.

For sample n and group g (its channels c, ``M = C / G * L`` values)::

    mean[n, g], var[n, g] over the group's values      invstd = 1 / sqrt(var + eps)
    y = x * a[n, c] + b[n, c],   a = invstd[n, g] * weight[c],   b = bias[c] - mean[n, g] * a

and, with ``xhat = (x - mean) * invstd``, ``h = dy * weight`` and means over the group::

    dx = invstd * (h - mean(h) - xhat * mean(h * xhat)) = dy * A[n, c] + x * B[n, c] + C[n, c]

So each direction is one pass of sums (``batch_norm``'s row kernels, a row per sample and channel),
the per-(sample, channel) coefficients, and one pass of ``channel_affine``.  The coefficients are
(N, C) numbers, but NumPy takes a dozen calls of a few µs each to make them (as much as a pass over
a 32 x 16 x 32 x 32 input): a small numba loop makes them in one (``_forward_coefficients``,
``_backward_coefficients``, each beside its NumPy reference).

>>> x = np.array([[[1.0, 3.0], [10.0, 30.0]]])        # N = 1, C = 2, L = 2
>>> y, mean, invstd = group_norm_forward(x, 1, None, None, 0.0)
>>> mean
array([[11.]])
"""

from __future__ import annotations

import numpy as np

from . import batch_norm
from .batch_norm import channel_affine
from .runtime.dispatch import Kernel
from .runtime.jit import njit


def sample_stats(x: np.ndarray) -> tuple:
    """``(mean, var)`` of each (sample, channel) row of ``x`` (N, C, L), float64 (N, C), the variance
    biased; each row's values shifted by its first one (as ``batch_norm_stats``)."""
    n, c, length = x.shape
    if x.size == 0:
        return np.zeros((n, c)), np.ones((n, c))
    x = np.ascontiguousarray(x)
    shift = x[:, :, 0].astype(np.float64)
    sums, squares = np.zeros((n, c)), np.zeros((n, c))
    batch_norm._STATS_ROWS.on(x)(x, shift, sums, squares)
    shifted_mean = sums / length
    return shift + shifted_mean, np.maximum(squares / length - shifted_mean * shifted_mean, 0.0)


def group_norm_forward(x: np.ndarray, groups: int, weight, bias, eps: float, shape=None) -> tuple:
    """``(y, mean, invstd)``: x (N, C, L) normalised over each sample's groups of C / ``groups``
    channels, then ``* weight + bias`` per channel ((C,) or None); y shaped ``shape`` (default x's),
    mean and invstd float64 (N, groups)."""
    n, c, length = x.shape
    mean, var = sample_stats(x.reshape(n, groups, c // groups * length))
    invstd = 1.0 / np.sqrt(var + eps)
    a, b = np.empty((n, c)), np.empty((n, c))
    _FORWARD_COEFFICIENTS.on(a)(mean, invstd, _or_fill(weight, c, 1.0), _or_fill(bias, c, 0.0), a, b)
    return channel_affine(x, a, b, shape=shape), mean, invstd


def group_norm_backward(grad, x: np.ndarray, mean: np.ndarray, invstd: np.ndarray, weight, shape=None) -> tuple:
    """``(dx, dweight, dbias)`` of ``group_norm_forward`` from ``grad`` and x (N, C, L) and the float64
    mean and invstd (N, G) it used (dx shaped ``shape``, dweight and dbias float64 (C,)): one pass
    of sums (``sum(dy)``, ``sum(dy * (x - mean))`` per sample and channel), the coefficients, and
    one pass of ``channel_affine``."""
    n, c, length = x.shape
    grad = np.ascontiguousarray(grad, dtype=x.dtype).reshape(x.shape)
    sums, dots = np.zeros((n, c)), np.zeros((n, c))
    if x.size:
        channel_mean = np.repeat(mean, c // mean.shape[1], axis=1)
        batch_norm._SUMS_ROWS.on(x)(grad, np.ascontiguousarray(x), channel_mean, sums, dots)
    scale, slope, offset, dweight = np.empty((n, c)), np.empty((n, c)), np.empty((n, c)), np.empty(c)
    kernel = _BACKWARD_COEFFICIENTS.on(scale)
    kernel(sums, dots, mean, invstd, _or_fill(weight, c, 1.0), length, scale, slope, offset, dweight)
    return channel_affine(grad, scale, slope, x, offset, shape=shape), dweight, sums.sum(axis=0)


def _or_fill(values, c: int, fill: float) -> np.ndarray:
    """``values`` (C,) as float64, or C times ``fill`` where None."""
    return np.full(c, fill) if values is None else np.asarray(values, dtype=np.float64)


# ------------------------------------------------------------------ the coefficients
def _forward_coefficients_numpy(mean, invstd, weight, bias, a, b) -> None:
    """a[n, c] = invstd[n, g] * weight[c], b[n, c] = bias[c] - mean[n, g] * a[n, c], g the group of c."""
    size = a.shape[1] // mean.shape[1]
    a[...] = np.repeat(invstd, size, axis=1) * weight
    b[...] = bias - np.repeat(mean, size, axis=1) * a


@njit
def _forward_coefficients(mean, invstd, weight, bias, a, b):
    size = a.shape[1] // mean.shape[1]
    for n in range(a.shape[0]):
        for c in range(a.shape[1]):
            a[n, c] = invstd[n, c // size] * weight[c]
            b[n, c] = bias[c] - mean[n, c // size] * a[n, c]


def _backward_coefficients_numpy(sums, dots, mean, invstd, weight, length, scale, slope, offset, dweight) -> None:
    """dx = dy * scale + x * slope + offset per (sample, channel), from the sums of dy and of
    dy * (x - mean) per sample and channel (N, C) over its ``length`` values: with the group means
    ``mean_h = sum(h) / M`` and ``mean_hx = sum(h * xhat) / M`` (h = dy * weight) and
    ``k = invstd² * mean_hx``: scale = invstd * weight, slope = -k, offset = mean * k - invstd * mean_h;
    and dweight[c] = sum over n of dots * invstd."""
    n, c = sums.shape
    groups = mean.shape[1]
    size = c // groups
    count = size * length
    mean_h = (sums * weight).reshape(n, groups, size).sum(axis=2) / count
    mean_hx = (dots * weight).reshape(n, groups, size).sum(axis=2) * invstd / count
    k = invstd * invstd * mean_hx
    channel_invstd = np.repeat(invstd, size, axis=1)
    scale[...] = channel_invstd * weight
    slope[...] = -np.repeat(k, size, axis=1)
    offset[...] = np.repeat(mean * k - invstd * mean_h, size, axis=1)
    dweight[...] = (dots * channel_invstd).sum(axis=0)


@njit
def _backward_coefficients(sums, dots, mean, invstd, weight, length, scale, slope, offset, dweight):
    n_count, c_count = sums.shape
    size = c_count // mean.shape[1]
    count = size * length
    dweight[:] = 0.0
    for n in range(n_count):
        for g in range(mean.shape[1]):
            h, hx = 0.0, 0.0
            for c in range(g * size, (g + 1) * size):
                h += sums[n, c] * weight[c]
                hx += dots[n, c] * weight[c]
            s = invstd[n, g]
            k = s * s * hx * s / count
            for c in range(g * size, (g + 1) * size):
                scale[n, c] = s * weight[c]
                slope[n, c] = -k
                offset[n, c] = mean[n, g] * k - s * h / count
                dweight[c] += dots[n, c] * s


_FORWARD_COEFFICIENTS = Kernel(_forward_coefficients_numpy, _forward_coefficients)
_BACKWARD_COEFFICIENTS = Kernel(_backward_coefficients_numpy, _backward_coefficients)
