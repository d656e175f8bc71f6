"""``conv1d``, ``conv2d``, ``conv_transpose1d``, ``conv_transpose2d``: PyTorch's convolutions.

Each checks its arguments (every shape error names the argument, what was expected and what came,
before anything is computed), then runs one op of ``ops/conv.py`` on 4-D tensors: an unbatched
input gains a batch dim of 1, and a 1-D convolution is a 2-D one over a height of 1 (the input
(N, C, L) seen as (N, C, 1, L), the kernel (Co, C/G, k) as (Co, C/G, 1, k)); the result is
reshaped back.  ``padding='same'`` with an even kernel pads one more zero after than before, as
PyTorch does.
"""

from __future__ import annotations

from ... import backend
from ...ops.conv import Conv, ConvTranspose
from ...tensor import Tensor
from ._checks import as_input, check_same_dtype, check_tensor
from ._windows import as_tuple, check_kernel_fits, grid

_SHAPES = {1: "(C, L)", 2: "(C, H, W)"}  # an unbatched input; batched: (N, ...)
_KERNELS = {1: "(out_channels, in_channels/groups, kL)", 2: "(out_channels, in_channels/groups, kH, kW)"}


def conv1d(input, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1):  # noqa: A002
    """1-D convolution (a cross-correlation, as PyTorch's) over (N, C, L) or unbatched (C, L) input.

    Args:
        input: (N, C_in, L) or (C_in, L); a NumPy array is converted (a float one to weight's dtype).
        weight: (C_out, C_in / groups, kL).
        bias: (C_out,) or None.
        stride, dilation: an int or a 1-tuple, positive.
        padding: an int or a 1-tuple (zeros added at both ends), or 'valid' (none) or 'same'
            (the output as long as the input; stride 1 only).
        groups: C_in and C_out split into this many groups, each convolved with its own.

    Returns:
        (N, C_out, L_out), L_out = (L + 2 * padding - dilation * (kL - 1) - 1) // stride + 1.

    >>> F.conv1d(mt.ones(1, 2, 5), mt.ones(3, 2, 3)).shape
    (1, 3, 3)
    """
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1):  # noqa: A002
    """2-D convolution (a cross-correlation, as PyTorch's) over (N, C, H, W) or unbatched (C, H, W) input.

    Args:
        input: (N, C_in, H, W) or (C_in, H, W); a NumPy array is converted (a float one to weight's dtype).
        weight: (C_out, C_in / groups, kH, kW).
        bias: (C_out,) or None.
        stride, dilation: an int or a pair, positive.
        padding: an int or a pair (zeros around the input), or 'valid' (none) or 'same' (the output
            the input's size; stride 1 only).
        groups: C_in and C_out split into this many groups; ``groups = C_in``: depthwise.

    Returns:
        (N, C_out, H_out, W_out), H_out = (H + 2 * padding - dilation * (kH - 1) - 1) // stride + 1.

    >>> x = mt.randn(8, 3, 32, 32)
    >>> F.conv2d(x, mt.randn(16, 3, 3, 3), padding=1).shape
    (8, 16, 32, 32)
    >>> F.conv2d(x, mt.randn(16, 3, 5, 5), stride=2, padding="valid").shape
    (8, 16, 14, 14)
    """
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv_transpose1d(input, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups: int = 1, dilation=1):  # fmt: skip
    """1-D transposed convolution: the gradient of ``conv1d`` with respect to its input, as a layer.

    Args:
        input: (N, C_in, L) or (C_in, L).
        weight: (C_in, C_out / groups, kL) (the weight of the conv1d it transposes).
        bias: (C_out,) or None.
        stride, dilation: an int or a 1-tuple, positive.
        padding: an int or a 1-tuple: ``dilation * (kL - 1) - padding`` zeros around the input.
        output_padding: extra length added at the end, smaller than stride or dilation.

    Returns:
        (N, C_out, L_out), L_out = (L - 1) * stride - 2 * padding + dilation * (kL - 1) + output_padding + 1.

    >>> F.conv_transpose1d(mt.ones(1, 2, 4), mt.ones(2, 3, 3), stride=2).shape
    (1, 3, 9)
    """
    return _transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups: int = 1, dilation=1):  # fmt: skip
    """2-D transposed convolution ("deconvolution"): the gradient of ``conv2d`` with respect to its
    input, as a layer: each input pixel spreads ``weight`` times itself over a window of the output.

    Args:
        input: (N, C_in, H, W) or (C_in, H, W).
        weight: (C_in, C_out / groups, kH, kW) (the weight of the conv2d it transposes).
        bias: (C_out,) or None.
        stride, dilation: an int or a pair, positive.
        padding: an int or a pair: the output is cropped by that much on each side.
        output_padding: extra rows and columns added at the end, smaller than stride or dilation.

    Returns:
        (N, C_out, H_out, W_out), H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1)
        + output_padding + 1.

    >>> F.conv_transpose2d(mt.ones(1, 4, 8, 8), mt.ones(4, 2, 3, 3), stride=2, padding=1, output_padding=1).shape
    (1, 2, 16, 16)
    """
    return _transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")


