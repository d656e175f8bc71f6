"""The inverse error function ``erfinv`` on [-1, 1]: NumPy reference and numba kernel.

The reference ``erfinv_numpy`` (the definition the kernel is tested against, and what runs with the
JIT off) starts from M. Giles' single-precision approximation ("Approximating the erfinv function",
GPU Computing Gems, 2011), a polynomial in ``w = -log(1 - x^2)``, and takes four steps of Newton's
method on ``erf(y) = |x|``, or on ``log erfc(y) = log(1 - |x|)`` for ``|x| > 0.5`` (where ``1 - |x|``
is exact and keeps the tail's precision), with ``erf.py``'s functions: float64's precision.
``erfinv(±1) = ±inf``, NaN outside [-1, 1], ``erfinv(-0.0) = -0.0``.

The kernel ``erfinv`` (what the backend runs): float32 inputs by Giles' double-precision
polynomials in float64, both ranges summed and one selected (the loop vectorises; float32's
``1 - |x| >= 6e-8`` keeps w below 16, so the third range is never needed): equal to the reference
but for ties; float64 inputs by the reference's steps, per element (``erf.py``'s Cody functions in
numba).  The gradient ``erfinv_backward`` is ``grad * sqrt(pi)/2 exp(y^2)`` from the output y, one pass.

Measured (float32 in (-1, 1), 2^17 elements, one core of the 2-core VM of docs/performance.md,
shared): 300 µs (NumPy reference 19000), the gradient 27 (74); at 16x16 1.5 µs (350).

>>> erfinv(np.array([0.0, 0.5, -0.999]))
array([ 0.        ,  0.47693628, -2.32675377])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp32, exp64
from ._log import log_consts, log_mantissa, split64
from .erf import (
    INV_SQRT_PI,
    SMALL,
    TWO_OVER_SQRT_PI,
    TWO_OVER_SQRT_PI32,
    erf64,
    erf_numpy,
    erf_small64,
    erfc_numpy,
    erfc_tail64,
)
from .pointwise import same_layout
from .runtime.dispatch import Kernel
from .runtime.jit import njit

# M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): single-precision
# polynomials in w = -log(1 - x^2), highest power first; two Newton steps then give float64.
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip

# Giles' double-precision polynomials (the same paper), for the float32 kernel: w < 6.25 in w - 3.125,
# and 6.25 <= w < 16 in sqrt(w) - 3.25 (float32's |x| <= 1 - 6e-8 keeps w below 16).
_GILES_DOUBLE_CENTRAL = np.array((
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18, 1.115787767802518096e-17,
    -1.333171662854620906e-16, 2.0972767875968561637e-17, 6.6376381343583238325e-15, -4.0545662729752068639e-14,
    -8.1519341976054721522e-14, 2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08, 4.2347877827932403518e-07,
    -1.3654692000834678645e-06, -1.3882523362786468719e-05, 0.0001867342080340571352, -0.00074070253416626697512,
    -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356))  # fmt: skip
_GILES_DOUBLE_TAIL = np.array((
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07, 1.8239629214389227755e-08,
    1.5027403968909827627e-06, -4.013867526981545969e-06, 2.9234449089955446044e-06, 1.2475304481671778723e-05,
    -4.7318229009055733981e-05, 6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066, -0.0037512085075692412107,
    0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635))  # fmt: skip


def erfinv_numpy(x: np.ndarray) -> np.ndarray:
    """The inverse of ``erf`` on [-1, 1] (``erfinv(±1) = ±inf``, NaN outside), in x's float dtype (the reference).

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
        slope = 2 * INV_SQRT_PI * np.exp(-y * y)  # d erf / dy
        with np.errstate(divide="ignore", invalid="ignore"):
            rest = erfc_numpy(y)  # (in the tail: Newton on log erfc(y) = log(1 - |x|), nearly a parabola in y)
            step = np.where(tail, (log_rest - np.log(rest)) * rest / slope, (erf_numpy(y) - a_in) / slope)
        y = y - np.where(inside, step, 0.0)
    with np.errstate(invalid="ignore"):
        y = np.where(inside, y, np.where(a == 1, np.inf, np.nan))
    return np.copysign(y, x).astype(dtype, copy=False)


