"""Rprop: each coordinate moves by its own step size, grown while the gradient keeps its sign and
shrunk when it flips; only the gradient's sign is used.

PyTorch's update rule, for each parameter ``p`` with gradient ``g`` (etas = (eta_minus, eta_plus),
step_sizes = (smallest, largest))::

    g = -g                                          if maximize
    where g * prev > 0:  step_size = min(step_size * eta_plus, largest)
    where g * prev < 0:  step_size = max(step_size * eta_minus, smallest);  g = 0  (no move, no memory)
    p = p - sign(g) * step_size
    prev = g

The state of a parameter is ``step``, ``prev`` (the last gradient used) and ``step_size``
(per coordinate, starting at the group's lr).

>>> import minitensor as mt
>>> w = mt.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mt.optim.Rprop([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()              # the first step: lr against the gradient's sign
>>> w.numpy().round(4)
array([ 0.9, -1.9], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer, check_number, check_pair


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun, 1993).

    Args:
        params: Tensors to optimize, or dicts of parameter groups.
        lr: the initial step size of every coordinate (>= 0).
        etas: (eta_minus, eta_plus), the factors that shrink and grow the step sizes,
            with 0 < eta_minus < 1 < eta_plus.
        step_sizes: (smallest, largest) step size, 0 <= smallest <= largest.
        capturable, differentiable: must be False (CUDA graphs; a step recorded by autograd).
        foreach: PyTorch's kernel choice, accepted and ignored.
        maximize: ascend the objective instead of descending it.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            etas=tuple(etas) if isinstance(etas, (list, tuple)) else etas,
            step_sizes=tuple(step_sizes) if isinstance(step_sizes, (list, tuple)) else step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        etas = settings["etas"]
        check_pair("etas", etas, high=float("inf"))
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"etas must be (eta_minus, eta_plus) with 0 < eta_minus < 1 < eta_plus, got {etas!r}")
        sizes = settings["step_sizes"]
        check_pair("step_sizes", sizes, high=float("inf"))
        if sizes[0] > sizes[1]:
            raise ValueError(f"step_sizes must be (smallest, largest) with smallest <= largest, got {sizes!r}")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, prev=np.zeros_like(param), step_size=np.full_like(grad, group["lr"]))
        eta_minus, eta_plus = group["etas"]
        smallest, largest = group["step_sizes"]
        state["step"] += 1
        g = -grad if group["maximize"] else grad
        agreement = g * state["prev"]  # > 0: same sign as last time; < 0: the sign flipped
        step_size = state["step_size"]
        step_size *= np.where(agreement > 0, eta_plus, np.where(agreement < 0, eta_minus, 1.0))
        np.clip(step_size, smallest, largest, out=step_size)
        g = np.where(agreement < 0, 0, g)
        param -= np.sign(g) * step_size
        state["prev"][...] = g
