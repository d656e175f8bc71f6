"""dot, vdot, vecdot, inner, outer/ger, cross (and linalg.cross), kron, tensordot, multi_dot, chain_matmul,
cdist (ops/products.py): float64 gradcheck, second order and PyTorch as the oracle; PyTorch's warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(20)
X, Y = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))


def test_vector_products():
    a, b = X[0], Y[1]
    check_op(mt.dot, lambda x, y: x.dot(y), a, b)
    check_op(mt.vdot, lambda x, y: x.vdot(y), a, b)
    check_op(mt.outer, lambda x, y: x.outer(y), a, X[1, :3])
    check_op(mt.ger, lambda x, y: x.ger(y), a, X[1, :3])
    check_op(mt.inner, lambda x, y: x.inner(y), X, Y)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_vecdot_op_along_each_dim_with_broadcasting(dim):
    """The ``VecDot`` op (linalg.vecdot): forward, backward, second order and forward mode against
    PyTorch along the first, middle and last dim, one operand broadcast; float32 along the last dim
    (the row kernel) as float64 rounded; under vmap; the errors for integers and shapes that do not broadcast."""
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 1))
    check_op(lambda x, y: mt.linalg.vecdot(x, y, dim=dim), lambda x, y: torch.linalg.vecdot(x, y, dim=dim), a, b)
    wide = rng.standard_normal((5, 300)).astype(np.float32)
    got = mt.linalg.vecdot(mt.tensor(wide), mt.tensor(wide[::-1].copy()), dim=dim if dim else 0)
    expected = torch.linalg.vecdot(torch.tensor(wide, dtype=torch.float64), torch.tensor(wide[::-1].copy(),
                                   dtype=torch.float64), dim=dim if dim else 0)  # fmt: skip
    assert got.dtype == mt.float32
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-4)
    with pytest.raises(TypeError, match="linalg.vecdot: expected floating point tensors, got int64 and int64"):
        mt.linalg.vecdot(mt.tensor([[1, 2], [3, 4]]), mt.tensor([5, 6]))  # (PyTorch refuses integers too)
    batched = mt.func.vmap(lambda x: mt.linalg.vecdot(x, mt.tensor(b, dtype=mt.float64), dim=dim))(
        mt.tensor(a, dtype=mt.float64)
    )
    np.testing.assert_allclose(batched.numpy(), np.stack([np.sum(x * b, axis=dim) for x in a]), rtol=1e-12)
    with pytest.raises(ValueError, match=r"vecdot: shapes \(2, 3\) and \(4,\) cannot be broadcast together"):
        mt.linalg.vecdot(mt.ones(2, 3), mt.ones(4))


def test_vecdot_of_vectors_whose_gradient_arrives_as_a_numpy_scalar():
    """A 0-d dot product's gradient from an elementwise op on 0-d arrays is a NumPy scalar in the
    backward of the backward (the graph fuzzer's cosine_similarity of 1-D tensors, then tanh)."""
    from minitensor.autograd import gradgradcheck

    x = mt.tensor(rng.standard_normal(3), dtype=mt.float64, requires_grad=True)
    assert gradgradcheck(lambda v: mt.nn.functional.cosine_similarity(v, v, -1).tanh(), [x])
    assert gradgradcheck(lambda v: mt.linalg.vecdot(v, v * 2).tanh(), [x])


def test_cross_along_a_dim_and_linalg_cross():
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((1, 3))
    check_op(lambda x, y: mt.cross(x, y, dim=1), lambda x, y: torch.cross(x, y, dim=1), a, b)
    check_op(mt.linalg.cross, torch.linalg.cross, a, b)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        first = mt.cross(mt.tensor(a.T.copy()), mt.tensor(a.T.copy()))
    assert first.shape == (3, 2)
    with pytest.raises(ValueError, match="cross: dim 0 must have size 3, got 2"):
        mt.cross(mt.ones(2, 3), mt.ones(2, 3), dim=0)


def test_cross_op_along_a_middle_dim_with_ints_and_under_vmap():
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((1, 3, 1))
    check_op(lambda x, y: mt.cross(x, y, dim=1), lambda x, y: torch.cross(x, y, dim=1), a, b)
    i, j = np.array([[1, 2, 3]]), np.array([[4, 5, 6], [0, 1, 0]])
    ours = mt.cross(mt.tensor(i), mt.tensor(j), dim=1)
    assert ours.dtype == mt.int64 and ours.tolist() == torch.cross(torch.tensor(i), torch.tensor(j), dim=1).tolist()
    rows, vector = rng.standard_normal((5, 3)), rng.standard_normal(3)
    batched = mt.func.vmap(lambda x, y: mt.cross(x, y, dim=0), in_dims=(0, None))(mt.tensor(rows), mt.tensor(vector))
    np.testing.assert_allclose(batched.numpy(), np.cross(rows, vector), rtol=1e-5, atol=1e-6)


def test_kron_and_tensordot():
    torch = pytest.importorskip("torch")
    check_op(mt.kron, lambda x, y: x.kron(y), X[:2, :2], Y[:, :3])
    check_op(mt.kron, lambda x, y: x.kron(y), X[0, :2], Y[:, :3])
    a, b = rng.standard_normal((3, 2, 2)), rng.standard_normal((3, 3, 1))
    batched = mt.func.vmap(mt.kron)(mt.tensor(a, dtype=mt.float64), mt.tensor(b, dtype=mt.float64))
    np.testing.assert_allclose(batched.numpy(), np.stack([np.kron(x, y) for x, y in zip(a, b)]), rtol=1e-14)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 2))
    check_op(lambda x, y: mt.tensordot(x, y, ([1, 2], [1, 0])), lambda x, y: torch.tensordot(x, y, ([1, 2], [1, 0])),
             a, b)  # fmt: skip
    check_op(lambda x, y: mt.tensordot(x, y, 1), lambda x, y: torch.tensordot(x, y, 1), a, b)
    with pytest.raises(ValueError, match="tensordot: contracted dims differ in size"):
        mt.tensordot(mt.ones(2, 3), mt.ones(2, 3), 1)


