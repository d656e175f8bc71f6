"""Determinants: ``det``, ``slogdet``, ``logdet`` (``torch.linalg``'s and ``torch``'s), differentiable twice.

    d = det A:           gA = g d A^-T  where A is regular; where it is (numerically) singular the
                         transposed adjugate from the SVD, U diag(prod of the other singular values) Vh,
                         times det U det Vh (PyTorch's two formulas, chosen per matrix)
    l = log |det A|:     gA = g A^-T    (undefined at a singular A, as PyTorch's)

The sign of ``slogdet`` is piecewise constant: no gradient.

>>> a = mt.tensor([[2.0, 0.0], [1.0, 4.0]])
>>> mt.linalg.det(a), mt.linalg.slogdet(a)
(tensor(8.), slogdet(sign=tensor(1.), logabsdet=tensor(2.0794)))
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import backend
from ..autograd import batching
from ..autograd.batching import leading
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import matrix_input
from .decompositions import svd
from .matrices import eye, mT, values
from .reduce import Prod
from .solve import Inv

SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])


class Det(Op):
    """d = det A;  gA = g d A^-T where A is regular, and the adjugate ``U diag(prod of the other singular
    values) Vh`` times ``det U det Vh`` where it is (numerically) singular, as PyTorch's."""

    @staticmethod
    def forward(ctx, a):
        d = backend.det(a)
        ctx.save_for_backward(a, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        a, d = ctx.saved_tensors
        n = a.shape[-1]
        singular = np.abs(values(d)) < 100 * np.finfo(values(a).dtype).eps
        if not singular.any():
            return (grad * d)[..., None, None] * mT(Inv.call(a))
        mask = singular[..., None, None]
        regular = backend.where(mask, eye(n, a), a)  # (each formula sees inputs it is defined at)
        from_inverse = (grad * backend.where(singular, 1.0, d))[..., None, None] * mT(Inv.call(regular))
        from_svd = _adjugate_t(backend.where(mask, a, _distinct(n, a)), grad)
        return backend.where(mask, from_svd, from_inverse)

    @staticmethod
    def jvp(ctx, da):
        """d det = tr(adj(A) dA): the backward's gA for g = 1, dotted with dA (so the adjugate from the SVD
        where A is singular; PyTorch's forward AD gives 0 at an exactly singular A, its backward the adjugate)."""
        ones = np.ones(np.shape(ctx.output), values(ctx.output).dtype)
        return np.sum(Det.backward(ctx, ones) * da, axis=(-2, -1))

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


def _distinct(n: int, like) -> np.ndarray:
    """A regular matrix with distinct singular values (where the SVD route is not taken)."""
    return np.diag(np.arange(1.0, n + 1)).astype(values(like).dtype)


def _adjugate_t(a, grad):
    """grad times the transposed adjugate of A from its SVD: U diag(prod_{j != i} s_j) Vh, signed by det U det Vh."""
    u, s, vh = svd(a, full_matrices=False) if isinstance(a, Tensor) else np.linalg.svd(a, full_matrices=False)
    sign = np.linalg.det(values(u)) * np.linalg.det(values(vh))
    others = _products_of_others(s)
    return (u * ((grad * sign)[..., None] * others)[..., None, :]) @ vh


def _products_of_others(s):
    """For each i, the product of the s_j with j != i (along the last dim), exact with zeros."""
    n = s.shape[-1]
    stack = backend.where(np.eye(n, dtype=bool), 1.0, s[..., None, :])
    return Prod.call(stack, axis=(stack.ndim - 1,))


class LogAbsDet(Op):
    """log |det A|;  gA = g A^-T (undefined where A is singular, as PyTorch's).  ``value``: log |det A|
    when the caller has it already (``slogdet`` gets it with the sign, from one LU factorisation)."""

    @staticmethod
    def forward(ctx, a, value=None):
        ctx.save_for_backward(a)
        return backend.slogdet(a)[1] if value is None else np.asarray(value)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad[..., None, None] * mT(Inv.call(a))

    @staticmethod
    def jvp(ctx, da):  # d log|det A| = tr(A^-1 dA)
        return np.sum(mT(Inv.call(ctx.inputs[0])) * da, axis=(-2, -1))

    @staticmethod
    def batch(b):
        """vmap: the op works on the last two dims, any leading ones are a batch (a ``value`` given
        outside vmap is one example's: the batch's is computed)."""
        b.settings.pop("value", None)
        return leading(b)


def det(A):  # noqa: N803
    """The determinant of a (batch of) square matrices."""
    return Det.apply(matrix_input(A, "linalg.det", square=True))


@batching.per_example  # (reads the values: under vmap, once per example)
def slogdet(A):  # noqa: N803
    """``(sign, logabsdet)``: the sign of the determinant (-1, 0 or 1; no gradient) and log |det|."""
    matrix_input(A, "linalg.slogdet", square=True)
    sign, value = backend.slogdet(A._data)
    return SlogdetResult(Tensor._make(sign, False, None), LogAbsDet.apply(A, value=value))


@batching.per_example  # (reads the values: under vmap, once per example)
def logdet(input):  # noqa: A002
    """log det A: NaN where the determinant is negative, -inf where it is 0."""
    sign, logabs = slogdet(input)
    return logabs + Tensor._make(backend.where(sign._data < 0, np.nan, 0.0).astype(input.dtype), False, None)
