"""The gamma function's logarithm and its derivatives, ``lgamma`` and ``polygamma``: NumPy references
and numba kernels.

The references (``lgamma_numpy``, ``polygamma_numpy``: the definitions, and what runs with the JIT off):

- ``lgamma(x) = log |Gamma(x)|``: Python's ``math.lgamma`` on each element; ``inf`` at the poles
  (0, -1, -2, ...) and at ``±inf``, as PyTorch.
- ``polygamma(n, x)``: the n-th derivative of ``digamma = d lgamma / dx`` (n = 0 is digamma
  itself), for x > 0 from the recurrence ``psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1)`` up to
  ``x >= 12 + n`` and there the asymptotic series (Abramowitz & Stegun 6.3.18, 6.4.11)::

      psi(z)   ~ ln z - 1/(2z) - sum_k B_2k / (2k z^2k)
      psi_n(z) ~ (-1)^(n+1) [(n-1)!/z^n + n!/(2 z^(n+1)) + sum_k B_2k (2k+n-1)! / ((2k)! z^(2k+n))]

  and for x < 0 from the reflection ``psi_n(x) = (-1)^n psi_n(1 - x) - pi d^n/dx^n cot(pi x)``
  (the derivatives of cot are polynomials in cot, ``_cot_derivative``).  Within a few 1e-16
  relative of the exact value away from the roots of digamma.  At the poles: digamma(±0) = ∓inf,
  NaN at the negative integers, as PyTorch; psi_n (n >= 1) is (-1)^(n+1) inf there; NaN at -inf.

The kernels (``lgamma``, ``polygamma``: what the backend runs) compute in float64 and make two
passes: the first runs the positive-x formula on every element (on 1 - x for negative x), the
second fixes the elements that are not positive and finite (reflection, poles, infinities, NaN),
so that the first pass has no branch and vectorises:

- digamma and trigamma (n = 0, 1): the recurrence by a fixed 10 steps, each taken where z < 10
  (digamma's sum of 1 / (x + j) as one fraction p / q), then their asymptotic series with the log
  from ``_log.py``'s parts; other n: the reference's loop per element;
- lgamma: float32 by Stirling's series after the same shift (about 1e-15 absolute, exact at 1
  and 2), float64 by numba's ``math.lgamma`` (the C library's, which is also within 1e-15
  absolute of Python's near its roots: ``lgamma_numpy`` is off by 1e-11 relative near 2).

Measured (float32 in (0.5, 2), 2^17 elements, one core of the 2-core VM of docs/performance.md):
lgamma 440 µs (NumPy reference 10000), digamma 400 (6600), trigamma 330 (6600).

>>> lgamma(np.array([0.5, 1.0, 10.0]))
array([ 0.57236494,  0.        , 12.80182748])
>>> polygamma(0, np.array([1.0, 0.5])), polygamma(1, np.array([1.0]))
(array([-0.57721566, -1.96351003]), array([1.64493407]))
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._log import log_consts, log_mantissa, split64
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)
# B_2k, k = 1..10: the Bernoulli numbers of the asymptotic series.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)


def _as_float(x) -> tuple:
    """(x as float64, the dtype of the result: x's float dtype, or float64 for other inputs)."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return x.astype(np.float64), dtype


def lgamma_numpy(x: np.ndarray) -> np.ndarray:
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


def polygamma_numpy(n: int, x: np.ndarray) -> np.ndarray:
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


# ------------------------------------------------------------------ the numba kernels
def lgamma(x: np.ndarray) -> np.ndarray:
    """log |Gamma(x)| elementwise, a new array of x's shape and float dtype (float64 for other inputs).

    >>> lgamma(np.array([0.5, 1.0, 10.0]))
    array([ 0.57236494,  0.        , 12.80182748])
    """
    if x.dtype.kind != "f":
        return lgamma_numpy(x)
    return _LGAMMA_KERNEL.map(x)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """psi_n(x) elementwise (n >= 0; n = 0: digamma), as ``polygamma_numpy``.

    >>> polygamma(0, np.array([1.0, 0.5])), polygamma(1, np.array([1.0]))
    (array([-0.57721566, -1.96351003]), array([1.64493407]))
    """
    if x.dtype.kind != "f":
        return polygamma_numpy(n, x)
    out = np.empty(x.shape, x.dtype)
    series, cot = _constants(n)
    _POLYGAMMA.on(x)(n, x.ravel(), series, cot, out.ravel())
    return out


@functools.lru_cache(maxsize=64)
def _constants(n: int) -> tuple:
    """(the asymptotic series' coefficients of psi_n, ``_cot_derivative(n)``) for the kernel: for n >= 1
    ``[(n-1)!, n!/2, B_2k (2k+n-1)! / (2k)! for k = 1..10]``, for n = 0 ``[B_2k / 2k]``."""
    if n == 0:
        series = [b / (2 * k) for k, b in enumerate(_BERNOULLI, start=1)]
    else:
        series = [math.factorial(n - 1), 0.5 * math.factorial(n)]
        series += [b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) for k, b in enumerate(_BERNOULLI, 1)]
    return np.array(series, dtype=np.float64), _cot_derivative(n)


