"""``cdist``: the ``p``-norm distance of every row of x1 (..., P, M) to every row of x2 (..., R, M).

For any p, the norm of all the differences (``vector_norm(x1[..., :, None, :] - x2[..., None, :, :])``).
For p = 2 with more than 25 rows in either (or ``compute_mode="use_mm_for_euclid_dist"``), PyTorch
switches to a matrix product, ``|a|^2 + |b|^2 - 2 a.b`` clamped at 1e-30 before the square root,
which never makes the (P, R, M) differences and rounds differently; minitensor does the same, with
the op ``EuclideanDistances``: its definition in Tensor ops (``by_products_definition``, PyTorch's
own steps: one product of ``[-2 x1, |x1|^2, 1]`` and ``[x2, 1, |x2|^2]``) runs for create_graph,
forward mode and vmap; otherwise one product and one pass each way (``kernels/cdist.py``).

>>> cdist(mt.tensor([[0.0, 0.0]]), mt.tensor([[3.0, 4.0]])).tolist()
[[5.0]]
"""

from __future__ import annotations

from .. import backend
from ..autograd.batching import decompose
from ..autograd.composite import composite_jvp
from ..autograd.function import Op
from ..tensor.creation import ones_like
from .arguments import choice_arg, float_input, number_arg
from .nn_ops import composite, on_arrays
from .norms import vector_norm
from .operands import matmul
from .products import _same_dtype
from .shape import cat


def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distances between the rows of ``x1`` (..., P, M) and of ``x2`` (..., R, M): (..., P, R)."""
    x1, x2 = float_input(x1, "cdist", "x1"), float_input(x2, "cdist", "x2")
    p = number_arg(p, "cdist", "p")
    if p < 0:
        raise ValueError(f"cdist: p must be non-negative, got {p}")
    choice_arg(compute_mode, "cdist", "compute_mode", ("use_mm_for_euclid_dist_if_necessary",
               "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"))  # fmt: skip
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"cdist: x1 and x2 must be (..., P, M) and (..., R, M) with the same M, got {x1.shape} and "
                         f"{x2.shape}")  # fmt: skip
    _same_dtype("cdist", x1, x2)
    by_products = compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary" and (x1.shape[-2] > 25 or x2.shape[-2] > 25)
    )
    if p == 2 and by_products:
        return EuclideanDistances.apply(x1, x2)
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), float(p), dim=-1)


def by_products_definition(x1, x2):
    """PyTorch's p = 2 by products, in Tensor ops: (..., P, R)."""
    x1_norm = (x1 * x1).sum(-1, keepdim=True)  # (..., P, 1)
    x2_norm = (x2 * x2).sum(-1, keepdim=True)  # (..., R, 1)
    x1_ = cat([x1 * -2, x1_norm, ones_like(x1_norm)], -1)  # (..., P, M + 2)
    x2_ = cat([x2, ones_like(x2_norm), x2_norm], -1)  # (..., R, M + 2)
    return matmul(x1_, x2_.mT).clamp_min(1e-30).sqrt()


class EuclideanDistances(Op):
    """d (..., P, R) = sqrt(max(|x1_i|^2 + |x2_j|^2 - 2 x1_i.x2_j, 1e-30));  with q = grad / d (0 where
    clamped): dx1 = rowsum(q) x1 - q x2,  dx2 = colsum(q) x2 - qᵀ x1."""

    @staticmethod
    def forward(ctx, x1, x2):
        d = backend.cdist_forward(x1, x2)
        ctx.save_for_backward(x1, x2, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        x1, x2, d = ctx.saved_tensors
        if not on_arrays(grad):  # create_graph: through the definition
            return composite(by_products_definition, (x1, x2), ctx, grad)
        return backend.cdist_backward(grad, x1, x2, d, ctx.needs_input_grad)

    @staticmethod
    def jvp(ctx, dx1, dx2):
        return composite_jvp(by_products_definition, ctx.inputs, (dx1, dx2))

    batch = decompose(by_products_definition)  # vmap: the definition, whose ops have rules
