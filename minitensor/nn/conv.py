"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d``, as PyTorch's.

A layer owns ``weight`` and ``bias`` Parameters and calls ``F.conv2d`` (or its 1-D and
transposed siblings).  Everything else follows PyTorch's ``nn/modules/conv.py``: the attribute
names (so whole-module checkpoints cross between the two), the weight's shape (out_channels,
in_channels / groups, *kernel_size) — (in_channels, out_channels / groups, *kernel_size) for the
transposed layers —, the init (``reset_parameters``: kaiming_uniform with a = sqrt(5), i.e.
U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias), ``padding_mode`` (the
input padded by ``F.pad`` in that mode, then convolved without padding) and the repr.

>>> conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
>>> conv
Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
>>> conv(mt.randn(2, 3, 16, 16)).shape
(2, 8, 16, 16)
>>> up = nn.ConvTranspose2d(8, 3, kernel_size=3, stride=2, padding=1, output_padding=1)
>>> up(conv(mt.randn(2, 3, 16, 16))).shape
(2, 3, 32, 32)
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .functional._windows import as_tuple
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What the convolution layers share: the checks, the parameters, their init and the repr."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple, padding,
                 dilation: tuple, transposed: bool, output_padding: tuple, groups: int, bias: bool,
                 padding_mode: str, device=None, dtype=None) -> None:  # fmt: skip
        super().__init__()
        name = type(self).__name__
        in_channels, out_channels = _check_settings(
            name, in_channels, out_channels, groups, padding, stride, padding_mode
        )
        dtype = float_dtype(dtype, name, device)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.transposed, self.output_padding, self.groups = transposed, output_padding, groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(padding, kernel_size, dilation)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = empty_parameter(shape + kernel_size, dtype)
        if bias:
            self.bias = empty_parameter((out_channels,), dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) for the weight, i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with
        fan_in = weight.shape[1] * prod(kernel_size); the same bound for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        """PyTorch's: the settings that differ from their defaults."""
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _check_settings(name: str, in_channels, out_channels, groups, padding, stride: tuple, padding_mode) -> tuple:
    """PyTorch's checks of a layer's settings (ValueError/TypeError naming each); the channel counts."""
    in_channels = check_size(in_channels, "in_channels", name)
    out_channels = check_size(out_channels, "out_channels", name)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
    for what, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
        if channels % groups:
            raise ValueError(f"{name}: {what} must be divisible by groups, got {what}={channels}, groups={groups}")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"{name}: invalid padding string {padding!r}, should be one of ('same', 'valid')")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError(f"{name}: padding='same' is not supported for strided convolutions, got stride={stride}")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"{name}: padding_mode must be one of {_PADDING_MODES}, got padding_mode={padding_mode!r}")
    return in_channels, out_channels


def _reversed_padding(padding, kernel_size: tuple, dilation: tuple) -> tuple | list:
    """The padding as ``F.pad`` takes it (last dim first, before and after each), for padding_mode."""
    if not isinstance(padding, str):
        return tuple(p for p in reversed(padding) for _ in range(2))  # (a tuple here, a list below: as PyTorch)
    pads = [0, 0] * len(kernel_size)
    if padding == "same":
        for i, (d, k) in enumerate(zip(reversed(dilation), reversed(kernel_size))):
            total = d * (k - 1)
            pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
    return pads


