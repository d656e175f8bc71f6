"""mt.autograd.functional against torch.autograd.functional (values, structures, strict, create_graph)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import functional as F

torch = pytest.importorskip("torch")
TF = torch.autograd.functional

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))
Y = RNG.standard_normal((3, 2))
V_OUT = RNG.standard_normal((2, 2))
STRATEGIES = ["reverse-mode", "forward-mode"]


def mt_(a, requires_grad=False):
    return mt.tensor(a, dtype=mt.float64, requires_grad=requires_grad)


def th(a, requires_grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad)


def same(ours, theirs, tol=1e-10):
    """Same nesting (Tensor vs tuple), shapes and values."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b, tol)
        return
    assert isinstance(ours, mt.Tensor), type(ours)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


# functions written with ops both libraries spell the same way
def one_one(t):
    return (t.tanh() * t.exp()) @ t.T


def one_two(t):
    return t.exp().sum(1), (t * t).tanh()


def two_one(a, b):
    return (a @ b).tanh()


def two_two(a, b):
    return a @ b, (a * a).sum() * b


def scalar_one(t):
    return (t.tanh() ** 2 * t.exp()).sum()


def scalar_two(a, b):
    return ((a @ b).tanh() ** 2).sum() + (a * a * a).sum()


CASES = [
    (one_one, [X]),
    (one_two, [X]),
    (two_one, [X, Y]),
    (two_two, [X, Y]),
]


