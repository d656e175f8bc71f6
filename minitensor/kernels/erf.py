"""The error function ``erf`` and its complement ``erfc``: NumPy references and numba kernels.

The references (``erf_numpy``, ``erfc_numpy``: the definitions the kernels are tested against and
what runs with the JIT off) are W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev
approximations for the error function", Math. Comp. 23, 1969) of
``erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt``, on three ranges of ``|x|``:

- ``|x| <= 0.46875``: ``erf(x) = x * A(x^2) / B(x^2)``;
- ``0.46875 < |x| <= 4``: ``erfc(|x|) = exp(-x^2) * C(|x|) / D(|x|)``;
- ``|x| > 4``: ``erfc(|x|) = exp(-x^2) / |x| * (1/sqrt(pi) - z P(z) / Q(z))`` with ``z = 1/x^2``;

and ``erf(x) = sign(x) * (1 - erfc(|x|))`` outside the first range.  In float64 the absolute error
is below 1e-15; float32 inputs are computed in float32.  ``erfc`` keeps the ranges' ``erfc(|x|)``
itself (its relative precision in the tail, where ``1 - erf`` would round to 0).  ``erf_numpy`` is
also the reference of the GELU kernels (``activation.py``, ``gelu.py``), whose float32 loops take
``erf32``, and ``erfinv.py`` inverts these functions.

The kernels (``erf``, ``erfc``, what the backend runs, and the one-pass gradients ``erf_backward``,
``erfc_backward``), one loop per element:

- ``erf``: float32 by ``erf32`` (Eigen's rational function in float32, |error| < 7e-8, vectorised),
  float64 by Cody's ranges in float64 (``erf64``: numba's ``math.erf`` is a C call of ~16 ns);
- ``erfc``: float32 by ``erfc32``, ``exp(-x^2)`` times a polynomial fitted to ``erfc(x) exp(x^2)``
  in ``t = (|x| - 3) / (|x| + 3)``, in float64 (float32's tail reaches 1e-45), one division, the
  loop vectorised; float64 by Cody's ranges, per element;
- the gradients: ``grad * ±2/sqrt(pi) exp(-x^2)`` with ``_exp.py``'s vectorised exp.

Measured (float32, 2^17 elements, one core of the 2-core VM of docs/performance.md, shared): erf
18 µs (NumPy reference 690), erfc 170 (1970; Cody's three ranges then), each gradient 25 (75); at
16x16 ~1 µs (30-50).  On the AVX2 AMD EPYC of 2026-12-01, one core: float32 erfc 424 µs (654 by
Cody's ranges, four divisions an element).

>>> erf(np.array([0.0, 0.5, 3.0]))
array([0.        , 0.52049988, 0.99997791])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp32, exp64
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
INV_SQRT_PI = 0.56418958354775628695
SMALL = 0.46875


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
    small = np.flatnonzero(ax <= SMALL)
    xs = flat[small]
    z = xs * xs
    r = _horner(_A, z)
    r /= _horner(_B, z)
    r *= xs
    out[small] = r
    # |x| > 0.46875 (and NaN, which propagates): erfc(|x|), then erf = sign(x) * (1 - erfc).
    rest = np.flatnonzero(~(ax <= SMALL))
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
    return np.exp(-y * y) / y * (INV_SQRT_PI - tail)


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
    small = ax <= SMALL
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


def erf_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """grad * 2/sqrt(pi) exp(-x^2), the gradient of erf, in one pass (the formula when the shapes or
    dtypes differ); ``erfc_backward`` is its negative."""
    if not same_layout(grad, x):
        return grad * (TWO_OVER_SQRT_PI * np.exp(-(x * x)))
    return _ERF_BACKWARD.map(grad, x)


def erfc_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """grad * -2/sqrt(pi) exp(-x^2), the gradient of erfc, in one pass."""
    if not same_layout(grad, x):
        return grad * (-TWO_OVER_SQRT_PI * np.exp(-(x * x)))
    return _ERFC_BACKWARD.map(grad, x)


# The references with the kernels' signature (x, out) and (grad, x, out).
def _erf_numpy(x, out):
    out[...] = erf_numpy(x)


def _erfc_numpy(x, out):
    out[...] = erfc_numpy(x)


def _erf_backward_numpy(grad, x, out):
    np.multiply(grad, TWO_OVER_SQRT_PI * np.exp(-(x * x)), out=out)


def _erfc_backward_numpy(grad, x, out):
    np.multiply(grad, -TWO_OVER_SQRT_PI * np.exp(-(x * x)), out=out)


# erf as a rational function of x (Eigen's float32 erf, |error| < 7e-8): multiplies and one
# division, which LLVM vectorises (``math.erf`` is a C call per element, ~16 ns, not vectorised).
_ERF_P = tuple(np.float32(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                                       -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                                       -1.60960333262415e-02))  # fmt: skip
_ERF_Q = tuple(np.float32(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                                       -7.37332916720468e-03, -1.42647390514189e-02))  # fmt: skip
_FOUR32, _ONE32 = np.float32(4.0), np.float32(1.0)
TWO_OVER_SQRT_PI = 2.0 * INV_SQRT_PI
TWO_OVER_SQRT_PI32 = np.float32(TWO_OVER_SQRT_PI)


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
def _horner64(coeffs, z):
    """The polynomial ``coeffs`` (a tuple, highest power first) at ``z``, float64, inlined (the
    kernels' ``_horner``)."""
    acc = coeffs[0] * z + coeffs[1]
    for c in coeffs[2:]:
        acc = acc * z + c
    return acc


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def erf_small64(x):
    """erf(x) for |x| <= 0.46875, float64."""
    z = x * x
    return x * _horner64(_A, z) / _horner64(_B, z)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _erfc_mid64(y):
    """erfc(y) for 0.46875 < y <= 4, float64 (``exp64``: vectorises)."""
    return exp64(-(y * y)) * _horner64(_C, y) / _horner64(_D, y)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def erfc_tail64(y):
    """erfc(y) for y > 0.46875 (NaN gives NaN), float64: Cody's second and third ranges."""
    if y <= 4.0:
        return _erfc_mid64(y)
    z = 1.0 / (y * y)
    return exp64(-(y * y)) / y * (INV_SQRT_PI - z * _horner64(_P, z) / _horner64(_Q, z))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def erf64(x):
    """erf(x) of a float64 (Cody's, as ``erf_numpy``)."""
    if abs(x) <= SMALL:
        return erf_small64(x)
    return math.copysign(1.0 - erfc_tail64(abs(x)), x)


@njit(fastmath={"contract"}, error_model="numpy")
def _erf(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            v = x[i]
            out[i] = erf32(v) if v == v else v
    else:
        for i in range(x.size):
            out[i] = erf64(x[i])


# erfc(a) exp(a^2) for 0 <= a <= 10.5 (beyond, float32's erfc is 0) as a polynomial in
# t = (a - 3) / (a + 3), highest power first: a least-squares fit at 1,500 Chebyshev points of t,
# weighted by 1 / erfc(a) exp(a^2) (mpmath's values), relative error < 4e-11 on a grid of 20,001.
_ERFCX = (-6.830373146876858e-06, -9.872061399193289e-06, 6.383784692277138e-05, 4.349400540319425e-05,
          -5.971408330941565e-04, 7.08266151476418e-04, 4.269165072976095e-03, -2.4392576605450085e-02,
          7.166583527435766e-02, -1.5011593147840532e-01, 2.456038016665043e-01, -3.2623356013455174e-01,
          1.7900115118289256e-01)  # fmt: skip
_ERFCX_CENTRE, _ERFCX_END = 3.0, 10.5


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def erfc32(x):
    """erfc of a float32 ``x``, computed in float64 (``x * x`` is exact there, so exp(-x^2) keeps
    the tail's relative precision down to float32's 1e-45): exp(-x^2) times the fitted
    ``_ERFCX``, one division; within half a float32 ulp and a hair of the exact value."""
    v = np.float64(x)
    a = abs(v)
    c = min(a, _ERFCX_END)  # (inf too: exp gives 0 there)
    r = exp64(-(a * a)) * _horner64(_ERFCX, (c - _ERFCX_CENTRE) / (c + _ERFCX_CENTRE))
    return 2.0 - r if v < 0 else r


@njit(fastmath={"contract"}, error_model="numpy")
def _erfc(x, out):
    """erfc: float32 by ``erfc32``, float64 by Cody's range of each element."""
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = erfc32(x[i])
    else:
        for i in range(x.size):
            v = x[i]
            if abs(v) <= SMALL:
                out[i] = 1.0 - erf_small64(v)
            else:
                t = erfc_tail64(abs(v))
                out[i] = 2.0 - t if v < 0 else t


@njit(fastmath={"contract"}, error_model="numpy")
def _erf_backward(grad, x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = grad[i] * (TWO_OVER_SQRT_PI32 * exp32(-(x[i] * x[i])))
    else:
        for i in range(x.size):
            out[i] = grad[i] * (TWO_OVER_SQRT_PI * exp64(-(x[i] * x[i])))


@njit(fastmath={"contract"}, error_model="numpy")
def _erfc_backward(grad, x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = grad[i] * (-TWO_OVER_SQRT_PI32 * exp32(-(x[i] * x[i])))
    else:
        for i in range(x.size):
            out[i] = grad[i] * (-TWO_OVER_SQRT_PI * exp64(-(x[i] * x[i])))


# Serial ns per element (the ``Kernel``'s ``ns``), float32, on the 2-core VM of docs/performance.md.
_ERF = Kernel(_erf_numpy, _erf, ns=0.3)
_ERFC = Kernel(_erfc_numpy, _erfc, ns=1.2)
_ERF_BACKWARD = Kernel(_erf_backward_numpy, _erf_backward, ns=0.3)
_ERFC_BACKWARD = Kernel(_erfc_backward_numpy, _erfc_backward, ns=0.3)
