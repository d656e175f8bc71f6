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
    any_need,
    definition_grads,
    definition_jvp,
    dropped,
    named,
    needs_of,
    sub_backward,
    sub_forward,
    values_of,
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


class DecoderLayer(Op):
    """A Transformer decoder layer as one node (see the module docstring).

    Call as ``DecoderLayer.apply(x, memory, *weights, norm_first=b, self_attention=dict(...),
    cross_attention=dict(...), norm1=dict(...), norm2=dict(...), norm3=dict(...),
    feed_forward=dict(...), mask1=m1, mask2=m2, mask3=m3, definition=f)``: ``x`` (N, T, E) or
    (T, N, E), ``memory`` (N, S, E) or (S, N, E), the weights named by ``WEIGHTS`` (biases may be
    None); each dict holds the settings of its sub-layer's op; ``mask1..3`` (pre-LN) the residual
    dropouts' multipliers shaped like ``x``, or None; ``f(x, memory)`` the layer's composite.
    """

    @staticmethod
    def forward(ctx, x, memory, *weights, norm_first=False, self_attention=None, cross_attention=None,
                norm1=None, norm2=None, norm3=None, feed_forward=None, mask1=None, mask2=None, mask3=None,
                definition=None):  # fmt: skip
        settings = {"self_attention": self_attention, "cross_attention": cross_attention, "norm1": norm1,
                    "norm2": norm2, "norm3": norm3, "feed_forward": feed_forward, "mask1": mask1, "mask2": mask2,
                    "mask3": mask3}  # fmt: skip
        need = dict(zip(("x", "memory", *WEIGHTS), ctx.needs_input_grad))
        run = _pre_ln_forward if norm_first else _post_ln_forward
        y, parts = run(need, x, memory, dict(zip(WEIGHTS, weights)), settings)
        save_with_state(ctx, x, memory, *weights, state=parts)
        ctx.norm_first, ctx.settings, ctx.definition = norm_first, settings, definition
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, parts = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph (a Tensor gradient): the composite's
            return definition_grads(ctx.definition, inputs, grad, ctx.needs_input_grad, activations=2)
        grads = (_pre_ln_backward if ctx.norm_first else _post_ln_backward)(parts, grad, ctx.settings)
        return tuple(grads.get(name) for name in ("x", "memory", *WEIGHTS))

    @staticmethod
    def jvp(ctx, *tangents):
        return definition_jvp(ctx, tangents, activations=2)

    @staticmethod
    def batch(b):  # vmap: the layer's definition, whose ops have rules (module weights may be batched too)
        inputs = [batching.wrap(v, b.level) if is_b else v for v, is_b in zip(b.values, b.batched)]
        return b.settings["definition"](*inputs[:2])


# ------------------------------------------------------------------ post-LN
def _post_ln_forward(need: dict, x, memory, w: dict, settings: dict) -> tuple:
    """y and the sub-layers' contexts (SelfAttention, AddLayerNorm, CrossAttention, AddLayerNorm,
    FeedForward, AddLayerNorm)."""
    need_x, need_m = need["x"], need["memory"]
    need_a = need_x or any_need(need, SELF)  # a's gradient reaches x or the self-attention's weights
    need_y1 = need_a or any_need(need, NORM1)
    need_c = need_y1 or need_m or any_need(need, CROSS)
    need_y2 = need_c or any_need(need, NORM2)
    need_f = need_y2 or any_need(need, FEED)
    a, attend = sub_forward(SelfAttention, needs_of(need, (need_x,), SELF), x, *values_of(w, SELF),
                            **settings["self_attention"])  # fmt: skip
    y1, norm1 = sub_forward(AddLayerNorm, needs_of(need, (need_x, need_a), NORM1), x, a, *values_of(w, NORM1),
                            **settings["norm1"])  # fmt: skip
    c, cross = sub_forward(CrossAttention, needs_of(need, (need_y1, need_m), CROSS), y1, memory, *values_of(w, CROSS),
                           **settings["cross_attention"])  # fmt: skip
    y2, norm2 = sub_forward(AddLayerNorm, needs_of(need, (need_y1, need_c), NORM2), y1, c, *values_of(w, NORM2),
                            **settings["norm2"])  # fmt: skip
    f, ff = sub_forward(FeedForward, needs_of(need, (need_y2,), FEED), y2, *values_of(w, FEED),
                        **settings["feed_forward"])  # fmt: skip
    y, norm3 = sub_forward(AddLayerNorm, needs_of(need, (need_y2, need_f), NORM3), y2, f, *values_of(w, NORM3),
                           **settings["norm3"])  # fmt: skip
    return y, (attend, norm1, cross, norm2, ff, norm3)


