"""A vectorisable ``exp`` for the row kernels (softmax, log-softmax, attention).

Inside a numba loop, ``math.exp`` / ``np.exp`` is a call into the C library,
one element at a time: about 5x slower than NumPy's ``np.exp`` on an array,
which uses SIMD instructions.  The loops below compute exp with only
multiplies, adds, ``floor`` and an integer shift, which LLVM turns into SIMD
code (8 or 16 lanes), so a fused softmax pass beats NumPy's five passes.

The method (Cephes' ``expf``): write ``v = k ln2 + r`` with k an integer and
``|r| <= ln2/2``, then ``exp(v) = 2^k * exp(r)``; ``exp(r)`` is its Taylor
polynomial (degree 7 is exact to float32 precision, degree 13 to float64),
and ``2^k`` is built from its bits (the exponent field of a float64).  The
work is done in float64 for both dtypes.

Only ``v <= 0`` is needed (softmax shifts by the row max first): values
below ``_LOWEST`` (where float64's exp leaves its normal range) and ``-inf``
give exactly 0, NaN gives NaN.  The kernels shift each row, then call these
on the whole block as one flat array (a long loop vectorises well even when
the rows are short).  Two versions: into another array, and in place (with
``out`` = ``x`` LLVM could not prove that the two do not overlap and would
not vectorise).

>>> x = np.array([0.0, -1.0, -np.inf])
>>> exp_inplace(x)                     # (inside a kernel: exp_inplace(block.reshape(-1)))
>>> x.round(4)
array([1.    , 0.3679, 0.    ])
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

_LOG2E = 1.4426950408889634
_LN2_HI = 0.693145751953125  # ln 2 split in two: k * _LN2_HI is exact
_LN2_LO = 1.42860682030941723212e-6
_LOWEST = -708.0  # exp(-708) ~ 3e-308, the smallest normal float64 is 2.2e-308


@njit(inline="always", fastmath={"contract"})
def _exp_parts(v, short):
    """(exp(r), float64 bits of 2^k) with v = k ln2 + r; exp(r) is 0 below _LOWEST."""
    w = _LOWEST if v < _LOWEST else v
    k = np.floor(w * _LOG2E + 0.5)
    r = (w - k * _LN2_HI) - k * _LN2_LO
    if short:  # float32 needs a shorter polynomial
        p = 1 / 5040
        p = p * r + 1 / 720
    else:
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
    p = p * r + 1.0
    return 0.0 if v < _LOWEST else p, (np.int64(k) + 1023) << 52


_PIECE = 2048  # elements per pass: the bits of 2^k for a piece stay in the L1 cache


@njit(fastmath={"contract"}, error_model="numpy")
def exp_into(x, out):
    """out = exp(x) for 1-D arrays with ``x <= 0`` (-inf and values below ``_LOWEST`` give 0, NaN gives
    NaN).  ``out`` must not overlap ``x`` (use ``exp_inplace`` for that)."""
    short = x.itemsize == 4
    bits = np.empty(min(x.size, _PIECE), np.int64)
    for start in range(0, x.size, _PIECE):  # (slices indexed from 0: LLVM vectorises these loops)
        xs, outs = x[start : start + _PIECE], out[start : start + _PIECE]
        m = xs.size
        for j in range(m):
            outs[j], bits[j] = _exp_parts(xs[j], short)
        scale = bits[:m].view(np.float64)
        for j in range(m):
            outs[j] *= scale[j]


@njit(fastmath={"contract"}, error_model="numpy")
def exp_inplace(x):
    """x = exp(x) for a 1-D array with ``x <= 0``, as ``exp_into`` (one array: LLVM vectorises it)."""
    short = x.itemsize == 4
    bits = np.empty(min(x.size, _PIECE), np.int64)
    for start in range(0, x.size, _PIECE):
        xs = x[start : start + _PIECE]
        m = xs.size
        for j in range(m):
            xs[j], bits[j] = _exp_parts(xs[j], short)
        scale = bits[:m].view(np.float64)
        for j in range(m):
            xs[j] *= scale[j]
