"""``tanh`` in one vectorised pass, and its gradient from the output in one more.

NumPy's float32 ``np.tanh`` took ~6.5 ns an element on the AVX2 VM of docs/performance.md
(the C library, one element at a time); where NumPy has its AVX-512 loop (``cpu.numpy_avx512``)
that runs instead, 2.4x faster than the kernel on the Intel AVX-512 VM of 2026-11-30
(``numpy_simd``).  The kernel::

    tanh x = sign(x) (-t) / (2 + t),   t = expm1(-2|x|) in [-1, 0]

with ``expm1.py``'s SIMD core for arguments <= 0, whose relative precision holds for tiny
``x`` too (``1 - e`` with ``e = exp(-2|x|)`` would lose it: cancellation), so the result is within 3 ulp
of the exact value everywhere (``tests/kernels/test_tanh_kernel.py``).  Large ``|x|``
gives ±1, inf ±1, NaN NaN, -0.0 stays -0.0.  The backward is ``grad (1 - y^2)`` from
the output ``y``, one pass instead of three.

>>> tanh(np.array([0.0, 1.0, -30.0, -0.0]))
array([ 0.        ,  0.76159416, -1.        , -0.        ])
"""

from __future__ import annotations

import math

import numpy as np

from .expm1 import expm1_negative_32, expm1_negative_64
from .pointwise import same_layout
from .runtime.dispatch import Kernel
from .runtime.jit import njit


def tanh(x: np.ndarray) -> np.ndarray:
    """tanh(x) elementwise, a new array of x's shape and dtype (NumPy's ``tanh`` for other than float
    arrays, e.g. a Tensor in a backward formula under create_graph, which answers it with its own op)."""
    if type(x) is not np.ndarray or x.dtype.kind != "f":
        return np.tanh(x)
    return _TANH.map(x)


def tanh_backward(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """grad * (1 - y^2), y = tanh(x) (the plain formula when shapes or dtypes differ)."""
    if not same_layout(grad, y):
        return grad * (1 - y * y)
    return _TANH_BACKWARD.map(grad, y)


def _tanh_numpy(x: np.ndarray, out: np.ndarray) -> None:
    np.tanh(x, out=out)


def _tanh_backward_numpy(grad: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    np.multiply(grad, 1 - y * y, out=out)


@njit(fastmath={"contract"}, error_model="numpy")
def _tanh(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            t = expm1_negative_32(np.float32(-2.0) * abs(x[i]))
            out[i] = math.copysign(-t / (np.float32(2.0) + t), x[i])
    else:
        for i in range(x.size):
            t = expm1_negative_64(-2.0 * abs(x[i]))
            out[i] = math.copysign(-t / (2.0 + t), x[i])


@njit(fastmath={"contract"})
def _tanh_backward(grad, y, out):
    one = np.ones(1, y.dtype)[0]
    for i in range(y.size):
        out[i] = grad[i] * (one - y[i] * y[i])


# Serial ns per element (the ``Kernel``'s ``ns``).
_TANH = Kernel(_tanh_numpy, _tanh, ns=1.0, numpy_simd="tanh")
_TANH_BACKWARD = Kernel(_tanh_backward_numpy, _tanh_backward, ns=0.15)
