"""Binary cross-entropy: ``binary_cross_entropy`` (of probabilities) and
``binary_cross_entropy_with_logits`` (of scores, numerically stable).

BCE is one graph node (``ops/binary_loss.py``: NumPy on arrays, its Tensor-op
form under ``create_graph``); the logits version is a composition of
differentiable Tensor ops.  Both follow PyTorch's formulas:

- BCE:             l = -w * (t * log(p) + (1 - t) * log(1 - p)), each log clamped at -100
  (at p = 0 or 1 exactly the clamped log's gradient is 0, where PyTorch's is finite but huge);
- with logits:     l = w * ((1 - t) * x + (1 + (pw - 1) * t) * softplus(-x)),
  which is BCE of sigmoid(x) without overflow (``pos_weight`` pw scales the positive term).
"""

from __future__ import annotations

from ...ops.binary_loss import BinaryCrossEntropy
from ...ops.softplus import softplus
from ...tensor import Tensor
from ._checks import check_float, check_tensor
from .loss import _check_options


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _check(input, target, weight, reduction: str, fn: str) -> None:  # noqa: A002
    check_tensor(input, "input", fn)
    check_tensor(target, "target", fn)
    check_float(input, fn)
    _check_options(reduction, fn)
    if target.shape != input.shape:
        raise ValueError(f"{fn}: target size {target.shape} must be the same as input size {input.shape}")
    if weight is not None:
        check_tensor(weight, "weight", fn)


def binary_cross_entropy(input, target, weight=None, reduction: str = "mean") -> Tensor:  # noqa: A002
    """BCE between probabilities ``input`` (in [0, 1]) and targets of the same shape."""
    _check(input, target, weight, reduction, "binary_cross_entropy")
    p = input._data
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError("binary_cross_entropy: all elements of input should be between 0 and 1")
    return BinaryCrossEntropy.apply(input, target.to(input.dtype), weight, reduction=reduction)


def binary_cross_entropy_with_logits(
    input,  # noqa: A002
    target,
    weight=None,
    reduction: str = "mean",
    pos_weight=None,
) -> Tensor:
    """BCE of ``sigmoid(input)``, computed stably from the logits ``input``.

    Args:
        weight: rescales each element's loss (broadcast to input).
        pos_weight: weight of the positive term, per class (broadcast along the last dim).
    """
    fn = "binary_cross_entropy_with_logits"
    _check(input, target, weight, reduction, fn)
    target = target.to(input.dtype)
    soft = softplus(-input)  # log(1 + exp(-x)) = -log(sigmoid(x))
    if pos_weight is None:
        loss = (1 - target) * input + soft
    else:
        check_tensor(pos_weight, "pos_weight", fn)
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * soft
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)
