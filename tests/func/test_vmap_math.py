"""``func.vmap`` and ``func.jacfwd`` over the math and linear-algebra ops (ops/trig.py, hyperbolic.py,
special.py, gamma.py, binary_math.py, more_math.py, scan.py, solve.py, determinant.py, decompositions.py):
their batching rules (elementwise, shift, leading) against ``torch.func.vmap`` and a Python loop, and
their JVP rules under vmap (``jacfwd``, and ``jacfwd`` of ``jacfwd``: the rules on Tensors) against
``torch.func``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_trees_close, run_on_both

import minitensor as mt
import minitensor.func as mf
from minitensor.autograd import batching

rng = np.random.default_rng(31)
X = rng.standard_normal((4, 3, 3))  # (a batch of 4 examples, each 3 x 3)
W = rng.standard_normal((3, 3))  # (shared by the examples)


def _spd(L, a):
    """A symmetric positive-definite matrix of a square one."""
    return a @ a.mT + 3 * L.eye(a.shape[-1], dtype=L.float64)


RULES = {
    # name: f(L, one example (3, 3), the shared (3, 3)); each op's rule runs the whole batch at once
    "trig": lambda L, x, w: L.tan(x * 0.5) + L.asin(L.tanh(x)) + L.acos(L.tanh(w)) + L.atan(x) + L.atan2(x, w),
    "hyperbolic": lambda L, x, w: L.sinh(x) + L.cosh(x) + L.asinh(x) + L.acosh(x * x + 1.5) + L.atanh(L.tanh(x) * 0.9),
    "special": lambda L, x, w: L.erfc(x) + L.erfinv(L.tanh(x) * 0.9) + L.logit(L.sigmoid(x)) + L.sinc(x) + L.i0(x),
    "gamma": lambda L, x, w: L.lgamma(x * x + 0.5) + L.digamma(x * x + 0.5) + L.polygamma(2, x * x + 0.5),
    "binary": lambda L, x, w: (
        L.hypot(x, w) + L.logaddexp(x, w) + L.logaddexp2(x, w) + L.copysign(x, w) + L.xlogy(x, w * w + 0.1)
    ),
    "nan_to_num": lambda L, x, w: L.nan_to_num(L.log(x), neginf=-5.0, nan=1.0),
    "scan": lambda L, x, w: L.cumprod(x, 1) + L.logcumsumexp(x, 0),
    "inv_det": lambda L, x, w: L.linalg.inv(_spd(L, x)) * L.linalg.det(x),
    "solve_shared_rhs": lambda L, x, w: L.linalg.solve(_spd(L, x), w),
    "solve_triangular": lambda L, x, w: L.linalg.solve_triangular(_spd(L, x), w, upper=True),
    "cholesky_qr": lambda L, x, w: L.linalg.cholesky(_spd(L, x)) + L.linalg.qr(x).R,
    "eigh_svd_values": lambda L, x, w: L.linalg.eigvalsh(x + x.mT) + L.linalg.svdvals(x),
    "pinv": lambda L, x, w: L.linalg.pinv(x),
}


def _looped(f, x, w):
    return mt.stack([f(mt, x[i], w) for i in range(x.shape[0])])


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_batching_rule_gives_the_loop_and_torch_func(name: str) -> None:
    f = RULES[name]
    ours, theirs = run_on_both(lambda L: _vmapped(L, f))
    assert_trees_close(ours, theirs, rtol=1e-10, atol=1e-12)
    with mt.no_grad():
        expected = _looped(f, mt.tensor(X, dtype=mt.float64), mt.tensor(W, dtype=mt.float64))
    np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def _vmapped(L, f):
    func = mf if L is mt else L.func
    x, w = L.tensor(X, dtype=L.float64), L.tensor(W, dtype=L.float64)
    return func.vmap(lambda e: f(L, e, w))(x)


def test_the_rules_run_without_the_loop_fallback(monkeypatch) -> None:
    monkeypatch.setattr(batching, "_warned", set())  # (every fallback warns again, whatever ran before)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in RULES.values():
            _vmapped(mt, f)


PER_EXAMPLE = {
    # name: f(L, one example (3, 3)); functions that read the values run once per example (with a warning)
    "slogdet_logdet": lambda L, x: L.linalg.slogdet(x).logabsdet + L.logdet(_spd(L, x)),
    "order_statistics": lambda L, x: L.kthvalue(x, 2, 1).values + L.median(x, 0).values + L.quantile(x, 0.3, dim=1),
    "running_extrema": lambda L, x: L.cummax(x, 1).values - L.cummin(x, 0).values,
    "nan_sums": lambda L, x: L.nansum(L.log(x), 1) + L.nanmean(L.log(x), 0),
}


@pytest.mark.parametrize("name", sorted(PER_EXAMPLE))
def test_functions_that_read_values_run_per_example(name: str) -> None:
    f = PER_EXAMPLE[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (the per-example loop's warning)
        ours, theirs = run_on_both(lambda L: _vmapped(L, lambda L, x, w: f(L, x)))
    assert_trees_close(ours, theirs, rtol=1e-10, atol=1e-12)


JACOBIANS = {
    # name: f of one (3, 3) matrix; jacfwd pushes a batch of 9 tangents through the JVP rules under vmap
    "det": lambda L, a: L.linalg.det(a),
    "cholesky": lambda L, a: L.linalg.cholesky(_spd(L, a)),
    "eigvalsh": lambda L, a: L.linalg.eigvalsh(a + a.mT),
    "svd_projector": lambda L, a: (lambda u: u @ u.mT)(L.linalg.svd(a, full_matrices=False).U[:, :2]),
    "cumprod_lgamma": lambda L, a: L.cumprod(L.lgamma(a * a + 0.5), 0),
}


@pytest.mark.parametrize("name", sorted(JACOBIANS))
def test_jacfwd_matches_torch_func(name: str) -> None:
    f = JACOBIANS[name]
    ours, theirs = run_on_both(
        lambda L: (mf if L is mt else L.func).jacfwd(lambda a: f(L, a))(L.tensor(W, dtype=L.float64))
    )
    assert_trees_close(ours, theirs, rtol=1e-9, atol=1e-11)


HESSIANS = {
    # name: a scalar f of one (3, 3) matrix; jacfwd of jacfwd runs the JVP rules on Tensors, under two vmaps
    "det": lambda L, a: L.linalg.det(a),
    "cholesky_qr": lambda L, a: L.linalg.cholesky(_spd(L, a)).sum() + L.linalg.qr(a).R.sum(),
    "logcumsumexp_cumprod": lambda L, a: L.logcumsumexp(a, 0).sum() + L.cumprod(a, 1).sum(),
}


@pytest.mark.parametrize("name", sorted(HESSIANS))
def test_forward_over_forward_hessian_matches_torch_func(name: str) -> None:
    f = HESSIANS[name]

    def hessian(L):  # (PyTorch's: its hessian, jacfwd of jacrev; its jacfwd of jacfwd of det is wrong)
        outer, inner = (mf.jacfwd, mf.jacfwd) if L is mt else (L.func.jacfwd, L.func.jacrev)
        return outer(inner(lambda a: f(L, a)))(L.tensor(W, dtype=L.float64))

    ours, theirs = run_on_both(hessian)
    assert_trees_close(ours, theirs, rtol=1e-9, atol=1e-10)


def test_casting_to_an_integer_or_bool_dtype_batches_as_torch_func() -> None:
    """``to(int64)``, ``long()``, ``int()``, ``bool()`` inside vmap (nested too): every example's values
    cast at once, as torch.func's (it read one example's values directly and raised)."""
    torch = pytest.importorskip("torch")
    x = np.array([[1.5, -2.7, 0.0], [3.2, 0.4, -0.6]], dtype=np.float32)

    def f(L, r):
        return r.to(L.int64) * 2 + r.long() + r.int().to(L.int64) + r.bool().to(L.int64)

    ours = mf.vmap(lambda r: f(mt, r))(mt.tensor(x))
    theirs = torch.func.vmap(lambda r: f(torch, r))(torch.tensor(x))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    nested = mf.vmap(mf.vmap(lambda v: v.to(mt.int64)))(mt.tensor(x))
    np.testing.assert_array_equal(nested.numpy(), x.astype(np.int64))
