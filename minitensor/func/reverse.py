"""Reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``.

Each is a function that returns a function, so transforms compose: ``grad(grad(f))`` is the
second derivative of a scalar function, ``jacrev(f)`` its Jacobian.  How: the transform
gives the differentiated inputs fresh identities in the graph (an ``Alias`` node on a
tensor that is already tracked, a new leaf otherwise), runs ``f``, and asks the engine for
the gradients of the output with respect to those (``autograd.grad``).  When the output
also depends on tensors tracked *outside* the transform (an outer ``grad``, or a model's
parameters), the backward is recorded too (``create_graph``), so the gradient it returns
can be differentiated again; otherwise it runs the plain first-order backward, kernels and all.

>>> f = lambda x: (x ** 3).sum()
>>> grad(f)(mt.tensor([2.0]))            # 3 x^2
tensor([12.])
>>> grad(grad(f))(mt.tensor(2.0))         # 6 x
tensor(12.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import autograd
from ..autograd import batching, dual
from ..autograd.composite import Alias
from ..autograd.function import Node
from ..autograd.grad_mode import enable_grad
from ..ops.shape import stack
from ..tensor import Tensor
from .pytree import tree_flatten, tree_unflatten
from .vmap import vmap


# ------------------------------------------------------------------ argument handling
def _argnums(argnums, n: int) -> tuple:
    """The positions to differentiate (ints, possibly negative) as a tuple of non-negative ints."""
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {argnums!r}")
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    for i in nums:
        if not -n <= i < n:
            raise RuntimeError(f"Got argnum={i}, but only {n} positional inputs")
    return tuple(i % n for i in nums)


def track(x, fn: str) -> Tensor:
    """``x`` with an identity of its own in the graph: its gradient is taken through this use only."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"{fn}: expected the differentiated inputs to be Tensors, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if batching.levels and not (isinstance(x, batching.BatchedTensor) and x._level == batching.levels[-1]):
        # inside vmap, a tensor shared by the examples: each example differentiates its own copy of it
        # (a view expanded along the batch), so the gradients are per example
        # (x's tangents, if forward mode is around, are every example's: the copy carries them)
        size = batching.size_of(batching.levels[-1])
        copy = x.detach().unsqueeze(0).expand(size, *x.shape)
        return dual.share_tangents(x, batching.wrap(copy.requires_grad_(True), batching.levels[-1]))
    if x.requires_grad:
        return Alias.apply(x)
    return dual.share_tangents(x, x.detach().requires_grad_(True))  # (forward mode around: the tangents stay)


def reaches_outside(outputs: list, inner: list) -> bool:
    """Does the graph of ``outputs`` reach a tensor that requires grad other than through ``inner``
    (the tracked inputs)?  Then the gradients must be recorded (``create_graph``) for that outer use."""
    inner = [batching.physical(t) for t in inner]
    inner_ids = {id(t.grad_fn or t) for t in inner}
    stack_ = [t.grad_fn for t in outputs if isinstance(t, Tensor) and t.grad_fn is not None]
    seen = set()
    while stack_:
        node = stack_.pop()
        if id(node) in seen or id(node) in inner_ids:
            continue
        seen.add(id(node))
        for parent in node.parents:
            if isinstance(parent, Node):
                stack_.append(parent)
            elif isinstance(parent, Tensor) and id(parent) not in inner_ids:
                return True
    return False


