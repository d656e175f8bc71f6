"""Reductions: sum, mean, var, std, amax/amin, max/min along a dim, logsumexp.

``axis`` is a normalised tuple of non-negative dims (``None`` never reaches
these ops; the Tensor methods turn it into all dims).  The backward of a
reduction first puts the reduced dims back (``_unsqueeze``) so the gradient
broadcasts against the input.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import shift
from ..autograd.dual import linear
from ..autograd.function import Op


def _unsqueeze(grad: np.ndarray, axis: tuple, keepdim: bool) -> np.ndarray:
    """Re-insert the reduced dims (as size 1) unless they were kept (``np.expand_dims``, by a reshape
    that costs a third of it)."""
    if keepdim:
        return grad
    shape = list(grad.shape)
    for d in sorted(axis):
        shape.insert(d, 1)
    return grad.reshape(shape)


def _count(shape: tuple, axis: tuple) -> int:
    n = 1
    for d in axis:
        n *= shape[d]
    return n


def _mean(x: np.ndarray, axis: tuple, keepdims: bool) -> np.ndarray:
    """``np.mean``, but the mean of no elements is NaN without NumPy's "Mean of empty slice" warning
    (PyTorch is silent: NaN is the answer)."""
    if x.size or _count(x.shape, axis):
        return backend.reduce_mean(x, axis, keepdims)
    return np.full(np.sum(x, axis=axis, keepdims=keepdims).shape, np.nan, x.dtype)


class Sum(Op):
    @staticmethod
    def forward(ctx, x, axis=(), keepdim=False):
        ctx.shape_in, ctx.axis, ctx.keepdim = x.shape, axis, keepdim
        return backend.reduce_sum(x, axis, keepdim)

    @staticmethod
    def backward(ctx, grad):
        return backend.expand(_unsqueeze(grad, ctx.axis, ctx.keepdim), ctx.shape_in)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = shift("axis")  # vmap: the reduced dims move one up


class Mean(Op):
    @staticmethod
    def forward(ctx, x, axis=(), keepdim=False):
        ctx.shape_in, ctx.axis, ctx.keepdim = x.shape, axis, keepdim
        return _mean(x, axis, keepdim)

    @staticmethod
    def backward(ctx, grad):
        n = _count(ctx.shape_in, ctx.axis)
        if n == 0:  # the mean of nothing (NaN) depends on no element
            return np.zeros(ctx.shape_in, grad.dtype)
        return backend.expand(_unsqueeze(grad, ctx.axis, ctx.keepdim) / n, ctx.shape_in)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = shift("axis")  # vmap: the reduced dims move one up


class Prod(Op):
    """The product over one dim (``axis`` a 1-tuple);  dx_i = grad * (the product of the other elements).

    Without zeros that is ``out / x``.  A slice with a zero takes the product of the others
    literally (``_others``), so the gradient there is exact and stays differentiable.
    """

    @staticmethod
    def forward(ctx, x, axis=(0,), keepdim=False):
        ctx.axis, ctx.keepdim = axis, keepdim
        out = backend.reduce_product(x, axis[0], keepdim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        return _unsqueeze(grad, ctx.axis, ctx.keepdim) * _product_slopes(ctx, x, out)

    @staticmethod
    def jvp(ctx, dx):
        slopes = _product_slopes(ctx, ctx.inputs[0], ctx.output)
        return np.sum(dx * slopes, axis=ctx.axis, keepdims=ctx.keepdim)

    batch = shift("axis")  # vmap: the reduced dims move one up


def _product_slopes(ctx, x, out):
    """d out / d x_i: the product of the other elements of x_i's slice."""
    if not np.any(getattr(x, "_data", x) == 0):  # (a Tensor's values with create_graph: a constant test)
        return _unsqueeze(out, ctx.axis, ctx.keepdim) / x
    return _others(x, ctx.axis[0])


def _others(x, dim: int):
    """For each element along ``dim``, the product of the others: row i of an (n, n) stack has
    element i replaced by 1, and each row is multiplied out (O(n^2), only where a zero needs it)."""
    n = x.shape[dim]
    moved = np.moveaxis(x, dim, -1)[..., None, :]  # (..., 1, n)
    stack = backend.where(np.eye(n, dtype=bool), 1.0, moved)  # (..., n, n)
    return np.moveaxis(Prod.call(stack, axis=(stack.ndim - 1,)), -1, dim)


