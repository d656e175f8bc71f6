"""``EncoderLayer``: a whole Transformer encoder layer as one graph node.

The composite it replaces is ``nn.TransformerEncoderLayer.forward`` (PyTorch's ``_sa_block``,
``_ff_block`` and the two norms, module by module: eight to ten nodes).  On a small layer the
graph's bookkeeping (recording each node and its saved arrays, checking their versions,
routing each gradient) costs more than its math, so ``nn/fusion.py`` runs a layer of the
standard sub-modules as this one node instead, which runs the fused sub-layers
(``SelfAttention``, ``AddLayerNorm``, ``LayerNorm``, ``FeedForward``) each on a context of its
own and, in reverse, their backwards (``parts.py``).

Post-LN (``norm_first=False``)::

    a = SelfAttention(x)                 y1 = AddLayerNorm(x, a)      norm1, dropout1
    f = FeedForward(y1)                  y  = AddLayerNorm(y1, f)     norm2, dropout3

Pre-LN (``norm_first=True``; ``mask1``, ``mask3``: dropout multipliers drawn as ``F.dropout``'s)::

    a = SelfAttention(LayerNorm(x))      x1 = x + a * mask1           norm1, dropout1
    f = FeedForward(LayerNorm(x1))       y  = x1 + f * mask3          norm2, dropout3

Backward runs the steps in reverse; where a tensor feeds two steps (the residuals), its gradient
is the sum of the two, and a sub-layer's backward runs only when some input needs what it
returns.  Under ``no_grad`` the same forward runs and keeps nothing.  With ``create_graph=True``
the gradients are those of the composite itself (``definition``): tests hold the node equal to it.
"""

from __future__ import annotations

import numpy as np

from ...autograd import batching
from ..nn_ops import LayerNorm, Op, save_with_state
from .add_norm import AddLayerNorm
from .attention import SelfAttention
from .feed_forward import FeedForward
from .parts import (
    add_grads,
    by_sublayer,
    definition_grads,
    definition_jvp,
    dropped,
    layout,
    sub_backward,
    sub_forward,
)

# The node's inputs after x, by sub-layer (the parameters of the layer's modules, in this order).
ATTENTION = ("in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias")
NORM1 = ("norm1_weight", "norm1_bias")
FEED = ("linear1_weight", "linear1_bias", "linear2_weight", "linear2_bias")
NORM2 = ("norm2_weight", "norm2_bias")
WEIGHTS = ATTENTION + NORM1 + FEED + NORM2
SUBLAYERS = layout(ATTENTION, NORM1, FEED, NORM2)


class EncoderLayer(Op):
    """A Transformer encoder layer as one node (see the module docstring).

    Call as ``EncoderLayer.apply(x, *weights, layer=settings)``: ``x`` (N, L, E) or (L, N, E), the
    weights named by ``WEIGHTS`` (biases may be None); ``settings`` a dict of ``norm_first``; the
    settings of each sub-layer's op as a dict: ``attention`` (``SelfAttention``), ``norm1`` and
    ``norm2`` (``AddLayerNorm`` post-LN, ``LayerNorm`` pre-LN), ``feed_forward`` (``FeedForward``);
    ``mask1``, ``mask3`` (pre-LN) the residual dropouts' multipliers shaped like ``x``, or None;
    ``definition`` the layer's composite ``f(x)`` (for ``create_graph``).
    """

    @staticmethod
    def forward(ctx, x, *weights, layer):
        needs = ctx.needs_input_grad  # x, then the weights
        run = _pre_ln_forward if layer["norm_first"] else _post_ln_forward
        y, parts = run(x, needs[0], by_sublayer(weights, SUBLAYERS), by_sublayer(needs[1:], SUBLAYERS), layer)
        save_with_state(ctx, x, *weights, state=parts)
        ctx.settings, ctx.definition = layer, layer["definition"]
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, parts = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph (a Tensor gradient): the composite's
            return definition_grads(ctx.definition, inputs, grad, ctx.needs_input_grad, activations=1)
        return (_pre_ln_backward if ctx.settings["norm_first"] else _post_ln_backward)(parts, grad, ctx.settings)

    @staticmethod
    def jvp(ctx, *tangents):
        return definition_jvp(ctx, tangents, activations=1)

    @staticmethod
    def batch(b):  # vmap: the layer's definition, whose ops have rules (module weights may be batched too)
        inputs = [batching.wrap(v, b.level) if is_b else v for v, is_b in zip(b.values, b.batched)]
        return b.settings["layer"]["definition"](*inputs[:1])


