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
functions (they run on Tensors as they are); for ``create_graph=True`` (and forward
mode over a backward) cross-entropy writes the ``dx`` above in Tensor ops around one
``Softmax`` (``_cross_entropy_backward_graph``), the soft-label cross-entropy returns
``composite_grads`` of its plain form in Tensor ops (``_soft_cross_entropy_plain``).
Cross-entropy's JVP rule is an op of its own, ``CrossEntropyTangent`` (forward mode
and Hessian-vector products: one pass instead of the backward's graph).
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.function import Op
from .loss_rules import _reduce_examples, batched_loss, batched_row_loss, jvp_by_backward
from .nn_ops import Softmax, composite, on_arrays, save_with_state
from .reduce import PutAlongDim


def class_axis(x: np.ndarray) -> int:
    return 1 if x.ndim > 1 else 0


def _softmax_rows(rows: np.ndarray) -> tuple:
    """``(p, shift, log_total)`` of the (R, C) logits ``rows`` (``kernels.softmax.softmax_parts``):
    the softmax ``p`` and ``log_softmax = (x - shift) - log_total``.

    A row of only ``-inf`` logits gets ``p = 0`` and ``log_total = 0``: its loss is
    inf, or 0 with no gradient when the row is ignored.
    """
    p, shift, log_total = backend.softmax_parts(rows)
    if not np.isfinite(log_total).all():
        empty = log_total == -np.inf
        p[empty] = 0
        log_total[empty] = 0
    return p, shift, log_total


def _log_softmax_parts(x: np.ndarray, axis: int) -> tuple:
    """``z = x - max``, ``lse = log(sum(exp(z)))`` (keepdims) and the softmax ``p``, in x's layout
    (as ``_softmax_rows``)."""
    rows, moved_shape = backend.as_rows(x, axis)
    p, shift, log_total = _softmax_rows(rows)
    shift, log_total = (np.expand_dims(a.reshape(moved_shape[:-1]), axis) for a in (shift, log_total))
    return x - shift, log_total, backend.from_rows(p, moved_shape, axis, x)


