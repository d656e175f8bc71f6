"""Elementwise kernels: ReLU, |x|'s gradient, the logistic sigmoid and SiLU, forward and backward.

Each is one pass over memory where NumPy takes two to eight, each with a temporary
array (``np.where`` with a random mask is slower still: it branches per element).
The loops are written so that LLVM vectorises them: arithmetic in the array's dtype,
both sides of a select loaded before choosing, and the ``exp`` of ``_exp.py`` (a
polynomial, ``exp32`` or ``exp64`` by the dtype, chosen outside the loop) inlined.

- ``relu``: ``0 if x < 0 else x`` (NaN and -0.0 stay as they are, as in PyTorch);
  backward ``0 if y <= 0 else grad`` from the output ``y`` (a NaN passes the gradient,
  as PyTorch's ``threshold_backward``).
- ``abs_backward``: ``grad * sgn(x)``, with sgn 0 at x = ±0 and at NaN (PyTorch's ``sgn``).
- ``sigmoid``: ``1 / (1 + e)`` or ``e / (1 + e)`` with ``e = exp(-|x|)`` (never overflows);
  backward ``grad * y * (1 - y)``.
- ``silu``: ``x * s`` with ``s = sigmoid(x)``; backward ``grad * s * (1 + x * (1 - s))``
  from the ``s`` the forward keeps, so the backward computes no exp.

Each has its NumPy reference beside it (the same formula) with the same signature;
``tests/kernels/test_pointwise_kernel.py`` holds them equal.  The functions take arrays
of any shape and layout (``ravel()`` copies a non-contiguous or broadcast one first) and
return C-contiguous arrays of the input's shape.

>>> sigmoid(np.array([-1.0, 0.0, 40.0])).round(4)
array([0.2689, 0.5   , 1.    ])
>>> relu(np.array([-1.0, -0.0, 2.0]))
array([ 0., -0.,  2.])
"""

from __future__ import annotations

import numpy as np

from ._exp import exp32, exp64
from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit

# Constants as float32: with a float32 array the arithmetic stays float32 (a Python 1 would make it
# float64, at half the SIMD width); with float64 arrays they widen exactly.
_ZERO, _ONE = np.float32(0.0), np.float32(1.0)
# Serial ns per element (the ``Kernel``'s ``ns``; measured at 2^17 float32 elements on the AVX-512 VM of
# docs/performance.md): one pass over two or three arrays, and the passes with an exp (most of their time).
_RELU_NS, _PASS_NS, _SIGMOID_NS, _SILU_NS = 0.1, 0.15, 0.4, 0.4


