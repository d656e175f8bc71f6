"""Adam and AdamW: gradient steps scaled by running estimates of the gradient's moments.

PyTorch's update rule, for each parameter ``p`` with gradient ``g`` at step ``t`` (from 1)::

    g = -g                                     if maximize
    p = p * (1 - lr * weight_decay)            AdamW (decoupled weight decay)
    g = g + weight_decay * p                   Adam  (L2 penalty in the gradient)
    m = beta1 * m + (1 - beta1) * g            first moment (mean)
    v = beta2 * v + (1 - beta2) * g * g        second moment (uncentred variance)
    v_max = max(v_max, v)                      if amsgrad; then v_max replaces v below
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

The state of a parameter is ``step`` (an int), ``exp_avg`` (m), ``exp_avg_sq`` (v)
and, with amsgrad, ``max_exp_avg_sq``; the arrays have the parameter's dtype.  The update
itself is ``kernels/adam.py``: these lines as NumPy calls (the reference) and as one pass
(the kernel, the default), which give the same bits.

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mt.optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()              # the first Adam step moves each entry by about lr
>>> w.numpy().round(4)
array([ 0.9, -1.9], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .. import backend
from .optimizer import Optimizer, check_number, check_pair


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015), with optional AMSGrad and decoupled weight decay.

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: learning rate (>= 0).
        betas: decay rates of the first and second moment estimates, each in [0, 1).
        eps: added to the denominator for numerical stability (>= 0).
        weight_decay: weight decay coefficient (>= 0); an L2 penalty added to the
            gradient, or with ``decoupled_weight_decay=True`` a shrinking of the weights (AdamW).
        amsgrad: use the running maximum of the second moment (AMSGrad).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: apply weight decay as AdamW does.
        foreach, fused: PyTorch's kernel choices, accepted and ignored (one implementation here).
        capturable, differentiable: must be False (CUDA graphs; a step recorded by autograd).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=tuple(betas) if isinstance(betas, (list, tuple)) else betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        check_pair("betas", settings["betas"])
        check_number("eps", settings["eps"])
        check_number("weight_decay", settings["weight_decay"])

    def step(self, closure: Callable | None = None):
        """Update every parameter that has a gradient (see ``Optimizer.step``).  The step's numbers
        (``backend.adam_settings``) are computed once per group, dtype and step count within the call."""
        self._step_settings = {}
        try:
            return super().step(closure)
        finally:
            self._step_settings = {}

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        step = state["step"] = state["step"] + 1
        key = (id(group), param.dtype, step)
        settings = self._step_settings.get(key)
        if settings is None:
            settings = self._step_settings[key] = backend.adam_settings(
                param.dtype, group["lr"], group["betas"], group["eps"], group["weight_decay"],
                group["decoupled_weight_decay"], step,
            )  # fmt: skip
        v_max = state["max_exp_avg_sq"] if group["amsgrad"] else None
        backend.adam_apply(param, grad, state["exp_avg"], state["exp_avg_sq"], v_max, group["maximize"], settings)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): ``p *= 1 - lr * weight_decay``.

    Same arguments as ``Adam``, except that ``weight_decay`` defaults to 1e-2.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused, decoupled_weight_decay=True,
        )  # fmt: skip
