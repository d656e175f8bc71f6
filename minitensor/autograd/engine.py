"""The backward pass: walk the graph in topological order, summing gradients.

Two passes, both with explicit stacks (no Python recursion, so a chain of
100,000 ops is fine):

1. ``_count_dependencies`` visits every node reachable from the output and
   counts, for each node, how many edges point at it (how many gradient
   contributions it will receive).
2. ``run_backward`` starts at the output.  A node's ``backward`` runs once, when its
   count reaches zero, i.e. after *all* its contributions are summed (Kahn's
   algorithm).  Each contribution is first summed back to the receiving
   input's shape (``_reduce_to_shape``: undoing broadcasting happens here and
   nowhere else).  Sums are out of place, so an array handed to two parents
   (``Add.backward`` returns the same array twice) is never modified.

Leaves (tensors created by the user with ``requires_grad=True``) receive the
sum of their contributions into ``.grad`` at the end, adding to what is there
(their hooks, and a non-leaf's, see that sum: ``run_hooks``).  Unless
``retain_graph`` is set, each node releases its saved arrays after its backward
has run.

With ``create_graph=True`` every gradient is a Tensor and each backward runs on
Tensors with grad mode on (``_graph_backward``), so the pass itself is recorded:
the gradients it leaves can be differentiated again.  Inside a forward-mode level
whose tensors carry tangents, the pass runs on Tensors too (grad mode off), so the
gradients carry tangents (``dual.py``: forward-over-reverse).

Before a node's backward runs, the versions of the tensors whose data it saved
are compared with the ones ``Function.apply`` recorded: a tensor changed in
place since then (``x += 1``, an optimizer step) raises ``RuntimeError``.

The array work this file asks for (summing a broadcast gradient fast, whether
a leaf may keep a gradient without a copy, the thread count of a pass) is the
backend's, by name (``minitensor/backend.py``): this file is the chain rule.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..tensor import Tensor
from . import _profiling, anomaly, batching, dual, graph, saved
from .composite import OnceDifferentiable
from .function import Node
from .grad_mode import building_graph_backward, enable_grad, is_grad_enabled, no_grad
from .saved import FREED, GraphContext


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
        stack.extend([(p, False) for p in node.parents if isinstance(p, Node) and id(p) not in seen])
    needed = set()
    for node in order:
        for p in node.parents:  # (a loop: any() over a generator costs a frame per parent)
            if p is not None and (id(p) in wanted or id(p) in needed):
                needed.add(id(node))
                break
    return needed


def _reduce_to_shape(grad, shape: tuple, dtype, node: Node | None = None, index: int = 0):
    """Sum a broadcast gradient back to ``shape`` and cast it to ``dtype``.

    This is the one place where broadcasting is undone: ops compute gradients
    in the broadcast shape of their output and never think about it.  ``grad``
    is an array, or a Tensor with ``create_graph=True`` (then the sum is an op too).
    """
    if grad.shape != shape:
        lead = grad.ndim - len(shape)
        if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, grad.shape[lead:])):
            raise RuntimeError(
                f"{node.name() if node else 'an op'}.backward returned a gradient of shape {grad.shape} "
                f"for input {index}, "
                f"whose shape is {shape} (a gradient must have the input's shape, or a shape it broadcasts to)"
            )
        if isinstance(grad, np.ndarray):
            grad = backend.sum_to_shape(grad, shape)
        else:  # create_graph: a Tensor, and the sum an op of the graph
            stretched = tuple(lead + i for i, size in enumerate(shape) if size == 1 and grad.shape[lead + i] != 1)
            grad = grad.sum(dim=tuple(range(lead)) + stretched).reshape(shape)
    if grad.dtype != dtype:
        grad = grad.astype(dtype) if isinstance(grad, np.ndarray) else grad.to(dtype)
    return grad


def _accumulate_leaf(leaf, grad) -> None:
    """leaf.grad += grad, keeping leaf.grad an array of its own (a Tensor in a graph with create_graph).

    A first gradient is copied unless it is an array nobody else can reach (``backend.owned``: its
    holders are this call's ``grad`` and ``_deliver_leaf``'s); then leaf.grad takes it as it is, as
    PyTorch's AccumulateGrad does (a copy of a parameter-sized array per leaf and backward saved).
    """
    if isinstance(grad, Tensor):  # create_graph: the gradient is a Tensor, possibly in a graph
        leaf.grad = grad if leaf.grad is None else leaf.grad + grad
    elif leaf.grad is None:
        if not backend.owned(grad, leaf._data, holders=2):
            grad = backend.copy(grad, leaf.dtype)
        leaf.grad = Tensor._make(grad, False, None)
    else:
        leaf.grad._data = np.asarray(leaf.grad._data + grad)  # 0-d + 0-d gives a NumPy scalar


def _seed_grad(t: Tensor, gradient, name: str, create_graph: bool = False):
    """The starting gradient of a backward pass from ``t`` (a Tensor with ``create_graph``)."""
    if gradient is None:
        if t._data.size != 1:
            raise RuntimeError(
                f"backward: grad can be implicitly created only for a single-element output, got shape {t.shape}; "
                f"pass {name}= with the same shape"
            )
        grad = np.ones(t.shape, dtype=t.dtype)
    elif isinstance(gradient, batching.BatchedTensor):  # vmap over grad_outputs: one backward for the batch
        if gradient.shape != t.shape:
            raise ValueError(f"backward: {name} must have the output's shape {t.shape}, got {gradient.shape}")
        return gradient if gradient.dtype == t.dtype else gradient.to(t.dtype)
    elif create_graph and isinstance(gradient, Tensor):
        if gradient.shape != t.shape:
            raise ValueError(f"backward: {name} must have the output's shape {t.shape}, got {gradient.shape}")
        return gradient if gradient.dtype == t.dtype else gradient.to(t.dtype)
    else:
        try:
            grad = np.asarray(gradient._data if isinstance(gradient, Tensor) else gradient, dtype=t.dtype)
        except (TypeError, ValueError):
            kind = type(gradient).__name__
            raise TypeError(f"backward: {name} must be a Tensor or an array of numbers, got {kind}") from None
        if grad.shape != t.shape:
            raise ValueError(f"backward: {name} must have the output's shape {t.shape}, got {grad.shape}")
    return Tensor._make(grad, False, None) if create_graph else grad


def tensor_backward(t: Tensor, gradient, retain_graph: bool | None, create_graph: bool, inputs) -> None:
    """``Tensor.backward``'s work (tensor.py documents the arguments): seed, walk, and with ``inputs``
    accumulate only into those tensors' ``.grad``."""
    if not t._requires_grad:
        raise RuntimeError("backward: this tensor does not require grad and has no grad_fn")
    retain_graph = create_graph if retain_graph is None else retain_graph
    grad = _seed_grad(t, gradient, "gradient", create_graph)
    if inputs is None:
        run_backward([t], [grad], retain_graph, create_graph=create_graph)
        return
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    found = run_backward([t], [grad], retain_graph, capture=inputs, create_graph=create_graph)
    for x, g in zip(inputs, found):
        if g is not None:
            _accumulate_leaf(x, g)


