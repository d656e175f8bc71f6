"""Solving linear systems: ``inv``, ``solve``, ``solve_triangular``, ``pinv``, ``lstsq`` (``torch.linalg``'s),
with PyTorch's first- and second-order gradients (determinants: ``ops/determinant.py``).

Each op's forward is a backend call (NumPy's LAPACK; stacks of small matrices by the LU kernels of
``kernels/lu.py``); each backward is the matrix-calculus formula written with ``matmul``, ``mT``,
triangles and the ops themselves (``ops/matrices.py``), so it is differentiable again (M. Giles, "An
extended collection of matrix derivative results", 2008)::

    Y = A^-1:            gA = -Y^T gY Y^T
    X = A^-1 B:          gB = A^-T gX,  gA = -gB X^T
    X = T^-1 B:          the same, gA projected on T's triangle (without its diagonal if unit)
    P = pinv A:          PyTorch's pinv_backward (defined where the rank does not change)

``left=False`` solves ``X A = B`` as the transposed system.  ``B`` is a batch of vectors when it
has one dim less than ``A`` and ``A``'s leading shape (or is 1-D), as PyTorch's rule.
``LinAlgError`` (a ``RuntimeError``, as ``torch.linalg.LinAlgError``) reports a singular matrix.

>>> a = mt.tensor([[2.0, 0.0], [1.0, 4.0]])
>>> mt.linalg.solve(a, mt.tensor([2.0, 9.0]))
tensor([1., 2.])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import backend
from ..autograd import batching
from ..autograd.batching import leading
from ..autograd.dual import plus
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import bool_arg, choice_arg, matrix_input, number_arg, tensor_input
from .matrices import mT, tri

InvExResult = namedtuple("inv_ex", ["inverse", "info"])
LstsqResult = namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])


class LinAlgError(RuntimeError):
    """A matrix that the asked factorisation or inversion cannot handle (singular, not positive-definite)."""


class Inv(Op):
    """Y = A^-1;  gA = -Y^T gY Y^T."""

    @staticmethod
    def forward(ctx, a):
        y = _lapack(backend.inv, "linalg.inv", a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        yt = mT(y)
        return -(yt @ grad @ yt)

    @staticmethod
    def jvp(ctx, da):  # dY = -Y dA Y
        y = ctx.output
        return -(y @ da @ y)

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


class Solve(Op):
    """X = A^-1 B (B a batch of matrices, batch dims broadcast);  gB = A^-T gX, gA = -gB X^T."""

    @staticmethod
    def forward(ctx, a, b):
        x = _lapack(backend.solve, "linalg.solve", a, b)
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        gb = Solve.call(mT(a), grad)
        return (-(gb @ mT(x)) if ctx.needs_input_grad[0] else None), gb

    @staticmethod
    def jvp(ctx, da, db):  # dX = A^-1 (dB - dA X)
        a, x = ctx.inputs[0], ctx.output
        return Solve.call(a, plus(db, None if da is None else -(da @ x)))

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


class SolveTriangular(Op):
    """X = T^-1 B with T the ``upper`` (else lower) triangle of A (its diagonal taken as 1 when ``unit``);
    gB = T^-T gX, gA = the triangle of -gB X^T (without the diagonal when ``unit``)."""

    @staticmethod
    def forward(ctx, a, b, upper=False, unit=False):
        ctx.upper, ctx.unit = upper, unit
        if not unit and b.size and not np.all(np.diagonal(a, axis1=-2, axis2=-1)):  # (substitution divides by it)
            raise LinAlgError("linalg.solve_triangular: the input matrix is singular (it has no inverse), so the "
                              "system cannot be solved")  # fmt: skip
        x = backend.solve_triangular(a, b, upper, unit)
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        gb = SolveTriangular.call(mT(a), grad, upper=not ctx.upper, unit=ctx.unit)
        ga = None
        if ctx.needs_input_grad[0]:
            k = (1 if ctx.upper else -1) if ctx.unit else 0
            ga = tri(-(gb @ mT(x)), ctx.upper, k)
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):  # dX = T^-1 (dB - dT X), dT the triangle of dA (without the diagonal if unit)
        a, x = ctx.inputs[0], ctx.output
        dt = None
        if da is not None:
            k = (1 if ctx.upper else -1) if ctx.unit else 0
            dt = -(tri(da, ctx.upper, k) @ x)
        return SolveTriangular.call(a, plus(db, dt), upper=ctx.upper, unit=ctx.unit)

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


class Pinv(Op):
    """P = pinv A (singular values at most ``cutoff`` taken as 0);  PyTorch's pinv_backward, defined where
    the rank of A does not change."""

    @staticmethod
    def forward(ctx, a, atol=None, rtol=None, hermitian=False):
        p = _pinv(a, atol, rtol, hermitian)
        ctx.save_for_backward(a, p)
        return p

    @staticmethod
    def backward(ctx, grad):
        a, p = ctx.saved_tensors
        m, n = a.shape[-2:]
        ph, gh = mT(p), mT(grad)
        if m <= n:
            k = gh @ p
            kph = k @ ph
            return -mT(p @ k) + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a)
        k = p @ gh
        phk = ph @ k
        return -mT(k @ p) + (gh - a @ k) @ p @ ph + phk - phk @ p @ a

    @staticmethod
    def jvp(ctx, da):
        """PyTorch's pinv_jvp: dP = -P dA P + (I - P A) dA^T P^T P + P P^T dA^T (I - A P), each product
        grouped to keep the matrices small."""
        a, p = ctx.inputs[0], ctx.output
        m, n = a.shape[-2:]
        dah, ph = mT(da), mT(p)
        if m <= n:
            k = ph @ dah
            return p @ (k - mT(k) - k @ (a @ p)) + (dah - p @ (a @ dah)) @ (ph @ p)
        k = p @ da
        kh = mT(k)
        return (kh - k - (p @ a) @ kh) @ p + (p @ ph) @ (dah - (dah @ a) @ p)

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


def _cutoff(s: np.ndarray, atol, rtol, shape: tuple) -> np.ndarray:
    """The tolerance of rank decisions: max(atol, rtol * s_max); rtol defaults to eps * max(m, n) when
    neither is given (0 when only atol is), as PyTorch's."""
    if rtol is None:
        rtol = np.finfo(s.dtype).eps * max(shape[-2:]) if atol is None else 0.0
    largest = s.max(axis=-1, keepdims=True, initial=0.0)
    return np.maximum(0.0 if atol is None else atol, rtol * largest)


