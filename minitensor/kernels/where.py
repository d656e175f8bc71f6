"""``where(cond, a, b)`` and its gradient split, one pass each (behind ``mt.where`` and ``masked_fill``).

``np.where`` with an unpredictable mask branches per element: on 2^17 elements with a random
half-true mask it is ~25x slower than a copy, and the backward pass calls it twice
(``where(cond, grad, 0)``, ``where(cond, 0, grad)``).  The kernels load both sides and select,
which LLVM turns into SIMD blends; the backward writes both gradients in one pass.

They run when the operands line up (``cond`` of the output's shape, ``a`` and ``b`` arrays of
that shape and one float dtype, or one of them a Python number, as ``masked_fill`` passes it)
and have at least ``_SMALL`` elements; anything else (broadcasting, mixed dtypes, integers,
small arrays, Tensors under create_graph) takes ``np.where`` itself, which also decides the result's dtype.  Each kernel
has its NumPy reference beside it; ``tests/kernels/test_where_kernel.py`` holds them equal.

>>> where(np.array([True, False]), np.array([1.0, 2.0]), 0.5)
array([1. , 0.5])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import KERNEL_DTYPES, Kernel
from .runtime.jit import njit

_NS = 0.2  # serial ns per element (the ``Kernel``'s ``ns``; measured)
_SMALL = 1024  # below this many elements np.where is faster than the kernel's call (~2 µs of checks)
_ZERO = np.float32(0.0)  # (a float32 0 keeps float32 arrays float32; with float64 it widens exactly)


def where(cond: np.ndarray, a, b) -> np.ndarray:
    """``np.where(cond, a, b)``; one kernel pass when the operands line up (see the module docstring)."""
    like = _aligned(cond, a, b) if type(cond) is np.ndarray and cond.size >= _SMALL else None
    if like is None:
        return np.where(cond, a, b)
    out = np.empty(cond.shape, like.dtype)
    flat = [v.ravel() if isinstance(v, np.ndarray) else like.dtype.type(v) for v in (a, b)]
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        kernel = _WHERE
    elif isinstance(b, np.ndarray):
        kernel = _FILL_WHERE
    else:
        kernel = _FILL_ELSEWHERE
    kernel.on(like)(cond.ravel(), *flat, out.ravel())
    return out


def _aligned(cond: np.ndarray, a, b):
    """The array operand that sets the result's shape and dtype when the kernels apply, else None."""
    arrays = [v for v in (a, b) if isinstance(v, np.ndarray)]
    scalars = [v for v in (a, b) if type(v) in (int, float)]
    if len(arrays) + len(scalars) != 2 or not arrays or cond.dtype != np.bool_:
        return None
    first = arrays[0]
    if first.dtype not in KERNEL_DTYPES or any(v.shape != cond.shape or v.dtype != first.dtype for v in arrays):
        return None
    return first


def where_backward(cond: np.ndarray, grad: np.ndarray, need: tuple) -> tuple:
    """``(where(cond, grad, 0), where(cond, 0, grad))``, each None unless ``need[i]``; one pass
    when ``cond`` has grad's shape and grad is float32/float64, else NumPy's ``where``."""
    if cond.shape != grad.shape or grad.dtype not in KERNEL_DTYPES or grad.size < _SMALL:
        zero = np.zeros((), dtype=grad.dtype)
        return (np.where(cond, grad, zero) if need[0] else None), (np.where(cond, zero, grad) if need[1] else None)
    ga, gb = (np.empty(grad.shape, grad.dtype) if n else None for n in need)
    flat = (None if g is None else g.ravel() for g in (ga, gb))
    _WHERE_BACKWARD.on(grad)(cond.ravel(), grad.ravel(), *flat)
    return ga, gb


def _where_numpy(cond, a, b, out) -> None:
    """Reference (1-D) of the three forward kernels."""
    out[...] = np.where(cond, a, b)


@njit
def _where(cond, a, b, out):
    for i in range(cond.size):
        u, v = a[i], b[i]  # (both loaded, then selected: a blend, no branch)
        out[i] = u if cond[i] else v


@njit
def _fill_where(cond, a, b, out):
    """a: a number put where cond holds (masked_fill)."""
    for i in range(cond.size):
        v = b[i]
        out[i] = a if cond[i] else v


@njit
def _fill_elsewhere(cond, a, b, out):
    """b: a number put where cond does not hold."""
    for i in range(cond.size):
        u = a[i]
        out[i] = u if cond[i] else b


def _where_backward_numpy(cond, grad, ga, gb) -> None:
    """Reference (1-D)."""
    zero = np.zeros((), dtype=grad.dtype)
    if ga is not None:
        ga[...] = np.where(cond, grad, zero)
    if gb is not None:
        gb[...] = np.where(cond, zero, grad)


@njit
def _where_backward(cond, grad, ga, gb):
    for i in range(cond.size):
        g = grad[i]
        if ga is not None:
            ga[i] = g if cond[i] else _ZERO
        if gb is not None:
            gb[i] = _ZERO if cond[i] else g


_WHERE = Kernel(_where_numpy, _where, ns=_NS)
_FILL_WHERE = Kernel(_where_numpy, _fill_where, ns=_NS)
_FILL_ELSEWHERE = Kernel(_where_numpy, _fill_elsewhere, ns=_NS)
_WHERE_BACKWARD = Kernel(_where_backward_numpy, _where_backward, ns=_NS)
