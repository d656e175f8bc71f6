"""The per-row part of an index-target loss (cross-entropy, NLL): pick each row's target, in one pass.

For rows (R, C) of log-probabilities written as ``rows - shift - log_total`` (cross-entropy: the
logits, their row max and the log of the shifted exponentials' sum; NLL: the log-probabilities
and two zeros), integer targets (R,), ``ignore_index`` and class weights ``weight`` (C,) or None,
the kernel fills, for each row i::

    valid[i] = target[i] != ignore_index
    index[i] = target[i], or 0 where ignored
    w[i]     = weight[target[i]] (1 without weights), or 0 where ignored
    loss[i]  = -w[i] * ((rows[i, t] - shift[i]) - log_total[i]), or 0 where ignored

in the rows' dtype.  NumPy needed eight calls for this (a comparison, two ``where``, a cast, an
``arange``, a gather, two subtractions and a product), each a pass over its own temporary: at the
sizes a training step's loss has (a few hundred rows) their per-call costs were most of the
loss's forward.  The reference, ``_target_losses_numpy``, is those calls.

>>> rows = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
>>> valid, index, w, loss = target_losses(rows, np.zeros(2), np.zeros(2), np.array([1, -100]), -100, None)
>>> loss.round(4), valid
(array([0.6931, 0.    ]), array([ True, False]))
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit


@njit
def _target_losses(rows, shift, log_total, target, ignore_index, weight, valid, index, w, loss):
    one = rows.dtype.type(1)  # (a weight in the rows' dtype: a float32 product stays float32)
    for i in range(rows.shape[0]):
        t = target[i]
        if t == ignore_index:
            valid[i], index[i], w[i], loss[i] = False, 0, 0, 0
            continue
        weight_i = one if weight is None else weight[t]
        valid[i], index[i], w[i] = True, t, weight_i
        loss[i] = -weight_i * ((rows[i, t] - shift[i]) - log_total[i])


def _target_losses_numpy(rows, shift, log_total, target, ignore_index, weight, valid, index, w, loss) -> None:
    np.not_equal(target, ignore_index, out=valid)
    index[:] = np.where(valid, target, 0)
    w[:] = valid if weight is None else np.where(valid, weight[index], 0)
    picked = (rows[np.arange(rows.shape[0]), index] - shift) - log_total
    loss[:] = -w * np.where(valid, picked, 0)  # (an ignored row may pick -inf: kept out of the product)


_TARGET_LOSSES = Kernel(_target_losses_numpy, _target_losses)


def target_losses(rows, shift, log_total, target, ignore_index: int, weight) -> tuple:
    """``(valid, index, w, loss)``, each (R,), for the (R, C) ``rows`` (see the module docstring);
    ``shift``, ``log_total`` (R,) and ``weight`` (C,) or None in the rows' dtype; the targets checked
    already (each in [0, C) or ``ignore_index``)."""
    count = rows.shape[0]
    valid, index = np.empty(count, np.bool_), np.empty(count, np.int64)
    w, loss = np.empty(count, rows.dtype), np.empty(count, rows.dtype)
    target = target.astype(np.int64, copy=False)
    _TARGET_LOSSES.on(rows)(rows, shift, log_total, target, ignore_index, weight, valid, index, w, loss)
    return valid, index, w, loss
