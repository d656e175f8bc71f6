"""The backward pass: walk the graph in topological order, summing gradients.

Two passes, both with explicit stacks (no Python recursion, so a chain of
100,000 ops is fine):

1. ``_count_dependencies`` visits every node reachable from the output and
   counts, for each node, how many edges point at it (how many gradient
   contributions it will receive).
2. ``_run`` starts at the output.  A node's ``backward`` runs once, when its
   count reaches zero, i.e. after *all* its contributions are summed (Kahn's
   algorithm).  Each contribution is first summed back to the receiving
   input's shape (``_reduce_to_shape``: undoing broadcasting happens here and
   nowhere else).  Sums are out of place, so an array handed to two parents
   (``Add.backward`` returns the same array twice) is never modified.

Leaves (tensors created by the user with ``requires_grad=True``) receive their
gradient into ``.grad``, adding to what is there.  Unless ``retain_graph`` is
set, each node releases its saved arrays after its backward has run.

Before a node's backward runs, the versions of the tensors whose data it saved
are compared with the ones ``Function.apply`` recorded: a tensor changed in
place since then (``x += 1``, an optimizer step) raises ``RuntimeError``.
"""

from __future__ import annotations

import numpy as np

from . import _profiling
from .function import Node

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or to use saved values after they "
    "were freed). The graph's buffers are freed after .backward() or autograd.grad(); "
    "pass retain_graph=True the first time if you need to backward through it again."
)


def _count_dependencies(roots: list) -> dict:
    """id(node) -> number of edges pointing at it from nodes reachable from roots."""
    counts = {}
    seen = {id(r) for r in roots}
    stack = list(roots)
    while stack:
        node = stack.pop()
        for parent in node.parents:
            if not isinstance(parent, Node):
                continue  # None or a leaf Tensor
            key = id(parent)
            counts[key] = counts.get(key, 0) + 1
            if key not in seen:
                seen.add(key)
                stack.append(parent)
    return counts


def _needed_nodes(roots: list, wanted: set) -> set:
    """ids of the nodes whose backward ``autograd.grad`` must run: those from
    which a wanted tensor can be reached.  The rest of the graph is left alone
    (it may even have been freed by an earlier backward)."""
    order = []  # post-order: every node comes after all of its parents
    seen = set()
    stack = [(r, False) for r in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((p, False) for p in node.parents if isinstance(p, Node) and id(p) not in seen)
    needed = set()
    for node in order:
        if any(p is not None and (id(p) in wanted or id(p) in needed) for p in node.parents):
            needed.add(id(node))
    return needed


def _reduce_to_shape(grad: np.ndarray, shape: tuple, dtype, node: Node) -> np.ndarray:
    """Sum a broadcast gradient back to ``shape`` and cast it to ``dtype``.

    This is the one place where broadcasting is undone: ops compute gradients
    in the broadcast shape of their output and never think about it.
    """
    if grad.shape != shape:
        lead = grad.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, size in enumerate(shape) if size == 1 and grad.shape[lead + i] != 1
        )
        grad = grad.sum(axis=axes).reshape(shape) if grad.size != 0 else np.zeros(shape, grad.dtype)
        if grad.shape != shape:  # pragma: no cover - a bug in an op's backward
            raise RuntimeError(f"{node.name()} returned a gradient of shape {grad.shape} for an input of shape {shape}")
    if grad.dtype != dtype:
        grad = grad.astype(dtype)
    return grad


def _accumulate_leaf(leaf, grad: np.ndarray) -> None:
    """leaf.grad += grad, keeping leaf.grad an array of its own."""
    if leaf.grad is None:
        leaf.grad = Tensor._make(np.array(grad, dtype=leaf.dtype, copy=True), False, None)
    else:
        leaf.grad._data = np.asarray(leaf.grad._data + grad)  # 0-d + 0-d gives a NumPy scalar


