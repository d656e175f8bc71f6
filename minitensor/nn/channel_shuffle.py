"""``nn.ChannelShuffle``: the module form of ``F.channel_shuffle`` (ShuffleNet), as PyTorch's.

>>> nn.ChannelShuffle(2)
ChannelShuffle(groups=2)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` blocks: (N, C, *) -> (N, C, *); no parameters."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"ChannelShuffle: groups must be a positive int, got {groups!r}")
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
