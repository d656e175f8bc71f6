"""Padding layers, as PyTorch's: ``ZeroPad1d/2d``, ``ConstantPad1d/2d``, ``ReflectionPad1d/2d``,
``ReplicationPad1d/2d``, ``CircularPad1d/2d``; each keeps ``padding`` as PyTorch does (a
tuple: ``(left, right)`` for 1d, ``(left, right, top, bottom)`` for 2d; an int pads every side)
and calls ``F.pad`` (``ops/padding.py``).

- constant (zero): fill with ``value``; any input with enough dims;
- reflection: mirror at the edge without repeating it (``3 2 [1 2 3] 2 1``);
- replication: repeat the edge (``1 1 [1 2 3] 3 3``);
- circular: wrap around (``2 3 [1 2 3] 1 2``).

The 1d layers take (N, C, W) or (C, W), the 2d ones (N, C, H, W) or (C, H, W) (the non-constant
modes as PyTorch requires; the constant ones pad the last dims of any input).

>>> nn.ReflectionPad1d(2)(mt.tensor([[[1.0, 2.0, 3.0]]])).tolist()
[[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]]
>>> nn.ZeroPad2d((1, 0, 0, 1))
ZeroPad2d((1, 0, 0, 1))
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .functional._checks import as_input
from .module import Module


def _sides(padding, count: int, layer: str) -> tuple:
    """An int (every side) or a sequence of ``count`` ints, as a tuple of ``count`` ints."""
    values = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * count
    if len(values) != count or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise TypeError(f"{layer}: padding must be an int or a tuple of {count} ints, got {padding!r}")
    return values


class _PadNd(Module):
    """A padding layer: ``padding`` (one amount per side) in ``mode``."""

    mode = "constant"
    sides = 2

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sides(padding, self.sides, type(self).__name__)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's name)
        input = as_input(input, "input", type(self).__name__)  # noqa: A001
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        self.value = value
        super().__init__(padding)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        input = as_input(input, "input", type(self).__name__)  # noqa: A001
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``padding`` = int or (left, right)."""


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``: ``padding`` = int or (left, right, top, bottom)."""

    sides = 4


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros: ``padding`` = int or (left, right)."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros: ``padding`` = int or (left, right, top, bottom)."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim of (N, C, W) or (C, W) by its mirror image (each amount < W)."""

    mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dims of (N, C, H, W) or (C, H, W) by their mirror image."""

    mode, sides = "reflect", 4


class ReplicationPad1d(_PadNd):
    """Pad the last dim of (N, C, W) or (C, W) by repeating its edge values."""

    mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dims of (N, C, H, W) or (C, H, W) by repeating their edges."""

    mode, sides = "replicate", 4


class CircularPad1d(_PadNd):
    """Pad the last dim of (N, C, W) or (C, W) by wrapping around (each amount <= W)."""

    mode = "circular"


class CircularPad2d(_PadNd):
    """Pad the last two dims of (N, C, H, W) or (C, H, W) by wrapping around."""

    mode, sides = "circular", 4
