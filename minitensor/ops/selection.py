"""Selecting and copying by index: ``take``, ``take_along_dim``, ``index_select``, ``masked_select``,
``index_copy`` (and ``index_copy_``), ``repeat_interleave``.

Each is indexing with a key the function builds, through ops that know their gradients: ``Index``
(``x[key]``: repeated indices add their gradients up), ``Gather``, ``MaskedSelect`` and ``IndexPut``
(``x[key] = v``); ``repeat_interleave`` with one count for all is ``RepeatInterleave``.  Indices are
int64 (int32 accepted) and may be negative (counted from the end).

>>> x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
>>> mt.take(x, mt.tensor([0, 5])), mt.index_select(x, 1, mt.tensor([2, 0]))
(tensor([1., 6.]), tensor([[3., 1.],
        [6., 4.]]))
>>> mt.repeat_interleave(mt.tensor([1, 2]), 2)
tensor([1, 1, 2, 2])
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .._args import _dim
from ..autograd.batching import shift
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import int_arg, tensor_input
from .indexing import Gather
from .inplace import IndexPut
from .nn_ops import on_arrays
from .operands import stretched
from .shape import Index, index


def _index_array(index, fn: str, size: int, name: str = "index", most_dims: int | None = None) -> np.ndarray:
    """The int64 array of an index tensor, checked: integers, at most ``most_dims`` dims, within ``size``."""
    tensor_input(index, fn, name)
    if index.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} must be an integer (int64) tensor, got dtype {index.dtype}")
    if most_dims is not None and index.ndim > most_dims:
        raise ValueError(f"{fn}: {name} must have at most {most_dims} dimension(s), got shape {index.shape}")
    idx = index._data.astype(np.int64)  # (a copy of its own: the ops keep it for backward)
    if not idx.size:
        return idx
    low, high = backend.index_range(idx)  # (one pass)
    if low < -size or high >= size:
        raise ValueError(f"{fn}: {name} out of range for a dim of size {size}: values {low}..{high}")
    if low < 0:  # negative indices count from the end
        idx[idx < 0] += size
    return idx


def take(input, index):  # noqa: A002
    """``input`` read as 1-D at ``index``; the result has index's shape."""
    tensor_input(input, "take")
    idx = _index_array(index, "take", input.numel())
    return Index.apply(input.reshape(-1), key=idx)


def take_along_dim(input, indices, dim=None):  # noqa: A002
    """Values at ``indices`` along ``dim`` (input and indices broadcast in the other dims); with ``dim=None``
    both are read flattened."""
    tensor_input(input, "take_along_dim")
    tensor_input(indices, "take_along_dim", "indices")
    if dim is None:
        return take(input, indices.reshape(-1))
    d = _dim(dim, input.ndim)
    if indices.ndim != input.ndim:
        raise ValueError(f"take_along_dim: indices must have as many dims as input ({input.ndim}), got shape "
                         f"{indices.shape}")  # fmt: skip
    idx = _index_array(indices, "take_along_dim", input.shape[d], "indices")
    try:
        shape = np.broadcast_shapes(
            input.shape[:d] + (1,) + input.shape[d + 1 :], idx.shape[:d] + (1,) + idx.shape[d + 1 :]
        )
    except ValueError:
        raise ValueError(f"take_along_dim: input {input.shape} and indices {indices.shape} do not broadcast outside "
                         f"dim {d}") from None  # fmt: skip
    x = input.expand(shape[:d] + (input.shape[d],) + shape[d + 1 :])
    idx = np.broadcast_to(idx, shape[:d] + (idx.shape[d],) + shape[d + 1 :])
    return Gather.apply(x, Tensor._make(np.ascontiguousarray(idx), False, None), dim=d)


def index_select(input, dim: int, index):  # noqa: A002
    """The slices of ``input`` at ``index`` (0-D or 1-D) along ``dim``."""
    tensor_input(input, "index_select")
    d = _dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input
    idx = _index_array(index, "index_select", x.shape[d], most_dims=1).reshape(-1)
    out = Index.apply(x, key=(slice(None),) * d + (idx,))
    return out.reshape(()) if input.ndim == 0 and index.ndim == 0 else out


def masked_select(input, mask):  # noqa: A002
    """The elements of ``input`` where ``mask`` (bool; the two broadcast) is True, as a 1-D tensor."""
    tensor_input(input, "masked_select")
    tensor_input(mask, "masked_select", "mask")
    if mask.dtype != np.bool_:
        raise TypeError(f"masked_select: mask must be a bool tensor, got dtype {mask.dtype}")
    try:
        shape = np.broadcast_shapes(input.shape, mask.shape)
    except ValueError:
        raise ValueError(f"masked_select: input {input.shape} and mask {mask.shape} cannot be broadcast") from None
    return index(stretched(input, shape).reshape(-1), np.broadcast_to(mask._data, shape).reshape(-1))


