"""``BackwardHook``: how a module's full backward hooks see all its gradients at once.

The engine runs one graph node per op output, so (as PyTorch's ``BackwardHook`` does with
its ``BackwardHookFunction``) the module's inputs and outputs are routed through identity
nodes that meet at two 0-d "token" nodes::

    x_j ---> [Gather inputs] ---> token_in
    x_j, token_in ---> [Slot] ---> x_j' ---> forward ---> y_i
    y_i, token_in ---> [Gather outputs] ---> token_out
    y_i, token_out ---> [Slot] ---> y_i'          (what the caller gets)

In backward each output ``Slot`` records grad_output[i] and sends only a dummy zero on;
``Gather outputs`` runs after all of them (it is their common input): it calls the backward
pre hooks, which may replace grad_output, and hands grad_output to the module's graph.  The
input ``Slot``s record grad_input[j]; ``Gather inputs`` runs after them all and after
``Gather outputs``: it calls the full backward hooks, which may replace grad_input, and hands
grad_input to the real inputs.  (When no input requires grad, the full hooks run at
``Gather outputs``, with ``grad_input`` all None.)
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor


class BackwardHook:
    """One forward call's backward hooks and the gradients its slots collect.

    Attributes:
        hooks, pre_hooks: full backward hooks ``hook(module, grad_input, grad_output)`` and
            backward pre hooks ``hook(module, grad_output)``.
        index: per side ('inputs', 'outputs'), the positions of the Tensors that require grad.
        size: per side, len(args) and the number of outputs.
        grads: per side, the gradient each slot received (None until it runs).
    """

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.index = {"inputs": None, "outputs": None}
        self.size = {"inputs": 0, "outputs": 0}
        self.grads = {"inputs": [], "outputs": []}
        self.token_in = None
        self.grad_output = None

    def setup_inputs(self, args: tuple) -> tuple:
        """Route the positional Tensors that require grad through input slots."""
        self.size["inputs"] = len(args)
        new, self.token_in = self._route("inputs", args, ())
        return new

    def setup_outputs(self, output):
        """Route the output Tensors that require grad through output slots."""
        outputs = output if isinstance(output, tuple) else (output,)
        self.size["outputs"] = len(outputs)
        extra = () if self.token_in is None else (self.token_in,)
        new, _ = self._route("outputs", outputs, extra)
        if not isinstance(output, tuple):
            return new[0]
        return type(output)(*new) if hasattr(output, "_fields") else new  # named tuples too

    def _route(self, side: str, values: tuple, extra: tuple) -> tuple:
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
        if not index:
            return values, None
        self.index[side] = index
        self.grads[side] = [None] * len(index)
        token = _Gather.apply(*[values[i] for i in index], *extra, state=self, side=side)
        new = list(values)
        for slot, i in enumerate(index):
            new[i] = _Slot.apply(values[i], token, state=self, side=side, slot=slot)
        return tuple(new), token

    def gathered(self, side: str, n_parents: int) -> tuple:
        """The backward of a Gather node: run the hooks of this side; the gradients of its parents."""
        index, grads = self.index[side], self.grads[side]
        self.grads[side] = [None] * len(index)  # ready for another backward (retain_graph)
        graph = any(isinstance(g, Tensor) for g in grads)  # create_graph=True: gradients are Tensors
        full = [None] * self.size[side]
        for slot, i in enumerate(index):
            full[i] = _as_tensor(grads[slot])
        full = tuple(full)
        if side == "outputs":
            full = self._run_pre_hooks(full)
            if self.index["inputs"] is None:
                self._run_hooks((None,) * self.size["inputs"])
        else:
            full = self._run_hooks(full)
        out = tuple(_as_grad(full[i], graph) for i in index)
        return out + (np.zeros(()),) * (n_parents - len(out))  # (the dummy for token_in)

    def _run_pre_hooks(self, grad_output: tuple) -> tuple:
        for hook in self.pre_hooks:
            result = _checked(hook(self.module, grad_output), len(grad_output), "backward pre hook", "grad_output")
            if result is not None:
                grad_output = result
        self.grad_output = grad_output if any(g is not None for g in grad_output) else None
        return grad_output

    def _run_hooks(self, grad_input: tuple) -> tuple:
        grad_output, self.grad_output = self.grad_output, None
        if grad_output is None:  # no gradient came through the module's outputs
            return grad_input
        for hook in self.hooks:
            result = _checked(
                hook(self.module, grad_input, grad_output), len(grad_input), "backward hook", "grad_input"
            )
            if result is None:
                continue
            if self.index["inputs"] is None and any(g is not None for g in result):
                raise RuntimeError(
                    "backward hook for a module whose inputs do not require grad must return None "
                    "or None for all gradients"
                )
            grad_input = result
        return grad_input


def _checked(result, expected: int, what: str, name: str):
    """A hook's result as a tuple of ``expected`` gradients, or None."""
    if result is None:
        return None
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(result) != expected:
        raise RuntimeError(f"{what} returned an invalid number of {name}, got {len(result)}, but expected {expected}")
    return result


def _as_tensor(grad):
    """A gradient as the hooks see it: a Tensor (or None)."""
    if grad is None or isinstance(grad, Tensor):
        return grad
    return Tensor._make(np.asarray(grad), False, None)


def _as_grad(grad, graph: bool):
    """A gradient (Tensor, array or None) as the engine wants it: an array, or with
    ``create_graph=True`` a Tensor (so that the gradient stays a graph)."""
    if grad is None:
        return None
    if graph:
        return grad if isinstance(grad, Tensor) else Tensor._make(np.asarray(grad), False, None)
    return grad._data if isinstance(grad, Tensor) else grad


class _Gather(Function):
    """tensors -> a 0-d token; its backward runs after every slot of its side (see above)."""

    on_arrays = True  # (works on arrays, as the ops do)

    differentiable_backward = True  # it only passes gradients on: Tensors with create_graph=True

    @staticmethod
    def forward(ctx, *arrays, state: BackwardHook, side: str):
        ctx.state, ctx.side, ctx.n_parents = state, side, len(arrays)
        return np.zeros(())

    @staticmethod
    def backward(ctx, grad):
        return ctx.state.gathered(ctx.side, ctx.n_parents)

    @staticmethod
    def jvp(ctx, *tangents):
        return None  # (a token of zeros: it carries no value)


class _Slot(Function):
    """(x, token) -> x (a view of the same memory); backward records d/dx and sends x nothing:
    its gradient goes on through the Gather node, after the hooks."""

    on_arrays = True  # (works on arrays, as the ops do)

    differentiable_backward = True

    @staticmethod
    def forward(ctx, x, token, state: BackwardHook, side: str, slot: int):
        ctx.state, ctx.side, ctx.slot = state, side, slot
        return x.view()

    @staticmethod
    def backward(ctx, grad):
        ctx.state.grads[ctx.side][ctx.slot] = grad
        return None, np.zeros(())

    @staticmethod
    def jvp(ctx, dx, dtoken):
        return dx
