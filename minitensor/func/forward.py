"""Forward-mode transforms: ``jvp``, ``linearize``, ``jacfwd``, ``hessian``.

``jvp(f, primals, tangents)`` runs ``f`` once on dual tensors at a level of its own (the
``forward_ad`` machinery, ``autograd/dual.py``): each op pushes its inputs' tangents through
its JVP rule, so the output's tangent, ``J·v``, arrives with the output.  No graph is
recorded and nothing is kept for a backward pass.  Levels nest, so ``jvp(jvp(f))`` and
``jacfwd(jacfwd(f))`` give higher derivatives; ``jvp(grad(f))`` is a Hessian-vector
product (forward-over-reverse).

Cost: a Jacobian by forward mode takes one pass per *input* element (``jacfwd``), by reverse
mode one pass per *output* element (``jacrev``): ``jacfwd`` wins for few inputs and many
outputs, ``jacrev`` for the opposite (``benchmarks/bench_func.py`` measures both).

>>> jvp(mt.sin, (mt.tensor([0.0]),), (mt.tensor([2.0]),))   # (sin 0, cos 0 · 2)
(tensor([0.]), tensor([2.]))
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..autograd import dual
from ..autograd.forward_ad import attach
from ..tensor import Tensor
from .pytree import tree_flatten, tree_unflatten
from .reverse import _argnums, _split_aux, jacrev
from .vmap import vmap

_JVP = "jvp(f, primals, tangents)"


def _check_leaves(leaves: list, what: str, fn: str) -> None:
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{fn}: Expected {what} to only contain Tensors, got {type(x)}")


def _dual_at(level, primal: Tensor, tangent: Tensor) -> Tensor:
    """``primal`` as a tensor of its own carrying ``tangent`` at ``level`` (as ``make_dual``)."""
    if tangent.shape != primal.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(primal.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    return attach(level, primal, tangent)


def _tangent_out(level, out: Tensor) -> Tensor:
    """``out``'s tangent at ``level`` as a Tensor (zeros when ``out`` does not depend on the inputs)."""
    t = level.get(out)
    if t is None:
        return Tensor._make(np.zeros(out.shape, out.dtype), False, None)
    return t if isinstance(t, Tensor) else Tensor._make(t, False, None)


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False) -> tuple:
    """``(func(*primals), J·tangents)``: the output and its Jacobian-vector product, in one forward pass.

    Args:
        func: takes the primals (Tensors, or nests of them) and returns a Tensor or a nest of Tensors
            (with ``has_aux``: ``(output, aux)``).
        primals: a tuple of the arguments.
        tangents: the directions, the same structure and shapes as ``primals``.
        strict: accepted for PyTorch's signature (it raises NotImplementedError there too).

    Returns:
        ``(output, jvp_out)`` (``(output, jvp_out, aux)`` with ``has_aux``), ``jvp_out`` shaped as the output.
    """
    if strict:
        raise RuntimeError(f"{_JVP}: strict=True is not implemented (as in PyTorch)")
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, spec_p = tree_flatten(primals)
    flat_t, spec_t = tree_flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For example, if primals is "
            f"a tuple of 3 tensors, tangents also must be. Got primals with structure {spec_p} and tangents with "
            f"structure {spec_t}"
        )
    _check_leaves(flat_p, "primals", _JVP)
    _check_leaves(flat_t, "tangents", _JVP)
    level = dual.enter()
    try:
        duals = [_dual_at(level, p, t) for p, t in zip(flat_p, flat_t)]
        output = func(*tree_unflatten(duals, spec_p))
        value, aux = _split_aux(output, has_aux, _JVP)
        flat_o, spec_o = tree_flatten(value)
        for o in flat_o:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    f"{_JVP}: expected f(*primals) to return only tensors, got unsupported type {type(o)}"
                )
        flat_jvp = [_tangent_out(level, o) for o in flat_o]
    finally:
        dual.exit(level)  # (the outputs keep their values and any outer level's tangents)
    result = (tree_unflatten(flat_o, spec_o), tree_unflatten(flat_jvp, spec_o))
    return (*result, aux) if has_aux else result


