"""Helpers shared by the test files (imported as ``from helpers import ...``; tests/ is on the path)."""

from __future__ import annotations

import numpy as np

import minitensor as mt


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


def same_as_torch_module(torch, ours, theirs, x: np.ndarray, double: bool, **forward_kwargs) -> None:
    """A minitensor module and a PyTorch one (``torch``: the module, which tests import or skip)
    given PyTorch's weights (through NumPy arrays, with the same state-dict keys): the same output,
    input gradient and parameter gradients, for a random weighting of the output, in float64
    (``double``: to 1e-10) or float32 (to 1e-4)."""
    dtype, torch_dtype = (mt.float64, torch.float64) if double else (mt.float32, torch.float32)
    theirs = theirs.to(torch_dtype)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.to(dtype).load_state_dict(state)
    x_ours = mt.tensor(x, dtype=dtype, requires_grad=True)
    x_theirs = torch.tensor(x, dtype=torch_dtype, requires_grad=True)
    y_ours, y_theirs = ours(x_ours, **forward_kwargs), theirs(x_theirs, **forward_kwargs)
    tolerance = {"rtol": 1e-10, "atol": 1e-12} if double else {"rtol": 1e-4, "atol": 1e-5}
    assert y_ours.dtype == dtype and y_ours.shape == tuple(y_theirs.shape)
    np.testing.assert_allclose(y_ours.numpy(), y_theirs.detach().numpy(), err_msg="output", **tolerance)
    g = np.random.default_rng(7).standard_normal(y_ours.shape)
    y_ours.backward(mt.tensor(g, dtype=dtype))
    y_theirs.backward(torch.tensor(g, dtype=torch_dtype))
    np.testing.assert_allclose(x_ours.grad.numpy(), x_theirs.grad.numpy(), err_msg="input gradient", **tolerance)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(), err_msg=name, **tolerance)
