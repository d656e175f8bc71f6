"""Pooling (``ops/pooling.py``, ``nn/functional/pooling.py``): max, average, adaptive, LP pooling and
max unpooling.  Each form: float64 gradcheck and second-order gradcheck, PyTorch as the oracle for
the output, the gradient and the second derivative (``check_op``), and a hypothesis sweep over the
pooling parameters against PyTorch (values, indices, gradients); ties route as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_checks import check_op

import minitensor as mt
import minitensor.autograd.forward_ad as fwAD
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")
tF = torch.nn.functional

rng = np.random.default_rng(3)
X2 = rng.standard_normal((2, 2, 5, 6))  # (N, C, H, W)
X1 = rng.standard_normal((2, 3, 7))  # (N, C, L)

MAX2D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": (2, 3), "stride": (1, 2), "padding": (1, 0), "dilation": (2, 1)},
]
AVG2D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
    {"kernel_size": (2, 3), "stride": 1, "padding": (1, 1), "divisor_override": 4},
]


@pytest.mark.parametrize("kw", MAX2D, ids=str)
def test_max_pool2d(kw) -> None:
    check_op(lambda x: F.max_pool2d(x, **kw), lambda x: tF.max_pool2d(x, **kw), X2)


def test_max_pool1d_unbatched_with_dilation() -> None:
    kw = {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True}
    check_op(lambda x: F.max_pool1d(x, **kw), lambda x: tF.max_pool1d(x, **kw), X1[0])


@pytest.mark.parametrize("kw", AVG2D, ids=str)
def test_avg_pool2d(kw) -> None:
    check_op(lambda x: F.avg_pool2d(x, **kw), lambda x: tF.avg_pool2d(x, **kw), X2)


def test_avg_pool1d() -> None:
    kw = {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}
    check_op(lambda x: F.avg_pool1d(x, **kw), lambda x: tF.avg_pool1d(x, **kw), X1)


@pytest.mark.parametrize("size", [(2, 4), (None, 3), 1])
def test_adaptive_pool2d(size) -> None:
    check_op(lambda x: F.adaptive_avg_pool2d(x, size), lambda x: tF.adaptive_avg_pool2d(x, size), X2[:, :1])
    check_op(lambda x: F.adaptive_max_pool2d(x, size), lambda x: tF.adaptive_max_pool2d(x, size), X2[0])


def test_adaptive_pool1d() -> None:
    check_op(lambda x: F.adaptive_avg_pool1d(x, 3), lambda x: tF.adaptive_avg_pool1d(x, 3), X1)
    check_op(lambda x: F.adaptive_max_pool1d(x, 4), lambda x: tF.adaptive_max_pool1d(x, 4), X1[0])


def test_lp_pool() -> None:
    pos = np.abs(X2[:1]) + 0.5  # (x^p of a negative x with a fractional p is NaN in both libraries)
    check_op(lambda x: F.lp_pool2d(x, 2.5, 2, stride=1), lambda x: tF.lp_pool2d(x, 2.5, 2, stride=1), pos)
    check_op(lambda x: F.lp_pool1d(x, 3, 2), lambda x: tF.lp_pool1d(x, 3, 2), np.abs(X1) + 0.5)


def test_max_unpool2d_is_differentiable_in_its_values() -> None:
    _, idx = tF.max_pool2d(torch.tensor(X2), 2, stride=2, return_indices=True)
    values = rng.standard_normal(idx.shape)
    mi = mt.tensor(idx.numpy())
    check_op(
        lambda v: F.max_unpool2d(v, mi, 2, output_size=(5, 6)),
        lambda v: tF.max_unpool2d(v, idx, 2, output_size=(5, 6)),
        values,
    )
    _, idx1 = tF.max_pool1d(torch.tensor(X1), 2, return_indices=True)
    mi1 = mt.tensor(idx1.numpy())
    check_op(
        lambda v: F.max_unpool1d(v, mi1, 2), lambda v: tF.max_unpool1d(v, idx1, 2), rng.standard_normal(idx1.shape)
    )


def test_ties_route_the_gradient_as_pytorch() -> None:
    """Equal maxima: the first of each window gets the gradient; overlapping windows that pick the
    same element add up; with return_indices the indices are PyTorch's."""
    x = np.round(rng.standard_normal((1, 2, 6, 6)))  # many ties
    x[0, 1] = 1.0  # a plane of one value
    for kw in [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1}]:
        xm, xt = mt.tensor(x, dtype=mt.float64, requires_grad=True), torch.tensor(x, requires_grad=True)
        (ym, im), (yt, it) = F.max_pool2d(xm, return_indices=True, **kw), tF.max_pool2d(xt, return_indices=True, **kw)
        np.testing.assert_array_equal(im.numpy(), it.numpy())
        g = rng.standard_normal(ym.shape)
        ym.backward(mt.tensor(g, dtype=mt.float64))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64], ids=str)
