"""``cross``: the cross product of 3-vectors along a dim, one pass over both operands.

    c0 = a1 b2 - a2 b1      c1 = a2 b0 - a0 b2      c2 = a0 b1 - a1 b0

With the dim moved last (``dispatch.as_rows``: a view when it is last already and the arrays are
contiguous) each row is one vector; the kernel reads its three components and writes three.  NumPy's
``np.cross`` (the reference) runs nine ufunc passes over strided component views.

>>> cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), 0)
array([0., 0., 1.])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit


def cross(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    """a × b along ``dim`` (size 3) of a and b, arrays of one shape and dtype; a new array."""
    return _CROSS.along(a, dim, b)


def _cross_numpy(a, b, out) -> None:
    out[...] = np.cross(a, b)


@njit  # (no fused multiply-add: the same roundings as np.cross)
def _cross_rows(a, b, out):
    for i in range(a.shape[0]):
        a0, a1, a2, b0, b1, b2 = a[i, 0], a[i, 1], a[i, 2], b[i, 0], b[i, 1], b[i, 2]
        out[i, 0] = a1 * b2 - a2 * b1
        out[i, 1] = a2 * b0 - a0 * b2
        out[i, 2] = a0 * b1 - a1 * b0


_CROSS = Kernel(_cross_numpy, _cross_rows, ns=0.3)
