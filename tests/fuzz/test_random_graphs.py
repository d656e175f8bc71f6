"""Fuzzing: random op graphs, forward against NumPy and backward against finite differences.

Each example is a small random program (``random_graphs.graphs``): 1-3 float64
leaves of broadcastable shapes, then 3-8 ops drawn from the differentiable set
(unary elementwise, broadcasting binary ops, reductions with keepdim, reshape,
permute, indexing, softmax, matmul, convolutions, cat, where).  The test checks that

- the minitensor forward equals the same program evaluated with NumPy (every
  output: each step result that no later step uses);
- ``gradcheck`` (float64, the full Jacobian or random weightings) passes;
- the program on float32 leaves stays float32;

on the numba path or the NumPy reference path (drawn per example).  A failure
is shrunk by hypothesis to a minimal program, which the report prints
("Falsifying example" and the program text from ``note``).

A second test draws the same kind of graphs (every op kind, the fused ones
included, is differentiable twice) and checks them with ``gradgradcheck`` too:
their second derivatives against finite differences of the first.  A third runs
them in forward mode: each output's tangent in a random direction against central
differences, and against reverse mode by the dot-product test ``u·(J v) = (Jᵀ u)·v``.

The number of examples comes from the "<profile>-fuzz" hypothesis profile
(tests/conftest.py): 1,000 in CI, 100 on a developer run, 5,000 new ones with "hunt"; the second-order test
runs half of that (500 in CI, 10-20 s on a shared 2-core machine).
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st
from random_graphs import check_forward_mode, evaluate, graphs

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck

_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
FUZZ = settings.get_profile(f"{_PROFILE}-fuzz" if _PROFILE in ("dev", "ci", "hunt") else "dev-fuzz")


@settings(FUZZ)
@given(graph=graphs(), jit=st.booleans())
def test_random_graph_matches_numpy_and_passes_gradcheck(graph, jit: bool) -> None:
    note(f"jit={jit}\n{graph}")
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        leaves = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in graph.leaves]
        outputs = evaluate(graph, leaves, "mt")
        for out, expected in zip(outputs, evaluate(graph, graph.leaves, "np"), strict=True):
            expected = np.asarray(expected)
            assert out.dtype == mt.float64
            assert out.shape == expected.shape, f"shape {out.shape}, NumPy's {expected.shape}"
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-9, atol=1e-12)
        gradcheck(lambda *xs: evaluate(graph, list(xs), "mt"), leaves)
        leaves32 = [mt.tensor(a, dtype=mt.float32, requires_grad=True) for a in graph.leaves]
        for out32 in evaluate(graph, leaves32, "mt"):
            assert out32.dtype == mt.float32, f"float32 leaves gave a {out32.dtype} result"
    finally:
        mt.set_jit_enabled(previous)


SECOND_ORDER = settings(FUZZ, max_examples=max(FUZZ.max_examples // 2, 1))


@SECOND_ORDER
@given(graph=graphs(), jit=st.booleans())
def test_random_graph_passes_gradgradcheck(graph, jit: bool) -> None:
    note(f"jit={jit}\n{graph}")
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        leaves = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in graph.leaves]
        gradgradcheck(lambda *xs: evaluate(graph, list(xs), "mt"), leaves)
    finally:
        mt.set_jit_enabled(previous)


@SECOND_ORDER
@given(graph=graphs(), jit=st.booleans(), seed=st.integers(0, 2**16))
def test_random_graph_forward_mode_matches_differences_and_reverse_mode(graph, jit: bool, seed: int) -> None:
    note(f"jit={jit}\n{graph}")
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        check_forward_mode(graph, seed)
    finally:
        mt.set_jit_enabled(previous)