Tensor._backward_pass = staticmethod(tensor_backward)  # (what Tensor.backward calls)


def run_backward(
    roots: list, root_grads: list, retain_graph: bool, capture: list | None = None, create_graph: bool = False
) -> list | None:
    """Back-propagate ``root_grads`` from the tensors ``roots``.

    Args:
        roots: output Tensors (each with a grad_fn, or a leaf requiring grad).
        root_grads: arrays, one per root, shaped like the root (Tensors with ``create_graph``).
        retain_graph: keep saved arrays so the graph can be walked again.
        capture: when given (``autograd.grad``), a list of Tensors whose
            gradients are returned instead of accumulated into leaves' ``.grad``.
        create_graph: run each backward on Tensors, recording it, so the
            gradients are Tensors in a graph (differentiable again).

    Returns:
        With ``capture``: a list of arrays or Tensors (or None where no gradient arrived).
    """
    if create_graph and not is_grad_enabled():  # the gradients' own graph is recorded
        with enable_grad():
            return _walk(roots, root_grads, retain_graph, capture, tensors=True)
    if batching.levels and batching.batched(root_grads):  # vmap of a vjp: the backward runs on the batch
        with enable_grad() if create_graph else no_grad():
            return _walk(roots, root_grads, retain_graph, capture, tensors=True)
    if not create_graph and dual.levels and dual.in_use():  # forward mode: the gradients carry tangents
        root_grads = [g if isinstance(g, Tensor) else Tensor._make(g, False, None) for g in root_grads]
        with no_grad():
            return _walk(roots, root_grads, retain_graph, capture, tensors=True)
    return _walk(roots, root_grads, retain_graph, capture, tensors=create_graph)


