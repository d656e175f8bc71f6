"""``Tensor``'s shape and indexing methods: reshape, permute, expand, ``x[key]``, masked_fill,
and PyTorch's reordering and gather/scatter family.

``Tensor`` gets these methods from ``ShapeMethods`` (a method table, as ``math_methods.py``).  None of them computes
anything: their ops (``minitensor/ops/shape.py``, ``reorder.py``, ``indexing.py``, ...)
move values around, and their backward moves the gradient back.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .._args import _axes, _dim, _positive_int, _shape_arg
from . import indexing, inplace, put, reorder, sort, topk, triangular
from . import shape as S
from .functions import mm
from .operands import _index_key, _watched, bmm


class ShapeMethods:
    """Tensor's methods of this file (a method table, see the module docstring)."""

    # ------------------------------------------------------- shape ops
    def reshape(self, *shape):
        shape = _shape_arg(shape, "reshape")
        try:
            return S.Reshape.apply(self, shape=shape)
        except ValueError:
            raise ValueError(
                f"reshape: cannot reshape a tensor of shape {self.shape} ({self.numel()} elements) into shape {shape}"
            ) from None

    view = reshape

    # flatten, unsqueeze and squeeze compute the new shape themselves (always valid): they are
    # Reshape ops without reshape's argument checks, which cost more than the op at small sizes.
    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _dim(start_dim, self.ndim, "start_dim"), _dim(end_dim, self.ndim, "end_dim")
        if s > e:
            raise ValueError(f"flatten: start_dim ({start_dim}) must not come after end_dim ({end_dim})")
        shape = self.shape
        return S.Reshape.apply(self, shape=shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])

    def unsqueeze(self, dim: int):
        d = _dim(dim, self.ndim + 1)
        return S.Reshape.apply(self, shape=self.shape[:d] + (1,) + self.shape[d:])

    def squeeze(self, dim=None):
        """Drop size-1 dims (only ``dim`` when given; a no-op if its size is not 1)."""
        axes = _axes(dim, self.ndim)
        shape = tuple(s for i, s in enumerate(self.shape) if not (i in axes and s == 1))
        return S.Reshape.apply(self, shape=shape)

    def permute(self, *dims):
        dims = _shape_arg(dims, "permute")
        if sorted(_dim(d, self.ndim) for d in dims) != list(range(self.ndim)):
            raise ValueError(f"permute: dims must be a permutation of 0..{self.ndim - 1}, got {dims}")
        return S.Permute.apply(self, dims=tuple(_dim(d, self.ndim) for d in dims))

    def transpose(self, dim0: int, dim1: int):
        dims = list(range(self.ndim))
        a, b = _dim(dim0, self.ndim, "dim0"), _dim(dim1, self.ndim, "dim1")
        if self.ndim == 0:  # dims 0 and -1 name the one (absent) dim of a 0-d tensor, as in PyTorch
            return S.Permute.apply(self, dims=())
        dims[a], dims[b] = dims[b], dims[a]
        return S.Permute.apply(self, dims=tuple(dims))

    def expand(self, *sizes):
        """Broadcast to ``sizes`` without copying; -1 keeps a dim's size."""
        sizes = _shape_arg(sizes, "expand")
        lead = len(sizes) - self.ndim
        shape = sizes
        if -1 in sizes:
            shape = tuple(s if s != -1 or i < lead else self.shape[i - lead] for i, s in enumerate(sizes))
        if lead < 0 or min(shape, default=0) < 0 or any(n not in (1, m) for n, m in zip(self.shape, shape[lead:])):
            raise ValueError(f"expand: cannot expand a tensor of shape {self.shape} to shape {sizes}")
        return S.Expand.apply(self, shape=shape)

    def contiguous(self):
        """A no-op: NumPy handles strided data everywhere."""
        return self

    def __getitem__(self, key):
        return S.index(self, _index_key(key))

    def chunk(self, chunks: int, dim: int = 0, *, axis: int | None = None) -> list:
        """Split into ``chunks`` nearly equal pieces along ``dim`` (or ``axis``, its alias; as PyTorch)."""
        dim = S.axis_alias(dim, axis, "chunk")
        _positive_int(chunks, "chunk: chunks")
        d = _dim(dim, self.ndim)
        step = max(-(-self.shape[d] // chunks), 1)
        return self.split(step, d)

    def masked_fill(self, mask, value):
        """Where ``mask`` (bool, broadcastable to self) is True, put ``value``."""
        mask_arr = np.asarray(mask)
        if mask_arr.dtype != dtypes.bool:
            raise TypeError(f"masked_fill: mask must be a bool tensor, got dtype {mask_arr.dtype}")
        try:
            if np.broadcast_shapes(mask_arr.shape, self.shape) != self.shape:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"masked_fill: mask of shape {mask_arr.shape} cannot broadcast to the tensor's shape {self.shape}"
            ) from None
        return S.Where.apply(_watched(mask, mask_arr), value, self)

    # ------------------------------------------------------- more of PyTorch's shape and indexing methods
    def tril(self, diagonal: int = 0):
        return triangular.tril(self, diagonal)

    def triu(self, diagonal: int = 0):
        return triangular.triu(self, diagonal)

    def clone(self):
        return reorder.clone(self)

    def t(self):
        return reorder.t(self)

    def flip(self, dims):
        return reorder.flip(self, dims)

    def roll(self, shifts, dims=None):
        return reorder.roll(self, shifts, dims)

    def narrow(self, dim: int, start: int, length: int):
        return reorder.narrow(self, dim, start, length)

    def repeat(self, *sizes):
        return reorder.repeat(self, *sizes)

    def unbind(self, dim: int = 0) -> tuple:
        return reorder.unbind(self, dim)

    def split(self, split_size, dim: int = 0) -> tuple:
        return reorder.split(self, split_size, dim)

    def expand_as(self, other):
        return self.expand(other.shape)

    def view_as(self, other):
        return self.view(other.shape)

    def gather(self, dim: int, index):
        return indexing.gather(self, dim, index)

    def scatter(self, dim: int, index, src=None, *, value=None, reduce=None):
        return indexing.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(self, dim: int, index, src=None, *, value=None, reduce=None):
        return indexing.scatter_(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index, src):
        return indexing.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index, src):
        return indexing.scatter_add_(self, dim, index, src)

    def index_fill(self, dim: int, index, value):
        return indexing.index_fill(self, dim, index, value)

    def index_fill_(self, dim: int, index, value):
        return indexing.index_fill_(self, dim, index, value)

    def index_add(self, dim: int, index, source, *, alpha=1):
        return put.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim: int, index, source, *, alpha=1):
        return put.index_add_(self, dim, index, source, alpha=alpha)

    def index_put(self, indices, values, accumulate: bool = False):
        return put.index_put(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate: bool = False):
        return put.index_put_(self, indices, values, accumulate)

    def masked_scatter(self, mask, source):
        return put.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask, source):
        return put.masked_scatter_(self, mask, source)

    def fill_diagonal_(self, fill_value, wrap: bool = False):
        return put.fill_diagonal_(self, fill_value, wrap)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
        return topk.topk(self, k, dim, largest, sorted)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        return sort.sort(self, dim, descending, stable)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        return sort.argsort(self, dim, descending, stable)

    def msort(self):
        return sort.msort(self)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):  # noqa: A002
        return sort.unique(self, sorted, return_inverse, return_counts, dim)

    # In-place shape changes: the tensor itself becomes the view (inplace.view_).
    def t_(self):
        return inplace.view_(self, "t_", lambda x: x.t())

    def transpose_(self, dim0: int, dim1: int):
        return inplace.view_(self, "transpose_", lambda x: x.transpose(dim0, dim1))

    def unsqueeze_(self, dim: int):
        return inplace.view_(self, "unsqueeze_", lambda x: x.unsqueeze(dim))

    def squeeze_(self, dim=None):
        return inplace.view_(self, "squeeze_", lambda x: x.squeeze(dim))

    def detach_(self):
        """Make this tensor a leaf outside the graph (``detach`` in place; not for views in a graph)."""
        return inplace.view_(self, "detach_", None)

    def bmm(self, mat2):
        return bmm(self, mat2)

    def mm(self, mat2):
        return mm(self, mat2)
