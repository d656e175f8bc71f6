"""Loss functions as single fused ops: cross-entropy, negative log-likelihood, mean squared error.

The class axis of ``x`` is 1 for batched input (N, C, d1, ...) and 0 for one
unbatched sample (C,); ``target`` then has the shape without it: (N, d1, ...)
or ().  Arguments arrive checked (``nn.functional.loss`` does that).

Cross-entropy is one op rather than ``log_softmax`` followed by a pick: the
forward shifts each row by its max (no overflow for logits of +-1e4, and
``-inf`` logits are fine), and the backward is the famous
``softmax - onehot``, scaled per row, with no log-softmax graph in between.

With class weights ``w`` and label smoothing ``eps``, one row's loss is

    loss_i = (1 - eps) * w[t_i] * -logp[i, t_i]  +  (eps / C) * sum_c w[c] * -logp[i, c]

and its gradient with respect to the logits ``x_i`` is

    dx_i = (1 - eps) * w[t_i] * (p_i - onehot(t_i))  +  (eps / C) * (W * p_i - w)       (W = sum_c w[c])

Rows whose target is ``ignore_index`` contribute 0.  ``reduction='mean'``
divides the summed loss by the summed weight of the counted rows
``sum_i w[t_i]`` (the row count without weights), as PyTorch does; when that
is 0 (every target ignored) the loss is 0, not PyTorch's 0/0 = NaN.

Higher order: NLL and MSE write their backward with operators and NumPy
functions (they run on Tensors as they are); the two cross-entropies return,
for ``create_graph=True``, ``composite_grads`` of their plain form in Tensor
ops (``_cross_entropy_plain``, ``_soft_cross_entropy_plain``).
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from .nn_ops import composite, on_arrays, save_with_state
from .reduce import PutAlongDim, TakeAlongDim


def class_axis(x: np.ndarray) -> int:
    return 1 if x.ndim > 1 else 0


def _log_softmax_parts(x: np.ndarray, axis: int) -> tuple:
    """``z = x - max``, ``lse = log(sum(exp(z)))`` (keepdims) and the softmax ``p``.

    A row of only ``-inf`` logits gets ``p = 0`` and ``lse = 0``: its loss is
    inf, or 0 with no gradient when the row is ignored.
    """
    m = np.max(x, axis=axis, keepdims=True)
    z = x - np.where(np.isfinite(m), m, 0)
    p = np.exp(z)
    total = np.sum(p, axis=axis, keepdims=True)
    total[total == 0] = 1
    p /= total
    return z, np.log(total), p


def _broadcast_weight(weight: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """The (C,) class weights shaped to broadcast against ``x`` along the class axis."""
    return weight.reshape((-1,) + (1,) * (x.ndim - axis - 1))


def _pick_targets(x, target, weight, ignore_index, axis):
    """What index-target losses need: a mask of counted targets, gather indices, per-target weights."""
    valid = target != ignore_index
    index = np.expand_dims(np.where(valid, target, 0), axis)
    w = np.ones(target.shape, x.dtype) if weight is None else weight[np.squeeze(index, axis)]
    return valid, index, np.where(valid, w, 0).astype(x.dtype, copy=False)


def _reduce(loss: np.ndarray, reduction: str, denom) -> np.ndarray:
    if reduction == "none":
        return loss
    total = np.sum(loss)
    if reduction == "sum":
        return np.asarray(total)
    return np.asarray(total / denom if denom != 0 else total * 0)


def _row_scale(grad: np.ndarray, reduction: str, denom, valid: np.ndarray) -> np.ndarray:
    """d(output)/d(loss_i) for each row, 0 on ignored rows."""
    if reduction == "mean":
        grad = grad / denom if denom != 0 else grad * 0
    return np.where(valid, grad, np.zeros((), grad.dtype))


class CrossEntropy(Op):
    """Cross-entropy of logits ``x`` and class-index ``target`` (see the module docstring)."""

    @staticmethod
    def forward(ctx, x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        axis = class_axis(x)
        n_classes = x.shape[axis]
        z, lse, p = _log_softmax_parts(x, axis)
        lse = np.squeeze(lse, axis)
        valid, index, w = _pick_targets(x, target, weight, ignore_index, axis)
        picked = np.squeeze(np.take_along_axis(z, index, axis), axis) - lse
        loss = -w * np.where(valid, picked, 0)  # ignored rows may pick -inf: keep them out of the product
        if label_smoothing:
            if weight is None:
                weighted_z, total_weight = np.sum(z, axis=axis), n_classes
            else:
                weighted_z, total_weight = np.sum(z * _broadcast_weight(weight, x, axis), axis=axis), weight.sum()
            smooth = np.where(valid, total_weight * lse - weighted_z, 0)
            loss = (1 - label_smoothing) * loss + (label_smoothing / n_classes) * smooth
        denom = np.sum(w)
        save_with_state(ctx, x, state=(p, index, valid, w))
        ctx.settings = (axis, weight, reduction, label_smoothing, denom)
        return _reduce(loss, reduction, denom)

    @staticmethod
    def backward(ctx, grad):
        x, (p, index, valid, w) = ctx.saved_tensors
        axis, weight, reduction, eps, denom = ctx.settings
        if not on_arrays(grad):
            return composite(_cross_entropy_plain, (x, None), ctx, grad, state=(index, valid, w), settings=ctx.settings)
        n_classes = p.shape[axis]
        scale = _row_scale(grad, reduction, denom, valid)
        total_weight = n_classes if weight is None else weight.sum()
        dx = p * np.expand_dims(scale * ((1 - eps) * w + (eps / n_classes) * total_weight), axis)
        at_target = np.take_along_axis(dx, index, axis) - np.expand_dims(scale * (1 - eps) * w, axis)
        np.put_along_axis(dx, index, at_target, axis)
        if eps:
            w_c = 1 if weight is None else _broadcast_weight(weight, p, axis)
            dx -= np.expand_dims(scale * (eps / n_classes), axis) * w_c
        return dx, None


class SoftCrossEntropy(Op):
    """Cross-entropy of logits ``x`` and class probabilities ``target`` (same shape as ``x``).

    With ``q = (1 - eps) * target + eps / C``:  ``loss_i = -sum_c w[c] * q[i, c] * logp[i, c]``;
    ``dx_i = (sum_c w[c] q[i, c]) * p_i - w * q_i``.  A zero ``q`` times a ``-inf``
    log-probability counts as 0.  ``reduction='mean'`` divides by the number of rows.
    """

    @staticmethod
    def forward(ctx, x, target, weight=None, reduction="mean", label_smoothing=0.0):
        axis = class_axis(x)
        n_classes = x.shape[axis]
        z, lse, p = _log_softmax_parts(x, axis)
        logp = z - lse
        q = target if not label_smoothing else (1 - label_smoothing) * target + label_smoothing / n_classes
        wq = q if weight is None else q * _broadcast_weight(weight, x, axis)
        loss = -np.sum(wq * np.where(wq == 0, 0, logp), axis=axis)
        rows = max(loss.size, 1)
        save_with_state(ctx, x, target, state=(p, wq, logp if ctx.needs_input_grad[1] else None))
        ctx.settings = (axis, weight, reduction, label_smoothing, rows)
        return _reduce(loss, reduction, rows)

    @staticmethod
    def backward(ctx, grad):
        x, target, (p, wq, logp) = ctx.saved_tensors
        axis, weight, reduction, eps, rows = ctx.settings
        if not on_arrays(grad):
            return composite(_soft_cross_entropy_plain, (x, target), ctx, grad, settings=ctx.settings)
        scale = grad / rows if reduction == "mean" else grad
        if reduction == "none":
            scale = np.expand_dims(scale, axis)
        dx = (p * np.sum(wq, axis=axis, keepdims=True) - wq) * scale if ctx.needs_input_grad[0] else None
        dtarget = None
        if ctx.needs_input_grad[1]:
            w_c = 1 if weight is None else _broadcast_weight(weight, p, axis)
            dtarget = -(1 - eps) * w_c * logp * scale
        return dx, dtarget


class NLLLoss(Op):
    """Negative log-likelihood: ``loss_i = -w[t_i] * x[i, t_i]`` for log-probabilities ``x``.

    The gradient, ``-scale_i * w[t_i]`` put at each target, is linear in the incoming
    gradient and does not depend on ``x``; on Tensors the put is the op ``PutAlongDim``.
    """

    @staticmethod
    def forward(ctx, x, target, weight=None, ignore_index=-100, reduction="mean"):
        axis = class_axis(x)
        valid, index, w = _pick_targets(x, target, weight, ignore_index, axis)
        picked = np.squeeze(np.take_along_axis(x, index, axis), axis)
        loss = -w * np.where(valid, picked, 0)
        denom = np.sum(w)
        save_with_state(ctx, state=(index, valid, w))
        ctx.settings = (axis, x.shape, reduction, denom)
        return _reduce(loss, reduction, denom)

    @staticmethod
    def backward(ctx, grad):
        ((index, valid, w),) = ctx.saved_tensors
        axis, shape, reduction, denom = ctx.settings
        values = np.expand_dims(-_row_scale(grad, reduction, denom, valid) * w, axis)
        if not on_arrays(grad):
            return PutAlongDim.apply(values, index=index, dim=axis, shape=shape), None
        dx = np.zeros(shape, values.dtype)
        np.put_along_axis(dx, index, values, axis)
        return dx, None


class MSELoss(Op):
    """Mean squared error ``(x - y)**2``, reduced; ``dx = 2 (x - y)`` scaled, ``dy = -dx``."""

    @staticmethod
    def forward(ctx, x, y, reduction="mean"):
        diff = x - y
        save_with_state(ctx, x, y, state=(diff,))
        ctx.reduction, ctx.count = reduction, max(diff.size, 1)
        squared = diff * diff
        return _reduce(squared, reduction, ctx.count)

    @staticmethod
    def backward(ctx, grad):
        x, y, (diff,) = ctx.saved_tensors
        if not on_arrays(grad):
            diff = x - y
        scale = grad * 2 / ctx.count if ctx.reduction == "mean" else grad * 2
        dx = diff * scale
        return (dx if ctx.needs_input_grad[0] else None), (-dx if ctx.needs_input_grad[1] else None)


# ------------------------------------------------------------------ plain forms (create_graph)
def _cross_entropy_plain(x, target, state=(), settings=()):
    """CrossEntropy in Tensor ops, from the op's constants ``state`` = (index, valid, w) and ``settings``."""
    index, valid, w = state
    axis, weight, reduction, eps, denom = settings
    n_classes = x.shape[axis]
    logp = x - x.logsumexp(dim=axis, keepdim=True)
    picked = TakeAlongDim.apply(logp, index=index, dim=axis)
    loss = -(np.where(valid, picked, 0) * w)
    if eps:
        w_c = 1 if weight is None else _broadcast_weight(weight, x, axis)
        smooth = np.where(valid, -(logp * w_c).sum(dim=axis), 0)
        loss = (1 - eps) * loss + (eps / n_classes) * smooth
    return _reduce_tensor(loss, reduction, denom)


def _soft_cross_entropy_plain(x, target, settings=()):
    """SoftCrossEntropy in Tensor ops (``settings`` as the op keeps them)."""
    axis, weight, reduction, eps, rows = settings
    n_classes = x.shape[axis]
    logp = x - x.logsumexp(dim=axis, keepdim=True)
    q = target if not eps else (1 - eps) * target + eps / n_classes
    wq = q if weight is None else q * _broadcast_weight(weight, x, axis)
    loss = -(wq * np.where(wq._data == 0, 0, logp)).sum(dim=axis)
    return _reduce_tensor(loss, reduction, rows)


def _reduce_tensor(loss, reduction: str, denom):
    """``_reduce`` on a Tensor."""
    if reduction == "none":
        return loss
    total = loss.sum()
    return total if reduction == "sum" else (total / denom if denom != 0 else total * 0)
