"""Distance layers, as ``torch.nn``'s: ``CosineSimilarity`` and ``PairwiseDistance`` (no parameters;
``F.cosine_similarity`` and ``F.pairwise_distance`` with the options kept).

>>> nn.CosineSimilarity(dim=1)(mt.tensor([[1.0, 0.0], [0.0, 3.0]]), mt.tensor([[2.0, 0.0], [1.0, 0.0]])).tolist()
[1.0, 0.0]
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


class CosineSimilarity(Module):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (norms clamped below at ``eps``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``|| x1 - x2 + eps ||_p`` over the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim  # (PyTorch keeps p as .norm)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
