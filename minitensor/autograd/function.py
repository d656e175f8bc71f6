"""``Function``: one differentiable operation, and ``Node``: its place in the graph.

An op is written once, on plain NumPy arrays, as a pair of static methods::

    class Exp(Function):
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
Tensor-op formula instead when it is given Tensors.  A user's ``Function``
keeps a backward on arrays: differentiating it twice raises (PyTorch's
once-differentiable), unless it sets ``differentiable_backward = True``.

In-place safety: when ``forward`` saves an input's array (or a view of it),
or the output's, ``apply`` records that tensor's version (its count of
in-place modifications, ``Tensor._version``) in ``ctx.saved_versions``; the
engine compares before running ``backward`` and raises ``RuntimeError``
instead of computing a gradient from changed data.  An output that is a view
of an input (``x[0]``, ``x.reshape(..)``) shares the input's version counter.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, VersionCounter
from . import _profiling, anomaly
from .grad_mode import enable_grad, is_grad_enabled


class Node:
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

    __slots__ = (
        "parents",
        "needs_input_grad",
        "shape",
        "dtype",
        "saved_tensors",
        "saved_versions",
        "saved_origins",
        "freed",
        "__dict__",
    )
    function: type = None  # the Function subclass, set per generated Node class
    tensor_hooks = None  # hooks registered on the tensor this node made (Tensor.register_hook)

    def save_for_backward(self, *arrays) -> None:
        """Keep arrays for ``backward``; released after backward unless retain_graph."""
        self.saved_tensors = arrays

    @property
    def next_functions(self) -> tuple:
        """The parents of this node (for inspecting a graph, as in PyTorch)."""
        return self.parents

    def name(self) -> str:
        return type(self).__name__

    def release(self) -> None:
        """Free the arrays kept for backward; a later backward that needs them raises.

        Settings kept as attributes (``ctx.dim``) stay, as in PyTorch: a node that
        saved nothing can be walked again.
        """
        if self.saved_tensors:
            self.saved_tensors = ()
            self.saved_versions = ()
            self.freed = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class Function:
    """Base class of differentiable ops; subclasses define ``forward`` and ``backward``."""

    _node_cls: type = Node
    differentiable_backward = False  # does backward also run on Tensors (create_graph)?

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # The graph node class is named after the op, e.g. Matmul -> MatmulBackward.
        cls._node_cls = type(f"{cls.__name__}Backward", (Node,), {"__slots__": (), "function": cls})

    @staticmethod
    def forward(ctx: Node, *inputs, **settings):
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Node, grad):
        raise NotImplementedError

    @classmethod
    def run(cls, *arrays, **settings) -> np.ndarray:
        """``forward`` on arrays, recording nothing: the output array.  For inference paths that
        chain several ops on arrays (no Tensor in between), under ``no_grad``."""
        ctx = cls._node_cls()
        ctx.needs_input_grad = (False,) * len(arrays)
        ctx.saved_tensors = ()
        if _profiling.active is None:
            out = cls.forward(ctx, *arrays, **settings)
        else:  # mt.profiler is recording: time this forward
            out = _profiling.active.time(cls.__name__, "forward", cls.forward, ctx, *arrays, **settings)
        return out if type(out) is np.ndarray else _as_output(cls, out)

    @classmethod
    def apply(cls, *inputs, **settings):
        """Run the op on Tensors (or arrays/scalars) and record it when needed."""
        record = is_grad_enabled()
        if not record:  # (the lean path of inference: nothing to collect for a graph)
            out = cls.run(*[x._data if isinstance(x, Tensor) else x for x in inputs], **settings)
            result = Tensor._make(out, False, None)
            if out.base is not None:
                _share_counter(result, inputs, cls, settings)
            return result
        arrays = []
        parents = []
        needs_grad = False
        for x in inputs:
            if isinstance(x, Tensor):
                arrays.append(x._data)
                if x._requires_grad:
                    needs_grad = True
                    parents.append(x.grad_fn or x)
                    continue
            else:
                arrays.append(x)
            parents.append(None)
        if settings and not cls.differentiable_backward:  # (built-in ops never pass Tensors as settings)
            for name, value in settings.items():
                if isinstance(value, Tensor):
                    raise TypeError(
                        f"{cls.__name__}.apply: the Tensor {name}= is a keyword argument, and keyword arguments are "
                        "settings that receive no gradient; pass Tensors positionally (they are the op's inputs)"
                    )
        ctx = cls._node_cls()
        ctx.needs_input_grad = tuple([p is not None for p in parents])
        ctx.saved_tensors = ()
        if _profiling.active is None:
            out = cls.forward(ctx, *arrays, **settings)
        else:  # mt.profiler is recording: time this forward
            out = _profiling.active.time(cls.__name__, "forward", cls.forward, ctx, *arrays, **settings)
        if type(out) is not np.ndarray:  # e.g. a NumPy scalar from a ufunc on 0-d arrays
            scalar, out = out, _as_output(cls, out)
            ctx.saved_tensors = tuple(out if a is scalar else a for a in ctx.saved_tensors)
        dtype = out.dtype
        if not needs_grad or dtype.kind not in "fc":  # integer and bool results carry no gradient
            result = Tensor._make(out, False, None)
        else:
            ctx.parents = tuple(parents)
            ctx.shape = out.shape
            ctx.dtype = dtype
            ctx.freed = False
            if anomaly.enabled:  # remember the user's line, for a NaN found in backward
                ctx.forward_line = anomaly.user_line()
            result = Tensor._make(out, True, ctx)
            saved = ctx.saved_tensors
            if saved:
                ctx.saved_versions, ctx.saved_origins = _saved_records(saved, arrays, inputs, result)
            else:
                ctx.saved_versions = ctx.saved_origins = ()
        if out.base is not None:  # a view: it shares the version counter of the input it views
            _share_counter(result, inputs, cls, settings)
        return result

    @classmethod
    def apply_each(cls, x, settings: list) -> list:
        """``[cls.apply(x, **s) for s in settings]``, for an op of one input whose ``forward`` saves
        nothing and returns a view of x (the pieces of ``unbind`` and ``split``: ``Index`` with basic
        keys).  The same nodes and tensors, without repeating the per-call checks for each piece
        (~0.7 µs a piece instead of ~3)."""
        if _profiling.active is not None or anomaly.enabled:
            return [cls.apply(x, **s) for s in settings]
        record = is_grad_enabled() and x._requires_grad
        parent, data, counter = x.grad_fn or x, x._data, x._counter()
        pieces = []
        for s in settings:
            ctx = cls._node_cls()
            ctx.needs_input_grad = (record,)
            ctx.saved_tensors = ctx.saved_versions = ctx.saved_origins = ()
            out = cls.forward(ctx, data, **s)
            if record:
                ctx.parents, ctx.shape, ctx.dtype, ctx.freed = (parent,), out.shape, out.dtype, False
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

    differentiable_backward = True

    @classmethod
    def call(cls, *inputs, **settings):
        """The op on arrays (-> an array, nothing recorded) or on Tensors (-> a Tensor, recorded).

        Backward formulas use it for ops they need in both forms (e.g. a scatter).
        """
        if any(isinstance(x, Tensor) for x in inputs):
            return cls.apply(*inputs, **settings)
        return cls.run(*inputs, **settings)


def _as_output(cls: type, out) -> np.ndarray:
    """forward's result as an ndarray (a NumPy scalar from a full reduction becomes 0-d)."""
    if isinstance(out, Tensor):
        raise TypeError(
            f"{cls.__name__}.forward returned a Tensor; forward works on NumPy arrays and must return one "
            "(use .numpy() on Tensors inside forward, or build the op from Tensor operations without a Function)"
        )
    if isinstance(out, (np.generic, float, int, bool)):
        return np.asarray(out)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{cls.__name__}.forward must return a NumPy array, got {type(out).__name__}")
    return out


