"""``embedding``: look up rows of a weight matrix by integer index (``ops.nn_ops.Embedding``);
``embedding_bag``: the sum, mean or max of the rows of each bag of indices; ``one_hot``."""

from __future__ import annotations

import numpy as np

from ...ops import nn_ops
from ...ops.embedding_bag import EmbeddingBag
from ...ops.shape import IndexAdd, where
from ...tensor import Tensor
from ._checks import check_same_dtype, check_tensor


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


def embedding_bag(
    input,  # noqa: A002
    weight: Tensor,
    offsets=None,
    max_norm=None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of the rows of ``weight`` picked by each bag of indices: (B, D).

    Bags: the rows of a 2-D ``input`` (B, L) (``offsets`` None), or the runs of a 1-D ``input`` that start
    at each of the (B,) ``offsets`` (the first 0; with ``include_last_offset`` there are B + 1 offsets, the
    last the end).  Indices equal to ``padding_idx`` are left out (an empty bag gives zeros).
    ``per_sample_weights`` (``input``'s shape, ``mode='sum'`` only) scales each row before the sum.
    The max gives its gradient to the first largest row of each bag and dim, as PyTorch.
    ``max_norm``, ``scale_grad_by_freq`` and ``sparse`` are accepted at their defaults only.

    >>> F.embedding_bag(mt.tensor([0, 2, 1]), mt.eye(3), mt.tensor([0, 2]), mode="sum").tolist()
    [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    fn = "embedding_bag"
    check_tensor(weight, "weight", fn)
    if weight.ndim != 2:
        raise ValueError(f"{fn}: weight must be 2-D (num_embeddings, embedding_dim), got shape {weight.shape}")
    for name, value in (("max_norm", max_norm), ("scale_grad_by_freq", scale_grad_by_freq), ("sparse", sparse)):
        if value:
            raise ValueError(f"{fn}: {name}={value!r} is not supported by minitensor (only the default)")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{fn}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    indices = _indices(input)
    bags, n_bags = _bags(indices, offsets, include_last_offset, fn)
    flat = indices.reshape(-1)
    num = weight.shape[0]
    if flat.size and (flat.min() < 0 or flat.max() >= num):
        bad = flat.min() if flat.min() < 0 else flat.max()
        raise ValueError(f"{fn}: index {bad} is out of range; indices must be in [0, {num - 1}]")
    kept = np.ones(bags.shape, dtype=bool)
    if padding_idx is not None:
        is_int = isinstance(padding_idx, (int, np.integer)) and not isinstance(padding_idx, bool)
        if not is_int or not -num <= padding_idx < num:
            raise ValueError(f"{fn}: padding_idx must be an int in [{-num}, {num - 1}] or None, got {padding_idx!r}")
        kept &= flat != padding_idx % num
    bags = bags[kept]
    if per_sample_weights is None and mode != "max":  # (one op: EmbeddingBag)
        indices_kept = flat[kept].astype(np.int64, copy=False)
        return EmbeddingBag.apply(weight, indices=indices_kept, bags=bags, n_bags=n_bags, mean=mode == "mean")
    rows = nn_ops.Embedding.apply(weight, flat[kept])  # (K, D)
    shape = (n_bags, weight.shape[1])
    if per_sample_weights is not None:
        if mode != "sum":
            raise ValueError(f"{fn}: per_sample_weights is only supported for mode='sum', got mode={mode!r}")
        check_tensor(per_sample_weights, "per_sample_weights", fn)
        if per_sample_weights.shape != indices.shape:
            raise ValueError(
                f"{fn}: per_sample_weights must have input's shape {indices.shape}, got {per_sample_weights.shape}"
            )
        check_same_dtype(per_sample_weights, weight, "weight", fn)
        rows = rows * per_sample_weights.reshape(-1)[np.flatnonzero(kept)].unsqueeze(1)
    if mode == "max":
        return _bag_max(rows, bags, shape)
    return IndexAdd.apply(rows, key=(bags,), shape=shape)  # (mode 'sum', weighted rows)


def _bags(indices: np.ndarray, offsets, include_last_offset: bool, fn: str) -> tuple:
    """The bag of each index of ``indices`` (flattened) and the number of bags."""
    if indices.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{fn}: offsets must be None for a 2-D input (each row is a bag), got {offsets!r}")
        n_bags, length = indices.shape
        return np.repeat(np.arange(n_bags), length), n_bags
    if indices.ndim != 1:
        raise ValueError(f"{fn}: input must be 1-D (with offsets) or 2-D (B, L), got shape {indices.shape}")
    if offsets is None:
        raise ValueError(f"{fn}: a 1-D input needs offsets (the start of each bag), got None")
    starts = offsets._data if isinstance(offsets, Tensor) else np.asarray(offsets)
    if starts.ndim != 1 or starts.dtype.kind not in "iu":
        raise ValueError(f"{fn}: offsets must be a 1-D integer tensor, got shape {starts.shape} dtype {starts.dtype}")
    if starts.size and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > indices.size):
        raise ValueError(
            f"{fn}: offsets must start at 0, never decrease and stay <= the input's length {indices.size}, "
            f"got {starts.tolist()}"
        )
    if include_last_offset:  # (the last offset is the input's length: PyTorch's results differ by dtype otherwise)
        if starts.size == 0 or starts[-1] != indices.size:
            raise ValueError(
                f"{fn}: with include_last_offset=True the last offset must be the input's length {indices.size}, "
                f"got offsets {starts.tolist()}"
            )
        starts = starts[:-1]
    return np.searchsorted(starts, np.arange(indices.size), side="right") - 1, starts.size


def _bag_max(rows: Tensor, bags: np.ndarray, shape: tuple) -> Tensor:
    """The largest row of each bag per dim (the first of equal ones gets the gradient); 0 for empty bags."""
    n_bags, width = shape
    if rows.shape[0] == 0:
        return IndexAdd.apply(rows, key=(bags,), shape=shape)
    values = rows._data
    best = np.full(shape, -np.inf, dtype=values.dtype)
    np.maximum.at(best, bags, values)
    winner = np.where(values == best[bags], np.arange(rows.shape[0])[:, None], rows.shape[0])
    first = np.full(shape, rows.shape[0])
    np.minimum.at(first, bags, winner)
    empty = np.bincount(bags, minlength=n_bags) == 0
    picked = rows.gather(0, Tensor(np.where(empty[:, None], 0, first)))
    return where(empty[:, None], 0.0, picked)


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
