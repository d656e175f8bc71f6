"""What ``LSTMLayer`` and ``GRULayer`` share: the whole-sequence matrix products that finish their backward.

The recurrence kernels give the gradients of the gate pre-activations of every
step: ``dgx`` of the input half (x[t] W_ihᵀ + b_ih) and ``dgh`` of the hidden half
(h_prev W_hhᵀ + b_hh), both (L, N, G) (for the LSTM they are the same array).
The weights were used once per step, so their gradients are sums over the
steps, each one matrix product over all L N rows::

    dx    = dgx W_ih         (L, N, I)        dW_ih = dgxᵀ x            (G, I)
    db_ih = sum(dgx)         (G,)             dW_hh = dghᵀ h_prev       (G, H)
    db_hh = sum(dgh)         (G,)
"""

from __future__ import annotations

import numpy as np

from .. import backend


def previous_h(hs: np.ndarray, h0: np.ndarray, reverse: bool) -> np.ndarray:
    """(L, N, H): the h each step started from, given the h of every step ``hs`` (L, N, H) and ``h0``
    (N, H), the state of the first step run (step 0 forwards, step L-1 in reverse)."""
    if reverse:
        return np.concatenate([hs[1:], h0[None]], axis=0)
    return np.concatenate([h0[None], hs[:-1]], axis=0)


def sequence_grads(dgx, dgh, x, w_ih, hs, h0, reverse: bool, needs: tuple) -> tuple:
    """(dx, dW_ih, dW_hh, db_ih, db_hh), each None where ``needs`` (the op's ``needs_input_grad``:
    x, W_ih, W_hh, b_ih, b_hh first) says no.  ``hs`` (L, N, H): h of every step, in time order."""
    steps, rows, width = dgx.shape
    flat_x, flat_h = dgx.reshape(steps * rows, width), dgh.reshape(steps * rows, width)
    dx = np.matmul(flat_x, w_ih).reshape(x.shape) if needs[0] else None
    dw_ih = np.matmul(flat_x.T, x.reshape(steps * rows, x.shape[2])) if needs[1] else None
    dw_hh = np.matmul(flat_h.T, previous_h(hs, h0, reverse).reshape(steps * rows, hs.shape[2])) if needs[2] else None
    db_ih = backend.column_sums(flat_x) if needs[3] else None
    db_hh = None
    if needs[4]:  # (a new array even when dgh is dgx: each parent gets its own)
        db_hh = db_ih.copy() if dgh is dgx and db_ih is not None else backend.column_sums(flat_h)
    return dx, dw_ih, dw_hh, db_ih, db_hh
