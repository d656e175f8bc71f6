"""The Kullback-Leibler divergence's pointwise terms and their sum, in one pass (``F.kl_div``)::

    loss = xlogy(t, t) - t * x       target probabilities t (xlogy(t, t) = t log t, 0 at t = 0)
    loss = exp(t) * (t - x)          log_target: t holds log-probabilities

``x`` holds log-probabilities.  ``lt`` = log(t) (resp. exp(t)) comes from NumPy's SIMD
``log`` (``exp``) in one pass; the kernel does the rest and the float64 sum (``vector_sum``)
in a second, where NumPy takes about seven passes with temporaries.  The arithmetic is
PyTorch's: a negative or NaN target gives NaN, and so does t = 0 with an infinite x
(``0 * inf``).  The backward pass (``-t`` or ``-exp(t)`` times the gradient) is one NumPy
multiply and needs no kernel.  ``tests/kernels/test_divergence_kernel.py`` holds the kernel
equal to its NumPy reference.

>>> loss, lt = kl_div(np.log([0.5, 0.5]), np.array([0.0, 1.0]), log_target=False, per_element=True)
>>> loss.round(4)
array([0.    , 0.6931])
"""

from __future__ import annotations

import numpy as np

from ._sum import vector_sum
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_PIECE = 2048  # elements per piece of losses summed (in the L1 cache)
_ZERO = np.float32(0.0)  # (keeps float32 arithmetic float32; widens exactly with float64)


def kl_div(x: np.ndarray, t: np.ndarray, log_target: bool, per_element: bool) -> tuple:
    """``(loss, lt)`` for x, t of one shape and dtype: the per-element losses (``per_element``)
    or their float64 sum, and ``lt`` = log(t), or exp(t) with ``log_target``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # log(0) = -inf, log(-1) = NaN
        lt = np.exp(t) if log_target else np.log(t)
    loss = np.empty(x.shape, x.dtype) if per_element else None
    total = _KL_DIV.on(x)(x.ravel(), t.ravel(), lt.ravel(), log_target, None if loss is None else loss.ravel())
    return (loss if per_element else total), lt


def _kl_div_numpy(x, t, lt, log_target, loss) -> float:
    """Reference (1-D); returns the float64 sum of the losses."""
    with np.errstate(invalid="ignore"):  # (0 * -inf where t = 0: the where discards it)
        each = lt * (t - x) if log_target else np.where(t == 0, 0, t * lt) - t * x
    if loss is not None:
        loss[...] = each
    return float(np.sum(each, dtype=np.float64))


@njit(fastmath={"contract"}, error_model="numpy")
def _kl_div(x, t, lt, log_target, loss):
    total = 0.0
    scratch = np.empty(min(x.size, _PIECE), x.dtype)
    for start in range(0, x.size, _PIECE):  # (slices indexed from 0: LLVM vectorises these loops)
        stop = min(start + _PIECE, x.size)
        xs, ts, ls, each = x[start:stop], t[start:stop], lt[start:stop], scratch[: stop - start]
        if log_target:
            for j in range(xs.size):
                each[j] = ls[j] * (ts[j] - xs[j])
        else:
            for j in range(xs.size):
                tj = ts[j]
                each[j] = (_ZERO if tj == _ZERO else tj * ls[j]) - tj * xs[j]
        if loss is not None:
            out = loss[start:stop]
            for j in range(xs.size):
                out[j] = each[j]
        total += vector_sum(each)
    return total


_KL_DIV = Kernel(_kl_div_numpy, _kl_div, ns=0.25)  # (ns: serial ns per element, measured)
