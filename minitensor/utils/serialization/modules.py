"""Whole modules in a checkpoint, in PyTorch's layout both ways.

``torch.save(model)`` pickles a module as "make an empty object of class C, then set its
``__dict__`` to this dict".  The class is named in the file (``__main__.RNNModel``,
``torch.nn.modules.linear.Linear``); the dict holds PyTorch's bookkeeping::

    {"training": True, "_parameters": {"weight": Parameter, "bias": Parameter},
     "_buffers": {}, "_non_persistent_buffers_set": set(), "_forward_hooks": OrderedDict(), ...,
     "_modules": {"0": <sub-module>}, "in_features": 4, "out_features": 3}

minitensor's ``Module`` keeps the same three registries (as OrderedDicts) and
``_non_persistent_buffers`` instead of ``_non_persistent_buffers_set``; it has no hook dicts
(``_hooks`` is None until a hook is registered).  So:

- ``module_state(m)`` is the dict PyTorch's ``Module.__setstate__`` expects, from a minitensor
  module (its other attributes as they are, plus what PyTorch's class needs that minitensor's
  does not keep: ``module_layouts.py``);
- ``restore_module(m, state)`` sets a dict written by PyTorch (or by ``module_state``) into an
  empty minitensor module: PyTorch's empty hook dicts are dropped, the names are minitensor's,
  and each registry holds only what it should (Parameters, Tensors, Modules).

Nothing here calls a method of the class (no ``__init__``): the object is ``cls.__new__(cls)``
and its ``__dict__`` is filled, as pickle's BUILD does.
"""

from __future__ import annotations

from collections import OrderedDict

from ...nn import functional as F
from ...nn.module import Module
from ...nn.parameter import Parameter
from ...tensor import Tensor
from . import module_layouts
from .pickle_reader import CheckpointError
from .torch_names import torch_class_names, torch_function_name

# PyTorch's per-module hook dicts, in the order its Module.__init__ sets them (with the registries).
HOOK_DICTS = (
    "_backward_pre_hooks",
    "_backward_hooks",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_state_dict_hooks",
    "_state_dict_pre_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)
_OWN = ("training", "_parameters", "_buffers", "_non_persistent_buffers", "_modules", "_hooks")


# ---------------------------------------------------------------- names
def global_names(obj) -> tuple:
    """The names under which a file refers to ``obj`` (a class or function), the one written first.

    minitensor's ``nn`` classes and ``nn.functional`` functions go by PyTorch's names, so that
    a file written here names what PyTorch has, and a file of PyTorch's finds minitensor's.

    >>> global_names(nn.Linear)[0]
    'torch.nn.modules.linear.Linear'
    """
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return ()
    own = f"{module}.{qualname}"
    torch_names: tuple = ()
    if isinstance(obj, type) and module.startswith("minitensor.nn.") and issubclass(obj, Module):
        torch_names = torch_class_names(qualname)
    elif callable(obj) and module.startswith("minitensor.nn.functional") and getattr(F, qualname, None) is obj:
        torch_names = (torch_function_name(qualname),)
    return torch_names + (own,) if own not in torch_names else torch_names


def imported_module_classes() -> dict:
    """``{name: class}`` for every ``nn.Module`` subclass already imported (and ``nn.functional``'s
    functions): what ``mt.load(f, weights_only=False)`` may rebuild.  Nothing is imported here."""
    table, todo = {}, [Module]
    while todo:
        cls = todo.pop()
        for name in global_names(cls):
            table.setdefault(name, cls)
        todo.extend(cls.__subclasses__())
    for name in dir(F):
        obj = getattr(F, name)
        if callable(obj) and not isinstance(obj, type):
            for full in global_names(obj):
                table.setdefault(full, obj)
    return table


# ---------------------------------------------------------------- writing
def module_state(module: Module) -> dict:
    """The ``__dict__`` PyTorch's class would have: what ``torch.save(module)`` writes."""
    own = module.__dict__
    if own.get("_hooks") is not None:
        raise TypeError(
            f"a {type(module).__name__} with hooks registered: hooks are functions, which a checkpoint does not "
            "hold; remove them (handle.remove()) before saving, or save the state_dict()"
        )
    state = {
        "training": own["training"],
        "_parameters": dict(own["_parameters"]),
        "_buffers": dict(own["_buffers"]),
        "_non_persistent_buffers_set": set(own["_non_persistent_buffers"]),
    }
    state.update((name, OrderedDict()) for name in HOOK_DICTS)
    state["_is_full_backward_hook"] = None
    state["_modules"] = dict(own["_modules"])
    state.update((k, v) for k, v in own.items() if k not in _OWN)
    module_layouts.to_torch(module, state)
    return state


# ---------------------------------------------------------------- reading
def restore_module(module: Module, state) -> None:
    """Fill the empty ``module`` (made by ``cls.__new__``) from a state written by PyTorch or minitensor."""
    kind = type(module).__name__
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise CheckpointError(f"the state of a {kind} is a {type(state).__name__}, not a dict of attributes")
    missing = [k for k in ("training", "_parameters", "_buffers", "_modules") if k not in state]
    if missing:
        raise CheckpointError(f"the state of a {kind} has no {', '.join(missing)}")
    attributes = {}
    for name, value in state.items():
        if name in HOOK_DICTS:
            if value:
                raise CheckpointError(f"a {kind} was saved with {name} ({len(value)}): hooks are not loaded")
        elif name == "_is_full_backward_hook" or name == "_hooks":
            continue
        elif name in ("_non_persistent_buffers_set", "_non_persistent_buffers"):
            attributes["_non_persistent_buffers"] = _names(value, kind, name)
        elif name in ("_parameters", "_buffers", "_modules"):
            attributes[name] = _registry(value, kind, name)
        else:
            attributes[name] = value
    attributes.setdefault("_non_persistent_buffers", set())
    if not isinstance(attributes["training"], bool):
        raise CheckpointError(f"a {kind}'s training flag is {attributes['training']!r}")
    module_layouts.from_torch(module, attributes)
    module.__dict__.update(attributes)


_REGISTRY_TYPES = {"_parameters": Parameter, "_buffers": Tensor, "_modules": Module}


def _registry(value, kind: str, name: str) -> OrderedDict:
    """A ``_parameters``/``_buffers``/``_modules`` dict, checked to hold what minitensor's would."""
    if not isinstance(value, dict):
        raise CheckpointError(f"a {kind}'s {name} is a {type(value).__name__}, not a dict")
    expected = _REGISTRY_TYPES[name]
    for key, item in value.items():
        if not isinstance(key, str) or not (item is None or isinstance(item, expected)):
            raise CheckpointError(
                f"a {kind}'s {name} holds {key!r}: {type(item).__name__} (expected {expected.__name__} or None)"
            )
    return OrderedDict(value)


def _names(value, kind: str, name: str) -> set:
    if not isinstance(value, (set, list)) or not all(isinstance(v, str) for v in value):
        raise CheckpointError(f"a {kind}'s {name} is not a set of names")
    return set(value)
