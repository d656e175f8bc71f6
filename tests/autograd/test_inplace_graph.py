"""In-place ops join the graph as in PyTorch (issue: correctness sweep, items 1 and 2).

Each case runs the same code on minitensor and, when installed, on PyTorch, and
compares the gradients; the expected values are also written out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_on_both

import minitensor as mt
from minitensor.ops import arithmetic, inplace

W = [1.0, 2.0, 3.0]


def _grad(t):
    return np.asarray(t.grad.detach().numpy() if hasattr(t.grad, "detach") else t.grad.numpy())


def test_iadd_of_a_grad_value_joins_the_graph():
    def program(lib):
        w = lib.tensor(W, requires_grad=True)
        h = lib.zeros(3)
        h += w * 2
        (h * w).sum().backward()
        return _grad(w)

    ours = program(mt)
    np.testing.assert_allclose(ours, 4 * np.array(W))  # d(2w * w)/dw = 4w (it was 2w: h's graph was dropped)
    ours, theirs = run_on_both(program)
    np.testing.assert_allclose(ours, theirs)


def test_setitem_rows_back_propagate_through_both():
    def program(lib):
        w = lib.tensor(W, requires_grad=True)
        out = lib.zeros(2, 3)
        out[0] = w
        out[1] = w * w
        out.sum().backward()
        return _grad(w)

    np.testing.assert_allclose(program(mt), 1 + 2 * np.array(W))  # it was [1, 1, 1]
    ours, theirs = run_on_both(program)
    np.testing.assert_allclose(ours, theirs)


def test_copy_puts_the_buffer_in_the_graph():
    def program(lib):
        w = lib.tensor(W, requires_grad=True)
        buf = lib.zeros(3)
        buf.copy_(w * 2)
        (buf * buf).sum().backward()
        return _grad(w)

    np.testing.assert_allclose(program(mt), 8 * np.array(W))
    ours, theirs = run_on_both(program)
    np.testing.assert_allclose(ours, theirs)


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
def test_inplace_arithmetic_on_a_non_leaf_changes_the_tensor_itself(op):
    def program(lib):
        w = lib.tensor(W, requires_grad=True)
        h = w * 1.5
        alias = h  # another name of the same tensor
        if op == "+=":
            h += w
        elif op == "-=":
            h -= w * w
        elif op == "*=":
            h *= w
        else:
            h /= w + 1
        assert alias is h
        (alias * 3).sum().backward()
        return alias.detach().numpy().copy(), _grad(w)

    (values, grads) = program(mt)
    (ours_v, ours_g), (theirs_v, theirs_g) = run_on_both(program)
    np.testing.assert_allclose(ours_v, theirs_v, rtol=1e-6)
    np.testing.assert_allclose(ours_g, theirs_g, rtol=1e-6)
    assert values.shape == (3,) and grads.shape == (3,)


def test_masked_fill_and_fill_with_grad_values():
    def program(lib):
        w = lib.tensor(W, requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        h = w * w
        h.masked_fill_(lib.tensor([True, False, True]), v)
        g = lib.zeros(3)
        g.fill_(v)
        (h * g).sum().backward()
        return _grad(w), _grad(v)

    (gw, gv), (tw, tv) = run_on_both(program)
    np.testing.assert_allclose(gw, tw)
    np.testing.assert_allclose(gv, tv)


def test_change_through_a_view_rewrites_the_base():
    def program(lib):
        w = lib.tensor(W, requires_grad=True)
        base = lib.zeros(2, 3)
        row = base[1]
        row += w * w
        (base * 2).sum().backward()
        return _grad(w), base.detach().numpy().copy()

    (ours_g, ours_v), (theirs_g, theirs_v) = run_on_both(program)
    np.testing.assert_allclose(ours_v, theirs_v)
    np.testing.assert_allclose(ours_g, theirs_g)
    np.testing.assert_allclose(ours_g, 4 * np.array(W))


def test_inplace_on_a_leaf_that_requires_grad_raises_outside_no_grad():
    w = mt.tensor(W, requires_grad=True)
    for change in (lambda: w.__iadd__(1), lambda: w.__setitem__(0, 5.0), lambda: w.copy_(mt.ones(3)), w.zero_):
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            change()
    with pytest.raises(RuntimeError, match="view of a leaf"):
        w[0:2].__iadd__(mt.ones(2, requires_grad=True))
    with mt.no_grad():
        w += 1  # an optimizer step
    assert w.is_leaf and np.allclose(w.numpy(), np.array(W) + 1)


def test_version_counters_still_catch_a_modified_saved_tensor():
    w = mt.tensor(W, requires_grad=True)
    x = mt.tensor([1.0, 1.0, 1.0])
    y = (w * x).sum()  # saves x for w's gradient
    x += 1
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward()
    h = w * 2
    z = (h * h).sum()  # saves h
    h += 1  # h joins the graph anew; the saved h changed
    with pytest.raises(RuntimeError, match="modified in place"):
        z.backward()


def test_full_reductions_hold_0d_arrays_so_inplace_works():
    x = mt.tensor([1.0, 2.0])
    s, m = x.sum(), x.mean()
    assert isinstance(s.numpy(), np.ndarray) and s.numpy().ndim == 0
    s += 1
    m *= 2
    assert s.item() == 4.0 and m.item() == 3.0


def test_only_what_backward_needs_is_saved():
    w = mt.tensor(W, requires_grad=True)
    y = (w * 3).sum()  # the product by a constant needs no copy of w
    with mt.no_grad():
        w -= 0.1
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 3.0, 3.0])


def test_a_graph_that_saved_nothing_can_be_walked_twice():
    x = mt.tensor(W, requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()  # PyTorch allows it: no saved buffers were freed
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
    z = (x * x).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        z.backward()


def test_a_change_through_data_between_forward_and_backward_is_used_as_pytorch() -> None:
    torch = pytest.importorskip("torch")
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    y = a * a
    a.data.mul_(10)  # outside autograd's view: no version bump, the new values are used
    y.sum().backward()
    ta = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = ta * ta
    ta.data.mul_(10)
    ty.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())  # [20, 40]


def test_the_same_change_through_detach_still_raises() -> None:
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    y = a * a
    a.detach().mul_(10)  # shares the version counter: the safer tool
    with pytest.raises(RuntimeError, match="modified in place"):
        y.sum().backward()


@pytest.mark.parametrize(
    "method, args, shape",
    [
        ("t_", (), (3, 2)),
        ("transpose_", (0, 1), (3, 2)),
        ("unsqueeze_", (1,), (2, 1, 3)),
        ("squeeze_", (), (2, 3)),
    ],  # fmt: skip
)
def test_in_place_shape_changes_take_the_views_history(method: str, args: tuple, shape: tuple) -> None:
    x = mt.tensor(np.arange(6.0).reshape(2, 3), dtype=mt.float64, requires_grad=True)
    y = x * 2
    assert getattr(y, method)(*args) is y and y.shape == shape
    w = mt.tensor(np.arange(6.0).reshape(shape), dtype=mt.float64)
    (grad,) = mt.autograd.grad((y * w).sum(), x)
    expected = 2 * (w.numpy().reshape(3, 2).T if method in ("t_", "transpose_") else w.numpy().reshape(2, 3))
    np.testing.assert_array_equal(grad.numpy(), expected)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        getattr(x, method)(*args)


def test_detach_in_place_makes_a_leaf_and_refuses_views_in_the_graph() -> None:
    x = mt.ones(2, 3, requires_grad=True)
    y = x * 2
    assert y.detach_() is y and y.grad_fn is None and not y.requires_grad
    with pytest.raises(RuntimeError, match="view of a tensor in the graph"):
        (x * 2)[0].detach_()


@pytest.mark.parametrize("name", sorted(arithmetic._OUTPUT_ONLY))
def test_in_place_forms_whose_op_keeps_only_its_output_copy_nothing(name, monkeypatch) -> None:
    """``y.relu_()`` and the others of ``_OUTPUT_ONLY`` run their op on y's own values, with no
    snapshot of them (which the declaration allows: checked), and give what the out-of-place form
    gives, values and gradient, to second order."""
    snapshots = []
    monkeypatch.setattr(inplace, "_snapshot", lambda x, real=inplace._snapshot: snapshots.append(x) or real(x))
    values = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4)) * np.array([1, -1, 1, 1])  # (sqrt's, rsqrt's positive)
    positive = name in ("sqrt_", "rsqrt_")
    x = mt.tensor(np.abs(values) if positive else values, dtype=mt.float64, requires_grad=True)
    weights = mt.tensor(np.arange(12.0).reshape(3, 4))
    y = x * 2
    getattr(y, name)()
    expected = getattr(x * 2, name[:-1])()
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy())
    (g,) = mt.autograd.grad((y * weights).sum(), x, create_graph=True)
    (g_expected,) = mt.autograd.grad((expected * weights).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), g_expected.detach().numpy())
    assert g.requires_grad == g_expected.requires_grad  # (relu's gradient is constant in x: no second order)
    if g_expected.requires_grad:
        (gg,) = mt.autograd.grad(g.sum(), x)
        (gg_expected,) = mt.autograd.grad(g_expected.sum(), x)
        np.testing.assert_allclose(gg.numpy(), gg_expected.numpy())
    assert snapshots == []


# (in-place activation, its out-of-place form, whether its node may keep only the result)
ACTIVATIONS_IN_PLACE = [
    (lambda F, y: F.leaky_relu_(y, 0.2), lambda F, y: F.leaky_relu(y, 0.2), True),
    (lambda F, y: F.leaky_relu_(y, 0.0), lambda F, y: F.leaky_relu(y, 0.0), True),
    (lambda F, y: F.leaky_relu_(y, -0.5), lambda F, y: F.leaky_relu(y, -0.5), False),  # (y's sign is not x's)
    (lambda F, y: F.hardtanh_(y, -0.5, 0.8), lambda F, y: F.hardtanh(y, -0.5, 0.8), True),
    (lambda F, y: F.relu6(y * 5, inplace=True), lambda F, y: F.relu6(y * 5), True),
    (lambda F, y: F.threshold_(y, 0.3, -2.0), lambda F, y: F.threshold(y, 0.3, -2.0), True),
    (lambda F, y: F.threshold_(y, 0.3, 1.0), lambda F, y: F.threshold(y, 0.3, 1.0), False),  # (value above it)
    (lambda F, y: F.rrelu_(y), lambda F, y: F.rrelu(y), True),
    (lambda F, y: F.elu_(y, 0.7), lambda F, y: F.elu(y, 0.7), True),
    (lambda F, y: F.elu_(y, -0.5), lambda F, y: F.elu(y, -0.5), False),  # (y > 0 where x < 0 too)
    (lambda F, y: F.selu_(y), lambda F, y: F.selu(y), True),
    (lambda F, y: F.celu_(y, 0.5), lambda F, y: F.celu(y, 0.5), True),
]


@pytest.mark.parametrize("seen", [False, True], ids=["memory-alone", "memory-seen-elsewhere"])
@pytest.mark.parametrize(("in_place", "out_of_place", "of_result"), ACTIVATIONS_IN_PLACE)
def test_in_place_activations_keep_their_result_not_a_snapshot(in_place, out_of_place, of_result, seen,
                                                                monkeypatch) -> None:  # fmt: skip
    """Where something else sees the tensor's memory (here a NumPy handle, which then shows the new
    values), ``leaky_relu_`` (slope >= 0), ``hardtanh_``, ``relu6(inplace=True)``, ``threshold_`` (value
    <= threshold), ``rrelu_`` and ``elu_``/``selu_``/``celu_`` (alpha >= 0) record a node that keeps the result, as
    PyTorch's in-place forms do, and copy nothing first; where the result cannot tell the gradient (a negative
    slope, a value above the threshold) a snapshot is taken. Where nothing else sees it, nothing is copied at all:
    the tensor takes the result's array.  Values and gradients as the out-of-place form's."""
    F = mt.nn.functional
    snapshots = []
    monkeypatch.setattr(inplace, "_snapshot", lambda x, real=inplace._snapshot: snapshots.append(x) or real(x))
    x = mt.tensor(np.linspace(-1.5, 1.5, 12).reshape(3, 4), dtype=mt.float64, requires_grad=True)
    weights = mt.tensor(np.arange(12.0).reshape(3, 4))
    y = x * 1
    handle = y.numpy() if seen else None
    out = in_place(F, y)
    expected = out_of_place(F, x * 1)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    if seen and out is y:
        np.testing.assert_array_equal(handle, expected.detach().numpy())
    (g,) = mt.autograd.grad((out * weights).sum(), x)
    (g_expected,) = mt.autograd.grad((expected * weights).sum(), x)
    np.testing.assert_allclose(g.numpy(), g_expected.numpy())
    assert len(snapshots) == (1 if seen and not of_result and out is y else 0)


@pytest.mark.parametrize("in_place", [case[0] for case in ACTIVATIONS_IN_PLACE if case[2]])
def test_in_place_activations_that_keep_their_result_pass_gradcheck_and_gradgradcheck(in_place) -> None:
    """The nodes that read the mask from y: float64 gradcheck and gradgradcheck, at points away from
    the kinks (0, the bounds -0.5 / 0.8, the threshold 0.3, relu6's 0 and 6 after the factor 5)."""
    F = mt.nn.functional
    x = mt.tensor([[-1.3, -0.7, 0.45, 0.6], [1.5, -0.2, 0.9, 0.15], [-0.35, 1.9, 0.55, 2.2]], dtype=mt.float64)
    x.requires_grad_(True)
    assert mt.autograd.gradcheck(lambda t: in_place(F, t * 1), (x,))
    assert mt.autograd.gradgradcheck(lambda t: in_place(F, t * 1), (x,))


@pytest.mark.parametrize("in_place", [case[0] for case in ACTIVATIONS_IN_PLACE if case[2]])
def test_in_place_activations_that_keep_their_result_give_the_out_of_place_jvp(in_place) -> None:
    """Forward mode through the nodes that read y: the tangent equals the out-of-place form's."""
    F = mt.nn.functional
    out_of_place = {case[0]: case[1] for case in ACTIVATIONS_IN_PLACE}[in_place]
    x = mt.tensor([[-1.3, -0.7, 0.45, 0.6], [1.5, -0.2, 0.9, 0.15], [-0.35, 1.9, 0.55, 2.2]], dtype=mt.float64)
    v = mt.tensor(np.arange(1.0, 13.0).reshape(3, 4))
    mt.manual_seed(0)
    _, got = mt.func.jvp(lambda t: in_place(F, t * 1), (x,), (v,))
    mt.manual_seed(0)
    _, expected = mt.func.jvp(lambda t: out_of_place(F, t * 1), (x,), (v,))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


def test_leaky_relu_in_place_saves_its_result_as_pytorch() -> None:
    """PyTorch's ``leaky_relu_`` node keeps ``_saved_result`` (the out-of-place one ``_saved_self``)."""
    x = mt.tensor([-1.0, 2.0], requires_grad=True)
    y = mt.nn.functional.leaky_relu_(x * 1, 0.1)
    np.testing.assert_allclose(y.grad_fn._saved_result.numpy(), [-0.1, 2.0])
    assert mt.nn.functional.leaky_relu(x, 0.1).grad_fn._saved_self is x


def test_an_output_only_declaration_that_does_not_hold_falls_back_to_a_snapshot(monkeypatch) -> None:
    """Where the recorded op keeps the old values after all (here ``old * old``, which saves its
    input), the check sees t's memory held and the op runs again on a snapshot: the gradient is
    still right.  (t's memory is seen elsewhere, by a NumPy handle: else t would take the result's
    array and the op keep the old one, nothing copied.)"""
    snapshots = []
    monkeypatch.setattr(inplace, "_snapshot", lambda x, real=inplace._snapshot: snapshots.append(x) or real(x))
    x = mt.tensor(W, requires_grad=True)
    y = x * 1
    handle = y.numpy()

    def update(array):
        array *= array

    inplace.apply_inplace(y, "square_", update, lambda old: old * old, output_only=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array(W))
    np.testing.assert_allclose(handle, np.square(W))
    assert len(snapshots) == 1


def test_an_unshared_tensor_of_another_layout_keeps_it_and_the_saved_old_values() -> None:
    """y Fortran-ordered (an F-ordered x times 1), ``y.mul_(w)``: the product comes back C-ordered, so y
    cannot take its array; y gets a copy in its own layout, and the old values the product kept for w's
    gradient are not overwritten (they were, silently, before this test)."""
    a = np.arange(6.0).reshape(2, 3)
    x = mt.tensor(np.asfortranarray(a), requires_grad=True)
    y = x * 1
    w = mt.tensor(np.full((2, 3), 2.0), requires_grad=True)
    y.mul_(w)
    assert y._data.flags.f_contiguous and not y._data.flags.c_contiguous
    np.testing.assert_array_equal(y.detach().numpy(), 2 * a)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), a)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0))


