"""ASGD: SGD whose step size decays, with a running average of the parameters (Polyak averaging).

PyTorch's update rule, for each parameter ``p`` with gradient ``g`` at step ``t`` (from 1)::

    g = -g                                     if maximize
    g = g + weight_decay * p                   if weight_decay != 0
    p = p * (1 - lambd * eta)                  a decay term
    p = p - eta * g
    ax = ax + mu * (p - ax)                    the average (ax = p while mu == 1)
    eta = lr / (1 + lambd * lr * t) ** alpha   the next step's step size (the first is lr)
    mu = 1 / max(1, t - t0)                    averaging starts after t0 steps

The state of a parameter is ``step``, ``eta`` and ``mu`` (float32 numbers, as PyTorch's 0-d
Tensors: ``optimizer.scalar_dtype()``) and ``ax``, the averaged parameter (read it for
evaluation: ``opt.state[p]['ax']``).

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mt.optim.ASGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.numpy().round(4)
array([ 0.8, -1.6], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number, scalar_dtype


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (Polyak & Juditsky, 1992).

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        lambd: decay term (>= 0).
        alpha: power of the step size's decay (>= 0).
        t0: the step from which the average starts (>= 0).
        weight_decay: L2 penalty coefficient (>= 0), added to the gradient.
        foreach: PyTorch's kernel choice, accepted and ignored.
        maximize: ascend the objective instead of descending it.
        differentiable, capturable: must be False (a step recorded by autograd; CUDA graphs).
    """

    _scalar_state = ("step", "eta", "mu")

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        for name in ("lr", "lambd", "alpha", "t0", "weight_decay"):
            check_number(name, settings[name])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        number = scalar_dtype().type  # (eta and mu are kept in float32, as PyTorch's)
        if not state:
            state.update(step=0, eta=number(group["lr"]), mu=number(1.0), ax=np.zeros_like(param))
        lr, lambd = group["lr"], group["lambd"]
        step = state["step"] = state["step"] + 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * param
        eta, mu = float(state["eta"]), float(state["mu"])
        param *= 1 - lambd * eta
        param -= eta * g
        if mu != 1:
            state["ax"] += mu * (param - state["ax"])
        else:
            state["ax"][...] = param
        state["eta"] = number(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"] = number(1 / max(1, step - group["t0"]))
