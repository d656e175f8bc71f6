"""The figures committed under docs/ are what docs/make_figures.py draws now (so they cannot
go stale), drawing is deterministic, and the pages that show a figure link to it."""

from __future__ import annotations

import importlib.util
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def _make_figures():
    spec = importlib.util.spec_from_file_location("make_figures", ROOT / "docs" / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIGURES = _make_figures().FIGURES


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_committed_figure_is_what_the_script_draws(name: str) -> None:
    committed = (ROOT / "docs" / name).read_text(encoding="utf-8")
    drawn = FIGURES[name]()
    assert drawn == committed, f"docs/{name} is stale: run `python docs/make_figures.py` and commit it"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_drawing_twice_gives_the_same_bytes(name: str) -> None:
    assert FIGURES[name]() == FIGURES[name]()


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_linked_from_a_page(name: str) -> None:
    pages = [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")]
    assert any(re.search(rf"!\[[^\]]*\]\({re.escape(name)}\)", page) for page in pages)


def test_encoder_layer_graph_shows_every_parameter_and_the_layer_node() -> None:
    svg = FIGURES["encoder_layer_graph.svg"]()
    assert "0x" not in svg  # no addresses
    texts = ["".join(t.itertext()) for t in ET.fromstring(svg).iter(SVG + "text")]
    for op in ["EncoderLayerBackward", "MSELossBackward"]:
        assert any(text.startswith(op) for text in texts), op
    params = [
        "self_attn.in_proj_weight(24, 8)",
        "self_attn.out_proj.bias(8,)",
        "linear1.weight(16, 8)",
        "linear2.weight(8, 16)",
        "norm1.weight(8,)",
        "norm2.bias(8,)",
    ]
    for name in params:
        assert name in texts, name
    assert sum(text.startswith("EncoderLayerBackward") for text in texts) == 1
    assert not any(text.startswith(("SelfAttentionBackward", "AddLayerNormBackward")) for text in texts)


def test_module_by_module_graph_shows_the_post_ln_layer_unfused() -> None:
    svg = FIGURES["encoder_layer_graph_modules.svg"]()
    texts = ["".join(t.itertext()) for t in ET.fromstring(svg).iter(SVG + "text")]
    count = {op: sum(text == op for text in texts) for op in set(texts)}
    assert count["LinearBackward"] == 2 and count["ReluBackward"] == 1
    assert count["DropoutBackward"] == 3 and count["AddBackward"] == 2 and count["LayerNormBackward"] == 2
    assert count["SelfAttentionBackward"] == 1 and "FeedForwardBackward" not in count
