"""A vectorisable ``exp`` for the row kernels (softmax, log-softmax, attention).

Inside a numba loop, ``math.exp`` / ``np.exp`` is a call into the C library,
one element at a time: about 5x slower than NumPy's ``np.exp`` on an array,
which uses SIMD instructions.  The loop below computes exp with only
multiplies, adds, ``floor`` and an integer shift, which LLVM turns into SIMD
code (8 or 16 lanes), so a fused softmax row pass beats NumPy's five passes.

The method (Cephes' ``expf``): write ``v = k ln2 + r`` with k an integer and
``|r| <= ln2/2``, then ``exp(v) = 2^k * exp(r)``; ``exp(r)`` is its Taylor
polynomial (degree 7 is exact to float32 precision, degree 13 to float64),
and ``2^k`` is built from its bits (the exponent field of a float64).  The
work is done in float64 for both dtypes.

Only ``v <= 0`` is needed (softmax shifts by the row max): values below
``_LOWEST`` (where float64's exp leaves its normal range) and ``-inf`` give
exactly 0, NaN gives NaN.

>>> # inside a kernel:  total = exp_shifted(row, row_max(row), out, bits)   (row_max: _rows.py)
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from ._rows import row_sum

_LOG2E = 1.4426950408889634
_LN2_HI = 0.693145751953125  # ln 2 split in two: k * _LN2_HI is exact
_LN2_LO = 1.42860682030941723212e-6
_LOWEST = -708.0  # exp(-708) ~ 3e-308, the smallest normal float64 is 2.2e-308


@njit(fastmath={"contract"}, error_model="numpy")
def exp_shifted(x, shift, out, bits):
    """out[j] = exp(x[j] - shift) for x[j] - shift <= 0; returns sum(out) as a float64.

    ``out`` may be ``x`` itself; ``bits`` is an int64 scratch array at least as long as ``x``.
    """
    n = x.shape[0]
    short = x.itemsize == 4  # float32 needs a shorter polynomial
    for j in range(n):
        v = x[j] - shift
        w = _LOWEST if v < _LOWEST else v
        k = np.floor(w * _LOG2E + 0.5)
        r = (w - k * _LN2_HI) - k * _LN2_LO
        if short:
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
        out[j] = 0.0 if v < _LOWEST else p
        bits[j] = (np.int64(k) + 1023) << 52  # the float64 2^k, as bits
    scale = bits[:n].view(np.float64)
    for j in range(n):
        out[j] *= scale[j]
    return row_sum(out[:n])
