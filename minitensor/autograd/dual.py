"""Forward mode: a tensor may carry a *tangent* beside its value, and each op pushes it on.

A dual number ``x + ε·ẋ`` (with ``ε² = 0``) is a value and a tangent together; for any
function, ``f(x + ε·ẋ) = f(x) + ε·f'(x)·ẋ``.  So if every op, given its inputs' tangents,
also computes its output's tangent (its JVP rule, ``jvp(ctx, *tangents)``, written beside
``backward`` in the op's class), then one forward pass gives ``f(x)`` and the directional
derivative ``J·ẋ`` together: forward-mode autodiff, no graph and no backward pass.

Where the tangents live.  A *level* (``dual_level()`` in ``forward_ad.py``, or one made by
``func.jvp``) is a table from tensors to their tangents.  Leaving the level drops the table,
and with it every tangent made inside.  Levels nest (``jacfwd(jacfwd(f))``): a tangent may
itself carry a tangent at an outer level.  An op's inputs are looked up at the innermost
level where one of them carries a tangent; while that level's tangent is computed the
level is *hidden*, so the primal op and the rule's own ops see the outer levels only:
derivatives at different levels never mix up (what the literature calls perturbation
confusion).

The rule works on arrays when nothing else asks for more (first-order forward mode, as fast
as NumPy).  When the tangent must itself be differentiated (a tangent or a primal that
requires grad, or a tangent at an outer level) the rule runs on Tensors (``JvpContext``):
the same formula, recorded.  A recorded op also remembers its inputs and its output's
tangents (``node.dual``), so that a backward pass run inside the level carries tangents too
(forward-over-reverse: ``jvp(grad(f))``, Hessian-vector products).
"""

from __future__ import annotations

import weakref

import numpy as np

from ..tensor import Tensor
from .batching import BatchedTensor, like, physical
from .grad_mode import is_grad_enabled
from .saved import JvpContext


class Level:
    """One forward-mode level: a table from tensors to their tangents.  Keyed by identity and
    weakly (a tensor that is gone takes its tangent with it): ``tangents[id(x)] = (ref to x, tangent)``."""

    __slots__ = ("index", "tangents", "hidden", "active", "nodes")

    def __init__(self, index: int) -> None:
        self.index = index
        self.tangents = {}
        self.hidden = False  # while this level's own tangent is being computed
        self.active = True
        self.nodes = []  # weak references to the recorded nodes that remember a tangent of this level

    def get(self, x: Tensor):
        """x's tangent at this level (an array or a Tensor), or None.  (Inside vmap, the tangent of a
        batched tensor is kept for its physical value, with the batch: it comes back batched.)"""
        if isinstance(x, BatchedTensor):
            tangent = self.get(physical(x))
            return None if tangent is None else like(x, as_tensor(tangent))
        entry = self.tangents.get(id(x))
        return entry[1] if entry is not None and entry[0]() is x else None

    def set(self, x: Tensor, tangent) -> None:
        if isinstance(x, BatchedTensor):  # (the tangent of every example, with the value's batch dims)
            value = physical(x)
            tangent = physical(tangent) if isinstance(tangent, BatchedTensor) else as_tensor(tangent)
            x, tangent = value, tangent if tangent.shape == value.shape else tangent.expand(*value.shape)
        if self.active:
            key, table = id(x), self.tangents
            table[key] = (weakref.ref(x, lambda _, key=key: table.pop(key, None)), tangent)

    def drop(self, x: Tensor) -> None:
        if self.get(x) is not None:
            del self.tangents[id(x)]

    def __repr__(self) -> str:
        return f"<forward-mode level {self.index}>"


levels: list = []  # the active levels, outermost first


def enter() -> Level:
    """A new innermost level."""
    level = Level(levels[-1].index + 1 if levels else 0)
    levels.append(level)
    return level


