"""In-place ops and autograd: ``h += w``, ``h[i] = w``, ``h.copy_(w)``, ``h.masked_fill_(m, w)``.

They follow PyTorch:

- outside the graph (grad mode off, or nothing involved requires grad) they
  simply write into the tensor's array, and bump its version counter;
- an in-place op on a leaf that requires grad raises (outside ``no_grad``):
  its ``.grad`` would no longer describe the values it holds;
- otherwise the tensor *joins* (or stays in) the graph: the op is recorded as
  the out-of-place op on a copy of the old values, the result is written into
  the tensor's own memory (every other name of it, and every view of the same
  memory, sees the new values), and the tensor's ``grad_fn`` becomes the new
  node.  ``out[0] = w; out[1] = w * w`` therefore back-propagates into ``w``
  through both rows (PyTorch calls this node ``CopySlices``).  Where nothing
  else can see the tensor's memory (no view, NumPy handle or saved copy: the
  reference count says), nothing is copied: the op is recorded on the old
  array itself and the tensor takes the result's (``_unshared``);
- when the tensor is a view of another tensor (``v = h[0]; v += w``), that
  base tensor's history is rewritten too: it becomes "the old base with the
  view's region replaced" (``ViewUpdate``), and the view is re-derived from it.

Version counters still catch a saved tensor changed after it was saved: the
old values an op needed are the copy, but anything that saved the tensor's
array *before* the in-place op sees the version change and raises in backward.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import dtypes, random
from ..autograd import dual, saved
from ..autograd.composite import Alias
from ..autograd.dual import linear
from ..autograd.function import Op
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from ..tensor.hooks import RetainGrad
from .operands import _cast, _index_key, _operand
from .shape import own_arrays


def apply_inplace(t, op: str, update, recompute, *others, output_only: bool = False):
    """Make ``t`` hold the result of an in-place op, recording it when the graph is involved.

    Args:
        t: the Tensor changed in place.
        op: its name, for error messages (``"+="``, ``"copy_"``...).
        update: ``update(array, *other_arrays)`` writes the result into ``array``
            (the path outside the graph).
        recompute: ``recompute(old, *others) -> Tensor``, the same op out of place
            on Tensors (the path inside the graph).
        others: the op's other operands (Tensors, arrays or scalars).
        output_only: the op ``recompute`` records keeps only its output for backward (``relu_``,
            ``exp_``...): then it runs on t's own values, with no copy of them (checked:
            ``_without_snapshot``).
    """
    in_graph = is_grad_enabled() and (
        t._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)
    )
    tangents = dual.levels and dual.carrying((t, *others)) is not None  # forward mode: tangents change too
    if not in_graph and not tangents:
        update(t._data, *[o._data if isinstance(o, Tensor) else o for o in others])
        t._counter().value += 1
        return t
    if in_graph and t._requires_grad and t.grad_fn is None:
        raise RuntimeError(
            f"{op}: a leaf tensor that requires grad cannot be modified in place; wrap the update in mt.no_grad()"
        )
    chain = _view_chain(t, op, in_graph)
    new = None
    plain = len(chain) == 1 and not dual.levels and not saved.hooks
    alone = plain and _unshared(t)
    if alone:  # no one else sees t's memory: the op reads t's array as it is, and t takes the result's
        olds = [Tensor._make(t._data, t._requires_grad, t.grad_fn)]
        new = recompute(olds[0], *others)
    elif output_only and plain:
        new, olds = _without_snapshot(t, recompute, others), [t]
    if new is None:
        olds = [_snapshot(x) for x in chain]  # the values before the op, for the recorded nodes
        new = recompute(olds[0], *others)
    if new.dtype != t.dtype:
        new = new.to(t.dtype)
    if new.shape != t.shape:
        raise ValueError(f"{op}: the result has shape {new.shape}, which does not fit the tensor's shape {t.shape}")
    if alone:  # (never into t's old array: the recorded op may have kept it)
        taken = _takes(new, t._data, others)
        t._data = new._data if taken else _copy_in_layout(new._data, t._data)
        if taken:
            _saved_output_follows(t, new)
    else:
        t._data[...] = new._data
    _take_history(t, new, in_graph)
    for view, base, old_base in zip(chain, chain[1:], olds[1:]):  # rewrite each base's history, inner to outer
        _, cls, settings = view._view_of
        _take_history(base, ViewUpdate.apply(old_base, view, view_op=(cls, settings)), in_graph)
    for view, base in zip(reversed(chain[:-1]), reversed(chain[1:])):  # re-derive each view from its new base
        _, cls, settings = view._view_of
        _take_history(view, cls.apply(base, **settings), in_graph)
    t._counter().value += 1
    return t


def _view_chain(t, op: str, in_graph: bool = True) -> list:
    """[t, its base, the base's base, ...]: every tensor whose memory t's change also changes."""
    chain = [t]
    while chain[-1]._view_of is not None:
        base = chain[-1]._view_of[0]
        if in_graph and base._requires_grad and base.grad_fn is None:
            raise RuntimeError(
                f"{op}: a view of a leaf tensor that requires grad cannot be modified in place; "
                "wrap the update in mt.no_grad()"
            )
        chain.append(base)
    return chain


def _unshared(t) -> bool:
    """Whether no one but ``t`` can see its array: an array of its own (not a view), writeable, held by
    ``t`` alone (no view of it, no saved copy in a node, no ``.numpy()`` handle: told by the reference
    count).  Then an in-place op need not write into that memory: t may take the result's array, and the
    recorded op keep the old one (no copies), and nothing can tell the difference."""
    data = t._data
    return type(data) is np.ndarray and data.base is None and data.flags.writeable and sys.getrefcount(data) <= 3


def _takes(new, old: np.ndarray, others: tuple) -> bool:
    """Whether a tensor holding ``old`` may hold ``new``'s array instead: an array the op just recorded made
    (not an operand returned as it is, as ``copy_`` returns its source: the two tensors would then share
    memory), held by ``new`` alone (and by its node where that kept its output), with old's layout (so
    ``stride()`` does not change)."""
    result = new._data
    if type(result) is not np.ndarray or result.base is not None or result is old or result.strides != old.strides:
        return False
    if any(new is o or getattr(o, "_data", o) is result for o in others):
        return False
    kept = new.grad_fn is not None and any(a is result for a in new.grad_fn.saved_tensors)
    return sys.getrefcount(result) <= 3 + kept  # (new's slot, this name, getrefcount's argument; the node's)


def _copy_in_layout(result: np.ndarray, old: np.ndarray) -> np.ndarray:
    """``result``'s values in a new array laid out as ``old`` (an array of its own: C, F or another order
    of its dims), for a tensor that cannot take ``result`` itself (``_takes``)."""
    out = np.empty_like(old)
    out[...] = result
    return out


def _saved_output_follows(t, new) -> None:
    """``t`` took the array of ``new``, the output of the op just recorded: where that op saved its output
    (``exp_``, ``relu_``), its version record follows t's counter, at the version this in-place op gives t,
    so a later in-place change of t is caught in backward as one of the output would be."""
    node, counter = new.grad_fn, new._version_counter
    if node is None or counter is None or not node.saved_versions:
        return
    mine = t._counter()
    node.saved_versions = tuple(
        (p, mine, mine.value + 1, shape) if c is counter else (p, c, v, shape) for p, c, v, shape in node.saved_versions
    )


def _without_snapshot(t, recompute, others: tuple):
    """``recompute`` run on t's values in place of a snapshot of them (t's memory, t's place in the
    graph): its result, when nothing it recorded holds that memory afterwards (told by the reference
    count, as NumPy elides temporaries); else None, and the caller runs it on a snapshot."""
    data = t._data
    alias = Tensor._make(data, t._requires_grad, t.grad_fn)
    held = sys.getrefcount(data)
    new = recompute(alias, *others)
    del alias
    return new if sys.getrefcount(data) < held else None


def _snapshot(x):
    """A copy of ``x``'s values with ``x``'s place in the graph (and its tangents, in forward mode)."""
    snapshot = Tensor._make(x._data.copy(), x._requires_grad, x.grad_fn)
    if dual.levels:
        dual.copy_tangents(x, snapshot)
    return snapshot


def _take_history(t, new, in_graph: bool = True) -> None:
    """``t`` now stands for the node that made ``new`` (its values are already in ``t``), and
    carries its tangents."""
    if dual.levels:
        dual.overwrite(t, new)
    if not in_graph:
        return
    retained = t.retains_grad  # retain_grad follows the tensor to its new node, as in PyTorch
    if retained:
        hooks = t.grad_fn.tensor_hooks
        hooks[:] = [h for h in hooks if not (isinstance(h, RetainGrad) and h.owner() is t)]
    t.grad_fn = new.grad_fn
    t._requires_grad = new._requires_grad
    if t.grad_fn is None and new._requires_grad:  # new is a leaf (e.g. copy_ of a leaf): alias it
        t.grad_fn = Alias.apply(new).grad_fn
    if retained:
        t.retain_grad()


class ViewUpdate(Op):
    """out = base with the region ``view_op(base)`` replaced by ``value`` (the base after an
    in-place change through one of its views).  d base = grad outside the region, 0 inside;
    d value = ``view_op(grad)``."""

    @staticmethod
    def forward(ctx, base, value, view_op=None):
        cls, settings = view_op
        ctx.view_op = view_op
        out = base.copy()
        cls.run(out, **settings)[...] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        cls, settings = ctx.view_op
        if isinstance(grad, np.ndarray):
            g_base = grad.copy()
            cls.run(g_base, **settings)[...] = 0
            return g_base, cls.run(grad, **settings)
        return ViewUpdate.apply(grad, 0.0, view_op=ctx.view_op), cls.apply(grad, **settings)

    jvp = linear  # linear in its input: the tangent goes through the op itself


class IndexPut(Op):
    """out = x with ``out[key] = value`` (what ``x[key] = value`` records).

    d x = grad with the region ``[key]`` set to 0;  d value = ``grad[key]`` (the engine
    sums it back to value's shape when value was broadcast into the region).
    """

    @staticmethod
    def forward(ctx, x, value, key=None):
        ctx.key = own_arrays(key) if any(ctx.needs_input_grad) else key  # (the caller may change its index)
        out = x.copy()
        out[key] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        key = ctx.key
        need_x, need_value = ctx.needs_input_grad
        if isinstance(grad, np.ndarray):
            g_x = None
            if need_x:
                g_x = grad.copy()
                g_x[key] = 0
            return g_x, (np.asarray(grad[key]) if need_value else None)
        return (IndexPut.apply(grad, 0.0, key=key) if need_x else None), (grad[key] if need_value else None)

    jvp = linear  # linear in its input: the tangent goes through the op itself


def setitem(t, key, value) -> None:
    """``t[key] = value``."""

    def update(array, v):
        array[key] = v

    apply_inplace(t, "__setitem__", update, lambda old, v: IndexPut.apply(old, v, key=key), value)


def fill(t, op: str, value) -> None:
    """``t.fill_(value)`` / ``t.zero_()``: every element becomes ``value`` (a number or 0-d tensor)."""

    def update(array, v):
        array[...] = v

    everywhere = np.ones((), dtype=bool)
    apply_inplace(t, op, update, lambda old, v: old.masked_fill(everywhere, v), value)


def copy(t, src) -> None:
    """``t.copy_(src)``: src's values (broadcast to t's shape, cast to its dtype)."""

    def update(array, s):
        array[...] = s

    def recompute(old, s):
        s = s if isinstance(s, Tensor) else Tensor(np.asarray(s), dtype=t.dtype)
        return s.expand(*t.shape) if s.shape != t.shape else s

    apply_inplace(t, "copy_", update, recompute, src)


def arithmetic(t, ufunc, op: str, other, floating: bool = False):
    """``t += other`` and friends (``ufunc`` is np.add, np.subtract, ...; ``floating``: true division).

    As PyTorch, the result is computed in the promoted dtype (``dtypes.result_type``) and written
    back in ``t``'s dtype; a result of a higher category (a float result into an integer tensor)
    raises before anything changes.
    """
    dtype = dtypes.result_type(t, other)
    if floating and dtype.kind != "f":
        dtype = dtypes.get_default_dtype()
    check_castable(t, dtype, op)
    other = _cast(other, dtype)

    def update(array, o):
        ufunc(array, o, out=array, casting="unsafe")

    return apply_inplace(t, op, update, lambda old, o: ufunc(old, o), other)


def view_(t, op: str, make_view):
    """``t.t_()``, ``t.unsqueeze_(0)`` ...: ``t`` itself becomes ``make_view(t)`` (its shape changes;
    in the graph, its history is the view's).  ``detach_`` is ``make_view=None``: t leaves the graph."""
    if is_grad_enabled() and t._requires_grad and t.grad_fn is None and make_view is not None:
        raise RuntimeError(f"{op}: a leaf tensor that requires grad cannot be modified in place")
    if t._view_of is not None and (t._requires_grad or t._view_of[0]._requires_grad):
        raise RuntimeError(
            f"{op}: a view of a tensor in the graph cannot be changed in place; use the out-of-place form"
        )
    if make_view is None:
        t.grad_fn, t._requires_grad = None, False
        if dual.levels:
            dual.drop_tangents(t)
        return t
    view = make_view(t)
    t._data, t.grad_fn, t._requires_grad = view._data, view.grad_fn, view._requires_grad
    if dual.levels:
        dual.drop_tangents(t)
        dual.overwrite(t, view)
    t._view_of = None  # (still the same memory as its base, if it had one, but no longer its view op)
    return t


def check_castable(t, dtype, op: str) -> None:
    """Raise (as PyTorch) when an in-place op's result ``dtype`` is of a higher category than ``t``'s
    (a float result cannot be written into an integer tensor, nor an integer into a bool one)."""
    if dtypes.category(dtype) > dtypes.category(t._data.dtype):
        raise RuntimeError(
            f"{op}: result type {dtypes.torch_name(dtype)} can't be cast to the desired output type "
            f"{dtypes.torch_name(t._data.dtype)}"
        )


def masked_fill(t, mask, value) -> None:
    """``t.masked_fill_(mask, value)``."""
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)

    def update(array, v):
        np.copyto(array, v, where=np.broadcast_to(m, array.shape))

    apply_inplace(t, "masked_fill_", update, lambda old, v: old.masked_fill(m, v), value)


