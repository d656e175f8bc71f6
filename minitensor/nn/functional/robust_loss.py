"""``l1_loss``, ``smooth_l1_loss`` and ``huber_loss``: regression losses less sensitive to outliers than MSE.

With ``d = input - target``, elementwise::

    l1_loss         |d|
    smooth_l1_loss  0.5 d^2 / beta   where |d| < beta,  |d| - 0.5 beta   elsewhere  (beta = 0: |d|)
    huber_loss      0.5 d^2          where |d| < delta, delta (|d| - 0.5 delta) elsewhere

then averaged (``reduction='mean'``), summed (``'sum'``) or kept (``'none'``), as
PyTorch's functions of the same names.  Each is one graph node
(``ops/robust_loss.py``: the loss forward, one slope array backward; Tensor ops under
``create_graph``): at ``d = 0`` the gradient of ``|d|`` is 0, and at ``|d| = beta``
both pieces have the same slope.

>>> F.smooth_l1_loss(mt.tensor([0.5, 3.0]), mt.tensor([0.0, 0.0]), reduction="none").tolist()
[0.125, 2.5]
"""

from __future__ import annotations

from ...ops.robust_loss import RobustLoss
from ...tensor import Tensor
from .loss import regression_pair


def l1_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean (or sum, or elementwise) absolute error ``|input - target|``."""
    input, target = regression_pair(input, target, reduction, "l1_loss")  # noqa: A001
    return RobustLoss.apply(input, target, kind="l1", reduction=reduction)


def smooth_l1_loss(input: Tensor, target, reduction: str = "mean", beta: float = 1.0) -> Tensor:  # noqa: A002
    """Squared error below ``beta`` (scaled by 1/beta), absolute error above it; ``beta >= 0``."""
    input, target = regression_pair(input, target, reduction, "smooth_l1_loss")  # noqa: A001
    beta = _positive(beta, "smooth_l1_loss: beta", zero_ok=True)
    kind = "smooth_l1" if beta > 0 else "l1"
    return RobustLoss.apply(input, target, kind=kind, limit=beta, reduction=reduction)


def huber_loss(input: Tensor, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:  # noqa: A002
    """Squared error below ``delta``, ``delta`` times the absolute error above it; ``delta > 0``."""
    input, target = regression_pair(input, target, reduction, "huber_loss")  # noqa: A001
    delta = _positive(delta, "huber_loss: delta", zero_ok=False)
    return RobustLoss.apply(input, target, kind="huber", limit=delta, reduction=reduction)


def _positive(value, name: str, zero_ok: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if value < 0 or (value == 0 and not zero_ok):
        raise ValueError(f"{name} must be {'non-negative' if zero_ok else 'positive'}, got {value}")
    return float(value)
