"""Module hooks, as PyTorch's: look at (or change) what goes into and out of a layer.

- ``register_forward_pre_hook(hook)``: ``hook(module, args)`` runs before ``forward``;
  returning a value replaces ``args`` (a non-tuple is wrapped as a 1-tuple).
- ``register_forward_hook(hook)``: ``hook(module, args, output)`` runs after ``forward``;
  returning a value replaces ``output``.
- ``register_full_backward_hook(hook)``: ``hook(module, grad_input, grad_output)`` runs
  when the gradients w.r.t. the module's positional Tensor inputs are known; returning a
  tuple replaces ``grad_input``.
- ``register_full_backward_pre_hook(hook)``: ``hook(module, grad_output)`` runs when the
  gradients w.r.t. the outputs are known, before they flow into the module; returning a
  tuple replaces ``grad_output``.

Each returns a ``RemovableHandle``: ``handle.remove()``, or ``with module.register_...(h):``
for a hook that lives for one block.  A module without hooks pays one attribute test in
``Module.__call__`` (``module._hooks is None``).

The full backward hooks need a few identity nodes in the graph: ``nn/backward_hook.py``.

>>> lin = nn.Linear(3, 2)
>>> seen = []
>>> handle = lin.register_forward_hook(lambda m, args, out: seen.append(out.shape))
>>> _ = lin(mt.randn(4, 3)); handle.remove(); _ = lin(mt.randn(4, 3))
>>> seen
[(4, 2)]
"""

from __future__ import annotations

import warnings
import weakref

from ..autograd.grad_mode import is_grad_enabled
from .backward_hook import BackwardHook


class RemovableHandle:
    """What ``register_*_hook`` returns: ``remove()`` unregisters the hook (twice is harmless);
    as a context manager it removes the hook when the block ends."""

    def __init__(self, module, kind: str) -> None:
        self._module = weakref.ref(module)
        self._kind = kind

    def remove(self) -> None:
        module = self._module()
        hooks = None if module is None else module.__dict__.get("_hooks")
        if hooks is not None:
            getattr(hooks, self._kind).pop(self, None)
            if not (hooks.forward_pre or hooks.forward or hooks.backward or hooks.backward_pre):
                object.__setattr__(module, "_hooks", None)  # back to the lean __call__

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class ModuleHooks:
    """A module's hooks: four dicts handle -> (hook, with_kwargs, always_call), in call order."""

    __slots__ = ("forward_pre", "forward", "backward", "backward_pre")

    def __init__(self) -> None:
        self.forward_pre, self.forward, self.backward, self.backward_pre = {}, {}, {}, {}


def add_hook(module, kind: str, hook, prepend: bool, with_kwargs: bool = False, always_call: bool = False):
    """Register ``hook`` in ``module``'s ``kind`` dict ('forward_pre', 'forward', 'backward', 'backward_pre')."""
    if not callable(hook):
        method = "register_" + ("full_" if kind.startswith("backward") else "") + kind + "_hook"
        raise TypeError(f"{method}: hook must be callable, got {type(hook).__name__}")
    hooks = module.__dict__.get("_hooks")
    if hooks is None:
        hooks = ModuleHooks()
        object.__setattr__(module, "_hooks", hooks)
    handle = RemovableHandle(module, kind)
    entry = {handle: (hook, with_kwargs, always_call)}
    table = getattr(hooks, kind)
    setattr(hooks, kind, {**entry, **table} if prepend else {**table, **entry})
    return handle


def has_hooks(*modules) -> bool:
    """Whether any of ``modules`` (Modules or plain callables) has a hook: fused paths then
    fall back to calling the modules one by one, so that the hooks run."""
    for m in modules:  # (a loop, not any() over a generator: this runs on every fused sub-layer call)
        if getattr(m, "_hooks", None) is not None:
            return True
    return False


def call_with_hooks(module, args: tuple, kwargs: dict):
    """``module.forward(*args, **kwargs)`` with its hooks, in PyTorch's order: forward pre hooks,
    the backward hook's input slots, forward, forward hooks, the backward hook's output slots."""
    hooks = module._hooks
    for hook, with_kwargs, _ in list(hooks.forward_pre.values()):
        if with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), got {result!r}"
                    )
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    backward = None
    if (hooks.backward or hooks.backward_pre) and is_grad_enabled():
        backward = BackwardHook(module, _hooks_of(hooks.backward), _hooks_of(hooks.backward_pre))
        args = backward.setup_inputs(args)
    try:
        output = module.forward(*args, **kwargs)
    except Exception:
        _always_called(module, hooks, args, kwargs)
        raise
    for hook, with_kwargs, _ in list(hooks.forward.values()):
        result = hook(module, args, kwargs, output) if with_kwargs else hook(module, args, output)
        if result is not None:
            output = result
    if backward is not None:
        output = backward.setup_outputs(output)
    return output


def _hooks_of(table: dict) -> list:
    return [hook for hook, _, _ in table.values()]


def _always_called(module, hooks: ModuleHooks, args: tuple, kwargs: dict) -> None:
    """Forward hooks registered with ``always_call=True`` also run when forward raised (output None)."""
    for hook, with_kwargs, always_call in list(hooks.forward.values()):
        if always_call:
            try:
                hook(module, args, kwargs, None) if with_kwargs else hook(module, args, None)
            except Exception as error:  # the forward's exception is the one to see
                warnings.warn(f"forward hook with always_call=True raised an exception: {error!r}", stacklevel=3)
