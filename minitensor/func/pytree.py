"""Nested containers of Tensors ("pytrees"), flattened into a list of leaves and built back.

The function transforms take and return arbitrary nests of tuples, lists and dicts
(``grad(loss)(params_dict, x)``, ``vmap(f, in_dims=(0, {"w": None}))``): each
transform flattens its arguments, works on the leaves, and rebuilds the same
structure.  A tuple, list, dict (an ``OrderedDict`` too) or namedtuple is a node;
anything else (a Tensor, a number, None) is a leaf.

>>> leaves, spec = tree_flatten(({"w": 1, "b": 2}, [3]))
>>> leaves
[1, 2, 3]
>>> tree_unflatten([10, 20, 30], spec)
({'w': 10, 'b': 20}, [30])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_LEAF = None  # the spec of a leaf


def tree_flatten(tree: Any) -> tuple[list, Any]:
    """(the leaves of ``tree`` in order, its structure for ``tree_unflatten``)."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list):
    if isinstance(tree, dict):
        return (type(tree), list(tree), [_flatten(v, leaves) for v in tree.values()])
    if isinstance(tree, (tuple, list)):
        return (type(tree), None, [_flatten(v, leaves) for v in tree])
    leaves.append(tree)
    return _LEAF


def tree_unflatten(leaves: list, spec) -> Any:
    """The structure ``spec`` (from ``tree_flatten``) with ``leaves`` in its places."""
    it = iter(leaves)
    tree = _build(spec, it)
    if next(it, it) is not it:
        raise ValueError("tree_unflatten: more leaves than the structure has places")
    return tree


def _build(spec, it):
    if spec is _LEAF:
        try:
            return next(it)
        except StopIteration:
            raise ValueError("tree_unflatten: fewer leaves than the structure has places") from None
    kind, keys, children = spec
    values = [_build(child, it) for child in children]
    if keys is not None:
        return kind(zip(keys, values))
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return kind(*values)
    return kind(values)


def tree_map(fn: Callable, tree: Any) -> Any:
    """``tree`` with ``fn`` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, tree: Any, name: str) -> list:
    """One value of ``prefix`` per leaf of ``tree``: ``prefix`` is a leaf (then it applies to the
    whole subtree) or a node of ``tree``'s structure (``vmap``'s ``in_dims``/``out_dims``)."""
    out: list = []
    _broadcast(prefix, tree, name, out)
    return out


def _broadcast(prefix, tree, name: str, out: list) -> None:
    if not isinstance(prefix, (tuple, list, dict)):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise ValueError(f"{name}: the dict {sorted(prefix)} does not match the structure of the inputs")
        for key in tree:
            _broadcast(prefix[key], tree[key], name, out)
        return
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        raise ValueError(
            f"{name}: expected {name} to match the structure of the inputs, got {prefix!r} for "
            f"{type(tree).__name__} of length {len(tree) if isinstance(tree, (tuple, list)) else 'n/a'}"
        )
    for p, t in zip(prefix, tree):
        _broadcast(p, t, name, out)
