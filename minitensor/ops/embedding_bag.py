"""``EmbeddingBag``: the sum or mean of the rows of a table picked by each bag of indices, as one op.

Its definition is an ``Embedding`` (the picked rows, (K, D)) and an ``IndexAdd`` of those rows into
their bags (then, for the mean, a division by each bag's size): three nodes, and in reverse a gather
of the incoming gradient's rows, a scatter into zeros the size of the table, and the division's
gradient.  As one op::

    forward:   out[b] = sum of weight[i] over the bag's indices i   (/ the bag's size for the mean)
    backward:  dweight[i] += grad[b] (/ the bag's size) for each index i of bag b

each picked row added into its bag (and each bag's gradient into its rows) by one row kernel,
``backend.add_picked_rows``, without the (K, D) array of picked rows.  With ``create_graph=True``
the backward is the same gather and scatter-add as ops (``Embedding``, ``IndexAdd``), so it is
differentiable again.  An empty bag gives zeros (as PyTorch).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .nn_ops import Embedding, on_arrays
from .shape import IndexAdd


def embedding_bag_definition(weight, indices=None, bags=None, n_bags=0, mean=False):
    """The op in Tensor ops: (n_bags, D) sums (means) of ``weight``'s rows ``indices`` (K,) by ``bags`` (K,)."""
    total = IndexAdd.apply(Embedding.apply(weight, indices), key=(bags,), shape=(n_bags, weight.shape[-1]))
    if not mean:
        return total
    counts = np.bincount(bags, minlength=n_bags).astype(weight.dtype)
    return total / Tensor._make(np.maximum(counts, 1)[:, None], False, None)


class EmbeddingBag(Op):
    """Call as ``EmbeddingBag.apply(weight, indices=i, bags=b, n_bags=n, mean=m)``: weight (V, D),
    ``indices`` and ``bags`` int64 (K,) (each picked row and the bag it goes to), ``n_bags`` the
    result's rows, ``mean`` True for the bags' means (False: sums)."""

    @staticmethod
    def forward(ctx, weight, indices=None, bags=None, n_bags=0, mean=False):
        ctx.settings = {"indices": indices, "bags": bags, "n_bags": n_bags, "mean": mean}
        ctx.weight_shape = weight.shape
        out = np.zeros((n_bags, weight.shape[1]), weight.dtype)
        backend.add_picked_rows(out, bags, weight, indices)
        if mean:
            scale = 1 / np.maximum(np.bincount(bags, minlength=n_bags), 1).astype(weight.dtype)
            ctx.scale = scale[:, None]
            out *= ctx.scale
        return out

    @staticmethod
    def backward(ctx, grad):
        s = ctx.settings
        if s["mean"]:
            grad = grad * (ctx.scale if on_arrays(grad) else Tensor._make(ctx.scale, False, None))
        if not on_arrays(grad):  # create_graph: the same adjoint in ops (a gather of the rows, a scatter-add)
            return IndexAdd.apply(Embedding.apply(grad, s["bags"]), key=(s["indices"],), shape=ctx.weight_shape)
        dweight = np.zeros(ctx.weight_shape, grad.dtype)
        backend.add_picked_rows(dweight, s["indices"], grad, s["bags"])
        return dweight

    jvp = linear  # linear in weight: the tangent's bags

    @staticmethod
    def batch(b):
        """vmap over a stack of tables (B, V, D): the examples side by side in the rows, (V, B * D)."""
        w = b.expanded(0)
        size, v, d = w.shape
        out = b.run(w.permute(1, 0, 2).reshape(v, size * d))  # (n_bags, B * D)
        return out.reshape(out.shape[0], size, d).permute(1, 0, 2)
