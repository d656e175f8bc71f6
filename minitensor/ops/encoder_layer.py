"""``EncoderLayer``: a whole Transformer encoder layer as one graph node.

The layer's sub-layers are fused ops of their own (``SelfAttention``, ``AddLayerNorm``,
``LayerNorm``, ``FeedForward``).  As four to eight graph nodes, a small layer spends more time on
the graph's bookkeeping (recording each node and its saved arrays, checking their versions,
routing each gradient) than on its math: measured on a tiny layer (2 x 12 tokens, E = 64), one
node made forward + backward 14-17% faster.  So the layer records one node, which runs the
sub-layers' own forwards and, in reverse, their own backwards: the same code as the separate
nodes, so the same numbers, each sub-layer on a context (``Node``) of its own, kept with the
node's state and released with it.

Post-LN (``norm_first=False``)::

    a = SelfAttention(x)                 y1 = AddLayerNorm(x, a)      norm1, dropout1
    f = FeedForward(y1)                  y  = AddLayerNorm(y1, f)     norm2, dropout3

Pre-LN (``norm_first=True``; ``mask1``, ``mask3``: dropout multipliers drawn as ``F.dropout``'s)::

    a = SelfAttention(LayerNorm(x))      x1 = x + a * mask1           norm1, dropout1
    f = FeedForward(LayerNorm(x1))       y  = x1 + f * mask3          norm2, dropout3

Backward runs the steps in reverse; where a tensor feeds two steps (the residuals), its gradient
is the sum of the two.  A sub-layer's backward runs only when some input needs what it returns.
With ``create_graph=True`` the gradients come from ``layer_graph``, the same steps as separate
nodes on Tensors (each fused op's own second-order path).  In eval mode under ``no_grad`` the layer
calls ``layer_arrays`` instead: the same steps on arrays through the sub-layers' array functions,
no node and nothing kept (PyTorch's "fast path" for this layer).

Inputs, in order: ``x``, the attention's ``in_weight, in_bias, out_weight, out_bias``, norm1's
``weight, bias``, the feed-forward's ``w1, b1, w2, b2``, norm2's ``weight, bias``.
"""

from __future__ import annotations

from ..autograd._profiling import forward as _timed
from ._sublayers import add_grads, dropped, sub_backward, sub_forward
from .attention import SelfAttention, self_attention
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


class EncoderLayer(Op):
    """A Transformer encoder layer as one node (see the module docstring).

    Call as ``EncoderLayer.apply(x, *weights, norm_first=b, attention=dict(...), norm1=dict(...),
    feed_forward=dict(...), norm2=dict(...), mask1=m1, mask3=m3)``: ``x`` (N, L, E) or (L, N, E),
    the 12 weights (biases may be None); each dict holds the settings of its sub-layer's op
    (``SelfAttention``; ``AddLayerNorm`` post-LN, ``LayerNorm`` pre-LN; ``FeedForward``); ``mask1``,
    ``mask3`` (pre-LN) the residual dropouts' multipliers shaped like ``x``, or None.
    """

    @staticmethod
    def forward(ctx, x, *weights, norm_first=False, attention=None, norm1=None, feed_forward=None, norm2=None,
                mask1=None, mask3=None):  # fmt: skip
        settings = {"norm_first": norm_first, "attention": attention, "norm1": norm1,
                    "feed_forward": feed_forward, "norm2": norm2, "mask1": mask1, "mask3": mask3}  # fmt: skip
        run = _pre_ln_forward if norm_first else _post_ln_forward
        y, parts = run(ctx.needs_input_grad, x, weights, settings)
        save_with_state(ctx, x, *weights, state=(parts, settings))
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, (parts, settings) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(layer_graph, inputs, ctx, grad, **settings)
        run = _pre_ln_backward if settings["norm_first"] else _post_ln_backward
        return run(parts, grad, settings)


# ------------------------------------------------------------------ post-LN
def _post_ln_forward(needs: tuple, x, weights: tuple, settings: dict) -> tuple:
    """y and the sub-layers' contexts (SelfAttention, AddLayerNorm, FeedForward, AddLayerNorm)."""
    need_x = needs[0]
    need_a = need_x or any(needs[1:5])  # a's gradient reaches x or the attention's weights
    need_y1 = need_a or any(needs[5:7])
    need_f = need_y1 or any(needs[7:11])
    a, attend = sub_forward(SelfAttention, (need_x, *needs[1:5]), x, *weights[0:4], **settings["attention"])
    y1, norm1 = sub_forward(AddLayerNorm, (need_x, need_a, *needs[5:7]), x, a, *weights[4:6], **settings["norm1"])
    f, ff = sub_forward(FeedForward, (need_y1, *needs[7:11]), y1, *weights[6:10], **settings["feed_forward"])
    y, norm2 = sub_forward(AddLayerNorm, (need_y1, need_f, *needs[11:13]), y1, f, *weights[10:12], **settings["norm2"])
    return y, (attend, norm1, ff, norm2)


