"""A user's ``Function`` written as in PyTorch: ``forward`` and ``backward`` on Tensors.

The built-in ops (``Op``) work on NumPy arrays, the anatomy ``function.py`` teaches.  A
Function subclassed by a user is PyTorch's instead (``on_arrays = False``, the default): its
``forward`` gets the inputs as Tensors outside any graph and returns a Tensor; its
``backward`` gets the incoming gradient and ``ctx.saved_tensors`` as Tensors and returns
Tensors.  Written with Tensor ops, that backward is differentiable again, as in PyTorch:
with ``create_graph=True`` it runs on the graph's own Tensors and is recorded
(``@once_differentiable`` opts out: differentiating its result then raises).

``Function.__init_subclass__`` wraps such a subclass's methods with the adapters below, so
the engine calls every Function the same way (arrays in, arrays out).

>>> class Cube(mt.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return 3 * x ** 2 * grad
>>> x = mt.tensor(2.0, requires_grad=True)
>>> (g,) = mt.autograd.grad(Cube.apply(x), x, create_graph=True)
>>> mt.autograd.grad(g, x)[0]  # d²(x³)/dx² = 6x
tensor(12.)
"""

from __future__ import annotations

import functools

import numpy as np

from ..tensor import Tensor
from .grad_mode import no_grad


def once_differentiable(backward):
    """Decorator of a Function's ``backward`` that is not differentiable (it leaves Tensor ops,
    e.g. through NumPy): its gradient works, and differentiating that gradient again raises."""
    function = backward.__func__ if isinstance(backward, staticmethod) else backward

    @functools.wraps(function)
    def once(ctx, grad):
        return function(ctx, grad)

    once.once_differentiable = True
    return staticmethod(once) if isinstance(backward, staticmethod) else once


def tensor_forward(forward):
    """``forward`` on Tensors, seen by the engine as a forward on arrays."""
    if getattr(forward, "adapted", False):  # (inherited from a parent class: adapted already)
        return forward

    @functools.wraps(forward)
    def on_arrays(ctx, *arrays, **settings):
        with no_grad():
            out = forward(ctx, *[_plain(a) for a in arrays], **settings)
        ctx.saved_tensors = tuple(t._data if isinstance(t, Tensor) else t for t in ctx.saved_tensors)
        return out._data if isinstance(out, Tensor) else out

    on_arrays.adapted = True
    return on_arrays


def tensor_backward(backward):
    """``backward`` on Tensors: given arrays (a first-order backward) it sees plain Tensors and its
    results go back as arrays; given Tensors (``create_graph=True``) it runs on them, recorded."""
    if getattr(backward, "adapted", False):
        return backward

    @functools.wraps(backward)
    def on_arrays(ctx, grad):
        if isinstance(grad, Tensor):
            return backward(ctx, grad)
        with no_grad():
            grads = backward(_PlainContext(ctx), _plain(grad))
        if isinstance(grads, tuple):
            return tuple(g._data if isinstance(g, Tensor) else g for g in grads)
        return grads._data if isinstance(grads, Tensor) else grads

    on_arrays.adapted = True
    return on_arrays


def _plain(a):
    return Tensor._make(a, False, None) if isinstance(a, np.ndarray) else a


class _PlainContext:
    """The ``ctx`` of a first-order backward: the node's attributes, ``saved_tensors`` as Tensors."""

    def __init__(self, node) -> None:
        self._node = node
        self.saved_tensors = tuple(_plain(a) for a in node.saved_tensors)

    def __getattr__(self, name: str):
        return getattr(self._node, name)
