"""The student's engine on minitensor's real graph: nodes as the workbook sees them.

A ``GraphNode`` wraps one node of minitensor's graph (an op's ``grad_fn``) or one
leaf Tensor.  The student sees ``node.parents`` (the nodes whose outputs the op
used), ``node.is_leaf`` and ``node.backward(grad) -> one gradient per parent``
(already summed back to each parent's shape).  ``backward_with(engine, loss)``
runs the student's ``backpropagate`` and adds the leaves' gradients into ``.grad``.
Each minitensor node gets exactly one GraphNode, so identity (``in``, sets, dicts)
works as the student expects.
"""

from __future__ import annotations

import numpy as np

import minitensor as mt
from minitensor.autograd.engine import _reduce_to_shape
from minitensor.autograd.function import Node


class GraphNode:
    """One node of the graph: an op (with parents and a backward) or a leaf."""

    def __init__(self, target) -> None:
        self.target = target  # a minitensor Node, or a leaf Tensor
        self.is_leaf = not isinstance(target, Node)
        self.name = "Leaf" if self.is_leaf else target.name()
        self.parents: tuple = ()  # filled in by graph_of
        self._slots: list = []  # the op's input position of each parent

    def backward(self, grad: np.ndarray) -> tuple:
        """The gradients of this op's parents (in ``parents`` order) from the gradient of its output."""
        grads = self.target.function.backward(self.target, np.asarray(grad))
        grads = grads if isinstance(grads, tuple) else (grads,)
        return tuple(
            _reduce_to_shape(np.asarray(grads[i]), tuple(p.target.shape), p.target.dtype, self.target, i)
            for i, p in zip(self._slots, self.parents)
        )

    def __repr__(self) -> str:
        return f"<GraphNode {self.name}>"


def graph_of(tensor: mt.Tensor) -> GraphNode:
    """The GraphNode of ``tensor``'s grad_fn (or of the leaf itself), with every node above it."""
    root = tensor.grad_fn or tensor
    made = {id(root): GraphNode(root)}
    stack = [root]
    while stack:  # (no recursion: graphs may be deep)
        target = stack.pop()
        if not isinstance(target, Node):
            continue
        node = made[id(target)]
        for i, p in enumerate(target.parents):
            if p is None:
                continue
            if id(p) not in made:
                made[id(p)] = GraphNode(p)
                stack.append(p)
            node._slots.append(i)
        node.parents = tuple(made[id(target.parents[i])] for i in node._slots)
    return made[id(root)]


def all_nodes(root: GraphNode) -> list:
    """Every node reachable from ``root`` (``root`` first), each once, in an order fixed by the graph alone.

    The grader builds the same graph as the child process that runs the student's
    engine, so a node's place in this list names it in both.
    """
    nodes, seen, stack = [], {id(root)}, [root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    return nodes


def backward_with(engine, loss: mt.Tensor, grad=None) -> None:
    """Back-propagate from ``loss`` with the student's engine; leaves' ``.grad`` accumulate."""
    root = graph_of(loss)
    grad = np.ones(loss.shape, loss.dtype) if grad is None else np.asarray(grad, dtype=loss.dtype)
    for node, g in engine.backpropagate(root, grad).items():
        if node.is_leaf:
            leaf, g = node.target, np.array(g, dtype=node.target.dtype)
            leaf.grad = mt.from_numpy(g) if leaf.grad is None else mt.from_numpy(leaf.grad.numpy() + g)
