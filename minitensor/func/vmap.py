"""``vmap``: a function of one example made a function of a batch, as ``torch.func.vmap``.

``vmap(f)(xs)`` runs ``f`` once, on ``BatchedTensor``s (``autograd/batching.py``): each shows
``f`` the shape of one example while holding the whole batch, and each op's batching rule
computes all the examples at once.  ``in_dims`` says which dim of each input is the batch
(None: the same value for every example), ``out_dims`` where the batch dim goes in the
outputs.  Composes with ``grad`` (per-sample gradients), ``jvp``/``jacfwd``/``jacrev`` and
itself.

>>> x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> vmap(lambda row: row.sum())(x)
tensor([3., 7.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import random
from ..autograd import batching
from ..ops.shape import cat
from ..tensor import Tensor
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten

_RANDOMNESS = ("error", "different", "same")


def _name(func) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size: int | None = None):
    """``func`` of one example made a function of a batch.

    Args:
        func: takes Tensors (or nests of them, and other arguments) and returns Tensors (or nests).
        in_dims: per positional argument (a nest matching the arguments, or one int for all): the
            dim that holds the batch, or None for an argument shared by all examples.
        out_dims: per output (a nest, or one int): where the batch dim goes (None: the output does
            not depend on the batch).
        randomness: ``"error"`` (a random op inside raises), ``"different"`` (each example draws
            its own numbers) or ``"same"`` (every example draws the same).
        chunk_size: compute this many examples at a time (None: all at once); the results are the same.
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims(out_dims, func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        size, flat_dims, flat_args, spec = _batched_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat_args, flat_dims, spec, kwargs, out_dims, randomness, size)
        chunks = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            part = [
                x if d is None else x[(slice(None),) * d + (slice(start, start + n),)]
                for x, d in zip(flat_args, flat_dims)
            ]
            chunks.append(_run(func, part, flat_dims, spec, kwargs, out_dims, randomness, n))
        return _concatenated(chunks, out_dims)

    return wrapped


def _check_out_dims(out_dims, func) -> None:
    for d in tree_flatten(out_dims)[0]:
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                "collection of ints representing where in the outputs the vmapped dimension should appear."
            )


def _batched_inputs(func, in_dims, args: tuple) -> tuple:
    """(batch size, the in_dim of each leaf of args, the leaves, args' structure), checked as PyTorch."""
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the structure of "
            f"inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to "
            "vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = tree_flatten(args)
    try:
        flat_dims = broadcast_prefix(in_dims, args, "in_dims")
    except ValueError:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
            f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}."
        ) from None
    for i, (x, d) in enumerate(zip(flat_args, flat_dims)):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension or None."
            )
        if not isinstance(x, Tensor):
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot vmap over "
                "non-Tensor arguments, please use None as the respective in_dim"
            )
        if not -x.dim() <= d < x.dim():
            raise ValueError(
                f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality {x.dim()} "
                f"so expected in_dim to satisfy -{x.dim()} <= in_dim < {x.dim()}."
            )
        flat_dims[i] = d % x.dim()
    sizes = [x.shape[d] for x, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} for "
            "the mapped dimension"
        )
    return sizes[0], flat_dims, flat_args, spec


def _run(func, flat_args: list, flat_dims: list, spec, kwargs: dict, out_dims, randomness: str, size: int):
    level = (batching.levels[-1] + 1) if batching.levels else 1
    inputs = [x if d is None else batching.wrap(_moved(x, d, 0), level) for x, d in zip(flat_args, flat_dims)]
    batching.levels.append(level)
    batching.sizes[level] = size
    previous = batching.randomness
    _draws(randomness, size, level)
    try:
        outputs = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        batching.levels.pop()
        del batching.sizes[level]
        _draws(*(previous or ("same", None, None)))
    return _unbatched(outputs, out_dims, level, size, func)


def _draws(randomness: str, size: int | None, level: int | None) -> None:
    """How random ops draw inside the vmap at ``level``: they raise, draw for each example, or draw once."""
    batching.randomness = None if level is None else (randomness, size, level)
    random.forbid(_RANDOM_ERROR if randomness == "error" else None)
    random.per_example(size if randomness == "different" else None, lambda t: batching.wrap(t, level))


_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' "
    "randomness flags on vmap or perform the randomness operation out of vmap"
)


def _unbatched(outputs, out_dims, level: int, size: int, func):
    """The outputs with this level's batch dim at ``out_dims`` (an output that does not depend on
    the batch is expanded to it, as PyTorch's)."""
    flat, spec = tree_flatten(outputs)
    try:
        dims = _per_output(out_dims, outputs)
    except ValueError:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the structure "
            f"of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has structure {spec}."
        ) from None
    result = []
    for out, d in zip(flat, dims):
        if not isinstance(out, Tensor):
            raise ValueError(
                f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type {type(out)}. Did you "
                "mean to set out_dims= to None for output?"
            )
        is_batched = isinstance(out, batching.BatchedTensor) and out._level == level
        if d is None:
            if is_batched:
                name = _name(func)
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            result.append(out)
            continue
        value = out._value if is_batched else out.unsqueeze(0).expand(size, *out.shape)
        result.append(_moved(value, 0, d % value.dim()))
    return tree_unflatten(result, spec)


def _moved(x: Tensor, source: int, destination: int) -> Tensor:
    """``x`` with dim ``source`` moved to ``destination`` (a view)."""
    if source == destination:
        return x
    order = [d for d in range(x.dim()) if d != source]
    order.insert(destination, source)
    return x.permute(*order)


def _per_output(out_dims, outputs) -> list:
    """One out_dim per output leaf (``out_dims`` an int, or a nest matching the outputs)."""
    if isinstance(out_dims, int):
        return [out_dims] * len(tree_flatten(outputs)[0])
    return broadcast_prefix(out_dims, outputs, "out_dims")


def _concatenated(chunks: list, out_dims):
    """The chunks' outputs joined along each output's batch dim."""
    flats = [tree_flatten(c)[0] for c in chunks]
    spec = tree_flatten(chunks[0])[1]
    dims = _per_output(out_dims, chunks[0])
    joined = [parts[0] if d is None else cat(list(parts), dim=d) for parts, d in zip(zip(*flats), dims)]
    return tree_unflatten(joined, spec)
