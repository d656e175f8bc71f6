"""Derivatives of whole functions: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``.

Built from ``autograd.grad`` (reverse mode) and forward mode (``dual.py``), as PyTorch's
``torch.autograd.functional`` with the same signatures and return structures:

- a Tensor for a Tensor input, a tuple for a tuple of inputs;
- ``jacobian``: ``J[i][j]`` of shape ``outputs[i].shape + inputs[j].shape``, nested
  as a tuple over outputs of tuples over inputs (a level is dropped when func
  returns a Tensor or inputs is a Tensor); ``hessian``: ``H[i][j]`` of shape
  ``inputs[i].shape + inputs[j].shape``.

Forward-mode products (``jvp``, ``jacobian(strategy="forward-mode")``) run forward mode: one
pass carries tangents from the inputs to the outputs; ``hvp`` differentiates such a pass.  (PyTorch computes
them with the *double-vjp trick*, two reverse passes; docs/transforms.md tells that lesson.)

``vectorize=True`` is accepted and runs the same loop (one reverse pass per row
or column): minitensor has no batched gradients.

``strict=True`` raises ``RuntimeError`` where the result would be silently zero
because an output does not depend on an input (or, with ``create_graph=True``,
because a derivative does not depend on the inputs).  ``strict=False`` returns zeros.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ..tensor.creation import ones_like, zeros, zeros_like
from . import dual
from .composite import Alias
from .grad_mode import enable_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# ------------------------------------------------------------------ helpers
def _as_tuple(x, what: str, fn: str) -> tuple:
    """(was_tuple, tuple of Tensors): a Tensor becomes a 1-tuple."""
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, (tuple, list)):
        raise TypeError(f"{fn}: {what} must be a Tensor or a tuple of Tensors, got {type(x).__name__}")
    for i, t in enumerate(x):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {what}[{i}] must be a Tensor, got {type(t).__name__}")
    return True, tuple(x)


def _untuple(was_tuple: bool, items: tuple):
    return items if was_tuple else items[0]


def _nested(res, outer_tuple: bool, inner_tuple: bool):
    """Drop the levels of a tuple-of-tuples result that came from a lone Tensor."""
    if not outer_tuple:
        res = res[0]
        return res if inner_tuple else res[0]
    return res if inner_tuple else tuple(r[0] for r in res)


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs to differentiate w.r.t., each a tensor of its own: kept in the caller's graph only with
    create_graph (a Tensor given twice then differentiated per use, through an ``Alias``, as PyTorch's)."""
    if not create_graph:
        return tuple(t.detach().requires_grad_(True) for t in inputs)
    twice = [sum(t is o for o in inputs) > 1 for t in inputs]
    return tuple(
        t.detach().requires_grad_(True) if not t.requires_grad else Alias.apply(t) if repeated else t
        for t, repeated in zip(inputs, twice)
    )


def _finish(items, create_graph: bool):
    """Detach results unless the caller wants to differentiate them again."""
    if create_graph:
        return tuple(items)
    return tuple(None if t is None else t.detach() for t in items)


def _call(func, inputs: tuple, fn: str, strict: bool) -> tuple:
    """(was_tuple, outputs) of func, with strict's check that every output requires grad."""
    with enable_grad():
        was_tuple, outs = _as_tuple(func(*inputs), "the outputs of func", fn)
    if strict:
        for i, o in enumerate(outs):
            if not o.requires_grad:
                raise RuntimeError(
                    f"{fn}: output {i} of the user-provided function does not require gradients; "
                    "in strict mode the outputs must be computed in a differentiable manner from the inputs"
                )
    return was_tuple, outs


def _grads(outputs, inputs, grad_outputs, create_graph: bool) -> list:
    """autograd.grad, with None for every input when no output requires grad."""
    from . import grad

    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    with enable_grad():
        gs = grad(
            [o for o, _ in pairs],
            list(inputs),
            [g for _, g in pairs],
            retain_graph=True,
            create_graph=create_graph,
            allow_unused=True,
        )
    return list(gs)


def _fill_zeros(grads, refs, strict: bool, fn: str, why: str) -> tuple:
    """None -> zeros like the reference (or, strict, a RuntimeError saying ``why`` with the index)."""
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"{fn}: {why.format(i=i)}; this is not allowed in strict mode")
            g = zeros_like(r)
        out.append(g)
    return tuple(out)


