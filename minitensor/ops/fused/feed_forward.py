"""``FeedForward``: a Transformer layer's position-wise feed-forward network as one step.

The composite it replaces is ``linear2(dropout(activation(linear1(x))))`` (``nn.Linear``, ReLU or
GELU, ``nn.Dropout``): four nodes and three passes over the hidden activations between the two
matrix products.  The kernel (``kernels/activation.py``) adds the bias, applies the activation
and the dropout mask in one pass each way.  It is a part of the fused layer nodes
(``encoder_layer.py``, ``decoder_layer.py``), run on its own context (``parts.sub_forward``): its
backward is first order only, the layer node taking ``create_graph`` and forward mode (its ``jvp``)
through the layer's definition.
"""

from __future__ import annotations

from ... import backend
from ..nn_ops import Op, _rows_view, affine, save_with_state


class FeedForward(Op):
    """The position-wise feed-forward network of a Transformer layer as one node::

        pre = x @ W1ᵀ + b1                   one GEMM
        h   = act(pre) * keep * scale        bias, activation and dropout in one pass (kernels.activation)
        y   = h @ W2ᵀ + b2                   one GEMM

    Run as ``sub_forward(FeedForward, needs, x, w1, b1, w2, b2, activation="relu", keep=None, scale=1.0)``
    with x (..., E), w1 (F, E), w2 (E, F), biases or None; ``activation`` is ``"relu"``,
    ``"gelu"`` (exact) or ``"gelu_tanh"``; ``keep`` None or a bool dropout mask of h's shape.

    Backward: ``dh = dy @ W2``, ``dW2 = dyᵀ @ h``, then ``dpre = dh * keep * scale * act'(pre)``
    and ``db1 = sum(dpre)`` in one pass, ``dx = dpre @ W1``, ``dW1 = dpreᵀ @ x``.  ReLU keeps
    only h for backward (``act'(pre) = [h > 0]``); GELU keeps pre as well.
    """

    @staticmethod
    def forward(ctx, x, w1, b1=None, w2=None, b2=None, activation="relu", keep=None, scale=1.0):
        y, (rows, h, pre, keep_rows) = feed_forward(x, w1, b1, w2, b2, activation, keep, scale)
        save_with_state(ctx, x, w1, b1, w2, b2, state=(rows, h, pre))
        scale = 1.0 if keep is None else scale  # (no dropout, no scaling)
        ctx.x_shape, ctx.activation, ctx.keep, ctx.scale = x.shape, activation, keep_rows, scale
        return y

    @staticmethod
    def backward(ctx, grad):
        _, w1, _, w2, _, (rows, h, pre) = ctx.saved_tensors
        need_x, need_w1, need_b1, need_w2, need_b2 = ctx.needs_input_grad
        g = grad.reshape(rows.shape[0], w2.shape[0])
        dh = backend.rows_product(g, w2.T)
        if ctx.activation == "relu":
            dpre, db1 = backend.bias_relu_dropout_backward(h, dh, ctx.scale, need_b1)
        else:
            approximate = "tanh" if ctx.activation == "gelu_tanh" else "none"
            dpre, db1 = backend.bias_gelu_dropout_backward(pre, dh, ctx.keep, ctx.scale, approximate, need_b1)
        return (
            backend.rows_product(dpre, w1.T).reshape(ctx.x_shape) if need_x else None,
            dpre.T @ rows if need_w1 else None,
            db1,
            g.T @ h if need_w2 else None,
            backend.column_sums(g) if need_b2 else None,
        )


def feed_forward(x, w1, b1, w2, b2, activation="relu", keep=None, scale=1.0) -> tuple:
    """FeedForward's forward on arrays: (y, (x as rows, h, pre or None, keep as rows))."""
    rows = _rows_view(x)  # (M, E): a view unless x is non-contiguous
    z = backend.rows_product(rows, w1)
    keep_rows = None if keep is None else keep.reshape(z.shape)
    scale = 1.0 if keep is None else scale  # (no dropout, no scaling)
    if activation == "relu":
        pre = None
        h = backend.bias_relu_dropout(z, b1, keep_rows, scale)
    else:
        pre, h = backend.bias_gelu_dropout(z, b1, keep_rows, scale, "tanh" if activation == "gelu_tanh" else "none")
    y = affine(h, w2, b2, x.shape[:-1] + w2.shape[:1])
    return y, (rows, h, pre, keep_rows)
