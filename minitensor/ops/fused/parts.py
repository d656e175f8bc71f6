"""What the fused layer nodes share: running sub-layer ops inside one node, and create_graph.

A layer node (``encoder_layer.py``, ``decoder_layer.py``) calls its sub-layers' ops
(``SelfAttention``, ``CrossAttention``, ``AddLayerNorm``, ``LayerNorm``, ``FeedForward``)
directly: each forward on a context (``Node``) of its own, as the op's own node would have
it, kept in the layer node's state; in reverse, each backward on that context.  Where a
tensor feeds two steps (a residual), its gradient is the sum of the two.

A fused node is an optimisation of a composite (the layer's ``forward`` in ``nn/``).  With
``create_graph=True`` its gradient is that composite's (``definition_grads``): the node is
given the composite as a function, ``definition``, and differentiates it, so every order of
derivative comes from the one definition of the layer; its forward-mode rule likewise
(``definition_jvp``).
"""

from __future__ import annotations

from ...autograd import _profiling
from ...autograd import grad as autograd_grad
from ...autograd.composite import Alias, composite_jvp
from ...autograd.grad_mode import enable_grad

_NONE = (None,) * 6


def sub_forward(op: type, needs: tuple, args: tuple, settings: dict) -> tuple:
    """(output, context) of ``op``'s forward on the arrays ``args`` with ``settings``, the context
    as its own node would have it (``needs``: its ``needs_input_grad``)."""
    ctx = op._node_cls()
    ctx.needs_input_grad = needs
    if _profiling.active is None:
        return op.forward(ctx, *args, **settings), ctx
    return _profiling.active.time(op.__name__, "forward", op.forward, ctx, *args, **settings), ctx


def sub_backward(ctx, grad, count: int = 4) -> tuple:
    """The gradients ``ctx``'s op returns for ``grad`` (``count`` Nones when grad is None or the op
    needs none: nothing upstream asked for them)."""
    if grad is None or True not in ctx.needs_input_grad:
        return _NONE[:count]
    if _profiling.active is None:
        return ctx.function.backward(ctx, grad)
    return _profiling.active.time(ctx.name(), "backward", ctx.function.backward, ctx, grad)


def layout(*groups: tuple) -> tuple:
    """Where each sub-layer's weights sit among a layer node's weights: one slice per group of
    names (the sub-layers' parameters, in the node's input order)."""
    slices, start = [], 0
    for names in groups:
        slices.append(slice(start, start + len(names)))
        start += len(names)
    return tuple(slices)


def by_sublayer(values: tuple, slices: tuple) -> list:
    """``values`` (the node's weights, or whether each needs a gradient) cut into the sub-layers'
    groups (``layout``): one tuple per sub-layer."""
    return [values[s] for s in slices]


def add_grads(a, b):
    """a + b, where None is no gradient."""
    if a is None:
        return b
    return a if b is None else a + b


def dropped(x, mask):
    """x * mask (the dropout multipliers), or x when there is no mask."""
    return x if mask is None else x * mask


def definition_jvp(ctx, tangents: tuple, activations: int):
    """A fused layer node's forward-mode rule: its ``definition``'s tangent, by forward mode through
    the composite.  The activations are passed in; the weights, which the definition reads from its
    modules, carry their tangents themselves (``composite_jvp``'s ``held``)."""
    weights = zip(ctx.tensors[activations:], tangents[activations:])
    return composite_jvp(ctx.definition, ctx.inputs[:activations], tangents[:activations], held=tuple(weights))


def definition_grads(definition, inputs: tuple, grad, needs: tuple, activations: int) -> tuple:
    """A fused layer node's gradients with ``create_graph=True``: those of its ``definition``.

    ``inputs`` are the node's inputs as Tensors: first its ``activations`` (the layer's input,
    and ``memory`` for a decoder layer), then the layer's own weights, which ``definition``
    (the layer's composite, ``definition(*activations) -> output``) reads from its modules:
    they are the same Tensors.  The activations go through an ``Alias`` node first, so their
    gradient is taken through this use only.
    """
    with enable_grad():
        aliases = [Alias.apply(x) if need else x for x, need in zip(inputs[:activations], needs)]
        out = definition(*aliases)
        targets = [*aliases, *inputs[activations:]]
        wanted = [t for t, need in zip(targets, needs) if need]
        found = iter(autograd_grad(out, wanted, grad, create_graph=True, allow_unused=True))
    return tuple(next(found) if need else None for need in needs)