def test_multi_dot_and_chain_matmul():
    torch = pytest.importorskip("torch")
    shapes = [(4,), (4, 5), (5, 2), (2, 3)]
    arrays = [rng.standard_normal(s) for s in shapes]
    check_op(lambda *m: mt.linalg.multi_dot(list(m)), lambda *m: torch.linalg.multi_dot(list(m)), *arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(mt.chain_matmul, torch.chain_matmul, *arrays[1:])
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        mt.chain_matmul(mt.ones(2, 2), mt.ones(2, 2))
    with pytest.raises(ValueError, match=r"multi_dot: tensors\[1\] must be 2-D"):
        mt.linalg.multi_dot([mt.ones(2, 2), mt.ones(2), mt.ones(2, 2)])


@pytest.mark.parametrize("p", [2.0, 1.0, 1.5])
def test_cdist(p):
    """Values and gradients against ``torch.cdist``; the second order (which ``torch.cdist`` lacks) against
    PyTorch's norm of the differences."""
    torch = pytest.importorskip("torch")

    def composite(a, b):
        return torch.linalg.vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, dim=-1)

    batched = rng.standard_normal((2, 3, 4))
    for a in (X, batched):
        check_op(lambda u, v: mt.cdist(u, v, p), composite, a, Y)
        x, y = mt.tensor(a, dtype=mt.float64, requires_grad=True), mt.tensor(Y, dtype=mt.float64, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(Y, requires_grad=True)
        out, tout = mt.cdist(x, y, p), torch.cdist(tx, ty, p)
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10)
        w = rng.standard_normal(out.shape)
        (out * mt.tensor(w, dtype=mt.float64)).sum().backward()
        (tout * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9)
        np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-9)


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist"])
def test_cdist_by_matrix_products_as_pytorch(mode) -> None:
    """p = 2 with more than 25 rows (or asked for) goes through one matrix product, as PyTorch's: the same
    values, gradients (second order and forward mode by check_op) and the distances of the difference path."""
    torch = pytest.importorskip("torch")
    rows = (30, 27) if mode == "use_mm_for_euclid_dist_if_necessary" else (5, 4)  # (if necessary: past 25 rows)
    a, b = rng.standard_normal((2, rows[0], 3)), rng.standard_normal((2, rows[1], 3))
    check_op(
        lambda u, v: mt.cdist(u, v, compute_mode=mode),
        lambda u, v: torch.cdist(u, v, compute_mode=mode),
        a,
        b,
        pytorch_jvp=False,
    )  # (PyTorch has no forward mode for its _euclidean_dist)
    far = mt.cdist(mt.from_numpy(a), mt.from_numpy(b), compute_mode="donot_use_mm_for_euclid_dist")
    np.testing.assert_allclose(mt.cdist(mt.from_numpy(a), mt.from_numpy(b), compute_mode=mode).numpy(), far.numpy(),
                               rtol=1e-9, atol=1e-7)  # fmt: skip
    same = mt.cdist(mt.from_numpy(a[0]), mt.from_numpy(a[0]), compute_mode=mode)  # (rounding leaves ~1e-8)
    np.testing.assert_allclose(np.diag(same.numpy()), 0.0, atol=1e-6)


def test_errors_name_the_arguments():
    with pytest.raises(TypeError, match="dot: expected both tensors to have the same dtype"):
        mt.dot(mt.ones(2), mt.ones(2, dtype=mt.float64))
    with pytest.raises(ValueError, match=r"dot: expected two 1-D tensors of the same size, got shapes \(2,\) and"):
        mt.dot(mt.ones(2), mt.ones(3))
    with pytest.raises(ValueError, match="cdist: x1 and x2 must be"):
        mt.cdist(mt.ones(2, 3), mt.ones(2, 4))
