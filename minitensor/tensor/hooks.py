"""What ``Tensor.register_hook`` and ``Tensor.retain_grad`` leave on the graph.

A hook on a leaf is kept in the tensor's ``_hooks`` list; a hook on a non-leaf in
its graph node's ``tensor_hooks`` list.  The engine calls them with the summed
gradient of that tensor, before it goes on (``engine.run_hooks``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (tensor.py imports this module)
    from .tensor import Tensor


class HookHandle:
    """What ``register_hook`` returns: ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class RetainGrad:
    """The hook behind ``retain_grad``: adds each gradient into the tensor's ``.grad``."""

    runs_last = True

    def __init__(self, owner: Tensor) -> None:
        self.owner = weakref.ref(owner)  # the node must not keep its tensor alive

    def __call__(self, grad: Tensor) -> None:
        owner = self.owner()
        if owner is not None:
            g = grad if grad.grad_fn is not None else type(grad)._make(grad._data.copy(), False, None)
            owner.grad = g if owner.grad is None else owner.grad + g
