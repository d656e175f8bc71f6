"""``mt.linalg``: PyTorch's ``torch.linalg`` on CPU, differentiable to any order (see ``docs/linalg.md``).

- norms: ``vector_norm``, ``matrix_norm``, ``norm``, ``cond``;
- solving: ``inv``, ``inv_ex``, ``solve``, ``solve_triangular``, ``lstsq``, ``pinv``;
- determinants: ``det``, ``slogdet``;
- decompositions: ``cholesky``, ``cholesky_ex``, ``qr``, ``eigh``, ``eigvalsh``, ``svd``, ``svdvals``;
- functions: ``matrix_power``, ``matrix_rank``, ``multi_dot``, ``cross``, ``vecdot``, ``matmul``, ``diagonal``;
- ``LinAlgError`` (a ``RuntimeError``): a singular or not positive-definite matrix.

The ops live in ``ops/solve.py``, ``ops/determinant.py``, ``ops/decompositions.py``,
``ops/matrix_functions.py``, ``ops/norms.py`` and ``ops/products.py`` (gathered by
``ops/linalg_functions.py``).
"""

from .ops.linalg_functions import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    cond,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    matmul,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
    vecdot,
    vector_norm,
)

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "inv_ex",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vecdot",
    "vector_norm",
]
