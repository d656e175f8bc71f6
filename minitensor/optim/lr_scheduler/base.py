"""``LRScheduler``: the base of the learning-rate schedules, PyTorch's rules.

A scheduler remembers the starting learning rates (``base_lrs``, also kept as
``group['initial_lr']``) and a step counter ``last_epoch``.  Each ``step()``
increments the counter and sets every group's ``lr`` to ``get_lr()``.

Schedules are *chainable*, as PyTorch's: ``get_lr()`` of most of them works from
the group's **current** ``lr`` (StepLR multiplies it by ``gamma`` every
``step_size`` steps), not from a formula of the step count.  So two schedulers
stepped together compose (a LinearLR warmup and a StepLR decay multiply), and an
``lr`` set by hand (``opt.param_groups[0]['lr'] = 0.01``) is kept and decayed
from.  The closed form of the step count (``_get_closed_form_lr``, from
``base_lrs``) is used only by the deprecated ``step(epoch)``.

Creating a scheduler performs step 0 (``_initial_step``); call ``scheduler.step()``
after ``optimizer.step()`` (PyTorch's warning says so when the order is wrong).

A schedule of your own subclasses ``LRScheduler`` and defines ``get_lr()``::

    class Halving(LRScheduler):
        def get_lr(self):   # halve every group's current lr after step 0
            return [g["lr"] * (0.5 if self.last_epoch > 0 else 1.0) for g in self.optimizer.param_groups]
"""

from __future__ import annotations

import warnings

from ..optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


class LRScheduler:
    """Base class: subclasses define ``get_lr()``, the learning rates at step ``last_epoch``.

    Args:
        optimizer: the optimizer whose groups' ``lr`` are set.
        last_epoch: the index of the last step taken; -1 starts a new schedule.
            Resuming with another value needs ``'initial_lr'`` in every group
            (prefer ``load_state_dict``).

    ``state_dict()`` is everything the scheduler holds except the optimizer (PyTorch's keys,
    so the state dicts of the two libraries load into each other).
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        check_int("last_epoch", last_epoch, low=-1)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"last_epoch={last_epoch} resumes a schedule, but param_groups[{i}] has no 'initial_lr'; "
                        "load the optimizer's state first, or use last_epoch=-1 and load_state_dict()"
                    )
        self.base_lrs: list[float] = current_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """Step 0: count steps from here and set the first learning rates."""
        self._step_count = 0
        with _InitialMode(self):
            self.step()

    def get_lr(self) -> list[float]:
        """The learning rate of each group at step ``last_epoch`` (called by ``step()``; to read the
        current learning rates use ``get_last_lr()``)."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``, one per group."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one step and set each group's ``lr``.

        Args:
            epoch: deprecated (warns, as PyTorch): jump to step ``epoch``, with the closed form
                ``_get_closed_form_lr()`` where the schedule has one.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                "will result in PyTorch skipping the first value of the learning rate schedule. "
                "See more details at "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with WithinStep(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        self._set_lrs(values)

    def _set_lrs(self, values: list[float]) -> None:
        """Set each group's ``lr`` (one value per group) and remember them for ``get_last_lr()``."""
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = current_values(self.optimizer, "lr")

    def state_dict(self) -> dict:
        """Everything the scheduler remembers (numbers and lists), except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict()`` returned (does not touch the optimizer's ``lr``: load the
        optimizer's state too)."""
        self.__dict__.update(state_dict)


class _LRScheduler(LRScheduler):
    """The base class's older name, still imported by many scripts (``from torch.optim.lr_scheduler
    import _LRScheduler``)."""


def warn_get_lr_called_outside_step(scheduler: LRScheduler) -> None:
    """PyTorch's warning when ``get_lr()`` is called by hand: it computes the *next* step's rates."""
    if not scheduler._get_lr_called_within_step:
        warnings.warn(
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
            UserWarning,
            stacklevel=3,
        )


class WithinStep:
    """While ``step()`` runs: ``get_lr()`` is being called by the scheduler itself."""

    def __init__(self, scheduler: LRScheduler) -> None:
        self.scheduler = scheduler

    def __enter__(self) -> None:
        self.scheduler._get_lr_called_within_step = True

    def __exit__(self, *exc) -> None:
        self.scheduler._get_lr_called_within_step = False


class _InitialMode:
    """While step 0 runs (at construction): chainable schedules leave the current lr as it is."""

    def __init__(self, scheduler: LRScheduler) -> None:
        self.scheduler = scheduler

    def __enter__(self) -> None:
        self.scheduler._is_initial = True

    def __exit__(self, *exc) -> None:
        self.scheduler._is_initial = False


# ---------------------------------------------------------------- shared helpers
def current_values(optimizer: Optimizer, key: str) -> list:
    """``group[key]`` of every parameter group (the current ``'lr'``, the ``'initial_lr'`` ...)."""
    return [group[key] for group in optimizer.param_groups]


def per_group(name: str, value, optimizer: Optimizer) -> list:
    """One value per parameter group: ``value`` repeated, or a list/tuple of the right length."""
    n_groups = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n_groups:
            raise ValueError(f"{name}: expected {n_groups} values (one per param group), got {len(value)}")
        return list(value)
    return [value] * n_groups


def check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizer must be an Optimizer, got {type(optimizer).__name__}")


def check_int(name: str, value, low: int, error: type[Exception] = TypeError) -> None:
    """Raise unless ``value`` is an int ``>= low`` (``error`` for a non-int: PyTorch's type where it checks)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{name} must be an int >= {low}, got {type(value).__name__} {value!r}")
    if value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value}")
