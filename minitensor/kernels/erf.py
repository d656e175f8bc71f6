"""The error function family, ``erf``, ``erfc``, ``erfinv``: NumPy references and numba kernels.

The references (``erf_numpy``, ``erfc_numpy``, ``erfinv_numpy``, the definitions the kernels are
tested against and what runs with the JIT off) are W. J. Cody's rational Chebyshev approximations
("Rational Chebyshev approximations for the error function", Math. Comp. 23, 1969) of
``erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt``, on three ranges of ``|x|``:

- ``|x| <= 0.46875``: ``erf(x) = x * A(x^2) / B(x^2)``;
- ``0.46875 < |x| <= 4``: ``erfc(|x|) = exp(-x^2) * C(|x|) / D(|x|)``;
- ``|x| > 4``: ``erfc(|x|) = exp(-x^2) / |x| * (1/sqrt(pi) - z P(z) / Q(z))`` with ``z = 1/x^2``;

and ``erf(x) = sign(x) * (1 - erfc(|x|))`` outside the first range.  In float64 the absolute error
is below 1e-15; float32 inputs are computed in float32.  ``erfc`` keeps the ranges' ``erfc(|x|)``
itself (its relative precision in the tail, where ``1 - erf`` would round to 0), and ``erfinv``
inverts ``erf`` by Newton's method from M. Giles' approximation.  ``erf_numpy`` is also the
reference of the GELU kernels (``activation.py``, ``gelu.py``), whose float32 loops take ``erf32``.

The kernels (``erf``, ``erfc``, ``erfinv``, what the backend runs, and the one-pass gradients
``erf_backward``, ``erfc_backward``, ``erfinv_backward``), one loop per element:

- ``erf``: float32 by ``erf32`` (Eigen's rational function in float32, |error| < 7e-8, vectorised),
  float64 by Cody's ranges in float64 (numba's ``math.erf`` is a C call of ~16 ns an element);
- ``erfc``: Cody's ranges in float64 for both dtypes (float32's tail reaches 1e-45);
- ``erfinv``: float32 by Giles' estimate and one Newton step on erf, all in float64 and branch-free
  (vectorised; float32's ``1 - |x| >= 6e-8`` keeps the root below 4, where the step's erf is
  precise); float64 by the reference's four Newton steps, per element;
- the gradients: ``grad * 2/sqrt(pi) exp(-x^2)`` with ``_exp.py``'s vectorised exp.

Measured (float32, 2^17 elements, one core of the 2-core VM of docs/performance.md): erf 18 µs
(NumPy reference 1020), erfc 220 (2800), erfinv 500-680 (26000).

>>> erf(np.array([0.0, 0.5, 3.0]))
array([0.        , 0.52049988, 0.99997791])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp32, exp64
from ._log import log_consts, log_mantissa, split64
from .pointwise import same_layout
from .runtime.dispatch import Kernel
from .runtime.jit import njit

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


def erf_numpy(x: np.ndarray) -> np.ndarray:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``, elementwise.

    The elements of each range are gathered by index (cheaper than computing
    every formula everywhere), and each formula works in place on its buffer.

    >>> erf_numpy(np.array([0.0, 0.5, 3.0]))
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


def erfc_numpy(x: np.ndarray) -> np.ndarray:
    """The complementary error function ``1 - erf(x)``, with its relative precision where it is tiny
    (``erfc(10) = 2.1e-45``): ``erfc(|x|)`` of Cody's ranges, ``2 - erfc(|x|)`` for negative x.

    >>> erfc_numpy(np.array([-1.0, 0.0, 5.0]))
    array([1.84270079e+00, 1.00000000e+00, 1.53745979e-12])
    """
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    ax = np.abs(x)
    small = ax <= _SMALL
    out = np.where(small, 1.0 - erf_numpy(np.where(small, x, 0.0)), 0.0).astype(x.dtype, copy=False)
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


def erfinv_numpy(x: np.ndarray) -> np.ndarray:
    """The inverse of ``erf`` on [-1, 1] (``erfinv(±1) = ±inf``, NaN outside), in x's float dtype.

    Giles' polynomial gives ~7 digits (fewer beyond ``1 - |x| < 1e-7``, the end of its range);
    four steps of Newton's method on ``erf(y) = |x|``, or on ``log erfc(y) = log(1 - |x|)`` for
    ``|x| > 0.5`` (where ``1 - |x|`` is exact and keeps the tail's precision), make it float64's.

    >>> erfinv_numpy(np.array([0.0, 0.5, -0.999]))
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
            rest = erfc_numpy(y)  # (in the tail: Newton on log erfc(y) = log(1 - |x|), nearly a parabola in y)
            step = np.where(tail, (log_rest - np.log(rest)) * rest / slope, (erf_numpy(y) - a_in) / slope)
        y = y - np.where(inside, step, 0.0)
    with np.errstate(invalid="ignore"):
        y = np.where(inside, y, np.where(a == 1, np.inf, np.nan))
    return np.copysign(y, x).astype(dtype, copy=False)


# ------------------------------------------------------------------ the numba kernels
def erf(x: np.ndarray) -> np.ndarray:
    """erf(x) elementwise, a new array of x's shape and float dtype (float64 for other inputs).

    >>> erf(np.array([0.0, 0.5, 3.0]))
    array([0.        , 0.52049988, 0.99997791])
    """
    if x.dtype.kind != "f":
        return erf_numpy(x)
    return _ERF.map(x)


def erfc(x: np.ndarray) -> np.ndarray:
    """1 - erf(x) elementwise, with its relative precision in the tail (as ``erfc_numpy``)."""
    if x.dtype.kind != "f":
        return erfc_numpy(x)
    return _ERFC.map(x)


def erfinv(x: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1] elementwise (±inf at ±1, NaN outside), as ``erfinv_numpy``."""
    if x.dtype.kind != "f":
        return erfinv_numpy(x)
    return _ERFINV.map(x)


def erf_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """grad * 2/sqrt(pi) exp(-x^2), the gradient of erf, in one pass (the formula when the shapes or
    dtypes differ); ``erfc_backward`` is its negative."""
    if not same_layout(grad, x):
        return grad * (_TWO_OVER_SQRT_PI * np.exp(-(x * x)))
    return _ERF_BACKWARD.map(grad, x)


def erfc_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """grad * -2/sqrt(pi) exp(-x^2), the gradient of erfc, in one pass."""
    if not same_layout(grad, x):
        return grad * (-_TWO_OVER_SQRT_PI * np.exp(-(x * x)))
    return _ERFC_BACKWARD.map(grad, x)


def erfinv_backward(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """grad * sqrt(pi)/2 exp(y^2) from the output y = erfinv(x), in one pass."""
    if not same_layout(grad, y):
        return grad * (np.exp(y * y) / _TWO_OVER_SQRT_PI)
    return _ERFINV_BACKWARD.map(grad, y)


# The references with the kernels' signature (x, out) and (grad, x, out).
def _erf_numpy(x, out):
    out[...] = erf_numpy(x)


def _erfc_numpy(x, out):
    out[...] = erfc_numpy(x)


def _erfinv_numpy(x, out):
    out[...] = erfinv_numpy(x)


def _erf_backward_numpy(grad, x, out):
    np.multiply(grad, _TWO_OVER_SQRT_PI * np.exp(-(x * x)), out=out)


def _erfc_backward_numpy(grad, x, out):
    np.multiply(grad, -_TWO_OVER_SQRT_PI * np.exp(-(x * x)), out=out)


def _erfinv_backward_numpy(grad, y, out):
    np.multiply(grad, np.exp(y * y) / _TWO_OVER_SQRT_PI, out=out)


# erf as a rational function of x (Eigen's float32 erf, |error| < 7e-8): multiplies and one
# division, which LLVM vectorises (``math.erf`` is a C call per element, ~16 ns, not vectorised).
_ERF_P = tuple(np.float32(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                                       -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                                       -1.60960333262415e-02))  # fmt: skip
_ERF_Q = tuple(np.float32(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                                       -7.37332916720468e-03, -1.42647390514189e-02))  # fmt: skip
_FOUR32, _ONE32 = np.float32(4.0), np.float32(1.0)
_TWO_OVER_SQRT_PI = 2.0 * _INV_SQRT_PI
_TWO_OVER_SQRT_PI32 = np.float32(_TWO_OVER_SQRT_PI)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def erf32(x):
    """erf(x) of a float32 to float32 precision, in float32 arithmetic (NaN gives ±1: callers that
    can meet NaN put it back)."""
    x = min(max(x, -_FOUR32), _FOUR32)  # erf(±4) is ±1 in float32
    x2 = x * x
    p = _ERF_P[0]
    for c in _ERF_P[1:]:
        p = p * x2 + c
    q = _ERF_Q[0]
    for c in _ERF_Q[1:]:
        q = q * x2 + c
    return min(max(x * (p / q), -_ONE32), _ONE32)  # (at ±4 the rational function is ±(1 + 7e-8))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _erf_small64(x):
    """erf(x) for |x| <= 0.46875, float64 (Cody's first range)."""
    z = x * x
    a = _A[0] * z + _A[1]
    for c in _A[2:]:
        a = a * z + c
    b = _B[0] * z + _B[1]
    for c in _B[2:]:
        b = b * z + c
    return x * a / b


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _erfc_mid64(y):
    """erfc(y) for 0.46875 < y <= 4, float64: exp(-y^2) C(y) / D(y) (``exp64``: vectorises)."""
    c = _C[0] * y + _C[1]
    for k in _C[2:]:
        c = c * y + k
    d = _D[0] * y + _D[1]
    for k in _D[2:]:
        d = d * y + k
    return exp64(-(y * y)) * c / d


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _erfc_tail64(y):
    """erfc(y) for y > 0.46875 (NaN gives NaN), float64: Cody's second and third ranges."""
    if y <= 4.0:
        return _erfc_mid64(y)
    z = 1.0 / (y * y)
    p = _P[0] * z + _P[1]
    for k in _P[2:]:
        p = p * z + k
    q = _Q[0] * z + _Q[1]
    for k in _Q[2:]:
        q = q * z + k
    return exp64(-(y * y)) / y * (_INV_SQRT_PI - z * p / q)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _erf64(x):
    """erf(x) of a float64 (Cody's, as ``erf_numpy``)."""
    if abs(x) <= _SMALL:
        return _erf_small64(x)
    return math.copysign(1.0 - _erfc_tail64(abs(x)), x)


@njit(fastmath={"contract"}, error_model="numpy")
def _erf(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            v = x[i]
            out[i] = erf32(v) if v == v else v
    else:
        for i in range(x.size):
            out[i] = _erf64(x[i])


@njit(fastmath={"contract"}, error_model="numpy")
def _erfc(x, out):
    """erfc in float64 for both dtypes (float32's tail, down to 1e-45, needs float64's exp)."""
    for i in range(x.size):
        v = np.float64(x[i])
        if abs(v) <= _SMALL:
            out[i] = 1.0 - _erf_small64(v)
        else:
            t = _erfc_tail64(abs(v))
            out[i] = 2.0 - t if v < 0 else t


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _giles(a, k):
    """Giles' estimate of erfinv(a) for 0 <= a < 1, float64 (~1e-7 relative), branch-free (both
    polynomials, the right one selected; the log from ``_log.py``'s parts: ``k = log_consts``)."""
    e, m = split64((1.0 - a) * (1.0 + a))  # (a normal number: >= 2e-16)
    w = -(e * k.ln2_hi + (e * k.ln2_lo + log_mantissa(m - 1.0, k)))
    t = w - 2.5
    central = _GILES_CENTRAL[0] * t + _GILES_CENTRAL[1]
    for c in _GILES_CENTRAL[2:]:
        central = central * t + c
    s = math.sqrt(w) - 3.0
    tail = _GILES_TAIL[0] * s + _GILES_TAIL[1]
    for c in _GILES_TAIL[2:]:
        tail = tail * s + c
    return (central if w < 5.0 else tail) * a


@njit(fastmath={"contract"}, error_model="numpy")
def _erfinv(x, out):
    """float32: Giles' estimate and one Newton step on erf (branch-free: vectorises; float32's
    1 - |x| >= 6e-8 keeps y below 4, where the step's float64 erf has its precision); float64:
    the reference's four steps, on log erfc in the tail."""
    k = log_consts(np.empty(0))  # (float64)
    if x.itemsize == 4:
        for i in range(x.size):
            v = np.float64(x[i])
            a = abs(v)
            a_in = a if a < 1.0 else 0.0
            y = _giles(a_in, k)
            mid = _erfc_mid64(min(max(y, _SMALL), 4.0))
            erf_y = _erf_small64(y) if y <= _SMALL else 1.0 - mid
            y = y - (erf_y - a_in) / (_TWO_OVER_SQRT_PI * exp64(-(y * y)))
            y = y if a < 1.0 else (math.inf if a == 1.0 else math.nan)
            y = -y if v < 0 else y  # (a select: math.copysign here made the loop 1.5x slower)
            out[i] = v if a == 0.0 else y  # (±0 keeps its sign)
    else:
        for i in range(x.size):
            v = x[i]
            a = abs(v)
            if not a < 1.0:
                out[i] = math.copysign(math.inf if a == 1.0 else math.nan, v)
                continue
            y = _giles(a, k)
            log_rest = math.log(1.0 - a)
            for _ in range(4):
                slope = _TWO_OVER_SQRT_PI * exp64(-(y * y))
                if a > 0.5:  # Newton on log erfc(y) = log(1 - |x|)
                    rest = _erfc_tail64(y) if y > _SMALL else 1.0 - _erf_small64(y)
                    y -= (log_rest - math.log(rest)) * rest / slope
                else:
                    y -= (_erf64(y) - a) / slope
            out[i] = math.copysign(y, v)


@njit(fastmath={"contract"}, error_model="numpy")
def _erf_backward(grad, x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = grad[i] * (_TWO_OVER_SQRT_PI32 * exp32(-(x[i] * x[i])))
    else:
        for i in range(x.size):
            out[i] = grad[i] * (_TWO_OVER_SQRT_PI * exp64(-(x[i] * x[i])))


@njit(fastmath={"contract"}, error_model="numpy")
def _erfc_backward(grad, x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = grad[i] * (-_TWO_OVER_SQRT_PI32 * exp32(-(x[i] * x[i])))
    else:
        for i in range(x.size):
            out[i] = grad[i] * (-_TWO_OVER_SQRT_PI * exp64(-(x[i] * x[i])))


@njit(fastmath={"contract"}, error_model="numpy")
def _erfinv_backward(grad, y, out):
    """exp(y^2) as 1 / exp(-y^2) (``exp32``/``exp64`` take v <= 0): |y| < 6 below |x| = 1, and
    exp(-inf) = 0 gives inf at ±1 as the formula."""
    if y.itemsize == 4:
        for i in range(y.size):
            out[i] = grad[i] / (_TWO_OVER_SQRT_PI32 * exp32(-(y[i] * y[i])))
    else:
        for i in range(y.size):
            out[i] = grad[i] / (_TWO_OVER_SQRT_PI * exp64(-(y[i] * y[i])))


# Serial ns per element (the ``Kernel``'s ``ns``), float32, on the 2-core VM of docs/performance.md.
_ERF = Kernel(_erf_numpy, _erf, ns=0.3)
_ERFC = Kernel(_erfc_numpy, _erfc, ns=5.0)
_ERFINV = Kernel(_erfinv_numpy, _erfinv, ns=2.0)
_ERF_BACKWARD = Kernel(_erf_backward_numpy, _erf_backward, ns=0.3)
_ERFC_BACKWARD = Kernel(_erfc_backward_numpy, _erfc_backward, ns=0.3)
_ERFINV_BACKWARD = Kernel(_erfinv_backward_numpy, _erfinv_backward, ns=0.5)
