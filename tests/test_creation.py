"""Ways to make tensors: from data, filled, random; and ``manual_seed``."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


def test_tensor_copies_its_data():
    a = np.array([1.0, 2.0], dtype=np.float32)
    t = mt.tensor(a)
    a[0] = 100.0
    assert t.tolist() == [1.0, 2.0]
    assert not np.shares_memory(t.numpy(), a)


def test_tensor_from_nested_lists_scalars_and_tensors():
    t = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert t.shape == (2, 2) and t.requires_grad and t.is_leaf and t.grad is None
    s = mt.tensor(2.5)
    assert s.shape == () and s.ndim == 0 and s.item() == 2.5
    copy = mt.tensor(t)
    assert copy.tolist() == t.tolist() and not copy.requires_grad
    assert not np.shares_memory(copy.numpy(), t.numpy())
    assert mt.tensor([1, 2], dtype=mt.float64).dtype == mt.float64


def test_tensor_rejects_non_numbers():
    with pytest.raises(TypeError, match="dtype"):
        mt.tensor(["a", "b"])


def test_from_numpy_shares_memory_and_keeps_dtype():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = mt.from_numpy(a)
    assert t.dtype == mt.float64 and t.shape == (2, 3)
    assert t.numpy() is a
    a[0, 0] = -1.0
    assert t[0, 0].item() == -1.0
    with mt.no_grad():
        t.zero_()
    assert not a.any()
    view = mt.from_numpy(a[:, ::2])
    assert np.shares_memory(view.numpy(), a)


def test_from_numpy_holds_a_subclass_as_a_plain_view_of_its_memory(tmp_path):
    """A np.memmap (nanoGPT's data loader) becomes a plain ndarray view of the same memory, so the
    ops run NumPy's functions rather than the subclass's Python hooks; writes still reach the file."""
    path = tmp_path / "data.bin"
    np.arange(10, dtype=np.uint16).tofile(path)
    data = np.memmap(path, dtype=np.uint16, mode="r+")
    t = mt.from_numpy(data[2:6])
    assert type(t.numpy()) is np.ndarray and np.shares_memory(t.numpy(), data)
    with mt.no_grad():
        t[0] = 99
    assert data[2] == 99 and t.dtype == np.uint16
    assert type(mt.stack([mt.from_numpy(data[i : i + 3].astype(np.int64)) for i in range(3)]).numpy()) is np.ndarray


def test_from_numpy_needs_an_array():
    with pytest.raises(TypeError, match="numpy.ndarray"):
        mt.from_numpy([1.0, 2.0])


@pytest.mark.parametrize("fn, value", [(mt.zeros, 0.0), (mt.ones, 1.0)])
def test_zeros_ones_varargs_and_tuple(fn, value):
    for t in (fn(2, 3), fn((2, 3)), fn([2, 3])):
        assert t.shape == (2, 3) and t.dtype == mt.float32
        assert np.all(t.numpy() == value)
    assert fn(4).shape == (4,)
    assert fn(()).shape == () and fn().shape == ()
    assert fn(2, dtype=mt.float64).dtype == mt.float64
    assert fn(2, dtype=mt.int64).dtype == mt.int64
    t = fn(2, 2, requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_empty():
    t = mt.empty(3, 2, dtype=mt.float64, requires_grad=True)
    assert t.shape == (3, 2) and t.dtype == mt.float64 and t.requires_grad
    assert mt.empty((0, 4)).shape == (0, 4)


@pytest.mark.parametrize("fn", [mt.zeros, mt.ones, mt.empty, mt.randn, mt.rand])
def test_negative_sizes_raise(fn):
    with pytest.raises(ValueError, match=r"\(2, -1\)"):
        fn(2, -1)


def test_zeros_like_ones_like():
    x = mt.tensor([[1.0, 2.0, 3.0]], dtype=mt.float64, requires_grad=True)
    z, o = mt.zeros_like(x), mt.ones_like(x)
    assert z.shape == o.shape == (1, 3)
    assert z.dtype == o.dtype == mt.float64
    assert not z.requires_grad and z.grad_fn is None
    assert z.tolist() == [[0.0, 0.0, 0.0]] and o.tolist() == [[1.0, 1.0, 1.0]]
    assert mt.zeros_like(x, dtype=mt.float32).dtype == mt.float32
    assert mt.ones_like(mt.tensor([1, 2])).dtype == mt.int64
    assert mt.ones_like(x, requires_grad=True).requires_grad


def test_randn_rand_shapes_dtypes_and_ranges():
    mt.manual_seed(0)
    n = mt.randn(200, 50)
    u = mt.rand((200, 50), dtype=mt.float64)
    assert n.shape == u.shape == (200, 50)
    assert n.dtype == mt.float32 and u.dtype == mt.float64
    assert abs(n.numpy().mean()) < 0.05 and abs(n.numpy().std() - 1) < 0.05
    assert u.numpy().min() >= 0.0 and u.numpy().max() < 1.0
    assert abs(u.numpy().mean() - 0.5) < 0.02
    assert mt.randn(3, requires_grad=True).requires_grad


def test_manual_seed_reproducibility():
    mt.manual_seed(123)
    a = (mt.randn(4, 3), mt.rand(5), mt.empty(2).normal_(), mt.empty(3).uniform_(-1, 1))
    mt.manual_seed(123)
    b = (mt.randn(4, 3), mt.rand(5), mt.empty(2).normal_(), mt.empty(3).uniform_(-1, 1))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    mt.manual_seed(124)
    assert not np.array_equal(mt.randn(4, 3).numpy(), a[0].numpy())
    assert np.all(np.abs(a[3].numpy()) <= 1.0)


def test_manual_seed_needs_an_int():
    with pytest.raises(TypeError, match="seed"):
        mt.manual_seed(1.5)


def test_arange():
    assert mt.arange(5).tolist() == [0, 1, 2, 3, 4] and mt.arange(5).dtype == mt.int64
    assert mt.arange(2, 8, 3).tolist() == [2, 5]
    assert mt.arange(3, 0, -1).tolist() == [3, 2, 1]
    f = mt.arange(0.0, 1.0, 0.25)
    assert f.dtype == mt.float32 and f.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert mt.arange(4, dtype=mt.float64).dtype == mt.float64
    with pytest.raises(ValueError, match="step"):
        mt.arange(0, 5, 0)


def test_full():
    t = mt.full((2, 3), 1.5)
    assert t.shape == (2, 3) and t.dtype == mt.float32 and np.all(t.numpy() == 1.5)
    assert mt.full(3, 7).dtype == mt.int64 and mt.full(3, 7).tolist() == [7, 7, 7]
    assert mt.full([2], True).dtype == mt.bool
    assert mt.full((2,), 2, dtype=mt.float64).dtype == mt.float64
    assert mt.full((2,), 0.5, requires_grad=True).requires_grad


def test_eye():
    np.testing.assert_array_equal(mt.eye(3).numpy(), np.eye(3))
    assert mt.eye(3).dtype == mt.float32
    np.testing.assert_array_equal(mt.eye(2, 4, dtype=mt.float64).numpy(), np.eye(2, 4))
    with pytest.raises(ValueError):
        mt.eye(-1)


@pytest.mark.parametrize(
    "make",
    [
        lambda: mt.tensor([1, 2], requires_grad=True),
        lambda: mt.zeros(2, dtype=mt.int64, requires_grad=True),
        lambda: mt.arange(3, requires_grad=True),
        lambda: mt.full((2,), True, requires_grad=True),
        lambda: mt.tensor([1, 2]).requires_grad_(),
    ],
)
def test_int_and_bool_tensors_cannot_require_grad(make):
    with pytest.raises(TypeError, match="float"):
        make()