def _check_graph(grads, fn: str, what: str, strict: bool, create_graph: bool) -> None:
    """strict with create_graph: every result must depend on the inputs (so it can be differentiated)."""
    if strict and create_graph:
        for i, g in enumerate(grads):
            if not g.requires_grad:
                raise RuntimeError(
                    f"{fn}: the {what} {i} is independent of the inputs of the user-provided function; "
                    "this is not allowed in strict mode with create_graph=True"
                )


def _vectors(v, refs: tuple, refs_tuple: bool, fn: str, of: str) -> tuple:
    """The vector(s) v, checked against refs; default ones when every ref has one element."""
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise ValueError(f"{fn}: v may be omitted only when the {of} is a single-element Tensor; pass v")
        return (ones_like(refs[0]),)
    v_tuple, vs = _as_tuple(v, "v", fn)
    if v_tuple != refs_tuple or len(vs) != len(refs):
        raise ValueError(
            f"{fn}: v must have the structure of the {of} ({len(refs)} Tensor{'s' * (len(refs) != 1)}"
            f"{', a tuple' if refs_tuple else ''}), got {len(vs)}{' (a tuple)' if v_tuple else ''}"
        )
    for i, (a, r) in enumerate(zip(vs, refs)):
        if a.shape != r.shape:
            raise ValueError(f"{fn}: v[{i}] must have the {of}'s shape {r.shape}, got {a.shape}")
    return vs


def _forward(func, xs: tuple, vs: tuple, fn: str, strict: bool, scalar: bool = False) -> tuple:
    """(was_tuple, outputs, J v) in one forward pass at a forward-mode level of its own (``dual.py``):
    the inputs carry the tangents ``vs``, and each output arrives with its tangent (recorded in the
    reverse graph where it depends on the inputs, so it can be differentiated).  ``scalar``: func
    must return one single-element Tensor (``hvp``)."""
    level = dual.enter()
    try:
        for x, v in zip(xs, vs):  # (each input a tensor of its own: _prepare's)
            level.set(x, v if v.requires_grad else v._data)
        duals = xs
        if scalar:
            was_tuple, outs = False, (_scalar_output(func, tuple(duals), fn, strict),)
        else:
            was_tuple, outs = _call(func, tuple(duals), fn, strict)
        found = [level.get(o) for o in outs]
    finally:
        dual.exit(level)
    tangents = [t if t is None or isinstance(t, Tensor) else Tensor._make(t, False, None) for t in found]
    why = "output {i} of the user-provided function is independent of the inputs (its tangent is zero)"
    return was_tuple, outs, _fill_zeros(tangents, outs, strict, fn, why)


