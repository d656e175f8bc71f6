"""PyTorch as an oracle: every core op, same inputs, same upstream gradient.

Each case is written once as ``fn(lib, *inputs)`` where ``lib`` is ``minitensor``
or ``torch`` (the APIs agree), so the very same expression runs in both.
Forward values and the gradient of every input must match: within 1e-10 in
float64, within 1e-5 (relative to the tensor's scale) in float32.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

torch = pytest.importorskip("torch")


def _values(rng: np.random.Generator, shape: tuple, kind: str) -> np.ndarray:
    """float64 values of ``kind``: normal, positive, away from 0, distinct, away from +-0.5."""
    if kind == "pos":
        return rng.uniform(0.5, 2.0, shape)
    x = rng.standard_normal(shape)
    if kind == "away":  # relu, abs, division
        return np.where(x >= 0, x + 0.1, x - 0.1)
    if kind == "distinct":  # max/min without ties
        n = int(np.prod(shape))
        return ((rng.permutation(n) + rng.uniform(0.1, 0.3, n)) / max(n, 1) * 4 - 2).reshape(shape)
    if kind == "clamp":  # at least 0.05 away from the bounds -0.5 and 0.5
        return np.where(np.abs(np.abs(x) - 0.5) < 0.05, x * 1.3, x)
    return x


MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
COND = np.array([[True], [False], [True]])
INDEX = np.array([2, 0, 2, 2, 1])

# id -> (fn(lib, *xs), [(shape, kind), ...])
CASES = {
    # elementwise, broadcasting
    "add": (lambda L, a, b: a + b, [((3, 1, 4), "n"), ((2, 4), "n")]),
    "sub": (lambda L, a, b: a - b, [((4,), "n"), ((3, 4), "n")]),
    "mul": (lambda L, a, b: a * b, [((3, 4), "n"), ((3, 1), "n")]),
    "div": (lambda L, a, b: a / b, [((2, 3, 4), "n"), ((1, 4), "away")]),
    "pow": (lambda L, a, b: a**b, [((3, 4), "pos"), ((4,), "n")]),
    "pow_scalar": (lambda L, a: a**2.5, [((3, 4), "pos")]),
    "pow_int": (lambda L, a: a**3, [((3, 4), "n")]),
    "rpow": (lambda L, a: 2.0**a, [((3, 4), "n")]),
    "pow_zero_base": (
        lambda L, a, b: (a * L.tensor(np.array([0.0, 1.0, 0.0, 1.0]))) ** (b + 0.5),
        [((4,), "pos"), ((4,), "pos")],
    ),
    "rsub": (lambda L, a: 1.5 - a, [((3, 4), "n")]),
    "rdiv": (lambda L, a: 2.0 / a, [((3, 4), "away")]),
    "neg": (lambda L, a: -a, [((3, 4), "n")]),
    "exp": (lambda L, a: a.exp(), [((3, 4), "n")]),
    "log": (lambda L, a: a.log(), [((3, 4), "pos")]),
    "sqrt": (lambda L, a: a.sqrt(), [((3, 4), "pos")]),
    "abs": (lambda L, a: a.abs(), [((3, 4), "away")]),
    "tanh": (lambda L, a: a.tanh(), [((3, 4), "n")]),
    "sigmoid": (lambda L, a: a.sigmoid(), [((3, 4), "n")]),
    "relu": (lambda L, a: a.relu(), [((3, 4), "away")]),
    "clamp": (lambda L, a: a.clamp(-0.5, 0.5), [((3, 4), "clamp")]),
    "clamp_min": (lambda L, a: a.clamp(min=-0.5), [((3, 4), "clamp")]),
    "composite": (lambda L, a, b: (a * b + a.exp()).tanh() * a, [((3, 4), "n"), ((4,), "n")]),
    # reductions
    "sum": (lambda L, a: a.sum(), [((3, 4), "n")]),
    "sum_dim": (lambda L, a: a.sum(1), [((2, 3, 4), "n")]),
    "sum_dims_keepdim": (lambda L, a: a.sum((0, -1), keepdim=True), [((2, 3, 4), "n")]),
    "mean": (lambda L, a: a.mean(), [((3, 4), "n")]),
    "mean_dim": (lambda L, a: a.mean(-1, keepdim=True), [((2, 3, 4), "n")]),
    "var": (lambda L, a: a.var(), [((3, 4), "n")]),
    "var_dim_biased": (lambda L, a: a.var(1, unbiased=False), [((2, 3, 4), "n")]),
    "var_dims_keepdim": (lambda L, a: a.var((0, 2), keepdim=True), [((2, 3, 4), "n")]),
    "std": (lambda L, a: a.std(), [((3, 4), "n")]),
    "std_dim_biased": (lambda L, a: a.std(0, unbiased=False), [((3, 4), "n")]),
    "std_constant_row": (lambda L, a: (a * L.tensor(np.array([[0.0], [1.0], [1.0]]))).std(1), [((3, 4), "n")]),
    "amax": (lambda L, a: a.amax(1), [((3, 4), "distinct")]),
    "amax_dims": (lambda L, a: a.amax((0, 2), keepdim=True), [((2, 3, 4), "distinct")]),
    "amin": (lambda L, a: a.amin(-1), [((3, 4), "distinct")]),
    "max": (lambda L, a: a.max(), [((3, 4), "distinct")]),
    "min": (lambda L, a: a.min(), [((3, 4), "distinct")]),
    "max_dim": (lambda L, a: a.max(1).values, [((3, 4), "distinct")]),
    "min_dim_keepdim": (lambda L, a: a.min(0, keepdim=True).values, [((3, 4), "distinct")]),
    "logsumexp": (lambda L, a: a.logsumexp(-1), [((3, 4), "n")]),
    "logsumexp_dims": (lambda L, a: a.logsumexp((0, 1), keepdim=True), [((2, 3, 4), "n")]),
    "softmax": (lambda L, a: a.softmax(-1), [((2, 3, 4), "n")]),
    "softmax_dim0": (lambda L, a: a.softmax(0), [((3, 4), "n")]),
    "log_softmax": (lambda L, a: a.log_softmax(1), [((2, 3, 4), "n")]),
    # shape ops
    "reshape": (lambda L, a: a.reshape(4, -1), [((2, 3, 4), "n")]),
    "view": (lambda L, a: a.view(2, 12), [((2, 3, 4), "n")]),
    "flatten": (lambda L, a: a.flatten(1), [((2, 3, 4), "n")]),
    "squeeze": (lambda L, a: a.squeeze(1), [((3, 1, 4), "n")]),
    "unsqueeze": (lambda L, a: a.unsqueeze(-1), [((3, 4), "n")]),
    "permute": (lambda L, a: a.permute(2, 0, 1), [((2, 3, 4), "n")]),
    "transpose": (lambda L, a: a.transpose(0, -1), [((2, 3, 4), "n")]),
    "T": (lambda L, a: a.T, [((3, 4), "n")]),
    "expand": (lambda L, a: a.expand(2, 3, 4), [((3, 1), "n")]),
    "getitem_basic": (lambda L, a: a[1:, None, ..., 0], [((3, 4, 2), "n")]),
    "getitem_int": (lambda L, a: a[-1, 2], [((3, 4), "n")]),
    "getitem_repeated": (lambda L, a: a[L.tensor(INDEX)], [((3, 4), "n")]),
    "getitem_list": (lambda L, a: a[:, [3, 3, 0]], [((3, 4), "n")]),
    "getitem_mask": (lambda L, a: a[L.tensor(MASK)], [((3, 4), "n")]),
    "chunk": (lambda L, a: a.chunk(3, 1), [((2, 5), "n")]),
    "split": (lambda L, a: a.split(2, 0), [((5, 3), "n")]),
    "cat": (lambda L, a, b: L.cat([a, b, a], 1), [((2, 3), "n"), ((2, 1), "n")]),
    "stack": (lambda L, a, b: L.stack([a, b], -1), [((2, 3), "n"), ((2, 3), "n")]),
    "where": (lambda L, a, b: L.where(L.tensor(COND), a, b), [((3, 4), "n"), ((4,), "n")]),
    "masked_fill": (lambda L, a: a.masked_fill(L.tensor(MASK), -1.5), [((3, 4), "n")]),
    # matmul
    "matmul_2d": (lambda L, a, b: a @ b, [((3, 4), "n"), ((4, 2), "n")]),
    "matmul_batched": (lambda L, a, b: a @ b, [((2, 1, 3, 4), "n"), ((5, 4, 2), "n")]),
    "matmul_batch_weight": (lambda L, a, b: a @ b, [((2, 3, 4), "n"), ((4, 5), "n")]),
    "matmul_weight_batch": (lambda L, a, b: a @ b, [((3, 4), "n"), ((2, 4, 5), "n")]),
    "matmul_vec_left": (lambda L, a, b: a @ b, [((4,), "n"), ((2, 4, 3), "n")]),
    "matmul_vec_right": (lambda L, a, b: a @ b, [((2, 3, 4), "n"), ((4,), "n")]),
    "matmul_dot": (lambda L, a, b: L.matmul(a, b), [((4,), "n"), ((4,), "n")]),
}


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _run_both(name: str, dtype: np.dtype, seed: int):
    """Forward and gradients of case ``name`` in minitensor and in torch."""
    fn, specs = CASES[name]
    rng = np.random.default_rng(seed)
    arrays = [_values(rng, shape, kind).astype(dtype) for shape, kind in specs]
    mt_in = [mt.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    th_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    mt_out, th_out = _as_tuple(fn(mt, *mt_in)), _as_tuple(fn(torch, *th_in))
    upstream = [rng.standard_normal(tuple(o.shape)).astype(dtype) for o in th_out]
    mt_grads = mt.autograd.grad(mt_out, mt_in, [mt.tensor(g, dtype=dtype) for g in upstream], allow_unused=True)
    th_grads = torch.autograd.grad(th_out, th_in, [torch.tensor(g) for g in upstream], allow_unused=True)
    return mt_out, th_out, mt_grads, th_grads, arrays


def _close(actual: np.ndarray, expected: np.ndarray, dtype: np.dtype, what: str) -> None:
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != torch's {expected.shape}"
    assert actual.dtype == dtype, f"{what}: dtype {actual.dtype}, expected {dtype}"
    if dtype == np.float64:
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-10, err_msg=what)
    else:
        scale = float(np.max(np.abs(expected), initial=1.0))
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale, err_msg=what)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, seed, dtype):
    dtype = np.dtype(dtype)
    mt_out, th_out, mt_grads, th_grads, arrays = _run_both(name, dtype, seed)
    assert len(mt_out) == len(th_out)
    for k, (m, t) in enumerate(zip(mt_out, th_out)):
        _close(m.numpy(), t.detach().numpy(), dtype, f"{name}: output {k}")
    for i, (gm, gt) in enumerate(zip(mt_grads, th_grads)):
        expected = np.zeros_like(arrays[i]) if gt is None else gt.numpy()
        actual = np.zeros_like(arrays[i]) if gm is None else gm.numpy()
        _close(actual, expected, dtype, f"{name}: gradient of input {i}")


@pytest.mark.parametrize(
    "fn",
    [
        lambda L, a: a.max(1).indices,
        lambda L, a: a.min(0, keepdim=True).indices,
        lambda L, a: a.argmax(),
        lambda L, a: a.argmin(1),
        lambda L, a: a.argmax(-1, keepdim=True),
        lambda L, a: a > 0.1,
        lambda L, a: 0.2 <= a,
        lambda L, a: a == a[0],
    ],
)
def test_non_differentiable_results_match_torch(fn):
    a = _values(np.random.default_rng(5), (3, 4), "distinct")
    mine, theirs = fn(mt, mt.tensor(a, dtype=mt.float64)), fn(torch, torch.tensor(a))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert not mine.requires_grad


def test_backward_accumulates_like_torch():
    """``.backward`` twice (retain_graph) and a diamond graph: the same ``.grad`` as torch."""
    a = np.random.default_rng(6).standard_normal((3, 4))
    grads = []
    for lib, dtype in ((mt, mt.float64), (torch, torch.float64)):
        x = lib.tensor(a, dtype=dtype, requires_grad=True)
        h = x.tanh()
        y = (h * x.exp() + h.softmax(-1) * h).sum()
        y.backward(retain_graph=True)
        y.backward()
        grads.append(x.grad.numpy() if lib is mt else x.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


BROADCAST_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 0.5),
    "pow": lambda a, b: (a.abs() + 0.5) ** b,
    "composite": lambda a, b: (a * b).tanh() + a.exp() * b,
}


def _grads_both(fn, arrays: list, upstream_seed: int):
    """fn on float64 copies in both libraries; returns (outputs, grads) for each."""
    results = []
    for lib in (mt, torch):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(*xs)
        g = np.random.default_rng(upstream_seed).standard_normal(tuple(out.shape))
        grads = lib.autograd.grad([out], xs, [lib.tensor(g, dtype=lib.float64)])
        results.append((out.detach().numpy(), [x.detach().numpy() for x in grads]))
    return results


@pytest.mark.parametrize("name", sorted(BROADCAST_OPS))
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3), seed=st.integers(0, 2**16))
def test_broadcast_binary_ops_match_torch(name, shapes, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes.input_shapes]
    (out_m, grads_m), (out_t, grads_t) = _grads_both(BROADCAST_OPS[name], arrays, seed)
    np.testing.assert_allclose(out_m, out_t, rtol=1e-10, atol=1e-10)
    for gm, gt in zip(grads_m, grads_t):
        assert gm.shape == gt.shape
        np.testing.assert_allclose(gm, gt, rtol=1e-10, atol=1e-10)


@given(
    batch=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    mkn=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
    vec=st.sampled_from(["none", "left", "right", "both"]),
    seed=st.integers(0, 2**16),
)
def test_matmul_matches_torch(batch, mkn, vec, seed):
    m, k, n = mkn
    sa = (k,) if vec in ("left", "both") else batch.input_shapes[0] + (m, k)
    sb = (k,) if vec in ("right", "both") else batch.input_shapes[1] + (k, n)
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(sa), rng.standard_normal(sb)]
    (out_m, grads_m), (out_t, grads_t) = _grads_both(lambda a, b: a @ b, arrays, seed)
    np.testing.assert_allclose(out_m, out_t, rtol=1e-10, atol=1e-10)
    for gm, gt in zip(grads_m, grads_t):
        assert gm.shape == gt.shape
        np.testing.assert_allclose(gm, gt, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "amax", "logsumexp"])
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=3), data=st.data(), seed=st.integers(0, 2**16))
def test_reductions_over_random_dims_match_torch(op, shape, data, seed):
    ndim = len(shape)
    dims = tuple(
        data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim, unique_by=lambda d: d % ndim))
    )
    keepdim = data.draw(st.booleans())
    if op in ("var", "std"):  # at least 2 elements per output: no division by zero
        assume(int(np.prod([shape[d] for d in dims])) >= 2)
    rng = np.random.default_rng(seed)
    a = _values(rng, shape, "distinct")
    (out_m, (gm,)), (out_t, (gt,)) = _grads_both(lambda x: getattr(x, op)(dims, keepdim=keepdim), [a], seed)
    np.testing.assert_allclose(out_m, out_t, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gm, gt, rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------ second order
# Cases main cannot differentiate twice yet (each pinned elsewhere, remove when fixed):
SECOND_ORDER_PENDING = {
    "pow_zero_base": "at a zero base the second derivative meets 0 * inf (undefined): PyTorch and minitensor "
    "put NaN at different ones of those points; first order matches, and Tensor ** Tensor away from 0 is compared",
}
SECOND_ORDER_CASES = sorted(set(CASES) - set(SECOND_ORDER_PENDING))


def _second_order(lib, name: str, arrays: list, seed: int):
    """d/d(inputs, upstream) of <w, grad(outputs, inputs, upstream, create_graph=True)> in ``lib``."""
    fn, _ = CASES[name]
    rng = np.random.default_rng(seed + 100)
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    outs = _as_tuple(fn(lib, *xs))
    ups = [lib.tensor(rng.standard_normal(tuple(o.shape)), dtype=lib.float64, requires_grad=True) for o in outs]
    grads = lib.autograd.grad(outs, xs, ups, create_graph=True, allow_unused=True)
    total = sum(
        (g * lib.tensor(rng.standard_normal(tuple(g.shape)), dtype=lib.float64)).sum()
        for g in grads
        if g is not None and g.requires_grad
    )
    if not isinstance(total, (mt.Tensor, torch.Tensor)):
        return [None] * (len(xs) + len(ups))
    return lib.autograd.grad(total, xs + ups, allow_unused=True)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", SECOND_ORDER_CASES)
def test_second_derivatives_match_torch(name, seed):
    """The double backward (w.r.t. the inputs and the upstream gradient) equals torch's."""
    _, specs = CASES[name]
    rng = np.random.default_rng(seed)
    arrays = [_values(rng, shape, kind) for shape, kind in specs]
    ours, theirs = _second_order(mt, name, arrays, seed), _second_order(torch, name, arrays, seed)
    for i, (gm, gt) in enumerate(zip(ours, theirs)):
        expected = None if gt is None else gt.detach().numpy(force=True)  # force: torch's ZeroTensor
        actual = None if gm is None else gm.numpy()
        if name == "std_constant_row" and expected is not None:
            # torch's double backward gives NaN (0/0) for the constant row; minitensor's
            # std gradient there is 0 by design (tests/ops/test_reduce.py), so is its derivative
            assert np.all(actual[np.isnan(expected)] == 0), f"{name}: second-order term {i}"
            expected = np.where(np.isnan(expected), 0.0, expected)
        if expected is None and actual is None:
            continue
        if expected is None or actual is None:  # one side knows the term is zero, the other may compute zeros
            assert np.all((expected if actual is None else actual) == 0), f"{name}: second-order term {i}"
            continue
        _close(actual, expected, np.dtype(np.float64), f"{name}: second-order term {i}")


