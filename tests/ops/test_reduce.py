"""ops/reduce.py: gradient checks (float64) of reductions, softmax and log-softmax; logsumexp over one
dim (the softmax kernel) and over several (NumPy), on both kernel paths, against PyTorch with
-inf/+inf/NaN rows and differentiated twice.

``dim`` is drawn as None, an int (maybe negative) or a tuple; ``keepdim`` both
ways.  max/min/amax/amin inputs have no ties (all values at least 0.05 apart).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import dims_of, layouts, leaf, reduced_count, seeds, shapes

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck


def _np_axis(dim):
    return dim if dim is None or isinstance(dim, int) else tuple(dim)


REDUCTIONS = {
    "sum": (lambda t, d, k: t.sum(d, keepdim=k), lambda a, d, k: a.sum(axis=d, keepdims=k), {}),
    "mt.sum": (lambda t, d, k: mt.sum(t, dim=d, keepdim=k), lambda a, d, k: a.sum(axis=d, keepdims=k), {}),
    "mean": (lambda t, d, k: t.mean(d, keepdim=k), lambda a, d, k: a.mean(axis=d, keepdims=k), {}),
    "amax": (lambda t, d, k: t.amax(d, keepdim=k), lambda a, d, k: a.max(axis=d, keepdims=k), {"distinct": True}),
    "amin": (lambda t, d, k: t.amin(d, keepdim=k), lambda a, d, k: a.min(axis=d, keepdims=k), {"distinct": True}),
    "logsumexp": (
        lambda t, d, k: t.logsumexp(d, keepdim=k),
        lambda a, d, k: np.log(np.exp(a).sum(axis=d, keepdims=k)),
        {},
    ),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@given(data=st.data(), shape=shapes(), seed=seeds, layout=layouts, keepdim=st.booleans())
def test_reduction_gradcheck(name, data, shape, seed, layout, keepdim):
    fn, ref, kw = REDUCTIONS[name]
    dim = data.draw(dims_of(len(shape)))
    x = leaf(seed, shape, layout, **kw)
    out = fn(x, dim, keepdim)
    expected = ref(x.numpy(), _np_axis(dim), keepdim)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda t: fn(t, dim, keepdim), x)
    assert gradgradcheck(lambda t: fn(t, dim, keepdim), x)


@pytest.mark.parametrize("op", ["var", "std"])
@given(
    data=st.data(),
    shape=shapes(min_dims=1),
    seed=seeds,
    layout=layouts,
    keepdim=st.booleans(),
    unbiased=st.booleans(),
)
def test_var_std_gradcheck(op, data, shape, seed, layout, keepdim, unbiased):
    dim = data.draw(dims_of(len(shape)))
    assume(reduced_count(shape, dim) >= 2)  # one element: zero (or undefined) variance, a kink of std
    x = leaf(seed, shape, layout, distinct=True)

    def fn(t):
        return getattr(t, op)(dim, unbiased=unbiased, keepdim=keepdim)

    expected = np.var(x.numpy(), axis=_np_axis(dim), ddof=int(unbiased), keepdims=keepdim)
    if op == "std":
        expected = np.sqrt(expected)
    np.testing.assert_allclose(fn(x).numpy(), expected, rtol=1e-12)
    assert gradcheck(fn, x)
    assert gradgradcheck(fn, x)


def test_var_unbiased_by_hand():
    x = mt.tensor([1.0, 2.0, 4.0], dtype=mt.float64, requires_grad=True)
    v = x.var()
    assert v.item() == pytest.approx(7 / 3)
    assert x.var(unbiased=False).item() == pytest.approx(14 / 9)
    assert x.std().item() == pytest.approx(np.sqrt(7 / 3))
    v.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (x.numpy() - x.numpy().mean()) / 2, rtol=1e-12)


@pytest.mark.parametrize("op", ["max", "min"])
@given(shape=shapes(), seed=seeds, layout=layouts)
def test_max_min_no_dim_gradcheck(op, shape, seed, layout):
    x = leaf(seed, shape, layout, distinct=True)
    out = getattr(x, op)()
    assert out.shape == ()
    assert out.item() == getattr(np, op)(x.numpy())
    assert gradcheck(lambda t: getattr(t, op)(), x)
    assert gradgradcheck(lambda t: getattr(t, op)(), x)
    assert gradcheck(lambda t: getattr(mt, op)(t), x)
    assert gradgradcheck(lambda t: getattr(mt, op)(t), x)


@pytest.mark.parametrize("op", ["max", "min"])
@given(data=st.data(), shape=shapes(min_dims=1), seed=seeds, layout=layouts, keepdim=st.booleans())
def test_max_min_dim_gradcheck(op, data, shape, seed, layout, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = leaf(seed, shape, layout, distinct=True)
    values, indices = getattr(x, op)(dim, keepdim=keepdim)
    np.testing.assert_array_equal(values.numpy(), getattr(np, op)(x.numpy(), axis=dim, keepdims=keepdim))
    arg = np.argmax if op == "max" else np.argmin
    np.testing.assert_array_equal(indices.numpy(), arg(x.numpy(), axis=dim, keepdims=keepdim))
    assert indices.dtype == mt.int64 and not indices.requires_grad
    assert gradcheck(lambda t: getattr(t, op)(dim, keepdim=keepdim).values, x)
    assert gradgradcheck(lambda t: getattr(t, op)(dim, keepdim=keepdim).values, x)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@given(data=st.data(), shape=shapes(min_dims=1), seed=seeds, layout=layouts)
def test_softmax_gradcheck(op, data, shape, seed, layout):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = leaf(seed, shape, layout, low=-3.0, high=3.0)
    e = np.exp(x.numpy() - x.numpy().max(axis=dim, keepdims=True))
    expected = e / e.sum(axis=dim, keepdims=True)
    out = getattr(x, op)(dim)
    np.testing.assert_allclose(out.numpy(), expected if op == "softmax" else np.log(expected), rtol=1e-12, atol=1e-15)
    assert gradcheck(lambda t: getattr(t, op)(dim), x)
    assert gradcheck(lambda t: getattr(mt, op)(t, dim), x)
    # no second order here yet: Softmax and LogSoftmax are fused ops (ops/nn_ops.py), being converted


def test_softmax_weighted_gradient_by_hand():
    """y * (g - sum(g * y)): the term a ``.sum()``-only check would never see."""
    x = mt.tensor([[0.1, 0.7, -0.4]], dtype=mt.float64, requires_grad=True)
    g = np.array([[1.0, -2.0, 0.5]])
    y = x.softmax(-1)
    y.backward(g)
    expected = y.numpy() * (g - (g * y.numpy()).sum(-1, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_softmax_and_logsumexp_are_stable_for_large_inputs():
    x = mt.tensor([[1000.0, 1001.0, -1000.0]], dtype=mt.float64, requires_grad=True)
    assert np.all(np.isfinite(x.softmax(-1).numpy()))
    assert np.all(np.isfinite(x.log_softmax(-1).numpy()))
    np.testing.assert_allclose(x.logsumexp(-1).numpy(), [1001.0 + np.log1p(np.exp(-1.0))], rtol=1e-12)


def test_max_dim_ties_send_gradient_to_exactly_one_winner():
    x = mt.tensor([[3.0, 1.0, 3.0, 3.0], [2.0, 2.0, 0.0, 1.0]], dtype=mt.float64, requires_grad=True)
    values, indices = x.max(1)
    values.backward(mt.tensor([10.0, 20.0], dtype=mt.float64))
    np.testing.assert_array_equal(values.numpy(), [3.0, 2.0])
    assert (x.grad.numpy() != 0).sum(axis=1).tolist() == [1, 1]
    assert x.grad.numpy().sum(axis=1).tolist() == [10.0, 20.0]
    rows = np.arange(2)
    np.testing.assert_array_equal(x.grad.numpy()[rows, indices.numpy()], [10.0, 20.0])
    x.grad = None
    x.max().backward()  # without dim: the tied maxima share it (PyTorch's rule for full reductions)
    np.testing.assert_allclose(x.grad.numpy()[x.numpy() == x.numpy().max()], 1.0 / (x.numpy() == 3.0).sum())


def test_full_min_ties_split_the_gradient_evenly():
    x = mt.tensor([1.0, 0.0, 0.0, 5.0], dtype=mt.float64, requires_grad=True)
    x.min().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5, 0.0])


def test_amax_ties_split_the_gradient_evenly():
    x = mt.tensor([[3.0, 1.0, 3.0, 3.0], [2.0, 2.0, 0.0, 1.0]], dtype=mt.float64, requires_grad=True)
    x.amax(1).backward(mt.tensor([6.0, 4.0], dtype=mt.float64))
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 0.0, 2.0, 2.0], [2.0, 2.0, 0.0, 0.0]])
    y = mt.tensor([0.0, -1.0, 0.0], dtype=mt.float64, requires_grad=True)
    y.amin().backward()
    np.testing.assert_allclose(y.grad.numpy(), [0.0, 1.0, 0.0])


def test_max_dim_returns_named_tuple():
    x = mt.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    result = x.max(dim=1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    low = mt.min(x, 0, keepdim=True)
    assert low.values.shape == (1, 3) and low.indices.tolist() == [[0, 1, 0]]


def test_argmax_argmin():
    x = mt.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True)
    assert x.argmax().item() == 3 and x.argmin().item() == 4
    assert x.argmax(1).tolist() == [1, 0] and x.argmin(dim=0).tolist() == [0, 1, 0]
    assert mt.argmax(x, -1, keepdim=True).shape == (2, 1)
    assert x.argmax(1).dtype == mt.int64 and not x.argmax(1).requires_grad


def test_repeated_dim_raises():
    x = mt.zeros(2, 3)
    with pytest.raises(ValueError, match="repeated"):
        x.sum((1, -1))


def test_std_of_a_constant_has_zero_gradient_not_nan():
    x = mt.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], dtype=mt.float64, requires_grad=True)
    s = x.std(1)
    assert s.tolist()[0] == 0.0
    s.backward(mt.tensor([1.0, 1.0], dtype=mt.float64))
    assert np.all(np.isfinite(x.grad.numpy()))
    np.testing.assert_array_equal(x.grad.numpy()[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(x.grad.numpy()[1], [-0.5, 0.0, 0.5], rtol=1e-12)


def test_max_min_argmax_of_a_0d_tensor_along_dim_0():
    x = mt.tensor(3.0, requires_grad=True)
    values, indices = x.max(0)
    assert values.shape == () and values.item() == 3.0 and indices.shape == () and indices.item() == 0
    assert x.min(-1, keepdim=True).values.shape == ()
    assert x.argmax(0).item() == 0 and x.argmin(-1).shape == ()
    values.backward()
    assert x.grad.item() == 1.0
    with pytest.raises(ValueError, match="dim"):
        x.max(1)


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("data", [[1, 2], [True, False]])
def test_integer_and_bool_tensors_have_no_mean_var_std_as_pytorch(name: str, data: list) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="dtype") as got:
        getattr(mt.tensor(data), name)()
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.tensor(data), name)()
    assert str(expected.value).split(".")[0] in str(got.value)  # PyTorch's message, then advice


def test_the_mean_of_an_integer_tensor_with_a_dtype_is_computed_in_it() -> None:
    got = mt.tensor([1, 2]).mean(dtype=mt.float64)
    assert got.dtype == mt.float64 and got.item() == 1.5


@pytest.mark.parametrize(
    "data",
    [[[1.5, -2.0, 0.5], [3.0, 0.7, -1.2]], [[1.5, 0.0, 0.5], [3.0, 0.7, -1.2]], [[0.0, 2.0, 0.0], [1.0, 1.0, 2.0]]],
    ids=["no-zero", "one-zero", "two-zeros"],
)
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_gradients_to_second_order_with_and_without_zeros(data, dim) -> None:
    torch = pytest.importorskip("torch")
    from op_checks import check_op

    if dim is None:
        check_op(lambda x: x.prod(), lambda x: x.prod(), np.array(data))
    else:
        check_op(lambda x: x.prod(dim, keepdim=True), lambda x: x.prod(dim, keepdim=True), np.array(data))
    for name in ("int32", "bool", "float16"):
        got, expected = (
            mt.tensor([[1, 2], [3, 0]], dtype=name).prod(1),
            torch.tensor([[1, 2], [3, 0]]).to(getattr(torch, name)).prod(1),
        )
        assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def _special_rows(rng) -> np.ndarray:
    """(3, 4, 6) logits whose last-dim rows include all -inf, a +inf, a NaN and huge values."""
    x = 3 * rng.standard_normal((3, 4, 6))
    x[0, 0] = -np.inf
    x[0, 1, 2] = np.inf
    x[1, 2, 3] = np.nan
    x[2, 3] = [1e4, -1e4, 1e4 - 1, 0, 5, -np.inf]
    return x


@pytest.mark.parametrize("dims, keepdim", [(-1, False), (-1, True), (1, False), (0, True), ((1, 2), False)])
def test_matches_torch_with_non_finite_rows(jit_path, rng, dims, keepdim) -> None:
    torch = pytest.importorskip("torch")
    x = _special_rows(rng)
    a = mt.tensor(x, dtype=mt.float64, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's path warns on inf - inf)
        out = a.logsumexp(dims, keepdim=keepdim)
        want = b.logsumexp(dims, keepdim=keepdim)
        g = rng.standard_normal(tuple(want.shape))
        out.backward(mt.tensor(g, dtype=mt.float64))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-13, atol=0)
    # (PyTorch's exp(x - lse) loses ~1e-12 where |x| is 1e4; the kernel's softmax shifts by the max)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize("shape, dim", [((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), -1), ((4, 4), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_gradcheck_and_gradgradcheck(jit_path, rng, shape, dim, keepdim) -> None:
    x = mt.tensor(rng.standard_normal(shape), dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda t: t.logsumexp(dim, keepdim=keepdim), x)
    assert gradgradcheck(lambda t: t.logsumexp(dim, keepdim=keepdim).tanh(), x)


def test_a_wrong_first_order_backward_fails_gradcheck(rng, monkeypatch) -> None:
    """The gradcheck above can fail: a kernel softmax along the wrong dim is caught."""
    from minitensor import backend

    real = backend.logsumexp
    monkeypatch.setattr(backend, "logsumexp", lambda x, dim: (real(x, dim)[0], real(x, 0)[1]))
    x = mt.tensor(rng.standard_normal((3, 3)), dtype=mt.float64, requires_grad=True)
    assert not gradcheck(lambda t: t.logsumexp(1), x, raise_exception=False)


def test_float32_and_vectors(jit_path, rng) -> None:
    x = mt.tensor(rng.standard_normal(7), dtype=mt.float32, requires_grad=True)
    y = x.logsumexp(0)
    y.backward()
    assert y.shape == () and y.dtype == x.grad.dtype == mt.float32
    np.testing.assert_allclose(x.grad.numpy().sum(), 1.0, rtol=1e-6)
