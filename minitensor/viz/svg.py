"""Draw a ``Graph`` as SVG: boxes sized to their text, placed by ``layout``, edges with arrows.

Colours follow torchviz: named parameters light blue, other leaves white, outputs green,
ops light grey.  The font is monospace, so a box's width follows from its longest line.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from .graph import Graph
from .layout import layout

FONT_SIZE = 12.0
CHAR_WIDTH = 0.6 * FONT_SIZE  # monospace advance
LINE_HEIGHT = 1.3 * FONT_SIZE
PAD_X, PAD_Y = 8.0, 6.0
FILL = {"op": "lightgrey", "param": "lightblue", "leaf": "white", "output": "darkolivegreen1"}
_HEX = {"lightgrey": "#d3d3d3", "lightblue": "#add8e6", "white": "#ffffff", "darkolivegreen1": "#caff70"}


def box_size(lines: list) -> tuple:
    """(width, height) of a box holding ``lines`` of text."""
    longest = max((len(line) for line in lines), default=0)
    return longest * CHAR_WIDTH + 2 * PAD_X, max(len(lines), 1) * LINE_HEIGHT + 2 * PAD_Y


def to_svg(graph: Graph) -> str:
    """The SVG document (a string) of ``graph``: one ``<rect>`` and one ``<text>`` per box."""
    sizes = [box_size(box.lines) for box in graph.boxes]
    lay = layout(sizes, graph.edges)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width:.0f}" height="{lay.height:.0f}" '
        f'viewBox="0 0 {lay.width:.1f} {lay.height:.1f}" font-family="monospace" font-size="{FONT_SIZE:g}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>',
        '<g class="edges" fill="none" stroke="#444" stroke-width="1">',
    ]
    for route in dict.fromkeys(tuple(r) for r in lay.routes):  # a repeated input: one line
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in route)
        parts.append(f'<polyline points="{points}" marker-end="url(#arrow)"/>')
    parts.append("</g>")
    parts.append('<g class="nodes">')
    for box, (w, h), (x, y) in zip(graph.boxes, sizes, lay.centers):
        parts.append(_box(box.kind, box.lines, x, y, w, h))
    parts.append("</g></svg>")
    return "\n".join(parts)


def _box(kind: str, lines: list, x: float, y: float, w: float, h: float) -> str:
    """A group: the rectangle and its centred lines of text."""
    fill = _HEX[FILL[kind]]
    top = y - h / 2
    spans = []
    for i, line in enumerate(lines):
        baseline = top + PAD_Y + (i + 0.8) * LINE_HEIGHT
        spans.append(f'<tspan x="{x:.1f}" y="{baseline:.1f}">{escape(line)}</tspan>')
    return (
        f'<g class="node {kind}"><rect x="{x - w / 2:.1f}" y="{top:.1f}" width="{w:.1f}" height="{h:.1f}" '
        f'rx="3" fill="{fill}" stroke="#333"/><text text-anchor="middle">{"".join(spans)}</text></g>'
    )
