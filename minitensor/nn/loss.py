"""Loss layers: ``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss``, ``L1Loss``, ``SmoothL1Loss``, ``HuberLoss``,
``KLDivLoss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``PoissonNLLLoss``, ``GaussianNLLLoss``, ``CTCLoss``.
(The margin and embedding losses are in ``loss_margin.py``.)

Each holds its options and calls the function of the same name in
``nn.functional``; the class weights of the first two are a buffer (saved in
``state_dict()`` as ``'weight'``, like PyTorch's).  In the first nine, options after
``weight`` are keyword-only (PyTorch's positional order still has the deprecated
``size_average`` and ``reduce``); the newer ones take PyTorch's positional order,
``size_average`` and ``reduce`` included (mapped to ``reduction`` with PyTorch's warning).

>>> criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
>>> loss = criterion(model(x), y)      # model(x): (N, C) logits, y: (N,) int64 classes
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import functional as F
from .functional._checks import reduction_of
from .functional.loss import _check_ignore_index, _check_label_smoothing
from .module import Module


class _Loss(Module):
    def __init__(self, reduction: str, size_average=None, reduce=None) -> None:
        super().__init__()
        self.reduction = reduction_of(size_average, reduce, reduction, type(self).__name__)


class _WeightedLoss(_Loss):
    def __init__(self, weight, reduction: str, size_average=None, reduce=None) -> None:
        super().__init__(reduction, size_average, reduce)
        if weight is not None and not isinstance(weight, Tensor):
            weight = Tensor(np.asarray(weight))
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits (N, C[, d1, ...]) or (C,) against class indices or class probabilities.

    Args:
        weight: optional (C,) rescaling of each class.
        ignore_index: a target value that is skipped (no loss, no gradient).
        reduction: ``'mean'``, ``'sum'`` or ``'none'``.
        label_smoothing: in [0, 1], mixes the target with the uniform distribution.

    See ``F.cross_entropy`` for the shapes and the exact formula.
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        *,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, reduction)
        _check_ignore_index(ignore_index, "CrossEntropyLoss")
        _check_label_smoothing(label_smoothing, "CrossEntropyLoss")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities (e.g. after ``nn.LogSoftmax(dim=1)``).

    Args:
        weight, ignore_index, reduction: as in ``CrossEntropyLoss``.
    """

    def __init__(self, weight: Tensor | None = None, *, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        _check_ignore_index(ignore_index, "NLLLoss")
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error between input and target (same shapes).

    Args:
        reduction: ``'mean'``, ``'sum'`` or ``'none'``.
    """

    def __init__(self, *, reduction: str = "mean") -> None:
        super().__init__(reduction)

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (``F.l1_loss``)."""

    def __init__(self, *, reduction: str = "mean") -> None:
        super().__init__(reduction)

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above it (``F.smooth_l1_loss``)."""

    def __init__(self, *, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, ``delta`` times the absolute error above it (``F.huber_loss``)."""

    def __init__(self, *, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(Module):
    """``F.kl_div``: input holds log-probabilities; ``reduction`` may also be ``'batchmean'``."""

    def __init__(self, *, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        if reduction not in ("none", "mean", "sum", "batchmean"):
            raise ValueError(f"KLDivLoss: reduction must be 'none', 'mean', 'sum' or 'batchmean', got {reduction!r}")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities (``F.binary_cross_entropy``); ``weight`` scales each element."""

    def __init__(self, weight: Tensor | None = None, *, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Binary cross-entropy of logits, stable (``F.binary_cross_entropy_with_logits``).

    Args:
        weight: scales each element's loss; pos_weight: scales the positive term (per class).
    """

    def __init__(self, weight: Tensor | None = None, *, reduction: str = "mean", pos_weight=None) -> None:
        super().__init__(weight, reduction)
        if pos_weight is not None and not isinstance(pos_weight, Tensor):
            pos_weight = Tensor(np.asarray(pos_weight))
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(
            input, target, weight=self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its old name for (N, C, H, W) inputs (PyTorch keeps it for old code)."""


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood of counts given the (log-)rate (``F.poisson_nll_loss``)."""

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(
            log_input, target, log_input=self.log_input, full=self.full, eps=self.eps, reduction=self.reduction
        )


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood of a target given a mean and a variance (``F.gaussian_nll_loss``);
    ``forward(input, target, var)``."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:  # noqa: A002
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (``F.ctc_loss``);
    ``forward(log_probs, targets, input_lengths, target_lengths)``."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets, input_lengths, target_lengths) -> Tensor:
        return F.ctc_loss(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction, self.zero_infinity
        )
