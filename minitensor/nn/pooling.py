"""Pooling layers, as PyTorch's ``torch.nn`` pooling modules: each keeps its settings (PyTorch's
attribute names and values) and calls its function in ``nn.functional`` (``functional/pooling.py``).

Inputs: (N, C, L) or (C, L) for the 1d layers, (N, C, H, W) or (C, H, W) for the 2d ones.

>>> pool = nn.MaxPool2d(2, return_indices=True)
>>> y, indices = pool(mt.randn(1, 3, 4, 4))
>>> nn.MaxUnpool2d(2)(y, indices).shape
(1, 3, 4, 4)
>>> nn.AvgPool2d(3, stride=2, padding=1)
AvgPool2d(kernel_size=3, stride=2, padding=1)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


def _single(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _pair(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


# ------------------------------------------------------------------ max
class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """The max over windows of ``kernel_size`` along the last dim: (N, C, L) -> (N, C, L_out).

    Args:
        kernel_size, stride (default: kernel_size), padding (-inf on both sides, at most half
        the kernel), dilation (the spacing of a window's taps), ceil_mode (a last partial window
        counts), return_indices (also return the argmax positions, for ``MaxUnpool1d``).
    """

    def forward(self, input: Tensor):  # noqa: A002  (PyTorch's name)
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)  # fmt: skip


class MaxPool2d(_MaxPoolNd):
    """The max over ``kernel_size`` windows of the last two dims: (N, C, H, W) -> (N, C, H_out, W_out),
    ``H_out = floor((H + 2 padding - dilation (kernel - 1) - 1) / stride) + 1`` (``ceil`` with
    ``ceil_mode``).  Arguments as ``MaxPool1d``, each an int or an (h, w) pair."""

    def forward(self, input: Tensor):  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)  # fmt: skip


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) into ``output_size`` windows (whatever L is)."""

    def forward(self, input: Tensor):  # noqa: A002
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) to ``output_size`` (an int, or (h, w); None keeps that dim)."""

    def forward(self, input: Tensor):  # noqa: A002
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)`` puts each value at
    its index in zeros of the un-pooled length."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:  # noqa: A002
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of ``MaxPool2d``: ``forward(input, indices, output_size=None)``."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride if stride is not None else kernel_size)
        self.padding = _pair(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:  # noqa: A002
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


# ------------------------------------------------------------------ average
class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean over windows of ``kernel_size`` along the last dim of (N, C, L).

    Args:
        kernel_size, stride (default: kernel_size), padding (zeros on both sides), ceil_mode,
        count_include_pad (the padding zeros count in the divisor).
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)  # fmt: skip


class AvgPool2d(_AvgPoolNd):
    """The mean over ``kernel_size`` windows of the last two dims of (N, C, H, W); arguments as
    ``AvgPool1d``, and ``divisor_override`` (divide every window's sum by it instead)."""

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) into ``output_size`` windows (whatever L is)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, H, W) to ``output_size``; ``AdaptiveAvgPool2d(1)`` is global
    average pooling."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)


# ------------------------------------------------------------------ power average
class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """``(sum of x^p over each window)^(1/p)`` along the last dim, p = ``norm_type``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """``(sum of x^p over each window)^(1/p)`` over windows of the last two dims."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)
