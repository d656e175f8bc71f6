"""``Unfold`` and ``Fold``: the layers of ``F.unfold`` (im2col) and ``F.fold`` (col2im), as PyTorch's.

They hold their settings as given (an int stays an int, as in PyTorch's repr) and have no
parameters.

>>> unfold = nn.Unfold(kernel_size=2, stride=2)
>>> cols = unfold(mt.randn(1, 3, 4, 4))
>>> cols.shape
(1, 12, 4)
>>> nn.Fold(output_size=(4, 4), kernel_size=2, stride=2)(cols).shape
(1, 3, 4, 4)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .functional._windows import as_tuple
from .module import Module


def _checked(module: Module, **settings) -> None:
    """Check each setting (an int or a pair) at construction, as the functions would on the first call."""
    minimum = {"padding": 0}
    for name, value in settings.items():
        as_tuple(value, 2, name, type(module).__name__, minimum.get(name, 1))
        setattr(module, name, value)


class Unfold(Module):
    """Every ``kernel_size`` window of (N, C, H, W) (or (C, H, W)) input as a column:
    (N, C * kH * kW, L), L the number of windows (see ``F.unfold``).

    Args: kernel_size, dilation=1, padding=0, stride=1: each an int or a pair.
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        _checked(self, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


class Fold(Module):
    """Columns of windows, (N, C * kH * kW, L) (or unbatched), summed back into (N, C, *output_size):
    the adjoint of ``Unfold`` (see ``F.fold``).

    Args: output_size (H, W), kernel_size, dilation=1, padding=0, stride=1: each an int or a pair.
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        _checked(self, output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding,
                 stride=stride)  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
