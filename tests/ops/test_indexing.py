"""ops/indexing.py: gather, scatter(_), scatter_add(_), index_fill(_): gradients of first and second
order, PyTorch as the oracle, in-place forms in the graph, and the error cases."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(2)
X = rng.standard_normal((3, 4))


def _index(dim):
    """An index of shape (3, 2) (or (2, 4)) with repeats, valid along dim of X."""
    shape = (3, 2) if dim in (1, -1) else (2, 4)
    return rng.integers(0, X.shape[dim], size=shape)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim):
    torch = pytest.importorskip("torch")
    idx = _index(dim)
    check_op(lambda x: x.gather(dim, mt.tensor(idx)), lambda x: x.gather(dim, torch.tensor(idx)), X, seed=dim % 3)
    check_op(lambda x: mt.gather(x, dim, mt.tensor(idx)), lambda x: torch.gather(x, dim, torch.tensor(idx)), X)


def test_gather_repeated_indices_accumulate():
    x = mt.zeros(3, requires_grad=True)
    x.gather(0, mt.tensor([1, 1, 2])).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 1.0]


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_and_scatter_add(dim):
    torch = pytest.importorskip("torch")
    # scatter: distinct indices along dim (a permutation per position), so the result is defined
    idx = np.argsort(rng.random((X.shape[0], X.shape[1])), axis=dim)[:2] if dim == 0 else None
    if dim == 1:
        idx = np.argsort(rng.random(X.shape), axis=1)[:, :3]
    src = rng.standard_normal((3, 4))
    small = src[: idx.shape[0], : idx.shape[1]]  # (PyTorch's backward fails for a src larger than index)
    check_op(
        lambda x, s: x.scatter(dim, mt.tensor(idx), s), lambda x, s: x.scatter(dim, torch.tensor(idx), s), X, small
    )
    big = mt.tensor(X, dtype=mt.float64).scatter(dim, mt.tensor(idx), mt.tensor(src, dtype=mt.float64))
    np.testing.assert_allclose(big.numpy(), torch.tensor(X).scatter(dim, torch.tensor(idx), torch.tensor(src)))
    check_op(lambda x: mt.scatter(x, dim, mt.tensor(idx), 1.5), lambda x: x.scatter(dim, torch.tensor(idx), 1.5), X)
    rep = _index(dim)
    check_op(
        lambda x, s: x.scatter_add(dim, mt.tensor(rep), s),
        lambda x, s: x.scatter_add(dim, torch.tensor(rep), s),
        X,
        src[: rep.shape[0], : rep.shape[1]],
    )


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather_scatter_on_3d_with_negative_indices_and_a_smaller_index(dim):
    """The 3-D kernels (dims after ``dim``) and the row kernels (the last dim), first and second order."""
    torch = pytest.importorskip("torch")
    x3 = rng.standard_normal((3, 4, 5))
    shape = tuple(n if i == dim else n - 1 for i, n in enumerate(x3.shape))
    rep = rng.integers(-x3.shape[dim], x3.shape[dim], shape)  # repeats and negatives
    t_rep = torch.tensor(rep % x3.shape[dim])  # (PyTorch's gather takes no negative index)
    check_op(lambda x: x.gather(dim, mt.tensor(rep)), lambda x: x.gather(dim, t_rep), x3)
    src = rng.standard_normal(shape)
    check_op(lambda x, s: x.scatter_add(dim, mt.tensor(rep), s), lambda x, s: x.scatter_add(dim, t_rep, s), x3, src)
    perm = np.argsort(rng.random(x3.shape), axis=dim)  # distinct targets along dim
    uniq = perm[tuple(slice(None) if i == dim else slice(n) for i, n in enumerate(shape))]
    check_op(
        lambda x, s: x.scatter(dim, mt.tensor(uniq), s), lambda x, s: x.scatter(dim, torch.tensor(uniq), s), x3, src
    )


def test_an_index_changed_in_place_before_backward_raises_as_in_pytorch():
    for make in (
        lambda x, i: x.gather(1, i),
        lambda x, i: x.scatter_add(1, i, x[:, :2] * 1),
        lambda x, i: x.scatter(1, i, x[:, :2] * 1),
    ):
        x = mt.ones(3, 4, requires_grad=True)
        index = mt.tensor([[0, 1], [2, 3], [1, 0]])
        out = make(x, index)
        index += 1
        with pytest.raises(RuntimeError, match="modified in place"):
            out.sum().backward()


def test_gather_scatter_of_a_0d_tensor():
    torch = pytest.importorskip("torch")
    x, tx = mt.tensor(5.0, requires_grad=True), torch.tensor(5.0, requires_grad=True)
    for index in ([0, 0], 0):
        out, tout = x.gather(0, mt.tensor(index)), tx.gather(0, torch.tensor(index))
        np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    (x.gather(0, mt.tensor([0, 0])) * mt.tensor([2.0, 3.0])).sum().backward()
    assert x.grad.item() == 5.0
    src = mt.tensor(2.0)
    assert x.scatter(0, mt.tensor(0), src).item() == 2.0 and x.scatter(0, mt.tensor([0]), value=3.0).item() == 3.0
    assert x.scatter_add(0, mt.tensor(0), src).item() == 7.0


def test_scatter_inplace_forms():
    torch = pytest.importorskip("torch")
    idx = np.array([[2, 0], [1, 1]])
    src = rng.standard_normal((2, 2)).astype(np.float32)
    x, tx = mt.tensor(X, dtype=mt.float32), torch.tensor(X, dtype=torch.float32)
    assert x.scatter_add_(1, mt.tensor(idx), mt.tensor(src)) is x
    tx.scatter_add_(1, torch.tensor(idx), torch.tensor(src))
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6)
    x.scatter_(0, mt.tensor(idx), mt.tensor(src))
    tx.scatter_(0, torch.tensor(idx), torch.tensor(src))
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6)
    # in the graph: a non-leaf scattered in place back-propagates like PyTorch
    w, tw = mt.tensor(X, dtype=mt.float64, requires_grad=True), torch.tensor(X, requires_grad=True)
    s, ts = (
        mt.tensor(src, dtype=mt.float64, requires_grad=True),
        torch.tensor(src, dtype=torch.float64, requires_grad=True),
    )
    h, th = w * 2, tw * 2
    h.scatter_add_(1, mt.tensor(idx), s)
    th.scatter_add_(1, torch.tensor(idx), ts)
    g = rng.standard_normal(X.shape)
    (h * mt.tensor(g, dtype=mt.float64)).sum().backward()
    (th * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy())


def test_index_fill():
    torch = pytest.importorskip("torch")
    idx = np.array([0, 2])
    check_op(lambda x: x.index_fill(1, mt.tensor(idx), -1.0), lambda x: x.index_fill(1, torch.tensor(idx), -1.0), X)
    x = mt.tensor(X)
    assert x.index_fill_(0, mt.tensor([1]), 0.0) is x
    np.testing.assert_array_equal(x.numpy()[1], 0.0)
    leaf = mt.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        leaf.index_fill_(0, mt.tensor([1]), 0.0)


def test_indexing_errors():
    x = mt.ones(3, 4)
    with pytest.raises(TypeError, match="index must be an int64 tensor"):
        x.gather(0, mt.tensor([[0.0]]))
    with pytest.raises(ValueError, match="as many dims as input"):
        x.gather(0, mt.tensor([0]))
    with pytest.raises(ValueError, match="index out of range"):
        x.gather(1, mt.tensor([[4]]))
    with pytest.raises(ValueError, match="larger than input's size"):
        x.gather(1, mt.zeros(5, 1).long())
    with pytest.raises(TypeError, match="exactly one of src and value"):
        x.scatter(0, mt.tensor([[0]]))


def test_inplace_scatter_and_index_fill_in_the_graph_match_torch():
    torch = pytest.importorskip("torch")
    g = rng.standard_normal(X.shape)
    idx = np.array([[1, 3], [0, 2], [2, 2]])
    results = []
    for lib in (mt, torch):
        if lib is mt:
            a = mt.tensor(X, dtype=mt.float64, requires_grad=True)
            s = mt.tensor(X[:, :2] * 2, dtype=mt.float64, requires_grad=True)
            index, fill, weight = mt.tensor(idx), mt.tensor([2]), mt.tensor(g, dtype=mt.float64)
        else:
            a, s = torch.tensor(X, requires_grad=True), torch.tensor(X[:, :2] * 2, requires_grad=True)
            index, fill, weight = torch.tensor(idx), torch.tensor([2]), torch.tensor(g)
        h = a * 2  # a non-leaf: the in-place ops are recorded
        h.scatter_(1, index[:, :1], s[:, :1])
        h.index_fill_(0, fill, 0.5)
        h.scatter_(1, index[:, 1:], value=3.0)
        (h * weight).sum().backward()
        results.append((h.detach().numpy().copy(), a.grad.numpy(), s.grad.numpy()))
    for m, t in zip(*results):
        np.testing.assert_allclose(m, t)