# ------------------------------------------------------------------ post-LN
def _post_ln_forward(x, need_x: bool, weights: list, needs: list, settings: dict) -> tuple:
    """y and the sub-layers' contexts (SelfAttention, AddLayerNorm, FeedForward, AddLayerNorm);
    ``weights`` and ``needs`` (whether each weight needs a gradient) by sub-layer."""
    w_attend, w_norm1, w_ff, w_norm2 = weights
    n_attend, n_norm1, n_ff, n_norm2 = needs
    need_a = need_x or True in n_attend  # a's gradient reaches x or the attention's weights
    need_y1 = need_a or True in n_norm1
    need_f = need_y1 or True in n_ff
    a, attend = sub_forward(SelfAttention, (need_x, *n_attend), (x, *w_attend), settings["attention"])
    y1, norm1 = sub_forward(AddLayerNorm, (need_x, need_a, *n_norm1), (x, a, *w_norm1), settings["norm1"])
    f, ff = sub_forward(FeedForward, (need_y1, *n_ff), (y1, *w_ff), settings["feed_forward"])
    y, norm2 = sub_forward(AddLayerNorm, (need_y1, need_f, *n_norm2), (y1, f, *w_norm2), settings["norm2"])
    return y, (attend, norm1, ff, norm2)


def _post_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
    """The node's gradients (x, then the weights in ``WEIGHTS`` order)."""
    attend, norm1, ff, norm2 = parts
    g_y1, g_f, *d_norm2 = sub_backward(norm2, grad)
    g_y1_ff, *d_ff = sub_backward(ff, g_f, 5)
    g_y1 = add_grads(g_y1, g_y1_ff)
    g_x, g_a, *d_norm1 = sub_backward(norm1, g_y1, 4)
    g_x_attend, *d_attend = sub_backward(attend, g_a, 5)
    return (add_grads(g_x, g_x_attend), *d_attend, *d_norm1, *d_ff, *d_norm2)


# ------------------------------------------------------------------ pre-LN
def _pre_ln_forward(x, need_x: bool, weights: list, needs: list, settings: dict) -> tuple:
    """y and the sub-layers' contexts (LayerNorm, SelfAttention, LayerNorm, FeedForward)."""
    w_attend, w_norm1, w_ff, w_norm2 = weights
    n_attend, n_norm1, n_ff, n_norm2 = needs
    need_h1 = need_x or True in n_norm1  # LayerNorm(x)'s gradient reaches x or norm1's weights
    need_x1 = need_h1 or True in n_attend
    need_h2 = need_x1 or True in n_norm2
    h1, norm1 = sub_forward(LayerNorm, (need_x, *n_norm1), (x, *w_norm1), settings["norm1"])
    a, attend = sub_forward(SelfAttention, (need_h1, *n_attend), (h1, *w_attend), settings["attention"])
    x1 = x + dropped(a, settings["mask1"])
    h2, norm2 = sub_forward(LayerNorm, (need_x1, *n_norm2), (x1, *w_norm2), settings["norm2"])
    f, ff = sub_forward(FeedForward, (need_h2, *n_ff), (h2, *w_ff), settings["feed_forward"])
    return x1 + dropped(f, settings["mask3"]), (norm1, attend, norm2, ff)


def _pre_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
    """The node's gradients (x, then the weights in ``WEIGHTS`` order)."""
    norm1, attend, norm2, ff = parts
    g_h2, *d_ff = sub_backward(ff, dropped(grad, settings["mask3"]), 5)
    g_x1_norm, *d_norm2 = sub_backward(norm2, g_h2, 3)
    g_x1 = add_grads(grad, g_x1_norm)
    g_h1, *d_attend = sub_backward(attend, dropped(g_x1, settings["mask1"]), 5)
    g_x_norm, *d_norm1 = sub_backward(norm1, g_h1, 3)
    g_x = add_grads(g_x1, g_x_norm) if norm1.needs_input_grad[0] else None
    return (g_x, *d_attend, *d_norm1, *d_ff, *d_norm2)
