"""``l1_loss``, ``smooth_l1_loss`` and ``huber_loss``: regression losses less sensitive to outliers than MSE.

With ``d = input - target``, elementwise::

    l1_loss         |d|
    smooth_l1_loss  0.5 d^2 / beta   where |d| < beta,  |d| - 0.5 beta   elsewhere  (beta = 0: |d|)
    huber_loss      0.5 d^2          where |d| < delta, delta (|d| - 0.5 delta) elsewhere

then averaged (``reduction='mean'``), summed (``'sum'``) or kept (``'none'``), as
PyTorch's functions of the same names.  They are built from Tensor ops (``abs``,
``where``), so their gradients, of any order, come from those: at ``d = 0`` the
gradient of ``|d|`` is 0, and at ``|d| = beta`` both pieces have the same slope.

>>> F.smooth_l1_loss(mt.tensor([0.5, 3.0]), mt.tensor([0.0, 0.0]), reduction="none").tolist()
[0.125, 2.5]
"""

from __future__ import annotations

from ... import functions
from ...tensor import Tensor
from .loss import regression_pair


def l1_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean (or sum, or elementwise) absolute error ``|input - target|``."""
    input, target = regression_pair(input, target, reduction, "l1_loss")  # noqa: A001
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input: Tensor, target, reduction: str = "mean", beta: float = 1.0) -> Tensor:  # noqa: A002
    """Squared error below ``beta`` (scaled by 1/beta), absolute error above it; ``beta >= 0``."""
    input, target = regression_pair(input, target, reduction, "smooth_l1_loss")  # noqa: A001
    beta = _positive(beta, "smooth_l1_loss: beta", zero_ok=True)
    d = input - target
    if beta == 0:
        return _reduce(d.abs(), reduction)
    return _reduce(_quadratic_then_linear(d, beta) / beta, reduction)


def huber_loss(input: Tensor, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:  # noqa: A002
    """Squared error below ``delta``, ``delta`` times the absolute error above it; ``delta > 0``."""
    input, target = regression_pair(input, target, reduction, "huber_loss")  # noqa: A001
    delta = _positive(delta, "huber_loss: delta", zero_ok=False)
    return _reduce(_quadratic_then_linear(input - target, delta), reduction)


def _quadratic_then_linear(d: Tensor, limit: float) -> Tensor:
    """0.5 d^2 where |d| < limit, limit (|d| - 0.5 limit) elsewhere."""
    a = d.abs()
    return functions.where(a < limit, 0.5 * d * d, limit * (a - 0.5 * limit))


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _positive(value, name: str, zero_ok: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if value < 0 or (value == 0 and not zero_ok):
        raise ValueError(f"{name} must be {'non-negative' if zero_ok else 'positive'}, got {value}")
    return float(value)
