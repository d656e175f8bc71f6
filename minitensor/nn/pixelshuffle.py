"""``PixelShuffle`` and ``PixelUnshuffle``, as PyTorch's: channels traded for resolution (the
sub-pixel convolution's last step), by a reshape and a permute (``F.pixel_shuffle``).

>>> nn.PixelShuffle(2)(mt.randn(1, 12, 3, 3)).shape
(1, 3, 6, 6)
>>> nn.PixelUnshuffle(2)(mt.randn(1, 3, 6, 6)).shape
(1, 12, 3, 3)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


class PixelShuffle(Module):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r), r = ``upscale_factor``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's name)
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), r = ``downscale_factor``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
