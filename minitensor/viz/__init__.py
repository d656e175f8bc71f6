"""See the autograd graph without Graphviz: ``make_dot`` as torchviz's, drawn by minitensor.

>>> import minitensor as mt
>>> from minitensor.viz import make_dot
>>> w = mt.randn(3, requires_grad=True)
>>> g = make_dot((w * 2).sum(), params={"w": w})
>>> print(g)                     # a text tree
output ()
SumBackward
MulBackward
w (3,)
>>> g.source.splitlines()[0]     # Graphviz DOT
'digraph {'
>>> g.svg().startswith("<svg")   # drawn here: layout.py + svg.py; Jupyter shows it inline
True

Files: ``graph.py`` reads the graph, ``layout.py`` places the boxes, ``svg.py``, ``dot.py``
and ``text.py`` write the three forms.
"""

from __future__ import annotations

from pathlib import Path

from .dot import to_dot
from .graph import Graph, build_graph
from .svg import to_svg
from .text import to_text

__all__ = ["GraphPicture", "make_dot"]

_SAVERS = {".dot": "source", ".svg": "svg"}


def make_dot(output, params: dict | None = None, show_saved: bool = False) -> GraphPicture:
    """A picture of the graph that computed ``output`` (torchviz's signature).

    Args:
        output: a Tensor, or a tuple/list of Tensors (one output box each).
        params: name -> Tensor, e.g. ``dict(model.named_parameters())``: leaves show the name.
        show_saved: op boxes also list the arrays they saved for backward (shape and dtype),
            or "saved: freed" after a backward without ``retain_graph`` released them.

    Returns:
        A ``GraphPicture``: ``.source`` (DOT), ``.svg()``, ``str()`` (text tree), ``.save(path)``.
    """
    return GraphPicture(build_graph(output, params, show_saved))


class GraphPicture:
    """The graph in three forms; built once, each form rendered on demand."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    @property
    def source(self) -> str:
        """Graphviz DOT text (as ``graphviz.Digraph.source``)."""
        return to_dot(self.graph)

    def svg(self) -> str:
        """An SVG document laid out and drawn by minitensor (no Graphviz needed)."""
        return to_svg(self.graph)

    def _repr_svg_(self) -> str:  # Jupyter displays the picture inline
        return self.svg()

    def __str__(self) -> str:
        return to_text(self.graph)

    def __repr__(self) -> str:
        return f"<GraphPicture: {len(self.graph.boxes)} boxes, {len(self.graph.edges)} edges>"

    def save(self, path) -> Path:
        """Write ``path``: DOT text for ``.dot``, SVG for ``.svg``; returns the path."""
        path = Path(path)
        kind = _SAVERS.get(path.suffix.lower())
        if kind is None:
            raise ValueError(f"save: {str(path)!r} must end in one of {', '.join(_SAVERS)}, got {path.suffix!r}")
        text = self.source if kind == "source" else self.svg()
        path.write_text(text, encoding="utf-8")
        return path
