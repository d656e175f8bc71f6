"""``expand``: a gradient broadcast back to its input's shape (the backward of ``sum`` and ``mean``),
as a fresh array when that is cheaper than NumPy's broadcast view.

``np.broadcast_to`` costs ~1.8 µs whatever the size (it is written in Python), and its result, a
read-only view with stride 0, makes each NumPy ufunc that reads it slower at small sizes (16 x 16
float32: ``view * x`` 0.66 µs against 0.26 for a contiguous array).  Filling a new array costs
0.5 µs at 256 elements, 1.6 µs at 2^14 and 4.5 µs at 2^16 (2-core AVX-512 machine, float32).  So
below ``SMALL`` elements ``expand`` fills a new C-contiguous array, and above it returns the view
(large ufuncs read a stride-0 operand faster than a full one, and the kernels copy what they
cannot stride through: ``ravel()`` in ``runtime/dispatch.py``).  The two results are equal, which
``tests/kernels/test_expand.py`` checks on both sides of ``SMALL``.

``negative``: ``-grad`` that keeps such a view a view (of the negated value): NumPy's unary ufuncs
read a stride-0 operand slowly (``np.negative`` of the 2^17-element view took 40 µs, of a full
array 7, where the binary ones are faster on it), and the backward of ``-x`` and ``x - y`` meets it.

``copy``: a new array of a gradient's values, where a leaf keeps one.  A view of one value (the
gradient of ``y.sum()`` or ``y.mean()`` that reached the leaf unchanged) is filled by a kernel:
NumPy's copy of it, like ``ndarray.fill``, took 8 µs at 2^17 float32 elements, the kernel 3.

>>> negative(expand(np.array([[1.5]]), (2, 3)))
array([[-1.5, -1.5, -1.5],
       [-1.5, -1.5, -1.5]])
>>> copy(np.broadcast_to(np.float32(2), (2, 2)), np.float32)
array([[2., 2.],
       [2., 2.]], dtype=float32)
>>> expand(np.array([[1.0], [2.0]]), (2, 3))
array([[1., 1., 1.],
       [2., 2., 2.]])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit

SMALL = 1 << 14  # elements: below, a fresh array; from here on, a broadcast view


def expand(grad, shape: tuple):
    """``grad`` broadcast to ``shape`` (grad has ``len(shape)`` dims, 1 where the result stretches).

    Anything other than an ndarray (a Tensor under create_graph) goes to ``np.broadcast_to``,
    which it answers with its own differentiable op."""
    if type(grad) is not np.ndarray:
        return np.broadcast_to(grad, shape)
    size = 1
    for n in shape:
        size *= n
    if size >= SMALL:
        return broadcast(grad, shape)
    out = np.empty(shape, grad.dtype)
    np.copyto(out, grad)
    return out


def broadcast(x: np.ndarray, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(x, shape)`` (a shape ``x`` broadcasts to): the same read-only view, made
    directly where ``x`` is C-contiguous (NumPy's function, written in Python, took 1.7 µs; this 0.5)."""
    if not x.flags.c_contiguous:
        return np.broadcast_to(x, shape)
    lead = len(shape) - x.ndim
    if x.size == 1:
        strides = (0,) * len(shape)
    else:
        strides = (0,) * lead + tuple(s if n == m else 0 for n, m, s in zip(x.shape, shape[lead:], x.strides))
    view = np.ndarray(shape, x.dtype, x, 0, strides)
    view.flags.writeable = False
    return view


def negative(grad):
    """``-grad``; a gradient that is one value throughout as a stride-0 view (``expand``'s) stays one,
    of the negated value (a read-only view: the engine copies it where a leaf keeps it)."""
    if type(grad) is np.ndarray and grad.size and not any(grad.strides):
        return broadcast(-grad[(0,) * grad.ndim], grad.shape)
    return -grad


def copy(a, dtype: np.dtype) -> np.ndarray:
    """``np.array(a, dtype=dtype, copy=True)``: a new array with ``a``'s values (in ``a``'s layout, as
    NumPy's order ``'K'`` keeps it); a view of one value throughout (all strides 0) is filled by a
    kernel into a C-contiguous array."""
    if type(a) is not np.ndarray or a.size < SMALL or a.dtype != dtype or any(a.strides):  # (cheapest first)
        return np.array(a, dtype=dtype, copy=True)
    out = np.empty(a.shape, dtype)
    _FILL.on(out)(out.reshape(-1), a[(0,) * a.ndim])
    return out


def _fill_numpy(out: np.ndarray, value) -> None:
    """Reference: every element of the flat ``out`` set to ``value``."""
    out.fill(value)


@njit
def _fill(out, value):
    for i in range(out.size):
        out[i] = value


_FILL = Kernel(_fill_numpy, _fill)
