"""A vectorisable ``exp`` for the row kernels (softmax, log-softmax, attention, activations).

Inside a numba loop, ``math.exp`` / ``np.exp`` is a call into the C library,
one element at a time: about 5x slower than NumPy's ``np.exp`` on an array,
which uses SIMD instructions.  The functions below compute exp with only
multiplies, adds, ``floor`` and integer bit operations, which LLVM turns
into SIMD code, so a fused softmax pass beats NumPy's five passes.

The method (Cephes' ``expf``): write ``v = k ln2 + r`` with k an integer and
``|r| <= ln2/2``, then ``exp(v) = 2^k * exp(r)``; ``exp(r)`` is a polynomial
and ``2^k`` is built from its bits (the exponent field of a float: the
integer ``k + bias`` shifted into place, reinterpreted with ``.view``).
Each dtype computes in its own precision, so a float32 array uses 16 SIMD
lanes (AVX-512), a float64 one 8:

- float32 (``exp32``): a degree-6 polynomial fitted to exp on
  ``[-ln2/2, ln2/2]`` (relative error 3e-9, far below float32's rounding);
  the result is within one float32 ulp of the exact exp (relative error
  <= 8e-8), also where it is subnormal (``v < -87.3``): there ``2^k`` would
  not be a normal float, so ``exp(r)`` is scaled by ``2^-24`` first and
  ``2^(k + 24)`` last, with a single rounding.
- float64 (``exp64``): the degree-13 Taylor polynomial (exact to float64
  precision); below ``-708`` (subnormal results) it gives 0, within float64's ``tiny``.

Only ``v <= 0`` is needed (softmax shifts by the row max first): ``-inf`` and
values below the lowest argument with a nonzero result give exactly 0, NaN
gives NaN.  ``near_zero32``/``near_zero64`` are the polynomial alone, for callers
that reduce the range themselves (the full-range ``exp_log.exp`` and ``exp2``).
``exp32``/``exp64`` are inlined into the caller's loop, whose ``fastmath`` flags
then apply: allow ``contract`` (fused multiply-adds), never ``reassoc``, which
may reorder the range reduction and ruin it.  The array forms: ``exp_into``
(into another array), ``exp_inplace`` (one array: with ``out`` = ``x`` LLVM
could not prove that the two do not overlap and would not vectorise) and
``exp_rows`` (rows shifted by their max, with the sums).

>>> x = np.array([0.0, -1.0, -np.inf])
>>> exp_inplace(x)                     # (inside a kernel: exp_inplace(block.reshape(-1)))
>>> x.round(4)
array([1.    , 0.3679, 0.    ])
"""

from __future__ import annotations

import numpy as np

from ._rows import row_sum
from .runtime.jit import njit

_LOG2E = 1.4426950408889634

# float32: ln 2 split in two (Cephes: k * _LN2_HI32 is exact), exp(r) ~ 1 + r + r^2 (c2 + c3 r + ... + c6 r^4)
_LN2_HI32 = 0.693359375
_LN2_LO32 = -2.12194440e-4
_C32 = (0.49999993, 0.16666521, 0.04166839, 0.00836871, 0.00138146)  # c2 ... c6, fitted (minimax)
_LOWEST32 = -104.0  # exp(-104) = 6.8e-46 rounds to 0 (the smallest subnormal float32 is 1.4e-45)
_TINY32 = -126.0  # 2^k is a normal float32 for k >= -126

# float64: ln 2 split in two (k * _LN2_HI64 is exact), exp(r) by its Taylor polynomial of degree 13
_LN2_HI64 = 0.693145751953125
_LN2_LO64 = 1.42860682030941723212e-6
_LOWEST64 = -708.0  # exp(-708) ~ 3e-308, the smallest normal float64 is 2.2e-308
# k as an integer without a float64 -> int64 conversion (AVX2 has none: LLVM would convert lane by
# lane): adding 1.5 * 2^52 rounds to an integer held in the low mantissa bits, read with ``.view``.
_ROUNDER64 = 6755399441055744.0
_ROUNDER64_BITS = np.int64(0x4338000000000000)  # the bits of _ROUNDER64 itself


@njit(inline="always", fastmath={"contract"})
def near_zero32(r):
    """exp(r) for a float32 ``|r| <= ln2 / 2`` (the range reduction done): the polynomial alone."""
    f = np.float32
    p = f(_C32[4])
    p = p * r + f(_C32[3])
    p = p * r + f(_C32[2])
    p = p * r + f(_C32[1])
    p = p * r + f(_C32[0])
    p = p * r + f(1.0)
    return p * r + f(1.0)


