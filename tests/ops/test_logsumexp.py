"""logsumexp over one dim (the softmax kernel, its softmax kept for backward) and over several
(NumPy), on both kernel paths: against PyTorch with -inf/+inf/NaN rows, and differentiated twice."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck


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