def exit(level: Level) -> None:  # noqa: A001  (the pair of enter)
    """Leave ``level`` (the innermost): its tangents are gone."""
    if not levels or levels[-1] is not level:
        raise RuntimeError("forward-mode levels must be exited innermost first")
    levels.pop()
    level.active = False
    # Drop the tangents where they could only go by the cyclic garbage collector: the table's entries
    # (their weakref callbacks hold the table) and the nodes' remembered output tangents (a tangent
    # computed from the output, as tanh's, leads back to the node through its graph).  Their arrays
    # go now, not at the next collection (a Hessian-vector product of a large MLP left ~16 MB a call).
    level.tangents.clear()
    for ref in level.nodes:
        node = ref()
        dual = None if node is None else node.__dict__.get("dual")
        if dual is not None:
            dual[1].pop(level, None)
            if not dual[1]:
                del node.dual
    level.nodes = []


def in_use() -> bool:
    """Does some active level hold a tangent?  (Then backward passes carry tangents.)"""
    return any(len(level.tangents) for level in levels)


def carrying(values) -> Level | None:
    """The innermost visible level at which one of ``values`` carries a tangent."""
    for level in reversed(levels):
        table = level.tangents
        if level.hidden or not table:
            continue
        for x in values:
            if isinstance(x, Tensor) and level.get(x) is not None:
                return level
    return None


def record(cls, inputs: tuple, settings: dict) -> tuple:
    """``cls`` applied to ``inputs`` with the tangents of every level pushed through it:
    (output Tensor, ctx).  Called by ``Function.apply`` whenever a level is active."""
    level = carrying(inputs)
    if level is None:  # (the tangents of the hidden levels are being computed: forward keeps what they need)
        return cls.record(inputs, settings, tuple([_has_tangent(x) for x in inputs]))
    tangents = tuple([level.get(x) if isinstance(x, Tensor) else None for x in inputs])
    level.hidden = True
    try:
        if len(levels) == 1:  # the value (the op, keeping what the rule needs: the inputs with a tangent)
            result, ctx = cls.record(inputs, settings, tuple([t is not None for t in tangents]))
        else:  # the value, with the outer levels' tangents
            result, ctx = record(cls, inputs, settings)
        if result._data.dtype.kind not in "fc":  # integer and bool results carry no tangent
            return result, ctx
        as_tensors = _needs_tensors(inputs, tangents)
        if as_tensors:
            tangents = tuple([as_tensor(t) for t in tangents])
        tangent = cls.jvp(JvpContext(ctx, inputs, result, settings, as_tensors), *tangents)
    finally:
        level.hidden = False
    if tangent is not None:
        tangent = fit(tangent, result, cls.__name__)
        level.set(result, tangent)
        if result.grad_fn is ctx:  # recorded: a backward inside the level will want the tangents
            _remember(ctx, inputs, level, tangent)
    return result, ctx


def _has_tangent(x) -> bool:
    if isinstance(x, Tensor):  # (loops, not generators: this runs for every input of every op in a level)
        for level in levels:
            if level.tangents and level.get(x) is not None:
                return True
    return False


def _needs_tensors(inputs: tuple, tangents: tuple) -> bool:
    """Must the rule run on Tensors?  When a tangent is a Tensor, when a primal requires grad
    (the tangent depends on it, and grad mode records), or when an outer level is involved."""
    for t in tangents:
        if isinstance(t, Tensor):
            return True
    if is_grad_enabled():
        for x in inputs:
            if isinstance(x, Tensor) and x._requires_grad:
                return True
    return carrying(inputs) is not None


def fit(tangent, like: Tensor, name: str):
    """A rule's result as ``like``'s tangent: its shape (broadcast) and dtype."""
    shape, dtype = like._data.shape, like._data.dtype
    if isinstance(tangent, Tensor):
        if tangent.shape != shape:
            _check_broadcast(tangent.shape, shape, name)
            tangent = tangent.expand(*shape)
        return tangent if tangent.dtype == dtype else tangent.to(dtype)
    tangent = np.asarray(tangent)
    if tangent.shape != shape:
        _check_broadcast(tangent.shape, shape, name)
        return np.array(np.broadcast_to(tangent, shape), dtype=dtype)
    return tangent if tangent.dtype == dtype else tangent.astype(dtype)


