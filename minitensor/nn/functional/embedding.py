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


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot vectors of integer class ids (not differentiable).

    Args:
        tensor: integer ids of any shape, each in [0, num_classes).
        num_classes: the length C of each vector; -1 takes ``tensor.max() + 1``.

    Returns:
        (*tensor.shape, C) int64.

    >>> F.one_hot(mt.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if not isinstance(tensor, Tensor) or tensor.dtype.kind not in "iu":
        kind = tensor.dtype if isinstance(tensor, Tensor) else type(tensor).__name__
        raise TypeError(f"one_hot: tensor must be an integer Tensor of class ids, got {kind}")
    ids = tensor._data
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"one_hot: num_classes must be an int, got {type(num_classes).__name__}")
    if ids.size and ids.min() < 0:
        raise ValueError(f"one_hot: class ids must be non-negative, got {ids.min()}")
    if num_classes == -1:
        if ids.size == 0:
            raise ValueError("one_hot: num_classes=-1 needs a non-empty tensor to infer the number of classes")
        num_classes = int(ids.max()) + 1
    elif ids.size and ids.max() >= num_classes:
        raise ValueError(f"one_hot: class ids must be < num_classes={num_classes}, got {ids.max()}")
    out = (ids[..., None] == np.arange(num_classes)).astype(np.int64)
    return Tensor._make(out, False, None)
