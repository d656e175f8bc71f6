"""Adadelta: steps scaled by running averages of squared gradients and of squared steps.

PyTorch's update rule, for each parameter ``p`` with gradient ``g``::

    g = -g                                        if maximize
    g = g + weight_decay * p                      if weight_decay != 0
    v = rho * v + (1 - rho) * g * g               square_avg
    delta = sqrt(u + eps) / sqrt(v + eps) * g     u: acc_delta, the average of squared steps
    u = rho * u + (1 - rho) * delta * delta
    p = p - lr * delta

The state of a parameter is ``step``, ``square_avg`` (v) and ``acc_delta`` (u).

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], dtype=mt.float64, requires_grad=True)
>>> opt = mt.optim.Adadelta([w])
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.numpy().round(5)
array([ 0.99684, -1.99684])
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012).

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: a factor on each step (>= 0; 1.0 is the paper's algorithm).
        rho: the decay rate of the running averages, in [0, 1].
        eps: added inside the square roots for numerical stability (>= 0).
        weight_decay: L2 penalty coefficient (>= 0), added to the gradient.
        foreach: PyTorch's kernel choice, accepted and ignored.
        capturable, differentiable: must be False (CUDA graphs; a step recorded by autograd).
        maximize: ascend the objective instead of descending it.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        check_number("rho", settings["rho"], high=1.0, high_open=False)
        check_number("eps", settings["eps"])
        check_number("weight_decay", settings["weight_decay"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param), acc_delta=np.zeros_like(param))
        rho, eps = group["rho"], group["eps"]
        state["step"] += 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * param
        v, u = state["square_avg"], state["acc_delta"]
        v *= rho
        v += (1 - rho) * (g * g)
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u *= rho
        u += (1 - rho) * (delta * delta)
        param -= group["lr"] * delta
