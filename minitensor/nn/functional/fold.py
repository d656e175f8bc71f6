"""``unfold`` (im2col) and ``fold`` (col2im): an image's sliding windows as columns, and back.

``unfold`` is the first half of a convolution (docs/vision.md: a convolution is ``unfold`` then
a matrix product); ``fold`` adds columns back onto the pixels they came from, summing where windows
overlap, so ``fold(unfold(x))`` is x times the number of windows that cover each pixel.  Both are
one op of ``ops/unfold.py``, each the other's gradient.
"""

from __future__ import annotations

from ... import backend
from ...ops.unfold import Fold, Unfold
from ...tensor import Tensor
from ._checks import as_input
from ._windows import as_tuple, grid


def _windows(kernel_size, dilation, padding, stride, fn: str) -> tuple:
    return (
        as_tuple(kernel_size, 2, "kernel_size", fn, 1),
        as_tuple(dilation, 2, "dilation", fn, 1),
        as_tuple(padding, 2, "padding", fn, 0),
        as_tuple(stride, 2, "stride", fn, 1),
    )


def _grid(spatial: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple, fn: str) -> tuple:
    blocks = tuple(grid(n, k, s, p, p, d) for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation))
    if any(b < 1 for b in blocks):
        raise ValueError(
            f"{fn}: the kernel {kernel} (dilation {dilation}) does not fit in the input of spatial size {spatial} "
            f"with padding {padding}: that gives {blocks} windows; each must be at least 1"
        )
    return blocks


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """Every ``kernel_size`` window of the input, as a column (PyTorch's ``F.unfold``, im2col).

    Args:
        input: (N, C, H, W) or unbatched (C, H, W).
        kernel_size, dilation, stride: an int or a pair, positive.
        padding: an int or a pair: zeros around the input.

    Returns:
        (N, C * kH * kW, L), L = the number of windows (oh * ow, as a convolution's output); row
        ``(c * kH + i) * kW + j`` holds pixel (i, j) of each window of channel c.

    >>> F.unfold(mt.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    input = as_input(input, "input", "unfold")  # noqa: A001
    if input.ndim not in (3, 4):
        raise ValueError(
            f"unfold: input must be 3-D (C, H, W) (unbatched) or 4-D (N, C, H, W) (batched), "
            f"got {input.ndim}-D input of shape {input.shape}"
        )
    kernel, dilation, padding, stride = _windows(kernel_size, dilation, padding, stride, "unfold")
    blocks = _grid(input.shape[-2:], kernel, dilation, padding, stride, "unfold")
    win = backend.conv_window(kernel, stride, padding, dilation, blocks)
    if input.ndim == 3:
        return Unfold.apply(input.unsqueeze(0), win=win).squeeze(0)
    return Unfold.apply(input, win=win)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """Columns of windows summed back into an image (PyTorch's ``F.fold``, col2im): the adjoint of
    ``unfold``.

    Args:
        input: (N, C * kH * kW, L) or unbatched (C * kH * kW, L), L the number of windows that
            ``kernel_size``, ``dilation``, ``padding`` and ``stride`` give on ``output_size``.
        output_size: (H, W) of the result, an int or a pair.

    Returns:
        (N, C, H, W) (or (C, H, W)): each pixel the sum of the column entries copied from it.

    >>> F.fold(mt.ones(1, 4, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    input = as_input(input, "input", "fold")  # noqa: A001
    if input.ndim not in (2, 3):
        raise ValueError(
            f"fold: input must be 2-D (C * kH * kW, L) (unbatched) or 3-D (N, C * kH * kW, L) (batched), "
            f"got {input.ndim}-D input of shape {input.shape}"
        )
    size = as_tuple(output_size, 2, "output_size", "fold", 1)
    kernel, dilation, padding, stride = _windows(kernel_size, dilation, padding, stride, "fold")
    rows, length = input.shape[-2:]
    if rows % (kernel[0] * kernel[1]):
        raise ValueError(
            f"fold: input's dim -2 ({rows}) must be divisible by the kernel's size "
            f"{kernel[0]} * {kernel[1]} = {kernel[0] * kernel[1]} (C * kH * kW), got input of shape {input.shape}"
        )
    blocks = _grid(size, kernel, dilation, padding, stride, "fold")
    if length != blocks[0] * blocks[1]:
        raise ValueError(
            f"fold: input's last dim must be the number of windows {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]} "
            f"(output_size={size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, stride={stride}), "
            f"got {length} (input of shape {input.shape})"
        )
    win = backend.conv_window(kernel, stride, padding, dilation, blocks)
    if input.ndim == 2:
        return Fold.apply(input.unsqueeze(0), win=win, size=size).squeeze(0)
    return Fold.apply(input, win=win, size=size)
