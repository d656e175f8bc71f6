"""One LSTM step as one graph node: ``LSTMCellStep`` (what ``nn.LSTMCell`` runs).

For x (N, I), h and c (N, H), W_ih (4H, I), W_hh (4H, H), biases (4H,) or None::

    gates = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh        two GEMMs; blocks i, f, g, o of H columns
    c' = σ(f) c + σ(i) tanh(g),   h' = σ(o) tanh(c')

The output packs both states, (2, N, H) = [h', c'] (the cell unbinds it).
Backward, with dh', dc' the two halves of the incoming gradient::

    dc  = dc' + dh' σ(o) (1 - tanh²(c'))
    dσi = dc tanh(g),  dσf = dc c,  dtanh_g = dc σ(i),  dσo = dh' tanh(c')
    dgates = [dσi σ(i)(1-σ(i)), dσf σ(f)(1-σ(f)), dtanh_g (1-tanh²(g)), dσo σ(o)(1-σ(o))]
    dx = dgates W_ih,  dh = dgates W_hh,  dc_prev = dc σ(f)
    dW_ih = dgatesᵀ x,  dW_hh = dgatesᵀ h,  db_ih = db_hh = column sums of dgates

A loop over time of ~15 Tensor ops per step becomes one node (the step-by-step
code of PyTorch's time-series example pays the per-op cost at every step).
With ``create_graph=True`` the backward differentiates ``lstm_cell_reference``,
the same step in Tensor ops, so second derivatives come from that.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import decompose
from ..autograd.composite import composite_grads, composite_jvp
from ..autograd.function import Op
from .shape import stack


def lstm_cell_reference(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """The step in Tensor ops: (2, N, H) = [h', c']."""
    gates = x @ w_ih.T + h @ w_hh.T
    if b_ih is not None:
        gates = gates + b_ih + b_hh
    i, f, g, o = gates.chunk(4, dim=1)
    c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return stack([o.sigmoid() * c_new.tanh(), c_new], dim=0)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)) without overflow warnings (exp of a large -z is inf: the result is 0)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


class LSTMCellStep(Op):
    """``LSTMCellStep.apply(x, h, c, w_ih, w_hh, b_ih, b_hh)`` -> (2, N, H) = [h', c'] (module docstring)."""

    @staticmethod
    def forward(ctx, x, h, c, w_ih, w_hh, b_ih=None, b_hh=None):
        gates = x @ w_ih.T
        gates += h @ w_hh.T
        if b_ih is not None:
            gates += b_ih
            gates += b_hh
        hidden = h.shape[1]
        i, f, o = (_sigmoid(gates[:, k * hidden : (k + 1) * hidden]) for k in (0, 1, 3))
        g = np.tanh(gates[:, 2 * hidden : 3 * hidden])
        out = np.empty((2,) + h.shape, dtype=gates.dtype)
        np.multiply(f, c, out=out[1])
        out[1] += i * g
        tanh_c = np.tanh(out[1])
        np.multiply(o, tanh_c, out=out[0])
        ctx.save_for_backward(x, h, c, w_ih, w_hh, b_ih, b_hh, (i, f, g, o, tanh_c))
        return out

    @staticmethod
    def backward(ctx, grad):
        *inputs, (i, f, g, o, tanh_c) = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph: the step in Tensor ops
            return composite_grads(lstm_cell_reference, tuple(inputs), grad, ctx.needs_input_grad)
        x, h, c, w_ih, w_hh, _, _ = inputs
        need = ctx.needs_input_grad
        dh_new, dc_new = grad[0], grad[1]
        dc = dc_new + dh_new * o * (1.0 - tanh_c * tanh_c)
        dgates = np.concatenate(
            [dc * g * i * (1.0 - i), dc * c * f * (1.0 - f), dc * i * (1.0 - g * g), dh_new * tanh_c * o * (1.0 - o)],
            axis=1,
        )
        db = backend.column_sums(dgates) if need[5] or need[6] else None
        return (
            dgates @ w_ih if need[0] else None,
            dgates @ w_hh if need[1] else None,
            dc * f if need[2] else None,
            dgates.T @ x if need[3] else None,
            dgates.T @ h if need[4] else None,
            db if need[5] else None,
            db.copy() if need[6] else None,
        )

    @staticmethod
    def jvp(ctx, *tangents):
        return composite_jvp(lstm_cell_reference, ctx.inputs, tangents)

    batch = decompose(lstm_cell_reference)  # vmap: the step's definition, whose ops have rules
