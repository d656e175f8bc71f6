"""The ops of pooling: max pooling as a selection, average pooling as a linear map.

Max pooling (``MaxPool``) finds the max of every window and where it is in one kernel
call (``backend.max_pool``: the values, and the flat index ``h * W + w`` of each in its
plane, PyTorch's ``return_indices``; the first maximum of the window in row-major order,
as PyTorch, and a NaN wins).  As a function of x with the choice held fixed it is a
gather at those indices (``TakeFlat``), which is linear in x: its gradient sends each
output's gradient back to the position it was read from, adding where windows overlap
and chose the same position (``AddFlat``, a scatter-add); the gradient of a scatter-add
is the gather again.  So the backward of max pooling is an op whose backward is an op,
and every order of derivative is exact, for the pooling and for its ties: the gradient
goes to the element the forward chose.  ``PutFlat`` writes values at flat indices (max
unpooling); its gradient is the gather.

Average pooling is linear too: ``AvgPool`` sums each window and divides by its divisor
(``backend.window_mean``); its backward is the transposed map ``AvgPoolTranspose``
(each output's gradient divided and spread over its window), whose backward is
``AvgPool`` again.

All of them but ``MaxPool`` are linear in their float input, so their forward-mode rule is
the op itself applied to the tangent (``jvp = linear``); the tangent of max pooling is the
tangent read at the chosen positions (``TakeFlat``).  Under ``vmap`` the batch dim is one more leading dim (``max_pool``
unwraps a batched input itself: its argmax reads the values).

The ops work on the trailing ``dims`` (1 or 2) dims of their input, whatever dims
come before (batch, channels), seen as planes (``pool_geometry.as_planes``).

>>> x = mt.tensor([[[1.0, 5.0, 2.0, 2.0]]], requires_grad=True)        # (N, C, L)
>>> rows, (cols,) = IDENTITY, [sliding(4, 2, kernel_size=2, stride=2, padding=0, dilation=1)]
>>> y, index = max_pool(x, 1, rows, cols, return_indices=True)
>>> y, index
(tensor([[[5., 2.]]], grad_fn=<MaxPoolBackward>), tensor([[[1, 2]]]))
>>> y.backward(mt.tensor([[[10.0, 20.0]]]))
>>> x.grad
tensor([[[ 0., 10., 20.,  0.]]])
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd import dual
from ..autograd.batching import Batch, batched, leading, like, physical
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .pool_geometry import IDENTITY, Windows, as_planes, from_planes, sliding  # noqa: F401  (the docstring's)


def _flat(a, dims: int):
    """a (..., *spatial) as (P, prod(spatial)): its ``dims`` trailing dims flattened (array or Tensor)."""
    lead = a.shape[: a.ndim - dims]
    return a.reshape(math.prod(lead), math.prod(a.shape[a.ndim - dims :]))


class TakeFlat(Op):
    """y = x at ``index``: flat indices into x's ``dims`` trailing dims (index: x's leading dims,
    then any ``dims`` dims);  dx = AddFlat(dy) (the gradient added back where it was read)."""

    @staticmethod
    def forward(ctx, x, index=None, dims=2):
        ctx.index, ctx.dims, ctx.shape_in = index, dims, x.shape
        return backend.gather(_flat(x, dims), _flat(index, dims), 1).reshape(index.shape)

    @staticmethod
    def backward(ctx, grad):
        return AddFlat.call(grad, index=ctx.index, dims=ctx.dims, shape=ctx.shape_in)

    jvp = linear  # linear in x: the tangent read at the same indices

    @staticmethod
    def batch(b: Batch):
        return _with_batched_index(b)


class AddFlat(Op):
    """Zeros of ``shape`` with ``values`` added at the flat ``index`` (repeats add up);
    dvalues = TakeFlat(dy)."""

    @staticmethod
    def forward(ctx, values, index=None, dims=2, shape=()):
        ctx.index, ctx.dims = index, dims
        out = np.zeros(shape, values.dtype)
        backend.scatter_add(_flat(out, dims), _flat(index, dims), _flat(np.ascontiguousarray(values), dims), 1)
        return out

    @staticmethod
    def backward(ctx, grad):
        return TakeFlat.call(grad, index=ctx.index, dims=ctx.dims)

    jvp = linear  # linear in values

    @staticmethod
    def batch(b: Batch):
        return _with_batched_index(b)


class PutFlat(Op):
    """Zeros of ``shape`` with ``values`` written at the flat ``index`` (of a repeated index, the
    last value written stays; PyTorch leaves it unspecified);  dvalues = TakeFlat(dy)."""

    @staticmethod
    def forward(ctx, values, index=None, dims=2, shape=()):
        ctx.index, ctx.dims = index, dims
        out = np.zeros(shape, values.dtype)
        backend.scatter(_flat(out, dims), _flat(index, dims), _flat(np.ascontiguousarray(values), dims), 1)
        return out

    @staticmethod
    def backward(ctx, grad):
        return TakeFlat.call(grad, index=ctx.index, dims=ctx.dims)

    jvp = linear  # linear in values

    @staticmethod
    def batch(b: Batch):
        return _with_batched_index(b)


def _with_batched_index(b: Batch):
    """vmap rule of the flat-index ops: the (unbatched) ``index`` repeated for every example, the
    output's ``shape`` (if a setting) one dim longer."""
    index = b.settings["index"]
    b.settings["index"] = np.broadcast_to(index, (b.size, *index.shape))
    if "shape" in b.settings:
        b.settings["shape"] = (b.size, *b.settings["shape"])
    return b.run(*b.values)