def _flat_backward(kernel: Kernel, grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``kernel(grad, y, out)`` on flat arrays, ``grad`` of y's shape and dtype: a gradient that is one
    value throughout (``sum``'s) as that one value (``dispatch.flat_operand``), read by the kernel as
    ``grad[i if full else 0]``."""
    out = np.empty(y.shape, y.dtype)
    kernel.on(y)(flat_operand(grad, y), y.ravel(), out.ravel())
    return out


def same_layout(a: np.ndarray, b: np.ndarray) -> bool:
    """True when ``a`` and ``b`` have one shape and one dtype (so one flat kernel loop covers both)."""
    return a.shape == b.shape and a.dtype == b.dtype


# ------------------------------------------------------------------ ReLU
def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0), keeping NaN and -0.0 (as PyTorch); x's shape and dtype."""
    if x.dtype.kind != "f":
        return np.maximum(x, 0)
    return _RELU.map(x)


def relu_backward(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``grad`` where ``y`` = relu(x) > 0 (or NaN), else 0 (NumPy's ``where`` when the two differ in
    shape or dtype)."""
    if not same_layout(grad, y):
        return np.where(y <= 0, 0, grad)
    return _flat_backward(_RELU_BACKWARD, grad, y)


def _relu_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D)."""
    out[...] = np.where(x < 0, 0, x)


@njit
def _relu(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = _ZERO if v < 0 else v


def _relu_backward_numpy(grad: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D)."""
    out[...] = np.where(y <= 0, 0, grad)


@njit
def _relu_backward(grad, y, out):
    full = grad.size > 1
    for i in range(y.size):
        g = grad[i if full else 0]
        out[i] = _ZERO if y[i] <= 0 else g


_RELU = Kernel(_relu_numpy, _relu, ns=_RELU_NS)
_RELU_BACKWARD = Kernel(_relu_backward_numpy, _relu_backward, ns=_PASS_NS)


# ------------------------------------------------------------------ |x|
def abs_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """grad * sgn(x) with sgn(x) = 1, -1 or 0 (at ±0 and NaN, as PyTorch's ``sgn``); the plain
    formula when the two differ in shape or dtype."""
    if not same_layout(grad, x):
        return grad * sgn(x)
    return _flat_backward(_ABS_BACKWARD, grad, x)


def sgn(x):
    """1 where x > 0, -1 where x < 0, +0 elsewhere (±0, NaN): PyTorch's ``sign`` and ``sgn`` (``np.sign``
    gives NaN at NaN).  For arrays (float ones by the kernel), or Tensors (then a constant Tensor: the
    sign has no gradient)."""
    if type(x) is np.ndarray and x.dtype.kind == "f":
        return _SGN.map(x)
    return np.where(np.logical_or(x == 0, np.isnan(x)), 0, np.sign(x))


def _sgn_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D)."""
    out[...] = np.where(np.logical_or(x == 0, np.isnan(x)), 0, np.sign(x))


@njit
def _sgn(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = _ONE if v > _ZERO else (-_ONE if v < _ZERO else _ZERO)


def _abs_backward_numpy(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D)."""
    out[...] = grad * sgn(x)


@njit
def _abs_backward(grad, x, out):
    full = grad.size > 1
    for i in range(x.size):
        v, g = x[i], grad[i if full else 0]
        out[i] = g if v > 0 else (-g if v < 0 else g * _ZERO)


_ABS_BACKWARD = Kernel(_abs_backward_numpy, _abs_backward, ns=_PASS_NS)
_SGN = Kernel(_sgn_numpy, _sgn, ns=_RELU_NS)


# ------------------------------------------------------------------ sigmoid
def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), never overflowing; same shape and dtype as ``x``."""
    if x.dtype.kind != "f":  # (the formula of the reference, in NumPy's float, cast back)
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
    return _SIGMOID.map(x)


def sigmoid_backward(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """grad * y * (1 - y) (y: the sigmoid's output); the plain formula when the shapes or dtypes differ."""
    if not same_layout(grad, y):
        return grad * (y * (1 - y))
    return _flat_backward(_SIGMOID_BACKWARD, grad, y)


def _sigmoid_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D): exp of a non-positive number only, so it never overflows."""
    e = np.exp(-np.abs(x))
    out[...] = np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _logistic(v, exp):
    """sigmoid(v) = (1 or e) / (1 + e) with e = exp(-|v|) in (0, 1] (NaN stays NaN)."""
    e = exp(-abs(v))
    return (_ONE if v >= _ZERO else e) / (_ONE + e)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _sigmoid_loop(x, out, exp):
    for i in range(x.size):
        out[i] = _logistic(x[i], exp)


@njit(fastmath={"contract"}, error_model="numpy")
def _sigmoid(x, out):
    if x.itemsize == 4:  # (the dtype picks the exp outside the loop: one loop body each)
        _sigmoid_loop(x, out, exp32)
    else:
        _sigmoid_loop(x, out, exp64)


def _sigmoid_backward_numpy(grad: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D)."""
    out[...] = grad * (y * (1 - y))


@njit(fastmath={"contract"}, error_model="numpy")
def _sigmoid_backward(grad, y, out):
    full = grad.size > 1
    for i in range(y.size):
        out[i] = grad[i if full else 0] * (y[i] * (_ONE - y[i]))


_SIGMOID = Kernel(_sigmoid_numpy, _sigmoid, ns=_SIGMOID_NS)
_SIGMOID_BACKWARD = Kernel(_sigmoid_backward_numpy, _sigmoid_backward, ns=_PASS_NS)


# ------------------------------------------------------------------ SiLU
def silu(x: np.ndarray, keep_sigmoid: bool) -> tuple:
    """``(x * sigmoid(x), sigmoid(x) or None)``: the sigmoid is returned when ``keep_sigmoid``
    (for ``silu_backward``), at the cost of one more array written."""
    out = np.empty(x.shape, x.dtype)
    s = np.empty(x.shape, x.dtype) if keep_sigmoid else None
    _SILU.on(x)(x.ravel(), out.ravel(), None if s is None else s.ravel())
    return out, s


def silu_backward(grad: np.ndarray, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """grad * s * (1 + x * (1 - s)), s = sigmoid(x) (from ``silu``; of x's shape and dtype)."""
    if not same_layout(grad, x):
        return grad * (s * (1 + x * (1 - s)))
    out = np.empty(x.shape, x.dtype)
    _SILU_BACKWARD.on(x)(grad.ravel(), x.ravel(), s.ravel(), out.ravel())
    return out


def _silu_numpy(x: np.ndarray, out: np.ndarray, s) -> None:
    """Reference (1-D): the sigmoid's reference, times x."""
    sig = np.empty_like(x)
    _sigmoid_numpy(x, sig)
    out[...] = x * sig
    if s is not None:
        s[...] = sig


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _silu_loop(x, out, s, exp):
    for i in range(x.size):
        si = _logistic(x[i], exp)
        out[i] = x[i] * si
        if s is not None:
            s[i] = si


@njit(fastmath={"contract"}, error_model="numpy")
def _silu(x, out, s):
    if x.itemsize == 4:
        _silu_loop(x, out, s, exp32)
    else:
        _silu_loop(x, out, s, exp64)


def _silu_backward_numpy(grad: np.ndarray, x: np.ndarray, s: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D)."""
    out[...] = grad * (s * (1 + x * (1 - s)))


@njit(fastmath={"contract"}, error_model="numpy")
def _silu_backward(grad, x, s, out):
    for i in range(x.size):
        out[i] = grad[i] * (s[i] * (_ONE + x[i] * (_ONE - s[i])))


_SILU = Kernel(_silu_numpy, _silu, ns=_SILU_NS)
_SILU_BACKWARD = Kernel(_silu_backward_numpy, _silu_backward, ns=_PASS_NS)
