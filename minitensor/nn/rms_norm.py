"""``RMSNorm``: scale each sample by the root mean square of its trailing dims (PyTorch keeps it in
``nn/modules/normalization.py``; here it has a file of its own, off the reading path's
``normalization.py``).

Its ``forward`` is one call to ``F.rms_norm`` (``nn/functional/normalization.py``), Tensor ops
differentiable to any order.
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module


class RMSNorm(Module):
    """y = x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape`` dims (no centring,
    no bias: Llama's and Gemma's normalisation).

    Args:
        normalized_shape: an int or a tuple of ints: the trailing dims of the input.
        eps: added to the mean square; None: the input dtype's machine epsilon (as PyTorch).
        elementwise_affine: learn ``weight`` (init 1).
        dtype: parameter dtype (default: ``mt.get_default_dtype()``).

    >>> nn.RMSNorm(8)(mt.randn(2, 8)).shape
    (2, 8)
    """

    def __init__(
        self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if not isinstance(normalized_shape, (tuple, list)) else tuple(normalized_shape)
        if not shape:
            raise ValueError("RMSNorm: normalized_shape must have at least one dim, got ()")
        self.normalized_shape = tuple(check_size(s, "normalized_shape", "RMSNorm") for s in shape)
        if eps is not None and not eps >= 0:
            raise ValueError(f"RMSNorm: eps must be non-negative or None, got {eps}")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = empty_parameter(self.normalized_shape, float_dtype(dtype, "RMSNorm", device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight = 1."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
