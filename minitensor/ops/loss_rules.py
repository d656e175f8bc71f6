"""The rules the losses share: forward mode by their backward (``jvp_by_backward``), and vmap by
running every example's losses at once, then each example's reduction (``batched_loss`` for
elementwise losses, ``batched_row_loss`` for the class-index ones: cross-entropy, NLL)."""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import Batch, elementwise
from ..tensor import Tensor
from .nn_ops import Embedding


def jvp_by_backward(ctx, *tangents):
    """The JVP rule of a loss (a scalar, or one value per row or element): each input's gradient
    for a unit output (its backward, given ones), times the input's tangent, summed down to the
    output's shape: everything for a scalar loss, the class axis for per-row losses
    (``reduction='none'``), nothing for per-element ones.  On arrays or on Tensors, as backward."""
    out = ctx.output
    ones = np.ones(out.shape, out.dtype)
    grads = ctx.function.backward(ctx, ones if isinstance(out, np.ndarray) else Tensor._make(ones, False, None))
    grads = grads if isinstance(grads, tuple) else (grads,)
    total = None
    for i, (g, t) in enumerate(zip(grads, tangents)):
        if t is None:
            continue
        if g is None:
            raise RuntimeError(f"{ctx.function.__name__}: forward mode through its input {i} is not supported")
        term = g * t
        if out.ndim == 0:
            term = term.sum()
        elif term.shape != out.shape:
            term = term.sum(1 if term.ndim > 1 else 0)  # (per-row losses: the classes' axis)
        total = term if total is None else total + term
    return total


def batched_loss(b: Batch):
    """The vmap rule of an elementwise loss (``reduction=`` among its settings): the losses of every
    element of every example at once, then each example's own reduction."""
    reduction = b.settings["reduction"]
    b.settings["reduction"] = "none"
    losses = elementwise(b)
    return _reduce_examples(losses, reduction, b)


def batched_row_loss(b: Batch):
    """The vmap rule of a class-index loss (cross-entropy, NLL): the examples' rows merged into one
    batch of rows (``reduction='none'``), then each example's own reduction (a weighted mean divides
    by the summed class weights of its counted targets, as the op does)."""
    x, target, reduction = b.expanded(0), b.expanded(1), b.settings["reduction"]
    merged = [b.expanded(i) for i in (0, *range(2, len(b.values)))]  # (x, and a tangent of x: CrossEntropyTangent)
    rows = [a.reshape(b.size * a.shape[1], *a.shape[2:]) for a in merged] if b.ndims[0] > 1 else merged
    targets = target.reshape(-1, *target.shape[2:]) if b.ndims[0] > 1 else target
    losses = b.run(rows[0], targets, *rows[1:], **{**b.settings, "reduction": "none"})
    losses = losses.reshape(b.size, x.shape[1], *losses.shape[1:]) if b.ndims[0] > 1 else losses
    if reduction != "mean":
        return _reduce_examples(losses, reduction, b)
    return _reduce_examples(losses, "sum", b) / _counted_weights(targets, b, x.dtype)


def _counted_weights(targets, b: Batch, dtype) -> Tensor:
    """(B,): each example's summed class weights of its counted targets, a class-index loss's mean's
    denominators, 1 where none counts (the op's loss is then 0, as the summed losses are).  ``targets``:
    every example's, merged; in nested vmap a Tensor batched at an outer level, whose examples each
    count their own: then in Tensor ops, which batch."""
    ignore_index, weight = b.settings.get("ignore_index", -100), b.settings.get("weight")
    if isinstance(targets, Tensor):
        counted = targets != ignore_index
        w = counted.to(dtype)
        if weight is not None:  # (an ignored target picks some class, counted out by w)
            table = Tensor._make(weight.reshape(-1, 1), False, None)
            w = w * Embedding.apply(table, targets.clamp(0, len(weight) - 1)).reshape(targets.shape)
        totals = w.reshape(b.size, -1).sum(1)
        return totals + (totals == 0).to(dtype)
    t = np.asarray(targets)
    counted = t != ignore_index
    w = counted * (1.0 if weight is None else weight[backend.where(counted, t, 0)])
    totals = np.asarray(w).reshape(b.size, -1).sum(1).astype(dtype)
    return Tensor._make(backend.where(totals == 0, 1, totals).astype(dtype, copy=False), False, None)


def _reduce_examples(losses, reduction: str, b: Batch):
    """``losses`` (B, ...) reduced per example: 'none', 'sum', 'mean' or 'batchmean' (sum / first dim)."""
    dims = tuple(range(1, losses.ndim))
    if reduction == "none" or not dims:
        return losses
    if reduction == "sum":
        return losses.sum(dim=dims)
    if reduction == "batchmean":
        return losses.sum(dim=dims) / losses.shape[1]
    return losses.mean(dim=dims)
