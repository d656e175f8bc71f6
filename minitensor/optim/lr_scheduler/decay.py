"""Schedules that multiply the learning rate by a factor at some steps: ``StepLR``, ``MultiStepLR``,
``ExponentialLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``.

Each ``get_lr()`` is PyTorch's chainable rule: it multiplies each group's *current* lr, so these
compose with each other and with an lr set by hand.  Each ``_get_closed_form_lr()`` is the same
schedule as a formula of the step count from ``base_lrs`` (what ``step(epoch)`` uses).  Stepped
alone from a fresh optimizer, the two agree (up to rounding).

>>> import minitensor as mt
>>> w = mt.zeros(2, requires_grad=True)
>>> opt = mt.optim.SGD([w], lr=0.1)
>>> warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
>>> decay = StepLR(opt, step_size=10, gamma=0.5)
>>> lrs = []
>>> for _ in range(12):
...     opt.step(); warmup.step(); decay.step()
...     lrs.append(round(opt.param_groups[0]["lr"], 4))
>>> lrs    # warm up over 5 steps, then halve at step 10
[0.028, 0.046, 0.064, 0.082, 0.1, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05]
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable

from ..optimizer import Optimizer, check_number
from .base import LRScheduler, check_int, current_values, warn_get_lr_called_outside_step


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` steps.

    Closed form: ``lr = base_lr * gamma ** (step // step_size)``.

    >>> sched = StepLR(opt, step_size=30, gamma=0.1)   # 0.1 for steps 0-29, 0.01 for 30-59, ...
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        check_int("step_size", step_size, low=1)
        check_number("gamma", gamma)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return current_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each step listed in ``milestones``.

    A milestone listed twice multiplies by ``gamma ** 2``.  Closed form:
    ``lr = base_lr * gamma ** (number of milestones <= step)``.

    >>> sched = MultiStepLR(opt, milestones=[30, 80], gamma=0.1)   # 0.1, then 0.01 at 30, 0.001 at 80
    """

    def __init__(
        self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        milestones = list(milestones)
        for i, milestone in enumerate(milestones):
            check_int(f"milestones[{i}]", milestone, low=0)
        check_number("gamma", gamma)
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        if self.last_epoch not in self.milestones:
            return current_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every step: ``lr = base_lr * gamma ** step``.

    >>> sched = ExponentialLR(opt, gamma=0.95)
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        check_number("gamma", gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        if self._is_initial:  # (a scheduler made over a loaded optimizer keeps the loaded lr)
            return current_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the learning rate by ``factor`` for the first ``total_iters`` steps, then restore it.

    Closed form: ``lr = base_lr * factor`` while ``step < total_iters``, ``base_lr`` afterwards.

    >>> sched = ConstantLR(opt, factor=0.5, total_iters=4)   # half the lr for steps 0-3
    """

    def __init__(
        self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1
    ) -> None:
        check_number("factor", factor, high=1.0, high_open=False)
        if factor == 0:
            raise ValueError("factor must be in (0, 1] (the lr is divided by it at total_iters), got 0")
        check_int("total_iters", total_iters, low=1)
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return current_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to ``end_factor``.

    The factor reaches ``end_factor`` after ``total_iters`` steps and stays there.  Closed form:
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
        check_int("total_iters", total_iters, low=1)
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return current_values(self.optimizer, "lr")
        # the ratio of this step's factor to the previous step's
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * progress
        return [base_lr * factor for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rate to 0 over ``total_iters`` steps along a polynomial of degree ``power``.

    Closed form: ``lr = base_lr * (1 - min(step, total_iters) / total_iters) ** power``.

    >>> sched = PolynomialLR(opt, total_iters=100, power=2.0)
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        check_int("total_iters", total_iters, low=1)
        check_number("power", power)
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return current_values(self.optimizer, "lr")
        remaining, before = 1.0 - self.last_epoch / self.total_iters, 1.0 - (self.last_epoch - 1) / self.total_iters
        factor = (remaining / before) ** self.power
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base_lr in self.base_lrs
        ]
