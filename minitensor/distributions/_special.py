"""``lgamma`` and ``digamma`` of a distribution's concentration, as constants.

minitensor has no lgamma/digamma op yet (an op needs the next derivative as its backward:
lgamma' = digamma, digamma' = trigamma).  Gamma, Beta and Dirichlet need them only of their
concentration parameters, so here they are computed in NumPy as constants: values are exact
(``math.lgamma``; digamma by recurrence and its asymptotic series, below 1e-13 relative error),
and gradients flow to every other argument (the value, the Gamma's rate).  A concentration
that requires grad, with grad mode on, raises NotImplementedError: its gradient would
silently be missing.  When the ops exist, these two functions become ``t.lgamma()`` and
``t.digamma()``.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor

_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)


def _constant_of(t: Tensor, name: str) -> np.ndarray:
    if t.requires_grad and is_grad_enabled():
        raise NotImplementedError(
            f"{name} of a tensor that requires grad: minitensor has no {name} op yet, so the gradient w.r.t. this "
            "concentration cannot be computed (its values can: use mt.no_grad(), or a concentration that does not "
            "require grad)"
        )
    return np.asarray(t.numpy(), dtype=np.float64)


def lgamma(t: Tensor) -> Tensor:
    """log |Gamma(t)|, elementwise, as a constant tensor of t's dtype."""
    return Tensor._make(np.asarray(_LGAMMA(_constant_of(t, "lgamma")), dtype=np.float64).astype(t.dtype), False, None)


def digamma_array(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx log Gamma(x) for x > 0 (float64): psi(x) = psi(x + n) - sum 1/(x + k), then the
    asymptotic series log z - 1/(2z) - sum B_2k / (2k z^2k) at z = x + n >= 10."""
    x = np.array(x, dtype=np.float64)
    result = np.zeros_like(x)
    for _ in range(10):
        small = x < 10
        result[small] -= 1.0 / x[small]
        x = np.where(small, x + 1.0, x)
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    return result + np.log(x) - 0.5 / x - series


def digamma(t: Tensor) -> Tensor:
    """psi(t), elementwise, as a constant tensor of t's dtype."""
    return Tensor._make(digamma_array(_constant_of(t, "digamma")).astype(t.dtype), False, None)
