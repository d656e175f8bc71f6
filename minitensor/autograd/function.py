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

In-place safety: when ``forward`` saves an input's array (or a view of it),
or the output's, ``apply`` records that tensor's version (its count of
in-place modifications, ``Tensor._version``) in ``ctx.saved_versions``; the
engine compares before running ``backward`` and raises ``RuntimeError``
instead of computing a gradient from changed data.  An output that is a view
of an input (``x[0]``, ``x.reshape(..)``) shares the input's version counter.
"""

from __future__ import annotations

import numpy as np

from . import _profiling
from .grad_mode import is_grad_enabled


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
    """

    __slots__ = (
        "parents",
        "needs_input_grad",
        "shape",
        "dtype",
        "saved_tensors",
        "saved_versions",
        "freed",
        "__dict__",
    )
    function: type = None  # the Function subclass, set per generated Node class

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
        """Free the arrays kept for backward; a later backward through here raises."""
        self.saved_tensors = ()
        self.saved_versions = ()
        self.__dict__.clear()
        self.freed = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class Function:
    """Base class of differentiable ops; subclasses define ``forward`` and ``backward``."""

    _node_cls: type = Node

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
        if _profiling.active is not None:  # mt.profiler is recording: time this forward
            return _profiling.active.time(cls.__name__, "forward", cls.forward, ctx, *arrays, **settings)
        return cls.forward(ctx, *arrays, **settings)

    @classmethod
    def apply(cls, *inputs, **settings):
        """Run the op on Tensors (or arrays/scalars) and record it when needed."""
        record = is_grad_enabled()
        if not record:  # (the lean path of inference: nothing to collect for a graph)
            out = cls.run(*[x._data if isinstance(x, Tensor) else x for x in inputs], **settings)
            result = Tensor._make(out, False, None)
            if out.base is not None:
                _share_counter(result, inputs)
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
        ctx = cls._node_cls()
        ctx.needs_input_grad = tuple([p is not None for p in parents])
        ctx.saved_tensors = ()
        if _profiling.active is None:
            out = cls.forward(ctx, *arrays, **settings)
        else:  # mt.profiler is recording: time this forward
            out = _profiling.active.time(cls.__name__, "forward", cls.forward, ctx, *arrays, **settings)
        if not needs_grad:
            result = Tensor._make(out, False, None)
        else:
            ctx.parents = tuple(parents)
            ctx.shape = out.shape
            ctx.dtype = out.dtype
            ctx.freed = False
            result = Tensor._make(out, True, ctx)
            saved = ctx.saved_tensors
            ctx.saved_versions = _saved_versions(saved, inputs, result) if saved else ()
        if out.base is not None:  # a view: it shares the version counter of the input it views
            _share_counter(result, inputs)
        return result


def _saved_versions(saved: tuple, inputs: tuple, out: Tensor) -> tuple:
    """``(position, counter, version, shape)`` of each input tensor (position >= 0) or the
    output (-1) whose data ``forward`` saved, itself or as a view of the same memory.

    (Kept lean, helpers inlined: it runs for every recorded op that saves arrays.)
    """
    records = []
    for array in saved:
        if not isinstance(array, np.ndarray):
            continue
        owner = array.base  # the array that owns the memory
        if owner is None:
            owner = array
        position = 0
        for x in inputs:
            if isinstance(x, Tensor):
                data = x._data
                if data is owner or data.base is owner:
                    break
            position += 1
        else:
            x, position = out, -1
            data = out._data
            if not (data is owner or data.base is owner):
                continue
        counter = x._version_counter
        if counter is None:
            counter = x._version_counter = VersionCounter()
        records.append((position, counter, counter.value, data.shape))
    return tuple(records)


def _share_counter(result: Tensor, inputs: tuple) -> None:
    """Give a view the version counter of the input whose memory it looks at."""
    base = result._data.base
    for x in inputs:
        if isinstance(x, Tensor):
            data = x._data
            if data is base or data.base is base:
                result._version_counter = x._counter()
                return
                return


from ..tensor import Tensor, VersionCounter  # noqa: E402  (tensor.py imports the ops, which import this module)
