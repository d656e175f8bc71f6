"""The exponential linear unit (ELU, SELU, CELU: ``ops/smooth_activations.py``), forward and backward,
each in one pass.

PyTorch's one kernel for the three, with ``negcoef = scale * alpha`` and ``s = input_scale``::

    y  = negcoef * expm1(s * x)          where x <= 0,   scale * x elsewhere (NaN too)
    dx = grad * scale where x > 0,   grad * negcoef * s * exp(s * x) elsewhere (NaN too)

At a NaN the gradient is NaN, as in PyTorch's vectorised loop (which every tensor of 16 or more
elements takes; its scalar loop, for the tail, answers ``grad * scale``).

The in-place forms (``elu_``, ``selu_``, ``celu_``, with ``negcoef >= 0``) keep only the result y, as
PyTorch's do, and take the gradient from it: ``negcoef * s * exp(s * x) = s * (y + negcoef)`` and y > 0
exactly where x > 0, so ``elu_backward_of_result`` needs no exponential (5x faster than the backward
from x).  Far in the negative tail ``y + negcoef`` cancels: there it gives 0 where exp(s * x) is below
y's rounding, as PyTorch's in-place forms do.

NumPy needs five passes and three temporaries (the negative part, its expm1 or exp, the choice);
the kernels inline ``expm1.py``'s and ``_exp.py``'s SIMD polynomials, ``expm1_negative_32``/``exp32``
or their float64 forms by the dtype.  The exponential is taken of ``s * min(x, 0)``: no large ``x``
overflows in the branch that is not used.  Those polynomials take arguments ``<= 0`` (``exp``), so
a negative ``s`` (CELU with a negative alpha) takes the NumPy reference.

The references (``np.expm1``, ``np.exp``) are the definitions; the two agree within a few ulp
(``tests/kernels/test_elu_kernel.py``).  Arrays of any shape and layout (``ravel()`` copies a
non-contiguous one; a gradient that is one value throughout is read as that value,
``dispatch.flat_operand``); new C-contiguous arrays of x's shape and dtype.

>>> elu(np.array([-1.0, 0.0, 2.0]), alpha=1.0, scale=1.0, input_scale=1.0).round(4)
array([-0.6321,  0.    ,  2.    ])
"""

from __future__ import annotations

import numpy as np

from ._exp import exp32, exp64
from .expm1 import expm1_negative_32, expm1_negative_64
from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit

_ZERO = np.float32(0.0)


def elu(x: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    """scale * alpha * expm1(input_scale * x) where x <= 0, scale * x elsewhere."""
    out = np.empty(x.shape, x.dtype)
    run = _ELU.on(x) if input_scale > 0 else _ELU.reference
    t = x.dtype.type
    run(x.ravel(), t(scale * alpha), t(scale), t(input_scale), out.ravel())
    return out


def elu_backward(grad: np.ndarray, x: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    """grad * scale * alpha * input_scale * exp(input_scale * x) where x <= 0, grad * scale elsewhere."""
    out = np.empty(x.shape, x.dtype)
    run = _ELU_BACKWARD.on(x) if input_scale > 0 else _ELU_BACKWARD.reference
    t = x.dtype.type
    run(flat_operand(grad, x), x.ravel(), t(scale * alpha * input_scale), t(scale), t(input_scale), out.ravel())
    return out


def elu_backward_of_result(
    grad: np.ndarray, y: np.ndarray, alpha: float, scale: float, input_scale: float
) -> np.ndarray:
    """The same gradient from the result y (``scale * alpha >= 0``): grad * scale where y > 0,
    grad * input_scale * (y + scale * alpha) elsewhere (NaN too)."""
    out = np.empty(y.shape, y.dtype)
    t = y.dtype.type
    run = _ELU_BACKWARD_OF_RESULT.on(y)
    run(flat_operand(grad, y), y.ravel(), t(scale * alpha), t(scale), t(input_scale), out.ravel())
    return out


def _elu_numpy(x, negcoef, scale, s, out) -> None:
    """Reference (1-D)."""
    with np.errstate(over="ignore"):
        out[...] = np.where(x <= 0, negcoef * np.expm1(np.where(x <= 0, x, 0) * s), x * scale)


@njit(inline="always", fastmath={"contract"})
def _negative_part(v, s):
    return (_ZERO if v > _ZERO else v) * s  # min(v, 0) * s, NaN kept


@njit(fastmath={"contract"}, error_model="numpy")
def _elu(x, negcoef, scale, s, out):
    if x.itemsize == 4:
        for i in range(x.size):
            v = x[i]
            out[i] = negcoef * expm1_negative_32(_negative_part(v, s)) if v <= _ZERO else v * scale
    else:
        for i in range(x.size):
            v = x[i]
            out[i] = negcoef * expm1_negative_64(_negative_part(v, s)) if v <= _ZERO else v * scale


def _elu_backward_numpy(grad, x, slope, scale, s, out) -> None:
    """Reference (1-D; ``grad`` of x's size or one value; ``slope`` = negcoef * s)."""
    with np.errstate(over="ignore"):
        out[...] = np.where(x > 0, grad * scale, grad * (slope * np.exp(np.minimum(x, 0) * s)))


@njit(fastmath={"contract"}, error_model="numpy")
def _elu_backward(grad, x, slope, scale, s, out):
    full = grad.size > 1
    if x.itemsize == 4:
        for i in range(x.size):
            v, g = x[i], grad[i if full else 0]
            out[i] = g * scale if v > _ZERO else g * (slope * exp32(_negative_part(v, s)))
    else:
        for i in range(x.size):
            v, g = x[i], grad[i if full else 0]
            out[i] = g * scale if v > _ZERO else g * (slope * exp64(_negative_part(v, s)))


def _elu_backward_of_result_numpy(grad, y, negcoef, scale, s, out) -> None:
    """Reference (1-D; ``grad`` of y's size or one value)."""
    out[...] = np.where(y > 0, grad * scale, grad * (s * (y + negcoef)))


@njit(fastmath={"contract"}, error_model="numpy")
def _elu_backward_of_result(grad, y, negcoef, scale, s, out):
    full = grad.size > 1
    for i in range(y.size):
        v, g = y[i], grad[i if full else 0]
        out[i] = g * scale if v > _ZERO else g * (s * (v + negcoef))


_ELU = Kernel(_elu_numpy, _elu, ns=0.3)
_ELU_BACKWARD = Kernel(_elu_backward_numpy, _elu_backward, ns=0.3)
_ELU_BACKWARD_OF_RESULT = Kernel(_elu_backward_of_result_numpy, _elu_backward_of_result, ns=0.06)
