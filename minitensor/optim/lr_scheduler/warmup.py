"""``LinearWarmup``: minitensor's linear warmup-then-decay (not in PyTorch; Hugging Face's
``get_linear_schedule_with_warmup``)."""

from __future__ import annotations

from ..optimizer import Optimizer
from .base import LRScheduler, check_int, warn_get_lr_called_outside_step


class LinearWarmup(LRScheduler):
    """Linear warmup from 0 to ``base_lr`` over ``warmup_steps``, then linear decay to 0 at ``total_steps``.

    The schedule of Hugging Face's ``get_linear_schedule_with_warmup``, common for transformers::

        factor = step / warmup_steps                                        while step < warmup_steps
        factor = max(0, (total_steps - step) / (total_steps - warmup_steps))  afterwards

    ``lr = base_lr * factor``: a formula of the step count, like ``LambdaLR`` (which Hugging Face's
    is), so it does not compose with other schedules or an lr set by hand.

    >>> sched = LinearWarmup(opt, warmup_steps=100, total_steps=10_000)
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, total_steps: int, last_epoch: int = -1) -> None:
        check_int("total_steps", total_steps, low=1)
        check_int("warmup_steps", warmup_steps, low=0)
        if warmup_steps > total_steps:
            raise ValueError(f"warmup_steps must be <= total_steps ({total_steps}), got {warmup_steps}")
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        step = self.last_epoch
        if step < self.warmup_steps:
            factor = step / self.warmup_steps
        else:
            factor = max(0.0, (self.total_steps - step) / max(1, self.total_steps - self.warmup_steps))
        return [base * factor for base in self.base_lrs]
