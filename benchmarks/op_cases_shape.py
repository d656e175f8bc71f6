"""Cases for the shape and indexing ops beyond op_cases.py's: moving and splitting axes,
diagonals, rotations, repeats, takes and selections, and the ops that combine tensors
(meshgrid, cartesian_prod, combinations, block_diag).
"""

from __future__ import annotations

from op_inputs import F32, Case, normal, normal_pair, with_mask, with_row_index


def _vector(rng, r, c):
    """x flattened: a vector of r * c elements."""
    return (rng.standard_normal(r * c, dtype=F32),)


def _short_vectors(rng, r, c):
    """Two vectors of r and c elements (their grid has r * c)."""
    return rng.standard_normal(r, dtype=F32), rng.standard_normal(c, dtype=F32)


def _cube(rng, r, c):
    """x (r // 4, 4, c): a 3-D input for the depth split (dsplit splits dim 2)."""
    return (rng.standard_normal((max(1, r // 4), 4, c), dtype=F32),)


def _flat_index(rng, r, c):
    """x (r, c) and r * c // 2 flat indices into it, with repeats."""
    return rng.standard_normal((r, c), dtype=F32), rng.integers(0, r * c, r * c // 2)


def _row_argsort(rng, r, c):
    """x (r, c) and a column order per row (take_along_dim)."""
    return rng.standard_normal((r, c), dtype=F32), rng.permutation(c)[None, :].repeat(r, 0)


def _index_copy(rng, r, c):
    """x (r, c), r // 2 distinct row indices and the r // 2 rows that replace those rows."""
    index = rng.permutation(r)[: max(1, r // 2)]
    return rng.standard_normal((r, c), dtype=F32), index, rng.standard_normal((len(index), c), dtype=F32)


def _meshgrid(lib, F, u, v):
    a, b = lib.meshgrid(u, v, indexing="ij")
    return a * b


CASES = [
    # moving axes
    Case("movedim", "shape", normal, lambda lib, F, x: lib.movedim(x.reshape(-1, 8, 8), 0, 2)),
    Case("moveaxis", "shape", normal, lambda lib, F, x: lib.moveaxis(x.reshape(-1, 8, 8), 0, 2)),
    Case("swapaxes", "shape", normal, lambda lib, F, x: lib.swapaxes(x, 0, 1)),
    Case("swapdims", "shape", normal, lambda lib, F, x: lib.swapdims(x, 0, 1)),
    Case("unflatten", "shape", normal, lambda lib, F, x: x.unflatten(1, (2, -1))),
    Case("rot90", "shape", normal, lambda lib, F, x: lib.rot90(x, 1, (0, 1))),
    # splitting
    Case("tensor_split", "shape", normal, lambda lib, F, x: lib.tensor_split(x, 3, 1)[1]),
    Case("hsplit", "shape", normal, lambda lib, F, x: lib.hsplit(x, 2)[1]),
    Case("vsplit", "shape", normal, lambda lib, F, x: lib.vsplit(x, 2)[1]),
    Case("dsplit", "shape", _cube, lambda lib, F, x: lib.dsplit(x, 2)[1]),
    # diagonals
    Case("diagonal", "shape", normal, lambda lib, F, x: lib.diagonal(x.reshape(-1, 16, 16), 0, 1, 2)),
    Case("diag", "shape", _vector, lambda lib, F, x: lib.diag(x[:256])),
    Case("diagflat", "shape", _vector, lambda lib, F, x: lib.diagflat(x[:256])),
    Case("diag_embed", "shape", normal, lambda lib, F, x: lib.diag_embed(x.reshape(-1, 8))),
    Case("trace", "shape", normal, lambda lib, F, x: lib.trace(x)),
    # repeats, takes and selections
    Case("repeat_interleave", "shape", normal, lambda lib, F, x: lib.repeat_interleave(x, 2, dim=1)),
    Case("index_select", "indexing", with_row_index, lambda lib, F, x, i: lib.index_select(x, 0, i)),
    Case("index_copy", "indexing", _index_copy, lambda lib, F, x, i, s: lib.index_copy(x, 0, i, s)),
    Case("take", "indexing", _flat_index, lambda lib, F, x, i: lib.take(x, i)),
    Case("take_along_dim", "indexing", _row_argsort, lambda lib, F, x, i: lib.take_along_dim(x, i, 1)),
    Case("masked_select", "indexing", with_mask, lambda lib, F, x, m: lib.masked_select(x, m)),
    # combining
    Case("meshgrid", "combine", _short_vectors, _meshgrid),
    Case("cartesian_prod", "combine", _short_vectors, lambda lib, F, u, v: lib.cartesian_prod(u, v)),
    Case("combinations", "combine", _vector, lambda lib, F, x: lib.combinations(x[: 2 * int(len(x) ** 0.5)])),
    Case("block_diag", "combine", normal_pair, lambda lib, F, x, y: lib.block_diag(x, y)),
]
