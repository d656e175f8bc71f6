"""Helpers shared by the test files (imported as ``from helpers import ...``; tests/ is on the path).

- ``f64(values)``: a float64 Tensor of given values (a leaf that requires grad by default);
- ``randn_f64(rng, *shape)``: a float64 leaf of standard-normal values;
- ``randomize_parameters(module, rng)``: standard-normal values in every parameter of a module;
- ``gradcheck_module(module, x)``: ``gradcheck`` of ``module(x)`` w.r.t. ``x`` and every parameter;
- ``copy_weights(torch_module, mt_module)``: a PyTorch module's weights into the minitensor module;
- ``assert_same_numbers(actual, expected)``: two paths that compute the same thing agree;
- ``assert_module_matches_torch(ours, theirs, x, torch)``: a layer and PyTorch's agree (outputs,
  gradients, state after);
- ``run_on_both(program)``: ``program(lib)`` on minitensor and on PyTorch (skips without PyTorch);
- ``torch_functional()``: ``torch.nn.functional`` for an oracle that runs last (skips without PyTorch).
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck


def f64(values, requires_grad: bool = True) -> mt.Tensor:
    """A float64 Tensor of ``values`` (a number, nested lists or an array), requiring grad by default.

    >>> f64([1.0, 2.0]).requires_grad, f64(3.0, requires_grad=False).requires_grad
    (True, False)
    """
    return mt.tensor(values, dtype=mt.float64, requires_grad=requires_grad)


def randn_f64(rng: np.random.Generator, *shape: int, requires_grad: bool = True) -> mt.Tensor:
    """A float64 Tensor of ``shape`` with standard-normal values drawn from ``rng``, requiring grad by default.

    >>> randn_f64(np.random.default_rng(0), 2, 3).shape
    (2, 3)
    """
    return f64(rng.standard_normal(shape), requires_grad=requires_grad)


def randomize_parameters(module, rng: np.random.Generator):
    """Standard-normal values from ``rng`` in every parameter of ``module`` (so that a gradient check
    does not meet LayerNorm's weight of ones or zero biases); returns ``module``."""
    with mt.no_grad():
        for p in module.parameters():
            p.numpy()[...] = rng.standard_normal(p.shape)
    return module


def gradcheck_module(module, x: mt.Tensor) -> None:
    """``gradcheck`` of ``module(x)`` w.r.t. ``x`` and every parameter of ``module`` (passed as inputs)."""
    assert gradcheck(lambda inp, *_: module(inp), [x, *module.parameters()])


def copy_weights(torch_module, mt_module) -> None:
    """Load a PyTorch module's state dict into the same minitensor module (through NumPy arrays), so
    the two compute the same function: an oracle test then compares outputs and gradients.  The two
    state dicts must have the same keys in the same order, and the two modules as many parameters."""
    state = {k: v.detach().numpy() for k, v in torch_module.state_dict().items()}
    assert list(mt_module.state_dict()) == list(state), "the two modules' state-dict keys differ"
    assert sum(p.numel() for p in mt_module.parameters()) == sum(p.numel() for p in torch_module.parameters())
    mt_module.load_state_dict(state)


def assert_same_numbers(actual, expected, err_msg: str = "") -> None:
    """Two paths that compute the same thing in different ways (a fused node and the composite it
    replaces): equal up to rounding, 1e-10 relative in float64 and 2e-5 in float32; None matches None."""
    if actual is None or expected is None:
        assert actual is None and expected is None, err_msg
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    tight = actual.dtype == np.float64
    np.testing.assert_allclose(actual, expected, rtol=1e-10 if tight else 2e-5, atol=1e-12 if tight else 2e-6,
                               err_msg=err_msg)  # fmt: skip


def away_from(values, points, margin: float = 0.1):
    """``values`` (an array) with every element within ``margin`` of one of ``points`` (kinks, jumps)
    moved ``2 * margin`` up, so that finite differences around each element see one smooth piece."""
    values = np.array(values, dtype=np.float64)
    for point in points:
        near = np.abs(values - point) < margin
        values[near] = point + 2 * margin
    return values


def assert_module_matches_torch(
    ours, theirs, x: np.ndarray, torch, steps: int = 1, rtol: float = 1e-10, **forward_kwargs
) -> None:
    """A minitensor module and a PyTorch module of the same class behave alike: PyTorch's state
    (parameters and buffers, the same keys in the same order) is loaded into ours, then for each of
    ``steps`` calls on ``x`` (times the step's number; ``forward_kwargs`` to both) the outputs, the
    input gradients and the parameter gradients for a random weighting of the output agree, and so
    do the states after (running statistics).  Both modules in the same mode (train/eval) and dtype
    as ``x``."""
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict(state)
    close = {"rtol": rtol, "atol": rtol * 1e-2} if x.dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-5}
    rng = np.random.default_rng(0)
    for step in range(1, steps + 1):
        xm = mt.tensor(x * step, dtype=x.dtype, requires_grad=True)
        xt = torch.tensor(x * step, requires_grad=True)
        ym, yt = ours(xm, **forward_kwargs), theirs(xt, **forward_kwargs)
        np.testing.assert_allclose(ym.numpy(), yt.detach().numpy(), err_msg="output", **close)
        g = rng.standard_normal(ym.shape).astype(x.dtype)
        ym.backward(mt.tensor(g, dtype=x.dtype))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), err_msg="input gradient", **close)
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), err_msg=f"gradient of {name}", **close)
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name].numpy(), value.numpy(), err_msg=name, **close)


def as_numpy_tree(tree):
    """A nest (tuples, lists, dicts) of minitensor or PyTorch tensors as the same nest of arrays."""
    if isinstance(tree, (tuple, list)):
        return [as_numpy_tree(t) for t in tree]
    if isinstance(tree, dict):
        return {k: as_numpy_tree(v) for k, v in tree.items()}
    return tree.detach().numpy() if hasattr(tree, "detach") else tree


def assert_trees_close(ours, theirs, rtol: float = 1e-12, atol: float = 1e-14) -> None:
    """Two nests of tensors (minitensor's and PyTorch's) of the same structure and values."""
    a, b = as_numpy_tree(ours), as_numpy_tree(theirs)
    if isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in b:
            assert_trees_close(a[k], b[k], rtol, atol)
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_trees_close(u, v, rtol, atol)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def run_on_both(program):
    """(``program(mt)``, ``program(torch)``): the same code on minitensor and on PyTorch, to compare;
    the test is skipped when PyTorch is absent.

    >>> ours, theirs = run_on_both(lambda lib: lib.ones(2).sum().item())  # doctest: +SKIP
    """
    torch = pytest.importorskip("torch")
    return program(mt), program(torch)


def torch_functional():
    """``torch.nn.functional``, imported when first called; the test is skipped when PyTorch is absent.
    For the PyTorch side given to ``op_checks.check_op``, which runs its gradchecks before it calls that
    side: without PyTorch the gradchecks still run.

    >>> check_op(F.silu, lambda t: torch_functional().silu(t), x)  # doctest: +SKIP
    """
    return pytest.importorskip("torch").nn.functional


class Cube(mt.autograd.Function):
    """y = x³, written as in PyTorch: forward and backward on Tensors."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * grad * x**2


class CubeOnce(Cube):
    """The same backward, marked not differentiable again."""

    backward = staticmethod(mt.autograd.function.once_differentiable(Cube.backward))
