"""Finite-difference checks of analytic gradients.

``gradcheck(fn, inputs)`` compares, for every element of every input that
requires grad, the gradient autograd computes with a central difference

    (f(x + eps) - f(x - eps)) / (2 * eps).

Outputs are compared through their Jacobian, never through ``.sum()``: the
sum of a softmax is constant, so a wrong softmax backward would pass a
sum-based check.  For small outputs the whole Jacobian is compared row by row;
for larger ones, several random weightings ``w`` of the output (``w · J``).

Run it in float64: float32 differences are too coarse for eps = 1e-6.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from .grad_mode import enable_grad

_FULL_JACOBIAN_MAX = 32  # outputs up to this many elements: every row of J
_N_PROBES = 3  # otherwise: this many random weightings of the output


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when an analytic gradient differs from the numeric one."""


def _as_inputs(inputs) -> list:
    items = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"gradcheck: inputs[{i}] must be a Tensor, got {type(t).__name__}")
    return items


def _check_tolerances(fn: str, **values: float) -> None:
    """eps must be a positive finite number; atol and rtol non-negative finite numbers."""
    for name, value in values.items():
        low_ok = value > 0 if name == "eps" else value >= 0
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and low_ok):
            expected = "a positive" if name == "eps" else "a non-negative"
            raise ValueError(f"{fn}: {name} must be {expected} finite number, got {value!r}")


def _outputs(fn, inputs: list) -> list:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise TypeError(
                f"gradcheck: fn must return a Tensor or a tuple of Tensors; output {i} is {type(o).__name__}"
            )
    return outs


def _flat_output(fn, inputs: list) -> np.ndarray:
    """All outputs of fn, evaluated without building a graph, as one float64 vector."""
    from .grad_mode import no_grad

    with no_grad():
        outs = _outputs(fn, inputs)
    return np.concatenate([np.asarray(o._data, dtype=np.float64).ravel() for o in outs])


def _numeric_jacobian(fn, inputs: list, t: Tensor, eps: float) -> np.ndarray:
    """(n_out, t.numel()) Jacobian of the flat output w.r.t. ``t`` by central differences.

    ``t._data`` is perturbed in place, one element at a time, and restored.
    """
    columns = []
    for idx in np.ndindex(*t.shape):
        orig = t._data[idx].copy()
        try:
            t._data[idx] = orig + eps
            plus = _flat_output(fn, inputs)
            t._data[idx] = orig - eps
            minus = _flat_output(fn, inputs)
        finally:  # restored even when fn raises
            t._data[idx] = orig
        columns.append((plus - minus) / (2 * eps))
    if not columns:  # an empty input: a Jacobian without columns (the output need not be empty)
        return np.zeros((_flat_output(fn, inputs).size, 0))
    return np.stack(columns, axis=1)


def _probes(n_out: int) -> np.ndarray:
    """Rows w: one-hot rows (the full Jacobian) for small outputs, else random weightings."""
    if n_out <= _FULL_JACOBIAN_MAX:
        return np.eye(n_out)
    return np.random.default_rng(0).standard_normal((_N_PROBES, n_out))


def _analytic_rows(fn, inputs: list, checked: list, probes: np.ndarray) -> list:
    """For each probe w: the gradients of w · output w.r.t. each checked input."""
    from . import grad

    with enable_grad():
        outs = _outputs(fn, inputs)
    sizes = [o.numel() for o in outs]
    rows = []
    for w in probes:
        pieces = np.split(w, np.cumsum(sizes)[:-1])
        targets = [(o, p.reshape(o.shape).astype(o.dtype)) for o, p in zip(outs, pieces) if o.requires_grad]
        if not targets:
            rows.append([np.zeros(t.shape) for t in checked])
            continue
        gs = grad([o for o, _ in targets], checked, [g for _, g in targets], retain_graph=True, allow_unused=True)
        rows.append(
            [np.zeros(t.shape) if g is None else np.asarray(g._data, dtype=np.float64) for g, t in zip(gs, checked)]
        )
    return rows


