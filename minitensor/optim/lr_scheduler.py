"""Learning-rate schedules: change each parameter group's ``lr`` as training goes on.

A scheduler remembers the starting learning rates (``base_lrs``, also kept as
``group['initial_lr']``) and a step counter ``last_epoch``.  Each ``step()``
increments the counter and sets every group's ``lr`` to ``get_lr()``, a closed
formula of the counter (``lr = base_lr * factor(last_epoch)``).  Creating a
scheduler already performs step 0.  Call ``scheduler.step()`` after
``optimizer.step()``::

    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    sched = mt.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(model, opt)
        sched.step()          # lr: 0.1 for epochs 0-29, 0.01 for 30-59, ...

The values equal PyTorch's schedulers of the same name: ``StepLR``, ``LambdaLR``,
``LinearLR``, ``CosineAnnealingLR``, ``OneCycleLR`` and ``ReduceLROnPlateau``
(which is stepped with the metric: ``sched.step(val_loss)``); ``LinearWarmup``
is Hugging Face's linear warmup-then-decay.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .optimizer import Optimizer, check_number


class LRScheduler:
    """Base class: subclasses define ``get_lr()``, the learning rates at step ``last_epoch``.

    Args:
        optimizer: the optimizer whose groups' ``lr`` are set.
        last_epoch: the index of the last step taken; -1 starts a new schedule.
            Resuming with another value needs ``'initial_lr'`` in every group
            (prefer ``load_state_dict``).
    """

    _not_saved = ("optimizer",)  # attributes that state_dict() leaves out

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        _check_int("last_epoch", last_epoch, low=-1)
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise ValueError(
                    f"last_epoch={last_epoch} resumes a schedule, but param_groups[{i}] has no 'initial_lr'; "
                    "use last_epoch=-1 and load_state_dict() instead"
                )
        self.optimizer = optimizer
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_lr(self) -> list[float]:
        """The learning rate of each group at step ``last_epoch``."""
        raise NotImplementedError

    def step(self) -> None:
        """Advance the schedule by one step and set each group's ``lr``."""
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``, one per group."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        """Everything the scheduler remembers (numbers and lists), except the optimizer."""
        return {key: value for key, value in vars(self).items() if key not in self._not_saved}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict()`` returned (does not touch the optimizer's ``lr``)."""
        unknown = [key for key in state_dict if key not in vars(self) or key in self._not_saved]
        if unknown:
            raise ValueError(f"load_state_dict: unexpected key(s) {unknown} for {type(self).__name__}")
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(step)``.

    Args:
        optimizer: the optimizer.
        lr_lambda: a function of the step count (an int) giving a factor, or a
            list with one such function per parameter group.  Functions are not
            part of ``state_dict()``.

    >>> sched = LambdaLR(opt, lambda step: 0.95**step)
    """

    _not_saved = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        n_groups = len(optimizer.param_groups)
        lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n_groups
        if len(lambdas) != n_groups:
            raise ValueError(f"lr_lambda: expected {n_groups} functions (one per param group), got {len(lambdas)}")
        for i, fn in enumerate(lambdas):
            if not callable(fn):
                raise TypeError(f"lr_lambda[{i}] must be callable, got {type(fn).__name__}")
        self.lr_lambdas = lambdas
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` steps.

    ``lr = base_lr * gamma ** (step // step_size)``.

    >>> sched = StepLR(opt, step_size=30, gamma=0.1)
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        _check_int("step_size", step_size, low=1)
        check_number("gamma", gamma)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to ``end_factor``.

    The factor reaches ``end_factor`` after ``total_iters`` steps and stays there:
    ``lr = base_lr * (start + (end - start) * min(step, total_iters) / total_iters)``.
    With ``start_factor`` small and ``end_factor=1`` this is a linear warmup.

    >>> sched = LinearLR(opt, start_factor=0.1, total_iters=1000)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        check_number("start_factor", start_factor, high=1.0, high_open=False)
        if start_factor == 0:
            raise ValueError("start_factor must be in (0, 1], got 0")
        check_number("end_factor", end_factor, high=1.0, high_open=False)
        _check_int("total_iters", total_iters, low=1)
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        progress = min(self.last_epoch, self.total_iters) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * progress
        return [base * factor for base in self.base_lrs]


class LinearWarmup(LRScheduler):
    """Linear warmup from 0 to ``base_lr`` over ``warmup_steps``, then linear decay to 0 at ``total_steps``.

    The schedule of Hugging Face's ``get_linear_schedule_with_warmup``, common for transformers::

        factor = step / warmup_steps                                        while step < warmup_steps
        factor = max(0, (total_steps - step) / (total_steps - warmup_steps))  afterwards

    >>> sched = LinearWarmup(opt, warmup_steps=100, total_steps=10_000)
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, total_steps: int, last_epoch: int = -1) -> None:
        _check_int("total_steps", total_steps, low=1)
        _check_int("warmup_steps", warmup_steps, low=0)
        if warmup_steps > total_steps:
            raise ValueError(f"warmup_steps must be <= total_steps ({total_steps}), got {warmup_steps}")
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step < self.warmup_steps:
            factor = step / self.warmup_steps
        else:
            factor = max(0.0, (self.total_steps - step) / max(1, self.total_steps - self.warmup_steps))
        return [base * factor for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine decay from ``base_lr`` to ``eta_min`` over ``T_max`` steps (then back up, periodically).

    ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * step / T_max)) / 2``: the closed
    form of PyTorch's recursive formula (equal to it up to rounding).

    >>> sched = CosineAnnealingLR(opt, T_max=1000, eta_min=1e-5)
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:  # noqa: N803
        _check_int("T_max", T_max, low=1)
        check_number("eta_min", eta_min)
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        factor = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * factor for base in self.base_lrs]


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
        _check_optimizer(optimizer)
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: give total_steps, or both epochs and steps_per_epoch")
            _check_int("epochs", epochs, low=1)
            _check_int("steps_per_epoch", steps_per_epoch, low=1)
            total_steps = epochs * steps_per_epoch
        _check_int("total_steps", total_steps, low=1)
        check_number("pct_start", pct_start, high=1.0, high_open=False)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps, self.anneal_strategy, self.cycle_momentum = total_steps, anneal_strategy, cycle_momentum
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self._phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, top in zip(groups, _per_group("max_lr", max_lr, groups)):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("OneCycleLR: cycle_momentum needs an optimizer with momentum or betas")
            self.use_beta1 = "betas" in optimizer.defaults
            tops = _per_group("max_momentum", max_momentum, groups)
            bases = _per_group("base_momentum", base_momentum, groups)
            if last_epoch == -1:
                for group, top, base in zip(groups, tops, bases):
                    self._set_momentum(group, top)
                    group["max_momentum"], group["base_momentum"] = top, base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; total_steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr0, lr1, m0, m1) in enumerate(self._phases):
                if step <= end_step or i == len(self._phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                start_step = end_step
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` when a metric has stopped improving for ``patience`` steps.

    Call ``step(metric)`` once per evaluation.  ``mode='min'`` (a loss) or ``'max'`` (an
    accuracy); an improvement must beat the best value by ``threshold`` (relative with
    ``threshold_mode='rel'``, absolute with ``'abs'``).  After a reduction, ``cooldown``
    steps pass before bad steps count again; the lr never goes below ``min_lr`` and
    changes smaller than ``eps`` are skipped.  PyTorch's rules exactly.

    >>> sched = ReduceLROnPlateau(opt, patience=3)
    >>> sched.step(val_loss)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | list[float] = 0,
        eps: float = 1e-8,
    ) -> None:
        _check_optimizer(optimizer)
        check_number("factor", factor, high=1.0)
        _check_int("patience", patience, low=0)
        _check_int("cooldown", cooldown, low=0)
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.optimizer = optimizer
        self.mode, self.factor, self.patience, self.cooldown = mode, factor, patience, cooldown
        self.threshold, self.threshold_mode, self.eps = threshold, threshold_mode, eps
        self.min_lrs = _per_group("min_lr", min_lr, optimizer.param_groups)
        self.last_epoch = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _is_better(self, value: float) -> bool:
        if self.threshold_mode == "rel":
            scale = 1 - self.threshold if self.mode == "min" else 1 + self.threshold
            bound = self.best * scale
        else:
            bound = self.best - self.threshold if self.mode == "min" else self.best + self.threshold
        return value < bound if self.mode == "min" else value > bound

    def step(self, metrics) -> None:  # noqa: D102  (the docstring is the class's)
        value = float(metrics)
        self.last_epoch += 1
        if self._is_better(value):
            self.best, self.num_bad_epochs = value, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad steps during a cooldown do not count
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new_lr = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


def _per_group(name: str, value, groups: list) -> list:
    """One value per parameter group: ``value`` repeated, or a list/tuple of the right length."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"{name}: expected {len(groups)} values (one per param group), got {len(value)}")
        return list(value)
    return [value] * len(groups)


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizer must be an Optimizer, got {type(optimizer).__name__}")


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