def _gradients(outputs: list, inputs: list, cotangents: list, retain: bool) -> list:
    """d(outputs · cotangents)/d(inputs), zeros for an input the outputs do not use."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if isinstance(o, Tensor) and o.requires_grad]
    if not pairs:
        return [t.detach() * 0 for t in inputs]
    # (an input that was already tracked outside, an Alias of it, has a grad_fn: the gradient, a
    # function of it, must be recorded for that outer use, as must one that reaches other tracked tensors)
    record = any(t.grad_fn is not None for t in inputs) or reaches_outside([o for o, _ in pairs], inputs)
    found = autograd.grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=retain or record,
                          create_graph=record, allow_unused=True)  # fmt: skip
    return [(t.detach() * 0 if g is None else g) for g, t in zip(found, inputs)]


# ------------------------------------------------------------------ grad
def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of the scalar ``func`` with respect to the positional
    argument(s) ``argnums`` (each may be a nest of Tensors: the gradient has the same structure);
    with ``has_aux``, ``func`` returns ``(value, aux)`` and the result is ``(gradient, (value, aux))``.
    Runs with grad mode on, even under an outer ``no_grad`` (as PyTorch's)."""

    def wrapper(*args, **kwargs):
        with enable_grad():
            nums = _argnums(argnums, len(args))
            args = list(args)
            inputs, specs = [], []
            for i in nums:
                leaves, spec = tree_flatten(args[i])
                tracked = [track(x, "grad_and_value(f)(*args)") for x in leaves]
                inputs.append(tracked)
                specs.append(spec)
                args[i] = tree_unflatten(tracked, spec)
            output = func(*args, **kwargs)
            value, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(value, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(value)}")
            if value.ndim != 0 and value.numel() != 1:
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{value.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            flat = [t for group in inputs for t in group]
            grads = iter(_gradients([value], flat, [None], retain=False))
            per_arg = [tree_unflatten([next(grads) for _ in group], spec) for group, spec in zip(inputs, specs)]
        result = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        value = _outward(value, flat)
        return (result, (value, aux)) if has_aux else (result, value)

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of the scalar ``func`` with respect to the argument(s)
    ``argnums`` (``(gradient, aux)`` with ``has_aux``); see ``grad_and_value``."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def _split_aux(output, has_aux: bool, fn: str) -> tuple:
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{fn}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _outward(value, inner: list):
    """A transform's output as the caller sees it: detached unless an outer use tracks it."""
    if isinstance(value, Tensor) and value.requires_grad and not reaches_outside([value], inner):
        return dual.share_tangents(value, value.detach())
    return value


# ------------------------------------------------------------------ vjp
def vjp(func: Callable, *primals, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(cotangents)`` gives the
    vector-Jacobian products, one per primal (a tuple), for cotangents shaped like the output.
    ``vjp_fn`` may be called many times."""
    with enable_grad():
        leaves, spec = tree_flatten(primals)
        tracked = [track(x, "vjp(f, *primals)") for x in leaves]
        output = func(*tree_unflatten(tracked, spec))
        value, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
    out_leaves, out_spec = tree_flatten(value)
    for x in out_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(
                f"vjp(f, *primals): Expected f to be a function that has only Tensors as outputs, got {type(x)}"
            )

    def vjp_fn(cotangents):
        cot_leaves, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to the function."
            )
        for i, (o, c) in enumerate(zip(out_leaves, cot_leaves)):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {getattr(c, 'shape', type(c).__name__)} "
                    f"and output[{i}] has a shape of {o.shape}."
                )
        with enable_grad():
            grads = _gradients(out_leaves, tracked, cot_leaves, retain=True)
        return tree_unflatten(grads, spec)

    value = tree_unflatten([_outward(o, tracked) for o in out_leaves], out_spec)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


# ------------------------------------------------------------------ jacrev
def jacrev(
    func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False, chunk_size: int | None = None
) -> Callable:
    """A function returning the Jacobian of ``func`` with respect to the argument(s) ``argnums``, by
    reverse mode: one vector-Jacobian product per output element (rows of the identity), computed
    together by vmap over the cotangents.  Each output Tensor's Jacobian with respect to an input has
    shape ``output.shape + input.shape``; cheap when the outputs are few.  ``chunk_size``: how many
    rows to compute together (None: all)."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"jacrev: `chunk_size` should be greater than 0, got {chunk_size}")

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        diff = tuple(args[i] for i in nums)

        def partial(*xs):
            full = list(args)
            for i, x in zip(nums, xs):
                full[i] = x
            return func(*full, **kwargs)

        result = vjp(partial, *diff, has_aux=has_aux)
        value, vjp_fn = result[0], result[1]
        out_leaves, out_spec = tree_flatten(value)
        in_leaves, in_spec = tree_flatten(diff)
        blocks = [_rows(vjp_fn, out_leaves, out_spec, i, in_leaves, chunk_size) for i in range(len(out_leaves))]
        per_output = [tree_unflatten(b, in_spec) for b in blocks]
        jac = tree_unflatten([p if not isinstance(argnums, int) else p[0] for p in per_output], out_spec)
        return (jac, result[2]) if has_aux else jac

    return wrapper


def _rows(vjp_fn, out_leaves: list, out_spec, index: int, in_leaves: list, chunk_size) -> list:
    """d out_leaves[index] / d each input (``out.shape + x.shape``), row by row: row k is the VJP of
    the k-th unit cotangent.  All rows at once, by vmap over the cotangents (one backward pass on the
    batch, ``chunk_size`` rows at a time); one backward per row when some op's backward cannot run
    batched (it reads values itself)."""
    out = out_leaves[index]
    n = out.numel()
    if n == 0:
        return [_assemble([], out, x) for x in in_leaves]

    def row(unit):
        basis = [o.detach() * 0 for o in out_leaves]
        basis[index] = unit
        return tuple(tree_flatten(vjp_fn(tree_unflatten(basis, out_spec)))[0])

    units = Tensor._make(np.eye(n, dtype=out.dtype).reshape(n, *out.shape), False, None)
    try:
        rows = vmap(row, chunk_size=chunk_size)(units)
    except batching.ValuesRead:
        rows = [stack(r) for r in zip(*[row(units[k]) for k in range(n)])]
    return [r.reshape(*out.shape, *x.shape) for r, x in zip(rows, in_leaves)]


def _assemble(rows: list, out: Tensor, x: Tensor) -> Tensor:
    """The block d out / d x (out.shape + x.shape) from its rows (one gradient per out element)."""
    if not rows:
        return (x.detach().reshape(-1)[:0] * 0).reshape(*out.shape, *x.shape)
    return stack(rows).reshape(*out.shape, *x.shape)
