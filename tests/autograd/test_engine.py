"""autograd/engine.py, the backward engine: composite graphs, deep chains, accumulation,
``retain_graph`` and ``mt.autograd.grad`` (which runs only the part of the graph that leads to its
inputs), and a leaf's first gradient taken without a copy only when no one else can reach the array."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import f64

import minitensor as mt
from minitensor import backend
from minitensor.autograd import gradcheck
from minitensor.autograd.function import Op


# ------------------------------------------------------- composite graphs
def test_square_by_self_product():
    a = f64([1.0, -2.0, 3.0])
    (a * a).backward(f64([1.0, 2.0, 3.0], False))
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.numpy() * [1.0, 2.0, 3.0], rtol=1e-12)
    assert gradcheck(lambda t: t * t, a)


def test_self_sum():
    a = f64([[1.0, 2.0], [3.0, 4.0]])
    (a + a).backward(f64([[1.0, 2.0], [3.0, 4.0]], False))
    np.testing.assert_allclose(a.grad.numpy(), [[2.0, 4.0], [6.0, 8.0]])
    assert gradcheck(lambda t: t + t + t, a)


def test_diamond():
    """x -> (b = 2x, c = x^2) -> d = b * c: d = 2x^3, dd/dx = 6x^2."""
    x = f64([0.5, -1.5, 2.0])
    b = x * 2.0
    c = x * x
    (b * c).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy() ** 2, rtol=1e-12)
    assert gradcheck(lambda t: (t * 2.0) * (t * t), x)


def test_nested_exp_graph():
    """x = s + exp(s); y = x + exp(x): dy/ds = (1 + e^x)(1 + e^s)."""
    s = f64([-0.5, 0.1, 0.7])
    x = s + s.exp()
    y = x + x.exp()
    y.backward(mt.ones(3, dtype=mt.float64))
    xs = s.numpy() + np.exp(s.numpy())
    np.testing.assert_allclose(s.grad.numpy(), (1 + np.exp(xs)) * (1 + np.exp(s.numpy())), rtol=1e-12)

    def fn(t):
        u = t + t.exp()
        return u + u.exp()

    assert gradcheck(fn, s)


def test_reused_subexpression():
    """h = tanh(W x) used three times: loss = sum(h * h) + sum(h) * sum(h)."""
    rng = np.random.default_rng(0)
    w = f64(rng.standard_normal((3, 4)))
    x = f64(rng.standard_normal(4))

    def fn(w, x):
        h = (w @ x).tanh()
        return (h * h).sum() + h.sum() * h.sum()

    fn(w, x).backward()
    h = np.tanh(w.numpy() @ x.numpy())
    dh = 2 * h + 2 * h.sum()
    dz = dh * (1 - h * h)
    np.testing.assert_allclose(w.grad.numpy(), np.outer(dz, x.numpy()), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), w.numpy().T @ dz, rtol=1e-12)
    assert gradcheck(fn, (w, x))


def test_node_reached_by_two_paths_with_different_broadcasting():
    """u (3, 1) reaches the output once broadcast over rows, once over columns."""
    u = f64([[1.0], [2.0], [-1.0]])
    v = f64([[0.5, -2.0, 3.0]])

    def fn(u, v):
        e = u.exp()  # (3, 1), one node with two consumers
        return e * v + e.reshape(1, 3) * u  # (3, 3) + (1, 3) * (3, 1)

    g = np.arange(9.0).reshape(3, 3)
    fn(u, v).backward(g)
    e = np.exp(u.numpy())
    # d/du of sum(g * (e v)) = e * sum_j g_ij v_j; of sum(g * e^T u) = e_i * sum_j g_ji u_j + sum_j g_ij e_j
    expected = e[:, 0] * (g * v.numpy()).sum(1) + e[:, 0] * (g.T @ u.numpy()[:, 0]) + g @ e[:, 0]
    np.testing.assert_allclose(u.grad.numpy()[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(v.grad.numpy()[0], (g * e).sum(0), rtol=1e-12)
    assert gradcheck(fn, (u, v))


def test_shared_array_is_not_modified_in_place():
    """Add.backward hands the same array to both parents; summing must not alias it."""
    a = f64([1.0, 2.0])
    b = a * 1.0
    c = b + b  # both inputs are the same node
    d = c + a  # a receives from two paths
    d.backward(f64([1.0, 1.0], False))
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])


def test_leaf_used_as_root():
    a = f64([2.0])
    a.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0])


# ----------------------------------------------------------- deep chains
def test_chain_of_100000_ops_has_no_recursion_error():
    x = f64([1.0, 2.0])
    y = x
    c = 1.0 + 1e-6
    for _ in range(100_000):
        y = y * c
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [c**100_000] * 2, rtol=1e-9)
    del y  # freeing a 100,000-deep graph must not overflow the stack either


def test_deep_chain_freed_without_backward():
    x = f64([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1.0
    assert y.item() == 100_001.0
    del y


# ------------------------------------------------------------ accumulation
def test_grad_accumulates_over_two_backward_calls():
    x = f64([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 3.0)
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_grad_zero_in_place_then_accumulate():
    x = f64([1.0, 2.0])
    x.exp().sum().backward()
    x.grad.zero_()
    x.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_grad_is_its_own_array():
    """The first gradient stored must not alias an array the graph still uses."""
    x = f64([1.0, 2.0])
    g = f64([5.0, 6.0], False)
    x.backward(g)
    x.backward(g)
    np.testing.assert_array_equal(g.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 12.0])


def test_non_leaf_has_no_grad():
    x = f64([1.0, 2.0])
    y = x * 2.0
    (y * y).sum().backward()
    assert y.grad is None and not y.is_leaf and x.is_leaf


# ------------------------------------------------------------ retain_graph
def test_retain_graph_allows_a_second_backward():
    x = f64([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-12)


def test_second_backward_without_retain_graph_raises():
    x = f64([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_partial_graph_reuse_after_free_raises():
    x = f64([1.0, 2.0])
    h = x.tanh()
    h.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        (h * 2.0).sum().backward()


# --------------------------------------------------------- autograd.grad
def test_autograd_grad_does_not_touch_dot_grad():
    x = f64([1.0, 2.0, 3.0])
    y = (x * x).sum()
    (gx,) = mt.autograd.grad(y, x)
    np.testing.assert_allclose(gx.numpy(), 2 * x.numpy())
    assert x.grad is None
    assert not gx.requires_grad


def test_autograd_grad_for_non_leaf_input():
    x = f64([0.5, -1.0])
    h = x.exp()
    y = (h * h).sum()
    gh, gx = mt.autograd.grad(y, [h, x])
    np.testing.assert_allclose(gh.numpy(), 2 * h.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), 2 * h.numpy() * h.numpy(), rtol=1e-12)
    assert x.grad is None and h.grad is None


def test_autograd_grad_with_grad_outputs_and_several_outputs():
    x = f64([1.0, 2.0])
    a, b = x * 3.0, x * x
    (gx,) = mt.autograd.grad([a, b], x, [f64([1.0, 1.0], False), f64([2.0, 0.5], False)])
    np.testing.assert_allclose(gx.numpy(), 3.0 + np.array([2.0, 0.5]) * 2 * x.numpy())


def test_autograd_grad_allow_unused():
    x, z = f64([1.0]), f64([2.0])
    y = (x * 2.0).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        mt.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = mt.autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None and gx.tolist() == [2.0]


def test_autograd_grad_retain_graph():
    x = f64([1.0, 2.0])
    y = x.exp().sum()
    mt.autograd.grad(y, x, retain_graph=True)
    (g,) = mt.autograd.grad(y, x)
    np.testing.assert_allclose(g.numpy(), np.exp(x.numpy()))
    with pytest.raises(RuntimeError, match="retain_graph"):
        mt.autograd.grad(y, x)


def test_autograd_grad_of_non_scalar_needs_grad_outputs():
    x = f64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad_outputs"):
        mt.autograd.grad(x * 2.0, x)


def test_autograd_grad_input_without_grad_raises():
    x = f64([1.0, 2.0])
    c = f64([1.0, 2.0], False)
    with pytest.raises(RuntimeError, match="inputs\\[1\\]"):
        mt.autograd.grad((x * c).sum(), [x, c])


# -------------------------------------------------------------- graph API
def test_grad_fn_names_and_next_functions():
    a, b = f64([[1.0, 2.0]]), f64([[3.0], [4.0]])
    c = a @ b
    d = c.exp().sum()
    assert type(c.grad_fn).__name__ == "MatmulBackward"
    assert type(d.grad_fn).__name__ == "SumBackward"
    assert type(d.grad_fn.next_functions[0][0]).__name__ == "ExpBackward"
    assert d.grad_fn.next_functions[0][0].next_functions == ((c.grad_fn, 0),)
    assert [(n.variable, i) for n, i in c.grad_fn.next_functions] == [(a, 0), (b, 0)]
    assert a.grad_fn is None


def test_backward_of_non_scalar_without_gradient_raises():
    x = f64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="gradient"):
        (x * 2.0).backward()


def test_backward_gradient_of_wrong_shape_raises():
    x = f64([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\(2,\)"):
        (x * 2.0).backward(f64([1.0, 2.0, 3.0], False))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        f64([1.0], False).backward()


def test_detach_stops_gradient():
    x = f64([1.0, 2.0])
    (x * x.detach()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), x.numpy())


def _taken(monkeypatch) -> list:
    """Record each verdict of ``backend.owned``, which the engine asks (the spy's own argument is one
    holder more)."""
    log = []
    real = backend.owned

    def spy(grad, like, holders=1):
        verdict = real(grad, like, holders + 1)
        log.append(verdict)
        return verdict

    monkeypatch.setattr(backend, "owned", spy)
    return log


def test_a_fresh_gradient_is_taken_and_a_shared_one_copied(monkeypatch) -> None:
    log = _taken(monkeypatch)
    x = mt.randn(4, 5, requires_grad=True)
    (x * 2).sum().backward()
    assert log == [True]
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 5), 2, np.float32))
    log.clear()
    g = np.ones((4, 5), np.float32)
    y = mt.randn(4, 5, requires_grad=True)
    (y + 0).backward(g)  # Add hands the caller's own array through
    assert log == [False] and not np.shares_memory(y.grad.numpy(), g)
    y.grad.numpy()[0, 0] = 7.0
    assert g[0, 0] == 1.0


def test_one_array_for_two_leaves_is_owned_by_at_most_one(monkeypatch) -> None:
    log = _taken(monkeypatch)
    a, b = mt.randn(3, requires_grad=True), mt.randn(3, requires_grad=True)
    (a + b).backward(mt.ones(3) * 2)
    assert log.count(True) <= 1
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad.numpy()[:] = 0
    np.testing.assert_array_equal(b.grad.numpy(), [2, 2, 2])


def test_a_gradient_a_hook_kept_is_copied(monkeypatch) -> None:
    log = _taken(monkeypatch)
    kept = []
    c = mt.randn(3, requires_grad=True)
    c.register_hook(lambda g: kept.append(g))
    (c * 3).sum().backward()
    assert log == [False] and not np.shares_memory(kept[0].numpy(), c.grad.numpy())


def test_grad_wrt_non_leaf_stops_there_even_if_below_was_freed():
    x = mt.randn(3, dtype=mt.float64, requires_grad=True)
    a = x.exp()
    (a * 2).sum().backward()  # frees a's node (ExpBackward)
    (g,) = mt.autograd.grad((a * a).sum(), a)
    np.testing.assert_allclose(g.numpy(), 2 * a.numpy())


def test_grad_wrt_non_leaf_and_its_leaf_together():
    y = mt.randn(3, dtype=mt.float64, requires_grad=True)
    b = y.exp()
    gb, gy = mt.autograd.grad((b * b).sum(), [b, y])
    np.testing.assert_allclose(gb.numpy(), 2 * b.numpy())
    np.testing.assert_allclose(gy.numpy(), 2 * b.numpy() * b.numpy())


def test_unrelated_branch_backward_is_not_run():
    x = mt.randn(3, dtype=mt.float64, requires_grad=True)
    w = mt.randn(3, dtype=mt.float64, requires_grad=True)
    side = w.exp()
    side.sum().backward()  # frees side's graph
    out = (x * 3).sum() + side.sum()
    (gx,) = mt.autograd.grad(out, x)
    np.testing.assert_allclose(gx.numpy(), np.full(3, 3.0))


class _SeesLayout(Op):
    """y = 2 x, saving x (an op whose backward meets its saved input elementwise); records whether
    the gradient its backward got (an array) was C-contiguous."""

    seen: list = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 2 * x

    @staticmethod
    def backward(ctx, grad):
        _SeesLayout.seen.append(grad.flags.c_contiguous)
        return 2 * grad


class _ViewLayout(_SeesLayout):
    """The same, saving nothing (as a view's backward: it takes the gradient as it comes)."""

    @staticmethod
    def forward(ctx, x):
        return 2 * x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_transposed_gradient_meets_saved_arrays_in_c_order(rng, dtype) -> None:
    """The engine copies a gradient stored transposed to C order for a node that saved an array of
    its shape in C order (NumPy's ufuncs over mixed layouts are 5-15x slower), and leaves it as it
    is for one that saved nothing; the gradients are the same either way."""
    x = mt.from_numpy(rng.standard_normal((130, 140)).astype(dtype)).requires_grad_()
    g = rng.standard_normal((140, 130)).astype(dtype).T  # (130, 140), stored transposed
    for op, expected in ((_SeesLayout, True), (_ViewLayout, False)):
        _SeesLayout.seen.clear()
        x.grad = None
        op.apply(x).backward(mt.from_numpy(g))  # (the array itself: its transposed layout)
        assert _SeesLayout.seen == [expected]
        np.testing.assert_array_equal(x.grad.numpy(), 2 * g)