def _check_broadcast(got: tuple, shape: tuple, name: str) -> None:
    try:
        if np.broadcast_shapes(got, shape) == shape:
            return
    except ValueError:
        pass
    raise RuntimeError(f"{name}.jvp returned a tangent of shape {got} for an output of shape {shape}")


def _remember(ctx, inputs: tuple, level: Level, tangent) -> None:
    """``ctx.dual``: the op's inputs and its output's tangent at ``level`` (until the level exits)."""
    dual = ctx.__dict__.get("dual")
    if dual is None:
        ctx.dual = (tuple(inputs), {level: tangent})
    else:
        dual[1][level] = tangent
    level.nodes.append(weakref.ref(ctx))


def as_tensor(t):
    """A tangent as a Tensor (outside any graph when it was an array); None stays None."""
    return t if t is None or isinstance(t, Tensor) else Tensor._make(np.asarray(t), False, None)


def plus(*terms):
    """The sum of the terms that are not None (None if all are): a rule's contributions from
    the inputs that carry tangents (``plus(dx * y, x * dy)`` with ``dx * y`` or ``x * dy`` None)."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return total


def linear(ctx, *tangents):
    """The JVP rule of an op that is linear in its inputs (a view, a sum, a gather, a cast):
    the op itself, applied to the tangents (zeros for inputs without one)."""
    filled = []
    for x, t in zip(ctx.inputs, tangents):
        if t is None and isinstance(x, (np.ndarray, Tensor)) and x.dtype.kind in "fc":
            t = np.zeros(x.shape, x.dtype)
            t = as_tensor(t) if isinstance(x, Tensor) else t
        elif t is None and isinstance(x, (float, int, np.number)) and not isinstance(x, bool):
            t = 0.0  # a number among the inputs: a constant
        filled.append(x if t is None else t)  # (indices and masks go in as they are)
    return ctx.function.call(*filled, **ctx.keywords)


def bilinear(ctx, da, db):
    """The JVP rule of an op bilinear in its first two inputs a and b (a product of two tensors:
    a convolution, a cross product): the product rule, op(da, b) + op(a, db) (None terms left out)."""
    a, b = ctx.inputs[:2]
    op, settings = ctx.function, ctx.keywords
    return plus(
        None if da is None else op.call(da, b, **settings),
        None if db is None else op.call(a, db, **settings),
    )


# ------------------------------------------------------------------ in-place ops
def copy_tangents(x: Tensor, to: Tensor) -> None:
    """Give ``to`` a copy of ``x``'s tangents (a snapshot of x before an in-place op changes it)."""
    for level in levels:
        tangent = level.get(x)
        if tangent is not None:
            level.set(to, tangent.copy() if isinstance(tangent, np.ndarray) else tangent.clone())


def overwrite(t: Tensor, new: Tensor) -> None:
    """``t`` (changed in place to hold ``new``'s values) takes ``new``'s tangents.  A tangent t
    already had is written into, so the tangents of t's views and base (views of the same
    tangent memory) change with it, as their values do; t had a tangent and new has none: zero."""
    for level in levels:
        tangent, old = level.get(new), level.get(t)
        if tangent is None and old is None:
            continue
        if tangent is None:
            tangent = np.zeros(t.shape, t.dtype)
        if isinstance(old, np.ndarray) and isinstance(tangent, np.ndarray) and old.flags.writeable:
            old[...] = tangent
        else:
            level.set(t, tangent)


def drop_tangents(t: Tensor) -> None:
    """``t`` leaves forward mode too (``detach_``)."""
    for level in levels:
        level.drop(t)


def share_tangents(src: Tensor, dst: Tensor) -> Tensor:
    """``dst`` (e.g. ``src.detach()``, leaving the reverse graph) carries ``src``'s tangents too:
    what a transform's output keeps of the levels around it."""
    for level in levels:
        tangent = level.get(src)
        if tangent is not None:
            level.set(dst, tangent)
    return dst
