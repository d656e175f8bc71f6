"""ReLU and GELU (exact and tanh) of a (rows, N) array, forward and backward, fused with what
sits around them after a matrix product: the bias before and the dropout after::

    pre = z + bias                       (z: the GEMM output x @ Wᵀ; bias may be None)
    out = act(pre) * keep * scale        (keep: a bool dropout mask, or None for no dropout)

Backward, from ``g`` = d(loss)/d(out), returns ``dpre = g * keep * scale * act'(pre)`` and,
in the same pass, ``dbias`` = the column sums of dpre (float64 accumulators).

- ReLU: ``act'(pre) = [out > 0]``, so only ``out`` is saved (it can overwrite z).
- exact GELU: ``act(x) = x * Phi(x)``, ``Phi(x) = (1 + erf(x / sqrt 2)) / 2``,
  ``act'(x) = Phi(x) + x * phi(x)``;
- tanh GELU: ``act(x) = x/2 * (1 + t)``, ``t = tanh(sqrt(2/pi) * (x + 0.044715 x^3))``,
  ``act'(x) = (1 + t)/2 + x/2 * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2)``;
  beyond |x| = 50, t is exactly ±1, so u is computed from x clipped to [-50, 50]
  (x^3 cannot overflow and the second term is 0, not 0 * inf).

One pass instead of NumPy's three to twelve; numba's ``math.erf`` and ``math.tanh`` are
scalar calls (~10 ns), still 3-4x faster than the NumPy formulas.

>>> pre = np.array([[-1.0, 0.0, 2.0]])
>>> relu_forward(pre.copy(), None, None, 1.0)
array([[0., 0., 2.]])
>>> gelu_forward(pre, None, None, 1.0, approximate="none")[1].round(4)
array([[-0.1587,  0.    ,  1.9545]])
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._exp import exp_inplace
from ._rows import BLOCK, add_rows, blocks, clear, rows_of
from .erf import erf32, erf_numpy
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange

_SQRT_HALF = 0.70710678118654752440
_INV_SQRT_2PI = 0.39894228040143267794
_SQRT_2_OVER_PI = 0.79788456080286535588
_CUBIC = 0.044715
_TANH_CLIP = 50.0
# Serial ns per element (the ``Kernel``'s ``ns``), measured at 2^17 float32: the tanh form and both backward
# passes are mostly their exp (``_exp.py``).
_GELU_NS, _GELU_TANH_NS, _GELU_BACKWARD_NS = 0.4, 0.55, 0.8


# ------------------------------------------------------------------ ReLU
@njit
def _relu_block(z, b, keep, scale):
    """z = relu(z + b) * keep * scale in place, on a block of rows (on all of them: the serial kernel)."""
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            v = z[i, j] if b is None else z[i, j] + b[j]
            v = 0.0 if v < 0 else v  # (NaN stays NaN, as np.maximum)
            if keep is not None:
                v = v * (scale if keep[i, j] else 0.0)  # (NaN * 0 stays NaN, as in NumPy)
            z[i, j] = v


@njit(parallel=True)
def _relu_parallel(z, b, keep, scale):
    for k in prange(blocks(z.shape[0])):
        start, stop = k * BLOCK, (k + 1) * BLOCK
        _relu_block(z[start:stop], b, rows_of(keep, start, stop), scale)


def _relu_numpy(z, b, keep, scale) -> None:
    if b is not None:
        z += b
    np.maximum(z, 0, out=z)
    if keep is not None:
        z *= keep
        z *= scale


_RELU = Kernel(_relu_numpy, _relu_block, _relu_parallel, ns=0.1)


def relu_forward(z: np.ndarray, bias, keep, scale: float) -> np.ndarray:
    """relu(z + bias) * keep * scale, written over ``z`` (rows, N) and returned."""
    _RELU.on(z)(z, bias, keep, z.dtype.type(scale))
    return z


@njit
def _relu_backward_block(out, g, scale, dpre, db):
    """dpre = g * scale where out > 0, else 0, on a block of rows; db (or None) += its column sums."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            d = g[i, j] * scale if out[i, j] > 0 else 0.0
            dpre[i, j] = d
            if db is not None:
                db[j] += d