def _pinv(a: np.ndarray, atol, rtol, hermitian: bool) -> np.ndarray:
    if hermitian:
        w, v = np.linalg.eigh(a)
        keep = np.abs(w) > _cutoff(np.abs(w), atol, rtol, a.shape)
        return (v * backend.where(keep, 1 / backend.where(keep, w, 1), 0)[..., None, :]) @ mT(v)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    keep = s > _cutoff(s, atol, rtol, a.shape)
    return (mT(vh) * backend.where(keep, 1 / backend.where(keep, s, 1), 0)[..., None, :]) @ mT(u)


def _lapack(fn, name: str, *arrays):
    try:
        return fn(*arrays)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"{name}: the input matrix is singular (it has no inverse), so the system cannot be "
                          "solved") from None  # fmt: skip


def inv(A):  # noqa: N803  (PyTorch's names)
    """The inverse of a (batch of) square matrices; ``LinAlgError`` if one is singular."""
    return Inv.apply(matrix_input(A, "linalg.inv", square=True))


@batching.per_example  # (reads the values: under vmap, once per example)
def inv_ex(A, *, check_errors: bool = False):  # noqa: N803
    """``(inverse, info)``: info (int32) is 0 for each invertible matrix and > 0 for a singular one (whose
    inverse is then not meaningful); ``check_errors=True`` raises instead."""
    matrix_input(A, "linalg.inv_ex", square=True)
    if bool_arg(check_errors, "linalg.inv_ex", "check_errors"):
        return InvExResult(inv(A), Tensor._make(np.zeros(A.shape[:-2], np.int32), False, None))
    singular = np.abs(np.linalg.det(A._data)) == 0 if A.numel() else np.zeros(A.shape[:-2], bool)
    info = Tensor._make(np.asarray(singular, dtype=np.int32), False, None)
    if not singular.any():
        return InvExResult(inv(A), info)
    with np.errstate(all="ignore"):
        safe = backend.where(singular[..., None, None], np.eye(A.shape[-1], dtype=A.dtype), A._data)
        inverse = backend.where(singular[..., None, None], np.nan, np.linalg.inv(safe))
    return InvExResult(Tensor._make(inverse, False, None), info)