def _walk(roots: list, root_grads: list, retain_graph: bool, capture: list | None, tensors: bool) -> list | None:
    """``run_backward``'s walk; ``tensors``: each backward runs on Tensors (recorded when grad mode is on)."""
    backend.adapt_threads()  # (BLAS and the parallel kernels take the cores free now)
    grads = {}  # id(node or leaf) -> summed gradient so far
    leaves = {}  # id(leaf) -> leaf: leaves get their summed gradient at the end
    wanted = None if capture is None else {id(t.grad_fn or t) for t in capture}
    captured = {}
    nodes = []
    for root, grad in zip(roots, root_grads):
        target = root.grad_fn or root
        key = id(target)
        grads[key] = grad if key not in grads else grads[key] + grad
        if root.grad_fn is None:
            leaves[key] = root
        elif target not in nodes:  # (nodes compare by identity)
            nodes.append(target)
    counts = _count_dependencies(nodes)
    needed = None if wanted is None else _needed_nodes(nodes, wanted)
    ready = [n for n in nodes if counts.get(id(n), 0) == 0]
    while ready:
        node = ready.pop()
        grad = grads.pop(id(node), None)
        if grad is not None:
            if needed is None:  # backward(): every node runs
                if node.tensor_hooks is not None:
                    grad = run_hooks(node.tensor_hooks, grad)
                _propagate(node, grad, grads, leaves, retain_graph, tensors)
            else:  # autograd.grad: only the nodes on a path to the wanted tensors
                _visit_for_grad(node, grad, grads, leaves, retain_graph, tensors, needed, wanted, captured)
        for parent in node.parents:
            if isinstance(parent, Node):
                key = id(parent)
                counts[key] -= 1
                if counts[key] == 0:
                    ready.append(parent)
    grad = None  # (the last node's gradient, which it may have passed to a leaf: held here, it would be copied)
    for key, leaf in leaves.items():  # each leaf once, with the sum of its contributions (hooks see the sum)
        _deliver_leaf(leaf, grads.pop(key), wanted, captured)
    if capture is not None:
        return [captured.get(id(t.grad_fn or t)) for t in capture]
    return None


def _visit_for_grad(node, grad, grads, leaves, retain_graph, create_graph, needed, wanted, captured) -> None:
    """One node in ``autograd.grad``: capture a wanted gradient, propagate only along the needed paths."""
    on_path = id(node) in needed
    is_wanted = id(node) in wanted
    if node.tensor_hooks is not None and (on_path or is_wanted):
        grad = run_hooks(node.tensor_hooks, grad)
    if is_wanted:
        captured[id(node)] = grad
    if on_path:
        _propagate(node, grad, grads, leaves, retain_graph, create_graph)


def _propagate(node: Node, grad, grads: dict, leaves: dict, retain_graph: bool, create_graph: bool) -> None:
    """Run one node's backward and hand each input its share of the gradient."""
    if node.freed:
        raise RuntimeError(FREED)
    for position, counter, version, shape in node.saved_versions:
        if counter.value != version:
            raise RuntimeError(_modified_message(node, position, counter.value, version, shape))
    if node.packed is not None:  # saved_tensors_hooks packed what forward saved: unpack it
        node.saved_tensors = saved.unpack(node)
    hooks = node.node_hooks
    if hooks is not None and hooks[0]:
        grad = graph.run_prehooks(hooks[0], grad, create_graph)
    if type(grad) is np.ndarray and grad.ndim > 1 and not grad.flags.c_contiguous:
        grad = _in_order_of_saved(node, grad)
    if create_graph:
        in_grads = _graph_backward(node, grad)
    elif _profiling.active is None:
        in_grads = node.function.backward(node, grad)
    else:  # mt.profiler is recording: time this backward
        in_grads = _profiling.active.time(node.name(), "backward", node.function.backward, node, grad)
    if type(in_grads) is not tuple:
        in_grads = (in_grads,)
    if hooks is not None and hooks[1]:
        in_grads = graph.run_node_hooks(hooks[1], in_grads, grad, create_graph)
    if anomaly.enabled:
        anomaly.check_gradients(node, in_grads)
    parents = node.parents
    if len(in_grads) != len(parents):
        raise RuntimeError(
            f"{node.function.__name__}.backward returned {len(in_grads)} gradient(s), expected "
            f"{len(parents)} (one per positional input of forward, None for inputs that need none)"
        )
    if not retain_graph and (node.saved_tensors or node.packed is not None):  # (what release frees)
        node.release()
    for index, (parent, g) in enumerate(zip(parents, in_grads)):
        if parent is None or g is None:
            continue
        if create_graph:  # every gradient is a Tensor (a fused op given an array would take its kernel path)
            if not isinstance(g, Tensor):
                g = Tensor._make(np.asarray(g, dtype=node.dtype), False, None)
        elif type(g) is not np.ndarray:
            g = _as_array(g, node)
        key = id(parent)
        if isinstance(parent, Node):
            shape, dtype = parent.shape, parent.dtype
        else:  # a leaf Tensor: it gets its summed gradient at the end
            leaves[key] = parent
            shape, dtype = parent._data.shape, parent._data.dtype
        if g.shape != shape or (g.dtype is not dtype and g.dtype != dtype):  # (dtypes are mostly one object)
            g = _reduce_to_shape(g, shape, dtype, node, index)
        previous = grads.get(key)
        grads[key] = g if previous is None else previous + g