# ------------------------------------------------------------------ checks, then the op
def _operands(input, weight, bias, groups, dims: int, fn: str) -> tuple:  # noqa: A002
    """(input, batched) after the checks of the tensors, the ranks, ``groups`` and the bias's shape."""
    check_tensor(weight, "weight", fn)
    input = as_input(input, "input", fn, like=weight.dtype)  # noqa: A001
    if input.ndim not in (dims + 1, dims + 2):
        raise ValueError(
            f"{fn}: input must be {dims + 1}-D {_SHAPES[dims]} (unbatched) or {dims + 2}-D (N, "
            f"{_SHAPES[dims][1:]} (batched), got {input.ndim}-D input of shape {input.shape}"
        )
    if weight.ndim != dims + 2:
        raise ValueError(f"{fn}: weight must be {dims + 2}-D {_KERNELS[dims]}, got shape {weight.shape}")
    if any(k < 1 for k in weight.shape[2:]):
        raise ValueError(f"{fn}: the kernel size (weight's dims 2..) must be positive, got weight {weight.shape}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{fn}: groups must be a positive int, got {groups!r}")
    check_same_dtype(input, weight, "weight", fn)
    if bias is not None:
        check_tensor(bias, "bias", fn)
        check_same_dtype(input, bias, "bias", fn)
    return input, input.ndim == dims + 2


def _check_bias(bias, channels: int, weight: Tensor, fn: str) -> None:
    if bias is not None and bias.shape != (channels,):
        raise ValueError(
            f"{fn}: bias must have shape ({channels},) (one value per output channel of weight {weight.shape}), "
            f"got {bias.shape}"
        )


