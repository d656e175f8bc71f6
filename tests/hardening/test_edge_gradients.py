"""Gradients at edge points equal PyTorch's, and dtypes never silently widen
(issue: correctness sweep, items 3 and 5)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F


def _grad_of(fn, values, dtype=np.float64):
    x = mt.tensor(values, dtype=dtype, requires_grad=True)
    fn(x).backward()
    return x.grad.numpy()


@pytest.mark.parametrize("exponent", [0, 0.0, "tensor"])
def test_x_to_the_zero_has_gradient_zero_at_zero(exponent):
    e = mt.tensor(0.0, dtype=mt.float64) if exponent == "tensor" else exponent
    g = _grad_of(lambda x: (x**e).sum(), [0.0, 1.0, -2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])  # was NaN at 0 (0 * 0 ** -1)


def test_full_max_and_min_split_the_gradient_among_ties():
    np.testing.assert_allclose(_grad_of(lambda x: x.max(), [1.0, 3.0, 3.0, 2.0]), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(_grad_of(lambda x: x.min(), [[1.0, 3.0], [1.0, 1.0]]), [[1 / 3, 0], [1 / 3, 1 / 3]])
    x = mt.tensor([[1.0, 3.0, 3.0]], requires_grad=True)
    x.max(dim=1).values.sum().backward()  # max(dim) keeps one winner
    assert x.grad.numpy().sum() == 1.0 and np.count_nonzero(x.grad.numpy()) == 1


def test_full_max_ties_match_pytorch():
    torch = pytest.importorskip("torch")
    values = [[2.0, 5.0, 5.0], [5.0, 1.0, 0.0]]
    ours = _grad_of(lambda x: x.max() * 3, values)
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (t.max() * 3).backward()
    np.testing.assert_allclose(ours, t.grad.numpy())


@pytest.mark.parametrize(
    ("dtype", "b"), [(np.float64, 1e160), (np.float64, 1e-150), (np.float32, 1e-19), (np.float32, 2e19)]
)
def test_division_backward_stays_finite_and_accurate(dtype, b):
    """d(a/b)/db = -a/b^2 where b*b itself would over- or underflow (a / (b * b) gave inf or 0)."""
    a = mt.tensor([3.0], dtype=dtype, requires_grad=True)
    d = mt.tensor([b], dtype=dtype, requires_grad=True)
    (a / d).sum().backward()
    exact_b = float(np.array(b, dtype))
    expected_db = -3.0 / exact_b / exact_b
    assert np.isfinite(d.grad.numpy()).all() and d.grad.numpy()[0] != 0
    np.testing.assert_allclose(d.grad.numpy(), [expected_db], rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(a.grad.numpy(), [1.0 / float(np.array(b, dtype))], rtol=1e-6)


def test_float32_std_of_huge_and_tiny_values():
    big = mt.tensor(np.array([3e19, -3e19], np.float32), requires_grad=True)
    s = big.std()
    assert np.isfinite(s.item())
    np.testing.assert_allclose(s.item(), 3e19 * np.sqrt(2), rtol=1e-6)
    s.backward()
    np.testing.assert_allclose(big.grad.numpy(), [1 / np.sqrt(2), -1 / np.sqrt(2)], rtol=1e-6)
    tiny = mt.tensor(np.array([1e-30, -1e-30], np.float32), requires_grad=True)
    tiny.std().backward()
    np.testing.assert_allclose(tiny.grad.numpy(), [0.70710677, -0.70710677], rtol=1e-6)


def test_std_matches_pytorch_on_ordinary_values():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    values = rng.standard_normal((3, 5))
    w = rng.standard_normal(5)
    ours = _grad_of(lambda x: (x.std(dim=0) * mt.tensor(w, dtype=mt.float64)).sum(), values)
    t = torch.tensor(values, requires_grad=True)
    (t.std(dim=0) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("jit", [True, False])
def test_layer_norm_of_constant_rows_is_exact_on_both_paths(jit):
    with mt.jit_disabled() if not jit else _nothing():
        x = mt.tensor(np.full((3, 384), 0.3, np.float32), requires_grad=True)
        y = F.layer_norm(x, (384,), eps=1e-12)
        y.backward(mt.tensor(np.random.default_rng(1).standard_normal((3, 384)).astype(np.float32)))
    assert np.abs(y.numpy()).max() == 0.0  # the NumPy path gave 0.43: a float32 mean that missed the row
    assert np.isfinite(x.grad.numpy()).all()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("jit", [True, False])
def test_layer_norm_float64_large_offset_matches_pytorch(jit):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    values = 1e6 + rng.standard_normal((4, 64))
    g = rng.standard_normal((4, 64))
    with mt.jit_disabled() if not jit else _nothing():
        x = mt.tensor(values, dtype=mt.float64, requires_grad=True)
        y = F.layer_norm(x, (64,), eps=1e-12)
        y.backward(mt.tensor(g, dtype=mt.float64))
    t = torch.tensor(values, requires_grad=True)
    ty = torch.nn.functional.layer_norm(t, (64,), eps=1e-12)
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), atol=1e-9)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-7)


# ------------------------------------------------------------------ no silent upcasts
def test_float32_matmul_int64_stays_float32():
    a = mt.ones(2, 3, requires_grad=True)
    out = a @ mt.ones(3, 4, dtype=mt.int64)
    assert out.dtype == mt.float32
    out.sum().backward()
    assert a.grad.dtype == mt.float32


def test_default_float64_keeps_float32_results_float32():
    previous = mt.get_default_dtype()
    mt.set_default_dtype(mt.float64)
    try:
        f32 = mt.ones(3, dtype=mt.float32, requires_grad=True)
        i64 = mt.tensor([1, 2, 3])
        for out in (f32 * i64, f32 + i64, i64 - f32, f32 / i64, mt.where(i64 > 1, f32, i64)):
            assert out.dtype == mt.float32, out
        (f32 * i64).sum().backward()
        assert f32.grad.dtype == mt.float32
        assert (i64 * 1.5).dtype == mt.float64  # no float operand: the default float dtype
    finally:
        mt.set_default_dtype(previous)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_changing_the_returned_indices_in_place_does_not_move_the_gradient(name, keepdim):
    """``values, indices = x.max(dim)``: the backward keeps its own index array, so ``indices += 1``
    (or ``zero_()``) before backward leaves the gradient where the extrema are (PyTorch raises
    instead; it never gives a wrong gradient either)."""
    data = [[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]]
    expected = {"max": [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], "min": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]}[name]
    for change in (lambda i: i.add_(1), lambda i: i.zero_()):
        x = mt.tensor(data, requires_grad=True)
        values, indices = getattr(x, name)(1, keepdim=keepdim)
        before = indices.tolist()
        change(indices)
        values.sum().backward()
        assert x.grad.tolist() == expected and indices.tolist() != before


INDEXED = {
    "x[rows, cols]": lambda x, i: x[mt.arange(2), i],
    "x[i]": lambda x, i: x[i],
    "x[numpy i]": lambda x, i: x[i.numpy()],
    "F.embedding": lambda x, i: F.embedding(i, x),
    "h[i] = x[0]": lambda x, i: _put(x, i),
}


def _put(x, index):
    h = mt.zeros(3, 3)
    h[index] = x[0]
    return h


@pytest.mark.parametrize("name", list(INDEXED))
def test_changing_an_index_in_place_after_forward_does_not_move_the_gradient(name):
    """The backward keeps its own copy of the index (the caller's array may change before it runs)."""
    grads = []
    for change in (False, True):
        x = mt.tensor([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]], requires_grad=True)
        index = mt.tensor([1, 1])
        y = INDEXED[name](x, index)
        if change:
            index.zero_()
        (y * mt.tensor(np.arange(1.0, y.numel() + 1).reshape(y.shape), dtype=y.dtype)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.parametrize("op", ["masked_fill", "where"])
def test_changing_a_mask_in_place_after_forward_raises_as_pytorch(op):
    """A mask Tensor changed in place before backward raises (its version is watched, as in
    PyTorch); a NumPy mask is copied, so changing it leaves the gradient as the forward had it."""

    def forward(x, mask):
        return x.masked_fill(mask, 0.0) if op == "masked_fill" else mt.where(mask, 0.0, x)

    x = mt.tensor([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]], requires_grad=True)
    mask = mt.tensor([[True, False, True], [False, True, False]])
    y = forward(x, mask)
    mask.fill_(False)
    with pytest.raises(RuntimeError, match="WhereBackward: input 0 .* modified in place"):
        y.sum().backward()
    array = np.array([[True, False, True], [False, True, False]])
    y = forward(x, array)
    array[:] = False
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