def _in_order_of_saved(node: Node, grad: np.ndarray) -> np.ndarray:
    """A gradient stored transposed (its last two axes swapped, as ``x.mT``'s backward makes it)
    that meets a saved array of its own shape in C order, copied to C order first (one
    ``backend.contiguous``): NumPy's ufuncs over the two layouts at once run 5-15x slower than over
    one (acos's backward on 256 x 512: 549 µs, 99 after the 20 µs copy).  Views and products (nothing
    saved of that shape) take it as it is."""
    if not grad.swapaxes(-1, -2).flags.c_contiguous:
        return grad
    for kept in node.saved_tensors:
        if type(kept) is np.ndarray and kept.shape == grad.shape and kept.flags.c_contiguous:
            return backend.contiguous(grad)
    return grad


def _as_array(g, node: Node) -> np.ndarray:
    if isinstance(g, Tensor):
        return g._data
    try:
        return np.asarray(g, dtype=node.dtype)
    except (TypeError, ValueError):
        raise TypeError(
            f"{node.function.__name__}.backward returned a {type(g).__name__} as a gradient; "
            "expected a NumPy array or None"
        ) from None


def _graph_backward(node: Node, grad) -> tuple:
    """One node's backward with ``create_graph=True``: on Tensors, recorded as a graph."""
    function = node.function
    record = is_grad_enabled()  # (off: a backward inside a forward-mode level, for the tangents only)
    if function.differentiable_backward:
        with building_graph_backward():
            in_grads = function.backward(GraphContext(node), grad)
        if function.on_arrays:
            return in_grads
        # A user's backward that left Tensor ops (an array among its results) is a dead end too.
        in_grads = in_grads if isinstance(in_grads, tuple) else (in_grads,)
        if not any(isinstance(g, np.ndarray) for g in in_grads):
            return in_grads
    else:  # A backward on arrays: its result is a dead end, marked so that using it raises.
        in_grads = function.backward(node, grad._data)
        in_grads = in_grads if isinstance(in_grads, tuple) else (in_grads,)
    if not record:
        return in_grads
    anchors = [p if isinstance(p, Tensor) else Tensor._make(_EMPTY, True, p) for p in node.parents if p is not None]
    with enable_grad():
        return tuple(
            g
            if g is None or isinstance(g, Tensor)
            else OnceDifferentiable.apply(g, grad, *anchors, name=function.__name__)
            for g in in_grads
        )


_EMPTY = np.zeros(0)


def run_hooks(hooks: list, grad):
    """Call the tensor's hooks in registration order; a hook may return a replacement gradient.

    A hook gets the gradient as a Tensor (outside the graph in first-order backward).  As in
    PyTorch, the hook of ``retain_grad`` runs last, so ``.grad`` holds what the others made of it."""
    for hook in sorted(hooks, key=lambda h: getattr(h, "runs_last", False)):
        as_tensor = grad if isinstance(grad, Tensor) else Tensor._make(grad, False, None)
        result = hook(as_tensor)
        if result is not None:
            if not isinstance(result, Tensor) or result.shape != as_tensor.shape:
                raise RuntimeError(
                    f"a tensor hook must return None or a Tensor of the gradient's shape {as_tensor.shape}, "
                    f"got {type(result).__name__} {getattr(result, 'shape', '')}"
                )
            grad = result if isinstance(grad, Tensor) else result._data
    return grad


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
    if leaf._hooks is not None and (wanted is None or id(leaf) in wanted):
        grad = run_hooks(leaf._hooks, grad)
    if wanted is None:
        _accumulate_leaf(leaf, grad)
    elif id(leaf) in wanted:
        key = id(leaf)
        captured[key] = grad if key not in captured else captured[key] + grad
