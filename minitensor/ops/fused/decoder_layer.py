"""``DecoderLayer``: a whole Transformer decoder layer as one graph node.

What ``EncoderLayer`` (``encoder_layer.py``) does for the encoder layer, with one sub-layer more:
the attention to the encoder's output ``memory`` (``CrossAttention``).  The composite it replaces
is ``nn.TransformerDecoderLayer.forward`` (``_sa_block``, ``_mha_block``, ``_ff_block`` and three
norms, module by module).

Post-LN (``norm_first=False``)::

    a = SelfAttention(x)              y1 = AddLayerNorm(x, a)       norm1, dropout1
    c = CrossAttention(y1, memory)    y2 = AddLayerNorm(y1, c)      norm2, dropout2
    f = FeedForward(y2)               y  = AddLayerNorm(y2, f)      norm3, dropout3

Pre-LN (``norm_first=True``; ``mask1..3``: dropout multipliers drawn as ``F.dropout``'s)::

    a = SelfAttention(LayerNorm(x))              x1 = x + a * mask1      norm1, dropout1
    c = CrossAttention(LayerNorm(x1), memory)    x2 = x1 + c * mask2     norm2, dropout2
    f = FeedForward(LayerNorm(x2))               y  = x2 + f * mask3     norm3, dropout3

Under ``no_grad`` the same forward runs and keeps nothing; with ``create_graph=True`` the
gradients are those of the composite itself (``definition``).
"""

from __future__ import annotations

import numpy as np

from ...autograd import batching
from ..nn_ops import LayerNorm, Op, save_with_state
from .add_norm import AddLayerNorm
from .attention import CrossAttention, SelfAttention
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

# The node's inputs after x and memory, by sub-layer (the parameters of the layer's modules, in this order).
SELF = ("self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj_weight", "self_attn.out_proj_bias")
NORM1 = ("norm1_weight", "norm1_bias")
CROSS = ("cross_attn.in_proj_weight", "cross_attn.in_proj_bias", "cross_attn.out_proj_weight",
         "cross_attn.out_proj_bias")  # fmt: skip
NORM2 = ("norm2_weight", "norm2_bias")
FEED = ("linear1_weight", "linear1_bias", "linear2_weight", "linear2_bias")
NORM3 = ("norm3_weight", "norm3_bias")
WEIGHTS = SELF + NORM1 + CROSS + NORM2 + FEED + NORM3
SUBLAYERS = layout(SELF, NORM1, CROSS, NORM2, FEED, NORM3)


class DecoderLayer(Op):
    """A Transformer decoder layer as one node (see the module docstring).

    Call as ``DecoderLayer.apply(x, memory, *weights, layer=settings)``: ``x`` (N, T, E) or (T, N, E),
    ``memory`` (N, S, E) or (S, N, E), the weights named by ``WEIGHTS`` (biases may be None);
    ``settings`` a dict of ``norm_first``; the settings of each sub-layer's op as a dict:
    ``self_attention``, ``cross_attention``, ``norm1``, ``norm2``, ``norm3``, ``feed_forward``;
    ``mask1..3`` (pre-LN) the residual dropouts' multipliers shaped like ``x``, or None;
    ``definition`` the layer's composite ``f(x, memory)``.
    """

    @staticmethod
    def forward(ctx, x, memory, *weights, layer):
        needs = ctx.needs_input_grad  # x, memory, then the weights
        run = _pre_ln_forward if layer["norm_first"] else _post_ln_forward
        weights_by, needs_by = by_sublayer(weights, SUBLAYERS), by_sublayer(needs[2:], SUBLAYERS)
        y, parts = run(x, memory, needs[:2], weights_by, needs_by, layer)
        save_with_state(ctx, x, memory, *weights, state=parts)
        ctx.settings, ctx.definition = layer, layer["definition"]
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, parts = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph (a Tensor gradient): the composite's
            return definition_grads(ctx.definition, inputs, grad, ctx.needs_input_grad, activations=2)
        return (_pre_ln_backward if ctx.settings["norm_first"] else _post_ln_backward)(parts, grad, ctx.settings)

    @staticmethod
    def jvp(ctx, *tangents):
        return definition_jvp(ctx, tangents, activations=2)

    @staticmethod
    def batch(b):  # vmap: the layer's definition, whose ops have rules (module weights may be batched too)
        inputs = [batching.wrap(v, b.level) if is_b else v for v, is_b in zip(b.values, b.batched)]
        return b.settings["layer"]["definition"](*inputs[:2])


