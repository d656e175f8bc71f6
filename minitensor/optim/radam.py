"""RAdam: Adam whose adaptive step is switched on gradually, when the variance estimate is reliable.

PyTorch's update rule, for each parameter ``p`` with gradient ``g`` at step ``t`` (from 1)::

    g = -g                                             if maximize
    p = p * (1 - lr * weight_decay)                    if decoupled_weight_decay (RAdamW)
    g = g + weight_decay * p                           else, if weight_decay != 0
    m = beta1 * m + (1 - beta1) * g                    exp_avg
    v = beta2 * v + (1 - beta2) * g * g                exp_avg_sq
    m_hat = m / (1 - beta1**t)
    rho_inf = 2 / (1 - beta2) - 1                      the longest simple moving average
    rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)    its length at step t
    if rho_t > 5:                                      the variance is tractable: rectified Adam
        r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        p = p - m_hat * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r
    else:                                              SGD with momentum
        p = p - m_hat * lr

The state of a parameter is ``step``, ``exp_avg`` (m) and ``exp_avg_sq`` (v).  With the default
betas the first 5 steps are of the SGD kind.

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mt.optim.RAdam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()              # a step of the SGD kind: lr * g
>>> w.numpy().round(4)
array([ 0.8, -1.6], dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number, check_pair


class RAdam(Optimizer):
    """RAdam (Liu et al., 2020), and RAdamW with ``decoupled_weight_decay=True``.

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        betas: decay rates of the first and second moment estimates, each in [0, 1).
        eps: added to the denominator for numerical stability (>= 0).
        weight_decay: weight decay coefficient (>= 0): an L2 penalty added to the gradient,
            or with ``decoupled_weight_decay=True`` a shrinking of the weights (as AdamW).
        decoupled_weight_decay: apply weight decay as AdamW does.
        foreach: PyTorch's kernel choice, accepted and ignored.
        maximize: ascend the objective instead of descending it.
        capturable, differentiable: must be False (CUDA graphs; a step recorded by autograd).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas) if isinstance(betas, (list, tuple)) else betas, eps=eps,
                        weight_decay=weight_decay, maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable)  # fmt: skip
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        check_number("eps", settings["eps"])
        check_pair("betas", settings["betas"])
        check_number("weight_decay", settings["weight_decay"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
        lr, (beta1, beta2), weight_decay = group["lr"], group["betas"], group["weight_decay"]
        step = state["step"] = state["step"] + 1
        g = -grad if group["maximize"] else grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * param
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m *= beta1
        m += (1 - beta1) * g
        v *= beta2
        v += (1 - beta2) * (g * g)
        bias_correction1, bias_correction2 = 1 - beta1**step, 1 - beta2**step
        m_hat = m / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive_lr = bias_correction2**0.5 / (np.sqrt(v) + group["eps"])
            param -= m_hat * lr * adaptive_lr * rect
        else:
            param -= m_hat * lr