def test_copy_into_an_unshared_tensor_does_not_share_the_source_s_memory() -> None:
    """``t.copy_(src)`` records src itself as the result: t must not take src's array (a later in-place
    change of t would change src too, as it did before this test)."""
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    src, t = x * 2, x * 1
    t.copy_(src)
    assert t._data is not src._data
    t.add_(1.0)
    np.testing.assert_array_equal(src.detach().numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(t.detach().numpy(), [3.0, 5.0, 7.0])
    (t.sum() + src.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])


def test_an_in_place_op_on_memory_no_one_else_sees_copies_nothing(monkeypatch) -> None:
    """No view, handle or saved copy of y's array: ``y.mul_(x)`` records the product on y's old array
    (no snapshot) and y takes the result's array (no write back); values, gradient and the version
    counter as before, and a later in-place op on y's result, which the node saved, still raises in
    backward."""
    snapshots = []
    monkeypatch.setattr(inplace, "_snapshot", lambda x, real=inplace._snapshot: snapshots.append(x) or real(x))
    x = mt.tensor(W, requires_grad=True)
    y = x * 1
    old, version = id(y._data), y._version  # (the id only: a reference would be one more holder)
    y.mul_(x)
    assert id(y._data) != old and y._version == version + 1 and not snapshots
    np.testing.assert_allclose(y.detach().numpy(), np.square(W))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array(W))
    z = (x * 1).exp_()  # (exp_ keeps its result: z's array is seen by the node)
    z.mul_(2)
    with pytest.raises(RuntimeError, match="ExpBackward: its output .* was modified in place after it was saved"):
        z.sum().backward()
