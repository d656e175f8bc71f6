"""A layered (Sugiyama-style) layout: data flows top to bottom, inputs above the ops that use them.

1. Layers by longest path: a box sits one layer below its lowest input; a box without inputs
   (a leaf) sits just above the first box that uses it.
2. An edge that spans several layers gets invisible "dummy" points, one per layer crossed,
   so it bends around boxes (edges spanning more than ``MAX_SPAN`` layers are drawn straight).
3. Crossing reduction: a few barycenter sweeps (each box moves to the mean position of its
   neighbours in the layer above, then below).
4. Coordinates: twice top to bottom, each op goes under the mean x of its inputs that are ops
   (following the main chain, not the weights beside it); then, bottom to top, each leaf goes
   above the mean x of its users.  In each layer boxes are pushed right until none overlaps,
   and the layer is shifted back so that on average its boxes sit where they want to be.

Every walk is iterative, so a chain of 10,000 ops is laid out in well under a second.

>>> lay = layout([(40, 20), (40, 20), (60, 20)], [(0, 2), (1, 2)])
>>> lay.centers[2][1] > lay.centers[0][1]          # the op below its inputs
True
"""

from __future__ import annotations

from dataclasses import dataclass

GAP_X, GAP_Y, MARGIN = 24.0, 36.0, 12.0
MAX_SPAN = 8  # longer edges are drawn straight (no dummy points): keeps the layout linear in size
SWEEPS = 2


@dataclass
class Layout:
    """centers: (x, y) of each box; routes: the polyline of each edge (same order as the edges);
    width, height: of the whole picture."""

    centers: list
    routes: list
    width: float
    height: float


def layout(sizes: list, edges: list) -> Layout:
    """Place boxes of ``sizes`` [(width, height)] joined by ``edges`` [(source, target)] (a DAG)."""
    n = len(sizes)
    layer = _layers(n, edges)
    nodes_w = [w for w, _ in sizes]
    preds, succs, chains = _with_dummies(n, edges, layer, nodes_w)
    layers = [[] for _ in range(max(layer) + 1 if layer else 0)]
    for v in range(len(layer)):
        layers[layer[v]].append(v)
    _reduce_crossings(layers, preds, succs)
    xs = _x_coordinates(layers, preds, succs, nodes_w)
    ys, height = _y_coordinates(layers, sizes, len(layer))
    width = max((xs[v] + nodes_w[v] / 2 for v in range(len(layer))), default=0.0) + MARGIN
    centers = [(xs[v], ys[v]) for v in range(n)]
    routes = []
    for (s, t), chain in zip(edges, chains):
        start = (xs[s], ys[s] + sizes[s][1] / 2)
        end = (xs[t], ys[t] - sizes[t][1] / 2)
        routes.append([start] + [(xs[d], ys[d]) for d in chain] + [end])
    return Layout(centers, routes, width, height)


def _layers(n: int, edges: list) -> list:
    """Longest-path layer of each box (Kahn's order), leaves pulled down next to their first user."""
    preds = [[] for _ in range(n)]
    succs = [[] for _ in range(n)]
    indegree = [0] * n
    for s, t in edges:
        preds[t].append(s)
        succs[s].append(t)
        indegree[t] += 1
    layer = [0] * n
    ready = [v for v in range(n) if indegree[v] == 0]
    while ready:
        v = ready.pop()
        for t in succs[v]:
            layer[t] = max(layer[t], layer[v] + 1)
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    if any(indegree):
        raise ValueError("layout: the edges form a cycle; a graph of ops has none")
    for v in range(n):
        if not preds[v] and succs[v]:
            layer[v] = min(layer[t] for t in succs[v]) - 1
    return layer


def _with_dummies(n: int, edges: list, layer: list, widths: list) -> tuple:
    """Adjacency (preds, succs) over boxes and dummy points; each edge's chain of dummies.
    ``layer`` and ``widths`` grow by one entry per dummy."""
    preds, succs, chains = [[] for _ in range(n)], [[] for _ in range(n)], []
    for s, t in dict.fromkeys(edges):  # one route per distinct pair
        chain, prev = [], s
        if layer[t] - layer[s] <= MAX_SPAN:
            for k in range(layer[s] + 1, layer[t]):
                d = len(layer)
                layer.append(k)
                widths.append(0.0)
                preds.append([])
                succs.append([])
                preds[d].append(prev)
                succs[prev].append(d)
                chain.append(d)
                prev = d
        preds[t].append(prev)
        succs[prev].append(t)
        chains.append(chain)
    by_pair = dict(zip(dict.fromkeys(edges), chains))
    return preds, succs, [by_pair[e] for e in edges]


def _reduce_crossings(layers: list, preds: list, succs: list) -> None:
    """Barycenter sweeps, down then up, reordering each layer in place."""
    position = {}
    for row in layers:
        for i, v in enumerate(row):
            position[v] = i
    for _ in range(SWEEPS):
        for rows, neighbours in ((layers[1:], preds), (layers[-2::-1], succs)):
            for row in rows:
                keys = {}
                for v in row:
                    near = neighbours[v]
                    keys[v] = sum(position[u] for u in near) / len(near) if near else position[v]
                row.sort(key=keys.__getitem__)
                for i, v in enumerate(row):
                    position[v] = i


def _x_coordinates(layers: list, preds: list, succs: list, widths: list) -> list:
    """x center of every box and dummy: packed, then placed as step 4 of the module docstring says."""
    xs = [0.0] * len(widths)
    for row in layers:
        _place(row, [0.0] * len(row), widths, xs)
    # going down, a box follows those of its inputs that are ops; then each leaf moves above its users
    inner = [[u for u in near if preds[u]] or near for near in preds]
    leaf_users = [succs[v] if not preds[v] else [] for v in range(len(xs))]
    for rows, neighbours in ((layers[1:], inner), (layers[1:], inner), (layers[-2::-1], leaf_users)):
        for row in rows:
            wanted = [sum(xs[u] for u in neighbours[v]) / len(neighbours[v]) if neighbours[v] else xs[v] for v in row]
            _place(row, wanted, widths, xs)
    left = min((xs[v] - widths[v] / 2 for v in range(len(xs))), default=0.0)
    return [x - left + MARGIN for x in xs]


def _place(row: list, wanted: list, widths: list, xs: list) -> None:
    """Put each box of ``row`` at its wanted x, pushed right so that none overlaps the previous,
    then shift the row back so that on average the boxes sit where they want to be."""
    edge = None
    for v, x in zip(row, wanted):
        half = widths[v] / 2
        if edge is not None and x - half < edge + GAP_X:
            x = edge + GAP_X + half
        xs[v] = x
        edge = x + half
    shift = sum(w - xs[v] for v, w in zip(row, wanted)) / len(row) if row else 0.0
    for v in row:
        xs[v] += shift


def _y_coordinates(layers: list, sizes: list, total: int) -> tuple:
    """y center of every box and dummy (one row per layer, as tall as its tallest box); the height."""
    ys = [0.0] * total
    top = MARGIN
    for row in layers:
        tall = max((sizes[v][1] for v in row if v < len(sizes)), default=0.0)
        for v in row:
            ys[v] = top + tall / 2
        top += tall + GAP_Y
    return ys, top - GAP_Y + MARGIN