# ------------------------------------------------------------------ the numba kernel
def erfinv(x: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1] elementwise (±inf at ±1, NaN outside), as ``erfinv_numpy``."""
    if x.dtype.kind != "f":
        return erfinv_numpy(x)
    return _ERFINV.map(x)


def erfinv_backward(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """grad * sqrt(pi)/2 exp(y^2) from the output y = erfinv(x), in one pass."""
    if not same_layout(grad, y):
        return grad * (np.exp(y * y) / TWO_OVER_SQRT_PI)
    return _ERFINV_BACKWARD.map(grad, y)


# The references with the kernels' signature (x, out) and (grad, y, out).
def _erfinv_numpy(x, out):
    out[...] = erfinv_numpy(x)


def _erfinv_backward_numpy(grad, y, out):
    np.multiply(grad, np.exp(y * y) / TWO_OVER_SQRT_PI, out=out)


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


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _polynomial(t, coefficients):
    """The polynomial ``coefficients`` (a module-level array, highest power first) at t: numba sees
    the array's size as a constant, so the loop unrolls and the caller's loop vectorises."""
    p = coefficients[0]
    for j in range(1, coefficients.size):
        p = p * t + coefficients[j]
    return p


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _giles_double(a, k):
    """erfinv(a) for 0 <= a < 1 - 5.6e-8 (all of float32's), float64 to ~1e-16 relative, branch-free:
    Giles' double-precision polynomials of w = -log(1 - a^2) for w < 6.25 and w < 16, both summed,
    one selected (``k = log_consts``: the log from ``_log.py``'s parts)."""
    e, m = split64((1.0 - a) * (1.0 + a))  # (a normal number: >= 2e-16)
    w = -(e * k.ln2_hi + (e * k.ln2_lo + log_mantissa(m - 1.0, k)))
    central = _polynomial(w - 3.125, _GILES_DOUBLE_CENTRAL)
    tail = _polynomial(math.sqrt(w) - 3.25, _GILES_DOUBLE_TAIL)
    return (central if w < 6.25 else tail) * a


@njit(fastmath={"contract"}, error_model="numpy")
def _erfinv(x, out):
    """float32: Giles' double-precision polynomials, branch-free (vectorises), as the reference to the
    last bit but for ties; float64: the reference's single-precision estimate and four Newton steps,
    on log erfc in the tail, per element."""
    k = log_consts(np.empty(0))  # (float64)
    if x.itemsize == 4:
        for i in range(x.size):
            v = np.float64(x[i])
            a = abs(v)
            a_in = a if a < 1.0 else 0.0
            y = _giles_double(a_in, k)
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
                slope = TWO_OVER_SQRT_PI * exp64(-(y * y))
                if a > 0.5:  # Newton on log erfc(y) = log(1 - |x|)
                    rest = erfc_tail64(y) if y > SMALL else 1.0 - erf_small64(y)
                    y -= (log_rest - math.log(rest)) * rest / slope
                else:
                    y -= (erf64(y) - a) / slope
            out[i] = math.copysign(y, v)


@njit(fastmath={"contract"}, error_model="numpy")
def _erfinv_backward(grad, y, out):
    """exp(y^2) as 1 / exp(-y^2) (``exp32``/``exp64`` take v <= 0): |y| < 6 below |x| = 1, and
    exp(-inf) = 0 gives inf at ±1 as the formula."""
    if y.itemsize == 4:
        for i in range(y.size):
            out[i] = grad[i] / (TWO_OVER_SQRT_PI32 * exp32(-(y[i] * y[i])))
    else:
        for i in range(y.size):
            out[i] = grad[i] / (TWO_OVER_SQRT_PI * exp64(-(y[i] * y[i])))


# Serial ns per element (the ``Kernel``'s ``ns``), float32.
_ERFINV = Kernel(_erfinv_numpy, _erfinv, ns=2.3)
_ERFINV_BACKWARD = Kernel(_erfinv_backward_numpy, _erfinv_backward, ns=0.2)
