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

# The node's inputs after x, by sub-layer (the parameters of the layer's modules, in this order).
ATTENTION = ("in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias")
NORM1 = ("norm1_weight", "norm1_bias")
FEED = ("linear1_weight", "linear1_bias", "linear2_weight", "linear2_bias")
NORM2 = ("norm2_weight", "norm2_bias")
WEIGHTS = ATTENTION + NORM1 + FEED + NORM2


class EncoderLayer(Op):
    """A Transformer encoder layer as one node (see the module docstring).

    Call as ``EncoderLayer.apply(x, *weights, norm_first=b, attention=dict(...), norm1=dict(...),
    feed_forward=dict(...), norm2=dict(...), mask1=m1, mask3=m3, definition=f)``: ``x`` (N, L, E) or
    (L, N, E), the weights named by ``WEIGHTS`` (biases may be None); each dict holds the settings
    of its sub-layer's op (``SelfAttention``; ``AddLayerNorm`` post-LN, ``LayerNorm`` pre-LN;
    ``FeedForward``); ``mask1``, ``mask3`` (pre-LN) the residual dropouts' multipliers shaped like
    ``x``, or None; ``f(x)`` the layer's composite (for ``create_graph``).
    """

    @staticmethod
    def forward(ctx, x, *weights, norm_first=False, attention=None, norm1=None, feed_forward=None, norm2=None,
                mask1=None, mask3=None, definition=None):  # fmt: skip
        settings = {"attention": attention, "norm1": norm1, "feed_forward": feed_forward, "norm2": norm2,
                    "mask1": mask1, "mask3": mask3}  # fmt: skip
        need = dict(zip(("x", *WEIGHTS), ctx.needs_input_grad))
        run = _pre_ln_forward if norm_first else _post_ln_forward
        y, parts = run(need, x, dict(zip(WEIGHTS, weights)), settings)
        save_with_state(ctx, x, *weights, state=parts)
        ctx.norm_first, ctx.settings, ctx.definition = norm_first, settings, definition
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, parts = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph (a Tensor gradient): the composite's
            return definition_grads(ctx.definition, inputs, grad, ctx.needs_input_grad, activations=1)
        grads = (_pre_ln_backward if ctx.norm_first else _post_ln_backward)(parts, grad, ctx.settings)
        return tuple(grads.get(name) for name in ("x", *WEIGHTS))

    @staticmethod
    def jvp(ctx, *tangents):
        return definition_jvp(ctx, tangents, activations=1)

    @staticmethod
    def batch(b):  # vmap: the layer's definition, whose ops have rules (module weights may be batched too)
        inputs = [batching.wrap(v, b.level) if is_b else v for v, is_b in zip(b.values, b.batched)]
        return b.settings["definition"](*inputs[:1])


# ------------------------------------------------------------------ post-LN
def _post_ln_forward(need: dict, x, w: dict, settings: dict) -> tuple:
    """y and the sub-layers' contexts (SelfAttention, AddLayerNorm, FeedForward, AddLayerNorm)."""
    need_x = need["x"]
    need_a = need_x or any_need(need, ATTENTION)  # a's gradient reaches x or the attention's weights
    need_y1 = need_a or any_need(need, NORM1)
    need_f = need_y1 or any_need(need, FEED)
    a, attend = sub_forward(SelfAttention, needs_of(need, (need_x,), ATTENTION), x, *values_of(w, ATTENTION),
                            **settings["attention"])  # fmt: skip
    y1, norm1 = sub_forward(AddLayerNorm, needs_of(need, (need_x, need_a), NORM1), x, a, *values_of(w, NORM1),
                            **settings["norm1"])  # fmt: skip
    f, ff = sub_forward(FeedForward, needs_of(need, (need_y1,), FEED), y1, *values_of(w, FEED),
                        **settings["feed_forward"])  # fmt: skip
    y, norm2 = sub_forward(AddLayerNorm, needs_of(need, (need_y1, need_f), NORM2), y1, f, *values_of(w, NORM2),
                           **settings["norm2"])  # fmt: skip
    return y, (attend, norm1, ff, norm2)


def _post_ln_backward(parts: tuple, grad, settings: dict) -> dict:
    attend, norm1, ff, norm2 = parts
    g_y1, g_f, *d_norm2 = sub_backward(norm2, grad)
    g_y1_ff, *d_ff = sub_backward(ff, g_f, 5)
    g_y1 = add_grads(g_y1, g_y1_ff)
    g_x, g_a, *d_norm1 = sub_backward(norm1, g_y1, 4)
    g_x_attend, *d_attend = sub_backward(attend, g_a, 5)
    return {"x": add_grads(g_x, g_x_attend), **named(ATTENTION, d_attend), **named(NORM1, d_norm1),
            **named(FEED, d_ff), **named(NORM2, d_norm2)}  # fmt: skip


# ------------------------------------------------------------------ pre-LN
def _pre_ln_forward(need: dict, x, w: dict, settings: dict) -> tuple:
    """y and the sub-layers' contexts (LayerNorm, SelfAttention, LayerNorm, FeedForward)."""
    need_x = need["x"]
    need_h1 = need_x or any_need(need, NORM1)  # LayerNorm(x)'s gradient reaches x or norm1's weights
    need_x1 = need_h1 or any_need(need, ATTENTION)
    need_h2 = need_x1 or any_need(need, NORM2)
    h1, norm1 = sub_forward(LayerNorm, needs_of(need, (need_x,), NORM1), x, *values_of(w, NORM1), **settings["norm1"])
    a, attend = sub_forward(SelfAttention, needs_of(need, (need_h1,), ATTENTION), h1, *values_of(w, ATTENTION),
                            **settings["attention"])  # fmt: skip
    x1 = x + dropped(a, settings["mask1"])
    h2, norm2 = sub_forward(LayerNorm, needs_of(need, (need_x1,), NORM2), x1, *values_of(w, NORM2),
                            **settings["norm2"])  # fmt: skip
    f, ff = sub_forward(FeedForward, needs_of(need, (need_h2,), FEED), h2, *values_of(w, FEED),
                        **settings["feed_forward"])  # fmt: skip
    return x1 + dropped(f, settings["mask3"]), (norm1, attend, norm2, ff)


def _pre_ln_backward(parts: tuple, grad, settings: dict) -> dict:
    norm1, attend, norm2, ff = parts
    g_h2, *d_ff = sub_backward(ff, dropped(grad, settings["mask3"]), 5)
    g_x1_norm, *d_norm2 = sub_backward(norm2, g_h2, 3)
    g_x1 = add_grads(grad, g_x1_norm)
    g_h1, *d_attend = sub_backward(attend, dropped(g_x1, settings["mask1"]), 5)
    g_x_norm, *d_norm1 = sub_backward(norm1, g_h1, 3)
    g_x = add_grads(g_x1, g_x_norm) if norm1.needs_input_grad[0] else None
    return {"x": g_x, **named(ATTENTION, d_attend), **named(NORM1, d_norm1), **named(FEED, d_ff),
            **named(NORM2, d_norm2)}  # fmt: skip
