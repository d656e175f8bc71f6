"""Cosine schedules: ``CosineAnnealingLR`` (one half-cosine, then back up periodically) and
``CosineAnnealingWarmRestarts`` (SGDR: the cosine restarts from ``base_lr`` every ``T_i`` steps).

Both follow ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T)) / 2``
(Loshchilov & Hutter, SGDR, 2017).  ``CosineAnnealingLR`` computes it recursively from the current
lr, as PyTorch does, so it composes with other schedules; ``CosineAnnealingWarmRestarts`` computes
it from ``base_lrs``.
"""

from __future__ import annotations

import math
from numbers import Real

from ..optimizer import Optimizer, check_number
from .base import LRScheduler, WithinStep, check_int, current_values, warn_get_lr_called_outside_step


class CosineAnnealingLR(LRScheduler):
    """Cosine decay from ``base_lr`` to ``eta_min`` over ``T_max`` steps (then back up, periodically).

    Each step multiplies the distance to ``eta_min`` by the ratio of two consecutive cosine
    factors (PyTorch's recursive form, equal to the closed form up to rounding when alone).
    At step 0 (when it is made) it leaves each group's current lr as it is: a scheduler made for
    an optimizer whose state was just loaded keeps the checkpoint's lr until its first step.

    >>> sched = CosineAnnealingLR(opt, T_max=1000, eta_min=1e-5)
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:  # noqa: N803
        check_number("T_max", T_max)
        if T_max == 0:
            raise ValueError("T_max must be > 0 (the steps of a half cosine), got 0")
        check_number("eta_min", eta_min)
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        step, t_max, eta_min, groups = self.last_epoch, self.T_max, self.eta_min, self.optimizer.param_groups
        if self._is_initial:
            return current_values(self.optimizer, "lr")
        if self._step_count == 1 and step > 0:  # resumed with last_epoch: the closed form once
            return [eta_min + (base - eta_min) * (1 + math.cos(step * math.pi / t_max)) / 2 for base in self.base_lrs]
        if (step - 1 - t_max) % (2 * t_max) == 0:  # leaving the bottom: the ratio below would be 0 / 0
            rise = (1 - math.cos(math.pi / t_max)) / 2
            return [group["lr"] + (base - eta_min) * rise for base, group in zip(self.base_lrs, groups, strict=True)]
        ratio = (1 + math.cos(math.pi * step / t_max)) / (1 + math.cos(math.pi * (step - 1) / t_max))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        factor = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * factor for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine decay from ``base_lr`` to ``eta_min`` over ``T_i`` steps, then a restart at ``base_lr``.

    The first cycle has ``T_0`` steps, each next one ``T_mult`` times more.  ``step(epoch)`` may be
    given a fractional epoch (``epoch + batch / n_batches``) to anneal within an epoch, as PyTorch's
    (without the deprecation warning: that use is documented).

    >>> sched = CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)   # restarts at steps 10, 30, 70 ...
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,  # noqa: N803
        T_mult: int = 1,  # noqa: N803
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        check_int("T_0", T_0, low=1, error=ValueError)
        check_int("T_mult", T_mult, low=1, error=ValueError)
        if isinstance(eta_min, bool) or not isinstance(eta_min, Real):
            raise ValueError(f"eta_min must be a float or an int, got {type(eta_min).__name__} {eta_min!r}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        factor = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * factor for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance by one step, or go to ``epoch`` (a float may fall within a cycle)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:  # a restart
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"epoch must be >= 0, got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:  # which cycle: T_0 * (1 + T_mult + ... + T_mult**(n-1)) <= epoch
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with WithinStep(self):
            values = self.get_lr()
        self._set_lrs(values)
