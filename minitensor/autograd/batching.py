"""vmap's machinery: tensors that stand for a batch of examples, and each op's batching rule.

Inside ``vmap(f)``, ``f`` sees ``BatchedTensor``s: each shows the shape of *one* example
(its logical shape) and holds the whole batch in ``_value``, a plain Tensor with the batch
dim first (its physical shape).  When an op meets one (``Function.apply``), its *batching
rule* computes the batch in one go on the physical values: an elementwise op simply runs
(after aligning the ranks, so broadcasting still pairs the right dims); a reduction over
``dim`` runs over ``dim + 1``; a matmul treats the batch dim as one more matrix batch dim.
The rule is an attribute of the op's class, beside its ``backward`` and ``jvp``:

    class Exp(Op):
        ...
        batch = elementwise          # (a rule: a function of a ``Batch``, returning the physical output)

An op without a rule runs once per example and the results are stacked (``loop``), with a
warning naming the op the first time, as PyTorch warns of its slow fallback.

The physical values are ordinary tensors: reverse mode and forward mode see the batched
computation as it runs, so ``vmap(grad(f))`` is one backward pass over the batch whose
gradients are the examples' own (per-sample gradients), and ``vmap(jvp(f))`` one forward pass.

Levels nest (``vmap(vmap(f))``): a BatchedTensor's value may itself be a BatchedTensor of
an outer level; an op takes the innermost level first, and the ops its rule runs on the
values meet the outer levels in turn.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from ..tensor import Tensor

levels: list = []  # the active vmap levels (ints), outermost first
sizes: dict = {}  # level -> its batch size
randomness = None  # (mode, batch size, level) of the innermost vmap: how its random ops draw


def size_of(level: int) -> int:
    """The batch size of the active vmap ``level``."""
    return sizes[level]


_warned: set = set()  # ops whose slow fallback has been announced


class ValuesRead(RuntimeError):
    """An op without a batching rule read the values of a batched tensor (they differ per example)."""


_READS_VALUES = (
    "vmap: an operation read the values of a batched tensor directly (they differ from example to "
    "example), and it has no batching rule. Use tensor operations, or compute it outside vmap."
)


class _OneExample:
    """What a BatchedTensor's ``_data`` gives: the metadata of one example (``shape``, ``ndim``,
    ``dtype``, ``size``: what argument checks read), and an error for anything that reads values."""

    __array_ufunc__ = None  # (NumPy's ufuncs refuse it instead of making an object array)

    def __init__(self, value) -> None:
        self.shape, self.dtype = tuple(value.shape[1:]), value.dtype
        self.ndim, self.size = len(self.shape), int(np.prod(self.shape, dtype=np.int64))

    def __array__(self, *args, **kwargs):
        raise ValuesRead(_READS_VALUES)

    def __array_function__(self, *args, **kwargs):
        raise ValuesRead(_READS_VALUES)

    def __getattr__(self, name: str):
        raise ValuesRead(_READS_VALUES)

    def __getitem__(self, key):
        raise ValuesRead(_READS_VALUES)


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: the logical shape of one example, the whole batch in ``_value``
    (batch dim first) at vmap level ``_level``."""

    __slots__ = ("_value", "_level")

    _data = property(lambda self: _OneExample(self._value))  # (an op with a rule never reads values)

    def __init__(self, value: Tensor, level: int) -> None:
        self._value, self._level = value, level
        self.grad = None
        self._version_counter = self._view_of = self._hooks = None

    grad_fn = property(lambda self: self._value.grad_fn)
    _requires_grad = property(lambda self: self._value._requires_grad)
    shape = property(lambda self: tuple(self._value.shape[1:]))
    ndim = property(lambda self: self._value.ndim - 1)
    dtype = property(lambda self: self._value.dtype)

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def requires_grad_(self, requires_grad: bool = True) -> BatchedTensor:
        self._value.requires_grad_(requires_grad)
        return self

    def detach(self) -> BatchedTensor:
        return BatchedTensor(self._value.detach(), self._level)

    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on "
            "a Tensor, please try to rewrite what you're doing with other operations."
        )

    def __bool__(self) -> bool:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
            "support that yet: compute both branches and select with torch.where (mt.where)."
        )

    def numpy(self):
        raise RuntimeError("vmap: .numpy() of a batched tensor is not supported (its values differ per example)")

    tolist = numpy

    def backward(self, *args, **kwargs):
        raise RuntimeError("vmap: backward() inside vmap is not supported; use minitensor.func.grad inside vmap")

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._value!r}\n)"


