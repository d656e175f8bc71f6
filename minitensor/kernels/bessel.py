"""The modified Bessel functions of the first kind of orders 0 and 1, in NumPy: ``i0`` and ``i1``.

``i0`` is NumPy's (Clenshaw's Chebyshev series, the Cephes coefficients, as PyTorch's).  ``i1``,
the derivative of ``i0``, is summed from its power series for ``|x| <= 30`` (all terms positive:
no cancellation)::

    I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!)

and beyond from the asymptotic expansion ``e^x / sqrt(2 pi x) * sum_k (-1)^k a_k / x^k`` with
``a_k = prod_{j<=k} (4 - (2j-1)^2) / (k! 8^k)`` (Abramowitz & Stegun 9.7.1), whose terms are below
1e-17 of the sum there.  ``i1`` is odd, ``i0`` even; both overflow to inf beyond ``|x| ~ 713``,
and are ``±inf`` at ``±inf`` (PyTorch's give NaN there).

>>> i0(np.array([0.0, 1.0])), i1(np.array([0.0, 1.0, -40.0]))
(array([1.        , 1.26606588]), array([ 0.00000000e+00,  5.65159104e-01, -1.47073962e+16]))
"""

from __future__ import annotations

import math

import numpy as np

_SERIES_UP_TO = 30.0
_SERIES_TERMS = 90  # (x/2)^(2k+1) / (k! (k+1)!) at x = 30, k = 90: below 1e-17 of I1(30)
_ASYMPTOTIC_TERMS = 20


def i0(x: np.ndarray) -> np.ndarray:
    """I0(x) elementwise, in x's float dtype (float64 for other inputs)."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    a = np.abs(x.astype(np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.i0(np.where(a == np.inf, 0.0, a))
    return np.where(a == np.inf, np.inf, out).astype(dtype, copy=False)


def i1(x: np.ndarray) -> np.ndarray:
    """I1(x) elementwise, in x's float dtype (float64 for other inputs)."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    a = np.abs(x.astype(np.float64))
    near = a <= _SERIES_UP_TO
    half = np.where(near, a, 0.0) / 2
    term = half.copy()  # k = 0
    total = half.copy()
    square = half * half
    for k in range(1, _SERIES_TERMS):
        term = term * square / (k * (k + 1))
        total += term
    with np.errstate(over="ignore", invalid="ignore"):
        far = np.where(near, _SERIES_UP_TO + 1, a)
        inv = 1.0 / far
        coefficient, series = 1.0, np.ones_like(far)
        for k in range(1, _ASYMPTOTIC_TERMS):
            coefficient *= (4.0 - (2 * k - 1) ** 2) / (k * 8.0)
            series += (-1) ** k * coefficient * inv**k
        asymptotic = np.exp(far) / np.sqrt(2 * math.pi * far) * series
        asymptotic = np.where(far == np.inf, np.inf, asymptotic)
    out = np.where(near, total, asymptotic)
    return np.copysign(out, x).astype(dtype, copy=False)
