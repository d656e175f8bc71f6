"""``DecoderLayer``: a whole Transformer decoder layer as one graph node.

What ``EncoderLayer`` (``encoder_layer.py``) does for the encoder layer, with one sub-layer more:
the attention to the encoder's output ``memory`` (``CrossAttention``).  As six to nine graph nodes,
a small layer spends much of its time on the graph's bookkeeping; the node runs the sub-layers'
own forwards and, in reverse, their own backwards (``_sublayers.py``): the same code as the
separate nodes, so the same numbers.

Post-LN (``norm_first=False``)::

    a = SelfAttention(x)              y1 = AddLayerNorm(x, a)       norm1, dropout1
    c = CrossAttention(y1, memory)    y2 = AddLayerNorm(y1, c)      norm2, dropout2
    f = FeedForward(y2)               y  = AddLayerNorm(y2, f)      norm3, dropout3

Pre-LN (``norm_first=True``; ``mask1..3``: dropout multipliers drawn as ``F.dropout``'s)::

    a = SelfAttention(LayerNorm(x))              x1 = x + a * mask1      norm1, dropout1
    c = CrossAttention(LayerNorm(x1), memory)    x2 = x1 + c * mask2     norm2, dropout2
    f = FeedForward(LayerNorm(x2))               y  = x2 + f * mask3     norm3, dropout3

With ``create_graph=True`` the gradients come from ``layer_graph`` (the same steps as separate
nodes on Tensors); in eval mode under ``no_grad`` the layer calls ``layer_arrays`` (the same steps
on arrays, no node, nothing kept).

Inputs, in order: ``x`` (the target), ``memory``, then the weights in the order of the path: the
self-attention's ``in_weight, in_bias, out_weight, out_bias``, norm1's ``weight, bias``, the
cross-attention's four, norm2's two, the feed-forward's ``w1, b1, w2, b2``, norm3's two.
"""

from __future__ import annotations

from ..autograd._profiling import forward as _timed
from ._sublayers import add_grads, dropped, sub_backward, sub_forward
from .attention import CrossAttention, SelfAttention, cross_attention, self_attention
from .nn_ops import (
    AddLayerNorm,
    FeedForward,
    LayerNorm,
    Op,
    add_layer_norm,
    composite,
    layer_norm_last,
    on_arrays,
    save_with_state,
)
from .nn_ops import feed_forward as feed_forward_arrays  # (``feed_forward`` names a setting below)

# The node's inputs: x, memory, then these weights (see the module docstring).
SELF, NORM1, CROSS, NORM2 = slice(0, 4), slice(4, 6), slice(6, 10), slice(10, 12)
FEED, NORM3 = slice(12, 16), slice(16, 18)


class DecoderLayer(Op):
    """A Transformer decoder layer as one node (see the module docstring).

    Call as ``DecoderLayer.apply(x, memory, *weights, norm_first=b, self_attention=dict(...),
    cross_attention=dict(...), norm1=dict(...), norm2=dict(...), norm3=dict(...),
    feed_forward=dict(...), mask1=m1, mask2=m2, mask3=m3)``: ``x`` (N, T, E) or (T, N, E), ``memory``
    (N, S, E) or (S, N, E), the 18 weights (biases may be None); each dict holds the settings of its
    sub-layer's op; ``mask1..3`` (pre-LN) the residual dropouts' multipliers shaped like ``x``, or None.
    """

    @staticmethod
    def forward(ctx, x, memory, *weights, norm_first=False, self_attention=None, cross_attention=None,
                norm1=None, norm2=None, norm3=None, feed_forward=None, mask1=None, mask2=None, mask3=None):  # fmt: skip
        settings = {"norm_first": norm_first, "self_attention": self_attention, "cross_attention": cross_attention,
                    "norm1": norm1, "norm2": norm2, "norm3": norm3, "feed_forward": feed_forward,
                    "mask1": mask1, "mask2": mask2, "mask3": mask3}  # fmt: skip
        run = _pre_ln_forward if norm_first else _post_ln_forward
        y, parts = run(ctx.needs_input_grad, x, memory, weights, settings)
        save_with_state(ctx, x, memory, *weights, state=(parts, settings))
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, (parts, settings) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(layer_graph, inputs, ctx, grad, **settings)
        run = _pre_ln_backward if settings["norm_first"] else _post_ln_backward
        return run(parts, grad, settings)


