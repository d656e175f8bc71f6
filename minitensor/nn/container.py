"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` hold sub-modules;
``ParameterList``, ``ParameterDict`` hold parameters.

Their items are registered like attributes, under the keys "0", "1", ... (or
the dict's keys), so state dict keys read ``"layers.0.weight"`` as in PyTorch.

>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
>>> model(mt.randn(5, 4)).shape
(5, 2)
>>> blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
>>> len(blocks), len(list(blocks.parameters()))
(3, 6)
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from ..tensor import Tensor
from .module import Module, _addindent
from .parameter import Parameter


def _index(idx, size: int, kind: str) -> int:
    """A list index (negative allowed) -> a position in [0, size)."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"{kind}: index {idx} is out of range for {size} modules")
    return idx % size


class Sequential(Module):
    """Modules applied one after another: ``forward(x)`` is ``m_n(...m_1(x))``.

    Args:
        *modules: the modules, or a single ``OrderedDict`` name -> module.
    """

    def __init__(self, *modules) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(modules):
                self.add_module(str(i), module)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx) -> Module:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        return items[_index(idx, len(items), "Sequential")][1]

    def __setitem__(self, idx, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "Sequential")]]:
            del self._modules[key]
        _renumber(self._modules)

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered so their parameters are found. Not callable itself.

    Args:
        modules: an iterable of modules (optional).
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [str(_index(idx, len(keys), "ModuleList"))]:
            del self._modules[key]
        _renumber(self._modules)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index`` (like ``list.insert``)."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, item in enumerate(items):
            self.add_module(str(i), item)

    def _child_lines(self) -> list:
        """Runs of identical modules are shown once: ``(0-5): 6 x Linear(...)``, as PyTorch does."""
        lines = []
        reprs = [repr(m) for m in self._modules.values()]
        start = 0
        for i in range(1, len(reprs) + 1):
            if i < len(reprs) and reprs[i] == reprs[start]:
                continue
            label = f"({start}): " if i - start == 1 else f"({start}-{i - 1}): {i - start} x "
            lines.append(_addindent(label + reprs[start], 2))
            start = i
        return lines


class ModuleDict(Module):
    """A dict of modules (string keys, insertion order), registered so their parameters are found.

    Args:
        modules: a dict (or iterable of (key, module) pairs), optional.
    """

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def update(self, modules) -> None:
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self.add_module(key, module)


def _as_parameter(value) -> Parameter:
    """Parameters stay as they are; a plain Tensor becomes a Parameter sharing its data (as PyTorch)."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"expected a Parameter or Tensor, got {type(value).__name__}")


def _parameter_lines(items) -> str:
    return "\n".join(f"({key}): Parameter containing: [{p.dtype} of size {tuple(p.shape)}]" for key, p in items)


class ParameterList(Module):
    """A list of parameters, registered under "0", "1", ... so optimizers and state dicts see them.

    >>> weights = nn.ParameterList([nn.Parameter(mt.zeros(2)) for _ in range(3)])
    >>> [name for name, _ in weights.named_parameters()]
    ['0', '1', '2']
    """

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def __getitem__(self, idx: int) -> Parameter:
        return self._parameters[str(_index(idx, len(self), "ParameterList"))]

    def __setitem__(self, idx: int, value) -> None:
        self.register_parameter(str(_index(idx, len(self), "ParameterList")), _as_parameter(value))

    def __iadd__(self, values: Iterable) -> ParameterList:
        return self.extend(values)

    def append(self, value) -> ParameterList:
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values: Iterable) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return _parameter_lines(self._parameters.items())


class ParameterDict(Module):
    """A dict of parameters (string keys, insertion order), registered so optimizers and state dicts see them."""

    def __init__(self, parameters=None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, value) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: str) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters) -> None:
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return _parameter_lines(self._parameters.items())


def _renumber(modules: OrderedDict) -> None:
    """Re-key the modules "0", "1", ... in order, in place (after a deletion)."""
    items = list(modules.values())
    modules.clear()
    modules.update((str(i), m) for i, m in enumerate(items))
