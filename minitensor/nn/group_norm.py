"""``GroupNorm`` (normalise each sample over groups of channels) and ``LocalResponseNorm`` (across
neighbouring channels): the two other normalisations of PyTorch's ``normalization.py``, beside
their functional forms in ``nn/functional/group_norm.py``.

>>> nn.GroupNorm(2, 6)
GroupNorm(2, 6, eps=1e-05, affine=True, bias=True)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from ._utils import check_size, float_dtype, reset_scale_and_shift, scale_and_shift
from .module import Module


class GroupNorm(Module):
    """Normalise each sample of (N, C, *) over groups of C / ``num_groups`` channels (and all
    positions), then ``* weight + bias`` per channel.

    Args:
        num_groups: the number of groups; must divide ``num_channels``.
        num_channels: C.
        eps: added to the variance.
        affine: learn ``weight`` (ones) and ``bias`` (zeros), each (C,) (``bias=False``: no bias).
    """

    def __init__(
        self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None, dtype=None,
        *, bias: bool = True,
    ) -> None:  # fmt: skip
        super().__init__()
        self.num_groups = check_size(num_groups, "num_groups", "GroupNorm")
        self.num_channels = check_size(num_channels, "num_channels", "GroupNorm")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.eps = eps
        self.affine = affine
        dtype = float_dtype(dtype, "GroupNorm", device)
        scale_and_shift(self, (num_channels,), dtype, affine, bias)

    def reset_parameters(self) -> None:
        """weight = 1, bias = 0."""
        reset_scale_and_shift(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class LocalResponseNorm(Module):
    """Divide each value of (N, C, *) by ``(k + alpha * mean of x^2 over `size` neighbouring
    channels)^beta`` (AlexNet's normalisation)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
