"""``Upsample`` (and its fixed-mode forms ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``), as
PyTorch's: a module around ``F.interpolate``.

>>> up = nn.Upsample(scale_factor=2, mode="bilinear")
>>> up
Upsample(scale_factor=2.0, mode='bilinear')
>>> up(mt.randn(1, 3, 4, 5)).shape
(1, 3, 8, 10)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


class Upsample(Module):
    """Resize the spatial dims of (N, C, L), (N, C, H, W) or (N, C, D, H, W) to ``size`` or by
    ``scale_factor`` (one of them) with ``mode`` ('nearest', 'linear', 'bilinear', 'bicubic',
    'trilinear', 'nearest-exact'); ``align_corners`` for the interpolating modes (see
    ``F.interpolate``)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None) -> None:  # fmt: skip
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's name)
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)  # fmt: skip

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode='nearest')`` for (N, C, H, W)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode='bilinear', align_corners=True)`` for (N, C, H, W)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