@njit(inline="always", fastmath={"contract"})
def near_zero64(r):
    """exp(r) for a float64 ``|r| <= ln2 / 2``: the polynomial alone."""
    p = 1 / 6227020800
    p = p * r + 1 / 479001600
    p = p * r + 1 / 39916800
    p = p * r + 1 / 3628800
    p = p * r + 1 / 362880
    p = p * r + 1 / 40320
    p = p * r + 1 / 5040
    p = p * r + 1 / 720
    p = p * r + 1 / 120
    p = p * r + 1 / 24
    p = p * r + 1 / 6
    p = p * r + 0.5
    p = p * r + 1.0
    return p * r + 1.0


@njit(inline="always", fastmath={"contract"})
def exp32(v):
    """exp(v) for a float32 ``v <= 0`` (see the module docstring), as float32."""
    f = np.float32
    w = v if v >= f(_LOWEST32) else f(_LOWEST32)  # (NaN too: k below stays a finite integer)
    k = np.floor(w * f(_LOG2E) + f(0.5))
    p = near_zero32((w - k * f(_LN2_HI32)) - k * f(_LN2_LO32))
    tiny = k < f(_TINY32)  # a subnormal result: 2^k = 2^-24 * 2^(k + 24), both normal
    p = p * f(2.0**-24) if tiny else p
    k = k + f(24.0) if tiny else k
    two_k = np.int32((np.int32(k) + np.int32(127)) << np.int32(23)).view(np.float32)
    return p * two_k if v >= f(_LOWEST32) else (v if v != v else f(0.0))  # NaN stays NaN


@njit(inline="always", fastmath={"contract"})
def exp64(v):
    """exp(v) for a float64 ``v <= 0`` (0 below ``_LOWEST64``), as float64."""
    w = v if v >= _LOWEST64 else _LOWEST64  # (NaN too: k below stays a finite integer)
    shifted = w * _LOG2E + _ROUNDER64  # k = round(w log2 e) in the low bits of its mantissa
    k = shifted - _ROUNDER64
    p = near_zero64((w - k * _LN2_HI64) - k * _LN2_LO64)
    two_k = np.int64((np.float64(shifted).view(np.int64) - _ROUNDER64_BITS + 1023) << 52).view(np.float64)
    return p * two_k if v >= _LOWEST64 else (v if v != v else 0.0)  # NaN stays NaN


@njit(inline="always")
def scale32(p, k):
    """``p * 2^k`` for a float32 ``p`` near 1 and an integral float32 ``k`` in [-160, 130]: ``2^k`` in
    two factors, each a normal float32, so that results near overflow and subnormal ones come
    out right (``p`` times the first is exact, the second rounds once)."""
    half = np.int32(k) >> 1
    one = np.int32((half + 127) << 23).view(np.float32)
    two = np.int32((np.int32(k) - half + 127) << 23).view(np.float32)
    return p * one * two


@njit(inline="always")
def scale64(p, k):
    """As ``scale32`` for float64, ``k`` in [-1100, 1030]."""
    whole = np.int64(np.int32(k))  # (through int32: AVX2 converts float64 to int32 in vectors)
    half = whole >> 1
    one = np.int64((half + 1023) << 52).view(np.float64)
    two = np.int64((whole - half + 1023) << 52).view(np.float64)
    return p * one * two


# The array forms, one loop per dtype (LLVM vectorises loops over 1-D slices indexed from 0).
@njit(fastmath={"contract"}, error_model="numpy")
def exp_into(x, out):
    """out = exp(x) for 1-D arrays with ``x <= 0`` (-inf and values below the lowest argument with a
    nonzero result give 0, NaN gives NaN).  ``out`` must not overlap ``x`` (use ``exp_inplace``)."""
    if x.itemsize == 4:
        for j in range(x.size):
            out[j] = exp32(x[j])
    else:
        for j in range(x.size):
            out[j] = exp64(x[j])


@njit(fastmath={"contract"}, error_model="numpy")
def exp_inplace(x):
    """x = exp(x) for a 1-D array with ``x <= 0``, as ``exp_into``."""
    if x.itemsize == 4:
        for j in range(x.size):
            x[j] = exp32(x[j])
    else:
        for j in range(x.size):
            x[j] = exp64(x[j])


@njit(fastmath={"contract"}, error_model="numpy")
def _exp_shifted(x, shift, out):
    for i in range(x.shape[0]):
        xs, outs, s = x[i], out[i], shift[i]
        if x.itemsize == 4:
            for j in range(xs.size):
                outs[j] = exp32(xs[j] - s)
        else:
            for j in range(xs.size):
                outs[j] = exp64(xs[j] - s)


@njit(error_model="numpy")
def exp_rows(x, shift, out, total):
    """out[i, j] = exp(x[i, j] - shift[i]) and total[i] = sum(out[i]) (float64) for the 2-D
    C-contiguous ``x`` and ``out`` (not overlapping), with ``x - shift <= 0`` (as ``exp_into``).
    Meant for a piece of rows that fits in the L1 cache: the sums read ``out`` again from there
    (in another function: a sum in any order vectorises, the exp must keep its order)."""
    _exp_shifted(x, shift, out)
    row_sum(out, total)