class MaxPool(Op):
    """y = the max of each window of x's ``dims`` trailing dims (``rows``, ``cols``: the windows),
    found by the kernel with its flat index (``ctx.index``, x's leading dims then y's);
    dx = AddFlat(dy) at those indices (the gradient added where the max was read).

    A dilated window over the padding can step over the input and hold no tap of it
    (``backend.empty_windows``): its max is -inf and its index PyTorch's (which may lie outside the
    plane), a constant, so it sends no gradient and has no tangent (``ctx.taps``: False there, and
    ``ctx.read`` the index backward reads: 0 there; PyTorch adds the gradient at its index)."""

    @staticmethod
    def forward(ctx, x, rows=None, cols=None, dims=2):
        lead = x.shape[: x.ndim - dims]
        value, index = backend.max_pool(as_planes(x, dims), rows, cols)
        ctx.index, ctx.dims, ctx.shape_in = from_planes(index, lead, dims), dims, x.shape
        empty = backend.empty_windows(rows, cols)  # (Ho, Wo), or None: every window has taps
        ctx.taps = None if empty is None else ~empty.reshape(empty.shape[2 - dims :])
        ctx.read = ctx.index if empty is None else np.where(ctx.taps, ctx.index, 0)
        return from_planes(value, lead, dims)

    @staticmethod
    def backward(ctx, grad):
        grad = grad if ctx.taps is None else np.where(ctx.taps, grad, 0)
        return AddFlat.call(grad, index=ctx.read, dims=ctx.dims, shape=ctx.shape_in)

    @staticmethod
    def jvp(ctx, x_dot):  # the choice held fixed, y is x read at the indices: so is its tangent
        y_dot = TakeFlat.call(x_dot, index=ctx.read, dims=ctx.dims)
        return y_dot if ctx.taps is None else np.where(ctx.taps, y_dot, 0)


def max_pool(input: Tensor, dims: int, rows: Windows, cols: Windows, return_indices: bool = False):  # noqa: A002
    """The max of each window of ``input``'s ``dims`` trailing dims (1-D: ``rows`` is ``IDENTITY``):
    ``(values, indices)`` with ``return_indices``, else the values."""
    if batched((input,)):  # vmap: all the examples at once, the batch dim one more leading dim
        out = max_pool(physical(input), dims, rows, cols, return_indices)
        return tuple(like(input, o) for o in out) if return_indices else like(input, out)
    settings = {"rows": rows, "cols": cols, "dims": dims}
    # (apply's work, which also hands back the ctx: the indices are found with the values)
    out, ctx = dual.record(MaxPool, (input,), settings) if dual.levels else MaxPool.record((input,), settings)
    return (out, Tensor._make(ctx.index.copy(), False, None)) if return_indices else out


class AvgPool(Op):
    """y = the sum of each window / its divisor (``rows``, ``cols``: the windows' ``(start, count)``,
    ``divisor``: (Ho, Wo));  dx = AvgPoolTranspose(dy)."""

    @staticmethod
    def forward(ctx, x, rows=None, cols=None, divisor=None, dims=2):
        ctx.rows, ctx.cols, ctx.divisor, ctx.dims, ctx.shape_in = rows, cols, divisor, dims, x.shape
        out = backend.window_mean(as_planes(x, dims), rows, cols, divisor)
        return from_planes(out, x.shape[: x.ndim - dims], dims)

    @staticmethod
    def backward(ctx, grad):
        return AvgPoolTranspose.call(
            grad, rows=ctx.rows, cols=ctx.cols, divisor=ctx.divisor, dims=ctx.dims, shape=ctx.shape_in
        )

    jvp = linear  # linear in x
    batch = leading  # vmap: works on the trailing dims, the batch dim is one more leading dim


class AvgPoolTranspose(Op):
    """The transpose of ``AvgPool`` (its backward): each of ``g``'s values divided by its window's
    divisor and added to the window's positions in zeros of ``shape``;  dg = AvgPool(dy)."""

    @staticmethod
    def forward(ctx, g, rows=None, cols=None, divisor=None, dims=2, shape=()):
        ctx.rows, ctx.cols, ctx.divisor, ctx.dims = rows, cols, divisor, dims
        planes = as_planes(g, dims)  # (P, Ho, Wo)
        size = ((1,) if dims == 1 else ()) + tuple(shape[len(shape) - dims :])
        return backend.window_mean_transpose(planes, rows, cols, divisor, size, shape)

    @staticmethod
    def backward(ctx, grad):
        return AvgPool.call(grad, rows=ctx.rows, cols=ctx.cols, divisor=ctx.divisor, dims=ctx.dims)

    jvp = linear  # linear in g

    @staticmethod
    def batch(b: Batch):  # vmap: one more leading dim, in the output's shape too
        b.settings["shape"] = (b.size, *b.settings["shape"])
        return b.run(*b.values)
