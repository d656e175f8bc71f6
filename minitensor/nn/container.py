"""Containers that hold sub-modules: ``Sequential``, ``ModuleList``, ``ModuleDict``.

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

from .module import Module, _addindent


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


def _renumber(modules: OrderedDict) -> None:
    """Re-key the modules "0", "1", ... in order, in place (after a deletion)."""
    items = list(modules.values())
    modules.clear()
    modules.update((str(i), m) for i, m in enumerate(items))