# ------------------------------------------------------------------ post-LN
def _post_ln_forward(x, memory, need_inputs: tuple, weights: list, needs: list, settings: dict) -> tuple:
    """y and the sub-layers' contexts (SelfAttention, AddLayerNorm, CrossAttention, AddLayerNorm,
    FeedForward, AddLayerNorm); ``need_inputs`` for x and memory, ``weights`` and ``needs`` (whether
    each weight needs a gradient) by sub-layer."""
    need_x, need_m = need_inputs
    w_self, w_norm1, w_cross, w_norm2, w_ff, w_norm3 = weights
    n_self, n_norm1, n_cross, n_norm2, n_ff, n_norm3 = needs
    need_a = need_x or True in n_self  # a's gradient reaches x or the self-attention's weights
    need_y1 = need_a or True in n_norm1
    need_c = need_y1 or need_m or True in n_cross
    need_y2 = need_c or True in n_norm2
    need_f = need_y2 or True in n_ff
    a, attend = sub_forward(SelfAttention, (need_x, *n_self), (x, *w_self), settings["self_attention"])
    y1, norm1 = sub_forward(AddLayerNorm, (need_x, need_a, *n_norm1), (x, a, *w_norm1), settings["norm1"])
    c, cross = sub_forward(CrossAttention, (need_y1, need_m, *n_cross), (y1, memory, *w_cross),
                           settings["cross_attention"])  # fmt: skip
    y2, norm2 = sub_forward(AddLayerNorm, (need_y1, need_c, *n_norm2), (y1, c, *w_norm2), settings["norm2"])
    f, ff = sub_forward(FeedForward, (need_y2, *n_ff), (y2, *w_ff), settings["feed_forward"])
    y, norm3 = sub_forward(AddLayerNorm, (need_y2, need_f, *n_norm3), (y2, f, *w_norm3), settings["norm3"])
    return y, (attend, norm1, cross, norm2, ff, norm3)


def _post_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
    """The node's gradients (x, memory, then the weights in ``WEIGHTS`` order)."""
    attend, norm1, cross, norm2, ff, norm3 = parts
    g_y2, g_f, *d_norm3 = sub_backward(norm3, grad)
    g_y2_ff, *d_ff = sub_backward(ff, g_f, 5)
    g_y1, g_c, *d_norm2 = sub_backward(norm2, add_grads(g_y2, g_y2_ff), 4)
    g_y1_cross, g_memory, *d_cross = sub_backward(cross, g_c, 6)
    g_x, g_a, *d_norm1 = sub_backward(norm1, add_grads(g_y1, g_y1_cross), 4)
    g_x_attend, *d_attend = sub_backward(attend, g_a, 5)
    return (add_grads(g_x, g_x_attend), g_memory, *d_attend, *d_norm1, *d_cross, *d_norm2, *d_ff, *d_norm3)


# ------------------------------------------------------------------ pre-LN
def _pre_ln_forward(x, memory, need_inputs: tuple, weights: list, needs: list, settings: dict) -> tuple:
    """y and the sub-layers' contexts (LayerNorm, SelfAttention, LayerNorm, CrossAttention, LayerNorm,
    FeedForward)."""
    need_x, need_m = need_inputs
    w_self, w_norm1, w_cross, w_norm2, w_ff, w_norm3 = weights
    n_self, n_norm1, n_cross, n_norm2, n_ff, n_norm3 = needs
    need_h1 = need_x or True in n_norm1  # LayerNorm(x)'s gradient reaches x or norm1's weights
    need_x1 = need_h1 or True in n_self
    need_h2 = need_x1 or True in n_norm2
    need_x2 = need_h2 or need_m or True in n_cross
    need_h3 = need_x2 or True in n_norm3
    h1, norm1 = sub_forward(LayerNorm, (need_x, *n_norm1), (x, *w_norm1), settings["norm1"])
    a, attend = sub_forward(SelfAttention, (need_h1, *n_self), (h1, *w_self), settings["self_attention"])
    x1 = x + dropped(a, settings["mask1"])
    h2, norm2 = sub_forward(LayerNorm, (need_x1, *n_norm2), (x1, *w_norm2), settings["norm2"])
    c, cross = sub_forward(CrossAttention, (need_h2, need_m, *n_cross), (h2, memory, *w_cross),
                           settings["cross_attention"])  # fmt: skip
    x2 = x1 + dropped(c, settings["mask2"])
    h3, norm3 = sub_forward(LayerNorm, (need_x2, *n_norm3), (x2, *w_norm3), settings["norm3"])
    f, ff = sub_forward(FeedForward, (need_h3, *n_ff), (h3, *w_ff), settings["feed_forward"])
    return x2 + dropped(f, settings["mask3"]), (norm1, attend, norm2, cross, norm3, ff)


def _pre_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
    """The node's gradients (x, memory, then the weights in ``WEIGHTS`` order)."""
    norm1, attend, norm2, cross, norm3, ff = parts
    g_h3, *d_ff = sub_backward(ff, dropped(grad, settings["mask3"]), 5)
    g_x2_norm, *d_norm3 = sub_backward(norm3, g_h3, 3)
    g_x2 = add_grads(grad, g_x2_norm)
    g_h2, g_memory, *d_cross = sub_backward(cross, dropped(g_x2, settings["mask2"]), 6)
    g_x1_norm, *d_norm2 = sub_backward(norm2, g_h2, 3)
    g_x1 = add_grads(g_x2, g_x1_norm)
    g_h1, *d_attend = sub_backward(attend, dropped(g_x1, settings["mask1"]), 5)
    g_x_norm, *d_norm1 = sub_backward(norm1, g_h1, 3)
    g_x = add_grads(g_x1, g_x_norm) if norm1.needs_input_grad[0] else None
    return (g_x, g_memory, *d_attend, *d_norm1, *d_cross, *d_norm2, *d_ff, *d_norm3)
