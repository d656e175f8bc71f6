"""Running fused sub-layers inside one graph node (``encoder_layer.py``, ``decoder_layer.py``).

A layer node calls its sub-layers' ops (``SelfAttention``, ``CrossAttention``, ``AddLayerNorm``,
``LayerNorm``, ``FeedForward``) directly: each forward on a context (``Node``) of its own, as the
op's own node would have it, kept in the layer node's state; in reverse, each backward on that
context.  Where a tensor feeds two steps (a residual), its gradient is the sum of the two.
"""

from __future__ import annotations

from ..autograd import _profiling

_NONE = (None,) * 6


def sub_forward(op: type, needs: tuple, *args, **settings) -> tuple:
    """(output, context) of ``op``'s forward on arrays, the context as its own node would have it."""
    ctx = op._node_cls()
    ctx.needs_input_grad = needs
    ctx.saved_tensors = ()
    return _profiling.forward(op.__name__, op.forward, ctx, *args, **settings), ctx


def sub_backward(ctx, grad, count: int = 4) -> tuple:
    """The gradients ``ctx``'s op returns for ``grad`` (``count`` Nones when grad is None or the op
    needs none: nothing upstream asked for them)."""
    if grad is None or not any(ctx.needs_input_grad):
        return _NONE[:count]
    if _profiling.active is None:
        return ctx.function.backward(ctx, grad)
    return _profiling.active.time(ctx.name(), "backward", ctx.function.backward, ctx, grad)


def add_grads(a, b):
    """a + b, where None is no gradient."""
    if a is None:
        return b
    return a if b is None else a + b


def dropped(x, mask):
    """x * mask (the dropout multipliers), or x when there is no mask."""
    return x if mask is None else x * mask
