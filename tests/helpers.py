"""Helpers shared by the test files (imported as ``from helpers import ...``; tests/ is on the path)."""

from __future__ import annotations

import numpy as np


def assert_same_numbers(actual, expected, err_msg: str = "") -> None:
    """Two paths that compute the same thing in different ways (a fused node and the composite it
    replaces): equal up to rounding, 1e-10 relative in float64 and 2e-5 in float32; None matches None."""
    if actual is None or expected is None:
        assert actual is None and expected is None, err_msg
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    tight = actual.dtype == np.float64
    np.testing.assert_allclose(actual, expected, rtol=1e-10 if tight else 2e-5, atol=1e-12 if tight else 2e-6,
                               err_msg=err_msg)  # fmt: skip


def as_numpy_tree(tree):
    """A nest (tuples, lists, dicts) of minitensor or PyTorch tensors as the same nest of arrays."""
    if isinstance(tree, (tuple, list)):
        return [as_numpy_tree(t) for t in tree]
    if isinstance(tree, dict):
        return {k: as_numpy_tree(v) for k, v in tree.items()}
    return tree.detach().numpy() if hasattr(tree, "detach") else tree


def assert_trees_close(ours, theirs, rtol: float = 1e-12, atol: float = 1e-14) -> None:
    """Two nests of tensors (minitensor's and PyTorch's) of the same structure and values."""
    a, b = as_numpy_tree(ours), as_numpy_tree(theirs)
    if isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in b:
            assert_trees_close(a[k], b[k], rtol, atol)
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_trees_close(u, v, rtol, atol)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
