"""``Function``: one differentiable operation, and ``Node``: its place in the graph.

An op is written once, on plain NumPy arrays, as a pair of static methods::

    class Exp(Function):
        on_arrays = True                # (the ops' anatomy: NumPy arrays in and out)

        @staticmethod
        def forward(ctx, x):            # x: ndarray
            y = np.exp(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):        # grad: ndarray shaped like y
            (y,) = ctx.saved_tensors
            return grad * y             # one gradient per positional input

    y = Exp.apply(x)                    # x: Tensor -> y: Tensor with y.grad_fn

``apply`` unwraps Tensors into arrays, runs ``forward`` and, when grad mode is
on and some input requires grad, returns a Tensor whose ``grad_fn`` is the
``ctx`` object: a ``Node`` named after the op (``ExpBackward``) that remembers
its parents.  Positional arguments of ``apply`` are the op's inputs (Tensors,
arrays or Python scalars); keyword arguments are settings (``dim=...``).

``backward`` returns one gradient per positional input (``None`` for inputs
that need none) with the *broadcast* shape the op computed; the engine sums
it back to each input's shape in one place (``engine._reduce_to_shape``).

Higher order (``create_graph=True``).  The built-in ops derive from ``Op``: their
``backward`` is written with operators and NumPy functions that work on arrays
*and* on Tensors (a Tensor answers ``np.exp(t)``, ``np.where(c, t, 0)``, ... with
its own differentiable ops).  First-order backward hands it arrays: as fast as
NumPy.  With ``create_graph=True`` the engine hands it Tensors instead (the
incoming gradient, and ``ctx.saved_tensors`` turned back into the op's input and
output Tensors), so the gradient it returns is itself a graph.  That is why an
``Op`` saves only its inputs and its output with ``save_for_backward`` (other
constants, e.g. a dropout mask, go on ``ctx`` as attributes).  A fused op whose
first-order backward is a kernel returns ``composite_grads(...)`` of its plain
Tensor-op formula instead when it is given Tensors.  (This docstring's ``Exp``
and the built-in ops say ``on_arrays = True``.  A user's ``Function`` is
PyTorch's: forward and backward on Tensors, differentiable twice unless its
backward is ``@once_differentiable``; see ``user_function.py``.)

Two more rules sit beside ``backward`` in an op's class (docs/transforms.md):
``jvp(ctx, *tangents)``, forward mode: the output's tangent from the inputs'
(``Exp``'s is ``tangent * y``, its backward formula again, so ``jvp = backward``);
and ``batch``, vmap's rule: how to compute a batch of examples at once
(``batch = elementwise`` for ``Exp``).  ``apply`` hands the op to them when a
forward-mode level or a vmap is active.

In-place safety: when ``forward`` saves an input's array (or a view of it),
or the output's, ``apply`` records that tensor's version (its count of
in-place modifications, ``Tensor._version``) in ``ctx.saved_versions``; the
engine compares before running ``backward`` and raises ``RuntimeError``
instead of computing a gradient from changed data.  An output that is a view
of an input (``x[0]``, ``x.reshape(..)``) shares the input's version counter.
"""

from __future__ import annotations

import operator

import numpy as np

from ..tensor import Tensor
from . import _profiling, anomaly, batching, dual, graph, saved
from .grad_mode import is_grad_enabled
from .saved import saved_records
from .user_function import once_differentiable, tensor_backward, tensor_forward  # noqa: F401  (torch.autograd.function.once_differentiable)