def _needs(needs: tuple) -> tuple:
    """(x's, memory's, and each weight group's needs) from the node's ``needs_input_grad``."""
    w = needs[2:]
    return needs[0], needs[1], *(w[group] for group in (SELF, NORM1, CROSS, NORM2, FEED, NORM3))


# ------------------------------------------------------------------ post-LN
def _post_ln_forward(needs: tuple, x, memory, weights: tuple, settings: dict) -> tuple:
    """y and the sub-layers' contexts (SelfAttention, AddLayerNorm, CrossAttention, AddLayerNorm,
    FeedForward, AddLayerNorm)."""
    need_x, need_m, n_self, n_norm1, n_cross, n_norm2, n_feed, n_norm3 = _needs(needs)
    need_a = need_x or any(n_self)  # a's gradient reaches x or the self-attention's weights
    need_y1 = need_a or any(n_norm1)
    need_c = need_y1 or need_m or any(n_cross)
    need_y2 = need_c or any(n_norm2)
    need_f = need_y2 or any(n_feed)
    w = weights
    a, attend = sub_forward(SelfAttention, (need_x, *n_self), x, *w[SELF], **settings["self_attention"])
    y1, norm1 = sub_forward(AddLayerNorm, (need_x, need_a, *n_norm1), x, a, *w[NORM1], **settings["norm1"])
    c, cross = sub_forward(CrossAttention, (need_y1, need_m, *n_cross), y1, memory, *w[CROSS],
                           **settings["cross_attention"])  # fmt: skip
    y2, norm2 = sub_forward(AddLayerNorm, (need_y1, need_c, *n_norm2), y1, c, *w[NORM2], **settings["norm2"])
    f, ff = sub_forward(FeedForward, (need_y2, *n_feed), y2, *w[FEED], **settings["feed_forward"])
    y, norm3 = sub_forward(AddLayerNorm, (need_y2, need_f, *n_norm3), y2, f, *w[NORM3], **settings["norm3"])
    return y, (attend, norm1, cross, norm2, ff, norm3)


def _post_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
    attend, norm1, cross, norm2, ff, norm3 = parts
    g_y2, g_f, *d_norm3 = sub_backward(norm3, grad)
    g_y2_ff, *d_ff = sub_backward(ff, g_f, 5)
    g_y1, g_c, *d_norm2 = sub_backward(norm2, add_grads(g_y2, g_y2_ff), 4)
    g_y1_cross, g_memory, *d_cross = sub_backward(cross, g_c, 6)
    g_x, g_a, *d_norm1 = sub_backward(norm1, add_grads(g_y1, g_y1_cross), 4)
    g_x_attend, *d_attend = sub_backward(attend, g_a, 5)
    grads = (*d_attend, *d_norm1, *d_cross, *d_norm2, *d_ff, *d_norm3)
    return (add_grads(g_x, g_x_attend), g_memory, *grads)


# ------------------------------------------------------------------ pre-LN
def _pre_ln_forward(needs: tuple, x, memory, weights: tuple, settings: dict) -> tuple:
    """y and the sub-layers' contexts (LayerNorm, SelfAttention, LayerNorm, CrossAttention, LayerNorm,
    FeedForward)."""
    need_x, need_m, n_self, n_norm1, n_cross, n_norm2, n_feed, n_norm3 = _needs(needs)
    need_h1 = need_x or any(n_norm1)  # LayerNorm(x)'s gradient reaches x or norm1's weights
    need_x1 = need_h1 or any(n_self)
    need_h2 = need_x1 or any(n_norm2)
    need_x2 = need_h2 or need_m or any(n_cross)
    need_h3 = need_x2 or any(n_norm3)
    w = weights
    h1, norm1 = sub_forward(LayerNorm, (need_x, *n_norm1), x, *w[NORM1], **settings["norm1"])
    a, attend = sub_forward(SelfAttention, (need_h1, *n_self), h1, *w[SELF], **settings["self_attention"])
    x1 = x + dropped(a, settings["mask1"])
    h2, norm2 = sub_forward(LayerNorm, (need_x1, *n_norm2), x1, *w[NORM2], **settings["norm2"])
    c, cross = sub_forward(CrossAttention, (need_h2, need_m, *n_cross), h2, memory, *w[CROSS],
                           **settings["cross_attention"])  # fmt: skip
    x2 = x1 + dropped(c, settings["mask2"])
    h3, norm3 = sub_forward(LayerNorm, (need_x2, *n_norm3), x2, *w[NORM3], **settings["norm3"])
    f, ff = sub_forward(FeedForward, (need_h3, *n_feed), h3, *w[FEED], **settings["feed_forward"])
    return x2 + dropped(f, settings["mask3"]), (norm1, attend, norm2, cross, norm3, ff)