def _copy_key(fn: str, input, dim, index, source) -> tuple:  # noqa: A002
    tensor_input(input, fn)
    tensor_input(source, fn, "source")
    d = _dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    idx = _index_array(index, fn, size, most_dims=1).reshape(-1)
    expected = (input.shape[:d] + (idx.size,) + input.shape[d + 1 :]) if input.ndim else (idx.size,)
    if source.shape != expected and not (input.ndim == 0 and source.numel() == idx.size):
        raise ValueError(f"{fn}: source must have shape {expected} ({idx.size} indices along dim {d} of input "
                         f"{input.shape}), got {source.shape}")  # fmt: skip
    if source.dtype != input.dtype:
        raise TypeError(f"{fn}: source must have input's dtype {input.dtype}, got {source.dtype}")
    return (slice(None),) * d + (idx,)


def index_copy(input, dim: int, index, source):  # noqa: A002
    """A copy of ``input`` whose slices at ``index`` along ``dim`` are ``source``'s (with repeated indices
    one of the copies wins, as PyTorch leaves it unspecified)."""
    key = _copy_key("index_copy", input, dim, index, source)
    if input.ndim == 0:
        return IndexPut.apply(input.reshape(1), source.reshape(-1), key=key).reshape(())
    return IndexPut.apply(input, source, key=key)


def index_copy_(input, dim: int, index, source):  # noqa: A002
    """``index_copy`` in place (recorded in the graph as PyTorch does)."""
    key = _copy_key("index_copy_", input, dim, index, source)
    if input.ndim == 0:
        input[()] = source.reshape(())
        return input
    input[key] = source
    return input


class RepeatInterleave(Op):
    """Each slice of x along ``dim`` repeated ``repeats`` times in place (``np.repeat``); the gradient
    of slice i is the sum of the ``repeats`` slices it became: the strided slices ``k::repeats`` of
    the incoming gradient along ``dim``, added (any layout of the gradient, no reshape)."""

    @staticmethod
    def forward(ctx, x, repeats=1, dim=0):
        ctx.shape_in, ctx.repeats, ctx.dim = x.shape, repeats, dim
        return np.repeat(x, repeats, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        r, d = ctx.repeats, ctx.dim
        if r == 0:  # (nothing was taken from x: zeros, in the graph when grad is a Tensor)
            if on_arrays(grad):
                return np.zeros(ctx.shape_in, grad.dtype)
            return grad.sum(d, keepdim=True).expand(*ctx.shape_in)
        total = None
        for k in range(r):
            part = grad[(slice(None),) * d + (slice(k, None, r),)]
            total = part if total is None else total + part
        return total

    jvp = linear  # linear in its input: the tangent repeated

    batch = shift("dim")  # vmap: the repeated dim moves one up


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002
    """Each element (each slice along ``dim``; of the flattened input when dim is None) repeated ``repeats``
    times (an int, or a 1-D tensor: one count per slice).  ``repeat_interleave(counts)`` alone gives the
    indices ``0`` repeated ``counts[0]`` times, ``1`` repeated ``counts[1]`` times, ..."""
    tensor_input(input, "repeat_interleave")
    if repeats is None:  # torch.repeat_interleave(repeats)
        counts = _counts(input, "repeats", None)
        return Tensor._make(np.repeat(np.arange(len(counts), dtype=np.int64), counts), False, None)
    x = input.reshape(-1) if dim is None else (input.reshape(1) if input.ndim == 0 else input)
    d = 0 if dim is None else _dim(dim, input.ndim)
    size = x.shape[d]
    counts = _counts(repeats, "repeats", size)
    total = int(counts.sum())
    if output_size is not None and int_arg(output_size, "repeat_interleave", "output_size") != total:
        raise ValueError(f"repeat_interleave: output_size is {output_size}, but the repeats add up to {total}")
    if not isinstance(repeats, Tensor):  # one count for all: RepeatInterleave (its backward a sum, not a scatter)
        return RepeatInterleave.apply(x, repeats=total // size if size else 0, dim=d)
    key = np.repeat(np.arange(size, dtype=np.int64), counts)
    return Index.apply(x, key=(slice(None),) * d + (key,))


def _counts(repeats, name: str, size) -> np.ndarray:
    """The repeat count of each of ``size`` slices (an int, or a 0-D / 1-D tensor of one or ``size`` counts)."""
    if isinstance(repeats, Tensor):
        if repeats.dtype.kind not in "iu" or repeats.ndim > 1:
            raise TypeError(f"repeat_interleave: {name} must be an int or a 0-D/1-D integer tensor, got shape "
                            f"{repeats.shape} and dtype {repeats.dtype}")  # fmt: skip
        counts = repeats._data.reshape(-1).astype(np.int64)
        if size is not None and counts.size == 1:
            counts = np.repeat(counts, size)
    else:
        counts = np.full(size, int_arg(repeats, "repeat_interleave", name), dtype=np.int64)
    if size is not None and counts.size != size:
        raise ValueError(f"repeat_interleave: {name} must have one count per slice ({size}), got {counts.size}")
    if counts.size and counts.min() < 0:
        raise ValueError(f"repeat_interleave: {name} must be non-negative, got {counts.min()}")
    return counts
