"""``kl_div``: the Kullback-Leibler divergence of ``target`` from the distribution whose
log-probabilities are ``input`` (PyTorch's argument order and reductions).

Pointwise ``target * (log(target) - input)`` (0 where target is 0), or with
``log_target=True`` (target given as log-probabilities) ``exp(target) * (target - input)``.
``reduction='batchmean'`` divides the sum by the batch size (the KL divergence
proper); ``'mean'`` divides by the number of elements, as PyTorch.
"""

from __future__ import annotations

from ...functions import where
from ...tensor import Tensor
from ._checks import check_float, check_tensor

_REDUCTIONS = ("none", "mean", "sum", "batchmean")


def kl_div(input, target, reduction: str = "mean", log_target: bool = False) -> Tensor:  # noqa: A002
    """KL(target || exp(input)) summed per ``reduction``; ``input`` holds log-probabilities."""
    check_tensor(input, "input", "kl_div")
    check_tensor(target, "target", "kl_div")
    check_float(input, "kl_div")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"kl_div: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    target = target.to(input.dtype)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = where(positive, target, 1.0)  # log(1) = 0: no NaN from log(0) in either pass
        loss = where(positive, target * (safe.log() - input), 0.0)
    if reduction == "none":
        return loss
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return loss.sum() if reduction == "sum" else loss.mean()
