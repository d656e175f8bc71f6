"""``kl_div``: the Kullback-Leibler divergence of ``target`` from the distribution whose
log-probabilities are ``input`` (PyTorch's argument order, reductions and formulas).

Pointwise ``xlogy(target, target) - target * input`` (0 where target is 0, NaN where it is
negative), or with ``log_target=True`` (target given as log-probabilities)
``exp(target) * (target - input)``.  ``reduction='batchmean'`` divides the sum by the batch
size (the KL divergence proper); ``'mean'`` divides by the number of elements, as PyTorch.
One graph node (``ops/divergence.py``) when input and target have one shape; other
broadcastable shapes run the same formula in Tensor ops.
"""

from __future__ import annotations

from ...ops.divergence import KLDiv, kl_div_plain
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
    if target.shape == input.shape:
        return KLDiv.apply(input, target, reduction=reduction, log_target=bool(log_target))
    return kl_div_plain(input, target, reduction, bool(log_target))
