"""make_dot: the DOT text, the SVG minitensor draws itself, the text tree, save, long chains."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.viz import make_dot
from minitensor.viz.layout import layout

SVG = "{http://www.w3.org/2000/svg}"


def _mlp_loss(seed: int = 0):
    mt.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    y = model(mt.randn(3, 4))
    return (y * y).mean(), model


def _op_names(tensor) -> list:
    """The op names of the graph, read independently of minitensor.viz (one per distinct node)."""
    names, seen, stack = [], set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, mt.autograd.Node):
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(next_node for next_node, _ in node.next_functions)
    return names


def test_dot_source_has_one_node_line_per_box_and_the_edges():
    loss, model = _mlp_loss()
    dot = make_dot(loss, params=dict(model.named_parameters())).source
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    nodes = re.findall(r"^  (\d+) \[label=\"([^\"]*)\"", dot, re.M)
    edges = re.findall(r"^  (\d+) -> (\d+)$", dot, re.M)
    ops = _op_names(loss)
    # boxes: the ops, the 4 parameters, the output
    assert len(nodes) == len(ops) + 4 + 1
    assert len({n for n, _ in nodes}) == len(nodes)
    labels = [label for _, label in nodes]
    for name in ops + ["0.weight\\n(8, 4)", "2.bias\\n(2,)", "output\\n()"]:
        assert name in labels
    ids = {n for n, _ in nodes}
    assert edges and all(s in ids and t in ids for s, t in edges)
    # MeanBackward feeds the output; each Linear node has its input, weight and bias as inputs
    label_of = dict(nodes)
    assert any(label_of[s] == "MeanBackward" and label_of[t].startswith("output") for s, t in edges)
    assert sum(label_of[s] == "0.weight\\n(8, 4)" and label_of[t] == "LinearBackward" for s, t in edges) == 1


def test_svg_is_well_formed_with_one_box_per_node_and_the_op_names():
    loss, model = _mlp_loss()
    picture = make_dot(loss, params=dict(model.named_parameters()))
    svg = picture.svg()
    assert picture._repr_svg_() == svg
    root = ET.fromstring(svg)
    rects = list(root.iter(SVG + "rect"))
    assert len(rects) == len(picture.graph.boxes) == len(_op_names(loss)) + 5
    texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    for name in _op_names(loss) + ["0.weight(8, 4)", "2.bias(2,)"]:
        assert name in texts
    assert len(list(root.iter(SVG + "polyline"))) >= len(rects) - 1


def _assert_no_overlap(boxes: list) -> None:
    """No two rectangles (x, y, w, h) share any area."""
    for i, (x0, y0, w0, h0) in enumerate(boxes):
        for x1, y1, w1, h1 in boxes[i + 1 :]:
            apart = x0 + w0 <= x1 or x1 + w1 <= x0 or y0 + h0 <= y1 or y1 + h1 <= y0
            assert apart, f"boxes overlap: {(x0, y0, w0, h0)} and {(x1, y1, w1, h1)}"


def test_layout_has_no_overlapping_boxes_and_edges_point_down():
    mt.manual_seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    for m in layer.modules():  # hooks force the module-by-module path: a bigger graph
        m.register_forward_hook(lambda *args: None)
    out = layer(mt.randn(5, 3, 8, requires_grad=True))
    svg = make_dot((out * out).sum(), params=dict(layer.named_parameters())).svg()
    root = ET.fromstring(svg)
    boxes = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height")) for r in root.iter(SVG + "rect")]
    assert len(boxes) > 20
    _assert_no_overlap(boxes)
    width, height = float(root.get("width")), float(root.get("height"))
    assert all(0 <= x and x + w <= width + 1 and 0 <= y and y + h <= height + 1 for x, y, w, h in boxes)


def test_layout_places_wide_graphs_without_overlap_and_routes_every_edge():
    # a wide, crossing-prone graph: 30 leaves each used by two of 15 ops, then a sum of all ops
    sizes = [(30 + 7 * (i % 5), 20) for i in range(46)]
    edges = [(i, 30 + (i * 7) % 15) for i in range(30)] + [(i, 30 + (i * 11 + 3) % 15) for i in range(30)]
    edges += [(30 + k, 45) for k in range(15)]
    lay = layout(sizes, edges)
    boxes = [(x - w / 2, y - h / 2, w, h) for (x, y), (w, h) in zip(lay.centers, sizes)]
    _assert_no_overlap(boxes)
    assert len(lay.routes) == len(edges)
    for (s, t), route in zip(edges, lay.routes):
        assert route[0][1] < route[-1][1]  # data flows down
        assert route[0][0] == pytest.approx(lay.centers[s][0]) and route[-1][0] == pytest.approx(lay.centers[t][0])


def test_params_names_and_shapes_appear_and_unnamed_leaves_show_their_shape():
    w = mt.randn(3, 2, requires_grad=True)
    x = mt.randn(4, 3, requires_grad=True)
    picture = make_dot(x @ w, params={"weight": w})
    kinds = {tuple(b.lines): b.kind for b in picture.graph.boxes}
    assert kinds[("weight", "(3, 2)")] == "param"
    assert kinds[("(4, 3)",)] == "leaf"
    assert "weight (3, 2)" in str(picture)


def test_text_tree_shows_shared_nodes_once_then_references_them():
    a = mt.randn(3, requires_grad=True)
    e = a.exp()
    y = (e * e.tanh()).sum()
    text = str(make_dot(y, params={"a": a}))
    lines = text.splitlines()
    assert lines[0] == "output ()" and lines[1] == "SumBackward" and lines[2] == "MulBackward"
    assert lines[3] == "├── [1] ExpBackward"
    assert lines[-1].endswith("[1] ExpBackward (see above)")
    assert sum("a (3,)" in line for line in lines) == 1  # below the first ExpBackward only


def test_several_outputs_and_a_leaf_output():
    a = mt.randn(2, requires_grad=True)
    picture = make_dot((a.exp(), a))
    outputs = [b.lines[0] for b in picture.graph.boxes if b.kind == "output"]
    assert outputs == ["output 0", "output 1"]
    assert str(picture).count("(2,)") >= 3


def test_show_saved_lists_saved_arrays_and_marks_them_freed_after_backward():
    w = mt.randn(3, 2, requires_grad=True)
    x = mt.randn(4, 3)
    y = (x @ w).tanh().sum()
    before = str(make_dot(y, show_saved=True))
    assert "saved: (4, 3) float32" in before  # matmul keeps its inputs
    assert "saved: freed" not in before
    assert "saved" not in str(make_dot(y))
    y.backward()
    after = make_dot(y, show_saved=True)
    assert "saved: freed" in str(after)
    assert "saved: (4, 3)" not in str(after)
    ET.fromstring(after.svg())  # still drawn


def test_save_writes_dot_or_svg_by_extension(tmp_path):
    loss, model = _mlp_loss()
    picture = make_dot(loss, params=dict(model.named_parameters()))
    picture.save(tmp_path / "g.dot")
    picture.save(str(tmp_path / "g.svg"))
    assert (tmp_path / "g.dot").read_text() == picture.source
    ET.parse(tmp_path / "g.svg")
    with pytest.raises(ValueError, match=r"g\.png.*\.dot, \.svg"):
        picture.save(tmp_path / "g.png")


def test_bad_arguments_raise_type_errors():
    a = mt.randn(2, requires_grad=True)
    with pytest.raises(TypeError, match="output must be a Tensor"):
        make_dot([a, 3])
    with pytest.raises(TypeError, match="params must be a dict"):
        make_dot(a, params=[a])
    with pytest.raises(TypeError, match=r"params\['w'\] must be a Tensor"):
        make_dot(a, params={"w": 1.0})


def test_a_10000_op_chain_without_recursion():
    x = mt.randn(2, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    picture = make_dot(y, params={"x": x}, show_saved=True)
    assert len(picture.graph.boxes) == 10_002
    lines = str(picture).splitlines()
    assert len(lines) == 10_002 and lines[-1] == "x (2,)" and max(map(len, lines)) < 80
    assert picture.source.count(" -> ") == 10_001
    root = ET.fromstring(picture.svg())
    assert len(list(root.iter(SVG + "rect"))) == 10_002


def test_docstring_examples_run():
    import doctest

    from minitensor import viz
    from minitensor.viz import dot, graph, layout, text

    for module in (viz, graph, layout, dot, text):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
