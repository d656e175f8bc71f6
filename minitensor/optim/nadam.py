"""NAdam: Adam with Nesterov momentum (the step looks ahead along the momentum).

PyTorch's update rule, for each parameter ``p`` with gradient ``g`` at step ``t`` (from 1)::

    g = -g                                             if maximize
    p = p * (1 - lr * weight_decay)                    if decoupled_weight_decay (NAdamW)
    g = g + weight_decay * p                           else, if weight_decay != 0
    mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))          the momentum schedule
    mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    mu_product = mu_1 * ... * mu_t
    m = beta1 * m + (1 - beta1) * g                    exp_avg
    v = beta2 * v + (1 - beta2) * g * g                exp_avg_sq
    denom = sqrt(v / (1 - beta2**t)) + eps
    p = p - lr * (1 - mu_t) / (1 - mu_product) * g / denom
          - lr * mu_next / (1 - mu_product * mu_next) * m / denom

The state of a parameter is ``step``, ``mu_product`` (a float32 number, as PyTorch's 0-d Tensor:
``optimizer.scalar_dtype()``), ``exp_avg`` (m) and ``exp_avg_sq`` (v).

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], dtype=mt.float64, requires_grad=True)
>>> opt = mt.optim.NAdam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.numpy().round(4)
array([ 0.8944, -1.8944])
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number, check_pair, scalar_dtype


class NAdam(Optimizer):
    """NAdam (Dozat, 2016), and NAdamW with ``decoupled_weight_decay=True``.

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        betas: decay rates of the first and second moment estimates, each in [0, 1).
        eps: added to the denominator for numerical stability (>= 0).
        weight_decay: weight decay coefficient (>= 0): an L2 penalty added to the gradient,
            or with ``decoupled_weight_decay=True`` a shrinking of the weights (as AdamW).
        momentum_decay: how fast the momentum schedule mu_t rises to beta1 (>= 0).
        decoupled_weight_decay: apply weight decay as AdamW does.
        foreach: PyTorch's kernel choice, accepted and ignored.
        maximize: ascend the objective instead of descending it.
        capturable, differentiable: must be False (CUDA graphs; a step recorded by autograd).
    """

    _scalar_state = ("step", "mu_product")

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas) if isinstance(betas, (list, tuple)) else betas, eps=eps,
                        weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)  # fmt: skip
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        check_number("eps", settings["eps"])
        check_pair("betas", settings["betas"])
        check_number("weight_decay", settings["weight_decay"])
        check_number("momentum_decay", settings["momentum_decay"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            mu_product = scalar_dtype().type(1.0)
            state.update(step=0, mu_product=mu_product, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
        lr, (beta1, beta2), weight_decay = group["lr"], group["betas"], group["weight_decay"]
        step = state["step"] = state["step"] + 1
        g = -grad if group["maximize"] else grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * param
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * group["momentum_decay"]))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * group["momentum_decay"]))
        state["mu_product"] = state["mu_product"] * state["mu_product"].dtype.type(mu)  # (in float32, as PyTorch)
        mu_product = float(state["mu_product"])
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m *= beta1
        m += (1 - beta1) * g
        v *= beta2
        v += (1 - beta2) * (g * g)
        denom = np.sqrt(v / (1 - beta2**step)) + group["eps"]
        param -= lr * (1.0 - mu) / (1.0 - mu_product) * (g / denom)
        param -= lr * mu_next / (1.0 - mu_product * mu_next) * (m / denom)
