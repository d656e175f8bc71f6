"""``LayerNorm``: normalise each sample over its trailing dims, then scale and shift; and the
two other normalisations of PyTorch's ``normalization.py``: ``GroupNorm`` (over groups of
channels) and ``LocalResponseNorm`` (across neighbouring channels).

Its ``forward`` is one call to ``F.layer_norm``: the op ``ops/nn_ops.py``'s ``LayerNorm``,
whose definition in Tensor ops (``layer_norm`` beside it) is five lines; the op runs it as a
fused row kernel (mean, variance, normalise, scale, shift in one pass over each row), and its
backward likewise.

>>> norm = nn.LayerNorm(8)
>>> y = norm(mt.randn(2, 5, 8))          # each of the 2*5 rows: mean 0, variance 1
>>> y.shape, norm.weight.shape
((2, 5, 8), (8,))
>>> nn.GroupNorm(2, 6)
GroupNorm(2, 6, eps=1e-05, affine=True, bias=True)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape: an int or a tuple of ints: the trailing dims of the input.
        eps: added to the (biased) variance for stability.
        elementwise_affine: learn ``weight`` (init 1) and ``bias`` (init 0).
        bias: learn ``bias`` too (only with ``elementwise_affine``).
        dtype: parameter dtype (default: ``mt.get_default_dtype()``).

    Shapes: input (..., *normalized_shape) -> output of the same shape.
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if not isinstance(normalized_shape, (tuple, list)) else tuple(normalized_shape)
        if not shape:
            raise ValueError("LayerNorm: normalized_shape must have at least one dim, got ()")
        self.normalized_shape = tuple(check_size(s, "normalized_shape", "LayerNorm") for s in shape)
        if not eps > 0:
            raise ValueError(f"LayerNorm: eps must be positive (a constant row would give NaN), got {eps}")
        self.eps = float(eps)
        self.elementwise_affine = elementwise_affine
        dtype = float_dtype(dtype, "LayerNorm", device)
        if elementwise_affine:
            self.weight = empty_parameter(self.normalized_shape, dtype)
            if bias:
                self.bias = empty_parameter(self.normalized_shape, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight = 1, bias = 0."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


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
        if affine:
            self.weight = empty_parameter((num_channels,), dtype)
            if bias:
                self.bias = empty_parameter((num_channels,), dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight = 1, bias = 0."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

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
