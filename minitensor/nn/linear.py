"""``Linear`` (y = x @ W.T + b) and ``Identity``: a layer is a Module that owns Parameters.

``Linear`` creates its ``weight`` (out, in) and ``bias`` (out,) as ``Parameter``s (the
Module registers them when they are assigned), initialises them as PyTorch does
(``reset_parameters``: kaiming-uniform), and its ``forward`` is one call to
``F.linear``, which runs one op, ``ops/nn_ops.py``'s ``Linear``: the product as one BLAS
GEMM, the gradients as two more.

>>> layer = nn.Linear(4, 2)
>>> layer(mt.randn(8, 4)).shape
(8, 2)
>>> layer.weight.shape, layer.bias.shape
((2, 4), (2,))
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module


class Identity(Module):
    """Returns its input unchanged (a placeholder layer); accepts and ignores constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


class Linear(Module):
    """y = x @ weight.T + bias over the last dim.

    Args:
        in_features: size of the input's last dim.
        out_features: size of the output's last dim.
        bias: learn an additive bias (default True).
        dtype: parameter dtype (default: ``mt.get_default_dtype()``).

    Shapes: input (..., in_features) -> output (..., out_features).

    Init (PyTorch's): weight and bias ~ U(-1/sqrt(in_features), 1/sqrt(in_features)).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = check_size(in_features, "in_features", "Linear")
        self.out_features = check_size(out_features, "out_features", "Linear")
        dtype = float_dtype(dtype, "Linear", device)
        self.weight = empty_parameter((self.out_features, self.in_features), dtype)
        if bias:
            self.bias = empty_parameter((self.out_features,), dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) for the weight, i.e. U(-1/sqrt(in), 1/sqrt(in)); the same bound for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
