"""The gamma function's logarithm and its derivatives, in NumPy: ``lgamma`` and ``polygamma``.

- ``lgamma(x) = log |Gamma(x)|``: the C library's ``lgamma`` (Python's ``math.lgamma``) on each
  element; ``inf`` at the poles (0, -1, -2, ...) and at ``±inf``, as PyTorch.
- ``polygamma(n, x)``: the n-th derivative of ``digamma = d lgamma / dx`` (n = 0 is digamma
  itself), for x > 0 from the recurrence ``psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1)`` up to
  ``x >= 12 + n`` and there the asymptotic series (Abramowitz & Stegun 6.3.18, 6.4.11)::

      psi(z)   ~ ln z - 1/(2z) - sum_k B_2k / (2k z^2k)
      psi_n(z) ~ (-1)^(n+1) [(n-1)!/z^n + n!/(2 z^(n+1)) + sum_k B_2k (2k+n-1)! / ((2k)! z^(2k+n))]

  and for x < 0 from the reflection ``psi_n(x) = (-1)^n psi_n(1 - x) - pi d^n/dx^n cot(pi x)``
  (the derivatives of cot are polynomials in cot, ``_cot_derivative``).  Within a few 1e-16
  relative of the exact value away from the roots of digamma.  At the poles: digamma(±0) = ∓inf,
  NaN at the negative integers, as PyTorch; psi_n (n >= 1) is (-1)^(n+1) inf there; NaN at -inf.

>>> lgamma(np.array([0.5, 1.0, 10.0]))
array([ 0.57236494,  0.        , 12.80182748])
>>> polygamma(0, np.array([1.0, 0.5])), polygamma(1, np.array([1.0]))
(array([-0.57721566, -1.96351003]), array([1.64493407]))
"""

from __future__ import annotations

import math

import numpy as np

_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)
# B_2k, k = 1..10: the Bernoulli numbers of the asymptotic series.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)


def _as_float(x) -> tuple:
    """(x as float64, the dtype of the result: x's float dtype, or float64 for other inputs)."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return x.astype(np.float64), dtype


def lgamma(x: np.ndarray) -> np.ndarray:
    """log |Gamma(x)| elementwise; inf at 0, -1, -2, ... and at ±inf; NaN for NaN."""
    x, dtype = _as_float(x)
    flat = x.ravel()
    out = np.where(np.isnan(flat), np.nan, np.inf)
    regular = np.isfinite(flat) & ~((flat <= 0) & (flat == np.floor(flat)))
    if regular.any():
        values = flat[regular]
        huge = np.abs(values) > 2e305  # (math.lgamma raises OverflowError where the result passes 1.8e308)
        if huge.any():
            values = np.where(huge, 1.0, values)
        result = _LGAMMA(values).astype(np.float64)
        out[regular] = np.where(huge, np.inf, result)
    return out.reshape(x.shape).astype(dtype, copy=False)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """psi_n(x), the n-th derivative of digamma (n >= 0) elementwise (see the module docstring)."""
    x, dtype = _as_float(x)
    pole = (x <= 0) & (x == np.floor(x))
    negative = (x < 0) & ~pole & np.isfinite(x)
    with np.errstate(all="ignore"):
        out = _positive(n, np.where(negative, 1.0 - x, np.where(pole, 1.0, x)))
        if negative.any():
            r = x - np.round(x)  # cot(pi x) has period 1: the fraction keeps its precision
            cot = 1.0 / np.tan(np.pi * np.where(negative, r, 0.5))
            reflected = (-1) ** n * out - np.pi ** (n + 1) * np.polyval(_cot_derivative(n), cot)
            out = np.where(negative, reflected, out)
        if n == 0:
            at_pole = np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), np.nan)
            out = np.where(x == np.inf, np.inf, out)
        else:
            at_pole = (-1.0) ** (n + 1) * np.inf
            out = np.where(x == np.inf, 0.0, out)
        out = np.where(pole, at_pole, out)
        out = np.where(x == -np.inf, np.nan, out)
    return out.astype(dtype, copy=False)


def _positive(n: int, x: np.ndarray) -> np.ndarray:
    """psi_n(x) for x > 0: the recurrence up to 12 + n, then the asymptotic series."""
    step = -((-1) ** n) * math.factorial(n)  # psi_n(x) = psi_n(x + 1) + step / x^(n+1)
    shift = np.zeros_like(x)
    z = x.copy()
    while True:
        small = z < 12.0 + n
        if not small.any():
            break
        shift += np.where(small, step / z ** (n + 1), 0.0)
        z = np.where(small, z + 1.0, z)
    inv = 1.0 / z
    if n == 0:
        series = np.log(z) - 0.5 * inv
        for k, b in enumerate(_BERNOULLI, start=1):
            series -= b / (2 * k) * inv ** (2 * k)
        return series + shift
    series = math.factorial(n - 1) * inv**n + 0.5 * math.factorial(n) * inv ** (n + 1)
    for k, b in enumerate(_BERNOULLI, start=1):
        series += b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) * inv ** (2 * k + n)
    return (-1) ** (n + 1) * series + shift


def _cot_derivative(n: int) -> np.ndarray:
    """Coefficients (highest power first) of the polynomial P_n with d^n/du^n cot u = P_n(cot u):
    P_0(c) = c, P_{k+1}(c) = -(1 + c^2) P_k'(c)."""
    p = np.array([1.0, 0.0])
    for _ in range(n):
        p = -np.polymul([1.0, 0.0, 1.0], np.polyder(p))
    return p
