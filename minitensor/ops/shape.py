"""Shape ops: reshape, permute, expand, indexing, cat, stack, where.

None of these compute anything: their backward moves the gradient back to
where each input element came from.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..kernels import where as where_kernel
from ..kernels.scatter import index_add


class Reshape(Op):
    """Also serves view, flatten, squeeze and unsqueeze."""

    @staticmethod
    def forward(ctx, x, shape=()):
        ctx.shape_in = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape_in)  # (an array's or a Tensor's reshape)


class Permute(Op):
    """Reorder dims (transpose is a permute of two dims)."""

    @staticmethod
    def forward(ctx, x, dims=()):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad):
        return np.transpose(grad, np.argsort(ctx.dims))


class Expand(Op):
    """Broadcast to a larger shape without copying; the engine sums the gradient back."""

    @staticmethod
    def forward(ctx, x, shape=()):
        return np.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return grad


def _may_repeat(key) -> bool:
    """Does an index use integer arrays (which may name a position twice)?  Slices, ints and bool
    masks name each position at most once."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, list) or isinstance(k, np.ndarray) and k.dtype != np.bool_ for k in parts)


class Index(Op):
    """``x[key]``; repeated integer indices accumulate their gradients."""

    @staticmethod
    def forward(ctx, x, key=None):
        ctx.shape_in, ctx.key = x.shape, own_arrays(key) if ctx.needs_input_grad[0] else key
        return np.asarray(x[key])

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.call(grad, key=ctx.key, shape=ctx.shape_in)


def own_arrays(key):
    """``key`` with its index arrays copied: the backward keeps the key, and the caller may change
    the arrays (or the tensors they came from) in place before it runs."""
    if isinstance(key, tuple):
        return tuple(k.copy() if isinstance(k, np.ndarray) else k for k in key)
    return key.copy() if isinstance(key, np.ndarray) else key


class IndexAdd(Op):
    """Zeros of ``shape`` with ``values`` added at ``[key]`` (the backward of ``Index``:
    repeated integer indices add up).  Its own backward is ``grad[key]``."""

    @staticmethod
    def forward(ctx, values, key=None, shape=()):
        ctx.key = key
        out = np.zeros(shape, dtype=values.dtype)
        if _may_repeat(key):
            index_add(out, key, values)  # np.add.at, with a kernel for integer-array keys
        else:
            out[key] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        return Index.call(grad, key=ctx.key)


class MaskedSelect(Op):
    """``x[mask]`` for a bool ``mask`` over x's first ``lead`` dims, given as ``rows``: the flat
    positions of its True entries (``np.flatnonzero``), so the op is a take of rows.  (NumPy's
    boolean indexing branches on every element: ~5x slower on a random mask.)  Its backward puts
    the gradient back at the rows (``MaskedScatter``)."""

    @staticmethod
    def forward(ctx, x, rows=None, lead=1):
        ctx.shape_in, ctx.rows, ctx.lead = x.shape, rows, lead
        return np.take(x.reshape((-1,) + x.shape[lead:]), rows, axis=0)

    @staticmethod
    def backward(ctx, grad):
        return MaskedScatter.call(grad, rows=ctx.rows, lead=ctx.lead, shape=ctx.shape_in)


class MaskedScatter(Op):
    """Zeros of ``shape`` with ``values`` put at ``rows`` of its first ``lead`` dims flattened
    (the backward of ``MaskedSelect``; rows never repeat).  Its own backward is ``MaskedSelect``."""

    @staticmethod
    def forward(ctx, values, rows=None, lead=1, shape=()):
        ctx.rows, ctx.lead = rows, lead
        out = np.zeros(shape, dtype=values.dtype)
        out.reshape((-1,) + shape[lead:])[rows] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        return MaskedSelect.call(grad, rows=ctx.rows, lead=ctx.lead)


def index(x, key):
    """``x[key]`` (key: basic and advanced NumPy indices): a bool mask over x's leading dims is a
    ``MaskedSelect``, any other key an ``Index``."""
    if type(key) is np.ndarray and key.dtype == np.bool_ and 0 < key.ndim and key.shape == x.shape[: key.ndim]:
        return MaskedSelect.apply(x, rows=np.flatnonzero(key), lead=key.ndim)
    return Index.apply(x, key=key)


class Cat(Op):
    """Concatenate inputs along ``dim``."""

    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.splits = np.cumsum([x.shape[dim] for x in xs])[:-1]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return tuple(np.split(grad, ctx.splits, axis=ctx.dim))


class Stack(Op):
    """Stack equally shaped inputs along a new ``dim``."""

    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        return np.stack(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        lead = (slice(None),) * ctx.dim
        return tuple(grad[lead + (i,)] for i in range(grad.shape[ctx.dim]))


class Where(Op):
    """``where(cond, a, b)``: a where cond is True, else b; cond gets no gradient.

    ``da = where(cond, grad, 0)``, ``db = where(cond, 0, grad)``; on arrays of one shape both are
    one kernel pass (``kernels/where.py``, also the forward's), NumPy's ``where`` otherwise."""

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        return where_kernel.where(cond, a, b)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        need = ctx.needs_input_grad[1:]
        if type(grad) is np.ndarray:
            return None, *where_kernel.where_backward(cond, grad, need)
        zero = np.zeros((), dtype=grad.dtype)
        ga = np.where(cond, grad, zero) if need[0] else None
        gb = np.where(cond, zero, grad) if need[1] else None
        return None, ga, gb