def _saved_records(saved: tuple, arrays: list, inputs: tuple, out: Tensor) -> tuple:
    """Version records and origins of the arrays ``forward`` saved.

    Versions: ``(position, counter, version, shape)`` of each input tensor (position >= 0)
    or the output (-1) whose data was saved, itself or as a view of the same memory.
    Origins: per saved array, the input position it *is*, -1 for the output, None otherwise.
    (Kept lean, helpers inlined: it runs for every recorded op that saves arrays.)
    """
    records = []
    origins = []
    out_data = out._data
    count = len(arrays)
    for index, array in enumerate(saved):
        if not isinstance(array, np.ndarray):
            origins.append(None)
            continue
        if array is out_data:  # the output itself
            origins.append(-1)
            x, position, data = out, -1, out_data
        elif index < count and arrays[index] is array:  # input ``index`` itself (forward saves its inputs in order)
            origins.append(index)
            x, position, data = inputs[index], index, array
        else:
            for position, a in enumerate(arrays):  # an input itself, saved out of order
                if a is array:
                    origins.append(position)
                    x, data = inputs[position], a
                    break
            else:  # a view of an input's or the output's memory, or an array of its own
                origins.append(None)
                x, position, data = _owner_of(array, inputs, out)
        if not isinstance(x, Tensor):  # a plain array input (a constant, no version to watch), or no owner
            continue
        counter = x._version_counter
        if counter is None:
            counter = x._version_counter = VersionCounter()
        records.append((position, counter, counter.value, data.shape))
    return tuple(records), tuple(origins)


