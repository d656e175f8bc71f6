"""Adamax: Adam with the infinity norm in place of the second moment.

PyTorch's update rule, for each parameter ``p`` with gradient ``g`` at step ``t`` (from 1)::

    g = -g                                     if maximize
    g = g + weight_decay * p                   if weight_decay != 0
    m = beta1 * m + (1 - beta1) * g            exp_avg
    u = max(beta2 * u, |g| + eps)              exp_inf, the decayed largest |g|
    p = p - lr / (1 - beta1**t) * m / u

The state of a parameter is ``step``, ``exp_avg`` (m) and ``exp_inf`` (u).

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mt.optim.Adamax([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()              # the first step moves each entry by about lr
>>> w.numpy().round(4)
array([ 0.9, -1.9], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number, check_pair


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2015, section 7).

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        betas: decay rates of the first moment and of the infinity norm, each in [0, 1).
        eps: added to |g| for numerical stability (>= 0).
        weight_decay: L2 penalty coefficient (>= 0), added to the gradient.
        foreach: PyTorch's kernel choice, accepted and ignored.
        maximize: ascend the objective instead of descending it.
        differentiable, capturable: must be False (a step recorded by autograd; CUDA graphs).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas) if isinstance(betas, (list, tuple)) else betas, eps=eps,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)  # fmt: skip
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        check_number("eps", settings["eps"])
        check_pair("betas", settings["betas"])
        check_number("weight_decay", settings["weight_decay"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_inf=np.zeros_like(param))
        beta1, beta2 = group["betas"]
        step = state["step"] = state["step"] + 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * param
        m, u = state["exp_avg"], state["exp_inf"]
        m *= beta1
        m += (1 - beta1) * g
        np.maximum(u * beta2, np.abs(g) + group["eps"], out=u)
        clr = group["lr"] / (1 - beta1**step)
        param -= clr * (m / u)
