"""Schedules given by a function of the step count: ``LambdaLR`` and ``MultiplicativeLR``.

``LambdaLR`` sets ``lr = base_lr * lr_lambda(step)`` (a formula, so not chainable: it overrides
other schedules and an lr set by hand, as PyTorch's); ``MultiplicativeLR`` multiplies the current
lr by ``lr_lambda(step)`` every step (chainable).

A function that is an object with attributes (not a plain function or lambda) has its
``__dict__`` saved by ``state_dict()``, as PyTorch does; plain functions are saved as None.
"""

from __future__ import annotations

import types
from collections.abc import Callable

from ..optimizer import Optimizer
from .base import LRScheduler, check_optimizer, current_values, warn_get_lr_called_outside_step


class _LambdaScheduler(LRScheduler):
    """What ``LambdaLR`` and ``MultiplicativeLR`` share: one function per group, saved as PyTorch does."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        n_groups = len(optimizer.param_groups)
        lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n_groups
        if len(lambdas) != n_groups:
            raise ValueError(f"lr_lambda: expected {n_groups} functions (one per param group), got {len(lambdas)}")
        for i, fn in enumerate(lambdas):
            if not callable(fn):
                raise TypeError(f"lr_lambda[{i}] must be a function of the step count, got {type(fn).__name__}")
        self.optimizer = optimizer
        self.lr_lambdas = lambdas
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        """As ``LRScheduler.state_dict``; ``'lr_lambdas'`` holds each function's ``__dict__`` (None for a
        plain function or lambda)."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict()`` returned (the functions stay; their saved attributes are restored)."""
        state = dict(state_dict)
        saved_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, saved_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    """``lr = base_lr * lr_lambda(step)``.

    Args:
        optimizer: the optimizer.
        lr_lambda: a function of the step count (an int) giving a factor, or a
            list with one such function per parameter group.

    >>> sched = LambdaLR(opt, lambda step: 0.95**step)
    """

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(_LambdaScheduler):
    """Multiply the current learning rate by ``lr_lambda(step)`` at every step after step 0.

    Args:
        optimizer: the optimizer.
        lr_lambda: a function of the step count giving a factor, or a list with one per group.

    >>> sched = MultiplicativeLR(opt, lambda step: 0.95)   # lr = base_lr * 0.95 ** step
    """

    def get_lr(self) -> list[float]:
        warn_get_lr_called_outside_step(self)
        if self._is_initial:
            return current_values(self.optimizer, "lr")
        return [
            group["lr"] * fn(self.last_epoch)
            for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)
        ]
