"""Negative log-likelihood losses of a distribution's parameters: ``poisson_nll_loss`` and
``gaussian_nll_loss``, as ``torch.nn.functional``'s (PyTorch's formulas, Tensor ops).

    poisson_nll_loss(x, t)         exp(x) - t x                      (log_input=True: x is the log-rate)
                                   x - t log(x + eps)                (log_input=False: x is the rate)
        full=True adds Stirling's  t log t - t + log(2 pi t) / 2      where t > 1
    gaussian_nll_loss(x, t, var)   (log(var) + (x - t)^2 / var) / 2   (+ log(2 pi) / 2 with full=True)

The constant ``log(t!)`` is left out, as PyTorch does; ``var`` is clamped below at ``eps`` on the value
only (PyTorch clamps it under ``no_grad``), so its gradient is the formula's at the clamped value.

>>> F.gaussian_nll_loss(mt.tensor([1.0]), mt.tensor([1.0]), mt.tensor([1.0])).item()
0.0
"""

from __future__ import annotations

import math

from ...ops.loss import _reduce_tensor
from ...tensor import Tensor
from ...tensor.creation import full_like
from ._checks import as_input, check_float, check_number, float_like, reduction_of
from .margin_loss import _broadcast


def _pair(input, target, fn: str) -> tuple:  # noqa: A002
    like = float_like(input, target)
    x, t = as_input(input, "input", fn, like=like), as_input(target, "target", fn, like=like)
    check_float(x, fn)
    if t.dtype != x.dtype:
        raise TypeError(f"{fn}: target dtype {t.dtype} does not match input dtype {x.dtype}")
    _broadcast(fn, input=x, target=t)
    return x, t


def _check_flag(value, name: str, fn: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{fn}: {name} must be a bool, got {type(value).__name__} {value!r}")
    return value


def poisson_nll_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log-likelihood of counts ``target`` given the rate (``log_input=False``) or its log
    (``log_input=True``, the default) ``input``."""
    fn = "poisson_nll_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x, t = _pair(input, target, fn)
    eps = check_number(eps, "eps", fn)
    if _check_flag(log_input, "log_input", fn):
        loss = x.exp() - t * x
    else:
        loss = x - t * (x + eps).log()
    if _check_flag(full, "full", fn):
        big = t > 1  # (Stirling's term only where t > 1; elsewhere t log t would be NaN at t <= 0)
        safe = t.masked_fill(~big, 2.0)
        loss = loss + (safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()).masked_fill(~big, 0.0)
    return _reduce_tensor(loss, reduction, loss.numel())


def gaussian_nll_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    var,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log-likelihood of ``target`` given the mean ``input`` and variance ``var``.

    ``var`` has the input's shape (one variance per element), or one dim fewer or a dim of size 1
    (shared along that dim), or is a number.  Its entries must be non-negative.
    """
    fn = "gaussian_nll_loss"
    reduction = reduction_of(None, None, reduction, fn)
    x, t = _pair(input, target, fn)
    eps = check_number(eps, "eps", fn)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(f"{fn}: var must be non-negative, got {var}")
        var = full_like(x, float(var))
    var = as_input(var, "var", fn, like=x.dtype)
    if var.dtype != x.dtype:
        raise TypeError(f"{fn}: var dtype {var.dtype} does not match input dtype {x.dtype}")
    if var.shape != x.shape:
        if var.shape == x.shape[:-1]:  # one variance per row (homoscedastic along the last dim)
            var = var.unsqueeze(-1)
        elif not (var.ndim == x.ndim and sum(v for s, v in zip(x.shape, var.shape) if s != v) == 1):
            raise ValueError(
                f"{fn}: var must have the input's shape {x.shape}, that shape without its last dim, or one dim "
                f"of size 1 in its place; got {var.shape}"
            )
    if bool((var < 0).any()):
        raise ValueError(f"{fn}: var has negative entries")
    fixed = var.detach()
    var = var + (fixed.clamp(min=eps) - fixed)  # (the clamp on the value only, as PyTorch)
    loss = 0.5 * (var.log() + (x - t) ** 2 / var)
    if _check_flag(full, "full", fn):
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce_tensor(loss, reduction, loss.numel())
