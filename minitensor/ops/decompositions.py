"""Matrix decompositions: ``cholesky``, ``qr``, ``eigh``, ``svd`` (and ``cholesky_ex``, ``eigvalsh``,
``svdvals``), with PyTorch's first- and second-order gradients.

Forward: NumPy's LAPACK calls.  A decomposition with several outputs is one op whose output packs
them (each matrix flattened, side by side in the last dim: ``_pack``); the function unpacks them
with slices, so one backward sees the gradients of all of them at once (zeros for unused ones).
The backward formulas are PyTorch's (``FunctionsManual.cpp``), written with ``matmul``, triangles
and ``SolveTriangular`` so they are differentiable again:

- Cholesky ``A = L L^T`` (I. Murray, "Differentiation of the Cholesky decomposition", 2016):
  ``gA = L^-T Phi(L^T gL) L^-1`` symmetrised, ``Phi`` the lower triangle with half the diagonal;
- QR (m >= n, or m < n), after "Auto-differentiating linear algebra" (Seeger et al., 2017);
- eigh ``A = V diag(L) V^T``: ``gA = V (diag(gL) + sym-part(V^T gV) / E) V^T``, ``E_ij = L_j - L_i``;
- SVD ``A = U diag(S) Vh`` (J. Townsend, "Differentiating the singular value decomposition", 2016),
  plus the terms of a non-square A.

Where the gradients are undefined (as PyTorch's): eigh and svd need distinct eigen/singular values
when the eigen/singular vectors are used (the ratios ``1 / (L_j - L_i)``; only the values, as in
``eigvalsh``/``svdvals``, are always differentiable), a non-square svd needs full rank, and
``qr(mode='complete')`` with m > n or ``mode='r'`` has no derivative (its backward raises).
Eigenvectors and singular vectors are defined up to sign: a loss must not depend on the sign
(NumPy's LAPACK may choose other signs than PyTorch's).

>>> a = mt.tensor([[4.0, 2.0], [2.0, 3.0]])
>>> mt.linalg.cholesky(a)
tensor([[2.    , 0.    ],
        [1.    , 1.4142]])
>>> mt.linalg.eigvalsh(a)
tensor([1.4384, 5.5616])
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from .. import backend
from ..autograd import batching
from ..autograd.batching import leading
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import bool_arg, choice_arg, matrix_input
from .matrices import diag_embed, diagonal, eye, mT, tri, values
from .solve import LinAlgError, SolveTriangular

QRResult = namedtuple("qr", ["Q", "R"])
EighResult = namedtuple("eigh", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("svd", ["U", "S", "Vh"])
TorchSVDResult = namedtuple("svd", ["U", "S", "V"])
CholeskyExResult = namedtuple("cholesky_ex", ["L", "info"])


def _pack(arrays: tuple, batch: tuple) -> np.ndarray:
    """The matrices (and vectors) of each batch element flattened and joined along the last dim."""
    return np.concatenate([a.reshape(batch + (-1,)) for a in arrays], axis=-1)


def _unpack(packed, shapes: tuple) -> tuple:
    """The pieces of ``_pack``, each reshaped to ``batch + shape`` (arrays or Tensors)."""
    batch, start, pieces = packed.shape[:-1], 0, []
    for shape in shapes:
        size = math.prod(shape)
        pieces.append(packed[..., start : start + size].reshape(batch + shape))
        start += size
    return tuple(pieces)


class Cholesky(Op):
    """L, lower, with L L^T = A (A's lower triangle read);  gA = L^-T Phi L^-1 symmetrised,
    Phi = tril(L^T gL) with half its diagonal (PyTorch's cholesky_backward)."""

    @staticmethod
    def forward(ctx, a):
        try:
            low = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                              "positive-definite") from None  # fmt: skip
        ctx.save_for_backward(low)
        return low

    @staticmethod
    def backward(ctx, grad):
        (low,) = ctx.saved_tensors
        phi = tri(mT(low) @ grad, upper=False)
        phi = 0.5 * (phi + mT(tri(phi, upper=False, k=-1)))
        ga = SolveTriangular.call(mT(low), phi, upper=True)  # L^-T phi
        return mT(SolveTriangular.call(mT(low), mT(ga), upper=True))  # (L^-T phi) L^-1: L^T X^T = (L^-T phi)^T

    @staticmethod
    def jvp(ctx, da):
        """dL = L Phi(L^-1 S L^-T), S = (dA + dA^T) / 2 (the symmetric direction the backward's gradient
        belongs to), Phi the lower triangle with half the diagonal (PyTorch's cholesky_jvp)."""
        low = ctx.output
        s = 0.5 * (da + mT(da))
        x = SolveTriangular.call(low, mT(SolveTriangular.call(low, s, upper=False)), upper=False)  # L^-1 S L^-T
        return low @ (tri(x, upper=False) - 0.5 * diag_embed(diagonal(x)))

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


class QR(Op):
    """The packed (Q, R) of A = QR (``mode`` 'reduced', 'complete' or 'r': R only);  PyTorch's
    linalg_qr_backward for 'reduced' (and 'complete' with m <= n)."""

    @staticmethod
    def forward(ctx, a, mode="reduced"):
        ctx.mode, ctx.matrix = mode, a.shape[-2:]
        if mode == "r":
            r = np.linalg.qr(a, mode="r")
            ctx.shapes = (r.shape[-2:],)
            return _pack((r,), a.shape[:-2])
        q, r = np.linalg.qr(a, mode=mode)
        ctx.shapes = (q.shape[-2:], r.shape[-2:])
        out = _pack((q, r), a.shape[:-2])
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        m, n = ctx.matrix
        _check_qr_differentiable(ctx.mode, m, n)
        (out,) = ctx.saved_tensors
        q, r = _unpack(out, ctx.shapes)
        gq, gr = _unpack(grad, ctx.shapes)
        ga = gr @ mT(r) - mT(q) @ gq
        if m >= n:
            upper = tri(ga, upper=True)
            ga = q @ (upper + mT(upper) - diag_embed(diagonal(upper))) + gq
            return mT(SolveTriangular.call(r, mT(ga), upper=True))  # ga R^-T
        ga = q @ tri(mT(ga) - ga, upper=False)
        ga = mT(SolveTriangular.call(r[..., :m], mT(ga), upper=True))
        zeros = np.zeros(ga.shape[:-1] + (n - m,), dtype=values(ga).dtype)  # (R's columns beyond m: no term)
        return np.concatenate([ga, zeros], axis=-1) + q @ gr

    @staticmethod
    def jvp(ctx, da):
        """m >= n: with dX = dA R^-1 and C = Q^T dX, Q^T dQ = tril(C, -1) - tril(C, -1)^T (skew) and
        dR R^-1 = C - Q^T dQ (upper), so dR = (C - Q^T dQ) R, dQ = dX - Q (C - Q^T dQ); m < n: that for
        A's first m columns, and dR's other columns Q^T (dA - dQ R) there."""
        m, n = ctx.matrix
        _check_qr_differentiable(ctx.mode, m, n)
        q, r = _unpack(ctx.output, ctx.shapes)
        if m >= n:
            dq, dr = _qr_jvp_square_r(q, r, da)
        else:
            dq, dr = _qr_jvp_square_r(q, r[..., :m], da[..., :m])
            dr = np.concatenate([dr, mT(q) @ (da[..., m:] - dq @ r[..., m:])], axis=-1)
        return _pack((dq, dr), tuple(da.shape[:-2]))

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


def _check_qr_differentiable(mode: str, m: int, n: int) -> None:
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")  # fmt: skip
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")


def _qr_jvp_square_r(q, r, da) -> tuple:
    """(dQ, dR) of A = QR with R square (see QR.jvp)."""
    dx = mT(SolveTriangular.call(mT(r), mT(da), upper=False))  # dA R^-1
    c = mT(q) @ dx
    low = tri(c, upper=False, k=-1)
    upper_part = c - (low - mT(low))  # dR R^-1
    return dx - q @ upper_part, upper_part @ r


class Eigh(Op):
    """The packed (eigenvalues L ascending, eigenvectors V) of a symmetric A (its ``uplo`` triangle read);
    gA = V (diag(gL) + skew(V^T gV) / (2 E)) V^T with E_ij = L_j - L_i (PyTorch's)."""

    @staticmethod
    def forward(ctx, a, uplo="L"):
        w, v = np.linalg.eigh(a, UPLO=uplo)
        ctx.n = a.shape[-1]
        out = _pack((w, v), a.shape[:-2])
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        n = ctx.n
        (out,) = ctx.saved_tensors
        w, v = _unpack(out, ((n,), (n, n)))
        gw, gv = _unpack(grad, ((n,), (n, n)))
        if not np.any(values(gv)):  # eigenvalues only (eigvalsh): always defined
            return (v * gw[..., None, :]) @ mT(v)
        vtgv = mT(v) @ gv
        skew = 0.5 * (vtgv - mT(vtgv))
        gaps = w[..., None, :] - w[..., :, None] + eye(n, w)  # (1 on the diagonal, where skew is 0)
        return v @ (skew / gaps + diag_embed(gw)) @ mT(v)

    @staticmethod
    def jvp(ctx, da):
        """With S = (dA + dA^T) / 2 and P = V^T S V: dL = diag(P), dV = V (P / E) with E_ij = L_j - L_i off
        the diagonal and 0 on it (PyTorch's linalg_eig_jvp for a symmetric A)."""
        n = ctx.n
        w, v = _unpack(ctx.output, ((n,), (n, n)))
        p = mT(v) @ (0.5 * (da + mT(da))) @ v
        off = 1 - eye(n, w)
        gaps = w[..., None, :] - w[..., :, None] + eye(n, w)  # (1 on the diagonal, masked by off)
        with np.errstate(divide="ignore", invalid="ignore"):  # (repeated eigenvalues: dV undefined, dL still fine)
            dv = v @ (p / gaps * off)
        return _pack((diagonal(p), dv), tuple(da.shape[:-2]))

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


class SVD(Op):
    """The packed (U, S, Vh) of A = U diag(S) Vh;  PyTorch's svd_backward (with ``full_matrices`` the
    columns beyond min(m, n) get no gradient, as PyTorch's)."""

    @staticmethod
    def forward(ctx, a, full_matrices=False):
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        ctx.shapes = (u.shape[-2:], s.shape[-1:], vh.shape[-2:])
        out = _pack((u, s, vh), a.shape[:-2])
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        u, s, vh = _unpack(out, ctx.shapes)
        gu, gs, gvh = _unpack(grad, ctx.shapes)
        m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
        u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
        if not np.any(values(gu)) and not np.any(values(gvh)):  # singular values only (svdvals)
            return (u * gs[..., None, :]) @ vh
        utgu = mT(u) @ gu
        utgu = utgu - mT(utgu)
        vtgv = vh @ mT(gvh)
        vtgv = vtgv - mT(vtgv)
        s2 = s * s
        gaps = s2[..., None, :] - s2[..., :, None] + eye(k, s)
        inner = (utgu * s[..., None, :] + s[..., :, None] * vtgv) / gaps + diag_embed(gs)
        if m > n:
            gus = gu / s[..., None, :]
            return (u @ inner + gus - u @ (mT(u) @ gus)) @ vh
        if m < n:
            sgvh = gvh / s[..., :, None]
            return u @ (inner @ vh + sgvh - (sgvh @ mT(vh)) @ vh)
        return u @ inner @ vh

    @staticmethod
    def jvp(ctx, da):
        """With P = U^T dA V (k x k, k = min(m, n)) and F_ij = 1 / (s_j^2 - s_i^2) off the diagonal (0 on it):
        dS = diag(P), dU = U (F o (P S + S P^T)) + (I - U U^T) dA V S^-1, dV = V (F o (S P + P^T S))
        + (I - V V^T) dA^T U S^-1 (J. Townsend 2016; PyTorch's linalg_svd_jvp); with ``full_matrices`` the
        columns beyond k get a zero tangent, as PyTorch's."""
        u_full, s, vh_full = _unpack(ctx.output, ctx.shapes)
        m, n, k = u_full.shape[-2], vh_full.shape[-1], s.shape[-1]
        u, v = u_full[..., :k], mT(vh_full[..., :k, :])
        dav = da @ v
        p = mT(u) @ dav
        off = 1 - eye(k, s)
        s2 = s * s
        gaps = s2[..., None, :] - s2[..., :, None] + eye(k, s)
        with np.errstate(divide="ignore", invalid="ignore"):  # (repeated or zero singular values: dU, dV undefined)
            du = u @ ((p * s[..., None, :] + s[..., :, None] * mT(p)) / gaps * off)
            dv = v @ ((s[..., :, None] * p + mT(p) * s[..., None, :]) / gaps * off)
            if m > k:
                du = du + (dav - u @ p) / s[..., None, :]
            if n > k:
                datu = mT(da) @ u
                dv = dv + (datu - v @ mT(p)) / s[..., None, :]
        lead = tuple(da.shape[:-2])
        if u_full.shape[-1] > k:
            du = np.concatenate([du, np.zeros(lead + (m, m - k), dtype=values(s).dtype)], axis=-1)
        dvh = mT(dv)
        if vh_full.shape[-2] > k:
            dvh = np.concatenate([dvh, np.zeros(lead + (n - k, n), dtype=values(s).dtype)], axis=-2)
        return _pack((du, diagonal(p), dvh), lead)

    batch = leading  # vmap: the op works on the last two dims, any leading ones are a batch


def cholesky(A, *, upper: bool = False):  # noqa: N803  (PyTorch's names)
    """L (lower) with ``A = L L^T`` for a (batch of) symmetric positive-definite A (``upper=True``: ``U = L^T``,
    ``A = U^T U``); ``LinAlgError`` if A is not positive-definite."""
    low = Cholesky.apply(matrix_input(A, "linalg.cholesky", square=True))
    return mT(low) if bool_arg(upper, "linalg.cholesky", "upper") else low


@batching.per_example  # (reads the values: under vmap, once per example)
def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False):  # noqa: N803
    """``(L, info)``: info (int32) 0 where A is positive-definite, > 0 where not (L is then not meaningful);
    ``check_errors=True`` raises instead."""
    matrix_input(A, "linalg.cholesky_ex", square=True)
    if bool_arg(check_errors, "linalg.cholesky_ex", "check_errors"):
        return CholeskyExResult(cholesky(A, upper=upper), Tensor._make(np.zeros(A.shape[:-2], np.int32), False, None))
    data = A._data.reshape((-1,) + A.shape[-2:])
    failed = np.zeros(len(data), np.int32)
    for i, matrix in enumerate(data):
        try:
            np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            failed[i] = 1
    info = Tensor._make(failed.reshape(A.shape[:-2]), False, None)
    if not failed.any():
        return CholeskyExResult(cholesky(A, upper=upper), info)
    safe = backend.where(failed.reshape(A.shape[:-2])[..., None, None] > 0, np.eye(A.shape[-1], dtype=A.dtype), A._data)
    low = backend.where(info._data[..., None, None] > 0, np.nan, np.linalg.cholesky(safe))
    return CholeskyExResult(Tensor._make(np.swapaxes(low, -1, -2) if upper else low, False, None), info)


