"""Distances and similarities between vectors: ``cosine_similarity``, ``pairwise_distance``, ``pdist``,
``normalize``, as ``torch.nn.functional``'s (and the same formulas, so the same gradients).

- ``cosine_similarity(x1, x2, dim)``: ``sum((x1 / |x1|) * (x2 / |x2|))`` along ``dim``, each norm
  clamped below at ``eps``;
- ``pairwise_distance(x1, x2, p)``: ``|| x1 - x2 + eps ||_p`` along the last dim;
- ``pdist(x, p)``: the p-norm distance of every pair of rows ``i < j`` of ``x`` (N, M), as a vector
  (p = 2: the fused op ``ops/pdist.py``);
- ``normalize(x, p, dim)``: ``x / max(|| x ||_p, eps)`` along ``dim``.

The clamps are PyTorch's: done on the value only (under ``no_grad`` there), so the gradient is the
norm's own, as if unclamped.  Each is a composition of Tensor ops (Euclidean ``pdist`` a fused op with
that composition as its definition), differentiable to any order.

>>> F.cosine_similarity(mt.tensor([[1.0, 0.0]]), mt.tensor([[1.0, 1.0]])).tolist()  # doctest: +ELLIPSIS
[0.707106...]
"""

from __future__ import annotations

import numpy as np

from ...ops.norms import vector_norm
from ...ops.operands import stretched
from ...ops.pdist import Pdist, pdist_definition
from ...ops.products import vecdot
from ...tensor import Tensor
from ._checks import as_input, check_float, check_number, float_like


def _clamped_below(t: Tensor, low: float) -> Tensor:
    """``t`` with its values raised to ``low`` where below it, keeping ``t``'s gradient (PyTorch's
    ``clamp_min_`` under ``no_grad``)."""
    fixed = t.detach()
    return t + (fixed.clamp(min=low) - fixed)


def _pair(x1, x2, fn: str) -> tuple:
    x1 = as_input(x1, "x1", fn, like=float_like(x2))
    x2 = as_input(x2, "x2", fn, like=float_like(x1))
    check_float(x1, fn)
    if x2.dtype != x1.dtype:
        raise TypeError(f"{fn}: x1 and x2 must have the same dtype, got {x1.dtype} and {x2.dtype}")
    try:
        shape = np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise ValueError(f"{fn}: x1 {x1.shape} and x2 {x2.shape} cannot be broadcast together") from None
    return x1, x2, shape


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (they broadcast): the other dims remain."""
    x1, x2, shape = _pair(x1, x2, "cosine_similarity")
    eps = check_number(eps, "eps", "cosine_similarity")
    if isinstance(dim, bool) or not isinstance(dim, int) or not -len(shape) <= dim < max(len(shape), 1):
        raise ValueError(f"cosine_similarity: dim must be an int in [{-len(shape)}, {len(shape) - 1}], got {dim!r}")
    x1, x2 = stretched(x1, shape), stretched(x2, shape)
    n1 = _clamped_below(vector_norm(x1, 2, dim), eps)
    n2 = _clamped_below(vector_norm(x2, 2, dim), eps)
    return vecdot(x1, x2, dim) / (n1 * n2)  # (PyTorch's (x1 / n1) * (x2 / n2), summed: two full-size divisions fewer)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``|| x1 - x2 + eps ||_p`` over the last dim: (N, D) and (N, D) (or (D,)) -> (N,)."""
    x1, x2, shape = _pair(x1, x2, "pairwise_distance")
    p = check_number(p, "p", "pairwise_distance")
    eps = check_number(eps, "eps", "pairwise_distance")
    if not shape:
        raise ValueError("pairwise_distance: x1 and x2 must have at least one dim (the vectors' dim), got 0-d tensors")
    return vector_norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    """The p-norm distances between the rows of ``input`` (N, M), for the pairs i < j in order:
    a vector of N (N - 1) / 2 distances."""
    input = as_input(input, "input", "pdist")  # noqa: A001
    check_float(input, "pdist")
    p = check_number(p, "p", "pdist")
    if input.ndim != 2:
        raise ValueError(f"pdist: input must be 2-D (N, M), got shape {input.shape}")
    if p < 0:
        raise ValueError(f"pdist: p must be non-negative, got {p}")
    if p == 2:  # the Euclidean distances: one op, without the pairs' differences in memory
        return Pdist.apply(input)
    return pdist_definition(input, p)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:  # noqa: A002
    """``input / max(|| input ||_p, eps)`` along ``dim``: unit vectors (``out=`` is not supported)."""
    if out is not None:
        raise TypeError("normalize: out= is not supported by minitensor; use the returned Tensor")
    input = as_input(input, "input", "normalize")  # noqa: A001
    check_float(input, "normalize")
    p, eps = check_number(p, "p", "normalize"), check_number(eps, "eps", "normalize")
    if isinstance(dim, bool) or not isinstance(dim, int) or not -input.ndim <= dim < max(input.ndim, 1):
        raise ValueError(f"normalize: dim must be an int in [{-input.ndim}, {input.ndim - 1}], got {dim!r}")
    return input / vector_norm(input, p, dim, keepdim=True).clamp(min=eps)
