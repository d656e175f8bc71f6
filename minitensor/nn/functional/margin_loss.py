"""Margin and embedding losses, as ``torch.nn.functional``'s (PyTorch's formulas, so its gradients).

With ``[z]+ = max(z, 0)``, for each sample (``y`` a target of +1 or -1 unless said):

    margin_ranking_loss(x1, x2, y)       [-y (x1 - x2) + margin]+
    hinge_embedding_loss(x, y)           x where y = 1,  [margin - x]+ where y = -1
    soft_margin_loss(x, y)               log(1 + exp(-y x))                           (averaged over all elements)
    multilabel_soft_margin_loss(x, y)    -mean_c [y_c log sigmoid(x_c) + (1 - y_c) log sigmoid(-x_c)]   (y in {0, 1})
    multi_margin_loss(x, y)              sum_{c != y} [margin - x_y + x_c]+^p / C      (y a class index)
    multilabel_margin_loss(x, y)         sum_{j in y} sum_{c not in y} [1 - x_j + x_c]+ / C   (y: classes, -1 ends)
    cosine_embedding_loss(x1, x2, y)     1 - cos(x1, x2) where y = 1,  [cos(x1, x2) - margin]+ where y = -1
    triplet_margin_loss(a, p, n)         [margin + d(a, p) - d(a, n)]+,  d the p-norm pairwise distance

then averaged over the samples (``reduction='mean'``), summed (``'sum'``) or kept (``'none'``).  Each is
a composition of Tensor ops (differentiable to any order), except the two multi-class losses: one op each
(``ops/margin_loss.py``), whose definitions are such compositions.  ``[z]+`` has PyTorch's gradient at
``z = 0``: 1 where PyTorch's formula clamps (``clamp_min``), 0 where its kernel tests ``z > 0`` (the
multi-class margins).  ``soft_margin_loss`` is computed as ``softplus(-y x)``: the same value, without
the overflow of ``exp`` (PyTorch's gives inf for ``-y x`` above ~88 in float32).  The deprecated
``size_average`` and ``reduce`` arguments work as in PyTorch (with its warning).

>>> F.margin_ranking_loss(mt.tensor([1.0, 0.0]), mt.tensor([0.0, 1.0]), mt.tensor([1.0, 1.0])).item()
0.5
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd.batching import BatchedTensor, physical
from ...ops import smooth_activations as S
from ...ops.loss import _reduce_tensor
from ...ops.margin_loss import MultilabelMarginLoss, MultiMarginLoss, _multi_plain
from ...ops.norms import vector_norm
from ...ops.products import vecdot
from ...ops.shape import where
from ...ops.softplus import Softplus
from ...tensor import Tensor
from ._checks import as_input, check_float, check_number, float_like, reduction_of
from .distance import pairwise_distance


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    """'mean' (of an empty loss: 0, as minitensor's other losses), 'sum' or 'none'."""
    return _reduce_tensor(loss, reduction, loss.numel())


def _positive_part(z: Tensor, strict: bool = False) -> Tensor:
    """[z]+ with PyTorch's gradient at 0: 1 (``clamp_min``), or 0 with ``strict`` (a kernel's ``z > 0``)."""
    return where(z > 0, z, 0.0) if strict else z.clamp(min=0.0)


def _float_inputs(fn: str, **named) -> list:
    """The named float inputs as Tensors of one dtype (arrays take the first Tensor's float dtype)."""
    like = float_like(*named.values())
    tensors = [as_input(value, name, fn, like=like) for name, value in named.items()]
    check_float(tensors[0], fn)
    for (name, _), t in zip(list(named.items())[1:], tensors[1:]):
        if t.dtype != tensors[0].dtype:
            first = next(iter(named))
            raise TypeError(f"{fn}: {name} dtype {t.dtype} does not match {first} dtype {tensors[0].dtype}")
    return tensors


def _same_ndim(fn: str, **named) -> None:
    dims = {name: t.ndim for name, t in named.items()}
    if len(set(dims.values())) != 1:
        listed = ", ".join(f"{name}: {shape}" for name, shape in ((n, t.shape) for n, t in named.items()))
        raise ValueError(f"{fn}: all inputs must have the same number of dims, got {listed}")


def _broadcast(fn: str, **named) -> None:
    try:
        np.broadcast_shapes(*(t.shape for t in named.values()))
    except ValueError:
        listed = ", ".join(f"{name} {t.shape}" for name, t in named.items())
        raise ValueError(f"{fn}: the shapes {listed} cannot be broadcast together") from None


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``[-target * (input1 - input2) + margin]+``: ``input1`` should rank above ``input2`` where target is 1,
    below where it is -1.  All three of the same number of dims (they broadcast)."""
    fn = "margin_ranking_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x1, x2, y = _float_inputs(fn, input1=input1, input2=input2, target=target)
    _same_ndim(fn, input1=x1, input2=x2, target=y)
    _broadcast(fn, input1=x1, input2=x2, target=y)
    margin = check_number(margin, "margin", fn)
    return _reduce(_positive_part(-y * (x1 - x2) + margin), reduction)


def hinge_embedding_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    margin: float = 1.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where target is 1, ``[margin - input]+`` where it is -1 (``input`` often a distance)."""
    fn = "hinge_embedding_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x, y = _float_inputs(fn, input=input, target=target)
    _broadcast(fn, input=x, target=y)
    margin = check_number(margin, "margin", fn)
    loss = where(y != 1, _positive_part(margin - x), 0.0) + where(y != -1, x, 0.0)
    return _reduce(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:  # noqa: A002
    """``log(1 + exp(-target * input))``, averaged over every element (``'mean'``); target +1 or -1."""
    fn = "soft_margin_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x, y = _float_inputs(fn, input=input, target=target)
    _broadcast(fn, input=x, target=y)
    return _reduce(Softplus.apply(-(y * x), beta=1.0, threshold=math.inf), reduction)


def multilabel_soft_margin_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)`` against 0/1 ``target`` (N, C), averaged over the C classes
    (``weight``: per class); then over the N samples (``'mean'``)."""
    fn = "multilabel_soft_margin_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x, y = _float_inputs(fn, input=input, target=target)
    _broadcast(fn, input=x, target=y)
    if x.ndim == 0:
        raise ValueError(f"{fn}: input must be (C,) or (N, C), got a 0-d tensor")
    loss = -(y * S.LogSigmoid.apply(x) + (1 - y) * S.LogSigmoid.apply(-x))
    if weight is not None:
        (w,) = _float_inputs(fn, weight=weight)
        loss = loss * w
    return _reduce(loss.sum(-1) / x.shape[-1], reduction)


def _class_targets(target, input: Tensor, fn: str, shape: tuple) -> tuple:  # noqa: A002
    """(the target for the op: an int64 array of ``shape``, or inside vmap a batched target as it is;
    its values, every example's, as an int64 array to check against the C classes of ``input``)."""
    batched = isinstance(target, BatchedTensor)
    values = physical(target)._data if isinstance(target, Tensor) else np.asarray(target)
    if values.dtype.kind not in "iu":
        raise TypeError(f"{fn}: target must hold int64 class indices, got dtype {values.dtype}")
    if (target.shape if batched else values.shape) != shape:
        got = target.shape if batched else values.shape
        raise ValueError(f"{fn}: target must have shape {shape} for input of shape {input.shape}, got {got}")
    values = values.astype(np.int64, copy=False)
    return (target if batched else values), values


def _class_scores(input, fn: str) -> Tensor:  # noqa: A002
    (x,) = _float_inputs(fn, input=input)
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise ValueError(f"{fn}: input must be (C,) or (N, C) with C > 0, got shape {x.shape}")
    return x


def multi_margin_loss(
    input: Tensor,  # noqa: A002
    target,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss of scores (N, C) or (C,) against class indices (N,) or ():
    ``sum_{c != y} w_y [margin - x_y + x_c]+^p / C`` per sample (``p`` 1 or 2)."""
    fn = "multi_margin_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x = _class_scores(input, fn)
    if p not in (1, 2) or isinstance(p, bool):
        raise ValueError(f"{fn}: p must be 1 or 2, got {p!r}")
    margin = check_number(margin, "margin", fn)
    c = x.shape[-1]
    y, values = _class_targets(target, x, fn, x.shape[:-1])
    if values.size and (values.min() < 0 or values.max() >= c):
        bad = values.min() if values.min() < 0 else values.max()
        raise ValueError(f"{fn}: target holds class index {bad}, outside [0, {c - 1}]")
    w = None
    if weight is not None:
        (w,) = _float_inputs(fn, weight=weight)
        if w.shape != (c,):
            raise ValueError(f"{fn}: weight must have shape ({c},) (one per class), got {w.shape}")
        if w.requires_grad:  # (PyTorch gives the weight no gradient; the definition does)
            return _reduce(_multi_plain(x.reshape(-1, c), y.reshape(-1), p, margin, w, "none").reshape(y.shape),
                           reduction)  # fmt: skip
        w = w._data if w.dtype == x.dtype else w._data.astype(x.dtype)
    settings = {"p": p, "margin": margin, "weight": w, "reduction": reduction}
    loss = MultiMarginLoss.apply(x.reshape(-1, c) if x.ndim == 1 else x, y.reshape(-1), **settings)
    return loss.reshape(()) if x.ndim == 1 and reduction == "none" else loss


def multilabel_margin_loss(
    input: Tensor,  # noqa: A002
    target,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-label hinge loss of scores (N, C) or (C,): each row of ``target`` (same shape, int64) lists the
    row's classes, ending at the first -1; ``sum_{j listed} sum_{c not listed} [1 - x_j + x_c]+ / C``."""
    fn = "multilabel_margin_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x = _class_scores(input, fn)
    c = x.shape[-1]
    y, values = _class_targets(target, x, fn, x.shape)
    values = values.reshape(-1, c)
    listed = np.cumprod(values >= 0, axis=-1).astype(bool)  # up to the first -1
    if np.any(values[listed] >= c):
        raise ValueError(f"{fn}: target holds class index {values[listed].max()}, outside [0, {c - 1}]")
    loss = MultilabelMarginLoss.apply(x.reshape(-1, c) if x.ndim == 1 else x, y.reshape(-1, c), reduction=reduction)
    return loss.reshape(()) if x.ndim == 1 and reduction == "none" else loss


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(input1, input2)`` where target is 1, ``[cos - margin]+`` where it is -1: (N, D) inputs
    and (N,) targets, or (D,) and ()."""
    fn = "cosine_embedding_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    x1, x2, y = _float_inputs(fn, input1=input1, input2=input2, target=target)
    if x1.ndim not in (1, 2) or x1.shape != x2.shape:
        raise ValueError(f"{fn}: input1 and input2 must be (N, D) or (D,) of one shape, got {x1.shape} and {x2.shape}")
    if y.shape != x1.shape[:-1]:
        raise ValueError(f"{fn}: target must have shape {x1.shape[:-1]} for inputs {x1.shape}, got {y.shape}")
    dim = x1.ndim - 1
    eps = 1e-12  # (PyTorch's: added to each squared norm)
    n1, n2 = vector_norm(x1, 2, dim), vector_norm(x2, 2, dim)  # (n^2: sum(x^2), one pass each way)
    cos = vecdot(x1, x2, dim) / ((n1 * n1 + eps) * (n2 * n2 + eps)).sqrt()
    loss = where(y == 1, 1 - cos, 0.0) + where(y == -1, _positive_part(cos - check_number(margin, "margin", fn)), 0.0)
    return _reduce(loss, reduction)


def _triplet(anchor, positive, negative, distance, margin: float, swap: bool, reduction: str, fn: str) -> Tensor:
    if not margin > 0:
        raise ValueError(f"{fn}: margin must be greater than 0, got {margin}")
    if anchor.ndim != positive.ndim or positive.ndim != negative.ndim:
        raise ValueError(
            f"{fn}: the anchor, positive, and negative tensors must have the same number of dims, got: "
            f"anchor {anchor.ndim}D, positive {positive.ndim}D, and negative {negative.ndim}D inputs"
        )
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:  # the positive as the anchor, when it is closer to the negative
        d_swap = distance(positive, negative)
        d_neg = where(d_swap < d_neg, d_swap, d_neg)
    return _reduce(_positive_part(margin + d_pos - d_neg), reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``[margin + d(anchor, positive) - d(anchor, negative)]+``, ``d`` = ``pairwise_distance(.., p, eps)``:
    (N, D) inputs (or (D,)).  ``swap``: use ``d(positive, negative)`` where it is smaller."""
    fn = "triplet_margin_loss"
    reduction = reduction_of(size_average, reduce, reduction, fn)
    a, pos, neg = _float_inputs(fn, anchor=anchor, positive=positive, negative=negative)
    p, eps = check_number(p, "p", fn), check_number(eps, "eps", fn)

    def distance(u, v):
        return pairwise_distance(u, v, p, eps)

    return _triplet(a, pos, neg, distance, check_number(margin, "margin", fn), swap, reduction, fn)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``triplet_margin_loss`` with any ``distance_function(x1, x2) -> distances`` (default
    ``pairwise_distance``), e.g. ``lambda x, y: 1 - F.cosine_similarity(x, y)``."""
    fn = "triplet_margin_with_distance_loss"
    reduction = reduction_of(None, None, reduction, fn)
    if distance_function is not None and not callable(distance_function):
        raise TypeError(f"{fn}: distance_function must be callable, got {type(distance_function).__name__}")
    a, pos, neg = _float_inputs(fn, anchor=anchor, positive=positive, negative=negative)
    distance = distance_function or pairwise_distance
    return _triplet(a, pos, neg, distance, check_number(margin, "margin", fn), swap, reduction, fn)