def _post_ln_backward(parts: tuple, grad, settings: dict) -> dict:
    attend, norm1, cross, norm2, ff, norm3 = parts
    g_y2, g_f, *d_norm3 = sub_backward(norm3, grad)
    g_y2_ff, *d_ff = sub_backward(ff, g_f, 5)
    g_y1, g_c, *d_norm2 = sub_backward(norm2, add_grads(g_y2, g_y2_ff), 4)
    g_y1_cross, g_memory, *d_cross = sub_backward(cross, g_c, 6)
    g_x, g_a, *d_norm1 = sub_backward(norm1, add_grads(g_y1, g_y1_cross), 4)
    g_x_attend, *d_attend = sub_backward(attend, g_a, 5)
    return {"x": add_grads(g_x, g_x_attend), "memory": g_memory, **named(SELF, d_attend), **named(NORM1, d_norm1),
            **named(CROSS, d_cross), **named(NORM2, d_norm2), **named(FEED, d_ff), **named(NORM3, d_norm3)}  # fmt: skip


# ------------------------------------------------------------------ pre-LN
def _pre_ln_forward(need: dict, x, memory, w: dict, settings: dict) -> tuple:
    """y and the sub-layers' contexts (LayerNorm, SelfAttention, LayerNorm, CrossAttention, LayerNorm,
    FeedForward)."""
    need_x, need_m = need["x"], need["memory"]
    need_h1 = need_x or any_need(need, NORM1)  # LayerNorm(x)'s gradient reaches x or norm1's weights
    need_x1 = need_h1 or any_need(need, SELF)
    need_h2 = need_x1 or any_need(need, NORM2)
    need_x2 = need_h2 or need_m or any_need(need, CROSS)
    need_h3 = need_x2 or any_need(need, NORM3)
    h1, norm1 = sub_forward(LayerNorm, needs_of(need, (need_x,), NORM1), x, *values_of(w, NORM1), **settings["norm1"])
    a, attend = sub_forward(SelfAttention, needs_of(need, (need_h1,), SELF), h1, *values_of(w, SELF),
                            **settings["self_attention"])  # fmt: skip
    x1 = x + dropped(a, settings["mask1"])
    h2, norm2 = sub_forward(LayerNorm, needs_of(need, (need_x1,), NORM2), x1, *values_of(w, NORM2), **settings["norm2"])
    c, cross = sub_forward(CrossAttention, needs_of(need, (need_h2, need_m), CROSS), h2, memory, *values_of(w, CROSS),
                           **settings["cross_attention"])  # fmt: skip
    x2 = x1 + dropped(c, settings["mask2"])
    h3, norm3 = sub_forward(LayerNorm, needs_of(need, (need_x2,), NORM3), x2, *values_of(w, NORM3), **settings["norm3"])
    f, ff = sub_forward(FeedForward, needs_of(need, (need_h3,), FEED), h3, *values_of(w, FEED),
                        **settings["feed_forward"])  # fmt: skip
    return x2 + dropped(f, settings["mask3"]), (norm1, attend, norm2, cross, norm3, ff)


def _pre_ln_backward(parts: tuple, grad, settings: dict) -> dict:
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
    return {"x": g_x, "memory": g_memory, **named(SELF, d_attend), **named(NORM1, d_norm1),
            **named(CROSS, d_cross), **named(NORM2, d_norm2), **named(FEED, d_ff), **named(NORM3, d_norm3)}  # fmt: skip
