"""One GRU layer (one direction) over a whole sequence as one graph node; ``nn.GRU`` calls it per layer.

For the input x (L, N, I), the weights W_ih (3H, I), W_hh (3H, H), the biases
b_ih, b_hh (3H,) or None, and the initial state h0 (N, H), each time step (in
PyTorch's gate order r, z, n) computes::

    x_r, x_z, x_n = split(x[t] W_ihᵀ + b_ih, 3)       h_r, h_z, h_n = split(h W_hhᵀ + b_hh, 3)
    r = sigmoid(x_r + h_r)    z = sigmoid(x_z + h_z)    n = tanh(x_n + r * h_n)
    h = (1 - z) * n + z * h

``gru_layer_reference`` says exactly this in Tensor ops: the readable
definition.  The op ``GRULayer`` returns the same Tensor, (L, N, H): h for
every time step (h_n is its last step, or its first in reverse).  As one op,
like ``LSTMLayer`` (``lstm_layer.py``), it does

- forward: the input products of all steps in one matrix product, then the
  recurrence in one kernel call (``kernels/gru.py``);
- backward: the recurrence backwards in one kernel call, which gives the
  gradients of the input and hidden halves of the gates, dGx and dGh (L, N, 3H);
  then dx = dGx W_ih, dW_ih = dGxᵀ x, dW_hh = dGhᵀ h_prev and the biases' sums
  are whole-sequence products;
- ``create_graph=True``: the gradients of ``gru_layer_reference``.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import decompose
from ..autograd.composite import composite_grads, composite_jvp
from ..autograd.function import Op
from .recurrence import sequence_grads
from .shape import stack


def gru_layer_reference(x, w_ih, w_hh, b_ih, b_hh, h0, reverse: bool = False):
    """The layer in differentiable Tensor ops, one step at a time: (L, N, H), h of every step
    (time order; with ``reverse`` the steps run from L-1 down to 0)."""
    gates_x = x @ w_ih.T
    if b_ih is not None:
        gates_x = gates_x + b_ih
    h = h0
    outputs = [None] * x.shape[0]
    for t in range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0]):
        gates_h = h @ w_hh.T
        if b_hh is not None:
            gates_h = gates_h + b_hh
        x_r, x_z, x_n = gates_x[t].chunk(3, dim=-1)
        h_r, h_z, h_n = gates_h.chunk(3, dim=-1)
        r, z = (x_r + h_r).sigmoid(), (x_z + h_z).sigmoid()
        h = (1 - z) * (x_n + r * h_n).tanh() + z * h
        outputs[t] = h
    return stack(outputs, dim=0)


class GRULayer(Op):
    """``GRULayer.apply(x, w_ih, w_hh, b_ih, b_hh, h0, reverse=False)`` -> (L, N, H); see the module
    docstring.  ``b_ih``, ``b_hh`` may be None (``bias=False``); all arrays of one float dtype."""

    @staticmethod
    def forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, reverse=False):
        backend.adapt_threads()  # (the thread policy: BLAS takes the cores free now)
        steps, rows, features = x.shape
        xg = np.matmul(x.reshape(steps * rows, features), w_ih.T)  # (L N, 3H), a new C-contiguous array
        if b_ih is not None:
            xg += b_ih
        out, hg = backend.gru_forward(xg.reshape(steps, rows, w_ih.shape[0]), w_hh, b_hh, h0, reverse)
        ctx.save_for_backward(x, w_ih, w_hh, b_ih, b_hh, h0, out)
        ctx.reverse = reverse
        ctx.activations = (xg.reshape(steps, rows, w_ih.shape[0]), hg)  # [r, z, n] and h W_hhᵀ + b_hh of every step
        return out

    @staticmethod
    def backward(ctx, grad):
        x, w_ih, w_hh, b_ih, b_hh, h0, out = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph: differentiate the step-by-step reference
            return composite_grads(
                lambda *a: gru_layer_reference(*a, reverse=ctx.reverse),
                (x, w_ih, w_hh, b_ih, b_hh, h0),
                grad,
                ctx.needs_input_grad,
            )
        gates, hg = ctx.activations
        dgx, dgh, dh0 = backend.gru_backward(grad, gates, hg, out, h0, w_hh, ctx.reverse)
        grads = sequence_grads(dgx, dgh, x, w_ih, out, h0, ctx.reverse, ctx.needs_input_grad)
        return (*grads, dh0 if ctx.needs_input_grad[5] else None)

    @staticmethod
    def jvp(ctx, *tangents):
        return composite_jvp(lambda *a: gru_layer_reference(*a, reverse=ctx.reverse), ctx.inputs, tangents)

    batch = decompose(gru_layer_reference)
