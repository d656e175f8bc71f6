"""``vector_sum``: the float64 sum of a 1-D array, in SIMD lanes, for the loss kernels.

A loop ``total += a[i]`` only vectorises when LLVM may reorder the additions (the
``reassoc`` fast-math flag): then it keeps 8 partial sums and adds them up at the end,
which changes the rounding as NumPy's pairwise sum does.  The loss kernels cannot take
the flag themselves (it would also let LLVM simplify their compensated arithmetic, e.g.
``y - (u - 1)`` in ``_log.py``), so they write each piece's losses to a scratch array in
the L1 cache and call this on it.

>>> vector_sum(np.array([1.0, 2.0, 3.5], np.float32))
6.5
"""

from __future__ import annotations

from .runtime.jit import njit


@njit(fastmath={"contract", "reassoc"}, error_model="numpy")
def vector_sum(a):
    """The sum of the 1-D array ``a`` in float64."""
    total = 0.0
    for i in range(a.size):
        total += a[i]
    return total
