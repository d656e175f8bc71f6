"""Print a ``Graph`` as a text tree, from each output back to the leaves.

An op with one input is followed by that input in the same column (a chain reads straight
down); an op with several inputs opens a branch per input.  A box used more than once gets a
number ``[n]`` where it is first shown, and later appears as ``[n] ... (see above)``.

>>> import minitensor as mt
>>> from minitensor.viz.graph import build_graph
>>> w = mt.randn(3, requires_grad=True)
>>> print(to_text(build_graph((w * w.exp()).sum(), {"w": w})))
output ()
SumBackward
MulBackward
├── [1] w (3,)
└── ExpBackward
    [1] w (3,) (see above)
"""

from __future__ import annotations

from .graph import Graph


def to_text(graph: Graph) -> str:
    """The tree as lines of text (iterative: a 10,000-op chain gives 10,000 short lines)."""
    inputs = graph.inputs_of()
    uses = [0] * len(graph.boxes)
    for source, _ in graph.edges:
        uses[source] += 1
    numbers, lines, count = {}, [], 0
    roots = [i for i, box in enumerate(graph.boxes) if box.kind == "output"]
    stack = [(root, "", "") for root in reversed(roots)]
    while stack:
        v, lead, child_lead = stack.pop()
        label = _label(graph.boxes[v])
        if v in numbers:
            lines.append(f"{lead}[{numbers[v]}] {label} (see above)")
            continue
        tag = ""
        if uses[v] > 1:
            count += 1
            numbers[v] = count
            tag = f"[{count}] "
        else:
            numbers[v] = None  # shown once; never referenced
        lines.append(lead + tag + label)
        kids = inputs[v]
        if len(kids) == 1:
            stack.append((kids[0], child_lead, child_lead))
            continue
        for i in reversed(range(len(kids))):
            last = i == len(kids) - 1
            stack.append(
                (kids[i], child_lead + ("└── " if last else "├── "), child_lead + ("    " if last else "│   "))
            )
    return "\n".join(lines)


def _label(box) -> str:
    """One line: 'MulBackward (saved: (3,) float32)', 'w (3,)', 'output (2, 3)'."""
    if box.kind == "op" and len(box.lines) > 1:
        return f"{box.lines[0]} ({'; '.join(box.lines[1:])})"
    return " ".join(box.lines)