# ------------------------------------------------------------------ products
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product, one reverse pass.

    Args:
        func: callable taking Tensors, returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: shaped like func's outputs (may be omitted for a single-element output).
        create_graph: keep the results in a graph (to differentiate them again).
        strict: raise instead of returning zeros for an output independent of an input.

    Returns:
        (outputs, vjp): outputs structured as func returned them, vjp as inputs.

    >>> x = mt.tensor([1.0, 2.0], requires_grad=True)
    >>> vjp(lambda t: t**2, x, mt.tensor([1.0, 1.0]))[1]
    tensor([2., 4.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _call(func, xs, "vjp", strict)
    vs = _vectors(v, outs, out_tuple, "vjp", "output of func")
    gs = _fill_zeros(_grads(outs, xs, vs, create_graph), xs, strict, "vjp", "the output is independent of input {i}")
    _check_graph(gs, "vjp", "vector-Jacobian product for input", strict, create_graph)
    return _untuple(out_tuple, _finish(outs, create_graph)), _untuple(in_tuple, _finish(gs, create_graph))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product, in one forward pass (forward mode).

    ``v`` is shaped like the inputs (may be omitted for a single-element input).
    Returns (outputs, jvp), the jvp structured as func's outputs.  (PyTorch computes it by the
    double-vjp trick, two reverse passes; docs/transforms.md shows both.)

    >>> x = mt.tensor([1.0, 2.0])
    >>> jvp(lambda t: t**2, x, mt.tensor([1.0, 0.0]))[1]
    tensor([2., 0.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepare(xs, create_graph)
    vs = _vectors(v, xs, in_tuple, "jvp", "input")
    out_tuple, outs, jv = _forward(func, xs, vs, "jvp", strict)
    if strict:  # (as PyTorch: every input must be used; the reverse graph tells)
        why = "The output of the user-provided function is independent of input {i}"
        _fill_zeros(_grads(outs, xs, [zeros_like(o) for o in outs], False), xs, strict, "jvp", why)
    _check_graph(jv, "jvp", "Jacobian-vector product for output", strict, create_graph)
    return _untuple(out_tuple, _finish(outs, create_graph)), _untuple(out_tuple, _finish(jv, create_graph))


def _scalar_output(func, xs: tuple, fn: str, strict: bool) -> Tensor:
    out_tuple, outs = _call(func, xs, fn, strict)
    if out_tuple or len(outs) != 1:
        raise RuntimeError(f"{fn}: func must return a single Tensor, got a tuple of {len(outs)}")
    if outs[0].numel() != 1:
        raise RuntimeError(f"{fn}: func must return a single-element Tensor, got shape {outs[0].shape}")
    return outs[0]


def _gradient(func, xs: tuple, fn: str, strict: bool) -> tuple:
    """(output, gradient of the scalar output w.r.t. xs, as a graph)."""
    out = _scalar_output(func, xs, fn, strict)
    g = _fill_zeros(
        _grads([out], xs, [ones_like(out)], create_graph=True), xs, strict, fn, "the output is independent of input {i}"
    )
    return out, g


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar func: the vjp of its gradient.

    ``v`` is shaped like the inputs (may be omitted for a single-element input).

    >>> x = mt.tensor([1.0, 2.0])
    >>> vhp(lambda t: (t**3).sum(), x, mt.tensor([1.0, 1.0]))[1]   # H = diag(6x)
    tensor([ 6., 12.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "vhp")
    xs = _prepare(xs, create_graph)
    vs = _vectors(v, xs, in_tuple, "vhp", "input")
    out, g = _gradient(func, xs, "vhp", strict)
    why = "the gradient with respect to input {i} is independent of the inputs"
    h = _fill_zeros(_grads(g, xs, vs, create_graph), xs, strict, "vhp", why)
    _check_graph(h, "vhp", "vector-Hessian product for input", strict, create_graph)
    return _finish((out,), create_graph)[0], _untuple(in_tuple, _finish(h, create_graph))


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar func: the gradient of its derivative along v (reverse-over-forward).

    One forward pass carries v as the inputs' tangent: func's derivative along v, ``∇f · v``, arrives
    as a graph; one reverse pass differentiates it: ``∇(∇f · v) = H v``.  The gradient itself is never
    computed, where forward-over-reverse (the tangent of the gradient, ``func.jvp(func.grad(f))``)
    computes it and its tangent: for a layer that reads data, one matrix product fewer
    (docs/transforms.md measures both).  Equal to ``vhp`` when H is symmetric.

    >>> x = mt.tensor([1.0, 2.0])
    >>> hvp(lambda t: (t**3).sum(), x, mt.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "hvp")
    xs = _prepare(xs, create_graph)
    vs = _vectors(v, xs, in_tuple, "hvp", "input")
    _, (out,), (slope,) = _forward(func, xs, vs, "hvp", strict, scalar=True)
    if strict:  # (which is independent of an input: the output, or its gradient)
        why = "the output is independent of input {i}"
        _fill_zeros(_grads([out], xs, [ones_like(out)], False), xs, strict, "hvp", why)
    why = "the gradient with respect to input {i} is independent of the inputs"
    h = _fill_zeros(_grads([slope], xs, [ones_like(slope)], create_graph), xs, strict, "hvp", why)
    _check_graph(h, "hvp", "Hessian-vector product for input", strict, create_graph)
    return _finish((out,), create_graph)[0], _untuple(in_tuple, _finish(h, create_graph))


# ------------------------------------------------------------------ matrices
def _one_hot(ref: Tensor, k: int) -> Tensor:
    e = zeros_like(ref)
    e._data.reshape(-1)[k] = 1  # a fresh constant, never in a graph
    return e


def _stack_rows(rows: list, shape: tuple, ref: Tensor) -> Tensor:
    """Rows (one per element of ``shape``) -> a Tensor of shape ``shape + ref.shape``."""
    if not rows:
        return zeros(*shape, *ref.shape, dtype=ref.dtype)
    return np.stack(rows).reshape((*shape, *ref.shape))  # (mt.stack, through the Tensors' NumPy protocol)


def _reverse_jacobian(outs, xs, create_graph: bool, strict: bool, fn: str) -> list:
    """J[i][j] by one reverse pass per output element (rows)."""
    res = []
    for i, o in enumerate(outs):
        rows = [[] for _ in xs]
        for k in range(o.numel()):
            vs = [_one_hot(o, k) if m == i else zeros_like(p) for m, p in enumerate(outs)]
            why = f"output {i} of the user-provided function is independent of input {{i}}"
            gs = _fill_zeros(_grads(outs, xs, vs, create_graph), xs, strict, fn, why)
            for j, g in enumerate(gs):
                rows[j].append(g)
        res.append([_stack_rows(rows[j], o.shape, x) for j, x in enumerate(xs)])
    return res


def _forward_jacobian(func, xs, create_graph: bool, strict: bool, fn: str) -> tuple:
    """(was_tuple, outputs, J[i][j]) by forward mode, one forward pass per input element (columns)."""
    cols, outs, out_tuple = None, None, False
    for j, x in enumerate(xs):
        for k in range(x.numel()):
            vs = tuple(_one_hot(x, k) if m == j else zeros_like(p) for m, p in enumerate(xs))
            out_tuple, outs, jv = _forward(func, xs, vs, fn, strict)
            cols = cols or [[[] for _ in xs] for _ in outs]
            for i, c in enumerate(jv):
                cols[i][j].append(c)
    if outs is None:  # (inputs without elements: one call for the outputs)
        out_tuple, outs = _call(func, xs, fn, strict)
        cols = [[[] for _ in xs] for _ in outs]
    res = []
    for i, o in enumerate(outs):
        row = []
        for j, x in enumerate(xs):
            c = _stack_rows(cols[i][j], x.shape, o)  # x.shape + o.shape
            row.append(c.permute(*range(x.ndim, x.ndim + o.ndim), *range(x.ndim)) if c.ndim else c)
        res.append(row)
    return out_tuple, outs, res


def jacobian(
    func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False, strategy="reverse-mode"
):
    """The Jacobian of func at inputs: ``J[i][j]`` of shape ``outputs[i].shape + inputs[j].shape``.

    Args:
        func: callable taking Tensors, returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: keep the Jacobian in a graph (to differentiate it again).
        strict: raise instead of returning zeros for an output independent of an input.
        vectorize: accepted for PyTorch compatibility; the same loop runs either way.
        strategy: "reverse-mode" (one reverse pass per output element: best for few
            outputs) or "forward-mode" (one forward pass per input element: best for few inputs).

    Returns:
        A Tensor (Tensor in, Tensor out), a tuple over inputs or over outputs, or a
        tuple over outputs of tuples over inputs.

    >>> jacobian(lambda t: t**2, mt.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'jacobian: strategy must be "forward-mode" or "reverse-mode", got {strategy!r}')
    if not isinstance(vectorize, bool):
        raise TypeError(f"jacobian: vectorize must be a bool, got {type(vectorize).__name__}")
    in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    xs = _prepare(xs, create_graph)
    if strategy == "forward-mode":
        out_tuple, outs, res = _forward_jacobian(func, xs, create_graph, strict, "jacobian")
    else:
        out_tuple, outs = _call(func, xs, "jacobian", strict)
        res = _reverse_jacobian(outs, xs, create_graph, strict, "jacobian")
    for row in res:
        _check_graph(row, "jacobian", "Jacobian block for input", strict, create_graph)
    res = tuple(_finish(row, create_graph) for row in res)
    return _nested(res, out_tuple, in_tuple)


def hessian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy="reverse-mode",
):
    """The Hessian of a scalar func: ``H[i][j]`` of shape ``inputs[i].shape + inputs[j].shape``.

    The Jacobian (``outer_jacobian_strategy``) of the gradient, which is itself
    computed by reverse mode with ``create_graph=True``.  A Tensor for a Tensor
    input, a tuple of tuples for a tuple of inputs.

    >>> hessian(lambda t: (t**3).sum(), mt.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*ts):
        g = _gradient(func, ts, "hessian", strict)[1]
        for i, gi in enumerate(g):
            if strict and not gi.requires_grad:
                raise RuntimeError(
                    f"hessian: the gradient of the user-provided function is independent of input {i} "
                    "(its Hessian block is zero); this is not allowed in strict mode"
                )
        return g

    res = jacobian(gradient, xs, create_graph, strict, vectorize, outer_jacobian_strategy)
    return res if in_tuple else res[0][0]