def batched(values) -> bool:
    """Is one of ``values`` a BatchedTensor?"""
    return any(isinstance(x, BatchedTensor) for x in values)


def levels_of(x) -> set:
    """The vmap levels ``x`` is batched at."""
    found = set()
    while isinstance(x, BatchedTensor):
        found.add(x._level)
        x = x._value
    return found


def wrap(value: Tensor, level: int) -> BatchedTensor:
    return BatchedTensor(value, level)


def physical(x):
    """``x`` with every vmap level unwrapped: the plain tensor holding all the batches."""
    while isinstance(x, BatchedTensor):
        x = x._value
    return x


def like(x, value: Tensor):
    """``value`` (a plain tensor shaped like ``physical(x)``) wrapped in ``x``'s levels."""
    chain = []
    while isinstance(x, BatchedTensor):
        chain.append(x._level)
        x = x._value
    for level in reversed(chain):
        value = _wrap_level(value, level)
    return value


def _wrap_level(value: Tensor, level: int) -> BatchedTensor:
    """``value``'s (logical) dim 0 as vmap ``level``'s batch: the inverse of ``_unwrap_level`` (levels
    deeper than ``level`` that value carries stay the outer wrappers, as they nest)."""
    if isinstance(value, BatchedTensor) and value._level > level:
        return BatchedTensor(_wrap_level(value._value.transpose(0, 1), level), value._level)
    return BatchedTensor(value, level)


class Batch:
    """What a batching rule sees: the op and its inputs at one level.

    Attributes:
        op: the op's class; settings: its keyword arguments (a copy the rule may change).
        values: the inputs, each BatchedTensor at this level replaced by its value (batch dim 0).
        batched: per input, whether it was batched at this level.
        size: the batch size; level: the vmap level.
        ndims: per input, its logical number of dims (None for numbers and None inputs).
    """

    def __init__(self, op, inputs: tuple, settings: dict, level: int) -> None:
        self.op, self.settings, self.level = op, dict(settings), level
        self.batched = tuple(isinstance(x, BatchedTensor) and x._level == level for x in inputs)
        self.values = [x._value if b else x for x, b in zip(inputs, self.batched)]
        self.size = next(v.shape[0] for v, b in zip(self.values, self.batched) if b)
        self.ndims = tuple(_ndim(x) for x in inputs)

    def padded(self, i: int, rank: int):
        """Input ``i`` as (B, 1, ..., *shape) with ``rank`` logical dims (broadcasting then pairs the
        right dims); an unbatched input as it is."""
        v = self.values[i]
        if not self.batched[i] or self.ndims[i] >= rank:
            return v
        return v.reshape(self.size, *([1] * (rank - self.ndims[i])), *v.shape[1:])

    def expanded(self, i: int):
        """Input ``i`` with the batch dim first: an unbatched tensor expanded (a view, no copy)."""
        v = self.values[i]
        if self.batched[i] or not isinstance(v, (Tensor, np.ndarray)):
            return v
        v = v if isinstance(v, Tensor) else Tensor._make(np.asarray(v), False, None)
        return v.unsqueeze(0).expand(self.size, *v.shape)

    def run(self, *values, **settings):
        """The op on (physical) values, with the rule's settings unless given."""
        return self.op.apply(*values, **(settings or self.settings))


