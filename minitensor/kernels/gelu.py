"""GELU of an array of any shape (``F.gelu``), one pass forward and one backward, on the flat array.

The feed-forward network of the Transformer layers fuses GELU with its bias and dropout, row by
row (``activation.py``); ``F.gelu`` alone needs none of that, and its backward can reuse what the
forward computed.  So the forward also keeps, when a gradient will be needed, the part of the
derivative that is costly to recompute (one more array written, ~8 µs at 2^17 float32):

- exact GELU, ``x Phi(x)``: keeps ``Phi(x)`` (the erf); the backward ``Phi(x) + x phi(x)`` then
  needs only the exp of ``phi(x) = exp(-x^2 / 2) / sqrt(2 pi)``;
- tanh GELU, ``x s`` with ``s = (1 + tanh(u)) / 2 = sigmoid(2u)``: keeps ``e = exp(-2|u|)``;
  the backward ``s + 2 s (1 - s) x u'`` forms ``s`` and ``1 - s`` from it as quotients, no exp.

The formulas, constants and helpers are ``activation.py``'s (float32 arithmetic for float32).  The
forward runs on pieces of ``_PIECE`` elements in the L1 cache (the exp of a piece, then the rest);
the exact backward is one loop with the exp of ``_exp.py`` inlined (``exp32`` or ``exp64`` by the
dtype, chosen outside the loop), which measured faster there and slower in the forward.  Each
kernel has its NumPy reference beside it; ``tests/kernels/test_gelu_kernel.py`` holds them equal.

>>> y, kept = gelu(np.array([-1.0, 0.0, 2.0]), "none", keep=True)
>>> y.round(4), kept.round(4)
(array([-0.1587,  0.    ,  1.9545]), array([0.1587, 0.5   , 0.9772]))
"""

from __future__ import annotations

import numpy as np

from ._exp import exp32, exp64, exp_inplace
from .activation import _CUBIC, _SQRT_2_OVER_PI, _SQRT_HALF, _TANH_CLIP, _cdf_into, _gelu_consts, _halves, _tanh_arg
from .erf import erf_numpy
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_PIECE = 2048  # elements per exp call of the forward: the piece's scratch stays in the L1 cache


def gelu(x: np.ndarray, approximate: str, keep: bool) -> tuple:
    """``(gelu(x), kept or None)`` for a float array of any shape; ``approximate`` 'none' or 'tanh';
    ``kept`` (Phi(x), resp. exp(-2|u|)) is computed when ``keep``, for ``gelu_backward``."""
    out = np.empty(x.shape, x.dtype)
    kept = np.empty(x.shape, x.dtype) if keep else None
    _FORWARD[approximate].on(x)(x.ravel(), approximate == "tanh", out.ravel(), None if kept is None else kept.ravel())
    return out, kept


def gelu_backward(grad: np.ndarray, x: np.ndarray, kept: np.ndarray, approximate: str) -> np.ndarray:
    """grad * gelu'(x), from the ``kept`` array of ``gelu``; grad of x's shape."""
    out = np.empty(x.shape, x.dtype)
    if grad.shape != x.shape or grad.dtype != x.dtype:
        grad = np.broadcast_to(grad, x.shape).astype(x.dtype)
    _BACKWARD[approximate].on(x)(grad.ravel(), x.ravel(), kept.ravel(), approximate == "tanh", out.ravel())
    return out


def _parts_numpy(x: np.ndarray, tanh: bool) -> tuple:
    """(s, kept) with gelu(x) = x s: Phi(x) twice, or sigmoid(2u) and exp(-2|u|)."""
    if not tanh:
        cdf = 0.5 * (1.0 + erf_numpy(x * _SQRT_HALF))
        return cdf, cdf
    xc = np.clip(x, -_TANH_CLIP, _TANH_CLIP)
    e = np.exp(-2.0 * np.abs(_SQRT_2_OVER_PI * (xc + _CUBIC * xc * xc * xc)))
    return np.where(x >= 0, 1.0, e) / (1.0 + e), e


def _gelu_numpy(x, tanh, out, kept) -> None:
    """Reference (1-D)."""
    s, k = _parts_numpy(x, tanh)
    out[...] = x * s
    if kept is not None:
        kept[...] = k


@njit(fastmath={"contract"}, error_model="numpy")
def _gelu(x, tanh, out, kept):
    k = _gelu_consts(x)
    for start in range(0, x.size, _PIECE):  # (slices indexed from 0: LLVM vectorises these loops)
        xs, ys = x[start : start + _PIECE], out[start : start + _PIECE]
        if tanh:
            for j in range(xs.size):
                ys[j] = _tanh_arg(xs[j], k)[1]
            exp_inplace(ys)  # e = exp(-2|u|)
            if kept is not None:
                ks = kept[start : start + _PIECE]
                for j in range(xs.size):
                    ks[j] = ys[j]
            for j in range(xs.size):
                ys[j] = xs[j] * _halves(xs[j], ys[j], k)[0]
        else:
            cdf = ys if kept is None else kept[start : start + _PIECE]
            _cdf_into(xs, cdf, k)
            for j in range(xs.size):
                ys[j] = xs[j] * cdf[j]


def _gelu_backward_numpy(grad, x, kept, tanh, out) -> None:
    """Reference (1-D)."""
    if tanh:
        xc = np.clip(x, -_TANH_CLIP, _TANH_CLIP)
        s, q = np.where(x >= 0, 1.0, kept) / (1.0 + kept), np.where(x >= 0, kept, 1.0) / (1.0 + kept)
        out[...] = grad * (s + 2.0 * s * q * xc * (_SQRT_2_OVER_PI * (1.0 + 3.0 * _CUBIC * xc * xc)))
        return
    with np.errstate(over="ignore"):  # x^2 overflows for |x| > 1.8e19: exp(-inf) = 0 is right
        pdf = np.exp(-0.5 * x * x) * (1 / np.sqrt(2 * np.pi))
    out[...] = grad * (kept + x * pdf)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _exact_gelu_grad_loop(grad, x, cdf, out, k, exp):
    for i in range(x.size):
        pdf = k.inv_sqrt_2pi * exp(-k.half * x[i] * x[i])  # the normal density
        out[i] = grad[i] * (cdf[i] + x[i] * pdf)


@njit(fastmath={"contract"}, error_model="numpy")
def _gelu_backward(grad, x, kept, tanh, out):
    k = _gelu_consts(x)
    if not tanh and x.itemsize == 4:
        _exact_gelu_grad_loop(grad, x, kept, out, k, exp32)
    elif not tanh:
        _exact_gelu_grad_loop(grad, x, kept, out, k, exp64)
    else:
        for i in range(x.size):
            xc = _tanh_arg(x[i], k)[0]
            s, q = _halves(x[i], kept[i], k)
            slope = k.sqrt_2_over_pi * (k.one + k.three * k.cubic * xc * xc)
            out[i] = grad[i] * (s + (s + s) * q * xc * slope)


# Serial ns per element (the ``Kernel``'s ``ns``), by ``approximate``.
_FORWARD = {"none": Kernel(_gelu_numpy, _gelu, ns=0.45), "tanh": Kernel(_gelu_numpy, _gelu, ns=0.55)}
_BACKWARD = {
    "none": Kernel(_gelu_backward_numpy, _gelu_backward, ns=0.4),
    "tanh": Kernel(_gelu_backward_numpy, _gelu_backward, ns=0.25),
}
