"""Adagrad: each coordinate's step shrinks with the sum of its past squared gradients.

PyTorch's update rule, for each parameter ``p`` with gradient ``g`` at step ``t`` (from 1)::

    g = -g                                    if maximize
    g = g + weight_decay * p                  if weight_decay != 0
    clr = lr / (1 + (t - 1) * lr_decay)
    sum = sum + g * g                         (starts at initial_accumulator_value)
    p = p - clr * g / (sqrt(sum) + eps)

The state of a parameter is ``step`` and ``sum``.  As PyTorch's, the state of every parameter
is made when the optimizer is (so ``state_dict()`` has it before the first step), and
``sum`` starts at the optimizer's ``initial_accumulator_value`` (a group's own value is not used).

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mt.optim.Adagrad([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()              # the first step moves each entry by about lr
>>> w.numpy().round(4)
array([ 0.9, -1.9], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011).

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        lr_decay: the lr at step t is ``lr / (1 + (t - 1) * lr_decay)`` (>= 0).
        weight_decay: L2 penalty coefficient (>= 0), added to the gradient.
        initial_accumulator_value: the starting value of the sum of squared gradients (>= 0).
        eps: added to the denominator for numerical stability (>= 0).
        foreach, fused: PyTorch's kernel choices, accepted and ignored (one implementation here).
        maximize: ascend the objective instead of descending it.
        differentiable: must be False (a step is not recorded by autograd).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p._data)

    def _validate(self, settings: dict) -> None:
        for name in ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            check_number(name, settings[name])

    def _init_state(self, state: dict, param: np.ndarray) -> None:
        state["step"] = 0
        state["sum"] = np.full_like(param, self.defaults["initial_accumulator_value"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:  # a parameter added by add_param_group
            self._init_state(state, param)
        state["step"] += 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * param
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += g * g
        param -= clr * (g / (np.sqrt(state["sum"]) + group["eps"]))
