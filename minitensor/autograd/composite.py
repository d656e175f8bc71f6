"""A fused op's derivatives from its composite: the plain formula in Tensor ops it replaces.

A fused op (layer norm, softmax, an attention or encoder-layer node) runs a kernel forward and
backward on arrays: fast, but its backward's own derivative, and its tangent in forward mode,
are those of the formula it computes.  Rather than a second hand-written rule, these take them
from the formula itself:

- ``composite_grads(formula, inputs, grad, needs)``: its backward, as a graph
  (``create_graph=True``), by reverse mode through the formula;
- ``composite_jvp(formula, inputs, tangents)``: its forward-mode rule, by forward mode
  through the formula at a level of its own.

``Alias`` (y = x as a node of its own) gives an input a fresh identity, so a derivative is
taken with respect to this use of it only; ``OnceDifferentiable`` marks the gradient of a
user Function whose backward works on arrays, so that differentiating it again raises.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import dual
from .batching import elementwise
from .function import Function, Op
from .grad_mode import enable_grad, is_grad_enabled


def composite_grads(forward, inputs: tuple, grad, needs: tuple) -> tuple:
    """The gradients of ``forward(*inputs)`` (an op written in Tensor ops) as Tensors in the graph.

    Fused ops use it for ``create_graph=True``: their kernel backward works on
    arrays, so the second derivative comes from their plain formula instead.
    Each input that needs a gradient goes through an ``Alias`` node first, so the
    gradient is taken with respect to this use of it only.

    Args:
        forward: ``(*tensors) -> Tensor``, the op in differentiable Tensor ops.
        inputs: the op's inputs as Tensors (``ctx.saved_tensors``), or None.
        grad: the incoming gradient (a Tensor, possibly in a graph).
        needs: ``ctx.needs_input_grad``.
    """
    from . import grad as autograd_grad

    recording = is_grad_enabled()  # (else, as under no_grad, the gradients join no graph; tangents still flow)
    with enable_grad():  # (an input that needs no gradient outside, e.g. forward mode under no_grad: a leaf)
        aliases = [_use(x) if need else x for x, need in zip(inputs, needs)]
        out = forward(*aliases)
        wanted = [a for a, need in zip(aliases, needs) if need]
        found = iter(autograd_grad(out, wanted, grad, create_graph=recording, allow_unused=True))
    return tuple(next(found) if need else None for need in needs)


def _use(x: Tensor) -> Tensor:
    """This use of ``x``, differentiable: an ``Alias`` of it (with x's tangents), made a leaf that
    requires grad when x does not."""
    alias = Alias.apply(x)
    return alias if alias.requires_grad else alias.requires_grad_()


def composite_jvp(forward, inputs: tuple, tangents: tuple, held: tuple = ()):
    """The tangent of ``forward(*inputs)`` (an op written in Tensor ops) given its inputs' tangents.

    Fused ops use it as their ``jvp``: each input with a tangent is made dual at a new,
    innermost level, the formula runs, and the output's tangent at that level is the answer
    (arrays in, an array out; Tensors in, a Tensor out, recorded as the formula's ops are).

    Args:
        forward: ``(*tensors) -> Tensor``, the op in differentiable Tensor ops.
        inputs: the op's inputs (``ctx.inputs``: arrays, or Tensors).
        tangents: one per input, None where there is none.
        held: ``(tensor, tangent)`` pairs of Tensors ``forward`` reads by itself (a layer's
            weights, read from its modules), given their tangents at the level as they are.
    """
    as_arrays = not any(isinstance(t, Tensor) for t in (*inputs, *tangents, *(t for _, t in held)))
    level = dual.enter()
    try:
        duals = []
        for x, t in zip(inputs, tangents):
            if isinstance(x, np.ndarray):
                x = Tensor._make(x, False, None)
            if t is not None:
                x = Alias.apply(x)  # a tensor of its own to carry this level's tangent
                level.set(x, t)
            duals.append(x)
        for x, t in held:
            if t is not None:
                level.set(x, t)
        out = forward(*duals)
        tangent = level.get(out)
    finally:
        dual.exit(level)
    if tangent is None:  # the formula does not depend on the inputs that carry tangents
        return None
    if as_arrays and isinstance(tangent, Tensor):
        return tangent._data
    return tangent


class Alias(Op):
    """y = x, as a node of its own (``composite_grads`` differentiates through it)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, dx):
        return dx

    batch = elementwise


class OnceDifferentiable(Function):
    """The gradient of a Function whose backward is not differentiable (``@once_differentiable``,
    or a backward on arrays), put in the graph
    (``create_graph=True``) so that differentiating it again raises, naming the Function."""

    on_arrays = True  # (works on arrays, as the ops do)

    @staticmethod
    def forward(ctx, g, *anchors, name=""):
        ctx.function_name = name
        return g

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            f"{ctx.function_name}: trying to differentiate twice a function that was marked with "
            "@once_differentiable (or whose backward left Tensor ops: it works on NumPy arrays). "
            "Write its backward with Tensor operations, without @once_differentiable (see docs/higher_order.md)."
        )
