"""``expm1(x) = exp(x) - 1``, precise near 0, in one vectorised pass.

``np.expm1`` calls the C library element by element (~25 ns each).  The kernel uses only
the SIMD ``exp`` of ``_exp.py`` (arguments <= 0), multiplies and adds:

- ``|x| < ln 2``: ``x (1 + x P(x))`` with ``P`` the Taylor series of ``(e^x - 1 - x) / x^2``
  (terms to ``x^9 / 11!`` in float32, ``x^16 / 18!`` in float64: below half an ulp):
  relative error about one ulp however small ``x`` is;
- elsewhere ``u - 1`` with ``u = exp(x)``: ``exp(-|x|)`` below 0, its reciprocal above
  (and, in float64 above 708, where ``exp64`` stops, the square of ``1 / exp(-x / 2)``).
  ``u - 1`` loses at most one bit there (``|u - 1| >= 1/2``).

NaN gives NaN, ``inf`` inf, ``-inf`` -1.  ``expm1_32``/``expm1_64`` are the one-element forms,
for other kernels to inline, ``expm1_negative_32``/``_64`` the same for arguments ``<= 0`` only
(``elu.py``, ``tanh.py``).  The NumPy reference (``_expm1_numpy``) is
Kahan's ``(u - 1) x / log(u)``; the two agree within a few ulp
(``tests/kernels/test_expm1_kernel.py``), each close to ``np.expm1``.

>>> expm1(np.array([0.0, 1e-10, -50.0]))
array([ 0.e+00,  1.e-10, -1.e+00])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp32, exp64
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_LN2 = math.log(2.0)
_P32 = tuple(1 / math.factorial(k) for k in range(11, 1, -1))  # 1/11! ... 1/2!, highest power first
_P64 = tuple(1 / math.factorial(k) for k in range(18, 1, -1))


def expm1(x: np.ndarray) -> np.ndarray:
    """exp(x) - 1 elementwise (a new array of ``x``'s shape and dtype)."""
    return _EXPM1.map(x)


def _expm1_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Kahan's form: (u - 1) x / log(u) with u = exp(x) rounded; x where u is 1, u - 1 where that
    is -1 or u is inf."""
    with np.errstate(all="ignore"):  # (exp overflows to inf for large x, silently as PyTorch)
        u = np.exp(x)
        below = u - 1
        np.multiply(below, x / np.log(u), out=out)
    np.copyto(out, x, where=below == 0)
    np.copyto(out, below, where=(below == -1) | (u == np.inf))


@njit(inline="always", fastmath={"contract"})
def _near_zero_32(v):
    """expm1 of a float32 ``|v| < ln 2``: x (1 + x P(x)) (-0.0 stays -0.0)."""
    f = np.float32
    p = f(_P32[0])
    for c in _P32[1:]:
        p = p * v + f(c)
    return v * (f(1.0) + v * p)


@njit(inline="always", fastmath={"contract"})
def _near_zero_64(v):
    """expm1 of a float64 ``|v| < ln 2``: x (1 + x P(x)), Horner's 16 steps written out: as a loop
    over ``_P64`` (too long for LLVM to unroll, as it does float32's 9) each step read its
    coefficient from the tuple through a jump table, and no loop calling this vectorised: 40 ns
    an element instead of 1 (float64 tanh and expm1 at 2^17 took 4-5 ms, 13x NumPy's)."""
    c = _P64
    p = c[0] * v + c[1]
    p = p * v + c[2]
    p = p * v + c[3]
    p = p * v + c[4]
    p = p * v + c[5]
    p = p * v + c[6]
    p = p * v + c[7]
    p = p * v + c[8]
    p = p * v + c[9]
    p = p * v + c[10]
    p = p * v + c[11]
    p = p * v + c[12]
    p = p * v + c[13]
    p = p * v + c[14]
    p = p * v + c[15]
    p = p * v + c[16]
    return v * (1.0 + v * p)


@njit(inline="always", fastmath={"contract"})
def expm1_32(v):
    """expm1 of one float32 number (inlined into the caller's loop)."""
    f = np.float32
    small = _near_zero_32(v)
    e = exp32(-abs(v))
    u = e if v < 0 else f(1.0) / e
    return small if abs(v) < f(_LN2) else u - f(1.0)


@njit(inline="always", fastmath={"contract"})
def expm1_negative_32(v):
    """``expm1_32`` of a float32 ``v <= 0`` (or NaN), without the reciprocal the positive side needs
    (ELU's negative piece, ``elu.py``)."""
    f = np.float32
    small = _near_zero_32(v)
    return small if abs(v) < f(_LN2) else exp32(v) - f(1.0)


@njit(inline="always", fastmath={"contract"})
def expm1_negative_64(v):
    """``expm1_64`` of a float64 ``v <= 0`` (or NaN)."""
    small = _near_zero_64(v)
    return small if abs(v) < _LN2 else exp64(v) - 1.0


@njit(inline="always", fastmath={"contract"})
def expm1_64(v):
    """expm1 of one float64 number (inlined into the caller's loop)."""
    small = _near_zero_64(v)
    e = exp64(-abs(v))
    h = 1.0 / exp64(-0.5 * abs(v))  # (v > 708: exp(v) = (1 / exp(-v / 2))^2, each factor in range)
    u = e if v < 0 else (1.0 / e if v <= 708.0 else h * h)
    return small if abs(v) < _LN2 else u - 1.0


@njit(fastmath={"contract"}, error_model="numpy")
def _expm1(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = expm1_32(x[i])
    else:
        for i in range(x.size):
            out[i] = expm1_64(x[i])


_EXPM1 = Kernel(_expm1_numpy, _expm1)
