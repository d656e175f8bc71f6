"""Diagonals: ``diagonal``, ``diag``, ``diag_embed``, ``diagflat``, ``trace``, ``block_diag``, and the index
lists ``tril_indices`` / ``triu_indices``.

Two ops, each the other's gradient: ``Diagonal`` reads a diagonal (``np.diagonal``: a strided
view, copied), ``DiagonalScatter`` writes one into zeros (through a writable strided view of them),
so every order of derivative is exact and neither pass gathers or scatters by index arrays.
``trace`` is one op (``Trace``): its gradient is the incoming one times the identity.
``offset`` (``diagonal`` for ``diag``) > 0 is above the main diagonal, < 0
below.  PyTorch's ``diagonal`` returns a view; minitensor's is a copy (writing into it does not
change the input).

>>> m = mt.arange(9.0).reshape(3, 3)
>>> mt.diagonal(m), mt.diagonal(m, 1), mt.trace(m)
(tensor([0., 4., 8.]), tensor([1., 5.]), tensor(12.))
>>> mt.diag(mt.tensor([1.0, 2.0]))
tensor([[1., 0.],
        [0., 2.]])
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._args import _dim
from ..autograd.batching import decompose, shift
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import int_arg, tensor_input


def _length(rows: int, cols: int, offset: int) -> int:
    """The length of the ``offset`` diagonal of a (rows, cols) matrix."""
    return max(min(rows - max(-offset, 0), cols - max(offset, 0)), 0)


def _written_diagonal(out: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A writable view of the ``offset`` diagonal of the C-contiguous ``out`` in dims ``dim1``, ``dim2``,
    laid out as ``np.diagonal``'s (the other dims in order, then the diagonal)."""
    keep = [d for d in range(out.ndim) if d not in (dim1, dim2)]
    shape = tuple(out.shape[d] for d in keep) + (_length(out.shape[dim1], out.shape[dim2], offset),)
    if 0 in shape:
        return np.empty(shape, out.dtype)  # (nothing to write)
    strides = tuple(out.strides[d] for d in keep) + (out.strides[dim1] + out.strides[dim2],)
    start = max(-offset, 0) * out.strides[dim1] + max(offset, 0) * out.strides[dim2]
    return np.ndarray(shape, out.dtype, buffer=out, offset=start, strides=strides)


class Diagonal(Op):
    """The ``offset`` diagonal of x in dims ``dim1``, ``dim2`` (non-negative, different) as the last dim
    of the result, the other dims in order (a copy).  Its gradient writes the incoming one back onto
    that diagonal of zeros shaped like x (``DiagonalScatter``)."""

    @staticmethod
    def forward(ctx, x, offset=0, dim1=0, dim2=1):
        ctx.shape_in, ctx.diagonal = x.shape, (offset, dim1, dim2)
        return np.diagonal(x, offset, dim1, dim2).copy()

    @staticmethod
    def backward(ctx, grad):
        offset, dim1, dim2 = ctx.diagonal
        return DiagonalScatter.call(grad, shape=ctx.shape_in, offset=offset, dim1=dim1, dim2=dim2)

    jvp = linear  # linear in its input: the tangent's diagonal

    batch = shift("dim1", "dim2")  # vmap: both dims move one up


class DiagonalScatter(Op):
    """Zeros of ``shape`` with ``values`` (laid out as ``Diagonal``'s result) on the ``offset`` diagonal of
    dims ``dim1``, ``dim2``.  Its gradient reads that diagonal of the incoming one (``Diagonal``)."""

    @staticmethod
    def forward(ctx, values, shape=(), offset=0, dim1=0, dim2=1):
        ctx.diagonal = (offset, dim1, dim2)
        out = np.zeros(shape, values.dtype)
        _written_diagonal(out, offset, dim1, dim2)[...] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        offset, dim1, dim2 = ctx.diagonal
        return Diagonal.call(grad, offset=offset, dim1=dim1, dim2=dim2)

    jvp = linear  # linear in its input: the tangent on the diagonal

    @staticmethod
    def batch(b):  # vmap: the batch dim first in the result too, both dims one up
        s = b.settings
        values = b.expanded(0)
        return b.run(values, shape=(values.shape[0], *s["shape"]), offset=s["offset"], dim1=s["dim1"] + 1,
                     dim2=s["dim2"] + 1)  # fmt: skip


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):  # noqa: A002
    """The ``offset`` diagonal of the matrices in dims ``dim1`` and ``dim2``, as the last dim of the result."""
    tensor_input(input, "diagonal")
    if input.ndim < 2:
        raise ValueError(f"diagonal: input must have at least 2 dimensions, got shape {input.shape}")
    offset = int_arg(offset, "diagonal", "offset")
    d1, d2 = _dim(dim1, input.ndim, "dim1"), _dim(dim2, input.ndim, "dim2")
    if d1 == d2:
        raise ValueError(f"diagonal: dim1 and dim2 must be different dims, got {dim1} and {dim2}")
    return Diagonal.apply(input, offset=offset, dim1=d1, dim2=d2)


_diagonal_of = diagonal  # (for ``diag``, whose argument ``diagonal`` hides the function)


