"""Write a ``Graph`` as Graphviz DOT text (render it with ``dot -Tpng`` where Graphviz exists).

>>> import minitensor as mt
>>> from minitensor.viz.graph import build_graph
>>> w = mt.randn(2, requires_grad=True)
>>> print(to_dot(build_graph(w.exp(), {"w": w})))
digraph {
  graph [size="12,12"]
  node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]
  0 [label="ExpBackward" fillcolor=lightgrey]
  1 [label="output\\n(2,)" fillcolor=darkolivegreen1]
  2 [label="w\\n(2,)" fillcolor=lightblue]
  0 -> 1
  2 -> 0
}
"""

from __future__ import annotations

from .graph import Graph
from .svg import FILL


def to_dot(graph: Graph) -> str:
    """DOT source: one node line per box (``id [label=... fillcolor=...]``), one line per edge."""
    lines = [
        "digraph {",
        '  graph [size="12,12"]',
        "  node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]",
    ]
    for i, box in enumerate(graph.boxes):
        label = "\\n".join(_quote(line) for line in box.lines)
        lines.append(f'  {i} [label="{label}" fillcolor={FILL[box.kind]}]')
    lines.extend(f"  {s} -> {t}" for s, t in graph.edges)
    lines.append("}")
    return "\n".join(lines)


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
