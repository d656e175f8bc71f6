"""``Flatten`` and ``Unflatten``, as PyTorch's: reshapes as layers (e.g. between a convolutional
stack and a linear head).

>>> nn.Flatten()(mt.randn(4, 3, 2, 2)).shape
(4, 12)
>>> nn.Unflatten(1, (3, 4))(mt.randn(2, 12)).shape
(2, 3, 4)
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from .functional._checks import as_input
from .module import Module


class Flatten(Module):
    """Merge dims ``start_dim`` to ``end_dim`` (inclusive) into one: (N, *) -> (N, prod(*))
    by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's name)
        input = as_input(input, "input", "Flatten")  # noqa: A001
        if input.ndim:
            start, end = self.start_dim % input.ndim, self.end_dim % input.ndim
            if -input.ndim <= self.start_dim < input.ndim and -input.ndim <= self.end_dim < input.ndim and start > end:
                raise ValueError(
                    f"Flatten: start_dim ({self.start_dim}) must not come after end_dim ({self.end_dim}) for input "
                    f"of shape {tuple(input.shape)}"
                )
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (ints whose product is its size; one may be -1)."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("Unflatten: named dims are not supported by minitensor; dim must be an int")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got {unflattened_size!r}")
        for i, s in enumerate(unflattened_size):
            if isinstance(s, bool) or not isinstance(s, int):
                raise TypeError(
                    f"Unflatten: unflattened_size must be a tuple of ints, got {type(s).__name__} at position {i}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        input = as_input(input, "input", "Unflatten")  # noqa: A001
        if not -input.ndim <= self.dim < max(input.ndim, 1):
            raise ValueError(f"Unflatten: dim must be in [{-input.ndim}, {input.ndim - 1}], got {self.dim}")
        d = self.dim % input.ndim
        sizes = tuple(self.unflattened_size)
        known = math.prod(s for s in sizes if s != -1)
        fits = sizes.count(-1) <= 1 and (
            input.shape[d] % known == 0 if -1 in sizes and known else known == input.shape[d]
        )
        if not fits:
            raise ValueError(
                f"Unflatten: unflattened_size {list(sizes)} does not multiply up to the size of dim {self.dim} "
                f"({input.shape[d]}) of input of shape {tuple(input.shape)}"
            )
        return input.reshape(input.shape[:d] + sizes + input.shape[d + 1 :])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
