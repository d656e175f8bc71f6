"""A vectorisable ``log1p`` for the softplus and logistic-loss kernels.

Inside a numba loop ``math.log1p`` is a call into the C library, one element at a
time, which LLVM cannot vectorise.  ``log1p_unit`` uses only adds, multiplies, two
divisions and selects, so a loop over it runs on SIMD lanes (16 float32 or 8 float64).

Its argument is ``y = exp(-|x|)`` in [0, 1] (softplus is ``max(x, 0) + log1p(exp(-|x|))``),
so no exponent needs extracting from the bits; ``log1p.py`` and ``exp_log.py`` extract it
(``split32``, ``split64``: ``u = 2^e m``) and pass the mantissa's ``m - 1``, in
[sqrt(1/2) - 1, sqrt(2) - 1] (fdlibm's range for the same core).
The method (fdlibm's ``log``):

- ``u = 1 + y`` is rounded; ``c = (y - (u - 1)) / u`` is that rounding error's share
  of the log (so ``log1p(y) = log(u) + c`` keeps full precision for tiny y);
- ``u = 2^k (1 + f)`` with k = 0, or k = 1 when u > sqrt 2, so ``|f| <= sqrt 2 - 1``
  (computed exactly);
- ``log(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R)`` with ``s = f / (2 + f)`` and R a
  polynomial in ``s^2`` of degree 7 (fdlibm's minimax coefficients); ``k ln 2`` is added
  in two parts.

The arithmetic is in the argument's dtype (``log_consts``).  NaN gives NaN; y = 0 gives 0.
Within 1 ulp of ``np.log1p`` in float64 and float32 (``tests/kernels/test_log_kernel.py``).

>>> y = np.array([0.0, 1e-30, 0.5, 1.0])
>>> out = np.empty_like(y)
>>> log1p_unit_into(y, out)
>>> np.allclose(out, np.log1p(y), rtol=1e-15, atol=0)
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .runtime.jit import njit


class LogConsts(NamedTuple):
    """The constants of ``log1p_unit`` in one dtype (``log_consts``)."""

    zero: float
    half: float
    one: float
    two: float
    sqrt2: float
    ln2_hi: float  # ln 2 = ln2_hi + ln2_lo, ln2_hi with trailing zero bits (n * ln2_hi is exact)
    ln2_lo: float
    r: tuple  # R's coefficients, highest power of s^2 first


# fdlibm's values; float32 takes them rounded, and its own split of ln 2 (musl's logf).
_R = (1.479819860511658591e-01, 1.531383769920937332e-01, 1.818357216161805012e-01, 2.222219843214978396e-01,
      2.857142874366239149e-01, 3.999999999940941908e-01, 6.666666666666735130e-01)  # fmt: skip
_VALUES64 = np.array((0.0, 0.5, 1.0, 2.0, np.sqrt(2.0), 6.93147180369123816490e-01, 1.90821492927058770002e-10) + _R)
_VALUES32 = np.array((0.0, 0.5, 1.0, 2.0, np.sqrt(2.0), 6.9313812256e-01, 9.0580006145e-06) + _R)


@njit(inline="always")
def log_consts(like):
    """The constants as scalars of the dtype of the array ``like``: with float32 arrays the arithmetic
    then stays float32 (a Python float would make it float64, at half the SIMD width).  Built in the
    kernel, not passed to it: a tuple argument costs ~1.5 µs per call in numba's dispatcher."""
    c = (_VALUES32 if like.itemsize == 4 else _VALUES64).astype(like.dtype)
    return LogConsts(c[0], c[1], c[2], c[3], c[4], c[5], c[6], (c[7], c[8], c[9], c[10], c[11], c[12], c[13]))


@njit(inline="always")
def split32(u):
    """(e, m) with u = 2^e m and m in [sqrt(1/2), sqrt(2)), for a positive normal float32 ``u``."""
    bits = np.float32(u).view(np.int32)
    e = np.float32(((bits >> 23) & 0xFF) - 127)
    m = np.int32((bits & 0x7FFFFF) | 0x3F800000).view(np.float32)  # (the exponent set to 0: [1, 2))
    big = m > np.float32(1.4142135)
    return (e + np.float32(1) if big else e), (m * np.float32(0.5) if big else m)


@njit(inline="always")
def split64(u):
    """As ``split32`` for float64."""
    bits = np.float64(u).view(np.int64)
    e = np.float64(((bits >> 52) & 0x7FF) - 1023)
    m = np.int64((bits & 0xFFFFFFFFFFFFF) | 0x3FF0000000000000).view(np.float64)
    big = m > 1.4142135623730951
    return (e + 1.0 if big else e), (m * 0.5 if big else m)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _series(s, k):
    """R(s^2) s^2: the tail of ``2 atanh(s)`` beyond its first terms (fdlibm's polynomial)."""
    z = s * s
    r = k.r[0]
    for coefficient in k.r[1:]:
        r = r * z + coefficient
    return r * z


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def log1p_unit(y, k):
    """log1p(y) for 0 <= y <= 1 (or NaN), in the dtype of ``k`` = ``log_consts(array)``."""
    u = k.one + y
    c = (y - (u - k.one)) / u
    big = u > k.sqrt2
    f = (u * k.half if big else u) - k.one
    s = f / (k.two + f)
    r = _series(s, k)
    hfsq = k.half * f * f
    n = k.one if big else k.zero
    return n * k.ln2_hi - ((hfsq - (s * (hfsq + r) + (n * k.ln2_lo + c))) - f)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def log_mantissa(f, k):
    """log(1 + f) for ``f = m - 1`` with m in [sqrt(1/2), sqrt(2)] (``split32``'s mantissa: 1 + f is
    exact, so ``log1p_unit``'s correction and its halving are not needed; the same bits, one
    division fewer)."""
    s = f / (k.two + f)
    hfsq = k.half * f * f
    return f - (hfsq - s * (hfsq + _series(s, k)))


@njit(fastmath={"contract"}, error_model="numpy")
def log1p_unit_into(y, out):
    """out = log1p(y) for 1-D arrays with 0 <= y <= 1 (NaN gives NaN)."""
    k = log_consts(y)
    for i in range(y.size):
        out[i] = log1p_unit(y[i], k)
