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

>>> negative(expand(np.array([[1.5]]), (2, 3)))
array([[-1.5, -1.5, -1.5],
       [-1.5, -1.5, -1.5]])
>>> expand(np.array([[1.0], [2.0]]), (2, 3))
array([[1., 1., 1.],
       [2., 2., 2.]])
"""

from __future__ import annotations

import numpy as np

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
        return np.broadcast_to(grad, shape)
    out = np.empty(shape, grad.dtype)
    np.copyto(out, grad)
    return out


def negative(grad):
    """``-grad``; a gradient that is one value throughout as a stride-0 view (``expand``'s) stays one,
    of the negated value (a read-only view: the engine copies it where a leaf keeps it)."""
    if type(grad) is np.ndarray and grad.size and not any(grad.strides):
        return np.broadcast_to(-grad[(0,) * grad.ndim], grad.shape)
    return -grad
