"""``Dropout``: randomly zero activations while training (inverted dropout).

>>> drop = nn.Dropout(p=0.1)
>>> y = drop(mt.ones(4, 4))      # training: ~10% zeros, the rest 1/0.9
>>> drop.eval()(mt.ones(2)).tolist()  # eval mode: identity
[1.0, 1.0]
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .functional._checks import check_probability
from .module import Module


class Dropout(Module):
    """Zero each element with probability ``p`` in training mode and scale the rest by 1/(1-p).

    Identity in eval mode (``module.eval()``) and for ``p=0``.  Each call draws
    a fresh mask from minitensor's generator (``mt.manual_seed``).

    Args:
        p: drop probability, in [0, 1].
    """

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = check_probability(p, "p", "Dropout")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
