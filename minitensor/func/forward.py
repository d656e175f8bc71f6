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

from .. import random
from ..autograd import batching, dual
from ..autograd.composite import Alias
from ..ops.shape import stack
from ..tensor import Tensor
from .pytree import tree_flatten, tree_unflatten
from .reverse import _argnums, _split_aux, jacrev

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
    d = Alias.apply(primal)
    if tangent.dtype != primal.dtype:
        tangent = tangent.to(primal.dtype)
    plain = not tangent.requires_grad and dual.carrying([tangent]) is None and not batching.batched([tangent])
    level.set(d, tangent._data if plain else tangent)  # (an array: no graph to keep)
    return d


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


_RANDOMNESS = ("error", "different", "same")


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """A function returning the Jacobian of ``func`` with respect to the argument(s) ``argnums``, by
    forward mode: one Jacobian-vector product per input element (columns of the identity).  Each
    output's block has shape ``output.shape + input.shape``; cheap when the inputs are few.

    ``randomness``: ``"error"`` (a random op inside raises, as PyTorch's), ``"different"`` (each
    column draws its own numbers) or ``"same"`` (every column draws the same numbers).
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

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

        state = random.snapshot()
        columns, value, aux, out_spec = [], None, None, None
        for j, x in enumerate(flat_in):  # one forward pass per element of each input
            per_element = []
            for k in range(x.numel()):
                basis = [_zeros_like(y) for y in flat_in]
                basis[j] = _unit(x, k)
                with _randomness(randomness, state):
                    result = jvp(partial, diff, tree_unflatten(basis, in_spec), has_aux=has_aux)
                value, aux = result[0], (result[2] if has_aux else None)
                flat_o, out_spec = tree_flatten(result[1])
                per_element.append(flat_o)
            columns.append(per_element)
        if value is None:  # (no input elements: evaluate once for the output's structure)
            output = partial(*diff)
            value, aux = _split_aux(output, has_aux, "jacfwd")
        flat_value, out_spec = tree_flatten(value)
        blocks = [
            tree_unflatten([_assemble(cols, i, o, x) for cols, x in zip(columns, flat_in)], in_spec)
            for i, o in enumerate(flat_value)
        ]
        jac = tree_unflatten([b if not isinstance(argnums, int) else b[0] for b in blocks], out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def _zeros_like(x: Tensor) -> Tensor:
    return Tensor._make(np.zeros(x.shape, x.dtype), False, None)


def _unit(like: Tensor, k: int) -> Tensor:
    data = np.zeros(like.shape, like.dtype)
    data.reshape(-1)[k] = 1
    return Tensor._make(data, False, None)


def _assemble(columns: list, i: int, out: Tensor, x: Tensor) -> Tensor:
    """d out_i / d x (out.shape + x.shape) from the columns (one per element of x)."""
    if not columns:
        return Tensor._make(np.zeros(out.shape + x.shape, out.dtype), False, None)
    block = stack([c[i] for c in columns], dim=-1)  # out.shape + (x.numel(),)
    return block.reshape(*out.shape, *x.shape)


class _randomness:
    """How random ops behave in one column of ``jacfwd``: forbidden, free, or replayed."""

    def __init__(self, mode: str, state) -> None:
        self.mode, self.state = mode, state

    def __enter__(self) -> None:
        if self.mode == "error":
            random.forbid(
                "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                "'different' randomness flags on vmap or perform the randomness operation out of vmap"
            )
        elif self.mode == "same":
            random.restore(self.state)

    def __exit__(self, *exc) -> None:
        if self.mode == "error":
            random.forbid(None)


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """The Hessian of the scalar ``func``: ``jacfwd(jacrev(func))``, forward-over-reverse (each
    column a Hessian-vector product).  Blocks of shape ``input.shape + input.shape``."""
    return jacfwd(jacrev(func, argnums), argnums)