def _broadcast_weight(weight: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """The (C,) class weights shaped to broadcast against ``x`` along the class axis."""
    return weight.reshape((-1,) + (1,) * (x.ndim - axis - 1))


def _original_layout(index, valid, w, target_shape: tuple, axis: int) -> tuple:
    """The flat (R,) ``index, valid, w`` of ``target_losses`` in the layout of the plain forms
    (``_cross_entropy_backward_graph``, ``PutAlongDim``): valid and w in the target's shape, the index
    with a size-1 class axis."""
    index = np.expand_dims(index.reshape(target_shape), axis)
    return index, valid.reshape(target_shape), w.reshape(target_shape)


def _target_entries(shape: tuple, index: np.ndarray) -> tuple:
    """Index arrays that select, in an array of ``shape`` (N, C, d1, ...) or (C,) viewed as
    (N, C, K), the entry of each target's class: ``a.reshape(n, c, k)[entries]`` is (N, K),
    for the flat class indices ``index`` (N * K,)."""
    n = shape[0] if len(shape) > 1 else 1
    k = index.size // max(n, 1)
    index = index.reshape(n, k)
    return np.arange(n)[:, None], index, np.arange(k)[None, :]


def _as_nck(shape: tuple) -> tuple:
    """``shape`` (N, C, d1, ...) or (C,) as (N, C, K)."""
    return (shape[0], shape[1], math.prod(shape[2:])) if len(shape) > 1 else (1, shape[0], 1)


def _reduce(loss: np.ndarray, reduction: str, denom) -> np.ndarray:
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return np.asarray(total)
    return np.asarray(total / denom if denom != 0 else total * 0)


def _row_scale(grad: np.ndarray, reduction: str, denom, valid: np.ndarray) -> np.ndarray:
    """d(output)/d(loss_i) for each row, 0 on ignored rows."""
    if reduction == "mean":
        grad = grad / denom if denom != 0 else grad * 0
    return backend.where(valid, grad, np.zeros((), grad.dtype))


class CrossEntropy(Op):
    """Cross-entropy of logits ``x`` and class-index ``target`` (see the module docstring).

    Computed on the logits as (R, C) rows, the classes last (a view for (N, C) and (C,)
    input; (N, C, d1, ...) is copied): one softmax kernel pass gives ``p`` and the
    log-sum-exp of each row; the backward is one pass, ``p`` scaled per row, with the
    target entries then corrected.
    """

    @staticmethod
    def forward(ctx, x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        axis = class_axis(x)
        rows, moved_shape = backend.as_rows(x, axis)
        p, shift, log_total = _softmax_rows(rows)
        valid, index, w, loss = backend.target_losses(rows, shift, log_total, target.reshape(-1), ignore_index, weight)
        if label_smoothing:
            z = rows - shift[:, None]
            weighted_z, total_weight = (z.sum(axis=1), z.shape[1]) if weight is None else (z @ weight, weight.sum())
            smooth = backend.where(valid, total_weight * log_total - weighted_z, 0)
            loss = (1 - label_smoothing) * loss + (label_smoothing / rows.shape[1]) * smooth
        denom = w.sum()
        save_with_state(ctx, x, state=(p, index, valid, w))
        ctx.settings = (axis, weight, reduction, label_smoothing, denom)
        ctx.moved_shape, ctx.target_shape = moved_shape, target.shape
        return _reduce(loss.reshape(target.shape), reduction, denom)

    @staticmethod
    def backward(ctx, grad):
        x, (p, index, valid, w) = ctx.saved_tensors
        axis, weight, reduction, eps, denom = ctx.settings
        if not on_arrays(grad):
            state = _original_layout(index, valid, w, ctx.target_shape, axis)
            return _cross_entropy_backward_graph(x, grad, state, ctx.settings), None
        scale = _row_scale(np.reshape(grad, -1) if reduction == "none" else grad, reduction, denom, valid)
        dx = _logit_grads(p, scale, index, w, weight, eps)
        return backend.from_rows(dx, ctx.moved_shape, axis, x), None

    @staticmethod
    def jvp(ctx, d_x, d_target):  # (one op: the backward's dx dotted with the tangent, row by row)
        x, target = ctx.inputs
        state = ctx.saved_tensors[-1]  # (the forward's softmax and targets' weights, for the tangent's)
        return None if d_x is None else CrossEntropyTangent.call(x, target, d_x, **ctx.keywords, state=state)

    batch = batched_row_loss  # vmap: every example's losses at once, then each example's reduction


def _coefficients(scale: np.ndarray, w: np.ndarray, weight, eps: float, n_classes: int) -> tuple:
    """(at_target, coef), each (R,): a row's dx_i (module docstring) scaled by ``scale`` is
    ``coef * p_i``, ``at_target`` taken off at the target, ``scale * eps / C * w`` taken off too."""
    at_target = scale * w if not eps else scale * (1 - eps) * w
    if not eps:
        return at_target, at_target
    return at_target, at_target + scale * (eps / n_classes * (n_classes if weight is None else weight.sum()))


def _logit_grads(p: np.ndarray, scale: np.ndarray, index: np.ndarray, w: np.ndarray, weight, eps: float):
    """The (R, C) rows dx_i of the module docstring, each scaled by ``scale`` (R,): one pass without
    label smoothing (``(p - onehot) * scale``)."""
    n_classes = p.shape[1]
    at_target, coef = _coefficients(scale, w, weight, eps, n_classes)
    dx = backend.scaled_rows(p, coef, index, at_target)
    if eps:
        dx -= (scale * (eps / n_classes))[:, None] * (1 if weight is None else weight)
    return dx


class CrossEntropyTangent(Op):
    """CrossEntropy's derivative along ``t``, a tangent of the logits ``x`` (its JVP rule as one op, for
    forward mode and Hessian-vector products; arguments as CrossEntropy's, ``t`` last).  Each row's loss
    changes by its gradient dotted with the tangent, ``dx_i · t_i`` (module docstring):

        tangent_i = coef_i (p_i · t_i) - at_i t_i[target_i] - (eps / C) (w · t_i)

    with ``at_i = (1 - eps) w[t_i]``, ``coef_i = at_i + (eps / C) W`` (0 on ignored rows), reduced as the
    loss.  Backward: d t is CrossEntropy's backward (the same dx_i); d x is the softmax's Jacobian
    applied to t, ``coef_i p_i * (t_i - p_i · t_i)``.  Written as Tensor ops (the backward's dx dotted
    with t) this was nine recorded ops and their nodes."""

    @staticmethod
    def forward(ctx, x, target, t, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0, state=None):
        axis, eps = class_axis(x), label_smoothing
        rows, moved_shape = backend.as_rows(x, axis)
        t_rows, _ = backend.as_rows(t, axis)
        if state is None:  # (else CrossEntropy's forward computed them: ``(p, index, valid, w)``)
            p, shift, log_total = _softmax_rows(rows)
            valid, index, w, _ = backend.target_losses(rows, shift, log_total, target.reshape(-1), ignore_index, weight)
            state = (p, index, valid, w)
        p, index, valid, w = state
        at_target, coef = _coefficients(valid.astype(x.dtype), w, weight, eps, rows.shape[1])
        tangent = coef * backend.row_dots(p, t_rows) - at_target * t_rows[np.arange(len(index)), index]
        if eps:
            weighted_t = t_rows.sum(1) if weight is None else t_rows @ weight
            tangent -= backend.where(valid, (eps / rows.shape[1]) * weighted_t, 0)
        denom = w.sum()
        save_with_state(ctx, x, t, state=(p, t_rows, index, valid, w))
        ctx.settings = (axis, weight, reduction, eps, denom)
        ctx.moved_shape, ctx.target_shape = moved_shape, target.shape
        return _reduce(tangent.astype(x.dtype, copy=False).reshape(target.shape), reduction, denom)

    @staticmethod
    def backward(ctx, grad):
        x, t, (p, t_rows, index, valid, w) = ctx.saved_tensors
        axis, weight, reduction, eps, denom = ctx.settings
        need_x, _, need_t = ctx.needs_input_grad
        if not on_arrays(grad):
            state = _original_layout(index, valid, w, ctx.target_shape, axis)
            return _cross_entropy_tangent_graph(x, t, grad, state, ctx.settings, need_x, need_t)
        scale = _row_scale(np.reshape(grad, -1) if reduction == "none" else grad, reduction, denom, valid)
        dx = dt = None
        if need_x:
            _, coef = _coefficients(scale, w, weight, eps, p.shape[1])
            dx_rows = backend.scaled_rows(backend.softmax_backward(p, t_rows, 1), coef)  # (two passes)
            dx = backend.from_rows(dx_rows, ctx.moved_shape, axis, x)
        if need_t:
            dt = backend.from_rows(_logit_grads(p, scale, index, w, weight, eps), ctx.moved_shape, axis, t)
        return dx, None, dt

    jvp = jvp_by_backward

    @staticmethod
    def batch(b):  # vmap: as the loss's (CrossEntropy's state is of unbatched rows: computed again)
        b.settings.pop("state", None)
        return batched_row_loss(b)


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
        loss = -np.sum(wq * backend.where(wq == 0, 0, logp), axis=axis)
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

    jvp = jvp_by_backward

    @staticmethod
    def batch(b):  # vmap: per-row losses of every example, then each example's reduction (mean: over its rows)
        rows = b.size * (b.values[0].shape[1] if b.ndims[0] > 1 else 1)
        merged = [
            b.expanded(i).reshape(rows, *b.values[0].shape[2:]) if b.ndims[0] > 1 else b.expanded(i) for i in (0, 1)
        ]
        losses = b.run(*merged, **{**b.settings, "reduction": "none"})
        return _reduce_examples(losses.reshape(b.size, *losses.shape[1:]), b.settings["reduction"], b)


class NLLLoss(Op):
    """Negative log-likelihood: ``loss_i = -w[t_i] * x[i, t_i]`` for log-probabilities ``x``.

    The gradient, ``-scale_i * w[t_i]`` put at each target, is linear in the incoming
    gradient and does not depend on ``x``; on Tensors the put is the op ``PutAlongDim``.
    """

    @staticmethod
    def forward(ctx, x, target, weight=None, ignore_index=-100, reduction="mean"):
        rows, _ = backend.as_rows(x, class_axis(x))  # (R, C): a view for (N, C) and (C,), else a copy
        zeros = np.zeros(rows.shape[0], x.dtype)  # (log-probabilities: no shift, no log-sum)
        valid, index, w, loss = backend.target_losses(rows, zeros, zeros, target.reshape(-1), ignore_index, weight)
        denom = w.sum()
        save_with_state(ctx, state=(index, valid, w))
        ctx.settings = (class_axis(x), x.shape, reduction, denom, target.shape)
        return _reduce(loss.reshape(target.shape), reduction, denom)

    @staticmethod
    def backward(ctx, grad):
        ((index, valid, w),) = ctx.saved_tensors
        axis, shape, reduction, denom, target_shape = ctx.settings
        scale = _row_scale(np.reshape(grad, -1) if reduction == "none" else grad, reduction, denom, valid)
        values = -scale * w
        if not on_arrays(grad):
            index, _, _ = _original_layout(index, valid, w, target_shape, axis)
            values = np.expand_dims(np.reshape(values, target_shape), axis)
            return PutAlongDim.apply(values, index=index, dim=axis, shape=shape), None
        dx = np.zeros(shape, values.dtype)  # (an array of its own: the engine keeps it without a copy)
        entries = _target_entries(shape, index)
        dx.reshape(_as_nck(shape))[entries] = values.reshape(entries[1].shape)
        return dx, None

    jvp = jvp_by_backward

    batch = batched_row_loss  # vmap: every example's losses at once, then each example's reduction


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

    jvp = jvp_by_backward

    batch = batched_loss  # vmap: every example's losses at once, then each example's reduction


# ------------------------------------------------------------------ plain forms (create_graph)
def _cross_entropy_backward_graph(x, grad, state, settings):
    """CrossEntropy's backward in Tensor ops (create_graph, forward mode): the module docstring's dx_i, each
    row scaled by d(output)/d(loss_i) (``grad``: 0-d, or the target's shape for ``reduction='none'``), 0 on
    ignored rows.  It depends on x through one ``Softmax``, so it is differentiable again (and has a JVP)."""
    index, valid, w = state  # (_original_layout's: index with a size-1 class axis, valid and w the target's shape)
    axis, weight, reduction, eps, denom = settings
    n_classes = x.shape[axis]
    scale = _row_scale_graph(grad, valid, reduction, denom)
    onehot = np.zeros(x.shape, x.dtype)
    np.put_along_axis(onehot, index, 1, axis)
    p = Softmax.apply(x, dim=axis)
    dx = (p - onehot) * (scale * ((1 - eps) * w)).unsqueeze(axis)
    if eps:
        total = n_classes if weight is None else weight.sum()
        w_c = 1 if weight is None else _broadcast_weight(weight, x, axis)
        dx = dx + (scale * (eps / n_classes)).unsqueeze(axis) * (total * p - w_c)
    return dx


def _cross_entropy_tangent_graph(x, t, grad, state, settings, need_x: bool, need_t: bool) -> tuple:
    """CrossEntropyTangent's backward in Tensor ops (as ``_cross_entropy_backward_graph``): (dx, None, dt)."""
    dt = _cross_entropy_backward_graph(x, grad, state, settings) if need_t else None
    if not need_x:
        return None, None, dt
    _, valid, w = state
    axis, weight, reduction, eps, denom = settings
    n_classes = x.shape[axis]
    total = n_classes if weight is None else weight.sum()
    coef = _row_scale_graph(grad, valid, reduction, denom) * ((1 - eps) * w + eps / n_classes * total)
    p = Softmax.apply(x, dim=axis)
    return coef.unsqueeze(axis) * p * (t - (p * t).sum(dim=axis, keepdim=True)), None, dt


def _row_scale_graph(grad, valid: np.ndarray, reduction: str, denom):
    """``_row_scale`` on a Tensor ``grad`` (0-d, or the target's shape)."""
    if reduction == "mean":
        grad = grad / denom if denom != 0 else grad * 0
    return backend.where(valid, grad, 0)


def _soft_cross_entropy_plain(x, target, settings=()):
    """SoftCrossEntropy in Tensor ops (``settings`` as the op keeps them)."""
    axis, weight, reduction, eps, rows = settings
    n_classes = x.shape[axis]
    logp = x - x.logsumexp(dim=axis, keepdim=True)
    q = target if not eps else (1 - eps) * target + eps / n_classes
    wq = q if weight is None else q * _broadcast_weight(weight, x, axis)
    loss = -(wq * backend.where(wq._data == 0, 0, logp)).sum(dim=axis)
    return _reduce_tensor(loss, reduction, rows)


def _reduce_tensor(loss, reduction: str, denom):
    """``_reduce`` on a Tensor."""
    if reduction == "none":
        return loss
    total = loss.sum()
    return total if reduction == "sum" else (total / denom if denom != 0 else total * 0)
