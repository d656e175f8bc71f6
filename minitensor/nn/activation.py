"""Activation layers: ``ReLU``, ``GELU``, ``Tanh``, ``Sigmoid``, ``Softmax``, ``LogSoftmax``.

Each wraps the function of the same name in ``nn.functional``.

>>> nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3), nn.Softmax(dim=-1))(mt.randn(2, 4)).shape
(2, 3)
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


def _check_dim(dim, layer: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{layer}: dim must be an int, got {type(dim).__name__} {dim!r}")
    return dim


class ReLU(Module):
    """max(x, 0), elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(input)


class GELU(Module):
    """x * Phi(x) (Phi: standard normal CDF); ``approximate='tanh'`` uses the tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.sigmoid(input)


class Softmax(Module):
    """exp(x) / sum(exp(x)) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = None if dim is None else _check_dim(dim, "Softmax")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)  # dim None: PyTorch's implicit dim, warned at the caller

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - logsumexp(x) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = None if dim is None else _check_dim(dim, "LogSoftmax")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)  # dim None: PyTorch's implicit dim, warned at the caller

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class SiLU(Module):
    """x * sigmoid(x), elementwise (also called swish)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.silu(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, and x where beta * x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"
