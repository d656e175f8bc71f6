"""RMSprop: gradient steps divided by a running root mean square of the gradient.

PyTorch's update rule, for each parameter ``p`` with gradient ``g``::

    g = -g                                    if maximize
    g = g + weight_decay * p                  if weight_decay != 0
    v = alpha * v + (1 - alpha) * g * g       square_avg
    var = v
    if centered:
        m = alpha * m + (1 - alpha) * g       grad_avg
        var = v - m * m                       (the variance instead of the second moment)
    if momentum > 0:
        b = momentum * b + g / (sqrt(var) + eps)     momentum_buffer
        p = p - lr * b
    else:
        p = p - lr * g / (sqrt(var) + eps)

The state of a parameter is ``step``, ``square_avg``, and ``momentum_buffer`` (with momentum)
and ``grad_avg`` (centered) as the group asked when the parameter first got a step.

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mt.optim.RMSprop([w], lr=0.01)
>>> (w * w).sum().backward()
>>> opt.step()              # the first step moves each entry by about lr / sqrt(1 - alpha)
>>> w.numpy().round(4)
array([ 0.9, -1.9], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes; Graves, 2013, for the centered variant).

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        alpha: the decay rate of the running averages (>= 0).
        eps: added to the denominator for numerical stability (>= 0).
        weight_decay: L2 penalty coefficient (>= 0), added to the gradient.
        momentum: momentum factor (>= 0); 0 turns momentum off.
        centered: divide by the gradient's running variance rather than its second moment.
        capturable, differentiable: must be False (CUDA graphs; a step recorded by autograd).
        foreach: PyTorch's kernel choice, accepted and ignored.
        maximize: ascend the objective instead of descending it.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        for name in ("lr", "eps", "momentum", "weight_decay", "alpha"):
            check_number(name, settings[name])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        alpha, momentum = group["alpha"], group["momentum"]
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param))
            if momentum > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state["step"] += 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * param
        v = state["square_avg"]
        v *= alpha
        v += (1 - alpha) * (g * g)
        if group["centered"]:
            m = state["grad_avg"]
            m *= alpha
            m += (1 - alpha) * g
            denom = np.sqrt(v - m * m) + group["eps"]
        else:
            denom = np.sqrt(v) + group["eps"]
        if momentum > 0:
            b = state["momentum_buffer"]
            b *= momentum
            b += g / denom
            param -= group["lr"] * b
        else:
            param -= group["lr"] * (g / denom)
