"""The gamma family as ops: ``lgamma``, ``digamma`` and ``polygamma``, each the next one's antiderivative::

    d lgamma x = digamma x = polygamma(0, x)        d polygamma(n, x) = polygamma(n + 1, x)

so one op, ``Polygamma`` with its order ``n`` as a setting, carries every derivative after the first.
The functions are the backend's (``kernels/gamma.py``).  Integer inputs are computed in the default
float dtype.  (``minitensor.distributions`` takes them for Gamma, Beta and Dirichlet.)

>>> x = mt.tensor([0.5, 3.0], dtype=mt.float64, requires_grad=True)
>>> mt.lgamma(x).sum().backward()
>>> x.grad                                     # digamma(0.5), digamma(3)
tensor([-1.9635,  0.9228], dtype=float64)
"""

from __future__ import annotations

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.function import Op
from .arguments import float_input, int_arg


class Lgamma(Op):
    """log |Gamma(x)|;  dx = grad * digamma(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.lgamma(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Polygamma.call(x, n=0)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Polygamma(Op):
    """psi_n(x), the n-th derivative of digamma (n = 0: digamma);  dx = grad * psi_(n+1)(x)."""

    @staticmethod
    def forward(ctx, x, n=0):
        ctx.save_for_backward(x)
        ctx.n = n
        return backend.polygamma(n, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Polygamma.call(x, n=ctx.n + 1)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def lgamma(input):  # noqa: A002
    """log |Gamma(x)| (inf at 0, -1, -2, ...)."""
    return Lgamma.apply(float_input(input, "lgamma"))


def digamma(input):  # noqa: A002
    """psi(x) = d/dx log Gamma(x) (-inf at 0, NaN at the negative integers, as PyTorch)."""
    return Polygamma.apply(float_input(input, "digamma"), n=0)


def polygamma(n: int, input):  # noqa: A002  (PyTorch's order: n first)
    """The n-th derivative of digamma (n >= 0)."""
    n = int_arg(n, "polygamma", "n", low=0)
    return Polygamma.apply(float_input(input, "polygamma"), n=n)
