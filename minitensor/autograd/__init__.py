"""Reverse-mode automatic differentiation: the graph, the engine, gradient checks.

- ``function.py``: ``Function`` (one op: forward/backward on arrays; its ``jvp`` and ``batch``
  rules) and ``Node``; ``user_function.py``: a user's Function on Tensors, as PyTorch's.
- ``graph.py``: the graph as PyTorch exposes it (``Node``, ``saved_tensors_hooks`` ...);
  ``saved.py``: what ops saved, watched and handed back; ``composite.py``: a fused op's
  derivatives from its formula.
- ``forward_ad.py`` and ``dual.py``: forward mode (tangents, levels); ``batching.py``: vmap's rules.
- ``engine.py``: the backward pass (iterative topological order).
- ``grad_mode.py``: ``no_grad`` / ``enable_grad`` (thread-local).
- ``gradcheck.py``: ``gradcheck``, ``numerical_grad``, ``GradcheckError``.
- ``gradgradcheck.py``: ``gradgradcheck`` (second derivatives).
- ``functional.py``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``.
- ``anomaly.py``: ``detect_anomaly`` / ``set_detect_anomaly`` (the forward line behind a NaN gradient).
"""

from __future__ import annotations

from ..tensor import Tensor

# the submodules PyTorch's torch.autograd has as attributes (functional's functions call grad, below, when they run)
from . import batching, forward_ad, functional, graph, profiler
from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import _seed_grad, run_backward
from .function import Function, Node
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, numerical_grad
from .gradgradcheck import gradgradcheck

__all__ = [
    "Function",
    "Node",
    "GradcheckError",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "functional",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "numerical_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple:
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned instead of stored in ``.grad``.

    Args:
        outputs: a Tensor or a sequence of Tensors.
        inputs: a Tensor or a sequence of Tensors that require grad.
        grad_outputs: d(loss)/d(output) for each output (may be omitted for
            single-element outputs); Tensors, possibly in a graph themselves.
        retain_graph: keep the graph for another backward pass (default: ``create_graph``).
        create_graph: record the backward pass, so the gradients are Tensors in a
            graph that can be differentiated again (higher-order derivatives).
        allow_unused: return None for an input the outputs do not depend on
            (otherwise that raises ``RuntimeError``).

    Returns:
        A tuple of Tensors (or None), one per input.

    >>> x = mt.tensor(3.0, requires_grad=True)
    >>> (dy,) = mt.autograd.grad(x**3, x, create_graph=True)   # 3x^2 = 27, a Tensor in a graph
    >>> mt.autograd.grad(dy, x)                                # 6x = 18
    (tensor(18.),)
    """
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs] * len(outputs)
    grad_outputs = list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: expected {len(outputs)} grad_outputs (one per output), got {len(grad_outputs)}")
    for kind, items in (("outputs", outputs), ("inputs", inputs)):
        for i, t in enumerate(items):
            if not isinstance(t, Tensor):
                raise TypeError(f"grad: {kind}[{i}] must be a Tensor, got {type(t).__name__}")
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"grad: inputs[{i}] does not require grad")
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(f"grad: outputs[{i}] does not require grad and has no grad_fn")
    retain_graph = create_graph if retain_graph is None else retain_graph
    logical = inputs
    if batching.levels and batching.batched([*outputs, *inputs]):  # inside vmap: the batched graph
        outputs, inputs, grad_outputs = batching.physical_grad_args(outputs, inputs, grad_outputs)
    seeds = [_seed_grad(o, g, "grad_outputs", create_graph) for o, g in zip(outputs, grad_outputs)]
    grads = run_backward(outputs, seeds, retain_graph, capture=inputs, create_graph=create_graph)
    for i, g in enumerate(grads):
        if g is None and not allow_unused:
            raise RuntimeError(f"grad: inputs[{i}] was not used to compute the outputs; pass allow_unused=True")
    return tuple(None if g is None else batching.like(x, _as_tensor(g)) for g, x in zip(grads, logical))


def _as_tensor(g):
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor._make(g, False, None)
