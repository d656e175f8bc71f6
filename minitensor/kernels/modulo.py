"""Remainders of float arrays, as PyTorch computes them, and the quotients their gradients need.

- ``fmod(a, b)``: C's ``fmod``, ``a - trunc(a / b) * b`` exactly, with the dividend's sign (also on
  a zero result: ``fmod(-4, 2) = -0``);
- ``remainder(a, b)``: PyTorch's ``r = fmod(a, b); if r != 0 and (r < 0) != (b < 0): r += b``, the
  divisor's sign (a zero result keeps fmod's sign, where NumPy's ``remainder`` gives b's);
- ``quotient_grad(grad, a, b, floor)``: ``-grad * q``, the divisor's gradient of both, with ``q``
  PyTorch's ``a.div(b, rounding_mode="floor")`` (``remainder``; NumPy's ``floor_divide``, the same
  algorithm: ``(a - fmod(a, b)) / b``, one less where the remainder's sign is fixed, rounded) or
  ``"trunc"`` (``fmod``: ``trunc(a / b)`` of the quotient rounded to the dtype);
  ``quotient(a, b, floor)`` is ``q`` alone (for a gradient that is a Tensor, under create_graph).

Why a kernel: NumPy's float32 ``np.fmod`` calls the C library per element (~8 ns here) and
``np.remainder`` twice that; PyTorch's is vectorised.  For float32 the kernel computes
``x - trunc(x / y) * y`` in float64, which is exact while ``|x / y| < 2^29``: the product of a
29-bit integer and a 24-bit divisor is exact in float64, the quotient's rounding error
``|x / y| 2^-53`` is below the ``2^-24`` that separates a non-integer ``x / y`` of float32 values
from the nearest integer (so ``trunc`` is right), and the difference is exact (a multiple of y's
last bit, smaller than ``|y|``).  The rest (a larger quotient, an infinity, a NaN, a zero
divisor: ``exact`` false) takes a second pass through ``np.fmod`` of float64, which is exact.
float64 arrays use ``np.fmod`` (the C library) in the loop: no wider type makes it exact.

Integer arrays (and any other dtype) keep NumPy's ``np.fmod`` / ``np.remainder`` / quotients,
whose integer results are PyTorch's.  The NumPy references beside each kernel (same signatures)
are the definitions; ``tests/kernels/test_modulo_kernel.py`` holds them equal, and the op tests
compare both with PyTorch.

>>> remainder(np.array([-7.0, 7.0, -4.0]), np.array([2.0, -2.0, 2.0]))
array([ 1., -1., -0.])
>>> fmod(np.array([-7.0, 7.0]), np.array([2.0, -2.0]))
array([-1.,  1.])
>>> quotient(np.array([-7.0, 7.0]), np.array([2.0, 2.0]), floor=True)
array([-4.,  3.])
"""

from __future__ import annotations

import math

import numpy as np

from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit

_ZERO, _HALF, _ONE = np.float32(0.0), np.float32(0.5), np.float32(1.0)  # (float32: float32 stays float32)
_EXACT_BELOW = 2.0**29  # |a / b| below which float32's fmod computed in float64 is exact (module docstring)
_FMOD, _REMAINDER, _TRUNC_GRAD, _FLOOR_GRAD = 0, 1, 2, 3  # what ``_modulo`` computes
_NS = 0.25  # serial ns per element (the ``Kernel``'s ``ns``), at 2^17 float32


def fmod(a, b) -> np.ndarray:
    """C's fmod of ``a`` and ``b`` (arrays of one dtype broadcast together, or one a Python number)."""
    a, b = _same_dtype(a, b)
    if a.dtype.kind != "f":
        return np.fmod(a, b)
    return _run(_FMOD, a, b, None)


def remainder(a, b) -> np.ndarray:
    """PyTorch's remainder of ``a`` and ``b``: fmod's, moved into the divisor's sign."""
    a, b = _same_dtype(a, b)
    if a.dtype.kind != "f":
        return np.remainder(a, b)
    return _run(_REMAINDER, a, b, None)


def quotient_grad(grad: np.ndarray, a, b, floor: bool) -> np.ndarray:
    """``-grad * q``: the divisor's gradient of ``remainder`` (``floor``) or ``fmod``, of the
    broadcast shape of the three (``q`` as ``quotient``; ``grad`` of a float dtype)."""
    return _run(_FLOOR_GRAD if floor else _TRUNC_GRAD, *_same_dtype(a, b), grad)


def quotient(a, b, floor: bool) -> np.ndarray:
    """PyTorch's ``a.div(b, rounding_mode="floor")`` (``floor``) or ``"trunc"``."""
    a, b = _same_dtype(a, b)
    if a.dtype.kind != "f":
        return np.floor_divide(a, b) if floor else np.trunc(np.divide(a, b))
    return -_run(_FLOOR_GRAD if floor else _TRUNC_GRAD, a, b, np.ones((), a.dtype))


def _same_dtype(a, b) -> tuple:
    """``a`` and ``b`` as arrays of the dtype of the one that is an array (the other may be a number)."""
    like = a if isinstance(a, np.ndarray) else np.asarray(b)
    return np.asarray(a, like.dtype), np.asarray(b, like.dtype)