def test_dtype_is_kept_and_batched_equals_unbatched(dtype) -> None:
    x = mt.tensor(X2, dtype=dtype)
    for fn in (lambda t: F.max_pool2d(t, 2), lambda t: F.avg_pool2d(t, 3, 1, 1), lambda t: F.adaptive_avg_pool2d(t, 2)):
        assert fn(x).dtype == dtype
        np.testing.assert_array_equal(fn(x[1]).numpy(), fn(x)[1].numpy())


def test_empty_batch() -> None:
    for fn, tfn in [(F.max_pool2d, tF.max_pool2d), (F.avg_pool2d, tF.avg_pool2d)]:
        assert fn(mt.zeros(0, 3, 4, 4), 2).shape == tuple(tfn(torch.zeros(0, 3, 4, 4), 2).shape)
    assert F.adaptive_avg_pool2d(mt.zeros(2, 3, 4, 4), 0).shape == (2, 3, 0, 0)


def test_windows_that_step_over_the_input_give_minus_inf_pytorchs_indices_and_no_gradient(jit_path) -> None:
    """A dilated window over the padding can hold no tap of the input (on a 1-wide input: taps at -1
    and 1): its max is -inf and its index PyTorch's (the first tap past the padding, outside the
    plane).  It is a constant: no gradient, no tangent, no second derivative (PyTorch adds the
    gradient at that index, in the next plane's memory: docs/pytorch_ops.md)."""
    x = rng.standard_normal((2, 2, 3, 1))
    for fn, tfn, a, kw in [
        (F.max_pool2d, tF.max_pool2d, x, {"kernel_size": (1, 2), "padding": (0, 1), "dilation": (1, 2)}),
        (F.max_pool1d, tF.max_pool1d, x[0].reshape(2, 3, 1), {"kernel_size": 2, "padding": 1, "dilation": 2}),
    ]:  # fmt: skip
        xm = mt.tensor(a, dtype=mt.float64, requires_grad=True)
        y, index = fn(xm, return_indices=True, **kw)
        ty, tindex = tfn(torch.tensor(a), return_indices=True, **kw)
        np.testing.assert_array_equal(y.numpy(), ty.numpy())
        assert np.isneginf(y.numpy()).all()
        np.testing.assert_array_equal(index.numpy(), tindex.numpy())
        w = mt.tensor(rng.standard_normal(y.shape), dtype=mt.float64, requires_grad=True)
        (grad,) = mt.autograd.grad((y * w).sum(), xm, create_graph=True)
        np.testing.assert_array_equal(grad.numpy(), np.zeros(a.shape))
        second = mt.autograd.grad((grad * mt.tensor(a, dtype=mt.float64)).sum(), [xm, w], allow_unused=True)
        assert all(g is None or not g.numpy().any() for g in second)
        with fwAD.dual_level():
            tangent = fwAD.unpack_dual(fn(fwAD.make_dual(xm.detach(), mt.ones_like(xm)), **kw)).tangent
        assert tangent is None or not tangent.numpy().any()


# ------------------------------------------------------------------ a sweep against PyTorch
@st.composite
def sliding_cases(draw):
    """A valid sliding pooling of a (2, 2, H, W) input: kernel, stride, padding <= half the kernel,
    dilation, ceil_mode, and the (dilated) kernel fitting the padded input."""
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    size = tuple(
        max(d * (k - 1) + 1 - 2 * p, 1) + draw(st.integers(0, 4)) for k, d, p in zip(kernel, dilation, padding)
    )
    return size, {
        "kernel_size": kernel,
        "stride": stride,
        "padding": padding,
        "dilation": dilation,
        "ceil_mode": draw(st.booleans()),
    }


def _pair(x: np.ndarray) -> tuple:
    return mt.tensor(x, dtype=mt.float64, requires_grad=True), torch.tensor(x, requires_grad=True)


def _same_forward_and_backward(ym, yt, xm, xt) -> None:
    assert ym.shape == tuple(yt.shape)
    np.testing.assert_allclose(ym.numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(0).standard_normal(ym.shape)
    ym.backward(mt.tensor(g, dtype=mt.float64))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=25)
@given(case=sliding_cases(), seed=st.integers(0, 2**16), ties=st.booleans())
def test_max_pool_sweep_against_pytorch(case, seed, ties) -> None:
    size, kw = case
    x = np.random.default_rng(seed).standard_normal((2, 2, *size))
    x = np.round(x) if ties else x
    (xm, xt) = _pair(x)
    (ym, im), (yt, it) = F.max_pool2d(xm, return_indices=True, **kw), tF.max_pool2d(xt, return_indices=True, **kw)
    np.testing.assert_array_equal(im.numpy(), it.numpy())
    _same_forward_and_backward(ym, yt, xm, xt)


