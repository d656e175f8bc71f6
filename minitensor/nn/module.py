"""``Module``: the base class of every layer and model (nothing here computes: a Module
is bookkeeping around Parameters, and its ``forward`` calls ops).

A Module owns three ordered dicts, filled automatically by ``__setattr__``:

- ``_parameters``: name -> ``Parameter`` (learnable weights),
- ``_buffers``: name -> ``Tensor`` (state that is not learned, e.g. running stats),
- ``_modules``: name -> sub-``Module``.

Everything else (``parameters()``, ``state_dict()``, ``train()``, ``to()``, the
nested ``repr``) walks these dicts, in insertion order, exactly as PyTorch does,
so state dict keys are PyTorch's (``"encoder.layers.0.linear1.weight"``).

As in PyTorch, a plain list, tuple or dict of Modules (or Parameters) assigned as
an attribute is kept as it is and NOT registered: its parameters are not in
``parameters()`` or ``state_dict()``, and ``to()``/``train()`` do not reach it.
minitensor says so with a ``UserWarning`` that names the attribute and the
container to use instead (``nn.ModuleList``, ``nn.ModuleDict``,
``nn.ParameterList``, ``nn.ParameterDict``).

>>> class MLP(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.fc1 = nn.Linear(4, 8)
...         self.fc2 = nn.Linear(8, 2)
...     def forward(self, x):
...         return self.fc2(self.fc1(x).relu())
>>> [name for name, _ in MLP().named_parameters()]
['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator

from .. import dtypes
from ..tensor import Tensor
from ..tensor.extras import parse_to
from .hooks import add_hook, call_with_hooks
from .parameter import Parameter
from .state_dict import IncompatibleKeys, StateDictMethods  # noqa: F401  (IncompatibleKeys: re-exported)


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first."""
    lines = text.split("\n")
    return "\n".join(lines[:1] + [" " * spaces + line for line in lines[1:]])


def _check_name(name, kind: str, module: Module) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name must be a str, got {type(name).__name__}")
    if name == "" or "." in name:
        raise KeyError(f'{kind} name must be a non-empty string without ".", got {name!r}')
    registered = (module._parameters, module._buffers, module._modules)
    if hasattr(module, name) and not any(name in d for d in registered):
        raise KeyError(f"attribute {name!r} already exists on {type(module).__name__}")


def _collect_modules(module: Module, found: list, seen: set) -> None:
    """Append the sub-modules of ``module`` to ``found``, depth first, each once (recursion is as
    deep as the nesting of modules, a handful of levels)."""
    for child in module._modules.values():
        if child is not None and id(child) not in seen:
            seen.add(id(child))
            found.append(child)
            _collect_modules(child, found, seen)