class Node(graph.Node):
    """A recorded op in the graph; it is also the ``ctx`` its Function saw.

    Attributes:
        parents: one entry per positional input of the op: the input's
            ``grad_fn`` (a Node), the input itself when it is a leaf that
            requires grad, or None when no gradient flows there.
        shape, dtype: of the op's output, to check the incoming gradient.
        needs_input_grad: tuple of bools, one per positional input.
        saved_versions: ``(position, counter, version, shape)`` for each
            tensor whose data ``forward`` saved (position -1: the output).
        saved_origins: for each saved array, the input position it is (the
            array itself), -1 for the output, None for anything else.
    """

    # (``__weakref__``: a forward-mode level keeps weak references to the nodes that remember its tangents)
    __slots__ = ("parents", "needs_input_grad", "shape", "dtype", "__dict__", "__weakref__")
    function: type = None  # the Function subclass, set per generated Node class
    tensor_hooks = None  # hooks registered on the tensor this node made (Tensor.register_hook)
    # What a node that saved nothing has (class defaults: apply sets them only when they differ).
    saved_tensors = saved_versions = saved_origins = ()
    freed = False

    def save_for_backward(self, *arrays) -> None:
        """Keep arrays for ``backward``; released after backward unless retain_graph."""
        self.saved_tensors = arrays

    def save_for_forward(self, *arrays) -> None:
        """Keep arrays for ``jvp`` (forward mode), where they are ``ctx.saved_tensors``."""
        self.saved_for_forward = arrays

    def release(self) -> None:
        """Free the arrays kept for backward; a later backward that needs them raises.

        Settings kept as attributes (``ctx.dim``) stay, as in PyTorch: a node that
        saved nothing can be walked again.
        """
        if self.saved_tensors or self.packed is not None:
            self.saved_tensors = ()
            self.packed = None
            self.saved_versions = ()
            self.freed = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class Function:
    """Base class of differentiable ops; subclasses define ``forward`` and ``backward``."""

    _node_cls: type = Node
    on_arrays = False  # forward and backward on NumPy arrays (the ops' anatomy), or on Tensors (PyTorch's)
    differentiable_backward = True  # can backward's result be differentiated again (create_graph)?

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # The graph node class is named after the op, e.g. Matmul -> MatmulBackward.
        cls._node_cls = type(f"{cls.__name__}Backward", (Node,), {"__slots__": (), "function": cls})
        backward = cls.__dict__.get("backward")
        if getattr(getattr(backward, "__func__", backward), "once_differentiable", False):
            cls.differentiable_backward = False
        if not cls.on_arrays:  # a user's Function, written as in PyTorch (user_function.py)
            if "forward" in cls.__dict__:
                cls.forward = staticmethod(tensor_forward(cls.__dict__["forward"].__func__))
            if backward is not None:
                cls.backward = staticmethod(tensor_backward(getattr(backward, "__func__", backward)))

    @staticmethod
    def forward(ctx: Node, *inputs, **settings):
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Node, grad):
        raise NotImplementedError

    @staticmethod
    def jvp(ctx, *tangents):
        """Forward mode: the output's tangent from the inputs' (None for an input without one)."""
        raise RuntimeError(
            f"Trying to use forward AD with {ctx.function.__name__} that does not support it: "
            "it has no jvp rule (see docs/transforms.md)"
        )

    @classmethod
    def run(cls, *arrays, **settings) -> np.ndarray:
        """``forward`` on arrays, recording nothing: the output array.  For inference paths that
        chain several ops on arrays (no Tensor in between), under ``no_grad``."""
        ctx = cls._node_cls()
        ctx.needs_input_grad = (False,) * len(arrays)
        out = _profiling.forward(cls.__name__, cls.forward, ctx, *arrays, **settings)
        return out if type(out) is np.ndarray else _as_output(cls, ctx, out)

    @classmethod
    def apply(cls, *inputs, **settings):
        """Run the op on Tensors (or arrays/scalars) and record it when needed."""
        if batching.levels and batching.batched(inputs):  # inside vmap: the op's batching rule
            return batching.apply(cls, inputs, settings)
        if dual.levels:  # forward mode: tangents go through the op too
            return dual.record(cls, inputs, settings)[0]
        return cls.record(inputs, settings)[0]

    @classmethod
    def record(cls, inputs: tuple, settings: dict, tangents: tuple | None = None) -> tuple:
        """``apply``'s work: (the output Tensor, the ``ctx`` forward saw).  ``tangents``: which
        inputs carry a tangent (forward mode), so that forward keeps what their rule needs too."""
        if is_grad_enabled():
            arrays, parents, needs = [], [], []  # per input: its array, where its gradient goes, whether it needs one
            for x in inputs:
                if isinstance(x, Tensor):
                    arrays.append(x._data)
                    if x._requires_grad:
                        parents.append(x.grad_fn or x)
                        needs.append(True)
                        continue
                else:
                    arrays.append(x)
                parents.append(None)
                needs.append(False)
        else:  # inference: nothing to collect for a graph
            arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
            needs = [False] * len(inputs)
        if settings and not cls.on_arrays:  # (built-in ops never pass Tensors as settings)
            for name, value in settings.items():
                if isinstance(value, Tensor):
                    raise TypeError(
                        f"{cls.__name__}.apply: the Tensor {name}= is a keyword argument, and keyword arguments are "
                        "settings that receive no gradient; pass Tensors positionally (they are the op's inputs)"
                    )
        ctx = cls._node_cls()
        ctx.needs_input_grad = tuple(needs) if tangents is None else tuple(map(operator.or_, needs, tangents))
        if _profiling.active is None:
            out = cls.forward(ctx, *arrays, **settings)
        else:  # mt.profiler is recording: time this forward
            out = _profiling.active.time(cls.__name__, "forward", cls.forward, ctx, *arrays, **settings)
        if type(out) is not np.ndarray:  # e.g. a NumPy scalar from a ufunc on 0-d arrays
            out = _as_output(cls, ctx, out)
        dtype = out.dtype
        if True not in needs or dtype.kind not in "fc":  # integer and bool results carry no gradient
            result = Tensor._make(out, False, None)
        else:
            ctx.parents = tuple(parents)
            ctx.shape = out.shape
            ctx.dtype = dtype
            if anomaly.enabled:  # remember the user's line, for a NaN found in backward
                ctx.forward_line = anomaly.user_line()
            result = Tensor._make(out, True, ctx)
            kept = ctx.saved_tensors
            if kept:
                ctx.saved_versions, ctx.saved_origins = saved_records(kept, arrays, inputs, result)
                if saved.hooks and tangents is None:  # inside saved_tensors_hooks: pack what was saved
                    saved.pack(ctx, inputs, result)
        if out.base is not None:  # a view: it shares the version counter of the input it views
            _share_counter(result, inputs, cls, settings)
        return result, ctx

    @classmethod
    def apply_each(cls, x, settings: list) -> list:
        """``[cls.apply(x, **s) for s in settings]``, for an op of one input whose ``forward`` saves
        nothing and returns a view of x (the pieces of ``unbind`` and ``split``: ``Index`` with basic
        keys).  The same nodes and tensors, without repeating the per-call checks for each piece
        (~0.7 µs a piece instead of ~3)."""
        if _profiling.active is not None or anomaly.enabled or dual.levels or batching.levels:
            return [cls.apply(x, **s) for s in settings]
        record = is_grad_enabled() and x._requires_grad
        parent, data, counter = x.grad_fn or x, x._data, x._counter()
        pieces = []
        for s in settings:
            ctx = cls._node_cls()
            ctx.needs_input_grad = (record,)
            out = cls.forward(ctx, data, **s)
            if record:
                ctx.parents, ctx.shape, ctx.dtype = (parent,), out.shape, out.dtype
            piece = Tensor._make(out, record, ctx if record else None)
            if out.base is not None and (out.base is data or out.base is data.base):
                piece._version_counter, piece._view_of = counter, (x, cls, s)
            pieces.append(piece)
        return pieces