@njit(parallel=True)
def _relu_backward_parallel(out, g, scale, dpre, db):
    count = blocks(out.shape[0])
    parts = np.empty((count, out.shape[1]))  # a partial dbias per block of rows
    for k in prange(count):
        clear(parts[k])
        start, stop = k * BLOCK, (k + 1) * BLOCK
        _relu_backward_block(out[start:stop], g[start:stop], scale, dpre[start:stop], parts[k])
    if db is not None:
        add_rows(parts, db)


def _relu_backward_numpy(out, g, scale, dpre, db) -> None:
    np.multiply(g, out > 0, out=dpre)
    if scale != 1:
        dpre *= scale
    if db is not None:
        db += dpre.sum(axis=0)


_RELU_BACKWARD = Kernel(_relu_backward_numpy, _relu_backward_block, _relu_backward_parallel, ns=0.2)


def relu_backward(out: np.ndarray, grad: np.ndarray, scale: float, need_bias: bool = True) -> tuple:
    """(dpre, dbias) from the saved ``out`` = relu(pre) * keep * scale and d(loss)/d(out) ``grad``
    (dbias is None unless ``need_bias``)."""
    grad = np.ascontiguousarray(grad, dtype=out.dtype).reshape(out.shape)
    dpre = np.empty_like(out)
    db = np.zeros(out.shape[1]) if need_bias else None
    _RELU_BACKWARD.on(out)(out, grad, out.dtype.type(scale), dpre, db)
    return dpre, None if db is None else db.astype(out.dtype)


# ------------------------------------------------------------------ GELU
class _Consts(NamedTuple):
    """The GELU constants in the rows' dtype (``_gelu_consts``)."""

    zero: float
    half: float
    one: float
    three: float
    sqrt_half: float
    inv_sqrt_2pi: float
    sqrt_2_over_pi: float
    cubic: float
    tanh_clip: float


_VALUES = np.array((0.0, 0.5, 1.0, 3.0, _SQRT_HALF, _INV_SQRT_2PI, _SQRT_2_OVER_PI, _CUBIC, _TANH_CLIP))


@njit(inline="always")
def _gelu_consts(like):
    """The constants as scalars of the dtype of the array ``like``: float32 rows then compute in
    float32 (16 SIMD lanes; a Python float would make the arithmetic float64, 8 lanes)."""
    c = _VALUES.astype(like.dtype)
    return _Consts(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8])


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _cdf_into(x, out, k):
    """out = Phi(x) = (1 + erf(x / sqrt 2)) / 2, the standard normal CDF, for a 1-D ``x`` (the dtype
    test sits outside the loops: inside, it can keep a loop from vectorising)."""
    if x.itemsize == 4:
        for j in range(x.shape[0]):
            out[j] = k.half * (k.one + erf32(x[j] * k.sqrt_half))
    else:
        for j in range(x.shape[0]):
            out[j] = k.half * (k.one + math.erf(x[j] * k.sqrt_half))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _tanh_arg(x, k):
    """(clipped x, -2|u|) for the tanh GELU, u = sqrt(2/pi) (x + 0.044715 x^3): tanh(u) is
    sign(x) (1 - e) / (1 + e) with e = exp(-2|u|), an exp of a non-positive number (``_exp.py``).
    With x clipped to [-50, 50], x^3 cannot overflow (t is ±1 there anyway)."""
    xc = min(max(x, -k.tanh_clip), k.tanh_clip)
    return xc, -(k.one + k.one) * abs(k.sqrt_2_over_pi * (xc + k.cubic * xc * xc * xc))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _halves(x, e, k):
    """(s, 1 - s) with s = (1 + tanh(u)) / 2 = sigmoid(2u), from e = exp(-2|u|) and u's sign (that of
    x): both are quotients, so neither loses digits to cancellation (1 + t does when t is near -1)."""
    d = k.one + e
    return (k.one if x >= k.zero else e) / d, (e if x >= k.zero else k.one) / d


