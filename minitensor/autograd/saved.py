"""What an op saved in ``forward``, watched and handed back.

- ``saved_records``: the version records of the saved arrays (``Function.apply`` takes
  them; the engine compares them before a backward: a tensor changed in place since it
  was saved raises instead of giving a wrong gradient), and each saved array's origin
  (the input position it is, -1 for the output, None for anything else).
- ``GraphContext``: the ``ctx`` a backward sees with ``create_graph=True`` (or in forward
  mode's forward-over-reverse): the node's attributes, with the saved arrays turned back
  into the Tensors they were in the forward pass, so the backward's own ops are recorded.
- ``JvpContext``: the ``ctx`` a forward-mode (JVP) rule sees: the same saved values,
  as arrays or as those Tensors, plus the op's settings.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, VersionCounter

hooks: list = []  # (pack_hook, unpack_hook) of the active saved_tensors_hooks, innermost last
disabled: list = []  # error messages of the active disable_saved_tensors_hooks, innermost last

FREED = (
    "Trying to backward through the graph a second time (or to use saved values after they "
    "were freed). The graph's buffers are freed after .backward() or autograd.grad(); "
    "pass retain_graph=True the first time if you need to backward through it again."
)


def saved_records(saved: tuple, arrays: list, inputs: tuple, out: Tensor) -> tuple:
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


def _not_an_input_or_output(name: str, what: str) -> RuntimeError:
    return RuntimeError(
        f"{name} saved an array that is neither an input nor its output, so its {what} cannot be "
        "differentiated; the op must save inputs/outputs, or use composite_grads / composite_jvp"
    )


class GraphContext:
    """What a differentiable backward sees with ``create_graph=True``: the node's
    attributes, but ``saved_tensors`` as Tensors in the graph (inputs and output)."""

    def __init__(self, node) -> None:
        self._node = node
        self.saved_tensors = tuple(_saved_tensor(node, a, o) for a, o in zip(node.saved_tensors, node.saved_origins))

    def __getattr__(self, name: str):
        return getattr(self._node, name)


def _saved_tensor(node, array, origin):
    """One saved array as the Tensor it was in the forward pass (with its tangents, in forward mode)."""
    if origin is None:
        if isinstance(array, (np.ndarray, np.generic)) and array.dtype.kind in "fc":
            raise _not_an_input_or_output(node.name(), "backward (create_graph=True)")
        return array  # an integer/bool constant (indices, masks) or None
    dual = node.__dict__.get("dual")  # (inputs, output tangents) when forward mode saw this op
    if origin == -1:
        out = Tensor._make(array, True, node)
        if dual is not None:
            for level, tangent in dual[1].items():
                level.set(out, tangent)
        return out
    if dual is not None and isinstance(dual[0][origin], Tensor):
        return dual[0][origin]  # the input itself, with its tangents
    parent = node.parents[origin]
    if isinstance(parent, Tensor):
        return parent
    return Tensor._make(array, parent is not None, parent)


class JvpContext:
    """The ``ctx`` of a forward-mode rule: ``jvp(ctx, *tangents)``.

    Attributes as the forward's ``ctx`` (``ctx.dim``...), and:
        saved_tensors: what forward saved, as arrays (first-order forward mode) or, when the
            tangent must itself be differentiable (``as_tensors``), as the input and output
            Tensors they were, so the rule's own ops are recorded / carry outer tangents.
        inputs: the op's positional inputs (arrays, or Tensors with ``as_tensors``).
        output: the op's output (array or Tensor).
        keywords: the op's settings, its keyword arguments (for rules that apply the op itself to
            tangents; ``ctx.settings`` stays whatever forward put there).
        tensors: the op's inputs as they were given (the Tensors themselves).
    """

    def __init__(self, ctx, inputs: tuple, output: Tensor, settings: dict, as_tensors: bool) -> None:
        self._ctx = ctx
        self.keywords = settings
        self.function = ctx.function
        if as_tensors:
            self.inputs = tuple([x if isinstance(x, Tensor) or x is None else _constant(x) for x in inputs])
            self.output = output
        else:
            self.inputs = tuple([x._data if isinstance(x, Tensor) else x for x in inputs])
            self.output = output._data
        self._as_tensors = as_tensors
        self.tensors = inputs

    @property
    def saved_tensors(self) -> tuple:
        saved = self._ctx.__dict__.get("saved_for_forward", self._ctx.saved_tensors)
        if not self._as_tensors:
            return saved
        return tuple([self._saved(a) for a in saved])  # (list comprehensions: every op in a level runs these)

    def _saved(self, array):
        if not isinstance(array, np.ndarray) or array.dtype.kind not in "fc":
            return array  # None, settings, integer/bool constants
        if array is self.output._data:
            return self.output
        for x, t in zip(self.tensors, self.inputs):
            if (x._data if isinstance(x, Tensor) else x) is array:
                return t
        raise _not_an_input_or_output(self.function.__name__, "forward-mode rule (with Tensors)")

    def __getattr__(self, name: str):
        return getattr(self._ctx, name)


def _constant(x):
    """A non-Tensor input (array or number) as a Tensor outside any graph."""
    return Tensor._make(np.asarray(x), False, None) if isinstance(x, (np.ndarray, np.generic)) else x


# ------------------------------------------------------------------ saved_tensors_hooks
def pack(ctx, inputs: tuple, out: Tensor) -> None:
    """Hand each array ``forward`` saved, as the Tensor it is (an input, the output, or a Tensor of
    its own), to the innermost pack hook; the node keeps what the hook returns instead."""
    pack_hook, unpack_hook = hooks[-1]
    packed = []
    for array, origin in zip(ctx.saved_tensors, ctx.saved_origins):
        if not isinstance(array, np.ndarray):
            packed.append((False, array))
            continue
        if origin == -1:
            tensor = out
        elif origin is not None and isinstance(inputs[origin], Tensor):
            tensor = inputs[origin]
        else:
            tensor = Tensor._make(array, False, None)
        packed.append((True, pack_hook(tensor)))
    ctx.saved_tensors = ()
    ctx.packed = (unpack_hook, packed)


def unpack(node) -> tuple:
    """The node's saved arrays back from the unpack hook (the engine asks before a backward)."""
    unpack_hook, packed = node.packed
    arrays = []
    for hooked, value in packed:
        if hooked:
            value = unpack_hook(value)
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                    f"{type(value).__name__}"
                )
            value = value._data
        arrays.append(value)
    return tuple(arrays)


_POSITIONS = {"self": 0, "input": 0, "other": 1, "result": -1}


def saved_value(node, name: str):
    """``grad_fn._saved_<name>``: the saved input 0 (``self``), input 1 (``other``) or output
    (``result``) as a Tensor, or the setting ``name`` the op kept on its ctx."""
    if name in node.__dict__:
        return node.__dict__[name]
    position = _POSITIONS.get(name)
    if position is not None and node.saved_origins:
        if node.freed:
            raise RuntimeError(FREED)
        arrays = unpack(node) if node.packed is not None else node.saved_tensors
        for array, origin in zip(arrays, node.saved_origins):
            if origin == position:
                parent = node.parents[origin] if origin >= 0 else None
                return parent if isinstance(parent, Tensor) else Tensor._make(array, False, None)
    raise AttributeError(f"{type(node).__name__!r} object has no attribute '_saved_{name}'")
