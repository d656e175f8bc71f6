"""Binary cross-entropy: ``binary_cross_entropy`` (of probabilities) and
``binary_cross_entropy_with_logits`` (of scores, numerically stable).

Each is one graph node (``ops/binary_loss.py``: NumPy, resp. a fused kernel, on arrays, their
Tensor-op form under ``create_graph``).  Both follow PyTorch's formulas:

- BCE:             l = -w * (t * log(p) + (1 - t) * log(1 - p)), each log clamped at -100
  (at p = 0 or 1 exactly the clamped log's gradient is 0, where PyTorch's is finite but huge);
- with logits:     l = w * ((1 - t) * x + (1 + (pw - 1) * t) * softplus(-x)),
  which is BCE of sigmoid(x) without overflow (``pos_weight`` pw scales the positive term).
"""

from __future__ import annotations

import numpy as np

from ...ops.binary_loss import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, bce_logits_plain
from ...tensor import Tensor
from ._checks import check_float, check_tensor
from .loss import _check_options


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
    if pos_weight is not None:
        check_tensor(pos_weight, "pos_weight", fn)
    if all(_constant_like(w, input) for w in (weight, pos_weight)):
        return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction=reduction)
    # A weight that needs a gradient, has another dtype or broadcasts beyond input: the Tensor-op form.
    return bce_logits_plain(input, target, weight, pos_weight, reduction)


def _constant_like(w, input) -> bool:  # noqa: A002
    """Can the fused op take ``w`` (None, or a constant of input's dtype that broadcasts to its shape)?"""
    if w is None:
        return True
    if w.requires_grad or w.dtype != input.dtype:
        return False
    try:
        return np.broadcast_shapes(w.shape, input.shape) == input.shape
    except ValueError:
        return False