def _pre_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
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


# ------------------------------------------------------------------ inference: arrays only
def layer_arrays(x, memory, *weights, norm_first, self_attention, cross_attention, norm1, norm2, norm3,
                 feed_forward, mask1=None, mask2=None, mask3=None):  # fmt: skip
    """The layer's output array, nothing recorded or kept: the sub-layers' array functions (what
    their ops' forwards run), each timed under its op's name while profiling."""
    w = weights
    if norm_first:
        h = _timed("LayerNorm", layer_norm_last, x, *w[NORM1], norm1["eps"])
        x = x + dropped(_self_attention(h, w, self_attention), mask1)
        h = _timed("LayerNorm", layer_norm_last, x, *w[NORM2], norm2["eps"])
        x = x + dropped(_cross_attention(h, memory, w, cross_attention), mask2)
        h = _timed("LayerNorm", layer_norm_last, x, *w[NORM3], norm3["eps"])
        return x + dropped(_timed("FeedForward", feed_forward_arrays, h, *w[FEED], **feed_forward)[0], mask3)
    x = _timed("AddLayerNorm", add_layer_norm, x, _self_attention(x, w, self_attention), *w[NORM1], **norm1)[0]
    c = _cross_attention(x, memory, w, cross_attention)
    x = _timed("AddLayerNorm", add_layer_norm, x, c, *w[NORM2], **norm2)[0]
    f = _timed("FeedForward", feed_forward_arrays, x, *w[FEED], **feed_forward)[0]
    return _timed("AddLayerNorm", add_layer_norm, x, f, *w[NORM3], **norm3)[0]


def _self_attention(x, weights: tuple, settings: dict):
    return _timed("SelfAttention", self_attention, x, *weights[SELF], keep_probs=False, **settings)[0]


def _cross_attention(x, memory, weights: tuple, settings: dict):
    return _timed("CrossAttention", cross_attention, x, memory, *weights[CROSS], keep_probs=False, **settings)[0]


# ------------------------------------------------------------------ the graph (create_graph)
def layer_graph(x, memory, *weights, norm_first, self_attention, cross_attention, norm1, norm2, norm3,
                feed_forward, mask1, mask2, mask3):  # fmt: skip
    """The layer as separate nodes of the fused ops, on Tensors (``DecoderLayer``'s create_graph path)."""
    w = weights
    if not norm_first:
        y1 = AddLayerNorm.apply(x, SelfAttention.apply(x, *w[SELF], **self_attention), *w[NORM1], **norm1)
        c = CrossAttention.apply(y1, memory, *w[CROSS], **cross_attention)
        y2 = AddLayerNorm.apply(y1, c, *w[NORM2], **norm2)
        return AddLayerNorm.apply(y2, FeedForward.apply(y2, *w[FEED], **feed_forward), *w[NORM3], **norm3)
    a = SelfAttention.apply(LayerNorm.apply(x, *w[NORM1], **norm1), *w[SELF], **self_attention)
    x1 = x + dropped(a, mask1)
    c = CrossAttention.apply(LayerNorm.apply(x1, *w[NORM2], **norm2), memory, *w[CROSS], **cross_attention)
    x2 = x1 + dropped(c, mask2)
    f = FeedForward.apply(LayerNorm.apply(x2, *w[NORM3], **norm3), *w[FEED], **feed_forward)
    return x2 + dropped(f, mask3)
