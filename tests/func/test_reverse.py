"""func/reverse.py against torch.func: grad, grad_and_value, vjp, jacrev (argnums, has_aux, nests of
Tensors, composition, an outer no_grad, outer tensors that require grad) and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_trees_close

import minitensor as mt
from minitensor import func

torch = pytest.importorskip("torch")

X = np.array([0.5, -1.2, 2.0])
Y = np.array([[0.3, 0.1], [-0.4, 1.5]])


def both(array) -> tuple:
    return mt.tensor(array, dtype=mt.float64), torch.tensor(array, dtype=torch.float64)


def f(lib, x, y):
    return (lib.sin(x).sum() * (y * y).sum()) + (x**3).sum()


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_equals_pytorchs(argnums) -> None:
    (x, tx), (y, ty) = both(X), both(Y)
    ours = func.grad(lambda a, b: f(mt, a, b), argnums=argnums)(x, y)
    theirs = torch.func.grad(lambda a, b: f(torch, a, b), argnums=argnums)(tx, ty)
    assert_trees_close(ours, theirs)


def test_grad_of_grad_of_grad_and_jacrev_of_grad() -> None:
    (x, tx) = both(X)
    for depth in (2, 3):
        ours, theirs = (lambda a: (a**4).sum()), (lambda a: (a**4).sum())
        for _ in range(depth):
            ours, theirs = func.grad(ours), torch.func.grad(theirs)
        scalar = mt.tensor(1.3, dtype=mt.float64)
        assert_trees_close(ours(scalar), theirs(torch.tensor(1.3, dtype=torch.float64)))
    assert_trees_close(func.jacrev(func.grad(lambda a: f(mt, a, a[:2, None] * 1)))(x),
                       torch.func.jacrev(torch.func.grad(lambda a: f(torch, a, a[:2, None] * 1)))(tx))  # fmt: skip


def test_nests_of_tensors_and_has_aux() -> None:
    (x, tx), (y, ty) = both(X), both(Y)
    ours = func.grad_and_value(lambda p: (f(mt, p["x"], p["y"][0]), {"aux": p["x"] * 2}), has_aux=True)(
        {"x": x, "y": [y]}
    )
    theirs = torch.func.grad_and_value(lambda p: (f(torch, p["x"], p["y"][0]), {"aux": p["x"] * 2}), has_aux=True)(
        {"x": tx, "y": [ty]}
    )
    assert_trees_close(ours[0], theirs[0])
    assert_trees_close(ours[1][0], theirs[1][0])
    assert_trees_close(ours[1][1], theirs[1][1])


def test_grad_ignores_an_outer_no_grad_and_keeps_outer_tensors_tracked() -> None:
    (x, tx), (w, tw) = both(X), both(X[::-1].copy())
    with mt.no_grad(), torch.no_grad():
        assert_trees_close(func.grad(lambda a: (a**3).sum())(x), torch.func.grad(lambda a: (a**3).sum())(tx))
    w.requires_grad_(True)
    tw.requires_grad_(True)
    ours = func.grad(lambda a: ((a * w).sum()) ** 2)(x)
    theirs = torch.func.grad(lambda a: ((a * tw).sum()) ** 2)(tx)
    assert ours.requires_grad and theirs.requires_grad  # (a function of w: differentiable with respect to it)
    (gw,) = mt.autograd.grad(ours.sum(), w)
    (tgw,) = torch.autograd.grad(theirs.sum(), tw)
    assert_trees_close(gw, tgw)


def test_vjp_equals_pytorchs_and_may_be_called_twice() -> None:
    (x, tx) = both(X)
    out, fn = func.vjp(lambda a: (a * a, a.sin()), x)
    tout, tfn = torch.func.vjp(lambda a: (a * a, a.sin()), tx)
    assert_trees_close(out, tout)
    for scale in (1.0, 2.0):
        cot = mt.tensor(X * scale, dtype=mt.float64), mt.ones(3, dtype=mt.float64)
        tcot = torch.tensor(X * scale, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
        assert_trees_close(fn(cot), tfn(tcot))


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacrev_equals_pytorchs(argnums) -> None:
    (x, tx), (y, ty) = both(X), both(Y)
    ours = func.jacrev(lambda a, b: (a[:, None] * b[0] + 1.0, (a * b.sum()).exp()), argnums=argnums)(x, y)
    theirs = torch.func.jacrev(lambda a, b: (a[:, None] * b[0] + 1.0, (a * b.sum()).exp()), argnums=argnums)(tx, ty)
    assert_trees_close(ours, theirs)


def test_errors_as_pytorchs() -> None:
    x = mt.tensor(X, dtype=mt.float64)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 dims"):
        func.grad(lambda a: a)(x)
    with pytest.raises(RuntimeError, match="Got argnum=1, but only 1 positional inputs"):
        func.grad(lambda a: a.sum(), argnums=1)(x)
    with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\) if has_aux is True"):
        func.grad(lambda a: a.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        func.grad(lambda a: a.sum(), argnums=(0, 0))(x)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        func.grad(lambda a: a.sum())(mt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        func.vjp(lambda a: (a * 2, a), x)[1](mt.ones(3, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        func.vjp(lambda a: a * 2, x)[1](mt.ones(2, dtype=mt.float64))
