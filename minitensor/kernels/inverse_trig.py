"""``asin``, ``acos``, ``atan`` and ``atan2`` of float32 arrays in one vectorised pass each (Cephes'
``asinf``, ``acosf``, ``atanf``).

NumPy's float32 ``arcsin`` / ``arccos`` / ``arctan`` are SIMD only for AVX-512 (``cpu.numpy_avx512``:
those run instead, ``numpy_simd``); elsewhere they call the C library one element at a time: at 2^17
elements on the AVX2 AMD EPYC of 2026-12-01, arctan 2.1 ms and arcsin 0.7 against PyTorch's 0.40 and
0.28 on one thread.  Cephes' single-precision methods, each polynomial fitted for float32, evaluated
in float64 here (one rounding at the end, no cancellation in ``π/2 - 2y``)::

    asin x:  a = |x|;  a <= 1/2:  a + a z P(z), z = a²
                        a > 1/2:   π/2 - 2 (s + s z P(z)),  z = (1 - a) / 2,  s = sqrt(z)
    acos x:  π/2 - asin x for |x| <= 1/2;  2 asin(sqrt((1 - x) / 2)) above;  π - 2 asin(sqrt((1 + x) / 2)) below
    atan x:  a = |x| reduced to t = a, (a - 1) / (a + 1) (+ π/4) or -1 / a (+ π/2) by a's size,
             then t + t t² Q(t²)
    atan2(y, x):  atan(y / x) (the quotient in float64: no overflow), ± π for x < 0 by y's sign;
             where x is 0 or either is not finite, a second pass takes the C library's ``atan2``

with the sign of x (asin, atan; -0.0 stays -0.0).  Within 1 ulp of the exact value (0.58, 0.58 and
0.82 measured; NumPy's own 0.84-0.89: ``tests/kernels/test_inverse_trig_kernel.py``); |x| > 1 gives NaN
(asin, acos), atan(±inf) = ±π/2, NaN NaN.  float64 arrays keep NumPy's functions.

>>> atan(np.array([0.0, 1.0, -np.inf], np.float32))
array([ 0.       ,  0.7853982, -1.5707964], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit

_HALF_PI, _QUARTER_PI = math.pi / 2, math.pi / 4
_ASIN = (4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2, 1.6666752422e-1)  # P, highest first
_ATAN = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)  # Q, highest first
_TAN_3PI_8, _TAN_PI_8 = 2.414213562373095, 0.4142135623730950


def asin(x: np.ndarray) -> np.ndarray:
    """arcsin(x) elementwise, a new array of x's shape and dtype (the kernel for float32)."""
    return _ASIN_KERNEL.map(x) if x.dtype == np.float32 else _numpy(np.arcsin, x)


def acos(x: np.ndarray) -> np.ndarray:
    """arccos(x) elementwise (the kernel for float32)."""
    return _ACOS_KERNEL.map(x) if x.dtype == np.float32 else _numpy(np.arccos, x)


def atan(x: np.ndarray) -> np.ndarray:
    """arctan(x) elementwise (the kernel for float32)."""
    return _ATAN_KERNEL.map(x) if x.dtype == np.float32 else np.arctan(x)


def atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """arctan2(y, x) elementwise, the two broadcast (the kernel for two float32 arrays)."""
    if y.dtype != np.float32 or x.dtype != np.float32:
        return np.arctan2(y, x)
    if y.shape != x.shape:
        y, x = np.broadcast_arrays(y, x)
    return _ATAN2_KERNEL.map(y, x)


def _numpy(ufunc, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # (NaN outside [-1, 1], silently as PyTorch)
        return ufunc(x, out=out)


def _asin_numpy(x: np.ndarray, out: np.ndarray) -> None:
    _numpy(np.arcsin, x, out)


def _acos_numpy(x: np.ndarray, out: np.ndarray) -> None:
    _numpy(np.arccos, x, out)


def _atan_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.arctan(x, out=out)


def _atan2_numpy(y: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    np.arctan2(y, x, out=out)


@njit(inline="always", fastmath={"contract"})
def _asin_small(s):
    """asin of a float64 ``s`` in [0, 1/2]: s + s z P(z), z = s²."""
    z = s * s
    p = (((_ASIN[0] * z + _ASIN[1]) * z + _ASIN[2]) * z + _ASIN[3]) * z + _ASIN[4]
    return s + s * z * p


@njit(inline="always", fastmath={"contract"})
def _folded(a):
    """``_asin_small``'s argument for an ``a`` in [0, 1]: a itself up to 1/2, sqrt((1 - a) / 2) above
    (NaN above 1), where asin a = π/2 - 2 asin(sqrt((1 - a) / 2))."""
    return math.sqrt(0.5 * (1.0 - a)) if a > 0.5 else a


@njit(fastmath={"contract"}, error_model="numpy")
def _asin(x, out):
    for i in range(x.size):
        v = np.float64(x[i])
        a = abs(v)
        h = _asin_small(_folded(a))
        out[i] = np.float32(math.copysign(_HALF_PI - (h + h) if a > 0.5 else h, v))


@njit(fastmath={"contract"}, error_model="numpy")
def _acos(x, out):
    for i in range(x.size):
        v = np.float64(x[i])
        a = abs(v)
        h = _asin_small(_folded(a))  # (|x| > 1/2: acos |x| = 2 asin(sqrt((1 - |x|) / 2)))
        outer = h + h if v > 0 else math.pi - (h + h)
        out[i] = np.float32(_HALF_PI - math.copysign(h, v) if a <= 0.5 else outer)


@njit(inline="always", fastmath={"contract"})
def _atan64(v):
    """atan of a float64 ``v`` (Cephes' reduction and float32 polynomial: float32 precision)."""
    a = abs(v)
    t = -1.0 / a if a > _TAN_3PI_8 else ((a - 1.0) / (a + 1.0) if a > _TAN_PI_8 else a)
    base = _HALF_PI if a > _TAN_3PI_8 else (_QUARTER_PI if a > _TAN_PI_8 else 0.0)
    z = t * t
    q = ((_ATAN[0] * z + _ATAN[1]) * z + _ATAN[2]) * z + _ATAN[3]
    return math.copysign(base + (t + t * z * q), v)


@njit(fastmath={"contract"}, error_model="numpy")
def _atan(x, out):
    for i in range(x.size):
        out[i] = np.float32(_atan64(np.float64(x[i])))


@njit(fastmath={"contract"}, error_model="numpy")
def _atan2(y, x, out):
    for i in range(out.size):
        b, a = np.float64(x[i]), np.float64(y[i])
        angle = _atan64(a / b)
        out[i] = np.float32(angle + math.copysign(math.pi, a) if b < 0.0 else angle)
    for i in range(out.size):  # (x = 0, infinities, NaN: the C library's signed zeros and quadrants)
        if x[i] == 0 or not (abs(x[i]) < np.inf and abs(y[i]) < np.inf):
            out[i] = np.float32(math.atan2(np.float64(y[i]), np.float64(x[i])))


_ASIN_KERNEL = Kernel(_asin_numpy, _asin, numpy_simd="arcsin")
_ACOS_KERNEL = Kernel(_acos_numpy, _acos, numpy_simd="arccos")
_ATAN_KERNEL = Kernel(_atan_numpy, _atan, numpy_simd="arctan")
_ATAN2_KERNEL = Kernel(_atan2_numpy, _atan2, numpy_simd="arctan2")