class Var(Op):
    """Variance with ``correction`` (1 = unbiased, as PyTorch's default);  dx = grad * 2 (x - mean) / dof.

    With no degrees of freedom left (n <= correction: one element unbiased, or
    none) the variance and its gradient are NaN, as in NumPy and PyTorch.
    """

    @staticmethod
    def forward(ctx, x, axis=(), keepdim=False, correction=1):
        centred = x - _mean(x, axis, keepdims=True)
        ctx.save_for_backward(x)
        ctx.axis, ctx.keepdim = axis, keepdim
        ctx.dof = max(_count(x.shape, axis) - correction, 0)
        return np.sum(centred * centred, axis=axis, keepdims=keepdim) / ctx.dof

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.dof == 0:
            return np.full(x.shape, np.nan, grad.dtype)
        centred = x - _mean(x, ctx.axis, keepdims=True)
        return _unsqueeze(grad, ctx.axis, ctx.keepdim) * (2 / ctx.dof) * centred

    @staticmethod
    def jvp(ctx, dx):
        x = ctx.inputs[0]
        if ctx.dof == 0:
            return np.full(ctx.output.shape, np.nan, dx.dtype)
        centred = x - _mean(x, ctx.axis, keepdims=True)
        return np.sum(centred * dx, axis=ctx.axis, keepdims=ctx.keepdim) * (2 / ctx.dof)

    batch = shift("axis")  # vmap: the reduced dims move one up


