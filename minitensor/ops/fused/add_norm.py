"""``AddLayerNorm``: a Transformer's "add & norm", ``norm(x + dropout(r))``, as one step.

The composite it replaces is ``nn.LayerNorm`` applied to ``x + nn.Dropout(r)``: an add, a dropout
and a layer norm, three passes over the activations and three nodes.  The kernel
(``kernels/layer_norm.py``) adds the residual, applies the dropout mask and normalises in one pass
over each row.  It is a part of the fused layer nodes (``encoder_layer.py``, ``decoder_layer.py``),
which run it on its own context (``parts.sub_forward``): its backward is first order only, the
layer node taking ``create_graph`` and forward mode (its ``jvp``) through the layer's definition.
"""

from __future__ import annotations

import numpy as np

from ... import backend
from ..nn_ops import Op, _rows, save_with_state


class AddLayerNorm(Op):
    """y = LayerNorm(x + dropout(r)) over the last dim.

    Run as ``sub_forward(AddLayerNorm, needs, x, r, weight, bias, eps=1e-5, keep=None, scale=1.0)``
    with x and r of the same shape (..., D), weight and bias (D,) or None, and ``keep`` None or a
    bool dropout mask on r (kept elements scaled by ``scale``).  Backward: with s = x + dropout(r),
    ``dx`` is layer norm's input gradient at s, and ``dr = dx * keep * scale``.
    """

    @staticmethod
    def forward(ctx, x, r, weight=None, bias=None, eps=1e-5, keep=None, scale=1.0):
        d = x.shape[-1]
        keep_rows = None if keep is None else keep.reshape(-1, d)
        y, s, mean, rstd = backend.layer_norm(
            _rows(x, d), weight, bias, eps, residual=_rows(r, d), keep=keep_rows, scale=scale, shape=x.shape
        )
        save_with_state(ctx, x, r, weight, bias, state=(s, mean, rstd))
        ctx.keep, ctx.scale = keep_rows, scale
        return y

    @staticmethod
    def backward(ctx, grad):
        _, _, weight, _, (s, mean, rstd) = ctx.saved_tensors
        dx, dw, db = backend.layer_norm_backward(grad, s, mean, rstd, weight)
        need_x, need_r, need_w, need_b = ctx.needs_input_grad
        dr = None
        if need_r:  # (dx has grad's shape, the mask the rows' (rows, D))
            dr = dx if ctx.keep is None else dx * (ctx.keep * np.asarray(ctx.scale, dx.dtype)).reshape(dx.shape)
        return dx if need_x else None, dr, dw if need_w else None, db if need_b else None
