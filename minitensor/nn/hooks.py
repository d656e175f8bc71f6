"""Module hooks, as PyTorch's: look at (or change) what goes into and out of a layer.

- ``register_forward_pre_hook(hook)``: ``hook(module, args)`` runs before ``forward``;
  returning a value replaces ``args`` (a non-tuple is wrapped as a 1-tuple).
- ``register_forward_hook(hook)``: ``hook(module, args, output)`` runs after ``forward``;
  returning a value replaces ``output``.
- ``register_full_backward_hook(hook)``: ``hook(module, grad_input, grad_output)`` runs
  when the gradients w.r.t. the module's positional Tensor inputs are known; returning a
  tuple replaces ``grad_input``.

Each returns a ``RemovableHandle``: ``handle.remove()``, or ``with module.register_...(h):``
for a hook that lives for one block.  A module without hooks pays one attribute test in
``Module.__call__`` (``module._hooks is None``).

How the backward hook sees all gradients at once (``BackwardHook``, PyTorch's idea with
single-output graph nodes)::

    inputs x_j --> [_GatherInputs] --> token            (a 0-d dummy: the meeting point)
    x_j, token --> [_InputSlot j] --> x_j' --> forward --> y_i, token --> [_OutputSlot i] --> y_i'

Backward reaches each ``_OutputSlot`` first (it records grad_output[i]), then the module's
own graph, then each ``_InputSlot`` (it records grad_input[j] and sends only a dummy zero to
the token), and last ``_GatherInputs``, which runs after all slots: it calls the hooks and
hands the (possibly replaced) gradients to the real inputs.

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

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor


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
            if not (hooks.forward_pre or hooks.forward or hooks.backward):
                object.__setattr__(module, "_hooks", None)  # back to the lean __call__

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class ModuleHooks:
    """A module's hooks: three dicts handle -> (hook, with_kwargs, always_call), in call order."""

    __slots__ = ("forward_pre", "forward", "backward")

    def __init__(self) -> None:
        self.forward_pre, self.forward, self.backward = {}, {}, {}


def add_hook(module, kind: str, hook, prepend: bool, with_kwargs: bool = False, always_call: bool = False):
    """Register ``hook`` in ``module``'s ``kind`` dict ('forward_pre', 'forward', 'backward')."""
    if not callable(hook):
        raise TypeError(f"register_{kind}_hook: hook must be callable, got {type(hook).__name__}")
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
    return any(getattr(m, "_hooks", None) is not None for m in modules)


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
    if hooks.backward and is_grad_enabled():
        backward = BackwardHook(module, [h for h, _, _ in hooks.backward.values()])
        args = backward.setup_inputs(args)
    output = None
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


def _always_called(module, hooks: ModuleHooks, args: tuple, kwargs: dict) -> None:
    """Forward hooks registered with ``always_call=True`` also run when forward raised (output None)."""
    for hook, with_kwargs, always_call in list(hooks.forward.values()):
        if always_call:
            try:
                hook(module, args, kwargs, None) if with_kwargs else hook(module, args, None)
            except Exception as error:  # the forward's exception is the one to see
                warnings.warn(f"forward hook with always_call=True raised an exception: {error!r}", stacklevel=3)