class Op(Function):
    """A built-in op: its ``backward`` also runs on Tensors, so its gradient can be differentiated again.

    Rules for such a backward: compute with operators and NumPy functions only
    (``grad * y``, ``np.exp(x)``, ``np.where(mask, grad, 0)``); never ``np.asarray``
    or in-place writes into the gradient; read inputs and the output from
    ``ctx.saved_tensors`` (they become Tensors with ``create_graph=True``).
    """

    on_arrays = True
    differentiable_backward = True

    @classmethod
    def call(cls, *inputs, **settings):
        """The op on arrays (-> an array, nothing recorded) or on Tensors (-> a Tensor, recorded).

        Backward formulas use it for ops they need in both forms (e.g. a scatter).
        """
        if any(isinstance(x, Tensor) for x in inputs):
            return cls.apply(*inputs, **settings)
        return cls.run(*inputs, **settings)


def _as_output(cls: type, ctx: Node, out) -> np.ndarray:
    """forward's result as an ndarray (a NumPy scalar from a full reduction becomes 0-d, also
    where forward saved it)."""
    if isinstance(out, np.generic):  # (the common case first)
        scalar, out = out, np.asarray(out)
        if ctx.saved_tensors:
            ctx.saved_tensors = tuple(out if a is scalar else a for a in ctx.saved_tensors)
        return out
    if isinstance(out, Tensor):
        raise TypeError(
            f"{cls.__name__}.forward returned a Tensor; forward works on NumPy arrays and must return one "
            "(use .numpy() on Tensors inside forward, or build the op from Tensor operations without a Function)"
        )
    if isinstance(out, (float, int, bool)):
        return np.asarray(out)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{cls.__name__}.forward must return a NumPy array, got {type(out).__name__}")
    return out


def _share_counter(result: Tensor, inputs: tuple, cls: type, settings: dict) -> None:
    """Give a view the version counter of the input whose memory it looks at, and remember
    how it was made from that input (``_view_of``), for in-place ops through the view."""
    base = result._data.base
    for x in inputs:
        if isinstance(x, Tensor):
            data = x._data
            if data is base or data.base is base:
                result._version_counter = x._counter()
                result._view_of = (x, cls, settings)
                return