def _vector_rhs(A, B) -> bool:  # noqa: N803
    """PyTorch's rule: B is a (batch of) vector(s) if 1-D, or of A's leading shape with one dim less."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def solve(A, B, *, left: bool = True):  # noqa: N803
    """X with ``A X = B`` (``left=False``: ``X A = B``); B a (batch of) matrix or vector, batch dims broadcast."""
    matrix_input(A, "linalg.solve", square=True)
    tensor_input(B, "linalg.solve", "B")
    if B.dtype != A.dtype:
        raise TypeError(f"linalg.solve: expected B of A's dtype {A.dtype}, got {B.dtype}")
    vector = _vector_rhs(A, B)
    b = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if b.ndim < 2 or b.shape[-2 if left else -1] != n:
        raise ValueError(f"linalg.solve: B's shape {B.shape} does not fit A's {A.shape}")
    if left:
        x = Solve.apply(A, b)
    else:
        x = mT(Solve.apply(mT(A), mT(b)))
    return x.squeeze(-1) if vector else x


def solve_triangular(A, B, *, upper: bool, left: bool = True, unitriangular: bool = False):  # noqa: N803
    """X with ``T X = B`` (``left=False``: ``X T = B``), T the upper (``upper=True``) or lower triangle of A;
    only that triangle is read (and not its diagonal with ``unitriangular``: ones)."""
    matrix_input(A, "linalg.solve_triangular", square=True)
    matrix_input(B, "linalg.solve_triangular", "B")
    upper = bool_arg(upper, "linalg.solve_triangular", "upper")
    unit = bool_arg(unitriangular, "linalg.solve_triangular", "unitriangular")
    if B.dtype != A.dtype:
        raise TypeError(f"linalg.solve_triangular: expected B of A's dtype {A.dtype}, got {B.dtype}")
    if B.shape[-2 if left else -1] != A.shape[-1]:
        raise ValueError(f"linalg.solve_triangular: B's shape {B.shape} does not fit A's {A.shape} (left={left})")
    if left:
        return SolveTriangular.apply(A, B, upper=upper, unit=unit)
    return mT(SolveTriangular.apply(mT(A), mT(B), upper=not upper, unit=unit))


def pinv(A, *, atol=None, rtol=None, hermitian: bool = False):  # noqa: N803
    """The Moore-Penrose pseudo-inverse: singular values at most ``max(atol, rtol * largest)`` count as 0
    (rtol defaults to eps * max(m, n)); ``hermitian=True`` uses the eigendecomposition of a symmetric A."""
    matrix_input(A, "linalg.pinv")
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if tol is not None and not isinstance(tol, Tensor):
            number_arg(tol, "linalg.pinv", name)
    atol, rtol = (t.item() if isinstance(t, Tensor) else t for t in (atol, rtol))
    return Pinv.apply(A, atol=atol, rtol=rtol, hermitian=bool_arg(hermitian, "linalg.pinv", "hermitian"))


def pinverse(input, rcond: float = 1e-15):  # noqa: A002
    """``torch.pinverse``: ``pinv`` with singular values below ``rcond`` times the largest taken as 0."""
    return pinv(input, rtol=rcond)


@batching.per_example  # (reads the values: under vmap, once per example)
def lstsq(A, B, rcond=None, *, driver=None):  # noqa: N803
    """The least-squares solution of ``A X = B`` as PyTorch's CPU drivers: ``(solution, residuals, rank,
    singular_values)``.  ``solution`` is ``pinv(A) @ B`` (differentiable); ``residuals`` (the squared
    residual of each column, drivers 'gels', 'gelsd', 'gelss', for m > n and full rank), ``rank``
    ('gelsy', the default, 'gelsd', 'gelss') and ``singular_values`` ('gelsd', 'gelss') as PyTorch
    returns them, empty where it does."""
    matrix_input(A, "linalg.lstsq")
    tensor_input(B, "linalg.lstsq", "B")
    driver = choice_arg("gelsy" if driver is None else driver, "linalg.lstsq", "driver", ("gels", "gelsy",
                        "gelsd", "gelss"))  # fmt: skip
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if b.shape[-2] != A.shape[-2]:
        raise ValueError(f"linalg.lstsq: B must have A's number of rows {A.shape[-2]}, got shape {B.shape}")
    rtol = None if rcond is None else float(number_arg(rcond, "linalg.lstsq", "rcond"))
    if rtol is None:
        rtol = np.finfo(A._data.dtype).eps * max(A.shape[-2:])
    solution = Pinv.apply(A, atol=None, rtol=rtol, hermitian=False) @ b
    s = np.linalg.svd(A._data, compute_uv=False)
    rank = np.sum(s > _cutoff(s, None, rtol, A.shape), axis=-1)
    m, n = A.shape[-2:]
    empty = Tensor._make(np.zeros(0, A.dtype), False, None)
    residuals = empty
    if driver != "gelsy" and m > n and np.all(rank == n):
        residuals = ((A @ solution - b) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    ranks = Tensor._make(rank.astype(np.int64), False, None) if driver != "gels" else Tensor._make(
        np.zeros(0, np.int64), False, None)  # fmt: skip
    values_out = Tensor._make(s, False, None) if driver in ("gelsd", "gelss") else empty
    return LstsqResult(solution.squeeze(-1) if vector else solution, residuals, ranks, values_out)