def run_backward(roots: list, root_grads: list, retain_graph: bool, capture: list | None = None) -> list | None:
    """Back-propagate ``root_grads`` from the tensors ``roots``.

    Args:
        roots: output Tensors (each with a grad_fn, or a leaf requiring grad).
        root_grads: arrays, one per root, shaped like the root.
        retain_graph: keep saved arrays so the graph can be walked again.
        capture: when given (``autograd.grad``), a list of Tensors whose
            gradients are returned instead of accumulated into leaves' ``.grad``.

    Returns:
        With ``capture``: a list of arrays (or None where no gradient arrived).
    """
    grads = {}  # id(node or leaf) -> summed gradient so far
    wanted = None if capture is None else {id(t.grad_fn or t) for t in capture}
    captured = {}
    nodes = []
    for root, grad in zip(roots, root_grads):
        target = root.grad_fn or root
        key = id(target)
        grads[key] = grad if key not in grads else grads[key] + grad
        if root.grad_fn is None:
            _deliver_leaf(root, grads.pop(key), wanted, captured)
        elif all(n is not target for n in nodes):
            nodes.append(target)
    counts = _count_dependencies(nodes)
    needed = None if wanted is None else _needed_nodes(nodes, wanted)
    ready = [n for n in nodes if counts.get(id(n), 0) == 0]
    while ready:
        node = ready.pop()
        grad = grads.pop(id(node), None)
        if grad is not None:
            if wanted is not None and id(node) in wanted:
                captured[id(node)] = grad
            if needed is None or id(node) in needed:
                _propagate(node, grad, grads, wanted, captured, retain_graph)
        for parent in node.parents:
            if isinstance(parent, Node):
                key = id(parent)
                counts[key] -= 1
                if counts[key] == 0:
                    ready.append(parent)
    if capture is not None:
        return [captured.get(id(t.grad_fn or t)) for t in capture]
    return None


def _propagate(node: Node, grad, grads: dict, wanted, captured: dict, retain_graph: bool) -> None:
    """Run one node's backward and hand each input its share of the gradient."""
    if node.freed:
        raise RuntimeError(_FREED_MESSAGE)
    for position, counter, version, shape in node.saved_versions:
        if counter.value != version:
            raise RuntimeError(_modified_message(node, position, counter.value, version, shape))
    if _profiling.active is None:
        in_grads = node.function.backward(node, grad)
    else:  # mt.profiler is recording: time this backward
        in_grads = _profiling.active.time(node.name(), "backward", node.function.backward, node, grad)
    if not isinstance(in_grads, tuple):
        in_grads = (in_grads,)
    if not retain_graph:
        node.release()
    for parent, g in zip(node.parents, in_grads):
        if parent is None or g is None:
            continue
        if type(g) is not np.ndarray:
            g = np.asarray(g)
        shape, dtype = parent.shape, parent.dtype
        if g.shape != shape or g.dtype != dtype:
            g = _reduce_to_shape(g, shape, dtype, node)
        if isinstance(parent, Node):
            key = id(parent)
            grads[key] = g if key not in grads else grads[key] + g
        else:
            _deliver_leaf(parent, g, wanted, captured)


def _modified_message(node: Node, position: int, now: int, saved: int, shape: tuple) -> str:
    """The error for a saved tensor that was modified in place before ``node``'s backward ran."""
    what = "its output" if position < 0 else f"input {position}"
    return (
        f"{node.name()}: {what} (a tensor of shape {shape}) was modified in place after it was saved "
        f"for backward (version {now}, expected {saved}), so its gradient would be wrong. "
        "Use an out-of-place op (x = x + 1, not x += 1), or make the change after backward() "
        "(optimizer.step() changes the parameters in place)."
    )


def _deliver_leaf(leaf, grad, wanted, captured: dict) -> None:
    if wanted is None:
        _accumulate_leaf(leaf, grad)
    elif id(leaf) in wanted:
        key = id(leaf)
        captured[key] = grad if key not in captured else captured[key] + grad


from ..tensor import Tensor  # noqa: E402  (tensor.py imports this module)
