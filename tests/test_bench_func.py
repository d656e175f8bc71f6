"""benchmarks/bench_func.py's cases compute what they claim (the timing is not run): per-sample
gradients by vmap(grad) equal the loop's and torch.func's, jacfwd equals jacrev, the HVP is a
Hessian-vector product of the loss."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

FOLDER = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(FOLDER))
    spec = importlib.util.spec_from_file_location("bench_func", FOLDER / "bench_func.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _arrays(tree) -> list:
    return [np.asarray(t.detach().numpy() if hasattr(t, "detach") else t) for t in tree]


@pytest.mark.parametrize("case", ["mlp_per_sample_steps", "cnn_per_sample_steps"])
def test_per_sample_gradients_agree_with_the_loop_and_torch_func(bench, case) -> None:
    steps = getattr(bench, case)(np.random.default_rng(0))
    batched = steps["minitensor vmap(grad)"]()
    looped = steps["minitensor loop of grad"]()
    for name in batched:
        stacked = np.stack([one[name].numpy() for one in looped])
        np.testing.assert_allclose(batched[name].numpy(), stacked, rtol=2e-4, atol=2e-6, err_msg=name)
        if "torch.func vmap(grad)" in steps:
            theirs = steps["torch.func vmap(grad)"]()[name].numpy()
            np.testing.assert_allclose(batched[name].numpy(), theirs, rtol=2e-4, atol=2e-6, err_msg=name)


def test_jacobians_both_ways_agree(bench) -> None:
    for n_in, n_out in ((4, 30), (30, 4)):
        steps = bench.jacobian_steps(np.random.default_rng(1), n_in, n_out)
        forward, reverse = steps["minitensor jacfwd"]().numpy(), steps["minitensor jacrev"]().numpy()
        assert forward.shape == (n_out, n_in)
        np.testing.assert_allclose(forward, reverse, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("way", ["jvp of grad", "grad of jvp"])
def test_the_hvp_is_the_change_of_the_gradient_along_the_vector(bench, way) -> None:
    """The case's HVP (both ways, and PyTorch's) against central differences of the gradient, from the same draws."""
    import minitensor as mt
    import minitensor.func as mf

    steps = bench.hvp_steps(np.random.default_rng(2), 8, 6, 5)
    hvp = steps[f"minitensor HVP ({way})"]()
    rng = np.random.default_rng(2)  # the case's draws again, in its order
    arrays = bench._mlp_arrays(rng, 6, 5)
    xs, ys = rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, bench.CLASSES, 8)
    v = {k: rng.standard_normal(a.shape).astype(np.float32) for k, a in arrays.items()}
    grad = mf.grad(lambda p: bench._loss(mt, p, mt.tensor(xs, dtype=mt.float64), mt.tensor(ys)))

    def at(step: float) -> dict:
        return grad({k: mt.tensor(a.astype(np.float64) + step * v[k], dtype=mt.float64) for k, a in arrays.items()})

    ahead, behind = at(1e-4), at(-1e-4)
    theirs = steps[f"torch.func HVP ({way})"]() if f"torch.func HVP ({way})" in steps else None
    for k in arrays:
        expected = (ahead[k].numpy() - behind[k].numpy()) / 2e-4
        np.testing.assert_allclose(hvp[k].numpy(), expected, rtol=2e-3, atol=2e-4, err_msg=k)
        if theirs is not None:
            np.testing.assert_allclose(hvp[k].numpy(), theirs[k].numpy(), rtol=1e-4, atol=1e-6, err_msg=k)
