"""``Erf``: the error function as an op (exact GELU's composite form differentiates it).

The function itself, W. J. Cody's approximation in NumPy, is the backend's (``kernels/erf.py``).

>>> x = mt.tensor([0.0, 0.5], dtype=mt.float64, requires_grad=True)
>>> y = Erf.apply(x)
>>> y.sum().backward()
>>> y.detach().numpy().round(4), x.grad.numpy().round(4)      # erf, and 2/sqrt(pi) exp(-x^2)
(array([0.    , 0.5205]), array([1.1284, 0.8788]))
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.function import Op

erf = backend.erf  # (the function, under the name it had here: ``minitensor.ops.special.erf``)
_TWO_OVER_SQRT_PI = 2 * 0.56418958354775628695  # 2 / sqrt(pi)


class Erf(Op):
    """y = erf(x);  dy/dx = 2/sqrt(pi) * exp(-x^2) (differentiable again: exact GELU's composite form uses it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.erf(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (_TWO_OVER_SQRT_PI * np.exp(-(x * x)))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once
