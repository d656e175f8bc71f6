"""Finite-difference checks of second derivatives.

``gradgradcheck(func, inputs)`` runs ``gradcheck`` on the *first derivatives*:

    (inputs, grad_outputs) -> autograd.grad(func(*inputs), inputs, grad_outputs, create_graph=True)

The analytic side differentiates the gradient graph that ``create_graph=True``
records (the backward of the backward); the numeric side takes central
differences of the first derivatives themselves.  The gradient is linear in
``grad_outputs``, so checking it w.r.t. them re-checks the first derivative;
checking it w.r.t. the inputs checks the second derivative (Hessian-vector
products ``v^T H`` for the random output weighting ``v = grad_outputs``).

Run it in float64, away from kinks (``relu`` at 0, ``abs`` at 0, ties of
``max``): a second difference straddling a kink is meaningless.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .grad_mode import enable_grad
from .gradcheck import (
    GradcheckError,
    _as_inputs,
    _check_tolerances,
    _first_mismatch,
    _outputs,
    _warn_not_float64,
)

_SEED = 0  # random grad_outputs are reproducible: the same call checks the same thing


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
) -> bool:
    """Check the second derivatives of ``func`` at ``inputs`` against central differences.

    Args:
        func: callable taking the inputs, returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a sequence of Tensors; those with ``requires_grad`` are
            differentiated (twice) and checked.
        grad_outputs: d(loss)/d(output), one per output (a Tensor or a sequence).
            Default: random float64 Tensors that require grad, one per output
            that requires grad (seeded, so the check is reproducible).
        eps: finite-difference step.
        atol, rtol: pass when ``|analytic - numeric| <= atol + rtol * |numeric|``.
        gen_non_contig_grad_outputs: make the random grad_outputs non-contiguous
            views (strided), to exercise backward code on strided gradients.
        raise_exception: raise ``GradcheckError`` on failure (else return False).

    Returns:
        True when every checked element agrees.

    PyTorch's other options (``nondet_tol``, ``check_batched_grad``,
    ``check_fwd_over_rev``, ``fast_mode``, ...) have no counterpart here:
    minitensor has no batched or forward-mode gradients and is deterministic.

    >>> x = mt.randn(3, dtype=mt.float64, requires_grad=True)
    >>> gradgradcheck(lambda t: t.tanh() * t, x)
    True
    """
    _check_tolerances("gradgradcheck", eps=eps, atol=atol, rtol=rtol)
    inputs = _as_inputs(inputs)
    n = len(inputs)
    if grad_outputs is None:
        grad_outputs = _random_grad_outputs(func, inputs, gen_non_contig_grad_outputs)
    else:
        grad_outputs = _as_grad_outputs(grad_outputs)

    def first_derivatives(*args):
        return _first_derivatives(func, list(args[:n]), list(args[n:]))

    def name_of(i: int) -> str:
        return f"input {i}" if i < n else f"grad_outputs[{i - n}]"

    everything = inputs + grad_outputs
    _warn_not_float64("gradgradcheck", everything, name_of)
    msg = _first_mismatch(first_derivatives, everything, eps, atol, rtol, name_of)
    if msg is None:
        return True
    if raise_exception:
        raise GradcheckError(f"gradgradcheck failed (second derivatives; outputs are the first derivatives) for {msg}")
    return False


def _first_derivatives(func, inputs: list, grad_outputs: list) -> tuple:
    """autograd.grad of func's outputs (weighted by grad_outputs) w.r.t. the inputs, as a graph.

    Inputs the outputs do not depend on are left out (as PyTorch's gradgradcheck).
    """
    from . import grad

    with enable_grad():  # gradcheck evaluates its numeric side under no_grad
        outs = _outputs(func, inputs)
        if len(grad_outputs) != len(outs):
            raise ValueError(
                f"gradgradcheck: expected {len(outs)} grad_outputs (one per output), got {len(grad_outputs)}"
            )
        pairs = [(o, g) for o, g in zip(outs, grad_outputs) if o.requires_grad]
        wrt = [t for t in inputs if t.requires_grad]
        if not pairs or not wrt:
            raise ValueError("gradgradcheck: no output of func depends on an input that requires grad")
        grads = grad([o for o, _ in pairs], wrt, [g for _, g in pairs], create_graph=True, allow_unused=True)
    return tuple(g for g in grads if g is not None)


def _random_grad_outputs(func, inputs: list, non_contiguous: bool) -> list:
    """One standard-normal float64 Tensor requiring grad per output of func (strided if asked)."""
    from .grad_mode import no_grad

    rng = np.random.default_rng(_SEED)
    with no_grad():
        outs = _outputs(func, inputs)
    result = []
    for o in outs:
        if non_contiguous and o.numel() > 1:
            data = rng.standard_normal((*o.shape, 2))[..., 0]  # every other float: a strided view
        else:
            data = rng.standard_normal(o.shape)
        result.append(Tensor._make(data, True, None))
    return result


def _as_grad_outputs(grad_outputs) -> list:
    items = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    for i, g in enumerate(items):
        if not isinstance(g, Tensor):
            raise TypeError(f"gradgradcheck: grad_outputs[{i}] must be a Tensor, got {type(g).__name__}")
    return items