class _Conv(_ConvNd):
    """Conv1d and Conv2d: their arguments as tuples of ``dims`` ints, and the forward."""

    dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:  # fmt: skip
        name, n = type(self).__name__, self.dims
        kernel_size = as_tuple(kernel_size, n, "kernel_size", name, 1)
        stride = as_tuple(stride, n, "stride", name, 1)
        padding = padding if isinstance(padding, str) else as_tuple(padding, n, "padding", name, 0)
        dilation = as_tuple(dilation, n, "dilation", name, 1)
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, (0,) * n, groups,
                         bias, padding_mode, device, dtype)  # fmt: skip

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:  # noqa: A002
        conv = F.conv2d if self.dims == 2 else F.conv1d
        if self.padding_mode != "zeros":
            padded = F.pad(input, tuple(self._reversed_padding_repeated_twice), mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution layer: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out) (see ``F.conv1d``).

    Args:
        in_channels, out_channels: channels of the input and of the output.
        kernel_size: an int or a 1-tuple.
        stride, dilation: an int or a 1-tuple (default 1).
        padding: an int, a 1-tuple, 'valid' or 'same' (default 0).
        groups: connections blocked into this many groups (default 1; in_channels: depthwise).
        bias: learn a bias (default True).
        padding_mode: 'zeros' (default), 'reflect', 'replicate' or 'circular'.
        dtype: the parameters' dtype (default ``mt.get_default_dtype()``).

    Parameters: ``weight`` (out_channels, in_channels / groups, kernel_size), ``bias`` (out_channels,).
    """

    dims = 1


class Conv2d(_Conv):
    """2-D convolution layer: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out) (see ``F.conv2d``).

    Args:
        in_channels, out_channels: channels of the input and of the output.
        kernel_size: an int or a pair.
        stride, dilation: an int or a pair (default 1).
        padding: an int, a pair, 'valid' or 'same' (default 0).
        groups: connections blocked into this many groups (default 1; in_channels: depthwise).
        bias: learn a bias (default True).
        padding_mode: 'zeros' (default), 'reflect', 'replicate' or 'circular'.
        dtype: the parameters' dtype (default ``mt.get_default_dtype()``).

    Parameters: ``weight`` (out_channels, in_channels / groups, kH, kW), ``bias`` (out_channels,).
    H_out = (H + 2 * padding - dilation * (kH - 1) - 1) // stride + 1, and likewise W_out.
    """

    dims = 2


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d and ConvTranspose2d: the arguments, ``output_size=`` and the forward."""

    dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:  # fmt: skip
        name, n = type(self).__name__, self.dims
        if padding_mode != "zeros":
            raise ValueError(f'{name}: only "zeros" padding mode is supported, got padding_mode={padding_mode!r}')
        kernel_size = as_tuple(kernel_size, n, "kernel_size", name, 1)
        stride = as_tuple(stride, n, "stride", name, 1)
        padding = as_tuple(padding, n, "padding", name, 0)
        dilation = as_tuple(dilation, n, "dilation", name, 1)
        output_padding = as_tuple(output_padding, n, "output_padding", name, 0)
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)  # fmt: skip

    def _output_padding(self, input: Tensor, output_size) -> tuple:  # noqa: A002
        """``output_padding``, or the one that gives ``output_size`` (the spatial size, or the whole
        shape without or with the batch dim), as PyTorch computes it."""
        if output_size is None:
            return self.output_padding
        n, name = self.dims, type(self).__name__
        output_size = list(output_size)
        extra = 2 if input.ndim == n + 2 else 1
        if len(output_size) == n + extra:
            output_size = output_size[extra:]
        if len(output_size) != n:
            raise ValueError(
                f"{name}: for {input.ndim}-D input, output_size must have {n} or {n + extra} elements, "
                f"got {len(output_size)}"
            )
        settings = zip(input.shape[-n:], self.stride, self.padding, self.dilation, self.kernel_size)
        smallest = [(size - 1) * s - 2 * p + d * (k - 1) + 1 for size, s, p, d, k in settings]
        largest = [m + s - 1 for m, s in zip(smallest, self.stride)]
        if any(not lo <= size <= hi for size, lo, hi in zip(output_size, smallest, largest)):
            raise ValueError(
                f"{name}: requested an output size of {output_size}, but valid sizes range from {smallest} to "
                f"{largest} (for an input of {tuple(input.shape[-n:])})"
            )
        return tuple(size - lo for size, lo in zip(output_size, smallest))

    def forward(self, input: Tensor, output_size=None) -> Tensor:  # noqa: A002
        """The transposed convolution; ``output_size`` picks one of the output sizes a stride > 1 allows."""
        conv = F.conv_transpose2d if self.dims == 2 else F.conv_transpose1d
        output_padding = self._output_padding(input, output_size)
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                    self.dilation)  # fmt: skip


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution layer (see ``F.conv_transpose1d``): the gradient of a Conv1d as a layer.

    Args: as ``Conv1d``'s, and ``output_padding`` (added at the end of the output; default 0);
    padding_mode must be 'zeros'.  ``forward(input, output_size=None)``.

    Parameters: ``weight`` (in_channels, out_channels / groups, kernel_size), ``bias`` (out_channels,).
    L_out = (L - 1) * stride - 2 * padding + dilation * (kernel_size - 1) + output_padding + 1.
    """

    dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution layer (see ``F.conv_transpose2d``): the gradient of a Conv2d as a layer,
    e.g. to upsample (stride 2 doubles the size).

    Args: as ``Conv2d``'s, and ``output_padding`` (added after the last row and column; default 0);
    padding_mode must be 'zeros'.  ``forward(input, output_size=None)``: ``output_size`` chooses
    among the sizes a stride > 1 allows (the output_padding that gives it).

    Parameters: ``weight`` (in_channels, out_channels / groups, kH, kW), ``bias`` (out_channels,).
    H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1.
    """

    dims = 2