def _lgamma_numpy(x, out):
    out[...] = lgamma_numpy(x)


def _polygamma_numpy(n, x, series, cot, out):
    out[...] = polygamma_numpy(n, x)


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SHIFT_TO = 10.0  # the kernels' recurrences shift x up to here (the reference's: 12 + n)
# Stirling's series of lgamma(z) - ((z - 1/2) ln z - z + ln(2 pi)/2): B_2k / (2k (2k - 1) z^(2k-1)),
# k = 1..6, as a polynomial in 1/z^2 (highest first); the next term is 1e-15 of lgamma(10).
_STIRLING = tuple(b / (2 * k * (2 * k - 1)) for k, b in reversed(list(enumerate(_BERNOULLI[:6], start=1))))
_TRIGAMMA_SERIES = tuple(reversed(_BERNOULLI[:9]))  # B_2k / z^(2k+1), k = 1..9: the next is 5e-17 of psi_1(10)
_DIGAMMA_SERIES = tuple(b / (2 * k) for k, b in reversed(list(enumerate(_BERNOULLI[:8], start=1))))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _log64(z, k):
    """ln z for a positive normal float64 (``_log.py``'s parts: vectorises; ``k = log_consts``)."""
    e, m = split64(z)
    return e * k.ln2_hi + (e * k.ln2_lo + log_mantissa(m - 1.0, k))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _shifted(x):
    """(z, p, q): z = x + m >= 10 and p / q = sum_{j<m} 1 / (x + j), for x > 0, by a fixed number of
    branch-free steps (a loop LLVM vectorises; one division in all, by the caller)."""
    z, p, q = x, 0.0, 1.0
    for _ in range(10):
        small = z < _SHIFT_TO
        p = p * z + q if small else p
        q = q * z if small else q
        z = z + 1.0 if small else z
    return z, p, q


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _lgamma_positive(x, k):
    """lgamma(x) for x > 0 (to ~1e-15 absolute: for float32 results): Stirling's series at z = x + m
    less ln(x (x + 1) ... (x + m - 1))."""
    z, _, q = _shifted(x)
    inv = 1.0 / z
    inv2 = inv * inv
    s = _STIRLING[0]
    for c in _STIRLING[1:]:
        s = s * inv2 + c
    log_z = _log64(z, k)
    return (z - 0.5) * log_z - z + _HALF_LOG_2PI + s * inv - _log64(q, k)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _digamma_positive(x, k):
    """digamma(x) for x > 0: the asymptotic series at z = x + m less sum 1 / (x + j)."""
    z, p, q = _shifted(x)
    inv2 = 1.0 / (z * z)
    s = _DIGAMMA_SERIES[0]
    for c in _DIGAMMA_SERIES[1:]:
        s = s * inv2 + c
    return _log64(z, k) - 0.5 / z - s * inv2 - p / q


@njit(fastmath={"contract"}, error_model="numpy")
def _lgamma(x, out):
    """float32: ``_lgamma_positive`` in float64 on every element (vectorised), then the C library's
    lgamma where x <= 0, inf or NaN; float64: the C library's (Python's ``math.lgamma``) throughout."""
    k = log_consts(np.empty(0))
    if x.itemsize == 4:
        for i in range(x.size):
            v = np.float64(x[i])
            r = _lgamma_positive(v if v > 0.0 else 1.0, k)
            out[i] = 0.0 if v == 1.0 or v == 2.0 else r  # (exactly, where the series cancels to ~1e-15)
        for i in range(x.size):
            v = np.float64(x[i])
            if not (v > 0.0 and v < math.inf):
                out[i] = _lgamma_edge(v)
    else:
        for i in range(x.size):
            out[i] = _lgamma_edge(x[i])


