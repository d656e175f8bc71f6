"""``group_norm`` and ``local_response_norm``, as PyTorch's, built from other ops.

Group norm splits the C channels of each sample into ``num_groups`` groups and normalises each
group over its channels and spatial positions, then scales and shifts each channel: the fused op
``ops/group_norm.py``'s ``GroupNorm`` (batch norm's kernels, statistics per sample and group).
Local response norm divides each value by a power of the mean square over neighbouring
channels (PyTorch's formula with ``pad`` and ``avg_pool2d``).

>>> x = mt.randn(2, 4, 3)
>>> y = F.group_norm(x, 2)                 # channels {0, 1} and {2, 3} of each sample together
>>> bool(abs(y.reshape(2, 2, 6).mean(-1)).amax() < 1e-5)
True
"""

from __future__ import annotations

import numbers

from ...ops.group_norm import GroupNorm
from ...ops.padding import pad
from ...tensor import Tensor
from ._checks import as_input, check_float, check_same_dtype, check_tensor, float_like
from .pooling import avg_pool2d


def group_norm(
    input: Tensor,  # noqa: A002  (PyTorch's names)
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise ``input`` (N, C, *) over groups of C / ``num_groups`` channels (and all spatial
    positions) per sample, then ``* weight + bias`` per channel (each (C,) or None)."""
    fn = "group_norm"
    input = as_input(input, "input", fn, like=float_like(weight, bias))  # noqa: A001
    check_float(input, fn)
    if input.ndim < 2:
        raise ValueError(f"{fn}: input must have at least 2 dims (N, C, *), got shape {tuple(input.shape)}")
    if isinstance(num_groups, bool) or not isinstance(num_groups, numbers.Integral) or num_groups <= 0:
        raise ValueError(f"{fn}: num_groups must be a positive int, got {num_groups!r}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise ValueError(
            f"{fn}: the input's channels (dim 1 of shape {tuple(input.shape)}) must be divisible by "
            f"num_groups={num_groups}"
        )
    if not eps > 0:
        raise ValueError(f"{fn}: eps must be positive (a constant group would give NaN), got {eps}")
    for name, v in (("weight", weight), ("bias", bias)):
        if v is not None:
            check_tensor(v, name, fn)
            if v.ndim != 1 or v.shape[0] != c:
                raise ValueError(f"{fn}: {name} must have shape (C,) = ({c},) (the input's channels), got "
                                 f"{tuple(v.shape)}")  # fmt: skip
            check_same_dtype(input, v, name, fn)
    return GroupNorm.apply(input, weight, bias, groups=num_groups, eps=float(eps))


def local_response_norm(
    input: Tensor,  # noqa: A002
    size: int,
    alpha: float = 1e-4,
    beta: float = 0.75,
    k: float = 1.0,
) -> Tensor:
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta`` for (N, C, *)
    input with at least 3 dims (the channel window zero-padded at the edges, as PyTorch's)."""
    fn = "local_response_norm"
    input = as_input(input, "input", fn)  # noqa: A001
    check_float(input, fn)
    if input.ndim < 3:
        raise ValueError(f"{fn}: input must have at least 3 dims (N, C, *), got shape {tuple(input.shape)}")
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size <= 0:
        raise ValueError(f"{fn}: size must be a positive int, got {size!r}")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    div = (input * input).reshape(n, 1, c, -1)  # (N, 1, C, positions): the channels as rows
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k) ** beta