class BackwardHook:
    """One forward call's full backward hooks (see the module docstring for the graph it builds).

    Attributes:
        n_inputs: len(args); input_index: positions of the inputs that require grad (or None).
        grad_inputs: per gathered input, its gradient once its slot ran.
        grad_outputs: per output position, its gradient (None where none arrived).
    """

    def __init__(self, module, hooks: list) -> None:
        self.module, self.hooks = module, hooks
        self.n_inputs, self.input_index, self.token = 0, None, None
        self.grad_inputs, self.grad_outputs = [], None

    def setup_inputs(self, args: tuple) -> tuple:
        """Route the positional Tensors that require grad through ``_InputSlot`` nodes."""
        self.n_inputs = len(args)
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        if not index:
            return args
        self.input_index = index
        self.grad_inputs = [None] * len(index)
        self.token = _GatherInputs.apply(*[args[i] for i in index], state=self)
        args = list(args)
        for slot, i in enumerate(index):
            args[i] = _InputSlot.apply(args[i], self.token, state=self, slot=slot)
        return tuple(args)

    def setup_outputs(self, output):
        """Route the output Tensors that require grad through ``_OutputSlot`` nodes."""
        outputs = output if isinstance(output, tuple) else (output,)
        index = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not index:
            return output
        self.grad_outputs = [None] * len(outputs)
        if self.token is None:  # no input requires grad: the hooks run at a token of a dummy leaf
            self.token = _GatherInputs.apply(Tensor(np.zeros(()), requires_grad=True), state=self)
        new = list(outputs)
        for i in index:
            new[i] = _OutputSlot.apply(outputs[i], self.token, state=self, index=i)
        if not isinstance(output, tuple):
            return new[0]
        return type(output)(*new) if hasattr(output, "_fields") else tuple(new)  # named tuples too

    def run_hooks(self) -> tuple:
        """Call the hooks with (grad_input, grad_output); return the gathered inputs' gradients."""
        index = self.input_index or []
        grad_input = [None] * self.n_inputs
        for slot, i in enumerate(index):
            grad_input[i] = _as_tensor(self.grad_inputs[slot])
        grad_input = tuple(grad_input)
        if self.grad_outputs is not None and any(g is not None for g in self.grad_outputs):
            grad_output = tuple(_as_tensor(g) for g in self.grad_outputs)
            for hook in self.hooks:
                result = hook(self.module, grad_input, grad_output)
                if result is None:
                    continue
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(
                        f"backward hook returned an invalid number of grad_input, got {len(result)}, "
                        f"but expected {len(grad_input)}"
                    )
                if not index and any(g is not None for g in result):
                    raise RuntimeError(
                        "backward hook for a module whose inputs do not require grad must return None "
                        "or None for all gradients"
                    )
                grad_input = result
        self.grad_inputs = [None] * len(index)  # ready for another backward (retain_graph)
        self.grad_outputs = [None] * len(self.grad_outputs or ())
        return tuple(_as_array(grad_input[i]) for i in index) if index else (None,)


def _as_tensor(grad):
    """A gradient as the hooks see it: a Tensor (or None)."""
    if grad is None or isinstance(grad, Tensor):
        return grad
    return Tensor._make(np.asarray(grad), False, None)


def _as_array(grad):
    """A gradient a hook returned (Tensor, array or None) as the engine wants it."""
    return grad._data if isinstance(grad, Tensor) else grad


def _view(x: np.ndarray) -> np.ndarray:
    """The same memory under a new array (so the slot's output shares the input's version counter)."""
    return x.view()


class _GatherInputs(Function):
    """inputs -> a 0-d token; its backward runs after every slot and calls the hooks."""

    @staticmethod
    def forward(ctx, *arrays, state: BackwardHook):
        ctx.state = state
        return np.zeros(())

    @staticmethod
    def backward(ctx, grad):
        return ctx.state.run_hooks()


class _InputSlot(Function):
    """(x, token) -> x (a view); backward records d/dx for the hooks and sends x nothing yet."""

    @staticmethod
    def forward(ctx, x, token, state: BackwardHook, slot: int):
        ctx.state, ctx.slot = state, slot
        return _view(x)

    @staticmethod
    def backward(ctx, grad):
        ctx.state.grad_inputs[ctx.slot] = grad
        return None, np.zeros(())


class _OutputSlot(Function):
    """(y, token) -> y (a view); backward records d/dy (grad_output) and passes it on unchanged."""

    @staticmethod
    def forward(ctx, y, token, state: BackwardHook, index: int):
        ctx.state, ctx.index = state, index
        return _view(y)

    @staticmethod
    def backward(ctx, grad):
        ctx.state.grad_outputs[ctx.index] = grad
        return grad, np.zeros(())