def linearize(func: Callable, *primals) -> tuple:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at the primals.

    minitensor evaluates ``func`` again for each call of ``jvp_fn`` (PyTorch traces it once); the
    results are the same for a deterministic ``func``.
    """
    flat_p, spec_p = tree_flatten(primals)
    _check_leaves(flat_p, "primals", "linearize")
    output = func(*primals)

    def jvp_fn(*tangents):
        flat_t, spec_t = tree_flatten(tangents)
        if spec_t != spec_p:
            raise RuntimeError(f"Expected the tangents to have the structure of the primals: {spec_p}, got {spec_t}")
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            if not isinstance(t, Tensor) or t.shape != p.shape:
                raise RuntimeError(
                    f"tangent:{i} with shape {getattr(t, 'shape', type(t))} in flattened pytree doesn't match the "
                    f"shape {p.shape} of the corresponding primal."
                )
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """A function returning the Jacobian of ``func`` with respect to the argument(s) ``argnums``, by
    forward mode: one Jacobian-vector product per input element (columns of the identity), computed
    together by vmap over the tangents.  Each output's block has shape ``output.shape + input.shape``;
    cheap when the inputs are few.

    ``randomness`` (vmap's): ``"error"`` (a random op inside raises, as PyTorch's), ``"different"``
    (each column draws its own numbers) or ``"same"`` (every column draws the same numbers); another
    value raises when the Jacobian is computed (vmap's check), as in PyTorch.
    """

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        diff = tuple(args[i] for i in nums)
        flat_in, in_spec = tree_flatten(diff)
        _check_leaves(flat_in, "inputs", "jacfwd")

        def partial(*xs):
            full = list(args)
            for i, x in zip(nums, xs):
                full[i] = x
            return func(*full, **kwargs)

        def column(*tangents):  # J · (one column of the identity), and aux
            result = jvp(partial, diff, tree_unflatten(list(tangents), in_spec), has_aux=has_aux)
            return (result[1], result[2]) if has_aux else result[1]

        sizes = [x.numel() for x in flat_in]
        if sum(sizes) == 0:  # (no input elements: evaluate once for the output's structure)
            value, aux = _split_aux(partial(*diff), has_aux, "jacfwd")
            columns = _empty_columns(value)
        else:
            columns = vmap(column, randomness=randomness)(*_basis(flat_in, sizes))  # (n, *out.shape) each
            if has_aux:  # (aux does not depend on the column: the first one's, as PyTorch)
                columns, aux = columns
                flat_aux, aux_spec = tree_flatten(aux)
                aux = tree_unflatten([a[0] for a in flat_aux], aux_spec)
        flat_cols, out_spec = tree_flatten(columns)
        blocks = [tree_unflatten(_blocks(c, flat_in, sizes), in_spec) for c in flat_cols]
        jac = tree_unflatten([b if not isinstance(argnums, int) else b[0] for b in blocks], out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def _basis(flat_in: list, sizes: list) -> list:
    """The columns of the identity over all input elements, split per input: ``(n, *x.shape)`` each."""
    n = sum(sizes)
    eye = np.eye(n, dtype=np.result_type(*[x.dtype for x in flat_in]))
    parts = np.split(eye, np.cumsum(sizes)[:-1], axis=1)
    return [Tensor._make(np.ascontiguousarray(p, x.dtype).reshape(n, *x.shape), False, None)
            for p, x in zip(parts, flat_in)]  # fmt: skip


def _empty_columns(value):
    """The (empty) columns of a Jacobian over no input elements: ``(0, *out.shape)`` per output."""
    flat, spec = tree_flatten(value)
    return tree_unflatten([Tensor._make(np.zeros((0, *o.shape), o.dtype), False, None) for o in flat], spec)


def _blocks(columns: Tensor, flat_in: list, sizes: list) -> list:
    """d out / d x (``out.shape + x.shape``) for each input, from the columns ``(n, *out.shape)``."""
    out_shape = tuple(columns.shape[1:])
    rows = columns.reshape(columns.shape[0], int(np.prod(out_shape, dtype=np.int64))).t()  # (out elements, n)
    blocks, start = [], 0
    for x, size in zip(flat_in, sizes):
        blocks.append(rows[:, start : start + size].reshape(*out_shape, *x.shape))
        start += size
    return blocks


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """The Hessian of the scalar ``func``: ``jacfwd(jacrev(func))``, forward-over-reverse (each
    column a Hessian-vector product).  Blocks of shape ``input.shape + input.shape``."""
    return jacfwd(jacrev(func, argnums), argnums)
