"""Task: the engine's walk: a topological order without recursion, and accumulating gradients."""

from __future__ import annotations

import numpy as np

import minitensor as mt

from ..engine_adapter import all_nodes, graph_of
from ._base import Check, CheckFailure, Mutant, Task
from ._helpers import check_program, leaf, leaves, malformed

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


def _square_of_tanh(x, y):
    h = x.tanh()  # one node, used twice by the product
    return h * h + y


def _diamond(x, y):
    a = x * y  # a -> sigmoid, tanh -> sum -> times x
    return (a.sigmoid() + a.tanh()) * x


def _chain(x):
    h = x
    for _ in range(3000):  # deeper than Python's recursion limit
        h = h * 1.0
    return (h * h).sum()


# minitensor's own ops (the task is the engine, not the rules): ``ops`` is not used.
PROGRAMS = {
    "h * h + y, h = tanh(x)": lambda ops, x, y: _square_of_tanh(x, y),
    "a diamond": lambda ops, x, y: _diamond(x, y),
    "a chain of 3000 ops": lambda ops, x: _chain(x),
}


def _order_of(wb, program: str, inputs: list) -> list:
    """(In the student's process) their topological order of the program's summed graph, as places in ``all_nodes``."""
    root = graph_of(PROGRAMS[program](None, *leaves(inputs)).sum())
    place = {id(node): i for i, node in enumerate(all_nodes(root))}
    return [place.get(id(node), -1) for node in wb.engine.topological_order(root)]


def _order(student) -> None:
    rng = np.random.default_rng(16)
    x, y = leaf(rng, 2, 2), leaf(rng, 2)
    for program in ("h * h + y, h = tanh(x)", "a diamond"):
        nodes = all_nodes(graph_of(PROGRAMS[program](None, x, y).sum()))
        order = student.probe("order", program=program, inputs=[x.numpy(), y.numpy()])
        if not (isinstance(order, list) and all(type(i) is int for i in order)):
            raise malformed("topological_order: not a list of nodes")
        if not all(0 <= i < len(nodes) for i in order):
            raise CheckFailure("topological_order lists something that is not a node of the graph")
        if len(set(order)) != len(order):
            raise CheckFailure("topological_order lists a node more than once: a shared node is visited twice")
        if len(order) != len(nodes):
            raise CheckFailure(f"topological_order lists {len(order)} of the graph's {len(nodes)} nodes")
        place = {node: k for k, node in enumerate(order)}
        index = {id(node): i for i, node in enumerate(nodes)}
        for i, node in enumerate(nodes):
            for parent in node.parents:
                if place[index[id(parent)]] <= place[i]:
                    raise CheckFailure(f"topological_order puts {parent.name} before its consumer {node.name}")


def _shared(student) -> None:
    rng = np.random.default_rng(15)
    x, y = leaf(rng, 3, 4), leaf(rng, 4)
    check_program(student, "h * h + y, h = tanh(x)", [x, y], engine=True)
    check_program(student, "a diamond", [x, y], engine=True)


def _deep(student) -> None:
    x = mt.tensor([0.5, -0.3], dtype=mt.float64, requires_grad=True)
    check_program(student, "a chain of 3000 ops", [x], engine=True)


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
    programs=PROGRAMS,
    probes={"order": _order_of},
)
