"""The elementwise half of an LSTM step as one graph node (``nn.LSTM`` calls it once per time step).

Given the gate pre-activations ``gates = x W_ih^T + h W_hh^T + b`` (N, 4H), in
PyTorch's order i, f, g, o, and the cell state ``c`` (N, H)::

    i, f, o = sigmoid(.)   g = tanh(.)
    c' = f * c + i * g
    h' = o * tanh(c')

it returns ``[h', c']`` side by side, (N, 2H).  Written in Tensor ops
(``lstm_pointwise_reference``) this is 13 nodes and as many backward calls; as one
``Op`` it is one, with the textbook backward below.  The reference formula gives
the second derivative (``create_graph=True``) and is what the tests compare with.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op, composite_grads


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow (exp of a non-positive number only)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def lstm_pointwise_reference(gates, c):
    """The same computation in differentiable Tensor ops (the readable definition)."""
    from .. import functions as fn

    i, f, g, o = gates.chunk(4, dim=-1)
    c = fn.sigmoid(f) * c + fn.sigmoid(i) * fn.tanh(g)
    return fn.cat([fn.sigmoid(o) * fn.tanh(c), c], dim=-1)


class LSTMPointwise(Op):
    """``[h', c']`` from the gate pre-activations (N, 4H) and the cell state (N, H); see the module docstring.

    Backward, with dh, dc' the two halves of the incoming gradient::

        dc_total = dc' + dh * o * (1 - tanh(c')^2)
        d(gates) = [dc_total * g * i(1-i), dc_total * c * f(1-f), dc_total * i * (1-g^2), dh * tanh(c') * o(1-o)]
        dc       = dc_total * f
    """

    @staticmethod
    def forward(ctx, gates, c):
        ctx.save_for_backward(gates, c)
        i, f, _, o = np.split(_sigmoid(gates), 4, axis=-1)  # one sigmoid call; its g block is unused
        g = np.tanh(np.split(gates, 4, axis=-1)[2])
        c_new = f * c + i * g
        tanh_c = np.tanh(c_new)
        ctx.activations = (i, f, g, o, tanh_c)  # the first-order backward reuses them
        return np.concatenate([o * tanh_c, c_new], axis=-1)

    @staticmethod
    def backward(ctx, grad):
        if not isinstance(grad, np.ndarray):  # create_graph: differentiate the reference formula
            return composite_grads(lstm_pointwise_reference, ctx.saved_tensors, grad, ctx.needs_input_grad)
        _, c = ctx.saved_tensors
        i, f, g, o, tanh_c = ctx.activations
        dh, dc_new = np.split(grad, 2, axis=-1)
        dc_total = dc_new + dh * o * (1 - tanh_c * tanh_c)
        d_gates = np.concatenate(
            [
                dc_total * g * i * (1 - i),
                dc_total * c * f * (1 - f),
                dc_total * i * (1 - g * g),
                dh * tanh_c * o * (1 - o),
            ],
            axis=-1,
        )
        return d_gates, dc_total * f
