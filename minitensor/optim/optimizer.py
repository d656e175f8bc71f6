"""``Optimizer``: the base class that holds parameters, their settings and their state.

An optimizer owns

- ``param_groups``: a list of dicts.  Each has a ``'params'`` list of Tensors
  and one value for every hyperparameter (``'lr'``, ``'momentum'`` ...); a
  setting missing from a group is filled in from the optimizer's defaults;
- ``state``: ``{index: {...}}``, per parameter, what the update rule remembers
  between steps (momentum buffers, Adam's moving averages).  ``index`` counts
  the parameters through all groups in order, the numbering
  ``state_dict()`` uses, so no Tensor is ever used as a dict key.

A subclass writes one method, ``_update(param, grad, state, group)``, which
changes the NumPy array ``param`` in place.  Updates work on the arrays
directly, so nothing is recorded in the autograd graph.

>>> import minitensor as mt
>>> w = mt.tensor([1.0, 2.0], requires_grad=True)
>>> opt = mt.optim.SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
tensor([0.8, 1.6], requires_grad=True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from numbers import Real

import numpy as np

from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor


class Optimizer:
    """Base class of optimizers.

    Args:
        params: an iterable of Tensors, or of dicts (parameter groups) each with
            a ``'params'`` entry and optional per-group settings.
        defaults: the settings of a group that does not give its own.
    """

    def __init__(self, params: Iterable, defaults: dict) -> None:
        defaults = {k: _plain(v) for k, v in defaults.items()}
        self._validate(defaults)
        self.defaults = defaults
        self.param_groups: list[dict] = []
        self.state: dict[int, dict] = {}
        if isinstance(params, Tensor):
            raise TypeError(
                "params must be an iterable of Tensors or of dicts, got a single Tensor; wrap it in a list: [param]"
            )
        groups = list(params)
        if not groups:
            raise ValueError("params: the optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with optional settings of its own) to optimize."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        params = param_group.get("params")
        if params is None:
            raise ValueError("param_group must have a 'params' entry")
        params = [params] if isinstance(params, Tensor) else list(params)
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"params[{i}]: the optimizer can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"params[{i}]: cannot optimize a non-leaf Tensor (grad_fn={p.grad_fn})")
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if len({id(p) for p in params}) != len(params) or any(id(p) in seen for p in params):
            raise ValueError("params: some parameters appear more than once (in one group or in several groups)")
        settings = {k: _plain(v) for k, v in param_group.items() if k != "params"}
        group = {**self.defaults, **settings, "params": params}
        self._validate(group)
        self.param_groups.append(group)

    def _validate(self, settings: dict) -> None:
        """Raise ValueError for an out-of-range setting; subclasses check theirs."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of all parameters (to None, or to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad._data = np.zeros_like(p._data)

    def step(self, closure: Callable | None = None):
        """Update every parameter that has a gradient.

        Args:
            closure: optional function that re-evaluates the model and returns
                the loss (run with grad enabled); its result is returned.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        index = 0
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p._data, p.grad._data, self.state.setdefault(index, {}), group)
                    p._version += 1
                index += 1
        return loss

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        """Change ``param`` in place from ``grad``; ``state`` persists across steps."""
        raise NotImplementedError

    # ------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """A snapshot in PyTorch's layout, with parameters replaced by their index.

        ``{'state': {index: {name: array or number}}, 'param_groups': [{setting: value, 'params': [index, ...]}]}``
        """
        groups = []
        start = 0
        for group in self.param_groups:
            n = len(group["params"])
            settings = {k: v for k, v in group.items() if k != "params"}
            groups.append({**settings, "params": list(range(start, start + n))})
            start += n
        state = {
            i: {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in s.items()} for i, s in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore settings and state saved by ``state_dict()`` (or read back by ``mt.load``).

        Arrays are copied and cast to their parameter's dtype. The groups must
        have the same sizes as this optimizer's.
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"load_state_dict: the state dict has {len(saved_groups)} parameter groups, "
                f"this optimizer has {len(self.param_groups)}"
            )
        new_groups, position_of = [], {}
        for g, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"load_state_dict: parameter group {g} has {len(saved['params'])} parameters in the state dict, "
                    f"{len(group['params'])} in this optimizer"
                )
            position_of.update((int(i), len(position_of)) for i in saved["params"])
            settings = {k: _plain(tuple(v) if isinstance(self.defaults.get(k), tuple) else v) for k, v in saved.items()}
            new_groups.append({**settings, "params": group["params"]})
        for group in new_groups:
            self._validate(group)
        params = [p for group in self.param_groups for p in group["params"]]
        state = {}
        for index, saved in state_dict["state"].items():
            if int(index) not in position_of:
                raise ValueError(f"load_state_dict: state for parameter {index}, which no parameter group lists")
            position = position_of[int(index)]
            state[position] = {k: _load_value(k, v, params[position]) for k, v in saved.items()}
        self.param_groups, self.state = new_groups, state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _plain(value):
    """A setting with NumPy scalars made Python numbers: a float64 ``lr`` must not upcast float32 updates."""
    if isinstance(value, (np.generic, np.ndarray)) and np.ndim(value) == 0:
        return value.item()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def _load_value(key: str, value, param: Tensor):
    """One state entry from a state dict: arrays become copies in the parameter's dtype."""
    if isinstance(value, Tensor):
        value = value._data
    if key == "step":
        return int(value)
    if value is None or isinstance(value, (int, float)):
        return value
    array = np.asarray(value)
    if array.shape != param.shape:
        raise ValueError(f"load_state_dict: state {key!r} has shape {array.shape}, its parameter has {param.shape}")
    return array.astype(param.dtype, copy=True)


def check_number(name: str, value, low: float = 0.0, high: float = math.inf, high_open: bool = True) -> None:
    """Raise unless ``low <= value < high`` (``<= high`` with ``high_open=False``) and finite."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    below_high = value < high if high_open else value <= high
    if not (math.isfinite(value) and low <= value and below_high):
        interval = f"[{low}, {high})" if high_open else f"[{low}, {high}]"
        raise ValueError(f"{name} must be a finite number in {interval}, got {value}")
