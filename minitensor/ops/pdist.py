"""``pdist`` with p = 2 as one op: the distances of every pair of rows of x without the pairs'
differences in memory (``kernels/pdist.py``).

The definition, in Tensor ops (``pdist_definition``, what ``F.pdist`` computes for any p)::

    i, j = np.triu_indices(N, k=1)               the pairs i < j, row-major
    y = vector_norm(x[i] - x[j], 2, dim=-1)

Backward: ``dx[i] = sum_j grad[k] / y[k] * (x[i] - x[j])`` over the pairs k that hold row i (with
the sign of its place in the pair), 0 where a distance is 0, as PyTorch's ``pdist``.  With
``create_graph=True``, in forward mode and under vmap, the definition runs instead (PyTorch's own
``pdist`` has no second derivative and no forward-mode rule: minitensor's has both).

>>> Pdist.apply(mt.tensor([[0.0, 0.0], [3.0, 4.0]])).tolist()
[5.0]
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import decompose
from ..autograd.composite import composite_jvp
from ..autograd.function import Op
from .nn_ops import composite, on_arrays
from .norms import vector_norm


def pdist_definition(x, p: float = 2.0):
    """The distances of the pairs of rows i < j of x (N, M) in the p-norm (Tensor ops)."""
    i, j = np.triu_indices(x.shape[0], k=1)
    return vector_norm(x[i] - x[j], p, -1)


class Pdist(Op):
    """y (N (N - 1) / 2,) = the Euclidean distances of the pairs of rows i < j of x (N, M)."""

    @staticmethod
    def forward(ctx, x):
        y = backend.pdist_forward(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        if not on_arrays(grad):  # create_graph: through the definition
            return composite(pdist_definition, (x,), ctx, grad)
        return backend.pdist_backward(grad, x, y)

    @staticmethod
    def jvp(ctx, dx):
        return composite_jvp(pdist_definition, ctx.inputs, (dx,))

    batch = decompose(pdist_definition)  # vmap: the definition, whose ops have rules
