"""Fuzzing the vision ops (``vision_ops.py``): random graphs of 3-D and 4-D values where pooling,
padding, interpolation, batch norm, local response norm and pixel shuffle are drawn often (the
main fuzz tests draw them among all ops, rarely), mixed with elementwise ops, reshapes and
``unsqueeze``.  The forward must equal the NumPy forms, and the first and second derivatives
finite differences (``gradcheck``, ``gradgradcheck``), on the numba or the reference path; in
forward mode, the tangents the JVP rules give equal differences and reverse mode's products."""

from __future__ import annotations

import os

import numpy as np
from graph_ops import UNARY
from hypothesis import given, note, settings
from hypothesis import strategies as st
from random_graphs import check_forward_mode, evaluate, graphs
from vision_ops import VISION

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck

_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
FUZZ = settings.get_profile(f"{_PROFILE}-fuzz" if _PROFILE in ("dev", "ci", "hunt") else "dev-fuzz")
MIXED = VISION + [op for op in UNARY if op.name in ("tanh", "sigmoid", "affine", "reshape", "unsqueeze", "permute")]
VISION_GRAPHS = graphs(min_ops=3, max_ops=6, unary=MIXED, dims=[3, 4])


@settings(FUZZ, max_examples=max(FUZZ.max_examples // 5, 1))
@given(graph=VISION_GRAPHS, jit=st.booleans())
def test_vision_graph_matches_numpy_and_passes_gradchecks(graph, jit: bool) -> None:
    note(f"jit={jit}\n{graph}")
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        leaves = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in graph.leaves]
        for out, expected in zip(evaluate(graph, leaves, "mt"), evaluate(graph, graph.leaves, "np"), strict=True):
            assert out.shape == np.shape(expected)
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-9, atol=1e-12)
        gradcheck(lambda *xs: evaluate(graph, list(xs), "mt"), leaves)
        gradgradcheck(lambda *xs: evaluate(graph, list(xs), "mt"), leaves)
    finally:
        mt.set_jit_enabled(previous)


@settings(FUZZ, max_examples=max(FUZZ.max_examples // 5, 1))
@given(graph=VISION_GRAPHS, jit=st.booleans(), seed=st.integers(0, 2**16))
def test_vision_graph_forward_mode_matches_differences_and_reverse_mode(graph, jit: bool, seed: int) -> None:
    note(f"jit={jit}\n{graph}")
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        check_forward_mode(graph, seed)
    finally:
        mt.set_jit_enabled(previous)