def _with_nan_inf_and_ties(x: np.ndarray, rng) -> np.ndarray:
    """x with a third of its values 1.0 (ties), some NaN and some -inf (windows of -inf only too)."""
    x = x.copy()
    x[rng.random(x.shape) < 0.3] = 1.0
    x[rng.random(x.shape) < 0.1] = np.nan
    x[rng.random(x.shape) < 0.2] = -np.inf
    return x


@settings(max_examples=25)
@given(case=sliding_cases(), seed=st.integers(0, 2**16), dtype=st.sampled_from(["float32", "float64"]))
def test_max_pool_nan_inf_and_ties_as_pytorch(case, seed, dtype) -> None:
    """PyTorch's rule where it matters most: a NaN wins (its last one in the window), the first of
    equal maxima wins, a window of -inf gives -inf at its first tap; values and indices, 2-D and
    1-D (the last row of the case), float32 (the kernels' path) and float64."""
    size, kw = case
    rng = np.random.default_rng(seed)
    x = _with_nan_inf_and_ties(rng.standard_normal((2, 3, *size)), rng).astype(dtype)
    (ym, im), (yt, it) = (
        F.max_pool2d(mt.tensor(x, dtype=getattr(mt, dtype)), return_indices=True, **kw),
        tF.max_pool2d(torch.tensor(x), return_indices=True, **kw),
    )
    np.testing.assert_array_equal(im.numpy(), it.numpy())
    np.testing.assert_array_equal(ym.numpy(), yt.numpy())  # (NaN where NaN)
    kw1 = {k: v[1] for k, v in kw.items() if k != "ceil_mode"} | {"ceil_mode": kw["ceil_mode"]}
    (ym, im), (yt, it) = (
        F.max_pool1d(mt.tensor(x[:, :, -1], dtype=getattr(mt, dtype)), return_indices=True, **kw1),
        tF.max_pool1d(torch.tensor(x[:, :, -1]), return_indices=True, **kw1),
    )
    np.testing.assert_array_equal(im.numpy(), it.numpy())
    np.testing.assert_array_equal(ym.numpy(), yt.numpy())


@settings(max_examples=15)
@given(
    size=st.tuples(st.integers(1, 40), st.integers(1, 80)),
    out=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    seed=st.integers(0, 2**16),
)
def test_adaptive_max_pool_nan_inf_and_ties_as_pytorch(size, out, seed) -> None:
    """Adaptive windows (two sizes each way; up to 80 wide: some of 64 taps or more), 2-D and 1-D,
    values and indices, with NaN, -inf and ties."""
    rng = np.random.default_rng(seed)
    x = _with_nan_inf_and_ties(rng.standard_normal((2, 2, *size)), rng).astype(np.float32)
    for fn, tfn, a, o in [
        (F.adaptive_max_pool2d, tF.adaptive_max_pool2d, x, out),
        (F.adaptive_max_pool1d, tF.adaptive_max_pool1d, x[:, :, 0], out[1]),
    ]:
        (ym, im), (yt, it) = fn(mt.tensor(a), o, return_indices=True), tfn(torch.tensor(a), o, return_indices=True)
        np.testing.assert_array_equal(im.numpy(), it.numpy())
        np.testing.assert_array_equal(ym.numpy(), yt.numpy())


@settings(max_examples=25)
@given(case=sliding_cases(), seed=st.integers(0, 2**16), include=st.booleans(), divisor=st.sampled_from([None, 3]))
def test_avg_pool_sweep_against_pytorch(case, seed, include, divisor) -> None:
    size, kw = case
    kw = {**kw, "count_include_pad": include, "divisor_override": divisor}
    kw.pop("dilation")
    size = tuple(max(s, k) for s, k in zip(size, kw["kernel_size"]))
    xm, xt = _pair(np.random.default_rng(seed).standard_normal((2, 2, *size)))
    _same_forward_and_backward(F.avg_pool2d(xm, **kw), tF.avg_pool2d(xt, **kw), xm, xt)


@settings(max_examples=15)
@given(
    size=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    out=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    seed=st.integers(0, 2**16),
    kind=st.sampled_from(["avg", "max"]),
)
def test_adaptive_pool_sweep_against_pytorch(size, out, seed, kind) -> None:
    xm, xt = _pair(np.random.default_rng(seed).standard_normal((1, 2, *size)))
    fn, tfn = (
        (F.adaptive_avg_pool2d, tF.adaptive_avg_pool2d)
        if kind == "avg"
        else (F.adaptive_max_pool2d, tF.adaptive_max_pool2d)
    )
    _same_forward_and_backward(fn(xm, out), tfn(xt, out), xm, xt)
