"""Task: the engine's walk: a topological order without recursion, and accumulating gradients."""

from __future__ import annotations

import numpy as np

import minitensor as mt

from ..diagnose import gradient_check
from ..engine_adapter import backward_with, graph_of
from ._base import Check, CheckFailure, Mutant, Task
from ._helpers import expect_close, leaf

SOLUTION = '''"""Week 8: the backward pass itself.

The graph is made of nodes: ``node.parents`` are the nodes whose outputs the op
used (a node appears twice in ``parents`` for ``a * a``), ``node.is_leaf`` is True
for the tensors you differentiate with respect to, and ``node.backward(grad)``
returns one gradient per parent, given the gradient of the node's output.
"""


def topological_order(root):
    """Every node reachable from ``root``, each exactly once, each before all of its parents.

    ``root`` comes first.  Graphs can be 100,000 ops deep: use an explicit stack,
    not recursion.  Hint: a depth-first post-order (a node after its parents), reversed.
    """
    # BEGIN SOLUTION
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((p, False) for p in node.parents if p not in seen)
    return order[::-1]
    # END SOLUTION


def backpropagate(root, grad):
    """Run every node's backward once, in topological order; return {leaf node: its gradient}.

    A node's backward may run only when all its consumers have added their
    contributions to its gradient.  Hint: a dict from node to gradient so far.
    """
    # BEGIN SOLUTION
    grads = {root: grad}
    for node in topological_order(root):
        if node.is_leaf or node not in grads:
            continue
        for parent, g in zip(node.parents, node.backward(grads[node])):
            grads[parent] = grads[parent] + g if parent in grads else g
    return {node: g for node, g in grads.items() if node.is_leaf}
    # END SOLUTION
'''


def _student_grads(engine):
    """``analytic`` for gradient_check: the gradients the student's engine computes."""

    def analytic(fn, inputs, w):
        for t in inputs:
            t.grad = None
        with mt.enable_grad():
            backward_with(engine, fn(*inputs), w)
        return [np.zeros(t.shape) if t.grad is None else t.grad.numpy() for t in inputs]

    return analytic


def _square_of_tanh(x, y):
    h = x.tanh()  # one node, used twice by the product
    return h * h + y


def _diamond(x, y):
    a = x * y  # a -> sigmoid, tanh -> sum -> times x
    return (a.sigmoid() + a.tanh()) * x


def _shared(wb) -> None:
    rng, analytic = np.random.default_rng(15), _student_grads(wb.engine)
    x, y = leaf(rng, 3, 4), leaf(rng, 4)
    gradient_check(_square_of_tanh, [x, y], analytic=analytic, reference=_square_of_tanh)
    gradient_check(_diamond, [x, y], analytic=analytic, reference=_diamond)


def _order(wb) -> None:
    rng = np.random.default_rng(16)
    x, y = leaf(rng, 2, 2), leaf(rng, 2)
    for out in (_square_of_tanh(x, y).sum(), _diamond(x, y).sum()):
        order = wb.engine.topological_order(graph_of(out))
        nodes = [n.target for n in order]
        if len(set(map(id, nodes))) != len(nodes):
            raise CheckFailure("topological_order lists a node more than once: a shared node is visited twice")
        place = {id(t): i for i, t in enumerate(nodes)}
        for node in order:
            for p in node.parents:
                if place.get(id(p.target), -1) <= place[id(node.target)]:
                    raise CheckFailure(f"topological_order puts {p.name} before its consumer {node.name}")


def _deep(wb) -> None:
    x = mt.tensor([0.5, -0.3], dtype=mt.float64, requires_grad=True)
    h = x
    for _ in range(3000):  # deeper than Python's recursion limit
        h = h * 1.0
    backward_with(wb.engine, (h * h).sum())
    if x.grad is None:
        raise CheckFailure("a chain of 3000 ops: no gradient reached the input", "zero")
    expect_close(x.grad.numpy(), 2 * x.numpy(), "the gradient through a chain of 3000 ops")


TASK = Task(
    name="engine",
    title="The engine's topological walk",
    summary="order the graph without recursion, run each backward once, accumulate every contribution",
    solution=SOLUTION,
    checks=[
        Check("a valid topological order", 3, _order),
        Check("shared nodes and diamonds", 5, _shared),
        Check("a graph 3000 ops deep (no recursion)", 2, _deep),
    ],  # fmt: skip
    mutants=[
        Mutant(
            "a topological walk that visits a shared node twice",
            "        if node in seen:\n            continue\n",
            "",
            "factor",
        ),
        Mutant(
            "overwriting instead of accumulating a gradient",
            "grads[parent] = grads[parent] + g if parent in grads else g",
            "grads[parent] = g",
            "factor",
        ),
    ],
)
