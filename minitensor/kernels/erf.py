"""The error function ``erf``, in NumPy: W. J. Cody's rational Chebyshev approximations.

``erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt`` ("Rational Chebyshev approximations for the
error function", Math. Comp. 23, 1969), on three ranges of ``|x|``:

- ``|x| <= 0.46875``: ``erf(x) = x * A(x^2) / B(x^2)``;
- ``0.46875 < |x| <= 4``: ``erfc(|x|) = exp(-x^2) * C(|x|) / D(|x|)``;
- ``|x| > 4``: ``erfc(|x|) = exp(-x^2) / |x| * (1/sqrt(pi) - z P(z) / Q(z))`` with ``z = 1/x^2``;

and ``erf(x) = sign(x) * (1 - erfc(|x|))`` outside the first range.  In float64 the absolute error
is below 1e-15; float32 inputs are computed in float32.  ``erfc`` keeps the ranges' ``erfc(|x|)``
itself (its relative precision in the tail, where ``1 - erf`` would round to 0), and ``erfinv``
inverts ``erf`` by Newton's method from M. Giles' approximation.  This is the reference of the GELU kernels
(``activation.py``, ``gelu.py``), whose numba loops take ``math.erf`` (float64) or the rational
``_erf32`` (float32, vectorised), and what ``backend.erf`` runs for the ``Erf`` op
(``ops/special.py``).

>>> erf(np.array([0.0, 0.5, 3.0]))
array([0.        , 0.52049988, 0.99997791])
"""

from __future__ import annotations

import numpy as np

# Polynomial coefficients, highest power first (Cody's published values).
_A = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03)  # fmt: skip
_B = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_C = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03,
      1.23033935479799725e03)  # fmt: skip
_D = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
      3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)  # fmt: skip
_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4)  # fmt: skip
_Q = (1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
      2.33520497626869185e-3)  # fmt: skip
_INV_SQRT_PI = 0.56418958354775628695
_SMALL = 0.46875


def _horner(coeffs: tuple, x: np.ndarray) -> np.ndarray:
    """Evaluate the polynomial ``coeffs`` (highest power first) at ``x``, in x's dtype (in place, one buffer)."""
    acc = coeffs[0] * x
    acc += coeffs[1]
    for c in coeffs[2:]:
        acc *= x
        acc += c
    return acc


def erf(x: np.ndarray) -> np.ndarray:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``, elementwise.

    The elements of each range are gathered by index (cheaper than computing
    every formula everywhere), and each formula works in place on its buffer.

    >>> erf(np.array([0.0, 0.5, 3.0]))
    array([0.        , 0.52049988, 0.99997791])
    """
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    flat = x.ravel()
    ax = np.abs(flat)
    out = np.empty_like(flat)
    # |x| <= 0.46875: erf directly.
    small = np.flatnonzero(ax <= _SMALL)
    xs = flat[small]
    z = xs * xs
    r = _horner(_A, z)
    r /= _horner(_B, z)
    r *= xs
    out[small] = r
    # |x| > 0.46875 (and NaN, which propagates): erfc(|x|), then erf = sign(x) * (1 - erfc).
    rest = np.flatnonzero(~(ax <= _SMALL))
    y = ax[rest]
    erfc = _erfc_mid(np.minimum(y, 4.0))
    large = np.flatnonzero(y > 4.0)
    if large.size:
        erfc[large] = _erfc_large(y[large])
    np.subtract(1.0, erfc, out=erfc)
    out[rest] = np.copysign(erfc, flat[rest], out=erfc)
    return out.reshape(x.shape)


def _erfc_mid(y: np.ndarray) -> np.ndarray:
    """erfc(y) for 0.46875 < y <= 4: exp(-y^2) * C(y) / D(y)."""
    e = y * y
    np.negative(e, out=e)
    np.exp(e, out=e)
    e *= _horner(_C, y)
    e /= _horner(_D, y)
    return e


def _erfc_large(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y > 4: exp(-y^2) / y * (1/sqrt(pi) - z P(z) / Q(z)), z = 1/y^2."""
    z = 1.0 / (y * y)
    tail = z * _horner(_P, z) / _horner(_Q, z)
    return np.exp(-y * y) / y * (_INV_SQRT_PI - tail)


def erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function ``1 - erf(x)``, with its relative precision where it is tiny
    (``erfc(10) = 2.1e-45``): ``erfc(|x|)`` of Cody's ranges, ``2 - erfc(|x|)`` for negative x.

    >>> erfc(np.array([-1.0, 0.0, 5.0]))
    array([1.84270079e+00, 1.00000000e+00, 1.53745979e-12])
    """
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    ax = np.abs(x)
    small = ax <= _SMALL
    out = np.where(small, 1.0 - erf(np.where(small, x, 0.0)), 0.0).astype(x.dtype, copy=False)
    rest = np.flatnonzero(~small.reshape(-1))
    y = ax.reshape(-1)[rest]
    tail = _erfc_mid(np.minimum(y, 4.0))
    large = np.flatnonzero(y > 4.0)
    if large.size:
        with np.errstate(under="ignore"):
            tail[large] = _erfc_large(y[large])
    flat = out.reshape(-1)
    flat[rest] = np.where(x.reshape(-1)[rest] < 0, 2.0 - tail, tail)
    return flat.reshape(x.shape)


# M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): single-precision
# polynomials in w = -log(1 - x^2), highest power first; two Newton steps then give float64.
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def erfinv(x: np.ndarray) -> np.ndarray:
    """The inverse of ``erf`` on [-1, 1] (``erfinv(±1) = ±inf``, NaN outside), in x's float dtype.

    Giles' polynomial gives ~7 digits (fewer beyond ``1 - |x| < 1e-7``, the end of its range);
    four steps of Newton's method on ``erf(y) = |x|``, or on ``log erfc(y) = log(1 - |x|)`` for
    ``|x| > 0.5`` (where ``1 - |x|`` is exact and keeps the tail's precision), make it float64's.

    >>> erfinv(np.array([0.0, 0.5, -0.999]))
    array([ 0.        ,  0.47693628, -2.32675377])
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    a = np.abs(x.astype(np.float64))
    inside = a < 1
    a_in = np.where(inside, a, 0.0)
    with np.errstate(divide="ignore"):
        w = -np.log((1.0 - a_in) * (1.0 + a_in))
    central = w < 5.0
    y = np.where(central, np.polyval(_GILES_CENTRAL, w - 2.5), np.polyval(_GILES_TAIL, np.sqrt(w) - 3.0)) * a_in
    tail = a_in > 0.5
    log_rest = np.log(np.where(tail, 1.0 - a_in, 1.0))
    for _ in range(4):
        slope = 2 * _INV_SQRT_PI * np.exp(-y * y)  # d erf / dy
        with np.errstate(divide="ignore", invalid="ignore"):
            rest = erfc(y)  # (in the tail: Newton on log erfc(y) = log(1 - |x|), nearly a parabola in y)
            step = np.where(tail, (log_rest - np.log(rest)) * rest / slope, (erf(y) - a_in) / slope)
        y = y - np.where(inside, step, 0.0)
    with np.errstate(invalid="ignore"):
        y = np.where(inside, y, np.where(a == 1, np.inf, np.nan))
    return np.copysign(y, x).astype(dtype, copy=False)
