"""``Optimizer``: the base class that holds parameters, their settings and their state.

An optimizer owns, as PyTorch's does,

- ``param_groups``: a list of dicts.  Each has a ``'params'`` list of Tensors
  and one value for every hyperparameter (``'lr'``, ``'momentum'`` ...); a
  setting missing from a group is filled in from the optimizer's ``defaults``;
- ``state``: a ``defaultdict(dict)`` keyed by the parameter Tensor itself:
  ``self.state[p]`` is what the update rule remembers about ``p`` between steps
  (momentum buffers, Adam's moving averages), an empty dict before its first
  step.  Tensors hash by identity (their ``__eq__`` is elementwise, but a dict
  finds a key by identity first), so this is PyTorch's keying.
  ``state_dict()`` replaces each parameter by its index (counting through all
  groups in order), PyTorch's layout, so state dicts load across the two.

A built-in optimizer writes one method, ``_update(param, grad, state, group)``,
which changes the NumPy array ``param`` in place; its state holds NumPy arrays
and Python numbers.  Updates work on the arrays directly, so nothing is
recorded in the autograd graph.  An optimizer written for PyTorch (a subclass
that overrides ``step`` and works on Tensors, ``self.state[p]``,
``p.add_(buf, alpha=-lr)``) runs unchanged.

>>> import minitensor as mt
>>> w = mt.tensor([1.0, 2.0], requires_grad=True)
>>> opt = mt.optim.SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
tensor([0.8, 1.6], requires_grad=True)
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from numbers import Real

import numpy as np

from ..autograd.grad_mode import enable_grad
from ..dtypes import get_default_dtype
from ..tensor import Tensor


class _HookHandle:
    """What ``register_step_pre_hook`` / ``register_step_post_hook`` return: ``remove()`` unregisters
    the hook (twice is harmless); as a context manager it removes the hook when the block ends."""

    def __init__(self, hooks: dict, hook: Callable) -> None:
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {type(hook).__name__}")
        self._hooks = hooks
        hooks[self] = hook

    def remove(self) -> None:
        self._hooks.pop(self, None)

    def __enter__(self) -> _HookHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _runs_step_hooks(step: Callable) -> Callable:
    """``step`` with the optimizer's pre- and post-hooks around it.  As in PyTorch, a hook gets
    ``(optimizer, args, kwargs)`` where ``args`` starts with the optimizer itself, and a pre-hook may
    return new ``(args, kwargs)``.  An inner call (a subclass's ``step`` calling ``super().step()``)
    runs no hooks again."""

    @functools.wraps(step)
    def hooked(*args, **kwargs):
        self = args[0]
        if getattr(self, "_in_step", False):
            return step(*args, **kwargs)
        for hook in list(getattr(self, "_step_pre_hooks", {}).values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"a step pre-hook must return None or (args, kwargs), got {result!r}")
                args, kwargs = result
        self._opt_called = True  # (read by the lr schedulers' "step the optimizer first" warning)
        self._in_step = True
        try:
            loss = step(*args, **kwargs)
        finally:
            self._in_step = False
        for hook in list(getattr(self, "_step_post_hooks", {}).values()):
            hook(self, args, kwargs)
        return loss

    hooked._runs_step_hooks = True
    return hooked


class Optimizer:
    """Base class of optimizers.

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs (``model.named_parameters()``),
            or of dicts (parameter groups) each with a ``'params'`` entry and optional
            per-group settings.
        defaults: the settings of a group that does not give its own.
    """

    _scalar_state: tuple[str, ...] = ("step",)  # state entries that are numbers (int step, scalar_dtype()), not arrays

    def __init__(self, params: Iterable, defaults: dict) -> None:
        defaults = {k: _plain(v) for k, v in defaults.items()}
        self._check(defaults)
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict] = []
        self._step_pre_hooks: dict = {}
        self._step_post_hooks: dict = {}
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

    def __init_subclass__(cls, **kwargs) -> None:
        """A subclass's own ``step`` runs the step hooks too (PyTorch wraps it the same way)."""
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_runs_step_hooks", False):
            cls.step = _runs_step_hooks(step)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with optional settings of its own) to optimize.

        ``param_group['params']`` is a Tensor, a list of Tensors or of ``(name, Tensor)`` pairs
        (their names go to ``'param_names'``).  Nothing changes if the group is refused.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError(f"param_group must have a 'params' entry, got keys {sorted(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("params must be an ordered collection (a list), got a set: its order changes between runs")
        params = [params] if isinstance(params, Tensor) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        if names and len(names) != len(params):
            raise ValueError("params: give every parameter a name ((name, Tensor) pairs) or none")
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"params[{i}]: the optimizer can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"params[{i}]: cannot optimize a non-leaf Tensor (grad_fn={p.grad_fn})")
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if len({id(p) for p in params}) != len(params) or any(id(p) in seen for p in params):
            raise ValueError("params: some parameters appear more than once (in one group or in several groups)")
        if self.param_groups and bool(names) != ("param_names" in self.param_groups[0]):
            raise ValueError("params: all parameter groups must be with names or all without")
        settings = {k: _plain(v) for k, v in param_group.items() if k not in ("params", "param_names")}
        group = {**self.defaults, **settings, "params": params}
        if names:
            group["param_names"] = names
        self._check(group)
        self.param_groups.append(group)

    def _check(self, settings: dict) -> None:
        """Check a group's (or the defaults') settings: the optimizer's own, then PyTorch's switches."""
        self._validate(settings)
        if settings.get("differentiable"):
            raise NotImplementedError(
                "differentiable=True is not supported: minitensor's optimizers change the parameters' arrays "
                "outside the autograd graph, so a step cannot be differentiated"
            )
        if settings.get("capturable"):
            raise ValueError("capturable=True is for CUDA graphs; minitensor runs on the CPU (use capturable=False)")

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

    @_runs_step_hooks
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
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    state = self.state.get(p)
                    first = state is None
                    if first:  # the rule fills it, if it remembers anything (SGD without momentum does not)
                        state = {}
                    self._update(p._data, p.grad._data, state, group)
                    p._version += 1
                    if first and state:
                        self.state[p] = state
        return loss

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        """Change ``param`` in place from ``grad``; ``state`` persists across steps."""
        raise NotImplementedError(
            f"{type(self).__name__} must define step(closure=None) (as a PyTorch optimizer does) "
            "or _update(param, grad, state, group)"
        )

    # ------------------------------------------------------------ step hooks
    def register_step_pre_hook(self, hook: Callable) -> _HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return new ``(args, kwargs)``.

        Returns a handle: ``handle.remove()`` unregisters the hook."""
        return _HookHandle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> _HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``.  Returns a handle with ``remove()``."""
        return _HookHandle(self._step_post_hooks, hook)

    # ------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """A snapshot in PyTorch's layout, with parameters replaced by their index.

        ``{'state': {index: {name: array or number}}, 'param_groups': [{setting: value, 'params': [index, ...]}]}``.
        Unlike PyTorch's, the arrays (and Tensors) are copies: the snapshot does not change as training goes on.
        """
        index_of, groups = {}, []
        for group in self.param_groups:
            index_of.update((id(p), len(index_of)) for p in group["params"])
            settings = {k: v for k, v in group.items() if k != "params"}
            groups.append({**settings, "params": [index_of[id(p)] for p in group["params"]]})
        state = {index_of[id(p)]: {k: _copied(v) for k, v in s.items()} for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore settings and state saved by ``state_dict()`` (ours, PyTorch's with arrays, or ``mt.load``'s).

        The groups must have the same sizes as this optimizer's; the saved parameter indices are
        matched to this optimizer's parameters in order.  Arrays are copied and cast to their
        parameter's dtype (``'step'`` stays a number).  Nothing changes if the state dict is refused.
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"load_state_dict: the state dict has {len(saved_groups)} parameter groups, "
                f"this optimizer has {len(self.param_groups)}"
            )
        new_groups, param_of = [], {}
        for g, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"load_state_dict: parameter group {g} has {len(saved['params'])} parameters in the state dict, "
                    f"{len(group['params'])} in this optimizer"
                )
            param_of.update((int(i), p) for i, p in zip(saved["params"], group["params"]))
            settings = {k: _plain(tuple(v) if isinstance(self.defaults.get(k), tuple) else v) for k, v in saved.items()}
            new_group = {**self.defaults, **settings, "params": group["params"]}  # (settings newer than the dict)
            if "param_names" in group and "param_names" not in saved:
                new_group["param_names"] = group["param_names"]
            new_groups.append(new_group)
        for group in new_groups:
            self._check(group)
        as_arrays = type(self)._update is not Optimizer._update
        state = defaultdict(dict)
        for index, saved in state_dict["state"].items():
            if int(index) not in param_of:
                raise ValueError(f"load_state_dict: state for parameter {index}, which no parameter group lists")
            p = param_of[int(index)]
            state[p] = {k: self._loaded(k, v, p, as_arrays) for k, v in saved.items()}
        self.param_groups, self.state = new_groups, state

    def _loaded(self, key: str, value, param: Tensor, as_arrays: bool):
        """One state entry from a state dict, in this optimizer's form: numbers for ``_scalar_state``, arrays
        (built-in optimizers) or Tensors (a PyTorch-style ``step``) in the parameter's dtype and shape."""
        if value is None or isinstance(value, (bool, int, float)):
            return value
        array = value._data if isinstance(value, Tensor) else np.asarray(value)
        if as_arrays and key in self._scalar_state:
            return int(array) if key == "step" else scalar_dtype().type(array)
        if as_arrays and array.shape != param.shape:
            raise ValueError(f"load_state_dict: state {key!r} has shape {array.shape}, its parameter has {param.shape}")
        if array.dtype.kind == "f" and key != "step":
            array = array.astype(param.dtype)
        array = np.array(array)  # a copy
        return array if as_arrays else Tensor._make(array, False, None)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def scalar_dtype() -> np.dtype:
    """The dtype of the scalar state PyTorch keeps as 0-d Tensors (NAdam's ``mu_product``, ASGD's ``eta``
    and ``mu``): float64 when the default dtype is float64, else float32, as PyTorch's; kept so, these
    numbers round as PyTorch's do, and the steps agree to the last digits."""
    return np.dtype(np.float64) if get_default_dtype() == np.float64 else np.dtype(np.float32)


def _plain(value):
    """A setting with NumPy scalars made Python numbers: a float64 ``lr`` must not upcast float32 updates."""
    if isinstance(value, (np.generic, np.ndarray)) and np.ndim(value) == 0:
        return value.item()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def _copied(value):
    """A state entry for a snapshot: arrays and Tensors (also in lists: LBFGS's history) copied, numbers as they are."""
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, Tensor):
        return value.detach().clone()
    return value


def check_number(name: str, value, low: float = 0.0, high: float = math.inf, high_open: bool = True) -> None:
    """Raise unless ``low <= value < high`` (``<= high`` with ``high_open=False``) and finite."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    below_high = value < high if high_open else value <= high
    if not (math.isfinite(value) and low <= value and below_high):
        interval = f"[{low}, {high})" if high_open else f"[{low}, {high}]"
        raise ValueError(f"{name} must be a finite number in {interval}, got {value}")


def check_pair(name: str, value, low: float = 0.0, high: float = 1.0) -> None:
    """Raise unless ``value`` is a pair of numbers each in ``[low, high)`` (Adam's ``betas``)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{name} must be a pair ({name}[0], {name}[1]), got {type(value).__name__} {value!r}")
    if len(value) != 2:
        raise ValueError(f"{name} must be a pair ({name}[0], {name}[1]), got {value!r}")
    check_number(f"{name}[0]", value[0], low=low, high=high)
    check_number(f"{name}[1]", value[1], low=low, high=high)
