"""Stochastic gradient descent, with optional momentum, Nesterov momentum and weight decay.

PyTorch's update rule, for each parameter ``p`` with gradient ``g``::

    g = -g                                 if maximize
    g = g + weight_decay * p               if weight_decay != 0
    if momentum != 0:
        b = g                              on the first step
        b = momentum * b + (1 - dampening) * g   afterwards
        g = g + momentum * b               if nesterov, else g = b
    p = p - lr * g

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -1.0], requires_grad=True)
>>> opt = mt.optim.SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> w
tensor([ 0.46, -0.46], requires_grad=True)
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum).

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        momentum: momentum factor (>= 0); 0 turns momentum off.
        dampening: how much of the gradient is damped when added to the momentum buffer.
        weight_decay: L2 penalty coefficient (>= 0), added to the gradient.
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening == 0).
        maximize: ascend the objective instead of descending it.
        foreach, fused: PyTorch's kernel choices, accepted and ignored (one implementation here).
        differentiable: must be False (a step is not recorded by autograd).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        check_number("momentum", settings["momentum"])
        check_number("dampening", settings["dampening"], low=-math.inf)
        check_number("weight_decay", settings["weight_decay"])
        if settings["nesterov"] and (settings["momentum"] <= 0 or settings["dampening"] != 0):
            raise ValueError(
                "nesterov=True requires momentum > 0 and dampening == 0, got "
                f"momentum={settings['momentum']}, dampening={settings['dampening']}"
            )

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        momentum = group["momentum"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(grad)  # a copy (and an array even for 0-d grads)
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        param -= group["lr"] * grad