class Std(Op):
    """sqrt(var);  dx = grad * (x - mean) / std / dof, and 0 where the spread is 0 (as PyTorch), not NaN.

    The sum of squares is taken of ``(x - mean) / m`` with ``m`` the largest
    ``|x - mean|`` of the row: ``[3e19, -3e19]`` does not overflow float32 and
    ``[1e-30, -1e-30]`` does not underflow to a zero spread.
    """

    @staticmethod
    def forward(ctx, x, axis=(), keepdim=False, correction=1):
        centred = x - _mean(x, axis, keepdims=True)
        ctx.dof = max(_count(x.shape, axis) - correction, 0)  # 0: NaN, as in Var
        m = np.max(np.abs(centred), axis=axis, keepdims=True, initial=0)
        m = backend.where(m > 0, m, 1).astype(x.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            std = m * np.sqrt(np.sum(np.square(centred / m), axis=axis, keepdims=True) / ctx.dof)
        out = std if keepdim else np.squeeze(std, axis=axis)
        ctx.save_for_backward(x, out)
        ctx.axis, ctx.keepdim = axis, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, std = ctx.saved_tensors
        std = _unsqueeze(std, ctx.axis, ctx.keepdim)
        std = backend.where(std == 0, np.inf, std)  # centred is 0 there too: 0 / inf = 0
        centred = x - _mean(x, ctx.axis, keepdims=True)
        return _unsqueeze(grad, ctx.axis, ctx.keepdim) * (centred / std / ctx.dof)

    @staticmethod
    def jvp(ctx, dx):
        x, std = ctx.inputs[0], ctx.output
        std = backend.where(std == 0, np.inf, std)
        centred = x - _mean(x, ctx.axis, keepdims=True)
        return np.sum(centred * dx, axis=ctx.axis, keepdims=ctx.keepdim) / std / ctx.dof

    batch = shift("axis")  # vmap: the reduced dims move one up


class _Extremum(Op):
    """amax/amin: ties share the gradient evenly, as PyTorch's amax does; NaN when the reduced
    elements hold a NaN, and then a NaN gradient (no element equals NaN: g / 0 * 0).

    Over one float dim the forward and the first-order backward run on the rows of
    ``backend.amax``/``amin`` (a SIMD max/min; the backward counts the ties and writes the
    shares in two passes); over several dims it is NumPy.
    """

    reduce = None  # np.max or np.min
    reduce_along = None  # the backend's amax or amin (along one dim)

    @classmethod
    def forward(cls, ctx, x, axis=(), keepdim=False):
        ctx.axis, ctx.keepdim = axis, keepdim
        if len(axis) == 1 and x.dtype.kind == "f":
            out = cls.reduce_along(x, axis[0])
            out = np.expand_dims(out, axis) if keepdim else out
        else:
            out = cls.reduce(x, axis=axis, keepdims=keepdim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if len(ctx.axis) == 1 and isinstance(grad, np.ndarray) and x.dtype.kind == "f":  # first order
            return backend.extremum_backward(x, out, grad, ctx.axis[0])
        return _unsqueeze(grad, ctx.axis, ctx.keepdim) * _shares(ctx, x, out).astype(grad.dtype, copy=False)

    @staticmethod
    def jvp(ctx, dx):
        shares = _shares(ctx, ctx.inputs[0], ctx.output).astype(dx.dtype, copy=False)
        return np.sum(dx * shares, axis=ctx.axis, keepdims=ctx.keepdim)

    batch = shift("axis")  # vmap: the reduced dims move one up


def _shares(ctx, x, out) -> np.ndarray:
    """Each element's share of the extremum of its slice: 1/ties for the winners, 0 elsewhere."""
    x, out = getattr(x, "_data", x), getattr(out, "_data", out)  # (the mask is a constant)
    winners = x == _unsqueeze(out, ctx.axis, ctx.keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):
        return winners / np.sum(winners, axis=ctx.axis, keepdims=True)


class Amax(_Extremum):
    reduce = staticmethod(np.max)
    reduce_along = staticmethod(backend.amax)


class Amin(_Extremum):
    reduce = staticmethod(np.min)
    reduce_along = staticmethod(backend.amin)


class TakeAlongDim(Op):
    """Values at ``index`` along ``dim`` (index from argmax/argmin: one winner per row).

    Used by ``max(dim)``/``min(dim)`` and by ``max()``/``min()``: on ties the
    single chosen index gets the whole gradient.
    """

    @staticmethod
    def forward(ctx, x, index=None, dim=0, keepdim=False):
        ctx.shape_in, ctx.index, ctx.dim, ctx.keepdim = x.shape, index, dim, keepdim
        out = backend.gather(x, index, dim)
        return out if keepdim else np.squeeze(out, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        g = _unsqueeze(grad, (ctx.dim,), ctx.keepdim)
        return PutAlongDim.call(g, index=ctx.index, dim=ctx.dim, shape=ctx.shape_in)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        index, dim, keepdim = b.settings["index"], b.settings["dim"], b.settings["keepdim"]
        x = b.values[0]
        index = np.broadcast_to(index, (b.size, *np.shape(index)))  # (the same index for every example)
        return b.run(x, index=index, dim=dim % b.ndims[0] + 1, keepdim=keepdim)


class PutAlongDim(Op):
    """Zeros of ``shape`` with ``values`` put at ``index`` along ``dim`` (the backward of
    ``TakeAlongDim``; each position of the other dims gets distinct indices)."""

    @staticmethod
    def forward(ctx, values, index=None, dim=0, shape=()):
        ctx.index, ctx.dim = index, dim
        out = np.zeros(shape, dtype=values.dtype)
        backend.scatter(out, index, values, dim)
        return out

    @staticmethod
    def backward(ctx, grad):
        return TakeAlongDim.call(grad, index=ctx.index, dim=ctx.dim, keepdim=True)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        index, dim = b.settings["index"], b.settings["dim"]
        index = np.broadcast_to(index, (b.size, *np.shape(index)))
        return b.run(b.values[0], index=index, dim=dim % b.ndims[0] + 1, shape=(b.size, *b.settings["shape"]))


class LogSumExp(Op):
    """log(sum(exp(x))) computed stably by shifting with the max; -inf over no elements (log 0), as PyTorch.

    ``d logsumexp / dx = softmax(x)``: over one float dim the softmax kernel
    (``backend.logsumexp``) gives both in one pass and the softmax is kept for
    the first-order backward; over several dims it is NumPy.
    """

    @staticmethod
    def forward(ctx, x, axis=(), keepdim=False):
        ctx.axis, ctx.keepdim = axis, keepdim
        if len(axis) == 1 and x.dtype.kind == "f" and x.size:
            lse, p = backend.logsumexp(x, axis[0])
            out = np.expand_dims(lse, axis) if keepdim else lse
        else:
            p = None
            m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
            m = backend.where(np.isfinite(m), m, 0)
            with np.errstate(divide="ignore"):  # log(0) = -inf: all -inf, or no elements
                lse = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
            out = lse if keepdim else np.squeeze(lse, axis=axis)
        ctx.save_for_backward(x, out, (p,))  # (p: the kernel's state, never a Tensor)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out, (p,) = ctx.saved_tensors
        if p is not None and isinstance(grad, (np.ndarray, np.generic)):  # first order
            return backend.logsumexp_backward(p, grad, ctx.axis[0], x)
        g = _unsqueeze(grad, ctx.axis, ctx.keepdim)
        return g * np.exp(x - _unsqueeze(out, ctx.axis, ctx.keepdim))

    @staticmethod
    def jvp(ctx, dx):
        softmax = np.exp(ctx.inputs[0] - _unsqueeze(ctx.output, ctx.axis, ctx.keepdim))
        return np.sum(dx * softmax, axis=ctx.axis, keepdims=ctx.keepdim)

    batch = shift("axis")  # vmap: the reduced dims move one up
