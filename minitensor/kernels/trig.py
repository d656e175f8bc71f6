"""``sin``, ``cos`` and ``tan`` of float32 arrays in one vectorised pass.

NumPy's float32 ``np.sin`` / ``np.cos`` take ~4 ns an element on the AMD VMs of
docs/performance.md (two-thread PyTorch ~2); where NumPy has its AVX-512 loops
(``cpu.numpy_avx512``) those run instead, 1.3x faster than the kernel on the Intel AVX-512 VM
of 2026-11-30 (``numpy_simd``).  The kernel works on float32 SIMD lanes::

    k = the nearest integer to x 2/π,  r = x - k π/2  (|r| <= π/4)
        π/2 = P1 + P2 + P3, three float32 (72 bits), and r = fma(-k, P3, fma(-k, P2, fma(-k, P1, x))):
        each product is exact inside its fma, so r keeps its precision even where x is
        within 1e-8 of a multiple of π/2 (without the fused multiply-add: ~1e8 ulp off there)
    sin r, cos r     Taylor polynomials to r^9 and r^10 (truncated terms < 0.05 ulp at π/4)
    sin x = ±sin r or ±cos r by k mod 4;  cos x = sin(x + π/2): the same with k + 1
    tan x = sin r / cos r for an even k, -cos r / sin r for an odd one

``fma`` is LLVM's ``llvm.fma`` (``_rows.py``): the FMA instruction, or the C library's
``fmaf`` on a machine without one (correct, one element at a time).  Within 1.5 ulp
of the exact value for every float32 with |x| < 2^17 (checked over all of them:
1.49 ulp at most; NumPy's own float32 sin: 1.46 on a sample), ``tan`` within 2.5 (2.37
measured: its polynomials and quotient in float64, one rounding; NumPy's ``tan`` calls the C
library per element off AVX-512: float32 at 2^17, 2.5 ms against PyTorch's 0.39 on one thread,
on the AVX2 AMD EPYC of 2026-12-01), -0.0 kept.  Beyond
``_LIMIT``, and for inf and NaN, a second pass takes the C library's float64 ``sin`` /
``cos`` (inf gives NaN, as NumPy).  float64 arrays keep NumPy's functions.

>>> sin(np.array([0.0, np.pi / 2, -0.0], np.float32))
array([ 0.,  1., -0.], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from ._rows import calls_intrinsics, fma
from .runtime.dispatch import Kernel

_F = np.float32
_TWO_OVER_PI = _F(2.0 / math.pi)
# π/2 = _P1 + _P2 + _P3 to 72 bits (each the float32 nearest the rest: 1.5707964, -4.371139e-08, -1.7151245e-15).
_P1, _P2, _P3 = _F(1.57079637050628662109375), _F(-4.371138828673793e-08), _F(-1.7151245100058819e-15)
_S = (_F(-1 / 6), _F(1 / 120), _F(-1 / 5040), _F(1 / 362880))  # sin r = r + r^3 (S0 + S1 r^2 + ...)
_C = (_F(-1 / 2), _F(1 / 24), _F(-1 / 720), _F(1 / 40320), _F(-1 / 3628800))  # cos r = 1 + r^2 (C0 + ...)
_S64 = (-1 / 6, 1 / 120, -1 / 5040, 1 / 362880)  # (tan's, in float64)
_C64 = (-1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800)
_LIMIT = _F(131072.0)  # 2^17: the range checked ulp by ulp (and |k| < 2^17, exact in float32)


def sin(x: np.ndarray) -> np.ndarray:
    """sin(x) elementwise, a new array of x's shape and dtype (the kernel for float32)."""
    return _SIN.map(x) if x.dtype == np.float32 else np.sin(x)


def cos(x: np.ndarray) -> np.ndarray:
    """cos(x) elementwise, a new array of x's shape and dtype (the kernel for float32)."""
    return _COS.map(x) if x.dtype == np.float32 else np.cos(x)


def tan(x: np.ndarray) -> np.ndarray:
    """tan(x) elementwise, a new array of x's shape and dtype (the kernel for float32)."""
    return _TAN.map(x) if x.dtype == np.float32 else np.tan(x)


def _sin_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.sin(x, out=out)


def _cos_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.cos(x, out=out)


def _tan_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.tan(x, out=out)


@calls_intrinsics(inline="always", fastmath={"contract"})
def _reduced(v):
    """(k, r) for a float32 ``v`` = k π/2 + r, |r| <= π/4 (|v| < _LIMIT)."""
    k = np.floor(v * _TWO_OVER_PI + _F(0.5))
    return k, fma(-k, _P3, fma(-k, _P2, fma(-k, _P1, v)))


@calls_intrinsics(inline="always", fastmath={"contract"})
def _quadrant_sin(v, shift):
    """sin(v + shift π/2) for a float32 ``v`` with |v| < _LIMIT (other values give some number,
    which the caller replaces), ``shift`` 0 or 1."""
    k, r = _reduced(v)
    r2 = r * r
    s = r + r * r2 * (_S[0] + r2 * (_S[1] + r2 * (_S[2] + r2 * _S[3])))
    c = _F(1.0) + r2 * (_C[0] + r2 * (_C[1] + r2 * (_C[2] + r2 * (_C[3] + r2 * _C[4]))))
    q = (np.int32(k) + shift) & 3  # (NaN and inf: some int32, the result replaced later)
    y = c if q & 1 else s  # one select and a sign: with more selects LLVM does not vectorise the loop
    return y * _F(1 - (q & 2))


@calls_intrinsics(fastmath={"contract"}, error_model="numpy")
def _sin(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v if v == 0 else _quadrant_sin(v, 0)  # (sin(-0.0) is -0.0)
    for i in range(x.size):  # beyond the checked range, inf and NaN: the C library, in float64
        if not abs(x[i]) < _LIMIT:
            out[i] = np.float32(math.sin(np.float64(x[i])))


@calls_intrinsics(fastmath={"contract"}, error_model="numpy")
def _cos(x, out):
    for i in range(x.size):
        out[i] = _quadrant_sin(x[i], 1)
    for i in range(x.size):
        if not abs(x[i]) < _LIMIT:
            out[i] = np.float32(math.cos(np.float64(x[i])))


@calls_intrinsics(fastmath={"contract"}, error_model="numpy")
def _tan(x, out):
    for i in range(x.size):
        k, r = _reduced(x[i])
        r = np.float64(r)  # (the polynomials and the quotient in float64: one rounding at the end)
        r2 = r * r
        s = r + r * r2 * (_S64[0] + r2 * (_S64[1] + r2 * (_S64[2] + r2 * _S64[3])))
        c = 1.0 + r2 * (_C64[0] + r2 * (_C64[1] + r2 * (_C64[2] + r2 * (_C64[3] + r2 * _C64[4]))))
        out[i] = np.float32(-c / s if np.int32(k) & 1 else s / c)  # (one select: the loop stays vectorised)
    for i in range(x.size):
        if not abs(x[i]) < _LIMIT:
            out[i] = np.float32(math.tan(np.float64(x[i])))
        elif x[i] == 0:  # (tan(-0.0) is -0.0)
            out[i] = x[i]


# The kernels' time per element, ns (the ``Kernel``'s ``ns``).
_SIN = Kernel(_sin_numpy, _sin, ns=1.3, numpy_simd="sin")
_COS = Kernel(_cos_numpy, _cos, ns=1.3, numpy_simd="cos")
_TAN = Kernel(_tan_numpy, _tan, ns=1.6, numpy_simd="tan")
