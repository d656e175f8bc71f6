"""``LayerNorm``: normalise each sample over its trailing dims, then scale and shift.  (PyTorch's
``normalization.py`` also holds ``GroupNorm`` and ``LocalResponseNorm``: here in ``group_norm.py``.)

Its ``forward`` is one call to ``F.layer_norm``: the op ``ops/nn_ops.py``'s ``LayerNorm``,
whose definition in Tensor ops (``layer_norm`` beside it) is five lines; the op runs it as a
fused row kernel (mean, variance, normalise, scale, shift in one pass over each row), and its
backward likewise.

>>> norm = nn.LayerNorm(8)
>>> y = norm(mt.randn(2, 5, 8))          # each of the 2*5 rows: mean 0, variance 1
>>> y.shape, norm.weight.shape
((2, 5, 8), (8,))
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from ._utils import check_size, float_dtype, reset_scale_and_shift, scale_and_shift
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
        scale_and_shift(self, self.normalized_shape, dtype, elementwise_affine, bias)

    def reset_parameters(self) -> None:
        """weight = 1, bias = 0."""
        reset_scale_and_shift(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )
