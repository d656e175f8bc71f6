"""The functions of ``torch.linalg``, gathered from the op files for ``minitensor/linalg.py`` (the public
``mt.linalg`` module, which re-exports them): ``ops/solve.py``, ``ops/determinant.py``,
``ops/decompositions.py``, ``ops/matrix_functions.py``, ``ops/norms.py`` and ``ops/products.py``.
"""

from .decompositions import cholesky, cholesky_ex, eigh, eigvalsh, qr, svd, svdvals  # noqa: F401
from .determinant import det, slogdet  # noqa: F401
from .matrix_functions import cond, diagonal, matmul, matrix_norm, matrix_power, matrix_rank, norm, vecdot  # noqa: F401
from .norms import vector_norm  # noqa: F401
from .products import cross as _cross
from .products import multi_dot  # noqa: F401
from .solve import LinAlgError, inv, inv_ex, lstsq, pinv, solve, solve_triangular  # noqa: F401


def cross(input, other, *, dim: int = -1):  # noqa: A002  (PyTorch's names)
    """The cross product of 3-vectors along ``dim`` (default the last), input and other broadcast."""
    return _cross(input, other, dim=dim)
