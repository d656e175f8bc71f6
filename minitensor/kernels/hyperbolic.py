"""``sinh``, ``cosh`` and ``atanh`` of whole arrays in one vectorised pass each, from the SIMD ``exp``,
``expm1`` and ``log1p``.

NumPy's loops for these are SIMD only for AVX-512 (``cpu.numpy_avx512``: those run instead,
``numpy_simd``); elsewhere they call the C library one element at a time: on the AVX2 AMD EPYC of
2026-12-01, float32 at 2^17 elements, sinh 4.0 ms, cosh 1.3, atanh 3.6 against PyTorch's 0.37, 0.33
and 0.37 on one thread (the kernels ~0.1).  With ``a = |x|``::

    sinh x  = sign(x) (u + u / (u + 1)) / 2,   u = expm1(a)      (e^a - e^-a = u + 1 - 1 / (u + 1))
    cosh x  = (1 / t + t) / 2,                  t = exp(-a)
    both, where a > BIG (e^-a below half an ulp of e^a):  e^a / 2 = 2^(k - 1) exp(r),  a = k ln2 + r
    atanh x = sign(x) log1p(w) / 2,  w = 2a / (1 - a), or 2a + 2a a / (1 - a) below a = 1/2 (fdlibm's)
    asinh x = sign(x) log1p(a + a² / (1 + sqrt(1 + a²)));  acosh x = log1p(t + sqrt(2t + t²)), t = x - 1
    both, where a (x) > HUGE (the rest below 2^-26 of the result):  log1p(a - 1) + ln 2 = log(2a)

``expm1`` keeps sinh's relative precision near 0 (``expm1.py``'s ``expm1_32``/``expm1_64``), ``exp``
takes arguments <= 0 (``_exp.py``'s ``exp32``/``exp64``), and ``e^a / 2`` is ``_exp.py``'s range
reduction and polynomial with the exponent one less: one rounding, and no overflow before the
result's own (float32 sinh reaches inf at a = 89.42, e^a already at 88.72); ``log1p`` is
``log1p.py``'s.  Within 2.75 ulp of the exact value in both dtypes
(``tests/kernels/test_hyperbolic_kernel.py``); -0.0 stays -0.0 (sinh, atanh), ``±inf`` gives ``±inf``
(``cosh``: inf), atanh ``±1`` gives ``±inf`` and NaN beyond, acosh NaN below 1, NaN NaN.  The
references are NumPy's ``np.sinh``, ``np.cosh``, ``np.arcsinh``, ``np.arccosh`` and ``np.arctanh``.

>>> sinh(np.array([0.0, 1.0, -np.inf]))
array([0.        , 1.17520119,       -inf])
>>> cosh(np.array([0.0, 1.0, -np.inf]))
array([1.        , 1.54308063,        inf])
>>> atanh(np.array([0.0, 0.5, -1.0]))
array([0.        , 0.54930614,       -inf])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import (
    _LN2_HI32,
    _LN2_HI64,
    _LN2_LO32,
    _LN2_LO64,
    _LOG2E,
    exp32,
    exp64,
    near_zero32,
    near_zero64,
    scale32,
    scale64,
)
from ._log import log_consts, split32, split64
from .expm1 import expm1_32, expm1_64
from .log1p import _log1p_one
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_BIG32, _BIG64 = 10.0, 20.0  # e^-2a below 2^-28 / 2^-57: the small term is gone from the sum
_HUGE32, _HUGE64 = 4096.0, 268435456.0  # 2^12, 2^28: 1 / (4 a²) below 2^-26 / 2^-58 of log(2a)


def sinh(x: np.ndarray) -> np.ndarray:
    """The hyperbolic sine elementwise (a new array of ``x``'s shape and dtype)."""
    return _SINH.map(x)


def cosh(x: np.ndarray) -> np.ndarray:
    """The hyperbolic cosine elementwise (a new array of ``x``'s shape and dtype)."""
    return _COSH.map(x)


def atanh(x: np.ndarray) -> np.ndarray:
    """The inverse hyperbolic tangent elementwise (a new array of ``x``'s shape and dtype)."""
    return _ATANH.map(x)


def asinh(x: np.ndarray) -> np.ndarray:
    """The inverse hyperbolic sine elementwise (a new array of ``x``'s shape and dtype)."""
    return _ASINH.map(x)


def acosh(x: np.ndarray) -> np.ndarray:
    """The inverse hyperbolic cosine elementwise: NaN below 1 (a new array of ``x``'s shape and dtype)."""
    return _ACOSH.map(x)


def _sinh_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(over="ignore"):  # (inf beyond |x| ~ 89 / 710, silently as PyTorch)
        np.sinh(x, out=out)


def _cosh_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(over="ignore"):
        np.cosh(x, out=out)


def _asinh_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.arcsinh(x, out=out)


def _acosh_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(invalid="ignore"):  # (NaN below 1, silently as PyTorch)
        np.arccosh(x, out=out)


def _atanh_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(divide="ignore", invalid="ignore"):  # (±inf at ±1, NaN beyond, silently as PyTorch)
        np.arctanh(x, out=out)


@njit(inline="always", fastmath={"contract"})
def _half_exp32(a):
    """e^a / 2 for a float32 ``a >= 0`` (or NaN): inf from where the result overflows."""
    f = np.float32
    k = np.floor(a * f(_LOG2E) + f(0.5))
    k = k if k < f(130.0) else f(130.0)  # (beyond: inf anyway; NaN stays NaN through r)
    r = (a - k * f(_LN2_HI32)) - k * f(_LN2_LO32)
    return scale32(near_zero32(r), k - f(1.0))


@njit(inline="always", fastmath={"contract"})
def _half_exp64(a):
    """e^a / 2 for a float64 ``a >= 0`` (or NaN)."""
    k = np.floor(a * _LOG2E + 0.5)
    k = k if k < 1030.0 else 1030.0
    r = (a - k * _LN2_HI64) - k * _LN2_LO64
    return scale64(near_zero64(r), k - 1.0)


@njit(inline="always", fastmath={"contract"})
def _sinh32(v):
    f = np.float32
    a = abs(v)
    u = expm1_32(a)
    return math.copysign(f(0.5) * (u + u / (u + f(1.0))) if a <= f(_BIG32) else _half_exp32(a), v)


@njit(inline="always", fastmath={"contract"})
def _sinh64(v):
    a = abs(v)
    u = expm1_64(a)
    return math.copysign(0.5 * (u + u / (u + 1.0)) if a <= _BIG64 else _half_exp64(a), v)


@njit(inline="always", fastmath={"contract"})
def _cosh32(v):
    f = np.float32
    a = abs(v)
    t = exp32(-a)
    return f(0.5) * (f(1.0) / t + t) if a <= f(_BIG32) else _half_exp32(a)


@njit(inline="always", fastmath={"contract"})
def _cosh64(v):
    a = abs(v)
    t = exp64(-a)
    return 0.5 * (1.0 / t + t) if a <= _BIG64 else _half_exp64(a)


@njit(fastmath={"contract"}, error_model="numpy")
def _sinh(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = _sinh32(x[i])
    else:
        for i in range(x.size):
            out[i] = _sinh64(x[i])


@njit(fastmath={"contract"}, error_model="numpy")
def _cosh(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = _cosh32(x[i])
    else:
        for i in range(x.size):
            out[i] = _cosh64(x[i])


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _log1p32(w, k):
    """log1p of a float32 ``w`` (``log1p.py``'s core; ``k``: ``log_consts``)."""
    u = k.one + w
    e, m = split32(u)
    return _log1p_one(w, u, e, m, k)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _log1p64(w, k):
    u = k.one + w
    e, m = split64(u)
    return _log1p_one(w, u, e, m, k)


@njit(fastmath={"contract"}, error_model="numpy")
def _atanh(x, out):
    k = log_consts(x)
    half = k.one / (k.one + k.one)
    if x.itemsize == 4:
        for i in range(x.size):
            a = abs(x[i])
            w = (a + a) / (k.one - a)
            w = (a + a) + (a + a) * a / (k.one - a) if a < half else w
            out[i] = math.copysign(half * _log1p32(w, k), x[i])
    else:
        for i in range(x.size):
            a = abs(x[i])
            w = (a + a) / (k.one - a)
            w = (a + a) + (a + a) * a / (k.one - a) if a < half else w
            out[i] = math.copysign(half * _log1p64(w, k), x[i])


@njit(fastmath={"contract"}, error_model="numpy")
def _asinh(x, out):
    k = log_consts(x)
    if x.itemsize == 4:
        huge, ln2 = np.float32(_HUGE32), np.float32(math.log(2.0))
        for i in range(x.size):
            a = abs(x[i])
            w = a + a * a / (k.one + math.sqrt(k.one + a * a))
            r = _log1p32(a - k.one, k) + ln2 if a > huge else _log1p32(w, k)
            out[i] = math.copysign(r, x[i])
    else:
        for i in range(x.size):
            a = abs(x[i])
            w = a + a * a / (k.one + math.sqrt(k.one + a * a))
            r = _log1p64(a - k.one, k) + math.log(2.0) if a > _HUGE64 else _log1p64(w, k)
            out[i] = math.copysign(r, x[i])


@njit(fastmath={"contract"}, error_model="numpy")
def _acosh(x, out):
    k = log_consts(x)
    if x.itemsize == 4:
        huge, ln2 = np.float32(_HUGE32), np.float32(math.log(2.0))
        for i in range(x.size):
            v = x[i]
            t = v - k.one
            r = _log1p32(t, k) + ln2 if v > huge else _log1p32(t + math.sqrt(t + t + t * t), k)
            out[i] = r if v >= k.one else np.float32(np.nan)
    else:
        for i in range(x.size):
            v = x[i]
            t = v - k.one
            r = _log1p64(t, k) + math.log(2.0) if v > _HUGE64 else _log1p64(t + math.sqrt(t + t + t * t), k)
            out[i] = r if v >= k.one else np.nan


_SINH = Kernel(_sinh_numpy, _sinh, numpy_simd="sinh")
_COSH = Kernel(_cosh_numpy, _cosh, numpy_simd="cosh")
_ASINH = Kernel(_asinh_numpy, _asinh, numpy_simd="arcsinh")
_ACOSH = Kernel(_acosh_numpy, _acosh, numpy_simd="arccosh")
_ATANH = Kernel(_atanh_numpy, _atanh, numpy_simd="arctanh")