def _ndim(x):
    if isinstance(x, (Tensor, np.ndarray)):
        return x.ndim
    if isinstance(x, (int, float, np.number)) and not isinstance(x, bool):
        return 0
    return None


def apply(cls, inputs: tuple, settings: dict):
    """``cls`` on inputs of which some are batched: its batching rule at the innermost level."""
    level = max(x._level for x in inputs if isinstance(x, BatchedTensor))
    batch = Batch(cls, inputs, settings, level)
    rule = getattr(cls, "batch", None)
    if rule is None:
        out = loop(batch)
    else:
        out = rule(batch)
    return out if isinstance(out, BatchedTensor) and out._level == level else BatchedTensor(out, level)


def loop(b: Batch):
    """The slow fallback: the op once per example, the results stacked."""
    _warn_once(b.op.__name__, stacklevel=5)
    pieces = [b.run(*[v[k] if is_b else v for v, is_b in zip(b.values, b.batched)]) for k in range(b.size)]
    return _stacked(pieces)


def _warn_once(name: str, stacklevel: int) -> None:
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule for {name}. "
            "vmap runs it once per example (see docs/transforms.md).",
            UserWarning,
            stacklevel=stacklevel,
        )


def _stacked(pieces: list):
    """The examples' results stacked along a new dim 0 (each result a Tensor): ``np.stack`` on Tensors
    is the ops floor's differentiable ``stack``, through the Tensors' NumPy protocol (ops/numpy_protocol.py)."""
    return np.stack(pieces)


# ------------------------------------------------------------------ functions that are not ops
def per_example(function):
    """Decorator for a function that reads its inputs' values itself instead of through an op (the
    order ``sort`` finds, the index ``argmax`` picks): inside vmap it runs once per example and the
    results (a Tensor, or a tuple of them) are stacked, with the loop fallback's warning."""

    @functools.wraps(function)
    def run(*args, **kwargs):
        if not (levels and batched(args)):
            return function(*args, **kwargs)
        level = max(x._level for x in args if isinstance(x, BatchedTensor))
        size = next(x._value.shape[0] for x in args if isinstance(x, BatchedTensor) and x._level == level)
        _warn_once(function.__qualname__, stacklevel=3)
        results = [function(*[x._value[k] if _at(x, level) else x for x in args], **kwargs) for k in range(size)]
        first = results[0]
        if not isinstance(first, tuple):
            return BatchedTensor(_stacked(results), level)
        parts = [BatchedTensor(_stacked([r[i] for r in results]), level) for i in range(len(first))]
        return type(first)(*parts) if hasattr(first, "_fields") else tuple(parts)

    return run


def elementwise_function(function):
    """Decorator for an elementwise function that is not an op (a comparison): inside vmap it runs
    once on the whole batch, its operands' ranks aligned as the ``elementwise`` rule aligns them."""

    @functools.wraps(function)
    def run(*args, **kwargs):
        if not (levels and batched(args)):
            return function(*args, **kwargs)
        level = max(x._level for x in args if isinstance(x, BatchedTensor))
        rank = max((_ndim(x) for x in args if _ndim(x) is not None), default=0)
        values = []
        for x in args:
            if _at(x, level):
                v = x._value
                x = v.reshape(v.shape[0], *([1] * (rank - x.ndim)), *v.shape[1:]) if x.ndim < rank else v
            values.append(x)
        return BatchedTensor(function(*values, **kwargs), level)

    return run


# The bitwise operators are plain functions of the tensor floor below (tensor/extras.py), not ops:
# on a batched tensor they run once on the whole batch.
for _name in ("__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__invert__"):
    setattr(BatchedTensor, _name, elementwise_function(getattr(Tensor, _name)))


def _at(x, level: int) -> bool:
    return isinstance(x, BatchedTensor) and x._level == level


# ------------------------------------------------------------------ generic rules
def elementwise(b: Batch):
    """An elementwise (broadcasting) op: align the batched inputs' ranks and run it once."""
    rank = max((n for n in b.ndims if n is not None), default=0)
    return b.run(*[b.padded(i, rank) for i in range(len(b.values))])


