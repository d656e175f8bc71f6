"""``one_hot``: class indices to one-hot int64 vectors (not differentiable)."""

from __future__ import annotations

import numpy as np

from ...tensor import Tensor


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """(*) int64 indices -> (*, num_classes) int64 with a 1 at each index; -1 infers max + 1."""
    if not isinstance(tensor, Tensor) or tensor.dtype != np.int64:
        raise TypeError(
            f"one_hot: tensor must be an int64 Tensor, got {getattr(tensor, 'dtype', type(tensor).__name__)}"
        )
    idx = tensor.numpy()
    if num_classes == -1:
        if idx.size == 0:
            raise ValueError("one_hot: can not infer the number of classes from an empty tensor")
        num_classes = int(idx.max()) + 1
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise ValueError(f"one_hot: class values must be in [0, {num_classes}), got {idx.min()}..{idx.max()}")
    return Tensor._make((idx[..., None] == np.arange(num_classes)).astype(np.int64), False, None)
