"""func/forward.py against torch.func: jvp, linearize, jacfwd, hessian (structures, has_aux,
argnums, randomness), their compositions with the reverse transforms and each other, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import Cube, assert_trees_close

import minitensor as mt
from minitensor import func

torch = pytest.importorskip("torch")

X = np.array([0.5, -1.2, 2.0])
Y = np.array([[0.3, 0.1], [-0.4, 1.5]])


def both(array) -> tuple:
    return mt.tensor(array, dtype=mt.float64), torch.tensor(array, dtype=torch.float64)


def f(lib, x, y):
    """R^3 x R^(2x2) -> R^(2,3): mixes the inputs, smooth."""
    return lib.tanh(y.sum(0, keepdim=True).T * x) + (x**2).exp() / 3


def test_jvp_equals_pytorchs_on_nests_and_has_aux() -> None:
    (x, tx), (y, ty) = both(X), both(Y)
    (v, tv), (w, tw) = both(X[::-1].copy()), both(Y.T.copy())
    ours = func.jvp(lambda a, b: f(mt, a, b), (x, y), (v, w))
    theirs = torch.func.jvp(lambda a, b: f(torch, a, b), (tx, ty), (tv, tw))
    assert_trees_close(ours, theirs)

    def nested(lib):
        return lambda p: ({"out": lib.sin(p["x"]) * p["y"][0, 0]}, p["x"].sum())

    ours = func.jvp(nested(mt), ({"x": x, "y": y},), ({"x": v, "y": w},), has_aux=True)
    theirs = torch.func.jvp(nested(torch), ({"x": tx, "y": ty},), ({"x": tv, "y": tw},), has_aux=True)
    assert_trees_close(ours, theirs)


def test_jvp_records_no_graph_and_leaves_no_tangent() -> None:
    x, v = mt.tensor(X, dtype=mt.float64), mt.ones(3, dtype=mt.float64)
    out, tangent = func.jvp(lambda a: (a * 2).exp(), (x,), (v,))
    assert not out.requires_grad and not tangent.requires_grad and out.grad_fn is None
    y, _ = func.jvp(lambda a: a * 2, (x,), (v,))
    assert func.jvp(lambda a: a + 0, (y,), (v,))[1].tolist() == [1.0, 1.0, 1.0]  # y carries no stale tangent


def test_jvp_errors_as_pytorch() -> None:
    x = mt.tensor(X)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        func.jvp(mt.sin, x, (x,))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        func.jvp(mt.sin, (x,), (x, x))
    with pytest.raises(RuntimeError, match="Tensor is of size \\[3\\] while the given forward gradient is of size"):
        func.jvp(mt.sin, (x,), (mt.ones(4),))
    with pytest.raises(RuntimeError, match="Expected primals to only contain Tensors"):
        func.jvp(mt.sin, (1.0,), (1.0,))
    with pytest.raises(RuntimeError, match="expected f\\(\\*primals\\) to return only tensors"):
        func.jvp(lambda a: 3, (x,), (x,))


def test_linearize_evaluates_jvps_at_the_primals() -> None:
    (x, tx), (v, tv) = both(X), both(np.array([1.0, 0.0, -2.0]))
    out, jvp_fn = func.linearize(mt.sin, x)
    t_out, t_jvp_fn = torch.func.linearize(torch.sin, tx)
    assert_trees_close((out, jvp_fn(v)), (t_out, t_jvp_fn(tv)))
    with pytest.raises(RuntimeError, match="tangent:0 with shape .* doesn't match the shape"):
        jvp_fn(mt.ones(4))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_jacfwd_equals_pytorchs_and_jacrev(argnums) -> None:
    (x, tx), (y, ty) = both(X), both(Y)
    ours = func.jacfwd(lambda a, b: f(mt, a, b), argnums=argnums)(x, y)
    theirs = torch.func.jacfwd(lambda a, b: f(torch, a, b), argnums=argnums)(tx, ty)
    assert_trees_close(ours, theirs)
    assert_trees_close(func.jacrev(lambda a, b: f(mt, a, b), argnums=argnums)(x, y), theirs)


def test_jacfwd_with_aux_and_a_nest_of_outputs() -> None:
    (x, tx) = both(X)
    ours = func.jacfwd(lambda a: ((a.sin(), {"c": a.cumsum(0)}), a.max()), has_aux=True)(x)
    theirs = torch.func.jacfwd(lambda a: ((a.sin(), {"c": a.cumsum(0)}), a.max()), has_aux=True)(tx)
    assert_trees_close(ours, theirs)


def test_jacfwd_randomness() -> None:
    x = mt.tensor(X, dtype=mt.float64)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error mode"):
        func.jacfwd(lambda a: a * mt.rand(3, dtype=mt.float64))(x)
    mt.manual_seed(0)
    same = func.jacfwd(lambda a: a * mt.rand(3, dtype=mt.float64), randomness="same")(x)
    mt.manual_seed(0)
    draw = mt.rand(3, dtype=mt.float64)
    np.testing.assert_allclose(same.numpy(), np.diag(draw.numpy()))  # every column saw the same draw
    mt.manual_seed(0)
    different = func.jacfwd(lambda a: a * mt.rand(3, dtype=mt.float64), randomness="different")(x)
    assert not np.allclose(np.diag(different.numpy()), draw.numpy())
    sometimes = func.jacfwd(mt.sin, randomness="sometimes")  # (PyTorch's raises when called, from its vmap)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        sometimes(x)


def test_jacfwd_of_a_user_function_whose_jvp_rule_reads_numpy() -> None:
    """jacfwd computes its columns by vmap over the tangents; a user Function without a batching
    rule runs once per column there (vmap's fallback), its JVP rule on plain tensors."""

    class CubeByNumpy(Cube):  # (helpers.Cube, its JVP rule through NumPy)
        @staticmethod
        def jvp(ctx, dx):
            (x,) = ctx.saved_tensors
            return mt.from_numpy(3 * x.numpy() ** 2 * dx.numpy())

    w = mt.tensor(np.random.default_rng(3).standard_normal((5, 3)), dtype=mt.float64)
    x = mt.tensor([0.3, -1.2, 0.8], dtype=mt.float64)
    expected = 3 * (w @ x).numpy()[:, None] ** 2 * w.numpy()
    with pytest.warns(UserWarning, match="batching rule for CubeByNumpy"):
        jacobian = func.jacfwd(lambda v: CubeByNumpy.apply(w @ v))(x)
    np.testing.assert_allclose(jacobian.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(func.jacfwd(lambda v: (w @ v) ** 3)(x).numpy(), expected, rtol=1e-12)
    mt.manual_seed(0)
    same = func.jacfwd(lambda v: CubeByNumpy.apply(v) * mt.rand(3, dtype=mt.float64), randomness="same")(x)
    mt.manual_seed(0)
    np.testing.assert_allclose(same.numpy(), np.diag(3 * x.numpy() ** 2 * mt.rand(3, dtype=mt.float64).numpy()))


def test_jacfwd_inside_vmap_of_a_shared_input_and_a_batched_one() -> None:
    """The primal is the same for every example, the other operand is not: each example's Jacobian."""
    (x, tx), (r, tr) = both(X), both(np.arange(12.0).reshape(4, 3) / 7)
    ours = func.vmap(lambda q: func.jacfwd(lambda a: (a * q).sin())(x))(r)
    theirs = torch.func.vmap(lambda q: torch.func.jacfwd(lambda a: (a * q).sin())(tx))(tr)
    assert_trees_close(ours, theirs)


def test_hessian_equals_pytorchs() -> None:
    (x, tx), (y, ty) = both(X), both(Y)
    for argnums in (0, (0, 1)):
        ours = func.hessian(lambda a, b: f(mt, a, b).sum(), argnums=argnums)(x, y)
        theirs = torch.func.hessian(lambda a, b: f(torch, a, b).sum(), argnums=argnums)(tx, ty)
        assert_trees_close(ours, theirs, rtol=1e-10, atol=1e-12)


def test_compositions_of_forward_and_reverse() -> None:
    """jvp(grad) (a Hessian-vector product), grad(jvp), jacfwd(jacfwd), jvp(jvp), jacrev(jacfwd)."""
    (x, tx), (v, tv) = both(X), both(np.array([0.2, -1.0, 0.5]))

    def g(lib, a):
        return (lib.sin(a) * a**2).sum()

    pairs = [
        (lambda: func.jvp(func.grad(lambda a: g(mt, a)), (x,), (v,)),
         lambda: torch.func.jvp(torch.func.grad(lambda a: g(torch, a)), (tx,), (tv,))),
        (lambda: func.grad(lambda a: func.jvp(lambda b: g(mt, b), (a,), (v,))[1])(x),
         lambda: torch.func.grad(lambda a: torch.func.jvp(lambda b: g(torch, b), (a,), (tv,))[1])(tx)),
        (lambda: func.jacfwd(func.jacfwd(lambda a: mt.sin(a) * a))(x),
         lambda: torch.func.jacfwd(torch.func.jacfwd(lambda a: torch.sin(a) * a))(tx)),
        (lambda: func.jvp(lambda a: func.jvp(mt.tanh, (a,), (v,))[1], (x,), (v,)),
         lambda: torch.func.jvp(lambda a: torch.func.jvp(torch.tanh, (a,), (tv,))[1], (tx,), (tv,))),
        (lambda: func.jacrev(func.jacfwd(lambda a: g(mt, a)))(x),
         lambda: torch.func.jacrev(torch.func.jacfwd(lambda a: g(torch, a)))(tx)),
    ]  # fmt: skip
    for ours, theirs in pairs:
        assert_trees_close(ours(), theirs(), rtol=1e-10, atol=1e-12)


def test_forward_transforms_ignore_an_outer_no_grad() -> None:
    (x, tx) = both(X)
    with mt.no_grad():
        ours = func.jacfwd(func.grad(lambda a: (a**3).sum()))(x)
    assert_trees_close(ours, torch.func.jacfwd(torch.func.grad(lambda a: (a**3).sum()))(tx))


def test_jvp_through_a_model_with_functional_call() -> None:
    """The tangent of a model's output in the direction of a parameter change, against PyTorch."""
    mt.manual_seed(0)
    ours = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.Tanh(), mt.nn.Linear(4, 2)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    params = dict(ours.named_parameters())
    directions = {
        k: mt.tensor(np.cos(np.arange(v.numel())).reshape(v.shape), dtype=mt.float64) for k, v in params.items()
    }
    t_params = dict(theirs.named_parameters())
    t_directions = {k: torch.tensor(v.numpy()) for k, v in directions.items()}
    (x, tx) = both(np.array([[0.1, 0.2, -0.3], [1.0, -1.0, 0.5]]))
    mine = func.jvp(lambda p: func.functional_call(ours, p, (x,)), (params,), (directions,))
    expected = torch.func.jvp(lambda p: torch.func.functional_call(theirs, p, (tx,)), (t_params,), (t_directions,))
    assert_trees_close(mine, expected, rtol=1e-10, atol=1e-12)