def qr(A, mode: str = "reduced"):  # noqa: N803
    """``(Q, R)`` with A = QR, Q orthonormal columns, R upper triangular: 'reduced' (Q (m, k), R (k, n), k =
    min(m, n)), 'complete' (Q (m, m), R (m, n)) or 'r' (R only, Q empty)."""
    matrix_input(A, "linalg.qr")
    choice_arg(mode, "linalg.qr", "mode", ("reduced", "complete", "r"))
    packed = QR.apply(A, mode=mode)
    m, n = A.shape[-2:]
    if mode == "r":
        (r,) = _unpack(packed, ((min(m, n), n),))
        return QRResult(Tensor._make(np.zeros(0, A.dtype), False, None), r)
    k = m if mode == "complete" else min(m, n)
    return QRResult(*_unpack(packed, ((m, k), (k, n))))


def eigh(A, UPLO: str = "L"):  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of a (batch of) symmetric A, values ascending, vectors as columns;
    only A's ``UPLO`` ('L' or 'U') triangle is read."""
    matrix_input(A, "linalg.eigh", square=True)
    choice_arg(UPLO, "linalg.eigh", "UPLO", ("L", "U"))
    n = A.shape[-1]
    return EighResult(*_unpack(Eigh.apply(A, uplo=UPLO), ((n,), (n, n))))


