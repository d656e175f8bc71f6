"""``log1p(x) = log(1 + x)``, precise near 0, in one vectorised pass.

``np.log1p`` calls the C library element by element (~25 ns each).  The kernel is
fdlibm's ``log1p`` on SIMD lanes, with the core of ``_log.py``:

- ``u = 1 + x`` is rounded; ``c = (x - (u - 1)) / u`` is that rounding's share of the log
  (fdlibm's form: ``(1 - (u - x)) / u`` when ``u >= 2``);
- ``u = 2^e m`` with ``m`` in ``[sqrt(1/2), sqrt(2))``, read from the bits of ``u``
  (``split32``, ``split64``; ``m - 1`` is exact);
- ``log1p(x) = e ln2 + log(m) + c`` (``log(m)``: ``_log.py``'s ``log_mantissa``), ``ln 2`` in two parts.

``x = -1`` gives -inf, ``x < -1`` NaN, ``inf`` inf, NaN NaN, and ``-0.0`` stays -0.0.
The NumPy reference (``_log1p_numpy``) is Kahan's ``log(u) x / (u - 1)``; both stay within
a few ulp of ``np.log1p`` (``tests/kernels/test_log1p_kernel.py``).

>>> log1p(np.array([0.0, 1e-10, np.e - 1]))
array([0.e+00, 1.e-10, 1.e+00])
"""

from __future__ import annotations

import numpy as np

from ._log import log_consts, log_mantissa, split32, split64
from .runtime.dispatch import Kernel
from .runtime.jit import njit


def log1p(x: np.ndarray) -> np.ndarray:
    """log(1 + x) elementwise (a new array of ``x``'s shape and dtype)."""
    return _LOG1P.map(x)


def _log1p_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Kahan's form: log(u) * x / (u - 1) with u = 1 + x rounded; x where u is 1 (tiny x, and 0
    keeps its sign), inf where u is."""
    u = x + 1
    with np.errstate(divide="ignore", invalid="ignore"):  # (x = -1: -inf; x < -1: NaN, silently as PyTorch)
        np.log(u, out=out)
        below = u - 1
        out *= x / below
    np.copyto(out, x, where=below == 0)
    np.copyto(out, u, where=u == np.inf)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _log1p_one(v, u, e, m, k):
    """log1p(v) from u = 1 + v = 2^e m (``k``: ``log_consts`` in v's dtype)."""
    c = (k.one - (u - v) if e > k.zero else v - (u - k.one)) / u
    r = e * k.ln2_hi + ((e * k.ln2_lo + c) + log_mantissa(m - k.one, k))
    r = v if v == k.zero else r  # (-0.0 stays -0.0)
    r = u if u - u != k.zero else r  # (u = inf: inf)
    below = (v - v) / (v - v)  # NaN: x < -1, or x NaN
    below = -k.one / k.zero if v == -k.one else below
    return r if v > -k.one else below


@njit(fastmath={"contract"}, error_model="numpy")
def _log1p(x, out):
    k = log_consts(x)
    if x.itemsize == 4:
        for i in range(x.size):
            u = k.one + x[i]
            e, m = split32(u)
            out[i] = _log1p_one(x[i], u, e, m, k)
    else:
        for i in range(x.size):
            u = k.one + x[i]
            e, m = split64(u)
            out[i] = _log1p_one(x[i], u, e, m, k)


_LOG1P = Kernel(_log1p_numpy, _log1p)