@pytest.mark.parametrize("name", SECOND_ORDER_CASES)
def test_gradgradcheck(name):
    fn, specs = CASES[name]
    rng = np.random.default_rng(2)
    xs = [mt.tensor(_values(rng, shape, kind), dtype=mt.float64, requires_grad=True) for shape, kind in specs]
    assert mt.autograd.gradgradcheck(lambda *a: fn(mt, *a), xs)


def _second_order_both(fn, arrays: list, seed: int) -> list:
    """For each library: d/d(inputs, upstream) of <w, grad(fn(inputs), inputs, upstream, create_graph=True)>,
    as arrays (zeros where the library reports no dependence)."""
    results = []
    for lib in (mt, torch):
        rng = np.random.default_rng(seed)
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(*xs)
        up = lib.tensor(rng.standard_normal(tuple(out.shape)), dtype=lib.float64, requires_grad=True)
        gs = lib.autograd.grad([out], xs, [up], create_graph=True)
        weights = [lib.tensor(rng.standard_normal(tuple(g.shape)), dtype=lib.float64) for g in gs]
        total = sum((g * w).sum() for g, w in zip(gs, weights) if g.requires_grad)
        found = lib.autograd.grad(total, [*xs, up], allow_unused=True)
        results.append(
            [
                np.zeros(tuple(t.shape)) if d is None else (d.detach().numpy(force=True) if lib is torch else d.numpy())
                for d, t in zip(found, [*xs, up])
            ]
        )
    return results


