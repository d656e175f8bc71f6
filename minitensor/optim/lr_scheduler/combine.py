"""Schedules made of schedules: ``SequentialLR`` (one after another, switching at milestones) and
``ChainedScheduler`` (all together, each step of each)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ..optimizer import Optimizer
from .base import LRScheduler, check_int, current_values
from .plateau import ReduceLROnPlateau


def _check_schedulers(kind: str, schedulers: Sequence, optimizer: Optimizer) -> None:
    """At least one scheduler, each of ``optimizer``, none a ReduceLROnPlateau (its step needs a metric)."""
    if len(schedulers) < 1:
        raise ValueError(f"{kind}: schedulers must hold at least one scheduler, got none")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            name = type(scheduler).__name__
            raise TypeError(f"{kind}: schedulers[{i}] must be a scheduler (with an optimizer), got {name}")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{kind}: schedulers[{i}] is a ReduceLROnPlateau (its step needs a metric); step it apart")
        if scheduler.optimizer is not optimizer:
            raise ValueError(
                f"{kind}: schedulers[{i}] ({type(scheduler).__name__}) belongs to another optimizer than "
                f"{type(optimizer).__name__}; all must share one"
            )


class _OfSchedulers(LRScheduler):
    """What SequentialLR and ChainedScheduler share: state dicts that nest their schedulers'."""

    def state_dict(self) -> dict:
        """This scheduler's counters, with each inner scheduler's state dict under ``'_schedulers'``."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler.load_state_dict(s)


class SequentialLR(_OfSchedulers):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]`` (restarted at its step 0) ...

    ``milestones`` has one entry fewer than ``schedulers``.  Make the schedulers first (each
    makes its step 0), then this, which undoes their step 0 and redoes only the first's.

    >>> warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
    >>> decay = CosineAnnealingLR(opt, T_max=95)
    >>> sched = SequentialLR(opt, schedulers=[warmup, decay], milestones=[5])
    """

    def __init__(
        self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int], last_epoch: int = -1
    ) -> None:
        _check_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR: milestones must have one entry fewer than schedulers ({len(schedulers) - 1}), "
                f"got {len(milestones)}"
            )
        for i, milestone in enumerate(milestones):
            check_int(f"milestones[{i}]", milestone, low=0)
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in self.optimizer.param_groups:  # back to the initial learning rates ...
            group["lr"] = group["initial_lr"]
        self.recursive_undo()  # ... and the counters before the schedulers' step 0
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Take back the step 0 every scheduler (also inside nested ones) made when it was created."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        """One step of the scheduler whose turn it is (at a milestone: its step 0, from ``base_lrs``)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_OfSchedulers):
    """Step every scheduler of ``schedulers`` at each ``step()``: their (chainable) changes compose.

    >>> sched = ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=2), ExponentialLR(opt, gamma=0.9)])
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler: schedulers must hold at least one scheduler, got none")
        optimizer = optimizer or getattr(schedulers[0], "optimizer", None)
        _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = current_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """One step of each scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = current_values(self._schedulers[-1].optimizer, "lr")
