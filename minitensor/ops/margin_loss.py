"""The multi-class hinge losses as one op each: ``MultiMarginLoss`` and ``MultilabelMarginLoss``.

For scores ``x`` (N, C), with ``[z]+ = max(z, 0)`` and PyTorch's gradient at ``z = 0`` (0: its
kernels test ``z > 0``), the loss of row n::

    multi_margin      sum_{c != y_n} w_{y_n} [margin - x_{y_n} + x_c]+^p / C          (y_n a class, p 1 or 2)
    multilabel_margin sum_{j listed} sum_{c not listed} [1 - x_{y_j} + x_c]+ / C      (y_n: classes, -1 ends)

then ``'mean'`` over the rows, ``'sum'`` or ``'none'`` (N,).  Their definitions, ``_multi_plain`` and
``_multilabel_plain``, are a dozen Tensor ops each (a gather, the margins, a mask, a sum); as one op the
forward is a few NumPy passes and the backward one formula: with ``h`` the margins that count
(``[z > 0]``, or ``2 z [z > 0]`` for p = 2, times the class weight, over C)::

    dx_c   = g_n h_c                        for each counted column c
    dx_y   = -g_n sum_c h_c                 at the row's own class (each listed class for multilabel)

With ``create_graph=True`` backward is the gradient of the definition (``composite``), so every
order is right; forward mode is ``jvp_by_backward``; under vmap the examples' rows run as one batch.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor
from .loss import _reduce, _reduce_tensor
from .loss_rules import _reduce_examples, jvp_by_backward
from .nn_ops import composite, on_arrays, save_with_state
from .shape import where


def _row_grads(grad, reduction: str, rows: int) -> np.ndarray:
    """d(output) / d(loss of each row): (N, 1), or one for all rows (0-d) when the loss is reduced."""
    g = np.asarray(grad)
    if reduction == "mean":
        g = g / rows if rows else g * 0
    return g.reshape(-1, 1) if g.ndim else g


def _batched(b):
    """vmap: the examples' rows as one batch of rows (``reduction='none'``), then each example's reduction."""
    x, target = b.expanded(0), b.expanded(1)
    c = x.shape[-1]
    rows = x.reshape(-1, c)
    targets = target.reshape(-1, c) if target.ndim == x.ndim else target.reshape(-1)
    losses = b.run(rows, targets, **{**b.settings, "reduction": "none"})
    return _reduce_examples(losses.reshape(x.shape[:-1]), b.settings["reduction"], b)


# ------------------------------------------------------------------ multi_margin_loss
class MultiMarginLoss(Op):
    """Call as ``MultiMarginLoss.apply(x, target, p=1, margin=1.0, weight=None, reduction="mean")``:
    x (N, C) scores, target (N,) int64 class indices (not differentiable), weight None or a (C,) array
    (a constant: PyTorch gives it no gradient either)."""

    @staticmethod
    def forward(ctx, x, target, p=1, margin=1.0, weight=None, reduction="mean"):
        n, c = x.shape
        rows = np.arange(n)
        z = (x.dtype.type(margin) - x[rows, target][:, None]) + x
        counted = z > 0
        counted[rows, target] = False  # (c != y)
        h = np.where(counted, z, 0) if p == 1 else np.where(counted, z * z, 0)
        scale = 1 / c if weight is None else weight[target][:, None] / c
        save_with_state(ctx, x, state=(z, counted))
        ctx.target, ctx.settings = target, {"p": p, "margin": margin, "weight": weight, "reduction": reduction}
        return _reduce((h.sum(1, keepdims=True) * scale).reshape(n).astype(x.dtype, copy=False), reduction, n)

    @staticmethod
    def backward(ctx, grad):
        x, (z, counted) = ctx.saved_tensors
        target, settings = ctx.target, ctx.settings
        if not on_arrays(grad):
            return composite(lambda x, _: _multi_plain(x, target, **settings), (x, None), ctx, grad)
        n, c = x.shape
        weight = settings["weight"]
        scale = 1 / c if weight is None else weight[target][:, None] / c
        h = counted if settings["p"] == 1 else 2 * np.where(counted, z, 0)
        dx = (h * (scale * _row_grads(grad, settings["reduction"], n))).astype(x.dtype)
        dx[np.arange(n), target] = -dx.sum(1)
        return dx, None

    jvp = jvp_by_backward

    batch = _batched


def _multi_plain(x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    """The definition in Tensor ops (x (N, C), target (N,))."""
    c = x.shape[-1]
    z = margin - x.gather(-1, Tensor(target[:, None])) + x
    z = where(z > 0, z, 0.0)
    z = z * z if p == 2 else z
    if weight is not None:
        z = z * weight[target][:, None]
    others = np.arange(c) != target[:, None]
    return _reduce_tensor(where(others, z, 0.0).sum(-1) / c, reduction, x.shape[0])


# ------------------------------------------------------------------ multilabel_margin_loss
def _listed(target: np.ndarray) -> tuple:
    """For targets (N, C) (each row's classes, ending at the first -1): ``valid`` (N, L) (which of the
    first L positions hold a class; L the longest list), their classes (N, L) (0 where not valid) and
    ``is_target`` (N, C) (the listed classes)."""
    listed = np.cumprod(target >= 0, axis=-1).astype(bool)
    length = int(listed.sum(-1).max()) if listed.size else 0
    valid = listed[:, :length]
    classes = np.where(valid, target[:, :length], 0)
    is_target = np.zeros(target.shape, dtype=bool)
    is_target[np.nonzero(listed)[0], target[listed]] = True
    return valid, classes, is_target


class MultilabelMarginLoss(Op):
    """Call as ``MultilabelMarginLoss.apply(x, target, reduction="mean")``: x (N, C) scores, target
    (N, C) int64 (each row's classes, ending at the first -1; not differentiable)."""

    @staticmethod
    def forward(ctx, x, target, reduction="mean"):
        n, c = x.shape
        valid, classes, is_target = _listed(target)
        rows = np.arange(n)[:, None]
        z = (1 - x[rows, classes])[:, :, None] + x[:, None, :]  # z[n, j, c]
        counted = (z > 0) & valid[:, :, None] & ~is_target[:, None, :]  # (a repeated class counts twice)
        save_with_state(ctx, x, state=(classes, counted))
        ctx.target, ctx.reduction = target, reduction
        return _reduce((np.where(counted, z, 0).sum((1, 2)) / c).astype(x.dtype, copy=False), reduction, n)

    @staticmethod
    def backward(ctx, grad):
        x, (classes, counted) = ctx.saved_tensors
        if not on_arrays(grad):
            target, reduction = ctx.target, ctx.reduction
            return composite(lambda x, _: _multilabel_plain(x, target, reduction), (x, None), ctx, grad)
        n, c = x.shape
        g = (_row_grads(grad, ctx.reduction, n) / c).astype(x.dtype)  # (N, 1)
        dx = counted.sum(1).astype(x.dtype) * g
        np.add.at(dx, (np.arange(n)[:, None], classes), -counted.sum(2).astype(x.dtype) * g)
        return dx, None

    jvp = jvp_by_backward

    batch = _batched


def _multilabel_plain(x, target, reduction="mean"):
    """The definition in Tensor ops (x (N, C), target (N, C))."""
    c = x.shape[-1]
    valid, classes, is_target = _listed(target)
    x_listed = x.gather(-1, Tensor(classes))  # (N, L): each listed score
    z = 1 - x_listed[:, :, None] + x[:, None, :]  # z[n, j, c]
    pairs = valid[:, :, None] & ~is_target[:, None, :]  # listed position j (a repeat counts twice), c not listed
    loss = (where(z > 0, z, 0.0) * pairs).sum((1, 2)) / c
    return _reduce_tensor(loss, reduction, x.shape[0])