@njit(fastmath={"contract"}, error_model="numpy")
def _gelu_row(v, tanh, e, out, k):
    """out = gelu(v) for one row; ``e``: scratch of v's length; ``k``: the constants in v's dtype."""
    if tanh:
        for j in range(v.shape[0]):
            e[j] = _tanh_arg(v[j], k)[1]
        exp_inplace(e)
        for j in range(v.shape[0]):
            out[j] = v[j] * _halves(v[j], e[j], k)[0]  # x/2 (1 + t) = x s
    else:
        _cdf_into(v, out, k)
        for j in range(v.shape[0]):
            out[j] = v[j] * out[j]


@njit(fastmath={"contract"}, error_model="numpy")
def _gelu_grad_row(v, tanh, e, out, k):
    """out = gelu'(v) for one row; ``e``: scratch of v's length; ``k``: the constants in v's dtype."""
    if tanh:
        for j in range(v.shape[0]):
            e[j] = _tanh_arg(v[j], k)[1]
        exp_inplace(e)
        for j in range(v.shape[0]):
            xc = _tanh_arg(v[j], k)[0]
            s, q = _halves(v[j], e[j], k)
            slope = k.sqrt_2_over_pi * (k.one + k.three * k.cubic * xc * xc)
            out[j] = s + (s + s) * q * xc * slope  # (1 + t)/2 + x/2 (1 - t^2) u', 1 - t^2 = 4 s q
        return
    for j in range(v.shape[0]):
        e[j] = -k.half * v[j] * v[j]
    exp_inplace(e)  # the normal density, up to 1/sqrt(2 pi)
    _cdf_into(v, out, k)
    for j in range(v.shape[0]):
        out[j] = out[j] + v[j] * k.inv_sqrt_2pi * e[j]


@njit(fastmath={"contract"}, error_model="numpy")
def _gelu_block(z, b, keep, scale, tanh, pre, out):
    """pre = z + b (z itself without b) and out = gelu(pre) * keep * scale, on a block of rows."""
    k = _gelu_consts(z)
    e = np.empty(z.shape[1], z.dtype)
    for i in range(z.shape[0]):
        if b is None:
            v = z[i]
        else:
            for j in range(z.shape[1]):
                pre[i, j] = z[i, j] + b[j]
            v = pre[i]
        _gelu_row(v, tanh, e, out[i], k)
        if keep is not None:
            for j in range(z.shape[1]):
                out[i, j] = out[i, j] * (scale if keep[i, j] else k.zero)


@njit(parallel=True, error_model="numpy")
def _gelu_parallel(z, b, keep, scale, tanh, pre, out):
    for k in prange(blocks(z.shape[0])):
        start, stop = k * BLOCK, (k + 1) * BLOCK
        _gelu_block(z[start:stop], b, rows_of(keep, start, stop), scale, tanh, pre[start:stop], out[start:stop])


def _gelu_and_slope(x: np.ndarray, tanh: bool) -> tuple:
    """(gelu(x), gelu'(x)) with NumPy (``erf.py``'s reference), for the references below."""
    if tanh:
        xc = np.clip(x, -_TANH_CLIP, _TANH_CLIP)
        t = np.tanh(_SQRT_2_OVER_PI * (xc + _CUBIC * xc * xc * xc))
        grad = 0.5 * (1.0 + t) + 0.5 * xc * (1.0 - t * t) * (_SQRT_2_OVER_PI * (1.0 + 3.0 * _CUBIC * xc * xc))
        return 0.5 * x * (1.0 + t), grad
    cdf = erf_numpy(x * _SQRT_HALF)
    cdf += 1.0
    cdf *= 0.5
    with np.errstate(over="ignore"):  # x^2 overflows for |x| > 1.8e19: exp(-inf) = 0 is right
        pdf = np.exp(-0.5 * x * x)
    return x * cdf, cdf + x * _INV_SQRT_2PI * pdf


