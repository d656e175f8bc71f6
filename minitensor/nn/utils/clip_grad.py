"""Gradient clipping, in place on ``p.grad`` of each parameter (not recorded by autograd).

``clip_grad_norm_`` treats all gradients as one long vector: if its ``norm_type``
norm exceeds ``max_norm`` every gradient is scaled by
``max_norm / (total_norm + 1e-6)`` (PyTorch's formula), else left as it is.

>>> import minitensor as mt
>>> w = mt.tensor([3.0, 4.0], requires_grad=True)
>>> w.grad = mt.tensor([3.0, 4.0])
>>> round(clip_grad_norm_([w], max_norm=1.0).item(), 4), [round(g, 4) for g in w.grad.tolist()]
(5.0, [0.6, 0.8])
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ...tensor import Tensor


def _grads(parameters) -> list:
    """The gradient arrays of ``parameters`` (a Tensor or an iterable of them) that have one."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = []
    for i, p in enumerate(parameters):
        if not isinstance(p, Tensor):
            raise TypeError(f"parameters[{i}] must be a Tensor, got {type(p).__name__}")
        if p.grad is not None:
            grads.append(p.grad)
    return grads


def _number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients so that their total ``norm_type`` norm is at most ``max_norm``.

    Args:
        parameters: a Tensor or an iterable of Tensors (those without a grad are skipped).
        max_norm: the largest allowed total norm.
        norm_type: p of the p-norm; ``float('inf')`` for the largest absolute value.
        error_if_nonfinite: raise RuntimeError if the total norm is NaN or infinite
            (otherwise the gradients are scaled by a NaN/zero factor, as in PyTorch).
        foreach: accepted for compatibility; ignored.

    Returns:
        The total norm of the gradients before clipping, a 0-d Tensor.
    """
    grads = _grads(parameters)
    max_norm, norm_type = _number(max_norm, "max_norm"), _number(norm_type, "norm_type")
    if not grads:
        return Tensor(0.0)
    dtype = grads[0].dtype
    arrays = [g._data.ravel() for g in grads]
    if math.isinf(norm_type):
        total = max(np.abs(a).max(initial=0.0) for a in arrays)
    else:
        norms = np.array([np.linalg.norm(a, norm_type) if a.size else 0.0 for a in arrays], dtype=dtype)
        total = np.linalg.norm(norms, norm_type)
    total = np.asarray(total, dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is {total.item()}, "
            "so they cannot be clipped; set error_if_nonfinite=False to scale them anyway"
        )
    scale = min(max_norm / (float(total) + 1e-6), 1.0)  # NaN stays NaN, as PyTorch's clamp
    for g in grads:
        g._data *= np.asarray(scale, dtype=g.dtype)
    return Tensor._make(total, False, None)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clip every gradient element into ``[-clip_value, clip_value]``, in place."""
    clip_value = _number(clip_value, "clip_value")
    for g in _grads(parameters):
        np.clip(g._data, -clip_value, clip_value, out=g._data)
