"""The piecewise activations (``ops/activations.py``), forward and backward, each in one pass.

    leaky_relu     x if x > 0 else slope * x             backward: grad if x > 0 else grad * slope
    hardtanh       clip(x, low, high)                    grad strictly inside (low, high), else 0
    clamp          (hardtanh's forward)                   grad on [low, high], else 0
    hardsigmoid    clip(x + 3, 0, 6) / 6                 grad / 6 on (-3, 3), else 0
    hardswish      x * clip(x + 3, 0, 6) / 6             0 up to -3, grad * (x/3 + 1/2) on (-3, 3), grad from 3
    threshold      x if x > threshold else value         grad if x > threshold, else 0
    softshrink     x - l above l, x + l below -l, else 0 (x * 0: NaN stays NaN)
    hardshrink     x outside [-l, l], else 0             (both shrinks) grad outside [-l, l], else 0
    frac           x - trunc(x) (inf gives NaN)          grad (the op passes it on: no kernel)

NumPy computes each as two to six passes (masks, ``np.where``, ``np.clip``, temporaries); PyTorch in
one, as these kernels do.  The choices at the kinks and at NaN are PyTorch's (a comparison with NaN is
false, so NaN takes the branch PyTorch's kernel takes); settings are rounded to the array's dtype
first, as PyTorch does (``threshold(x, 0.1, v)`` compares float32 ``x`` with ``float32(0.1)``).

Every kernel takes flat arrays and two settings, ``(x, p, q, out)`` forward and ``(grad, x, p, q,
out)`` backward (``p``, ``q``: slope, bounds, threshold and value, lambda; 0 where unused), and has
its NumPy reference beside it with the same signature (the definition: ``MINITENSOR_DISABLE_JIT=1``
runs it, and ``tests/kernels/test_piecewise_kernel.py`` holds the two equal).  The public functions
take arrays of any shape and layout (``ravel()`` copies a non-contiguous or broadcast one) and
return new C-contiguous arrays of x's shape and dtype; the backward kernels read a gradient that is one
value throughout (``sum``'s) from a 1-element array (``runtime/dispatch.flat_operand``).

>>> hardswish(np.array([-4.0, 0.0, 1.5, 4.0]))
array([-0.   ,  0.   ,  1.125,  4.   ])
>>> threshold_backward(np.ones(3), np.array([0.0, 0.5, np.nan]), 0.1)
array([0., 1., 1.])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit

# float32 constants: float32 arithmetic stays float32 (a Python 3 would make it float64, half the SIMD
# width); with float64 arrays they widen exactly.
_ZERO, _HALF, _THREE, _SIX = np.float32(0.0), np.float32(0.5), np.float32(3.0), np.float32(6.0)
_NS = 0.15  # serial ns per element (the ``Kernel``'s ``ns``): one pass over two or three arrays


def _setting(x: np.ndarray, value: float):
    """A setting in x's float dtype (a number as given for other dtypes)."""
    return x.dtype.type(value) if x.dtype.kind == "f" else value


def _forward(kernel: Kernel, x: np.ndarray, p: float = 0.0, q: float = 0.0) -> np.ndarray:
    out = np.empty(x.shape, x.dtype)
    kernel.on(x)(x.ravel(), _setting(x, p), _setting(x, q), out.ravel())
    return out


def _backward(kernel: Kernel, grad: np.ndarray, x: np.ndarray, p: float = 0.0, q: float = 0.0) -> np.ndarray:
    out = np.empty(x.shape, x.dtype)
    kernel.on(x)(flat_operand(grad, x), x.ravel(), _setting(x, p), _setting(x, q), out.ravel())
    return out


# ------------------------------------------------------------------ leaky ReLU
def leaky_relu(x: np.ndarray, slope: float) -> np.ndarray:
    """x where x > 0, else slope * x."""
    return _forward(_LEAKY_RELU, x, slope)


def leaky_relu_backward(grad: np.ndarray, x: np.ndarray, slope: float) -> np.ndarray:
    """grad where x > 0, else grad * slope (NaN: grad * slope, as PyTorch)."""
    return _backward(_LEAKY_RELU_BACKWARD, grad, x, slope)


def _leaky_relu_numpy(x, slope, _, out) -> None:
    out[...] = np.where(x > 0, x, x * slope)


