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

The values equal PyTorch's schedulers of the same name.
"""

from __future__ import annotations

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


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizer must be an Optimizer, got {type(optimizer).__name__}")


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