class InplaceMethods:
    """Tensor's in-place methods (a method table, as ``math_methods.py``): each writes into the
    tensor's own memory through the functions above, which record it in the graph when needed."""

    def zero_(self):
        fill(self, "zero_", 0)
        return self

    def fill_(self, value):
        fill(self, "fill_", value)
        return self

    def copy_(self, src):
        copy(self, src)
        return self

    def masked_fill_(self, mask, value):
        self.masked_fill(mask, value.detach() if isinstance(value, Tensor) else value)  # checks the arguments
        masked_fill(self, mask, value)
        return self

    def uniform_(self, low: float = 0.0, high: float = 1.0):
        copy(self, random.generator().uniform(low, high, self.shape))
        return self

    def normal_(self, mean: float = 0.0, std: float = 1.0):
        copy(self, random.generator().normal(mean, std, self.shape))
        return self

    def __setitem__(self, key, value) -> None:
        setitem(self, _index_key(key), value)

    def __iadd__(self, other):
        return arithmetic(self, np.add, "+=", _operand(other, self))

    def __isub__(self, other):
        return arithmetic(self, np.subtract, "-=", _operand(other, self))

    def __imul__(self, other):
        return arithmetic(self, np.multiply, "*=", _operand(other, self))

    def __itruediv__(self, other):
        return arithmetic(self, np.true_divide, "/=", _operand(other, self), floating=True)