@njit(inline="always", error_model="numpy")
def _lgamma_edge(v):
    """lgamma of one float64 as the reference: inf at the poles, at ±inf and beyond 2e305."""
    if v != v:
        return v
    if abs(v) > 2e305 or (v <= 0.0 and v == math.floor(v)):
        return math.inf
    return math.lgamma(v)


@njit(fastmath={"contract"}, error_model="numpy")
def _polygamma(n, x, series, cot, out):
    """psi_n(x): psi_n of x (x > 0) or of 1 - x (x < 0) for every element (for n = 0 branch-free:
    vectorised), then the reflection (from psi_n(1 - x) again in float64), the poles and the
    infinities where x is not positive and finite."""
    k = log_consts(np.empty(0))
    if n == 0:
        for i in range(x.size):
            v = np.float64(x[i])
            out[i] = _digamma_positive(v if v > 0.0 else (1.0 - v if v > -1e300 else 1.0), k)
    elif n == 1:
        for i in range(x.size):
            v = np.float64(x[i])
            out[i] = _trigamma_positive(v if v > 0.0 else (1.0 - v if v > -1e300 else 1.0))
    else:
        for i in range(x.size):
            v = np.float64(x[i])
            out[i] = _polygamma_positive(n, v if v > 0.0 else (1.0 - v if v > -1e300 else 1.0), series)
    sign = 1.0 if n % 2 == 0 else -1.0  # (-1)^n
    for i in range(x.size):
        v = np.float64(x[i])
        if v > 0.0 and v < math.inf:
            continue
        if v != v or v == -math.inf:
            out[i] = math.nan
        elif v == math.inf:
            out[i] = math.inf if n == 0 else 0.0
        elif v == math.floor(v):  # a pole: 0, -1, -2, ...
            if n > 0:
                out[i] = -sign * math.inf
            elif v == 0.0:
                out[i] = math.inf if math.copysign(1.0, v) < 0 else -math.inf
            else:
                out[i] = math.nan
        else:  # psi_n(x) = (-1)^n psi_n(1 - x) - pi d^n/dx^n cot(pi x)
            base = _digamma_positive(1.0 - v, k) if n == 0 else _polygamma_positive(n, 1.0 - v, series)
            c = 1.0 / math.tan(math.pi * (v - np.round(v)))  # (period 1: the fraction keeps its precision)
            poly = 0.0
            for coefficient in cot:
                poly = poly * c + coefficient
            out[i] = sign * base - math.pi ** (n + 1) * poly


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _trigamma_positive(x):
    """psi_1(x) for x > 0 (digamma's derivative, the one most asked for), branch-free: sum 1 / (x + j)^2
    up to z = x + m >= 10, then 1/z + 1/(2 z^2) + sum_k B_2k / z^(2k+1)."""
    z, shift = x, 0.0
    for _ in range(10):
        small = z < _SHIFT_TO
        shift += 1.0 / (z * z) if small else 0.0
        z = z + 1.0 if small else z
    inv = 1.0 / z
    inv2 = inv * inv
    s = _TRIGAMMA_SERIES[0]
    for c in _TRIGAMMA_SERIES[1:]:
        s = s * inv2 + c
    return (1.0 + 0.5 * inv + s * inv2) * inv + shift


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _polygamma_positive(n, x, series):
    """psi_n(x) for x > 0, n >= 1: the reference's recurrence up to 12 + n and asymptotic series."""
    step = 2.0 * series[1] * (1.0 if n % 2 == 1 else -1.0)  # -(-1)^n n!: psi_n(x) = psi_n(x + 1) + step / x^(n+1)
    shift, z = 0.0, x
    while z < 12.0 + n:
        shift += step / z ** (n + 1)
        z += 1.0
    inv = 1.0 / z
    inv2 = inv * inv
    s = 0.0
    for j in range(series.size - 1, 1, -1):  # sum_k series[k+1] inv^(2k+n), k = 1..10, by Horner in inv^2
        s = (s + series[j]) * inv2
    s = (s + series[0] + series[1] * inv) * inv**n
    return (1.0 if n % 2 == 1 else -1.0) * s + shift


# Serial ns per element (the ``Kernel``'s ``ns``), float32 inputs in (0.5, 2).
_LGAMMA_KERNEL = Kernel(_lgamma_numpy, _lgamma, ns=2.0)
_POLYGAMMA = Kernel(_polygamma_numpy, _polygamma, ns=3.0)
