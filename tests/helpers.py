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


def assert_module_matches_torch(ours, theirs, x: np.ndarray, torch, steps: int = 1, rtol: float = 1e-10) -> None:
    """A minitensor module and a PyTorch module of the same class behave alike: PyTorch's state
    (parameters and buffers, the same keys in the same order) is loaded into ours, then for each of
    ``steps`` calls on ``x`` (times the step's number) the outputs, the input gradients and the
    parameter gradients for a random weighting of the output agree, and so do the states after
    (running statistics).  Both modules in the same mode (train/eval) and dtype as ``x``."""
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict(state)
    close = {"rtol": rtol, "atol": rtol * 1e-2} if x.dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-5}
    rng = np.random.default_rng(0)
    for step in range(1, steps + 1):
        xm = mt.tensor(x * step, dtype=x.dtype, requires_grad=True)
        xt = torch.tensor(x * step, requires_grad=True)
        ym, yt = ours(xm), theirs(xt)
        np.testing.assert_allclose(ym.numpy(), yt.detach().numpy(), err_msg="output", **close)
        g = rng.standard_normal(ym.shape).astype(x.dtype)
        ym.backward(mt.tensor(g, dtype=x.dtype))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), err_msg="input gradient", **close)
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), err_msg=f"gradient of {name}", **close)
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name].numpy(), value.numpy(), err_msg=name, **close)
