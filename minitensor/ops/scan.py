"""Running reductions along a dim: ``cumprod``, ``cummax``, ``cummin``, ``logcumsumexp``; and ``diff``,
their inverse's cousin (``cumsum`` is ``ops/cumsum.py``).

- ``cumprod``: ``out[i] = x[0] * ... * x[i]``.  Without zeros, ``dx_i = sum_{j>=i} grad_j out_j / x_i``
  (a reversed ``cumsum``); with a zero in the slice the product of the others is taken literally
  (``_cumprod_others``: O(n^2), only where a zero needs it), so the gradient is exact and
  differentiable again (PyTorch's formula is a different route to the same numbers).
- ``cummax``/``cummin``: ``(values, indices)``, the running extremum and the index where it was
  last reached (ties move the index forward, NaN propagates: PyTorch's rule); each value's gradient
  goes to that index (``Gather``: repeated indices add up).
- ``logcumsumexp``: ``log(exp(x[0]) + ... + exp(x[i]))`` by ``np.logaddexp.accumulate`` (no
  overflow, no underflow of early small terms).  Its gradient ``dx_i = sum_{j>=i} grad_j exp(x_i - out_j)``
  is computed as PyTorch's: positive and negative parts of the gradient separately, each a
  reversed ``logcumsumexp`` of ``log|grad| - out`` (every exponent stays <= 0's neighbourhood).
- ``diff(n, dim, prepend, append)``: ``x[1:] - x[:-1]`` along dim, n times (bools: ``!=``).

>>> mt.cumprod(mt.tensor([1.0, 2.0, 3.0, 4.0]), 0)
tensor([ 1.,  2.,  6., 24.])
>>> mt.cummax(mt.tensor([1.0, 3.0, 2.0, 3.0]), 0)
cummax(values=tensor([1., 3., 3., 3.]), indices=tensor([0, 1, 1, 3]))
>>> mt.diff(mt.tensor([1, 4, 9, 16]))
tensor([3, 5, 7])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import backend, dtypes
from .._args import _dim
from ..autograd import batching
from ..autograd.batching import shift
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import int_arg, tensor_input
from .cumsum import Cumsum
from .indexing import Gather
from .reorder import Clone, Flip
from .shape import cat

CummaxResult = namedtuple("cummax", ["values", "indices"])
CumminResult = namedtuple("cummin", ["values", "indices"])


class Cumprod(Op):
    """out[i] = x[0] * ... * x[i] along ``dim``;  dx_i = sum_{j>=i} grad_j * prod_{k<=j, k!=i} x_k."""

    @staticmethod
    def forward(ctx, x, dim=0):
        ctx.dim = dim
        out = backend.cumprod(x, dim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if not np.any(getattr(x, "_data", x) == 0):  # (a constant test on the values)
            return Cumsum.call(grad * out, dim=ctx.dim, reverse=True) / x
        return _cumprod_others(x, grad, ctx.dim)

    @staticmethod
    def jvp(ctx, dx):
        """d out_j = sum_{k<=j} dx_k prod_{i<=j, i!=k} x_i: out_j * cumsum(dx / x)_j without zeros; with a
        zero, row k of an (n, n) stack is x with x_k replaced by dx_k, whose running product at j >= k
        is term k of the sum (taken literally, as in the backward)."""
        x, out, dim = ctx.inputs[0], ctx.output, ctx.dim
        if not np.any(getattr(x, "_data", x) == 0):
            return out * Cumsum.call(dx / x, dim=dim)
        n = x.shape[dim]
        rows = backend.where(
            np.eye(n, dtype=bool), np.moveaxis(dx, dim, -1)[..., :, None], np.moveaxis(x, dim, -1)[..., None, :]
        )
        terms = Cumprod.call(rows, dim=rows.ndim - 1)  # (..., k, j)
        later = np.triu(np.ones((n, n), dtype=bool))  # j >= k
        return np.moveaxis(np.sum(backend.where(later, terms, 0.0), axis=-2), -1, dim)

    batch = shift("dim")  # vmap: the scanned dim moves one up


def _cumprod_others(x, grad, dim: int):
    """sum_{j>=i} grad_j prod_{k<=j, k!=i} x_k for each i: row i of an (n, n) stack is x with x_i
    replaced by 1, its running products are the products without x_i, and j < i is masked out."""
    n = x.shape[dim]
    moved = np.moveaxis(x, dim, -1)[..., None, :]  # (..., 1, n)
    stack = backend.where(np.eye(n, dtype=bool), 1.0, moved)  # (..., n, n): row i without x_i
    without = Cumprod.call(stack, dim=stack.ndim - 1)
    later = np.triu(np.ones((n, n), dtype=bool))  # j >= i
    g = np.moveaxis(grad, dim, -1)[..., None, :]
    return np.moveaxis(np.sum(backend.where(later, without * g, 0.0), axis=-1), -1, dim)


class LogCumSumExp(Op):
    """out[i] = log(exp(x[0]) + ... + exp(x[i])) along ``dim``;  dx_i = sum_{j>=i} grad_j exp(x_i - out_j)."""

    @staticmethod
    def forward(ctx, x, dim=0):
        ctx.dim = dim
        out = backend.logcumsumexp(x, dim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        lowest = np.finfo(grad.dtype).min  # (a finite "log 0": no inf - inf anywhere, at any order)
        log_size = np.log(backend.where(grad != 0, np.abs(grad), 1.0))
        parts = []
        for side in (grad > 0, grad < 0):
            log_part = backend.where(side, log_size, lowest)
            flipped = Flip.call(log_part - out, dims=(ctx.dim,))
            later = Flip.call(LogCumSumExp.call(flipped, dim=ctx.dim), dims=(ctx.dim,))  # over j >= i
            parts.append(np.exp(later + x))
        return parts[0] - parts[1]

    @staticmethod
    def jvp(ctx, dx):
        """d out_j = sum_{i<=j} dx_i exp(x_i - out_j), as the backward: the positive and negative tangents
        apart, each a running ``logcumsumexp`` of ``log|dx| + x`` (no overflow, no 0/0)."""
        x, out = ctx.inputs[0], ctx.output
        lowest = np.finfo(dx.dtype).min  # (a finite "log 0")
        log_size = np.log(backend.where(dx != 0, np.abs(dx), 1.0))
        parts = [
            np.exp(LogCumSumExp.call(backend.where(side, log_size, lowest) + x, dim=ctx.dim) - out)
            for side in (dx > 0, dx < 0)
        ]
        return parts[0] - parts[1]

    batch = shift("dim")  # vmap: the scanned dim moves one up


def _scanned(input, dim, fn: str) -> tuple:  # noqa: A002
    tensor_input(input, fn)
    return _dim(dim, input.ndim)


def cumprod(input, dim: int, *, dtype=None):  # noqa: A002
    """Running products along ``dim``; bool and integer inputs give int64 (as PyTorch)."""
    d = _scanned(input, dim, "cumprod")
    x = input.to(dtype) if dtype is not None else input
    if x.dtype.kind in "biu":
        x = x.to(dtypes.int64)
    if x.ndim == 0:
        return Clone.apply(x)
    return Cumprod.apply(x, dim=d)


def _running(input, dim, largest: bool, fn: str, result):  # noqa: A002
    d = _scanned(input, dim, fn)
    x = input.reshape(1) if input.ndim == 0 else input
    index = backend.running_extremum_index(x._data, d, largest)  # (ties move the index on, as PyTorch)
    values = Gather.apply(x, Tensor._make(index, False, None), dim=d)
    indices = Tensor._make(index.copy(), False, None)  # (the backward keeps its own)
    if input.ndim == 0:
        return result(values.reshape(()), indices.reshape(()))
    return result(values, indices)


@batching.per_example  # (reads the values: under vmap, once per example)
def cummax(input, dim: int):  # noqa: A002
    """``(values, indices)``: the running maximum along ``dim`` and where it was last reached."""
    return _running(input, dim, True, "cummax", CummaxResult)


@batching.per_example  # (reads the values: under vmap, once per example)
def cummin(input, dim: int):  # noqa: A002
    """``(values, indices)``: the running minimum along ``dim`` and where it was last reached."""
    return _running(input, dim, False, "cummin", CumminResult)


def logcumsumexp(input, dim: int):  # noqa: A002
    """log of the running sums of exp along ``dim``, without overflow (integers give the default float dtype)."""
    d = _scanned(input, dim, "logcumsumexp")
    x = input if input.dtype.kind == "f" else input.to(dtypes.get_default_dtype())
    if x.ndim == 0:
        return Clone.apply(x)
    return LogCumSumExp.apply(x, dim=d)


class Diff(Op):
    """The first difference along ``dim``: out[i] = x[i + 1] - x[i] (one element fewer);
    dx[i] = grad[i - 1] - grad[i] (the missing neighbours 0 at either end)."""

    @staticmethod
    def forward(ctx, x, dim=0):
        ctx.dim = dim
        lead = (slice(None),) * dim
        return np.subtract(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])

    @staticmethod
    def backward(ctx, grad):
        d = ctx.dim
        if grad.shape[d] == 0:  # (x had one element along dim: its gradient is 0)
            return grad.sum(d, keepdims=True) if isinstance(grad, np.ndarray) else grad.sum(d, keepdim=True)
        lead = (slice(None),) * d
        first, last = grad[lead + (slice(None, 1),)], grad[lead + (slice(-1, None),)]
        middle = grad[lead + (slice(None, -1),)] - grad[lead + (slice(1, None),)]
        if isinstance(grad, np.ndarray):
            return np.concatenate((-first, middle, last), axis=d)
        return cat([-first, middle, last], dim=d)

    jvp = linear  # linear in x: the tangent's difference

    batch = shift("dim")  # vmap: the differenced dim moves one up


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None):  # noqa: A002
    """The ``n``-th forward difference along ``dim`` (``x[1:] - x[:-1]``, n times), after joining ``prepend``
    and ``append`` (tensors of input's dims, sized like it outside ``dim``) at the ends."""
    tensor_input(input, "diff")
    if input.ndim == 0:
        raise ValueError("diff: input must have at least one dimension, got a 0-d tensor")
    n = int_arg(n, "diff", "n", low=0)
    d = _dim(dim, input.ndim)
    if n == 0:  # (as PyTorch: the input itself, prepend and append ignored)
        return input
    parts = [input]
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        tensor_input(extra, "diff", name)
        if extra.ndim != input.ndim:
            raise ValueError(f"diff: {name} must have as many dims as input ({input.ndim}), got shape {extra.shape}")
        parts.insert(0 if name == "prepend" else len(parts), extra)
    x = cat(parts, dim=d) if len(parts) > 1 else input
    lead = (slice(None),) * d
    for _ in range(min(n, x.shape[d])):
        if x.dtype == dtypes.bool:
            later, earlier = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
            x = Tensor._make(later._data != earlier._data, False, None)
        else:
            x = Diff.apply(x, dim=d)
    return x
