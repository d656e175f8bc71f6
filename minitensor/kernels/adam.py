"""Adam's update of one parameter in one pass over memory.

The NumPy reference (``_adam_numpy``, the rule of ``optim/adam.py`` line by line)
makes about ten passes, each a ufunc call with its own temporaries: for the small
parameters of a course-sized model (a bias of 64 numbers) the calls, not the
arithmetic, are the cost, ~20 µs per parameter and step.  The kernel makes one
pass and one call.  It does the same float operations in the same order and
dtype (the settings are cast to the parameter's dtype first, as NumPy does with
a Python number, and no ``fastmath``, so nothing is fused or reordered): the two
give the same bits (``tests/kernels/test_adam_kernel.py``).

Arrays: ``param``, ``grad``, ``m`` (exp_avg), ``v`` (exp_avg_sq) and ``v_max``
(max_exp_avg_sq, or None without amsgrad), of one shape and dtype; the kernel takes them as
1-D views (one specialisation for parameters of every shape).

>>> p, g = np.array([1.0, -2.0]), np.array([2.0, -4.0])
>>> m, v = np.zeros(2), np.zeros(2)
>>> adam_update(p, g, m, v, None, lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
...             decoupled=False, maximize=False, step=1)
>>> p.round(4)
array([ 0.9, -1.9])
"""

from __future__ import annotations

import math

import numpy as np

from .pointwise import same_layout
from .runtime.dispatch import Kernel
from .runtime.jit import njit


def adam_update(param, grad, m, v, v_max, *, lr, betas, eps, weight_decay, decoupled, maximize, step) -> None:
    """Update ``param``, ``m``, ``v`` (and ``v_max``) in place by one Adam step number ``step`` (from 1)."""
    settings = adam_settings(param.dtype, lr, betas, eps, weight_decay, decoupled, step)
    adam_apply(param, grad, m, v, v_max, maximize, settings)


def adam_settings(dtype, lr, betas, eps, weight_decay, decoupled, step) -> np.ndarray:
    """The step's numbers, each rounded to the parameter's dtype (NumPy's rule for a Python number
    in an operation with an array): shrink, l2, b1, c1, b2, c2, bias2, eps, step_size.  The same
    for all parameters of a group with the same dtype and step count: an optimizer computes them
    once a step."""
    beta1, beta2 = betas
    shrink, l2 = (1 - lr * weight_decay, 0) if decoupled else (1, weight_decay)
    bias2, step_size = math.sqrt(1 - beta2**step), lr / (1 - beta1**step)
    return np.array((shrink, l2, beta1, 1 - beta1, beta2, 1 - beta2, bias2, eps, step_size), dtype)


def adam_apply(param, grad, m, v, v_max, maximize: bool, settings: np.ndarray) -> None:
    """``adam_update`` with the step's ``settings`` from ``adam_settings``: the kernel when the arrays
    are C-contiguous of the parameter's shape and dtype, else the reference."""
    flat = _same_layout(param, grad) and _same_layout(param, m) and _same_layout(param, v)
    if flat and (v_max is None or _same_layout(param, v_max)):  # (1-D views: one specialisation for all shapes)
        arrays = [None if a is None else a.reshape(-1) for a in (param, grad, m, v, v_max)]
        _ADAM.on(param)(*arrays, maximize, settings)
    else:
        _adam_numpy(param, grad, m, v, v_max, maximize, settings)


def _same_layout(param: np.ndarray, other: np.ndarray) -> bool:
    """Both C-contiguous and of one shape and dtype (``pointwise.same_layout``): a flat loop covers both."""
    return param.flags.c_contiguous and other.flags.c_contiguous and same_layout(param, other)


def _adam_numpy(param, grad, m, v, v_max, maximize, settings) -> None:
    """The reference: ``optim/adam.py``'s rule, one NumPy call per line (silent on NaN and inf, as the kernel)."""
    with np.errstate(all="ignore"):
        _adam_lines(param, grad, m, v, v_max, maximize, *settings)


def _adam_lines(param, grad, m, v, v_max, maximize, shrink, l2, b1, c1, b2, c2, bias2, eps, step_size) -> None:
    if maximize:
        grad = -grad
    if shrink != 1:
        param *= shrink
    if l2 != 0:
        grad = grad + l2 * param
    m *= b1
    m += c1 * grad
    v *= b2
    v += c2 * (grad * grad)
    if v_max is not None:
        v = np.maximum(v_max, v, out=v_max)
    denom = np.sqrt(v)
    denom /= bias2
    denom += eps
    param -= step_size * (m / denom)


@njit(error_model="numpy")  # (division by zero gives inf, as NumPy; python's model would not vectorise)
def _adam(param, grad, m, v, v_max, maximize, settings):
    # One loop over the 1-D arrays.  No branches inside the loop, only selects, so that LLVM
    # vectorises it (x * 1 and -x are exact).
    shrink, l2, b1, c1, b2, c2, bias2, eps, step_size = settings
    sign = -shrink / shrink if maximize else shrink / shrink  # -1 or 1 in the parameter's dtype
    use_l2 = l2 != 0
    for i in range(param.size):
        g = grad[i] * sign
        p = param[i] * shrink
        g = g + l2 * p if use_l2 else g
        mi = m[i] * b1 + c1 * g
        vi = v[i] * b2 + c2 * (g * g)
        m[i] = mi
        v[i] = vi
        if v_max is not None:  # (decided when compiling: None is a type of its own)
            top = v_max[i]
            vi = top if (top > vi) | (top != top) else vi  # np.maximum: NaN if either is NaN
            v_max[i] = vi
        param[i] = p - step_size * (mi / (np.sqrt(vi) / bias2 + eps))


_ADAM = Kernel(_adam_numpy, _adam)
