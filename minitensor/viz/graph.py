"""Read an autograd graph into a plain ``Graph``: numbered boxes with text, and edges.

The walk only uses what a graph node offers for inspection: ``grad_fn.next_functions``
(one entry per input: a node, a leaf Tensor that requires grad, or None), ``name()`` and,
with ``show_saved``, ``saved_tensors``.  It is iterative (an explicit stack), so a chain of
100,000 ops is fine.

>>> import minitensor as mt
>>> w = mt.randn(3, requires_grad=True)
>>> g = build_graph((w * w).exp(), {"w": w})
>>> [box.lines[0] for box in g.boxes], g.edges
(['ExpBackward', 'output', 'MulBackward', 'w'], [(0, 1), (2, 0), (3, 2), (3, 2)])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..tensor import Tensor


@dataclass
class Box:
    """One drawn node.  kind: 'op' (a graph node), 'param' (a leaf named in ``params``),
    'leaf' (another leaf), 'output' (an output tensor)."""

    kind: str
    lines: list


@dataclass
class Graph:
    """Boxes and edges ``(source, target)`` in the direction data flows (input -> op -> output)."""

    boxes: list = field(default_factory=list)
    edges: list = field(default_factory=list)

    def inputs_of(self) -> list:
        """For each box, the boxes with an edge into it, in the order of the op's inputs."""
        inputs = [[] for _ in self.boxes]
        for source, target in self.edges:
            inputs[target].append(source)
        return inputs


def build_graph(output, params: dict | None = None, show_saved: bool = False) -> Graph:
    """The graph that produced ``output`` (a Tensor or a tuple/list of Tensors).

    Args:
        params: name -> Tensor (e.g. ``dict(model.named_parameters())``): leaves get these names.
        show_saved: add one line per array an op saved for backward (shape and dtype),
            or "saved: freed" once backward has released them.
    """
    outputs = _as_outputs(output)
    names = _param_names(params)
    graph = Graph()
    index = {}  # id(node or leaf) -> box number

    def box_of(thing) -> int:
        key = id(thing)
        if key not in index:
            index[key] = len(graph.boxes)
            graph.boxes.append(_describe(thing, names, show_saved))
            stack.append(thing)
        return index[key]

    for i, out in enumerate(outputs):
        stack = []
        source = box_of(out.grad_fn if out.grad_fn is not None else out)
        label = "output" if len(outputs) == 1 else f"output {i}"
        graph.boxes.append(Box("output", [label, _shape(out)]))
        graph.edges.append((source, len(graph.boxes) - 1))
        while stack:
            thing = stack.pop()
            for parent in _inputs(thing):
                graph.edges.append((box_of(parent), index[id(thing)]))
    return graph


def _as_outputs(output) -> list:
    outputs = list(output) if isinstance(output, (tuple, list)) else [output]
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"make_dot: output must be a Tensor or a tuple of Tensors, got {type(out).__name__} at {i}")
    return outputs


def _param_names(params) -> dict:
    if params is None:
        return {}
    if not hasattr(params, "items"):
        raise TypeError(f"make_dot: params must be a dict of name -> Tensor, got {type(params).__name__}")
    for name, value in params.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"make_dot: params[{name!r}] must be a Tensor, got {type(value).__name__}")
    return {id(value): str(name) for name, value in params.items()}


def _inputs(thing) -> list:
    """The inputs of a graph node that carry a gradient (nodes or leaf Tensors); none for a leaf."""
    if isinstance(thing, Tensor):
        return []
    entries = getattr(thing, "next_functions", None)
    if entries is None:
        entries = getattr(thing, "parents", ())
    found = []
    for entry in entries or ():
        if isinstance(entry, tuple):  # (node, index) pairs, as PyTorch's next_functions
            entry = entry[0] if entry else None
        entry = getattr(entry, "variable", entry)  # a leaf's AccumulateGrad: the leaf itself
        if entry is not None:
            found.append(entry)
    return found


def _describe(thing, names: dict, show_saved: bool) -> Box:
    if isinstance(thing, Tensor):
        name = names.get(id(thing))
        return Box("param" if name is not None else "leaf", ([name] if name is not None else []) + [_shape(thing)])
    name = thing.name() if callable(getattr(thing, "name", None)) else type(thing).__name__
    return Box("op", [name] + (_saved_lines(thing) if show_saved else []))


def _saved_lines(node) -> list:
    """'saved: (3, 4) float32' per saved value, or 'saved: freed' after backward released them."""
    try:
        saved = node.saved_tensors
        freed = bool(getattr(node, "freed", False))
    except Exception:  # a core may raise when freed values are read (PyTorch does)
        return ["saved: freed"]
    if freed:
        return ["saved: freed"]
    if saved is None:
        return []
    if not isinstance(saved, (tuple, list)):
        saved = (saved,)
    return [f"saved: {_value(v)}" for v in saved]


def _value(v) -> str:
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return f"{tuple(v.shape)} {v.dtype}"
    return "None" if v is None else type(v).__name__


def _shape(t: Tensor) -> str:
    return str(tuple(t.shape))