def eigvalsh(A, UPLO: str = "L"):  # noqa: N803
    """The eigenvalues of a symmetric A, ascending (``eigh(A).eigenvalues``)."""
    matrix_input(A, "linalg.eigvalsh", square=True)
    return eigh(A, UPLO).eigenvalues


def svd(A, full_matrices: bool = True):  # noqa: N803
    """``(U, S, Vh)`` with A = U diag(S) Vh, S descending: with ``full_matrices`` U is (m, m) and Vh (n, n),
    else (m, k) and (k, n), k = min(m, n)."""
    matrix_input(A, "linalg.svd")
    full = bool_arg(full_matrices, "linalg.svd", "full_matrices")
    m, n = A.shape[-2:]
    k = min(m, n)
    shapes = ((m, m), (k,), (n, n)) if full else ((m, k), (k,), (k, n))
    return SVDResult(*_unpack(SVD.apply(A, full_matrices=full), shapes))


def svdvals(A):  # noqa: N803
    """The singular values of A, descending (always differentiable)."""
    matrix_input(A, "linalg.svdvals")
    return svd(A, full_matrices=False).S


def torch_svd(input, some: bool = True, compute_uv: bool = True):  # noqa: A002
    """``torch.svd``: ``(U, S, V)`` with A = U diag(S) V^T (V, not Vh); ``some=False``: full U and V;
    ``compute_uv=False``: U and V are zeros."""
    matrix_input(input, "svd", "input")
    u, s, vh = svd(input, full_matrices=not some)
    if not compute_uv:
        m, n = input.shape[-2:]
        zeros = [Tensor._make(np.zeros(input.shape[:-2] + shape, input.dtype), False, None) for shape in ((m, m),
                 (n, n))]  # fmt: skip
        return TorchSVDResult(zeros[0], s, zeros[1])
    return TorchSVDResult(u, s, mT(vh))


def torch_cholesky(input, upper: bool = False):  # noqa: A002
    """``torch.cholesky`` (deprecated in PyTorch, which warns likewise): ``linalg.cholesky``."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)  # fmt: skip
    return cholesky(input, upper=upper)
