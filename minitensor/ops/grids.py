"""Grids and tuples of elements: ``meshgrid``, ``cartesian_prod``, ``combinations``.

``meshgrid`` expands each 1-D tensor along the others' dims (views: ``Expand``); ``cartesian_prod``
flattens and stacks them; ``combinations`` gathers the elements at index tuples made by
``itertools``.  All are differentiable through those ops.

>>> x, y = mt.meshgrid(mt.tensor([1, 2]), mt.tensor([3, 4, 5]), indexing="ij")
>>> x.shape, y[0]
((2, 3), tensor([3, 4, 5]))
>>> mt.combinations(mt.tensor([1, 2, 3]))
tensor([[1, 2],
        [1, 3],
        [2, 3]])
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Tensor
from .arguments import bool_arg, choice_arg, int_arg, tensor_input
from .operands import stretched
from .shape import Index, stack


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids of 1-D (or 0-D) tensors: with ``indexing='ij'`` tensor i varies along dim i; with
    'xy' the first two dims are swapped (Cartesian, as NumPy's default).  Without ``indexing``: 'ij'
    and PyTorch's warning that the argument will be required."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise ValueError("meshgrid: expected at least one tensor")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)  # fmt: skip
        indexing = "ij"
    choice_arg(indexing, "meshgrid", "indexing", ("ij", "xy"))
    for i, t in enumerate(tensors):
        tensor_input(t, "meshgrid", f"tensors[{i}]")
        if t.ndim > 1:
            raise ValueError(f"meshgrid: tensors[{i}] must be 0-D or 1-D, got shape {t.shape}")
        if t.dtype != tensors[0].dtype:
            raise TypeError(f"meshgrid: expected all tensors to have the same dtype, got {tensors[0].dtype} and "
                            f"{t.dtype}")  # fmt: skip
    vectors = [t if t.ndim == 1 else t.reshape(-1) for t in tensors]
    shape = tuple(v.shape[0] for v in vectors)
    grids = []
    for i, v in enumerate(vectors):
        view = v.reshape(tuple(-1 if j == i else 1 for j in range(len(vectors))))
        grids.append(stretched(view, shape))
    if indexing == "xy" and len(grids) >= 2:
        grids = [g.transpose(0, 1) for g in grids]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """All tuples of one element of each 1-D tensor, in order, as rows: (N1 * N2 * ..., n) (one tensor: itself)."""
    for i, t in enumerate(tensors):
        tensor_input(t, "cartesian_prod", f"tensors[{i}]")
        if t.ndim != 1:
            raise ValueError(f"cartesian_prod: tensors[{i}] must be 1-D, got shape {t.shape}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], dim=1)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """All ``r``-element combinations of the 1-D ``input``'s elements, in order, as rows (itertools'
    ``combinations``, or ``combinations_with_replacement``)."""
    tensor_input(input, "combinations")
    if input.ndim != 1:
        raise ValueError(f"combinations: input must be a 1-D tensor, got shape {input.shape}")
    r = int_arg(r, "combinations", "r", low=0)
    repeat = bool_arg(with_replacement, "combinations", "with_replacement")
    if r == 0:
        return Tensor._make(np.zeros(0, input.dtype), False, None)
    return Index.apply(input, key=_combination_indices(input.shape[0], r, repeat))


def _combination_indices(n: int, r: int, repeat: bool) -> np.ndarray:
    """(count, r) int64: the index tuples of ``itertools.combinations(range(n), r)`` (``repeat``: with
    replacement), in its order, built a column at a time with NumPy (each row extended by every index
    after its last one) instead of one Python tuple per row."""
    rows = np.arange(n, dtype=np.int64)[:, None]
    for _ in range(r - 1):
        start = rows[:, -1] if repeat else rows[:, -1] + 1  # the next index runs from start to n - 1
        counts = n - start
        firsts = np.cumsum(counts) - counts  # where each row's extensions begin
        following = np.arange(counts.sum(), dtype=np.int64) - np.repeat(firsts - start, counts)
        rows = np.column_stack([np.repeat(rows, counts, axis=0), following])
    return rows
