"""One LSTM layer (one direction) over a whole sequence as one graph node; ``nn.LSTM`` calls it per layer.

For the input x (L, N, I), the weights W_ih (4H, I), W_hh (4H, H), the biases
b_ih, b_hh (4H,) or None, and the initial state h0, c0 (N, H), each time step
(in PyTorch's gate order i, f, g, o) computes::

    i, f, g, o = split(x[t] W_ihᵀ + b_ih + h W_hhᵀ + b_hh, 4)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)

``lstm_layer_reference`` says exactly this in Tensor ops: the readable
definition.  The op ``LSTMLayer`` returns the same Tensor, (L+1, N, H): h for
every time step, then the last c; ``nn.LSTM`` slices the output, h_n and c_n
out of it.  Run as one op it does

- forward: the input products of all steps in one matrix product, then the
  recurrence in one kernel call (``kernels/lstm.py``: per step one BLAS
  product h W_hhᵀ and the gate math fused);
- backward: the recurrence backwards in one kernel call, which gives the
  gates' gradients dG (L, N, 4H) of all steps; then dx = dG W_ih,
  dW_ih = dGᵀ x, dW_hh = dGᵀ h_prev and db = sum(dG) are whole-sequence products;
- ``create_graph=True``: the gradients of ``lstm_layer_reference``, so
  second derivatives are right (``composite_grads``).

Instead of ~6 nodes per time step (a matmul, an add, the gate math, slices),
each with Python overhead and a small NumPy call, a 20-step layer is one node.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import decompose
from ..autograd.composite import composite_grads, composite_jvp
from ..autograd.function import Op
from .recurrence import sequence_grads
from .shape import stack


def lstm_layer_reference(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse: bool = False):
    """The layer in differentiable Tensor ops, one step at a time: (L+1, N, H) = [h_1..h_L, c_L]
    (time order; with ``reverse`` the steps run from L-1 down to 0 and the last c is that of step 0)."""
    gates_x = x @ w_ih.T
    if b_ih is not None:
        gates_x = gates_x + (b_ih + b_hh)
    h, c = h0, c0
    outputs = [None] * x.shape[0]
    for t in range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0]):
        i, f, g, o = (gates_x[t] + h @ w_hh.T).chunk(4, dim=-1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        outputs[t] = h
    return stack([*outputs, c], dim=0)


class LSTMLayer(Op):
    """``LSTMLayer.apply(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse=False)`` -> (L+1, N, H); see the module
    docstring.  ``b_ih``, ``b_hh`` may be None (``bias=False``); all arrays of one float dtype."""

    @staticmethod
    def forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse=False):
        backend.adapt_threads()  # (the thread policy: BLAS takes the cores free now)
        steps, rows, features = x.shape
        xg = np.matmul(x.reshape(steps * rows, features), w_ih.T)  # (L N, 4H), a new C-contiguous array
        if b_ih is not None:
            xg += b_ih
            xg += b_hh
        xg = xg.reshape(steps, rows, w_ih.shape[0])
        out, c, tanh_c = backend.lstm_forward(xg, w_hh, h0, c0, reverse)
        ctx.save_for_backward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, out)
        ctx.reverse = reverse
        ctx.activations = (xg, c, tanh_c)  # the activated gates, c and tanh(c) of every step
        return out

    @staticmethod
    def backward(ctx, grad):
        x, w_ih, w_hh, b_ih, b_hh, h0, c0, out = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph: differentiate the step-by-step reference
            return composite_grads(
                lambda *a: lstm_layer_reference(*a, reverse=ctx.reverse),
                (x, w_ih, w_hh, b_ih, b_hh, h0, c0),
                grad,
                ctx.needs_input_grad,
            )
        gates, c, tanh_c = ctx.activations
        dgates, dh0, dc0 = backend.lstm_backward(grad, gates, c, tanh_c, c0, w_hh, ctx.reverse)
        grads = sequence_grads(dgates, dgates, x, w_ih, out[:-1], h0, ctx.reverse, ctx.needs_input_grad)
        return (*grads, dh0 if ctx.needs_input_grad[5] else None, dc0 if ctx.needs_input_grad[6] else None)

    @staticmethod
    def jvp(ctx, *tangents):
        return composite_jvp(lambda *a: lstm_layer_reference(*a, reverse=ctx.reverse), ctx.inputs, tangents)

    batch = decompose(lstm_layer_reference)