def _post_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
    attend, norm1, ff, norm2 = parts
    g_y1, g_f, *d_norm2 = sub_backward(norm2, grad)
    g_y1_ff, *d_ff = sub_backward(ff, g_f, 5)
    g_y1 = add_grads(g_y1, g_y1_ff)
    g_x, g_a, *d_norm1 = sub_backward(norm1, g_y1, 4)
    g_x_attend, *d_attend = sub_backward(attend, g_a, 5)
    return (add_grads(g_x, g_x_attend), *d_attend, *d_norm1, *d_ff, *d_norm2)


# ------------------------------------------------------------------ pre-LN
def _pre_ln_forward(needs: tuple, x, weights: tuple, settings: dict) -> tuple:
    """y and the sub-layers' contexts (LayerNorm, SelfAttention, LayerNorm, FeedForward)."""
    need_x = needs[0]
    need_h1 = need_x or any(needs[5:7])  # LayerNorm(x)'s gradient reaches x or norm1's weights
    need_x1 = need_x or any(needs[1:7])
    need_h2 = need_x1 or any(needs[11:13])
    h1, norm1 = sub_forward(LayerNorm, (need_x, *needs[5:7]), x, *weights[4:6], **settings["norm1"])
    a, attend = sub_forward(SelfAttention, (need_h1, *needs[1:5]), h1, *weights[0:4], **settings["attention"])
    x1 = x + dropped(a, settings["mask1"])
    h2, norm2 = sub_forward(LayerNorm, (need_x1, *needs[11:13]), x1, *weights[10:12], **settings["norm2"])
    f, ff = sub_forward(FeedForward, (need_h2, *needs[7:11]), h2, *weights[6:10], **settings["feed_forward"])
    return x1 + dropped(f, settings["mask3"]), (norm1, attend, norm2, ff)


def _pre_ln_backward(parts: tuple, grad, settings: dict) -> tuple:
    norm1, attend, norm2, ff = parts
    g_h2, *d_ff = sub_backward(ff, dropped(grad, settings["mask3"]), 5)
    g_x1_norm, *d_norm2 = sub_backward(norm2, g_h2, 3)
    g_x1 = add_grads(grad, g_x1_norm)
    g_h1, *d_attend = sub_backward(attend, dropped(g_x1, settings["mask1"]), 5)
    g_x_norm, *d_norm1 = sub_backward(norm1, g_h1, 3)
    return (add_grads(g_x1, g_x_norm) if norm1.needs_input_grad[0] else None, *d_attend, *d_norm1, *d_ff, *d_norm2)


# ------------------------------------------------------------------ inference: arrays only
def layer_arrays(x, *weights, norm_first, attention, norm1, feed_forward, norm2, mask1=None, mask3=None):
    """The layer's output array for the array ``x``, nothing recorded or kept: the sub-layers' array
    functions (what their ops' forwards run), each timed under its op's name while profiling."""
    in_w, in_b, out_w, out_b, n1_w, n1_b, w1, b1, w2, b2, n2_w, n2_b = weights
    attend = (in_w, in_b, out_w, out_b)
    if norm_first:
        h = _timed("LayerNorm", layer_norm_last, x, n1_w, n1_b, norm1["eps"])
        x = x + dropped(_timed("SelfAttention", self_attention, h, *attend, keep_probs=False, **attention)[0], mask1)
        h = _timed("LayerNorm", layer_norm_last, x, n2_w, n2_b, norm2["eps"])
        return x + dropped(_timed("FeedForward", feed_forward_arrays, h, w1, b1, w2, b2, **feed_forward)[0], mask3)
    a = _timed("SelfAttention", self_attention, x, *attend, keep_probs=False, **attention)[0]
    x = _timed("AddLayerNorm", add_layer_norm, x, a, n1_w, n1_b, **norm1)[0]
    f = _timed("FeedForward", feed_forward_arrays, x, w1, b1, w2, b2, **feed_forward)[0]
    return _timed("AddLayerNorm", add_layer_norm, x, f, n2_w, n2_b, **norm2)[0]


# ------------------------------------------------------------------ the graph (create_graph)
def layer_graph(x, *weights, norm_first, attention, norm1, feed_forward, norm2, mask1, mask3):
    """The layer as separate nodes of the fused ops, on Tensors (``EncoderLayer``'s create_graph path)."""
    in_w, in_b, out_w, out_b, n1_w, n1_b, w1, b1, w2, b2, n2_w, n2_b = weights
    if not norm_first:
        y1 = AddLayerNorm.apply(x, SelfAttention.apply(x, in_w, in_b, out_w, out_b, **attention), n1_w, n1_b, **norm1)
        return AddLayerNorm.apply(y1, FeedForward.apply(y1, w1, b1, w2, b2, **feed_forward), n2_w, n2_b, **norm2)
    a = SelfAttention.apply(LayerNorm.apply(x, n1_w, n1_b, **norm1), in_w, in_b, out_w, out_b, **attention)
    x1 = x + dropped(a, mask1)
    f = FeedForward.apply(LayerNorm.apply(x1, n2_w, n2_b, **norm2), w1, b1, w2, b2, **feed_forward)
    return x1 + dropped(f, mask3)
