"""Margin and embedding loss layers, as ``torch.nn``'s: ``MarginRankingLoss``, ``HingeEmbeddingLoss``,
``SoftMarginLoss``, ``MultiLabelSoftMarginLoss``, ``MultiLabelMarginLoss``, ``MultiMarginLoss``,
``CosineEmbeddingLoss``, ``TripletMarginLoss``, ``TripletMarginWithDistanceLoss``.

Each holds its options (PyTorch's names, defaults and positional order, the deprecated
``size_average`` and ``reduce`` included) and calls the function of the same name in
``nn.functional`` (formulas in ``nn/functional/margin_loss.py``).  Class weights are a buffer
(``state_dict()`` key ``'weight'``, as PyTorch's).

>>> criterion = nn.TripletMarginLoss(margin=0.5)
>>> loss = criterion(mt.randn(4, 8), mt.randn(4, 8), mt.randn(4, 8))
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .distance import PairwiseDistance
from .loss import _Loss, _WeightedLoss


class MarginRankingLoss(_Loss):
    """``[-target * (x1 - x2) + margin]+``: rank ``x1`` above ``x2`` where target is 1, below where -1."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` where target is 1, ``[margin - x]+`` where it is -1."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-target * input))`` (two-class logistic loss, targets +1 / -1)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class binary cross-entropy of ``sigmoid(input)``, averaged over the classes (``weight``: per class)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss; each target row lists class indices, ending at the first -1."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss ``sum_{c != y} w_y [margin - x_y + x_c]+^p / C`` (``p`` 1 or 2)."""

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, reduction, size_average, reduce)
        if p not in (1, 2) or isinstance(p, bool):
            raise ValueError(f"MultiMarginLoss: p must be 1 or 2, got {p!r}")
        if self.weight is not None and self.weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be 1-D (one per class), got shape {self.weight.shape}")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.multi_margin_loss(
            input, target, p=self.p, margin=self.margin, weight=self.weight, reduction=self.reduction
        )


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` where target is 1, ``[cos(x1, x2) - margin]+`` where it is -1."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``[margin + d(anchor, positive) - d(anchor, negative)]+`` with the p-norm pairwise distance ``d``."""

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        if not margin > 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0, got {margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(
            anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps, swap=self.swap,
            reduction=self.reduction,
        )  # fmt: skip


class TripletMarginWithDistanceLoss(_Loss):
    """``TripletMarginLoss`` with any ``distance_function`` (default: a ``PairwiseDistance()`` sub-module,
    as PyTorch's)."""

    def __init__(
        self, *, distance_function=None, margin: float = 1.0, swap: bool = False, reduction: str = "mean"
    ) -> None:
        super().__init__(reduction)
        if not margin > 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, got {margin}")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function, margin=self.margin,
            swap=self.swap, reduction=self.reduction,
        )  # fmt: skip
