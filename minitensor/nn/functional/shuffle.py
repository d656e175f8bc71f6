"""``F.channel_shuffle``: ShuffleNet's mixing of channel groups, as PyTorch's.

The C channels, read as ``groups`` blocks of C/groups, are interleaved: channel ``g * (C/groups) + k``
moves to position ``k * groups + g``.  A reshape, a transpose and a reshape back, so the gradient (of
any order, and forward mode) is the same permutation undone by those ops.

>>> F.channel_shuffle(mt.arange(6.0).reshape(1, 6, 1), 2).flatten().tolist()
[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
"""

from __future__ import annotations

from ...tensor import Tensor
from ._checks import as_input


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002  (PyTorch's name)
    """(N, C, *) -> (N, C, *) with the channels of ``groups`` blocks interleaved (C divisible by groups)."""
    x = as_input(input, "input", "channel_shuffle")
    if x.ndim <= 2:
        raise ValueError(f"channel_shuffle: input must have more than 2 dims (N, C, *), got shape {x.shape}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"channel_shuffle: groups must be a positive int, got {groups!r}")
    n, c, *rest = x.shape
    if c % groups:
        raise ValueError(f"channel_shuffle: the channels ({c}) must be divisible by groups ({groups})")
    return x.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)
