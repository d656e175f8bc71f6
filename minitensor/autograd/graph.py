"""``autograd.graph``: the recorded graph as PyTorch exposes it.

- ``Node``: a ``grad_fn`` (``name()``, ``next_functions``, ``register_hook``,
  ``register_prehook``, ``_saved_self``/``_saved_other``/``_saved_result``);
- ``saved_tensors_hooks(pack_hook, unpack_hook)``: while active, every tensor an op saves for
  its backward goes through ``pack_hook`` when it is saved, and comes back through
  ``unpack_hook`` when the backward needs it (e.g. to keep it compressed, or on disk);
- ``save_on_cpu``: PyTorch's hooks that move saved tensors to the CPU memory (here they are
  there already: the tensors are kept as they are);
- ``disable_saved_tensors_hooks(message)``: inside it, opening a ``saved_tensors_hooks``
  raises ``RuntimeError(message)``.

Forward mode is not affected: what a JVP rule reads is kept as it is.

>>> seen = []
>>> def pack(t):
...     seen.append(tuple(t.shape))
...     return t
>>> x = mt.ones(2, 3, requires_grad=True)
>>> with mt.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
...     y = (x * x).sum()
>>> seen
[(2, 3), (2, 3)]
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import saved
from .saved import saved_value

__all__ = ["Node", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]


class Node:
    """What every ``grad_fn`` offers for inspection and hooks, as PyTorch's ``autograd.graph.Node``
    (the recorded op itself is ``function.Node``, a subclass)."""

    __slots__ = ()
    node_hooks = None  # (prehooks, hooks) of register_prehook/register_hook, or None
    packed = None  # (unpack hook, packed values) when a saved_tensors_hooks packed what forward saved

    @property
    def next_functions(self) -> tuple:
        """``(node, 0)`` per input, as PyTorch's: the input's grad_fn, an ``AccumulateGrad`` for a
        leaf that requires grad (its ``variable``), or None where no gradient flows."""
        return tuple((AccumulateGrad(p) if isinstance(p, Tensor) else p, 0) for p in getattr(self, "parents", ()))

    def name(self) -> str:
        return type(self).__name__

    def register_prehook(self, hook):
        """``hook(grad_outputs) -> None | new grad_outputs``, called before this node's backward
        (a tuple of Tensors: the gradient of the output).  Returns a handle with ``remove()``."""
        return self._add_hook(0, hook)

    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs) -> None | new grad_inputs``, called after this node's
        backward (tuples of Tensors or None).  Returns a handle with ``remove()``."""
        return self._add_hook(1, hook)

    def _add_hook(self, kind: int, hook):
        if self.node_hooks is None:
            self.node_hooks = ([], [])
        self.node_hooks[kind].append(hook)
        return HookHandle(self.node_hooks[kind], hook)

    def __getattr__(self, name: str):
        """``grad_fn._saved_self`` / ``_saved_other`` / ``_saved_result`` (the saved input 0, input 1
        or output, as PyTorch names them) and ``_saved_<setting>`` (``_saved_dim``)."""
        if name.startswith("_saved_"):
            return saved_value(self, name[len("_saved_") :])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class AccumulateGrad:
    """The graph's end at a leaf that requires grad (``next_functions`` entries, as PyTorch's)."""

    next_functions = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __eq__(self, other) -> bool:
        return isinstance(other, AccumulateGrad) and other.variable is self.variable

    def __hash__(self) -> int:
        return id(self.variable)

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


class HookHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out again."""

    def __init__(self, hooks: list, hook) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """Context manager: ``pack_hook(tensor) -> anything`` when an op saves a tensor for backward,
    ``unpack_hook(that) -> Tensor`` when the backward reads it (the innermost pair applies)."""

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if saved.disabled:
            raise RuntimeError(saved.disabled[-1])
        saved.hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        saved.hooks.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """PyTorch's hooks that keep saved tensors in CPU memory; minitensor's are there already, so
    the tensors are kept as they are (``pin_memory`` and ``device_type`` are accepted, unused)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda tensor: (tensor.device, tensor), lambda packed: packed[1])


class disable_saved_tensors_hooks:  # noqa: N801
    """Context manager: opening a ``saved_tensors_hooks`` inside raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> disable_saved_tensors_hooks:
        saved.disabled.append(self.error_message)
        return self

    def __exit__(self, *exc) -> None:
        saved.disabled.pop()


# ------------------------------------------------------------------ running the node hooks (the engine)
def _as_tensors(grads: tuple) -> tuple:
    return tuple(g if g is None or isinstance(g, Tensor) else Tensor._make(np.asarray(g), False, None) for g in grads)


def _from_hook(new: tuple, old: tuple, create_graph: bool, what: str) -> tuple:
    """A node hook's replacement gradients, in the walk's form (arrays unless ``create_graph``)."""
    new = new if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(
            f"hook '{what}' has returned an incorrect number of values (got {len(new)}, but expected {len(old)})"
        )
    if create_graph:
        return tuple(new)
    return tuple(g._data if isinstance(g, Tensor) else g for g in new)


def run_prehooks(prehooks: list, grad, create_graph: bool):
    """``Node.register_prehook`` hooks: each gets ``(grad_output,)`` and may replace it."""
    for hook in list(prehooks):
        result = hook(_as_tensors((grad,)))
        if result is not None:
            (grad,) = _from_hook(result, (grad,), create_graph, getattr(hook, "__name__", "prehook"))
    return grad


def run_node_hooks(node_hooks: list, in_grads: tuple, grad, create_graph: bool) -> tuple:
    """``Node.register_hook`` hooks: each gets ``(grad_inputs, grad_outputs)`` and may replace the first."""
    for hook in list(node_hooks):
        result = hook(_as_tensors(in_grads), _as_tensors((grad,)))
        if result is not None:
            in_grads = _from_hook(result, in_grads, create_graph, getattr(hook, "__name__", "hook"))
    return in_grads