def _args(inputs, make, tuple_in, requires_grad=False):
    made = tuple(make(a, requires_grad) for a in inputs)
    return made if tuple_in else made[0]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("func,inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_jacobian_matches_torch(func, inputs, create_graph, strategy):
    tuple_in = len(inputs) > 1
    ours = F.jacobian(func, _args(inputs, mt_, tuple_in), create_graph=create_graph, strategy=strategy)
    theirs = TF.jacobian(func, _args(inputs, th, tuple_in), create_graph=create_graph)
    same(ours, theirs)


def test_jacobian_of_tensor_input_given_as_one_tuple_keeps_the_tuple():
    ours = F.jacobian(one_one, (mt_(X),))
    theirs = TF.jacobian(one_one, (th(X),))
    same(ours, theirs)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("func,inputs", [(scalar_one, [X]), (scalar_two, [X, Y])], ids=["one", "two"])
def test_hessian_matches_torch(func, inputs, create_graph, strategy):
    tuple_in = len(inputs) > 1
    ours = F.hessian(func, _args(inputs, mt_, tuple_in), create_graph=create_graph, outer_jacobian_strategy=strategy)
    theirs = TF.hessian(func, _args(inputs, th, tuple_in), create_graph=create_graph)
    same(ours, theirs)


def _vectors(func, inputs, tuple_in, on_outputs):
    rng = np.random.default_rng(5)
    if on_outputs:
        outs = func(*[th(a) for a in inputs])
        shapes = [tuple(o.shape) for o in (outs if isinstance(outs, tuple) else (outs,))]
        tuple_v = isinstance(outs, tuple)
    else:
        shapes, tuple_v = [a.shape for a in inputs], tuple_in
    vs = [rng.standard_normal(s) for s in shapes]
    return (tuple(mt_(v) for v in vs), tuple(th(v) for v in vs)) if tuple_v else (mt_(vs[0]), th(vs[0]))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("func,inputs", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp_match_torch(name, func, inputs, create_graph):
    tuple_in = len(inputs) > 1
    v_ours, v_theirs = _vectors(func, inputs, tuple_in, on_outputs=name == "vjp")
    ours = getattr(F, name)(func, _args(inputs, mt_, tuple_in), v_ours, create_graph=create_graph)
    theirs = getattr(TF, name)(func, _args(inputs, th, tuple_in), v_theirs, create_graph=create_graph)
    same(ours, theirs)
    assert all(t.requires_grad is False for t in _flat(ours)) or create_graph


def _flat(x):
    return [t for item in x for t in _flat(item)] if isinstance(x, tuple) else [x]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("func,inputs", [(scalar_one, [X]), (scalar_two, [X, Y])], ids=["one", "two"])
@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp_match_torch(name, func, inputs, create_graph):
    tuple_in = len(inputs) > 1
    v_ours, v_theirs = _vectors(func, inputs, tuple_in, on_outputs=False)
    ours = getattr(F, name)(func, _args(inputs, mt_, tuple_in), v_ours, create_graph=create_graph)
    theirs = getattr(TF, name)(func, _args(inputs, th, tuple_in), v_theirs, create_graph=create_graph)
    same(ours, theirs)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["jvp", "hvp"])
def test_one_tensor_given_twice_carries_each_vector(name, create_graph):
    """The forward-mode products with the same Tensor as both inputs: each use carries its own vector
    (with create_graph the inputs themselves are differentiated, not copies)."""
    x_ours, x_theirs = mt_(X, True), th(X, True)
    v1, v2 = RNG.standard_normal(X.shape), RNG.standard_normal(X.shape)
    ours = getattr(F, name)(scalar_two_same, (x_ours, x_ours), (mt_(v1), mt_(v2)), create_graph=create_graph)
    theirs = getattr(TF, name)(scalar_two_same, (x_theirs, x_theirs), (th(v1), th(v2)), create_graph=create_graph)
    same(ours, theirs)


def scalar_two_same(a, b):
    return (a.sin() * b.exp()).sum()


def test_create_graph_results_can_be_differentiated_again_like_torch():
    x_ours, x_theirs = mt_(X, True), th(X, True)
    h_ours = F.hessian(scalar_one, x_ours, create_graph=True)
    h_theirs = TF.hessian(scalar_one, x_theirs, create_graph=True)
    assert h_ours.requires_grad
    w = RNG.standard_normal(h_theirs.shape)
    (g_ours,) = mt.autograd.grad((h_ours * mt_(w)).sum(), x_ours)
    (g_theirs,) = torch.autograd.grad((h_theirs * th(w)).sum(), x_theirs)
    same(g_ours, g_theirs)
    (_, jv) = F.jvp(one_one, x_ours, mt_(np.ones_like(X)), create_graph=True)
    (_, jv_t) = TF.jvp(one_one, x_theirs, th(np.ones_like(X)), create_graph=True)
    w = RNG.standard_normal(tuple(jv_t.shape))
    same(mt.autograd.grad((jv * mt_(w)).sum(), x_ours)[0], torch.autograd.grad((jv_t * th(w)).sum(), x_theirs)[0])


def test_without_create_graph_results_are_detached():
    x = mt_(X, True)
    out, g = F.vjp(scalar_one, x)
    assert not out.requires_grad and not g.requires_grad and x.grad is None
    assert not F.jacobian(one_one, x).requires_grad


def mlp_loss(x, target):
    """The loss of Linear-tanh-Linear as a function of its four parameters."""

    def loss(w1, b1, w2, b2):
        h = (x @ w1.T + b1).tanh()
        return ((h @ w2.T + b2 - target) ** 2).mean()

    return loss


def test_hessian_of_a_two_layer_mlp_matches_torch():
    rng = np.random.default_rng(3)
    x, target = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    params = [rng.standard_normal(s) * 0.7 for s in [(4, 3), (4,), (2, 4), (2,)]]
    ours = F.hessian(mlp_loss(mt_(x), mt_(target)), tuple(mt_(p) for p in params))
    theirs = TF.hessian(mlp_loss(th(x), th(target)), tuple(th(p) for p in params))
    same(ours, theirs, tol=1e-10)
    # the blocks assemble into a symmetric matrix
    n = [p.size for p in params]
    full = np.block([[ours[i][j].numpy().reshape(n[i], n[j]) for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(full, full.T, atol=1e-12)


def test_strict_raises_for_independent_inputs_and_zero_otherwise():
    def f(a, b):
        return a * 2

    args = (mt_(X), mt_(X))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jacobian(f, args, strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(f, args, mt_(np.ones_like(X)), strict=True)
    with pytest.raises(RuntimeError, match="strict"):
        F.jvp(f, args, (mt_(X), mt_(X)), strict=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        F.vjp(lambda a: a.detach(), mt_(X), mt_(X), strict=True)
    # linear: its Hessian does not depend on the inputs
    with pytest.raises(RuntimeError, match="independent"):
        F.hessian(lambda a: (a * 3).sum(), mt_(X), strict=True)
    with pytest.raises(RuntimeError, match="output is independent of input 1"):  # (hvp's two reasons, as torch's)
        F.hvp(lambda a, b: (a * a).sum(), args, args, strict=True)
    with pytest.raises(RuntimeError, match="gradient with respect to input 0 is independent of the inputs"):
        F.hvp(lambda a, b: a.sum() + (b * b).sum(), args, args, strict=True)
    for strict in (False, True):  # a product of the two: H v nonzero, though each gradient is linear in the other
        same(
            F.hvp(lambda a, b: (a * b).sum(), args, args, strict=strict),
            TF.hvp(lambda a, b: (a * b).sum(), (th(X), th(X)), (th(X), th(X))),
        )
    ours = F.jacobian(f, args)
    theirs = TF.jacobian(f, (th(X), th(X)))
    same(ours, theirs)
    same(F.hessian(lambda a: (a * 3).sum(), mt_(X)), TF.hessian(lambda a: (a * 3).sum(), th(X)))
    same(F.vjp(f, args, mt_(X)), TF.vjp(f, (th(X), th(X)), th(X)))
    same(F.jvp(f, args, (mt_(X), mt_(Y.T))), TF.jvp(f, (th(X), th(X)), (th(X), th(Y.T))))


def test_strict_with_create_graph_rejects_a_constant_derivative():
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        F.vjp(lambda a: a * 3, mt_(X), mt_(X), create_graph=True, strict=True)
    with pytest.raises(RuntimeError, match="independent of input 0"):  # torch refuses it too
        TF.vjp(lambda a: a * 3, th(X, True), th(X), create_graph=True, strict=True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="strategy"):
        F.jacobian(one_one, mt_(X), strategy="sideways")
    with pytest.raises(TypeError, match=r"inputs\[1\]"):
        F.jacobian(two_one, (mt_(X), Y))
    with pytest.raises(ValueError, match=r"v\[0\] must have the output of func's shape \(2, 2\), got \(2, 3\)"):
        F.vjp(one_one, mt_(X), mt_(X))
    with pytest.raises(ValueError, match="v may be omitted"):
        F.jvp(one_one, mt_(X))
    with pytest.raises(ValueError, match="structure"):
        F.jvp(two_one, (mt_(X), mt_(Y)), mt_(X))
    with pytest.raises(RuntimeError, match="single-element"):
        F.hessian(one_one, mt_(X))
    with pytest.raises(RuntimeError, match="single Tensor"):
        F.hvp(one_two, mt_(X), mt_(X))


def test_defaults_for_single_element_inputs_and_outputs():
    x = mt_(1.5)
    same(F.vjp(lambda t: t**3, x), TF.vjp(lambda t: t**3, th(1.5)))
    same(F.jvp(lambda t: t**3, x), TF.jvp(lambda t: t**3, th(1.5)))
    same(F.hvp(lambda t: t**3, x), TF.hvp(lambda t: t**3, th(1.5)))
    same(F.hessian(lambda t: t**3, x), TF.hessian(lambda t: t**3, th(1.5)))


def test_vectorize_gives_the_same_jacobian():
    same(F.jacobian(two_two, (mt_(X), mt_(Y)), vectorize=True), TF.jacobian(two_two, (th(X), th(Y)), vectorize=True))