@pytest.mark.parametrize("name", sorted(BROADCAST_OPS))
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3), seed=st.integers(0, 2**16))
def test_broadcast_binary_ops_second_order_match_torch(name, shapes, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes.input_shapes]
    ours, theirs = _second_order_both(BROADCAST_OPS[name], arrays, seed)
    for m, t in zip(ours, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-10)


@given(
    batch=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    mkn=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
    vec=st.sampled_from(["none", "left", "right", "both"]),
    seed=st.integers(0, 2**16),
)
def test_matmul_second_order_matches_torch(batch, mkn, vec, seed):
    m, k, n = mkn
    sa = (k,) if vec in ("left", "both") else batch.input_shapes[0] + (m, k)
    sb = (k,) if vec in ("right", "both") else batch.input_shapes[1] + (k, n)
    rng = np.random.default_rng(seed)
    ours, theirs = _second_order_both(
        lambda a, b: (a @ b).tanh(), [rng.standard_normal(sa), rng.standard_normal(sb)], seed
    )
    for m_, t in zip(ours, theirs):
        np.testing.assert_allclose(m_, t, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "amax", "logsumexp"])
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=3), data=st.data(), seed=st.integers(0, 2**16))
def test_reductions_second_order_over_random_dims_match_torch(op, shape, data, seed):
    ndim = len(shape)
    dims = tuple(
        data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim, unique_by=lambda d: d % ndim))
    )
    keepdim = data.draw(st.booleans())
    if op in ("var", "std"):
        assume(int(np.prod([shape[d] for d in dims])) >= 2)
    a = _values(np.random.default_rng(seed), shape, "distinct")
    # .tanh() after the reduction: a nonzero second derivative even for the linear reductions
    ours, theirs = _second_order_both(lambda x: getattr(x, op)(dims, keepdim=keepdim).tanh(), [a], seed)
    for m, t in zip(ours, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-10)