def shift(*keys: str, first: int = 0):
    """The rule of an op whose settings ``keys`` name dims of its inputs (``dim=``, ``axis=``,
    ``dims=``): every tensor input gets the batch dim first, and each named dim moves one up.
    Negative dims count from the end of input ``first``'s logical dims."""

    def rule(b: Batch):
        ndim = b.ndims[first]
        for key in keys:
            value = b.settings.get(key)
            if value is None:
                continue
            moved = tuple(_one_up(d, ndim) for d in value) if isinstance(value, (tuple, list)) else _one_up(value, ndim)
            b.settings[key] = moved
        return b.run(*[b.expanded(i) for i in range(len(b.values))])

    return rule


def _one_up(d: int, ndim: int) -> int:
    return (d % ndim if ndim else 0) + 1


def leading(b: Batch):
    """The rule of an op that treats the leading dims of its first input as batch dims (it works on
    the trailing ones, its other inputs unbatched): the vmap dim is one more of them."""
    if any(b.batched[1:]):
        return loop(b)
    return b.run(*b.values)


def reshaped(key: str = "shape"):
    """The rule of an op whose setting ``key`` is the output's shape (reshape, expand)."""

    def rule(b: Batch):
        shape = tuple(b.settings[key])
        b.settings[key] = (b.size, *shape)
        return b.run(b.padded(0, len(shape)), *b.values[1:])

    return rule


def decompose(definition):
    """The rule of an op with a composite: its ``definition`` on the logical (batched) inputs,
    whose ops carry their own rules."""

    def rule(b: Batch):
        inputs = [BatchedTensor(v, b.level) if is_b else v for v, is_b in zip(b.values, b.batched)]
        return definition(*inputs, **b.settings)

    return rule


# ------------------------------------------------------------------ reverse mode inside vmap
def physical_grad_args(outputs: list, inputs: list, grad_outputs: list) -> tuple:
    """``autograd.grad``'s arguments with every batched tensor unwrapped: the backward pass runs on
    the physical (batched) graph, where each example's output depends on its own inputs only, so
    the gradients it gives a batched input are the examples' own.  A batched output's default
    ``grad_output`` (a one-element example) is ones for every example."""
    seeds = []
    for o, g in zip(outputs, grad_outputs):
        if g is None and isinstance(o, BatchedTensor):
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            value = physical(o)
            g = Tensor._make(np.ones(value.shape, value.dtype), False, None)
        elif g is not None and isinstance(o, BatchedTensor):
            g = _physical_like(g, o)
        seeds.append(g)
    return [physical(o) for o in outputs], [physical(x) for x in inputs], seeds


def _physical_like(g, o: BatchedTensor):
    """A cotangent for the batched ``o`` shaped like ``physical(o)``: each of o's levels made a
    physical dim of g (g's own deeper levels, e.g. jacrev's rows inside vmap, stay batched)."""
    if not isinstance(g, Tensor):
        g = Tensor._make(np.asarray(g, physical(o).dtype), False, None)
    while isinstance(o, BatchedTensor):
        g = _unwrap_level(g, o._level)
        o = o._value
    return g


def _unwrap_level(g: Tensor, level: int) -> Tensor:
    """``g`` with vmap ``level``'s batch dim made its (logical) dim 0: its values if g is batched
    at ``level``, else g shared by every example (expanded)."""
    if not isinstance(g, BatchedTensor):
        return g.unsqueeze(0).expand(size_of(level), *g.shape)
    if g._level == level:
        return g._value
    if g._level < level:  # (g's levels are all outside this one: shared by its examples)
        return g.unsqueeze(0).expand(size_of(level), *g.shape)
    inner = _unwrap_level(g._value, level)  # (B_level, n_g, ...) under the levels outside g's
    return BatchedTensor(inner.transpose(0, 1), g._level)