def _gelu_numpy(z, b, keep, scale, tanh, pre, out) -> None:
    out[:] = _gelu_and_slope(z if b is None else np.add(z, b, out=pre), tanh)[0]
    if keep is not None:
        out *= keep
        out *= scale


_GELU = Kernel(_gelu_numpy, _gelu_block, _gelu_parallel, ns=_GELU_NS)
_GELU_TANH = Kernel(_gelu_numpy, _gelu_block, _gelu_parallel, ns=_GELU_TANH_NS)


def gelu_forward(z: np.ndarray, bias, keep, scale: float, approximate: str) -> tuple:
    """``(pre, out)``: pre = z + bias (written over ``z``; pre is z itself without a bias) and
    out = gelu(pre) * keep * scale, for ``z`` (rows, N) and ``approximate`` 'none' or 'tanh'."""
    out = np.empty_like(z)
    kernel = _GELU_TANH if approximate == "tanh" else _GELU
    kernel.on(z)(z, bias, keep, z.dtype.type(scale), approximate == "tanh", z, out)
    return z, out


@njit(fastmath={"contract"}, error_model="numpy")
def _gelu_backward_block(pre, g, keep, scale, tanh, dpre, db):
    """dpre = g * gelu'(pre) * keep * scale on a block of rows; db (or None) += its column sums."""
    k = _gelu_consts(pre)
    e = np.empty(pre.shape[1], pre.dtype)
    for i in range(pre.shape[0]):
        _gelu_grad_row(pre[i], tanh, e, dpre[i], k)
        for j in range(pre.shape[1]):
            d = g[i, j] * dpre[i, j]
            if keep is not None:
                d = d * (scale if keep[i, j] else k.zero)
            dpre[i, j] = d
            if db is not None:
                db[j] += d


@njit(parallel=True, error_model="numpy")
def _gelu_backward_parallel(pre, g, keep, scale, tanh, dpre, db):
    count = blocks(pre.shape[0])
    parts = np.empty((count, pre.shape[1]))  # a partial dbias per block of rows
    for k in prange(count):
        clear(parts[k])
        start, stop = k * BLOCK, (k + 1) * BLOCK
        keep_k = rows_of(keep, start, stop)
        _gelu_backward_block(pre[start:stop], g[start:stop], keep_k, scale, tanh, dpre[start:stop], parts[k])
    if db is not None:
        add_rows(parts, db)


def _gelu_backward_numpy(pre, g, keep, scale, tanh, dpre, db) -> None:
    np.multiply(g, _gelu_and_slope(pre, tanh)[1], out=dpre)
    if keep is not None:
        dpre *= keep
        dpre *= scale
    if db is not None:
        db += dpre.sum(axis=0)


_GELU_BACKWARD = Kernel(_gelu_backward_numpy, _gelu_backward_block, _gelu_backward_parallel, ns=_GELU_BACKWARD_NS)


def gelu_backward(
    pre: np.ndarray, grad: np.ndarray, keep, scale: float, approximate: str, need_bias: bool = True
) -> tuple:
    """(dpre, dbias) from the saved pre-activation ``pre`` and d(loss)/d(out) ``grad``
    (dbias is None unless ``need_bias``)."""
    grad = np.ascontiguousarray(grad, dtype=pre.dtype).reshape(pre.shape)
    dpre = np.empty_like(pre)
    db = np.zeros(pre.shape[1]) if need_bias else None
    _GELU_BACKWARD.on(pre)(pre, grad, keep, pre.dtype.type(scale), approximate == "tanh", dpre, db)
    return dpre, None if db is None else db.astype(pre.dtype)
