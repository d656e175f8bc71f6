"""``embedding``: look up rows of a weight matrix by integer index (``ops.nn_ops.Embedding``)."""

from __future__ import annotations

import numpy as np

from ...ops import nn_ops
from ...tensor import Tensor
from ._checks import check_tensor


def _indices(indices) -> np.ndarray:
    array = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if array.dtype.kind not in "iu":
        raise TypeError(f"embedding: input must hold integer indices, got dtype {array.dtype}")
    return array


def embedding(input, weight: Tensor, padding_idx: int | None = None) -> Tensor:  # noqa: A002
    """Rows of ``weight`` picked by ``input``.

    Args:
        input: integer indices of any shape (Tensor or array), each in [0, V).
        weight: (V, D).
        padding_idx: a row that receives no gradient (its lookups still return it).

    Returns:
        (*input.shape, D).

    >>> F.embedding(mt.tensor([[0, 2]]), mt.eye(3)).tolist()
    [[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]]
    """
    check_tensor(weight, "weight", "embedding")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape {weight.shape}")
    indices = _indices(input)
    num = weight.shape[0]
    if indices.size and (indices.min() < 0 or indices.max() >= num):
        bad = indices.min() if indices.min() < 0 else indices.max()
        raise ValueError(
            f"embedding: index {bad} is out of range; indices must be in [0, {num - 1}] (num_embeddings={num})"
        )
    if padding_idx is not None:
        if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
            raise TypeError(f"embedding: padding_idx must be an int or None, got {type(padding_idx).__name__}")
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding: padding_idx must be in [{-num}, {num - 1}], got {padding_idx}")
        padding_idx %= num
    return nn_ops.Embedding.apply(weight, indices, padding_idx=padding_idx)