def _pads(padding, weight: Tensor, stride: tuple, dilation: tuple, dims: int, fn: str) -> tuple:
    """((before, after) per spatial dim) from an int, a tuple, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * dims
        if padding != "same":
            raise ValueError(f"{fn}: padding must be an int, {dims} ints, 'valid' or 'same', got {padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{fn}: padding='same' is not supported for strided convolutions, got stride={stride}")
        totals = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)  # (the odd zero goes after, as PyTorch)
    return tuple((p, p) for p in as_tuple(padding, dims, "padding", fn, 0))


def _convolution(input, weight, bias, stride, padding, dilation, groups, dims: int, fn: str) -> Tensor:  # noqa: A002
    input, batched = _operands(input, weight, bias, groups, dims, fn)  # noqa: A001
    stride = as_tuple(stride, dims, "stride", fn, 1)
    dilation = as_tuple(dilation, dims, "dilation", fn, 1)
    pads = _pads(padding, weight, stride, dilation, dims, fn)
    out_channels, in_channels = weight.shape[0], weight.shape[1] * groups
    if out_channels % groups:
        raise ValueError(
            f"{fn}: weight's out_channels (dim 0) must be divisible by groups={groups}, got weight {weight.shape}"
        )
    channels = input.shape[1 if batched else 0]
    if channels != in_channels:
        raise ValueError(
            f"{fn}: input must have in_channels = weight.shape[1] * groups = {weight.shape[1]} * {groups} = "
            f"{in_channels} channels, got {channels} (input of shape {input.shape}, weight {weight.shape})"
        )
    _check_bias(bias, out_channels, weight, fn)
    spatial, kernel = input.shape[-dims:], weight.shape[2:]
    check_kernel_fits(spatial, kernel, pads, dilation, fn)
    grid_ = tuple(grid(n, k, s, b, a, d) for n, k, s, (b, a), d in zip(spatial, kernel, stride, pads, dilation))
    before = _two(tuple(b for b, _ in pads), 0)
    win = backend.conv_window(_two(kernel), _two(stride), before, _two(dilation), _two(grid_))
    x = _as_4d(input, batched, dims)
    w = weight if dims == 2 else weight.unsqueeze(2)
    y = Conv.apply(x, w, bias, win=win, groups=groups)
    return _from_4d(y, batched, dims)


def _transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, dims: int, fn: str) -> Tensor:  # noqa: A002
    input, batched = _operands(input, weight, bias, groups, dims, fn)  # noqa: A001
    stride = as_tuple(stride, dims, "stride", fn, 1)
    dilation = as_tuple(dilation, dims, "dilation", fn, 1)
    padding = as_tuple(padding, dims, "padding", fn, 0)
    output_padding = as_tuple(output_padding, dims, "output_padding", fn, 0)
    if any(p >= max(s, d) for p, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(
            f"{fn}: output_padding must be smaller than either stride or dilation in each dim, got "
            f"output_padding={output_padding}, stride={stride}, dilation={dilation}"
        )
    in_channels = weight.shape[0]
    if in_channels % groups:
        raise ValueError(
            f"{fn}: weight's in_channels (dim 0) must be divisible by groups={groups}, got weight {weight.shape}"
        )
    channels = input.shape[1 if batched else 0]
    if channels != in_channels:
        raise ValueError(
            f"{fn}: input must have weight.shape[0] = {in_channels} channels, got {channels} "
            f"(input of shape {input.shape}, weight {weight.shape})"
        )
    _check_bias(bias, weight.shape[1] * groups, weight, fn)
    spatial, kernel = input.shape[-dims:], weight.shape[2:]
    size = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1
                 for n, s, p, d, k, o in zip(spatial, stride, padding, dilation, kernel, output_padding))  # fmt: skip
    if any(n < 1 for n in size):
        raise ValueError(
            f"{fn}: the output size {size} would not be positive: (input size {spatial} - 1) * stride {stride} "
            f"- 2 * padding {padding} + dilation {dilation} * (kernel {kernel} - 1) + output_padding "
            f"{output_padding} + 1; use less padding"
        )
    win = backend.conv_window(_two(kernel), _two(stride), _two(padding, 0), _two(dilation), _two(spatial))
    x = _as_4d(input, batched, dims)
    w = weight if dims == 2 else weight.unsqueeze(2)
    y = ConvTranspose.apply(x, w, bias, win=win, groups=groups, size=(1,) * (2 - dims) + size)
    return _from_4d(y, batched, dims)


def _two(values: tuple, fill: int = 1) -> tuple:
    """A 1-D setting as the 2-D one over a height of 1 (``fill``: its value along the height)."""
    return tuple(values) if len(values) == 2 else (fill, *values)


def _as_4d(x: Tensor, batched: bool, dims: int) -> Tensor:
    if not batched:
        x = x.unsqueeze(0)
    return x if dims == 2 else x.unsqueeze(2)


def _from_4d(y: Tensor, batched: bool, dims: int) -> Tensor:
    if dims == 1:
        y = y.squeeze(2)
    return y if batched else y.squeeze(0)
