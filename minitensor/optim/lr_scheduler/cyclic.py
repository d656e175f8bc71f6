"""Cyclical schedules, stepped after every batch: ``CyclicLR`` (Smith, 2017) and ``OneCycleLR``
(Smith & Topin, 2018).  Both may cycle the momentum the opposite way (SGD's ``momentum`` or
Adam's ``beta1``), and both set the lr from a formula of the step count (not chainable), as
PyTorch's.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial

from ..optimizer import Optimizer, check_number
from .base import LRScheduler, check_int, check_optimizer, per_group, warn_get_lr_called_outside_step


def _set_momentum(group: dict, momentum: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _check_cycles_momentum(optimizer: Optimizer) -> bool:
    """Whether the optimizer's momentum is Adam's ``beta1`` (else SGD's ``momentum``); raise if it has neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            f"cycle_momentum=True needs an optimizer with 'momentum' or 'betas', got {type(optimizer).__name__} "
            "(pass cycle_momentum=False)"
        )
    return "betas" in optimizer.defaults


class CyclicLR(LRScheduler):
    """Cycle the lr between ``base_lr`` and ``max_lr``: up over ``step_size_up`` steps, down over
    ``step_size_down`` (default: the same).

    ``mode``: ``'triangular'`` (same amplitude every cycle), ``'triangular2'`` (the amplitude
    halves each cycle), ``'exp_range'`` (it shrinks by ``gamma ** step``); or a ``scale_fn(x)`` in
    [0, 1] of the cycle number (``scale_mode='cycle'``) or of the step (``'iterations'``).  With
    ``cycle_momentum`` the momentum goes from ``max_momentum`` down to ``base_momentum`` as the lr
    goes up.  Call ``step()`` after every batch.

    >>> sched = CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=10)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.8,
        max_momentum: float | list[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = per_group("base_lr", base_lr, optimizer)
        self.max_lrs = per_group("max_lr", max_lr, optimizer)
        check_number("step_size_up", step_size_up)
        if step_size_up == 0:
            raise ValueError("step_size_up must be > 0, got 0")
        if step_size_down is not None:
            check_number("step_size_down", step_size_down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"mode must be 'triangular', 'triangular2' or 'exp_range' or scale_fn given, got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _check_cycles_momentum(optimizer)
            self.base_momentums = per_group("base_momentum", base_momentum, optimizer)
            self.max_momentums = per_group("max_momentum", max_momentum, optimizer)
            if last_epoch == -1:
                for top, base, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, base
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        """The built-in modes' scaling (a custom ``scale_fn`` keeps its ``scale_mode``)."""
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref, self.scale_mode = _triangular_scale_fn, "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref, self.scale_mode = _triangular2_scale_fn, "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref, self.scale_mode = partial(_exp_range_scale_fn, self.gamma), "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at ``x`` (the cycle number or the step, per ``scale_mode``)."""
        return self._scale_fn_custom(x) if self._scale_fn_custom is not None else self._scale_fn_ref(x)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # where in the cycle, in [0, 1)
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio  # going up
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)  # going down
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale_factor * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            momenta = zip(self.base_momentums, self.max_momentums, self.optimizer.param_groups, strict=True)
            for base, top, group in momenta:
                _set_momentum(group, top - (top - base) * scale_factor * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict:
        """As ``LRScheduler.state_dict``, without the scaling function (a custom one's ``__dict__`` is kept,
        a plain function is saved as None), as PyTorch's."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved_fn = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if saved_fn is not None:
            self._scale_fn_custom.__dict__.update(saved_fn)
        self._init_scale_fn()


def _triangular_scale_fn(x: float) -> float:
    return 1.0


def _triangular2_scale_fn(x: float) -> float:
    return 1 / (2.0 ** (x - 1))


def _exp_range_scale_fn(gamma: float, x: float) -> float:
    return gamma**x


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to ``max_lr``, then anneal far below the start (PyTorch's formulas).

    Per group, with ``initial_lr = max_lr / div_factor`` and ``min_lr = initial_lr / final_div_factor``:
    the lr goes from ``initial_lr`` to ``max_lr`` over the first ``pct_start * total_steps - 1``
    steps, then to ``min_lr`` at step ``total_steps - 1`` (``three_phase``: up, back down to
    ``initial_lr``, then to ``min_lr``), each leg a cosine (or linear) interpolation.  With
    ``cycle_momentum`` the momentum (SGD's ``momentum`` or Adam's ``beta1``) moves the opposite way
    between ``max_momentum`` and ``base_momentum``.  Call ``step()`` after every batch;
    stepping more than ``total_steps`` times raises ValueError.

    >>> sched = OneCycleLR(opt, max_lr=0.01, total_steps=1000)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: give total_steps, or both epochs and steps_per_epoch")
            check_int("epochs", epochs, low=1, error=ValueError)
            check_int("steps_per_epoch", steps_per_epoch, low=1, error=ValueError)
            total_steps = epochs * steps_per_epoch
        check_int("total_steps", total_steps, low=1, error=ValueError)
        self.total_steps = total_steps
        check_number("pct_start", pct_start, high=1.0, high_open=False)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy
        up_end = float(pct_start * total_steps) - 1
        if three_phase:
            legs = [(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                    (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]  # fmt: skip
        else:
            legs = [(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]  # fmt: skip
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, leg)) for leg in legs]
        max_lrs = per_group("max_lr", max_lr, optimizer)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _check_cycles_momentum(optimizer)
            tops = per_group("max_momentum", max_momentum, optimizer)
            bases = per_group("base_momentum", base_momentum, optimizer)
            if last_epoch == -1:
                for group, top, base in zip(optimizer.param_groups, tops, bases):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, base
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        """From ``start`` (pct 0) to ``end`` (pct 1): along a half cosine, or a line."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; total_steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = end_step
        return lrs