@njit
def _leaky_relu(x, slope, _, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v if v > _ZERO else v * slope


def _leaky_relu_backward_numpy(grad, x, slope, _, out) -> None:
    out[...] = np.where(x > 0, grad, grad * slope)


@njit
def _leaky_relu_backward(grad, x, slope, _, out):
    full = grad.size > 1
    for i in range(x.size):
        g = grad[i if full else 0]
        out[i] = g if x[i] > _ZERO else g * slope


# ------------------------------------------------------------------ hardtanh (and relu6)
def hardtanh(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """clip(x, low, high), NaN kept."""
    return _forward(_HARDTANH, x, low, high)


def hardtanh_backward(grad: np.ndarray, x: np.ndarray, low: float, high: float) -> np.ndarray:
    """grad strictly inside (low, high) (and at NaN), else 0."""
    return _backward(_HARDTANH_BACKWARD, grad, x, low, high)


def _hardtanh_numpy(x, low, high, out) -> None:
    out[...] = np.clip(x, low, high)


@njit
def _hardtanh(x, low, high, out):
    for i in range(x.size):
        v = x[i]
        v = low if v < low else v
        out[i] = high if v > high else v


def _hardtanh_backward_numpy(grad, x, low, high, out) -> None:
    out[...] = np.where((x <= low) | (x >= high), 0, grad)


@njit
def _hardtanh_backward(grad, x, low, high, out):
    full = grad.size > 1
    for i in range(x.size):
        v, g = x[i], grad[i if full else 0]
        out[i] = _ZERO if (v <= low) | (v >= high) else g


# ------------------------------------------------------------------ clamp (forward: hardtanh's kernel)
def clamp_backward(grad: np.ndarray, x: np.ndarray, low: float, high: float) -> np.ndarray:
    """grad on [low, high], the bounds included (PyTorch's clamp; hardtanh's excludes them), else 0
    (NaN too, and an infinite gradient outside: a select, not a product)."""
    return _backward(_CLAMP_BACKWARD, grad, x, low, high)


def _clamp_backward_numpy(grad, x, low, high, out) -> None:
    out[...] = np.where((x >= low) & (x <= high), grad, 0)


@njit
def _clamp_backward(grad, x, low, high, out):
    full = grad.size > 1
    for i in range(x.size):
        v, g = x[i], grad[i if full else 0]
        out[i] = g if (v >= low) & (v <= high) else _ZERO


# ------------------------------------------------------------------ hardsigmoid and hardswish
def hardsigmoid(x: np.ndarray) -> np.ndarray:
    """clip(x + 3, 0, 6) / 6."""
    return _forward(_HARDSIGMOID, x)


def hardsigmoid_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """grad / 6 on (-3, 3), else 0 (NaN too)."""
    return _backward(_HARDSIGMOID_BACKWARD, grad, x)


def hardswish(x: np.ndarray) -> np.ndarray:
    """x * clip(x + 3, 0, 6) / 6."""
    return _forward(_HARDSWISH, x)


def hardswish_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """0 up to -3, grad * (x / 3 + 1/2) on (-3, 3), grad from 3 on (and at NaN)."""
    return _backward(_HARDSWISH_BACKWARD, grad, x)


def _hardsigmoid_numpy(x, _p, _q, out) -> None:
    out[...] = np.clip(x + 3, 0, 6) / 6


@njit(inline="always")
def _clip06(v):
    """clip(v, 0, 6), NaN kept."""
    v = _ZERO if v < _ZERO else v
    return _SIX if v > _SIX else v


@njit
def _hardsigmoid(x, _p, _q, out):
    for i in range(x.size):
        out[i] = _clip06(x[i] + _THREE) / _SIX


def _hardsigmoid_backward_numpy(grad, x, _p, _q, out) -> None:
    out[...] = np.where((x > -3) & (x < 3), grad / 6, 0)


@njit
def _hardsigmoid_backward(grad, x, _p, _q, out):
    full = grad.size > 1
    for i in range(x.size):
        v, g = x[i], grad[i if full else 0]
        out[i] = g / _SIX if (v > -_THREE) & (v < _THREE) else _ZERO


def _hardswish_numpy(x, _p, _q, out) -> None:
    out[...] = x * np.clip(x + 3, 0, 6) / 6


@njit
def _hardswish(x, _p, _q, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v * _clip06(v + _THREE) / _SIX


def _hardswish_backward_numpy(grad, x, _p, _q, out) -> None:
    out[...] = np.where(x <= -3, 0, np.where(x < 3, grad * (x / 3 + 0.5), grad))


@njit
def _hardswish_backward(grad, x, _p, _q, out):
    full = grad.size > 1
    for i in range(x.size):
        v, g = x[i], grad[i if full else 0]
        inner = g * (v / _THREE + _HALF)
        out[i] = _ZERO if v <= -_THREE else (inner if v < _THREE else g)


# ------------------------------------------------------------------ threshold
def threshold(x: np.ndarray, threshold: float, value: float) -> np.ndarray:
    """x where x > threshold (and NaN), else value."""
    return _forward(_THRESHOLD, x, threshold, value)


def threshold_backward(grad: np.ndarray, x: np.ndarray, threshold: float) -> np.ndarray:
    """grad where x > threshold (and at NaN), else 0."""
    return _backward(_THRESHOLD_BACKWARD, grad, x, threshold)


def _threshold_numpy(x, threshold, value, out) -> None:
    out[...] = np.where(x <= threshold, value, x)


@njit
def _threshold(x, threshold, value, out):
    for i in range(x.size):
        v = x[i]
        out[i] = value if v <= threshold else v


def _threshold_backward_numpy(grad, x, threshold, _, out) -> None:
    out[...] = np.where(x <= threshold, 0, grad)


@njit
def _threshold_backward(grad, x, threshold, _, out):
    full = grad.size > 1
    for i in range(x.size):
        g = grad[i if full else 0]
        out[i] = _ZERO if x[i] <= threshold else g


# ------------------------------------------------------------------ softshrink and hardshrink
def softshrink(x: np.ndarray, lambd: float) -> np.ndarray:
    """x - lambd above lambd, x + lambd below -lambd, else x * 0 (NaN stays NaN)."""
    return _forward(_SOFTSHRINK, x, lambd)


def hardshrink(x: np.ndarray, lambd: float) -> np.ndarray:
    """x outside [-lambd, lambd] (and NaN), else 0."""
    return _forward(_HARDSHRINK, x, lambd)


def shrink_backward(grad: np.ndarray, x: np.ndarray, lambd: float) -> np.ndarray:
    """The gradient of both shrinks: grad outside [-lambd, lambd] (NaN is outside), 0 inside."""
    return _backward(_SHRINK_BACKWARD, grad, x, lambd)


def _softshrink_numpy(x, lambd, _, out) -> None:
    out[...] = np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, x * 0))


@njit
def _softshrink(x, lambd, _, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v - lambd if v > lambd else (v + lambd if v < -lambd else v * _ZERO)


def _hardshrink_numpy(x, lambd, _, out) -> None:
    out[...] = np.where((x >= -lambd) & (x <= lambd), 0, x)


@njit
def _hardshrink(x, lambd, _, out):
    for i in range(x.size):
        v = x[i]
        out[i] = _ZERO if (v >= -lambd) & (v <= lambd) else v


def _shrink_backward_numpy(grad, x, lambd, _, out) -> None:
    out[...] = np.where((x >= -lambd) & (x <= lambd), 0, grad)


@njit
def _shrink_backward(grad, x, lambd, _, out):
    full = grad.size > 1
    for i in range(x.size):
        v, g = x[i], grad[i if full else 0]
        out[i] = _ZERO if (v >= -lambd) & (v <= lambd) else g


_LEAKY_RELU = Kernel(_leaky_relu_numpy, _leaky_relu, ns=_NS)
_LEAKY_RELU_BACKWARD = Kernel(_leaky_relu_backward_numpy, _leaky_relu_backward, ns=_NS)
_HARDTANH = Kernel(_hardtanh_numpy, _hardtanh, ns=_NS)
_HARDTANH_BACKWARD = Kernel(_hardtanh_backward_numpy, _hardtanh_backward, ns=_NS)
_CLAMP_BACKWARD = Kernel(_clamp_backward_numpy, _clamp_backward, ns=_NS)
_HARDSIGMOID = Kernel(_hardsigmoid_numpy, _hardsigmoid, ns=_NS)
_HARDSIGMOID_BACKWARD = Kernel(_hardsigmoid_backward_numpy, _hardsigmoid_backward, ns=_NS)
_HARDSWISH = Kernel(_hardswish_numpy, _hardswish, ns=_NS)
_HARDSWISH_BACKWARD = Kernel(_hardswish_backward_numpy, _hardswish_backward, ns=_NS)
_THRESHOLD = Kernel(_threshold_numpy, _threshold, ns=_NS)
_THRESHOLD_BACKWARD = Kernel(_threshold_backward_numpy, _threshold_backward, ns=_NS)
_SOFTSHRINK = Kernel(_softshrink_numpy, _softshrink, ns=_NS)
_HARDSHRINK = Kernel(_hardshrink_numpy, _hardshrink, ns=_NS)
_SHRINK_BACKWARD = Kernel(_shrink_backward_numpy, _shrink_backward, ns=_NS)


# ------------------------------------------------------------------ frac
def frac(x: np.ndarray) -> np.ndarray:
    """x - trunc(x), the fractional part with x's sign (NumPy's formula for other than floats)."""
    if x.dtype.kind != "f":
        return x - np.trunc(x)
    return _forward(_FRAC, x)


def _frac_numpy(x, _p, _q, out) -> None:
    with np.errstate(invalid="ignore"):  # (inf - inf: NaN, silently as PyTorch)
        out[...] = x - np.trunc(x)


@njit(error_model="numpy")
def _frac(x, _p, _q, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v - np.trunc(v)


_FRAC = Kernel(_frac_numpy, _frac, ns=_NS)
