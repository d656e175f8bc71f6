"""``Bilinear``: y = x1ᵀ W x2 + b, one bilinear form per output feature (PyTorch keeps it in
``nn/modules/linear.py``; here it has a file of its own, off the reading path's ``linear.py``).

Its ``forward`` is one call to ``F.bilinear`` (``nn/functional/linear.py``): an ``einsum`` of the
two inputs with the weight, differentiable to any order.

>>> layer = nn.Bilinear(3, 4, 5)
>>> layer(mt.randn(2, 3), mt.randn(2, 4)).shape
(2, 5)
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module


class Bilinear(Module):
    """y[..., o] = x1 @ weight[o] @ x2 + bias[o]: one bilinear form per output feature.

    Args:
        in1_features, in2_features: sizes of the two inputs' last dims.
        out_features: size of the output's last dim.
        bias: learn an additive bias (default True).
        dtype: parameter dtype (default: ``mt.get_default_dtype()``).

    Shapes: (..., in1), (..., in2) -> (..., out).  ``weight`` (out, in1, in2), ``bias`` (out,).
    Init (PyTorch's): both ~ U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
    """

    def __init__(
        self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in1_features = check_size(in1_features, "in1_features", "Bilinear")
        self.in2_features = check_size(in2_features, "in2_features", "Bilinear")
        self.out_features = check_size(out_features, "out_features", "Bilinear")
        dtype = float_dtype(dtype, "Bilinear", device)
        self.weight = empty_parameter((self.out_features, self.in1_features, self.in2_features), dtype)
        if bias:
            self.bias = empty_parameter((self.out_features,), dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight and bias ~ U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1.0 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
