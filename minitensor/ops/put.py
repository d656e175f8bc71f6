"""Writing values at positions: ``index_add``, ``index_put``, ``masked_scatter``, ``fill_diagonal_``.

Each is built from ops that already know their gradients, so every order of derivative
is exact: ``IndexAdd`` puts (and adds up) values at an indexing key in a tensor of
zeros, ``MaskedScatter`` puts values at the True places of a mask, and the in-place
forms go through ``inplace.py`` (they join the graph as PyTorch's do).

- ``index_add(dim, index, source, alpha=1)``: ``out[..., index[i], ...] += alpha * source[..., i, ...]``
  along ``dim`` (repeated indices add up);
- ``index_put(indices, values, accumulate=False)``: ``out[indices] = values`` (or ``+=``);
- ``masked_scatter(mask, source)``: the True places of ``mask`` (broadcast to the input)
  take ``source``'s first elements, in row-major order;
- ``fill_diagonal_(value, wrap=False)``: NumPy's ``fill_diagonal`` (a 2-D tensor, or all dims equal).

>>> mt.zeros(3).index_add(0, mt.tensor([0, 0, 2]), mt.tensor([1.0, 2.0, 3.0]))
tensor([3., 0., 3.])
>>> mt.zeros(2, 3).masked_scatter(mt.tensor([True, False, True]), mt.arange(4.0))
tensor([[0., 0., 1.],
        [2., 0., 3.]])
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._args import _dim
from ..tensor import Tensor
from . import inplace
from .operands import stretched
from .shape import IndexAdd, MaskedScatter, where


def _index_add_key(fn: str, input, dim: int, index, source) -> tuple:  # noqa: A002
    """The key ``(:, ..., index)`` of ``index_add`` along ``dim``, after PyTorch's checks."""
    if input.ndim == 0:
        raise ValueError(f"{fn}: input must have at least 1 dim, got a 0-d tensor")
    if not isinstance(index, Tensor) or index.dtype.kind not in "iu" or index.ndim > 1:
        raise TypeError(f"{fn}: index must be a 0-D or 1-D integer tensor, got {index!r}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{fn}: source must be a Tensor, got {type(source).__name__}")
    d = _dim(dim, input.ndim)
    idx = index._data.reshape(-1).astype(np.int64, copy=False)
    expected = input.shape[:d] + (idx.size,) + input.shape[d + 1 :]
    if source.shape != expected:
        raise ValueError(f"{fn}: source must have shape {expected} (input {input.shape}, {idx.size} indices along "
                         f"dim {d}), got {source.shape}")  # fmt: skip
    size = input.shape[d]
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise ValueError(f"{fn}: index out of range for dim {d} of size {size}: values {idx.min()}..{idx.max()}")
    return (slice(None),) * d + (idx % size,)


def index_add(input, dim: int, index, source, *, alpha=1):  # noqa: A002  (PyTorch's names)
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    key = _index_add_key("index_add", input, dim, index, source)
    return input + IndexAdd.apply(source if alpha == 1 else source * alpha, key=key, shape=input.shape)


def index_add_(input, dim: int, index, source, *, alpha=1):  # noqa: A002
    """``index_add`` in place."""
    key = _index_add_key("index_add_", input, dim, index, source)
    return input.__iadd__(IndexAdd.apply(source if alpha == 1 else source * alpha, key=key, shape=input.shape))


def _put_key(fn: str, input, indices, values) -> tuple:  # noqa: A002
    """The index arrays of ``indices``, after PyTorch's checks of them and of values' dtype."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fn}: indices must be a tuple of Tensors, got {type(indices).__name__}")
    if isinstance(values, Tensor) and values.dtype != input.dtype:
        raise RuntimeError(
            f"{fn}: values must have input's dtype {dtypes.torch_name(input.dtype)} (the source and destination "
            f"dtypes must match), got {dtypes.torch_name(values.dtype)}"
        )
    return tuple(i._data if isinstance(i, Tensor) else np.asarray(i) for i in indices)


def index_put_(input, indices, values, accumulate: bool = False):  # noqa: A002
    """``input[indices] = values`` (``accumulate``: ``+=``, repeated indices adding up), in place."""
    key = _put_key("index_put_", input, indices, values)
    if not accumulate:
        input[key] = values
        return input
    return input.__iadd__(_added_up(input, key, values))


def index_put(input, indices, values, accumulate: bool = False):  # noqa: A002
    """A copy of ``input`` with ``index_put_`` applied (with ``accumulate``: ``input`` plus the values
    added up at ``indices``, out of place)."""
    key = _put_key("index_put", input, indices, values)
    if not accumulate:
        return index_put_(input.clone(), indices, values)
    return input + _added_up(input, key, values)


def _added_up(input, key: tuple, values):  # noqa: A002
    """Zeros of input's shape with ``values`` (broadcast to ``input[key]``) added up at ``key``."""
    target = input.detach()[key].shape  # (checks the key)
    values = values if isinstance(values, Tensor) else Tensor(values, dtype=input.dtype)
    return IndexAdd.apply(stretched(values, target), key=key, shape=input.shape)


def _mask_rows(fn: str, input, mask, source) -> tuple:  # noqa: A002
    """(mask broadcast to input's shape, flat positions of its Trues), after PyTorch's checks."""
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"{fn}: mask must be a bool tensor, got dtype {m.dtype}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{fn}: source must be a Tensor, got {type(source).__name__}")
    try:
        m = np.broadcast_to(m, input.shape)
    except ValueError:
        raise ValueError(f"{fn}: mask of shape {m.shape} cannot be broadcast to input's shape {input.shape}") from None
    rows = np.flatnonzero(m)
    if source.numel() < rows.size:
        raise ValueError(f"{fn}: source has {source.numel()} elements, fewer than the {rows.size} Trues of the mask")
    return m, rows


def masked_scatter(input, mask, source):  # noqa: A002
    """A copy of ``input`` whose places where ``mask`` is True take ``source``'s elements in order."""
    m, rows = _mask_rows("masked_scatter", input, mask, source)
    values = source.reshape(-1)[: rows.size]
    placed = MaskedScatter.apply(values, rows=rows, lead=input.ndim, shape=input.shape)
    return where(m, placed, input)


def masked_scatter_(input, mask, source):  # noqa: A002
    """``masked_scatter`` in place."""
    m, rows = _mask_rows("masked_scatter_", input, mask, source)

    def update(array, src):
        array[m] = src.reshape(-1)[: rows.size]

    return inplace.apply_inplace(input, "masked_scatter_", update, lambda old, s: masked_scatter(old, m, s), source)


def fill_diagonal_(input, fill_value, wrap: bool = False):  # noqa: A002
    """Set the main diagonal to ``fill_value`` in place (NumPy's ``fill_diagonal``: a tall 2-D tensor
    restarts the diagonal below it with ``wrap=True``; more dims must all be equal)."""
    if input.ndim < 2:
        raise ValueError(f"fill_diagonal_: input must have at least 2 dims, got shape {input.shape}")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise ValueError(f"fill_diagonal_: all dims of input must be of equal length, got shape {input.shape}")
    probe = np.zeros(input.shape, dtype=bool)
    np.fill_diagonal(probe, True, wrap=wrap)
    input[np.nonzero(probe)] = fill_value
    return input
