"""``exp`` and ``log`` of whole arrays, over their full range, in one vectorised pass each.

NumPy's float32 ``np.exp`` / ``np.log`` took ~3.5 ns an element on the AVX2 VM of
docs/performance.md (its SIMD loops are not built for that CPU there), the kernels ~1.  Where
NumPy has its AVX-512 loops (``cpu.numpy_avx512``), ``exp``, ``log`` and ``log2`` run those
instead (``numpy_simd``): 1.2-2.5x faster than the kernels on the Intel AVX-512 VM of 2026-11-30.
``log10`` keeps its kernel in float32 (NumPy's missed the exponent of 46 of 76 powers of ten there).
Both reuse the SIMD cores the row kernels use:

- ``exp``: ``x = k ln2 + r`` with ``k`` the nearest integer (``ln 2`` in two parts, ``k ln2_hi``
  exact), ``exp(r)`` by ``_exp.py``'s polynomial (``|r| <= ln2 / 2``), and ``2^k`` from its bits
  in two factors, each a normal float, so that results near overflow and subnormal ones
  come out right.  Overflow gives inf, ``-inf`` 0, NaN NaN.
- ``log``: ``x = 2^e m`` with ``m`` in [sqrt(1/2), sqrt(2)) read from the bits (a subnormal
  ``x`` scaled by 2^24 first), ``log x = e ln2 + log1p(m - 1)`` by ``_log.py``'s core
  (fdlibm's).  ``log 0 = -inf``, negative numbers give NaN, ``inf`` inf, silently (as PyTorch).

- ``log2``: ``e + log(m) / ln 2`` from the same split, so powers of two give their exponent
  exactly (``log(x) / ln 2`` does not: 2^-15 gave -14.999999 in float32);
- ``log10`` of float32: ``e log10(2) + log(m) / ln 10`` with ``log10(2)`` in two parts (musl's
  ``log10f``: ``e`` times the first is exact) and ``log(m) / ln 10`` as a product compensated
  by a fused multiply-add (``_rows.fma``) and the rest of ``1 / ln 10``: the float32 nearest to
  every power of ten gives its exponent exactly; float64 keeps ``np.log10`` (the C library:
  exact there too, where ``log(x) / ln 10`` missed 14 of 10^-7 ... 10^7).

Within 2 ulp of the exact value in both dtypes (``tests/kernels/test_exp_log_kernel.py``);
the NumPy references are ``np.exp``, ``np.log``, ``np.log2`` and ``np.log10``.

>>> exp(np.array([0.0, 1.0, -np.inf]))
array([1.        , 2.71828183, 0.        ])
>>> log(np.array([1.0, np.e, 0.0]))
array([  0.,   1., -inf])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import _LN2_HI32, _LN2_HI64, _LN2_LO32, _LN2_LO64, _LOG2E, near_zero32, near_zero64, scale32, scale64
from ._log import log_consts, log_mantissa, split32, split64
from ._rows import calls_intrinsics, fma
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_INV_LN10 = np.float32(1.0 / math.log(10.0))
_INV_LN10_LO = np.float32(1.0 / math.log(10.0) - float(_INV_LN10))  # (1 / ln 10 to ~48 bits in two float32)
_LOG10_2_HI, _LOG10_2_LO = np.float32(3.0102920532e-01), np.float32(7.9034151668e-07)  # musl's log10f


def exp(x: np.ndarray) -> np.ndarray:
    """e ** x elementwise (a new array of ``x``'s shape and dtype; NumPy's ``exp`` for other than float
    arrays, e.g. a Tensor in a backward formula under create_graph, which answers it with its own op)."""
    if type(x) is not np.ndarray or x.dtype.kind != "f":
        return np.exp(x)
    return _EXP.map(x)


def log(x: np.ndarray) -> np.ndarray:
    """The natural logarithm elementwise (a new array of ``x``'s shape and dtype; NumPy's ``log`` for
    other than floats)."""
    if x.dtype.kind != "f":
        return np.log(x)
    return _LOG.map(x)


def log2(x: np.ndarray) -> np.ndarray:
    """The base-2 logarithm elementwise (a new array of ``x``'s shape and dtype)."""
    return _LOG2.map(x)


def log10(x: np.ndarray) -> np.ndarray:
    """The base-10 logarithm elementwise (a new array of ``x``'s shape and dtype; the kernel for float32)."""
    if x.dtype == np.float32:
        return _LOG10.map(x)
    with np.errstate(divide="ignore", invalid="ignore"):  # (float64: the C library's, silently)
        return np.log10(x)


def _exp_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(over="ignore"):  # (silently inf, as PyTorch)
        np.exp(x, out=out)


def _log_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(divide="ignore", invalid="ignore"):  # (-inf and NaN silently, as PyTorch)
        np.log(x, out=out)


def _log2_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log2(x, out=out)


def _log10_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log10(x, out=out)


@njit(inline="always", fastmath={"contract"})
def _exp_32(v):
    f = np.float32
    k = np.floor(v * f(_LOG2E) + f(0.5))
    k = k if k < f(130.0) else f(130.0)  # (beyond: inf or 0 anyway; NaN is handled last)
    k = k if k > f(-160.0) else f(-160.0)
    r = (v - k * f(_LN2_HI32)) - k * f(_LN2_LO32)
    y = scale32(near_zero32(r), k)
    y = y if v < f(89.0) else f(np.inf)
    y = y if v > f(-104.0) else f(0.0)
    return y if v == v else v


@njit(inline="always", fastmath={"contract"})
def _exp_64(v):
    k = np.floor(v * _LOG2E + 0.5)
    k = k if k < 1030.0 else 1030.0
    k = k if k > -1100.0 else -1100.0
    r = (v - k * _LN2_HI64) - k * _LN2_LO64
    y = scale64(near_zero64(r), k)
    y = y if v < 710.0 else np.inf
    y = y if v > -746.0 else 0.0
    return y if v == v else v


@njit(fastmath={"contract"}, error_model="numpy")
def _exp(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = _exp_32(x[i])
    else:
        for i in range(x.size):
            out[i] = _exp_64(x[i])


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _log_of(v, e, m, k, base2):
    """log(v), or log2(v) when ``base2``, from v = 2^e m (``k``: ``log_consts`` in v's dtype), the
    special values replaced."""
    ln_m = log_mantissa(m - k.one, k)
    r = e + ln_m * (k.one / (k.ln2_hi + k.ln2_lo)) if base2 else e * k.ln2_hi + (e * k.ln2_lo + ln_m)
    r = v if v - v != k.zero else r  # (inf: inf; NaN: NaN)
    r = -k.one / k.zero if v == k.zero else r
    return r if v >= k.zero else (v - v) / (v - v)  # (negative: NaN)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def log32(v, k, base2=False):
    """log(v) (log2(v) when ``base2``) of one float32 ``v``, ``k`` its ``log_consts``: the kernels' loop
    body, also for the loops of other kernels (``logit.py``)."""
    tiny = v < np.float32(1.1754944e-38)  # subnormal (or 0, or negative): scaled by 2^24
    e, m = split32(v * np.float32(16777216.0) if tiny else v)
    return _log_of(v, e - np.float32(24.0) if tiny else e, m, k, base2)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def log64(v, k, base2=False):
    """``log32`` of a float64 ``v``."""
    tiny = v < 2.2250738585072014e-308
    e, m = split64(v * 18014398509481984.0 if tiny else v)  # (2^54)
    return _log_of(v, e - 54.0 if tiny else e, m, k, base2)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _log_loop(x, out, base2):
    k = log_consts(x)
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = log32(x[i], k, base2)
    else:
        for i in range(x.size):
            out[i] = log64(x[i], k, base2)


@njit(fastmath={"contract"}, error_model="numpy")
def _log(x, out):
    _log_loop(x, out, False)


@njit(fastmath={"contract"}, error_model="numpy")
def _log2(x, out):
    _log_loop(x, out, True)


@calls_intrinsics(fastmath={"contract"}, error_model="numpy")
def _log10(x, out):
    """float32 ``x``: e log10(2) + log(m) / ln 10 (see the module docstring)."""
    k = log_consts(x)
    for i in range(x.size):
        v = x[i]
        tiny = v < np.float32(1.1754944e-38)
        e, m = split32(v * np.float32(16777216.0) if tiny else v)
        e = e - np.float32(24.0) if tiny else e
        ln_m = log_mantissa(m - k.one, k)
        p = ln_m * _INV_LN10
        r = e * _LOG10_2_HI + (e * _LOG10_2_LO + (p + (fma(ln_m, _INV_LN10, -p) + ln_m * _INV_LN10_LO)))
        r = v if v - v != k.zero else r  # (inf: inf; NaN: NaN)
        r = -k.one / k.zero if v == k.zero else r
        out[i] = r if v >= k.zero else (v - v) / (v - v)


# Serial ns per element (the ``Kernel``'s ``ns``).
_EXP = Kernel(_exp_numpy, _exp, ns=1.0, numpy_simd="exp")
_LOG = Kernel(_log_numpy, _log, ns=1.0, numpy_simd="log")
_LOG2 = Kernel(_log2_numpy, _log2, ns=1.0, numpy_simd="log2")
_LOG10 = Kernel(_log10_numpy, _log10, ns=2.0)