class Module(StateDictMethods):
    """Base class of layers and models: subclass it, set layers in ``__init__``, write ``forward``.

    Attributes:
        training: True in training mode (dropout active), False after ``eval()``.
    """

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    _hooks = None  # a ModuleHooks once a hook is registered (nn/hooks.py), else None

    def __call__(self, *args, **kwargs):
        if self._hooks is None:  # the one cost of hooks when there are none
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    # -------------------------------------------------------------------- hooks
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False):
        """``hook(module, args)`` before each ``forward``; a returned value replaces ``args``.

        With ``with_kwargs=True``: ``hook(module, args, kwargs)`` returning None or
        ``(args, kwargs)``.  ``prepend=True`` runs it before the hooks already registered.
        Returns a handle: ``handle.remove()``, or use it in a ``with`` block.
        """
        return add_hook(self, "forward_pre", hook, prepend, with_kwargs)

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ):
        """``hook(module, args, output)`` after each ``forward``; a returned value replaces ``output``.

        With ``with_kwargs=True``: ``hook(module, args, kwargs, output)``.  ``always_call=True``
        also runs it (with ``output=None``) when ``forward`` raises.  Returns a removable handle.

        >>> acts = {}
        >>> lin = nn.Linear(3, 2)
        >>> h = lin.register_forward_hook(lambda m, args, out: acts.update(lin=out.detach()))
        >>> lin(mt.randn(4, 3)).shape == acts["lin"].shape
        True
        """
        return add_hook(self, "forward", hook, prepend, with_kwargs, always_call)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False):
        """``hook(module, grad_input, grad_output)`` when the gradients w.r.t. the positional
        Tensor inputs are computed; returning a tuple replaces ``grad_input``.

        ``grad_input`` has one entry per positional argument (None where no gradient),
        ``grad_output`` one per output (a tuple output gives one entry per element).
        Returns a removable handle.
        """
        return add_hook(self, "backward", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False):
        """``hook(module, grad_output)`` when the gradients w.r.t. the outputs are computed, before
        they flow into the module; returning a tuple replaces ``grad_output``.  Returns a handle."""
        return add_hook(self, "backward_pre", hook, prepend)

    # ------------------------------------------------------------ registration
    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, (list, tuple, dict)):
            _warn_unregistered(self, name, value)
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as parameter {name!r} (nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign a sub-module before Module.__init__() call")
            self._forget(name, keep=self._modules)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as child module {name!r} (Module or None expected)"
                )
            self._modules[name] = value
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer {name!r} (Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: dict) -> None:
        """Remove ``name`` from the other registries before it is (re)registered in ``keep``.

        ``keep`` itself is untouched, so a replaced entry keeps its place in the order.
        """
        self.__dict__.pop(name, None)
        for store in (self._parameters, self._buffers, self._modules):
            if store is not keep:
                store.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: look in the three registries.
        for store in ("_parameters", "_buffers", "_modules"):
            registry = self.__dict__.get(store)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list:
        names = list(super().__dir__()) + list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(names))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder, e.g. ``bias=False``) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameters before Module.__init__() call")
        _check_name(name, "parameter", self)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign {type(param).__name__} as parameter {name!r} (nn.Parameter or None expected)"
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: a Tensor that is state but not learned.

        Persistent buffers are saved in ``state_dict()``; all buffers follow ``to()``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer", self)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign {type(tensor).__name__} as buffer {name!r} (Tensor or None expected)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a sub-module under ``name`` (same as setting the attribute)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module or None, got {type(module).__name__}")
        _check_name(name, "module", self)
        self._modules[name] = module

    register_module = add_module

    # --------------------------------------------------------------- traversal
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True) -> Iterator:
        """(dotted name, module) for this module and every sub-module, depth first, self first."""
        if memo is None:
            memo = set()
        stack = [(prefix, self)]  # an explicit stack: no generator per level (parameters() runs every step)
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield name, module
            children = [(f"{name}.{key}" if name else key, m) for key, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def _all_modules(self) -> list:
        """The modules of ``named_modules()``, in the same order, without building their names
        (``parameters()`` runs at every training step, in ``zero_grad`` and the optimizer)."""
        found = [self]
        _collect_modules(self, found, {id(self)})
        return found

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator:
        """(name, module) for the direct sub-modules (each module once)."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool) -> Iterator:
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True) -> Iterator:
        """(dotted name, Parameter) pairs; a parameter shared by two layers appears once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The Parameters of named_parameters(), in the same order, without building their names."""
        seen = set()
        for module in self._all_modules() if recurse else (self,):
            for param in module._parameters.values():
                if param is not None and id(param) not in seen:
                    seen.add(id(param))
                    yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True) -> Iterator:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every sub-module (children first) and then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -------------------------------------------------------------------- modes
    def train(self, mode: bool = True) -> Module:
        """Set training mode on self and all sub-modules; returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"train: mode must be a bool, got {mode!r}")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (same as ``train(False)``); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (freeze with False); returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of all parameters (to None, or to zeros in place)."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad._data[...] = 0

    # -------------------------------------------------------------------- dtype
    def to(self, *args, **kwargs) -> Module:
        """Convert float parameters, their gradients and float buffers to a dtype, in place.

        PyTorch's forms: ``to(dtype)``, ``to('cpu')``, ``to('cpu', dtype)``,
        ``to(tensor)`` (its dtype).  The Parameter objects stay the same (only
        their arrays change), so an optimizer built before ``to()`` still updates
        them.  A device other than the CPU raises ValueError.  Returns self.
        """
        dtype = parse_to(args, kwargs, f"{type(self).__name__}.to")
        if dtype is None:
            return self
        if not dtypes.is_floating(dtype):
            raise TypeError(f"to: dtype must be a float dtype such as mt.float64, got {dtype}")
        for tensor in list(self.parameters()) + list(self.buffers()):
            if dtypes.is_floating(tensor.dtype) and tensor.dtype != dtype:
                tensor._data = tensor._data.astype(dtype)
                if tensor.grad is not None:
                    tensor.grad._data = tensor.grad._data.astype(dtype)
        return self

    def cpu(self) -> Module:
        """Self: minitensor's modules always live on the CPU."""
        return self

    def cuda(self, device=None) -> Module:
        raise RuntimeError(
            f"{type(self).__name__}.cuda(): CUDA is not available; minitensor runs on the CPU only (use .to('cpu'))"
        )

    def type(self, dst_type) -> Module:
        return self.to(dst_type)

    def half(self) -> Module:
        return self.to(dtypes.float16)

    def float(self) -> Module:
        return self.to(dtypes.float32)

    def double(self) -> Module:
        return self.to(dtypes.float64)

    # --------------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr; override in layers."""
        return ""

    def _child_lines(self) -> list:
        return [f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()]

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = self._child_lines()
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{type(self).__name__}({body})"


def _warn_unregistered(module: Module, name: str, value) -> None:
    """Warn when a plain list/tuple/dict holding Modules or Parameters is set as an attribute: as in
    PyTorch it is not registered, which silently loses parameters, so say which container to use."""
    items = list(value.values()) if isinstance(value, dict) else value
    kind = "dict" if isinstance(value, dict) else type(value).__name__
    if any(isinstance(item, Parameter) for item in items):
        what, container = "Parameters", "nn.ParameterDict" if kind == "dict" else "nn.ParameterList"
    elif any(isinstance(item, Module) for item in items):
        what, container = "Modules", "nn.ModuleDict" if kind == "dict" else "nn.ModuleList"
    else:
        return
    warnings.warn(
        f"{type(module).__name__}.{name} is a plain {kind} of {what}: as in PyTorch it is not registered, so its "
        f"parameters are not in parameters() or state_dict() and to()/train()/eval() do not reach it; "
        f"use {container}(...) instead",
        UserWarning,
        stacklevel=3,
    )