def gradcheck(
    fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True
) -> bool:
    """Check the gradients of ``fn`` at ``inputs`` against central differences.

    Args:
        fn: callable taking the inputs, returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a sequence of Tensors; those with ``requires_grad``
            are checked.  Their data is perturbed in place and restored, so
            module parameters can be passed too.
        eps: finite-difference step.
        atol, rtol: pass when ``|analytic - numeric| <= atol + rtol * |numeric|``.
        raise_exception: raise ``GradcheckError`` on failure (else return False).

    Returns:
        True when every checked element agrees.

    >>> x = mt.randn(3, 4, dtype=mt.float64, requires_grad=True)
    >>> gradcheck(lambda t: t.softmax(-1), x)
    True
    """
    _check_tolerances("gradcheck", eps=eps, atol=atol, rtol=rtol)
    inputs = _as_inputs(inputs)
    if not any(t.requires_grad for t in inputs):
        raise ValueError(
            "gradcheck: no input requires grad, so there is nothing to check; "
            "create the inputs with requires_grad=True (as PyTorch, this is an error, not a pass)"
        )
    _warn_not_float64("gradcheck", inputs, lambda i: f"input {i}")
    msg = _first_mismatch(fn, inputs, eps, atol, rtol, lambda i: f"input {i}")
    if msg is None:
        return True
    if raise_exception:
        raise GradcheckError(f"gradcheck failed for {msg}")
    return False


def _warn_not_float64(fname: str, inputs: list, name_of) -> None:
    for i, t in enumerate(inputs):
        if t.requires_grad and t.dtype != dtypes.float64:
            msg = f"{fname}: {name_of(i)} is {t.dtype}, not float64; the check may fail from rounding alone"
            warnings.warn(msg, stacklevel=3)


def _first_mismatch(fn, inputs: list, eps: float, atol: float, rtol: float, name_of) -> str | None:
    """The first element whose analytic and numeric gradients differ, described, or None.

    ``name_of(i)`` names ``inputs[i]`` in the description (gradgradcheck names
    its grad_outputs differently from its inputs).
    """
    checked = [t for t in inputs if t.requires_grad]
    n_out = _flat_output(fn, inputs).size
    probes = _probes(n_out)
    analytic = _analytic_rows(fn, inputs, checked, probes)
    for k, t in enumerate(checked):
        i = next(j for j, u in enumerate(inputs) if u is t)
        numeric = probes @ _numeric_jacobian(fn, inputs, t, eps)  # (n_probes, numel)
        for p in range(len(probes)):
            a, n = analytic[p][k].ravel(), numeric[p]
            bad = np.flatnonzero(~(np.abs(a - n) <= atol + rtol * np.abs(n)))
            if bad.size:
                elem = np.unravel_index(bad[0], t.shape)
                how = f"output element {p}" if n_out <= _FULL_JACOBIAN_MAX else f"random output weighting {p}"
                return (
                    f"{name_of(i)} at element {tuple(int(e) for e in elem)} ({how}): "
                    f"analytic {a[bad[0]]:.8g} vs numeric {n[bad[0]]:.8g} "
                    f"(difference {abs(a[bad[0]] - n[bad[0]]):.3g}, atol={atol}, rtol={rtol})"
                )
    return None


def numerical_grad(fn, inputs, eps: float = 1e-6):
    """Central-difference gradients of a scalar-valued ``fn`` (for exercises).

    Returns one float64 array per input (a single array when ``inputs`` is a Tensor).

    >>> x = mt.tensor([1.0, 2.0], dtype=mt.float64)
    >>> numerical_grad(lambda t: (t * t).sum(), x)     # ~ [2., 4.]
    """
    _check_tolerances("numerical_grad", eps=eps)
    items = _as_inputs(inputs)
    n_out = _flat_output(fn, items).size
    if n_out != 1:
        raise ValueError(f"numerical_grad: fn must return a single-element tensor, got {n_out} elements")
    grads = [_numeric_jacobian(fn, items, t, eps).reshape(t.shape) for t in items]
    return grads[0] if isinstance(inputs, Tensor) else tuple(grads)