def _owner_of(array: np.ndarray, inputs: tuple, out: Tensor) -> tuple:
    """(tensor, position, its data) of the input (or output, -1) whose memory ``array`` views."""
    owner = array.base if array.base is not None else array
    for position, x in enumerate(inputs):
        if isinstance(x, Tensor):
            data = x._data
            if data is owner or data.base is owner:
                return x, position, data
    data = out._data
    if data is owner or data.base is owner:
        return out, -1, data
    return None, None, None


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


# ------------------------------------------------------------------ create_graph
class GraphContext:
    """What a differentiable backward sees with ``create_graph=True``: the node's
    attributes, but ``saved_tensors`` as Tensors in the graph (inputs and output)."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self.saved_tensors = tuple(_saved_tensor(node, a, o) for a, o in zip(node.saved_tensors, node.saved_origins))

    def __getattr__(self, name: str):
        return getattr(self._node, name)


def _saved_tensor(node: Node, array, origin):
    """One saved array as the Tensor it was in the forward pass."""
    if origin is None:
        if isinstance(array, (np.ndarray, np.generic)) and array.dtype.kind in "fc":
            raise RuntimeError(
                f"{node.name()} saved an array that is neither an input nor its output, so its backward "
                "cannot be differentiated (create_graph=True); the op must save inputs/outputs or use composite_grads"
            )
        return array  # an integer/bool constant (indices, masks) or None
    if origin == -1:
        return Tensor._make(array, True, node)
    parent = node.parents[origin]
    if isinstance(parent, Tensor):
        return parent
    return Tensor._make(array, parent is not None, parent)


def composite_grads(forward, inputs: tuple, grad, needs: tuple) -> tuple:
    """The gradients of ``forward(*inputs)`` (an op written in Tensor ops) as Tensors in the graph.

    Fused ops use it for ``create_graph=True``: their kernel backward works on
    arrays, so the second derivative comes from their plain formula instead.
    Each input that needs a gradient goes through an ``Alias`` node first, so the
    gradient is taken with respect to this use of it only.

    Args:
        forward: ``(*tensors) -> Tensor``, the op in differentiable Tensor ops.
        inputs: the op's inputs as Tensors (``ctx.saved_tensors``), or None.
        grad: the incoming gradient (a Tensor, possibly in a graph).
        needs: ``ctx.needs_input_grad``.
    """
    from . import grad as autograd_grad

    with enable_grad():
        aliases = [Alias.apply(x) if need else x for x, need in zip(inputs, needs)]
        out = forward(*aliases)
        wanted = [a for a, need in zip(aliases, needs) if need]
        found = iter(autograd_grad(out, wanted, grad, create_graph=True, allow_unused=True))
    return tuple(next(found) if need else None for need in needs)


class Alias(Op):
    """y = x, as a node of its own (``composite_grads`` differentiates through it)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class OnceDifferentiable(Function):
    """The gradient of a Function whose backward works on arrays only, put in the graph
    (``create_graph=True``) so that differentiating it again raises, naming the Function."""

    @staticmethod
    def forward(ctx, g, *anchors, name=""):
        ctx.function_name = name
        return g

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            f"{ctx.function_name}: its backward works on NumPy arrays, so its gradient cannot be "
            "differentiated again (PyTorch's once_differentiable). To allow it, set "
            "differentiable_backward = True on the Function and write backward with operators and "
            "NumPy functions that also accept Tensors (see docs/higher_order.md)."
        )
