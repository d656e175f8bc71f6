"""Dropout of whole channels and alpha dropout: ``Dropout1d``, ``Dropout2d``, ``Dropout3d``,
``AlphaDropout``, ``FeatureAlphaDropout``, as PyTorch's (``nn/dropout.py`` holds ``Dropout``;
the functions are in ``functional/feature_dropout.py``).  Each is the identity in eval mode.

>>> drop = nn.Dropout2d(p=0.25)
>>> drop
Dropout2d(p=0.25, inplace=False)
>>> drop.eval()(mt.ones(1, 2, 3, 3)).sum().item()
18.0
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .functional._checks import check_probability
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p = check_probability(p, "p", type(self).__name__)
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p`` while training; the kept
    ones are scaled by 1 / (1 - p)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's name)
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) with probability ``p`` while training (3-D input is
    read as (N, C, L), with PyTorch's warning)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p`` while training."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (for SELU networks): keeps the mean 0 and variance 1 of its input while
    training (see ``F.alpha_dropout``)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