def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1):  # noqa: A002
    """Matrices (in dims ``dim1``, ``dim2`` of a result with one more dim) with input's last dim on their
    ``offset`` diagonal, zeros elsewhere."""
    tensor_input(input, "diag_embed")
    if input.ndim == 0:
        raise ValueError("diag_embed: input must have at least 1 dimension, got a 0-d tensor")
    offset = int_arg(offset, "diag_embed", "offset")
    ndim = input.ndim + 1
    d1, d2 = _dim(dim1, ndim, "dim1"), _dim(dim2, ndim, "dim2")
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 and dim2 must be different dims, got {dim1} and {dim2}")
    size = input.shape[-1] + abs(offset)
    shape = [*input.shape[:-1]]  # the result's: the batch dims in order, (size, size) at d1 and d2
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    return DiagonalScatter.apply(input, shape=tuple(shape), offset=offset, dim1=d1, dim2=d2)


def diag(input, diagonal: int = 0):  # noqa: A002
    """A 1-D input: the square matrix with it on the ``diagonal``-th diagonal; a 2-D input: that diagonal."""
    tensor_input(input, "diag")
    diagonal = int_arg(diagonal, "diag", "diagonal")
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return _diagonal_of(input, diagonal)
    raise ValueError(f"diag: input must be a 1-D or 2-D tensor, got shape {input.shape}")


def diagflat(input, offset: int = 0):  # noqa: A002
    """The square matrix with the flattened input on its ``offset`` diagonal."""
    tensor_input(input, "diagflat")
    return diag_embed(input.reshape(-1), int_arg(offset, "diagflat", "offset"))


def trace(input):  # noqa: A002
    """The sum of the main diagonal of a 2-D tensor (integers sum in int64)."""
    tensor_input(input, "trace")
    if input.ndim != 2:
        raise ValueError(f"trace: input must be a 2-D tensor, got shape {input.shape}")
    return Trace.apply(input.to(dtypes.int64) if input.dtype.kind in "biu" else input)


def _trace_definition(x):
    """``Trace`` in Tensor ops: the diagonal, summed (vmap's rule)."""
    return diagonal(x).sum()


class Trace(Op):
    """The sum of the main diagonal of a matrix x (n, m): a 0-d result.  It is linear, and its
    gradient is the incoming (0-d) gradient times the (n, m) identity, written with a product so
    that it is differentiable again (the derivative of that is a trace once more)."""

    @staticmethod
    def forward(ctx, x):
        ctx.matrix = x.shape
        return np.asarray(np.trace(x), dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * np.eye(*ctx.matrix, dtype=grad.dtype)

    jvp = linear  # linear in its input: the tangent's trace

    batch = decompose(_trace_definition)  # vmap: the diagonal and a sum, whose ops have rules


def _indices(fn: str, row: int, col: int, offset: int, dtype, lower: bool) -> Tensor:
    row, col = int_arg(row, fn, "row", low=0), int_arg(col, fn, "col", low=0)
    offset = int_arg(offset, fn, "offset")
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.int64
    if dtype.kind not in "iu":
        raise TypeError(f"{fn}: dtype must be an integer dtype, got {dtype}")
    pick = np.tril_indices if lower else np.triu_indices
    return Tensor._make(np.stack(pick(row, offset, col)).astype(dtype), False, None)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (2, N) coordinates of the lower triangle (on and below the ``offset`` diagonal) of a (row, col)
    matrix, row by row."""
    return _indices("tril_indices", row, col, offset, dtype, True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (2, N) coordinates of the upper triangle (on and above the ``offset`` diagonal), row by row."""
    return _indices("triu_indices", row, col, offset, dtype, False)


class BlockDiag(Op):
    """The block-diagonal matrix of blocks (..., r_i, c_i) of one dtype and the same leading dims:
    zeros (..., sum r_i, sum c_i) with each block written at its place; each block's gradient is its
    slice of the incoming one."""

    @staticmethod
    def forward(ctx, *blocks):
        rows, cols = sum(b.shape[-2] for b in blocks), sum(b.shape[-1] for b in blocks)
        out = np.zeros(blocks[0].shape[:-2] + (rows, cols), blocks[0].dtype)
        ctx.places = []
        r = c = 0
        for b in blocks:
            place = (Ellipsis, slice(r, r + b.shape[-2]), slice(c, c + b.shape[-1]))
            out[place] = b
            ctx.places.append(place)
            r, c = r + b.shape[-2], c + b.shape[-1]
        return out

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad[place] if need else None for place, need in zip(ctx.places, ctx.needs_input_grad))

    jvp = linear  # linear in its inputs: the tangents' block-diagonal matrix

    @staticmethod
    def batch(b):  # vmap: the batch dim is one more leading dim of every block
        return b.run(*[b.expanded(i) for i in range(len(b.values))])


def block_diag(*tensors) -> Tensor:
    """The block-diagonal matrix of the given 0-, 1- or 2-D tensors (a 1-D tensor is a row), in their
    promoted dtype (``BlockDiag``)."""
    blocks = []
    for i, t in enumerate(tensors):
        tensor_input(t, "block_diag", f"tensors[{i}]")
        if t.ndim > 2:
            raise ValueError(f"block_diag: tensors[{i}] must have at most 2 dimensions, got shape {t.shape}")
        blocks.append(t.reshape((1,) * (2 - t.ndim) + t.shape))
    if not blocks:
        return Tensor._make(np.zeros((1, 0), dtypes.get_default_dtype()), False, None)
    dtype = dtypes.result_type(*blocks)
    return BlockDiag.apply(*(b if b.dtype == dtype else b.to(dtype) for b in blocks))