def _run(kind: int, a: np.ndarray, b: np.ndarray, grad) -> np.ndarray:
    """``_MODULO`` on the arrays broadcast together, of a's dtype: ``a`` and ``b`` as flat arrays
    (``ravel`` copies a broadcast one); ``grad`` flat, or passed as its single value ``g0`` (and None)
    when it is one value throughout (the gradient of a ``sum``, ``flat_operand``), so that the
    kernel's loop reads no array for it (numba compiles the None case apart: the loop vectorises)."""
    shape = a.shape
    if b.shape != shape or (grad is not None and grad.shape != shape):
        shape = np.broadcast_shapes(a.shape, b.shape, () if grad is None else grad.shape)
    out = np.empty(shape, a.dtype)
    a, b = (x if x.shape == shape else np.broadcast_to(x, shape) for x in (a, b))
    g, g0 = None, a.dtype.type(1)
    if grad is not None:
        g = flat_operand(grad, out)
        g, g0 = (None, g[0]) if g.size == 1 else (g, g0)
    _MODULO.on(out)(kind, a.ravel(), b.ravel(), g, g0, out.ravel())
    return out


def _modulo_numpy(kind: int, a, b, grad, g0, out) -> None:
    """Reference (1-D): the definitions of the module docstring in NumPy."""
    grad = g0 if grad is None else grad
    if kind == _TRUNC_GRAD:
        out[...] = -grad * np.trunc(a / b)
        return
    r = np.fmod(a, b)
    moved = (r != 0) & ((b < 0) != (r < 0))  # remainder's sign fix-up
    if kind == _FMOD:
        out[...] = r
    elif kind == _REMAINDER:
        out[...] = np.where(moved, r + b, r)
    else:
        out[...] = -grad * np.floor_divide(a, b)


@njit(inline="always", error_model="numpy")
def _fmod32(x, y):
    """(fmod(x, y), exact) for float32 ``x``, ``y``: computed in float64 (module docstring), right
    when ``exact`` (|x / y| < 2^29, y finite; false for NaN, infinities, y = 0)."""
    xd, yd = np.float64(x), np.float64(y)
    q = xd / yd
    r = math.copysign(xd - np.trunc(q) * yd, xd)
    return np.float32(r), (abs(q) < _EXACT_BELOW) & (abs(yd) < np.inf)


@njit(inline="always", error_model="numpy")
def _finish(kind, x, y, r, g):
    """The result at one element from ``r`` = fmod(x, y) (all in the array's dtype)."""
    if kind == _FMOD:
        return r
    moved = (r != _ZERO) & ((y < _ZERO) != (r < _ZERO))
    if kind == _REMAINDER:
        return r + y if moved else r
    if kind == _TRUNC_GRAD:
        return -g * np.trunc(x / y)
    # the floor quotient, NumPy's npy_divmod and PyTorch's div_floor_floating
    d = (x - r) / y
    d = d - _ONE if moved else d
    f = np.floor(d)
    f = f + _ONE if d - f > _HALF else f
    f = f if d != _ZERO else math.copysign(_ZERO, x / y)
    return -g * (x / y if y == _ZERO else f)


@njit(inline="always", error_model="numpy")
def _fast32(kind, a, b, grad, g0, out):
    """``_finish`` on float32 arrays by ``_fmod32``: the count of elements it could not take."""
    inexact = 0
    for i in range(out.size):
        x, y = a[i], b[i]
        r, exact = _fmod32(x, y)
        inexact += not exact
        out[i] = _finish(kind, x, y, r, g0 if grad is None else grad[i])
    return inexact


@njit(error_model="numpy", read_only=("a", "b", "grad"))
def _modulo(kind, a, b, grad, g0, out):
    """``out`` from flat ``a``, ``b`` and ``grad`` of out's size (None: the gradient is ``g0`` throughout)."""
    if a.itemsize == 4:
        # one loop per kind, each with its constant ``kind``: LLVM vectorises them (a loop testing a
        # variable ``kind`` per element ran 2-3x slower)
        if kind == _FMOD:
            inexact = _fast32(_FMOD, a, b, grad, g0, out)
        elif kind == _REMAINDER:
            inexact = _fast32(_REMAINDER, a, b, grad, g0, out)
        elif kind == _TRUNC_GRAD:
            inexact = _fast32(_TRUNC_GRAD, a, b, grad, g0, out)
        else:
            inexact = _fast32(_FLOOR_GRAD, a, b, grad, g0, out)
        if not inexact:
            return
    for i in range(out.size):
        x, y = a[i], b[i]
        if a.itemsize == 4:  # the rare elements the float64 formula cannot take: through the C library
            if _fmod32(x, y)[1]:
                continue
            r = np.float32(np.fmod(np.float64(x), np.float64(y)))
        else:
            r = np.fmod(x, y)
        out[i] = _finish(kind, x, y, r, g0 if grad is None else grad[i])


_MODULO = Kernel(_modulo_numpy, _modulo, ns=_NS)
