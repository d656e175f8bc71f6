"""Random op graphs for the fuzz tests: a generator, an evaluator, a printer (the ops: ``graph_ops.py`` and
``graph_ops_math.py``).

A ``Graph`` is a small program: some float64 leaves, then 3-8 steps, each one op
applied to earlier values (leaves or step results)::

    x0 = leaf((2, 1, 3))
    x1 = leaf((3,))
    v2 = x0 + x1                                  # (2, 1, 3)
    v3 = v2.softmax(dim=-1)
    v4 = v3.sum(dim=(0, 2), keepdim=True)         # (1, 1, 1)

``evaluate(graph, leaves, lib)`` runs the same program on minitensor Tensors
(``lib="mt"``) or on NumPy arrays (``lib="np"``, the reference), so the two
forward passes can be compared, and ``gradcheck`` can re-run the minitensor
version on perturbed leaves.  Every step's op suits its operands (``Op.ok``):
the graphs are smooth near their inputs and their values moderate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from graph_ops import BINARY, MATMUL, MAX_ABS, MAX_DIMS, MAX_SIZE, TANH, UNARY, Op
from graph_ops_math import MATH_BINARY, MATH_UNARY
from hypothesis import strategies as st


@dataclass
class Step:
    op: Op
    args: tuple  # indices into the graph's values (leaves and step results, in order)
    params: dict


class Graph:
    """Leaves (float64 arrays), steps, and the value index of each leaf (a matmul may add one mid-way).

    (A plain class, not a dataclass, so that hypothesis prints a failing graph through ``__repr__``.)
    """

    def __init__(self) -> None:
        self.leaves: list = []
        self.steps: list = []
        self.leaf_at: list = []

    def outputs(self) -> list:
        """The value indices of the step results that no later step uses."""
        used = {a for step in self.steps for a in step.args}
        return [i for i in range(len(self.leaves) + len(self.steps)) if i not in self.leaf_at and i not in used]

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        return "Graph(\n" + str(self) + "\n)"

    def __str__(self) -> str:
        """The graph as a program, one line per value."""
        lines, names = [], []
        leaves, steps = iter(self.leaves), iter(self.steps)
        for position in range(len(self.leaves) + len(self.steps)):
            if position in self.leaf_at:
                names.append(f"x{position}")
                lines.append(f"x{position} = leaf({next(leaves).shape})")
            else:
                step = next(steps)
                names.append(f"v{position}")
                lines.append(f"v{position} = {step.op.text(*(names[a] for a in step.args), **step.params)}")
        lines.append(f"outputs: {', '.join(names[i] for i in self.outputs())}")
        return "\n".join(lines)


# ------------------------------------------------------------------ generation
@st.composite
def graphs(draw, min_ops: int = 3, max_ops: int = 8) -> Graph:
    """A random graph of ``min_ops``-``max_ops`` ops over 1-3 broadcastable float64 leaves
    (every op kind is differentiable twice and more: the same graphs serve second-order checks)."""
    unary = UNARY + MATH_UNARY
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # (Hypothesis favours the first item of a list: it is the common case.)
    base = tuple(draw(st.sampled_from([2, 3, 1])) for _ in range(draw(st.sampled_from([2, 3, 1]))))
    graph = Graph()
    values = []

    def add_leaf(shape: tuple) -> None:
        graph.leaf_at.append(len(values))
        graph.leaves.append(rng.standard_normal(shape))
        values.append(graph.leaves[-1])

    for _ in range(draw(st.integers(1, 3))):
        drop = draw(st.sampled_from([0, 0, 0, 1, len(base)]))  # leading dims left out (sometimes all)
        add_leaf(tuple(1 if draw(st.sampled_from([False, False, True])) else s for s in base[drop:]))
    for _ in range(draw(st.integers(min_ops, max_ops))):
        if draw(st.booleans()):
            step = _binary_step(draw, values, add_leaf)
        else:
            step = _unary_step(draw, values, unary)
        if step is None:  # nothing suitable, or the values would grow too big: tanh always suits
            step = Step(TANH, (len(values) - 1,), {})
        graph.steps.append(step)
        values.append(step.op.np(*(values[a] for a in step.args), **step.params))
    return graph


def _operand(draw, values: list) -> int:
    """An earlier value, the latest one half of the time (so that chains grow deep)."""
    return len(values) - 1 if draw(st.booleans()) else draw(st.integers(0, len(values) - 1))


def _unary_step(draw, values: list, unary: list) -> Step | None:
    a = _operand(draw, values)
    op = draw(st.sampled_from([op for op in unary if op.ok(values[a])]))
    return _checked(Step(op, (a,), op.params(draw, values[a])), values)


def _binary_step(draw, values: list, add_leaf: Callable) -> Step | None:
    a = _operand(draw, values)
    if values[a].ndim >= 1 and draw(st.integers(0, 3)) == 0:  # a matmul with a fresh weight leaf
        add_leaf((values[a].shape[-1], draw(st.integers(1, 3))))
        return _checked(Step(MATMUL, (a, len(values) - 1), {}), values)
    pairs = [(op, b) for op in BINARY + MATH_BINARY for b in range(len(values)) if op.ok(values[a], values[b])]
    if not pairs:
        return None
    op, b = draw(st.sampled_from(pairs))
    return _checked(Step(op, (a, b), op.params(draw, values[a], values[b])), values)


def _checked(step: Step, values: list) -> Step | None:
    """``step`` if its result is finite, moderate and small enough; else None."""
    with np.errstate(all="ignore"):
        out = np.asarray(step.op.np(*(values[a] for a in step.args), **step.params))
    fits = out.size <= MAX_SIZE and out.ndim <= MAX_DIMS and np.all(np.abs(out) < MAX_ABS)
    return step if fits else None


# ------------------------------------------------------------------ evaluation
def evaluate(graph: Graph, leaves: list, lib: str) -> tuple:
    """Run ``graph`` on ``leaves`` (Tensors for lib="mt", arrays for lib="np").

    Returns the graph's outputs: every step result that no later step uses
    (so every step counts), in order.
    """
    values = []
    leaf, steps = iter(leaves), iter(graph.steps)
    for position in range(len(graph.leaves) + len(graph.steps)):
        if position in graph.leaf_at:
            values.append(next(leaf))
        else:
            step = next(steps)
            fn = step.op.mt if lib == "mt" else step.op.np
            values.append(fn(*(values[a] for a in step.args), **step.params))
    return tuple(values[i] for i in graph.outputs())
