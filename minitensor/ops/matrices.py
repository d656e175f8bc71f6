"""Matrix pieces for the linear-algebra backward formulas, each working on arrays and Tensors alike.

A backward formula of ``ops/solve.py`` or ``ops/decompositions.py`` runs on arrays for a first-order
gradient and on Tensors with ``create_graph=True`` (``autograd/function.py``); these helpers are
written with operators, the NumPy functions a Tensor answers (``np.swapaxes``, ``np.sum``,
``np.where``) and ``Op.call``, so the same line serves both:

- ``mT(x)``: the transpose of the last two dims (``x.mT``);
- ``tri(x, upper, k)``: the lower (upper) triangle on and below (above) diagonal ``k``;
- ``eye(n, like)``: the identity in the dtype of ``like`` (a constant array);
- ``diag_embed(v)``: ``v`` (..., n) on the diagonal of (..., n, n) zeros; ``diagonal(x)``: the
  main diagonal of (..., n, n) as (..., n);
- ``values(x)``: the numbers of x (its array), for tests that decide a formula and stay constant.

>>> mT(np.arange(6.0).reshape(2, 3)).shape, diagonal(np.eye(2) * 3.0)
((3, 2), array([3., 3.]))
"""

from __future__ import annotations

import numpy as np

from .triangular import Triangle


def values(x) -> np.ndarray:
    return getattr(x, "_data", x)


def mT(x):  # noqa: N802  (PyTorch's name)
    return np.swapaxes(x, -1, -2)


def tri(x, upper: bool, k: int = 0):
    return Triangle.call(x, diagonal=k, upper=upper)


def eye(n: int, like) -> np.ndarray:
    return np.eye(n, dtype=values(like).dtype)


def diag_embed(v):
    n = v.shape[-1]
    return v[..., None] * eye(n, v)


def diagonal(x):
    return np.sum(x * eye(x.shape[-1], x), axis=-1)
