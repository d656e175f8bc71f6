"""LBFGS against PyTorch's (same closure, same start): losses per step, parameters, iteration and
evaluation counts, in float64 (to 1e-9) and float32; the options; errors."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


def _run(lib, dtype, steps: int = 3, **options):
    """Three LBFGS steps on a least-squares + quartic problem over two parameters (one with a
    parameter that gets no gradient on some steps would be PyTorch's zeros: ``unused``)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal(6)
    w = lib.tensor(rng.standard_normal(4), dtype=dtype, requires_grad=True)
    v = lib.tensor(rng.standard_normal(2), dtype=dtype, requires_grad=True)
    unused = lib.tensor([1.0], dtype=dtype, requires_grad=True)
    a_t, b_t = lib.tensor(a, dtype=dtype), lib.tensor(b, dtype=dtype)
    opt = lib.optim.LBFGS([w, v, unused], **options)

    def closure():
        opt.zero_grad()
        r = a_t @ w - b_t
        loss = (r * r).sum() + ((v - 0.5) ** 4).sum() + (w[:2] * v).sum() ** 2
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    state = next(iter(opt.state.values()))
    return losses, w.detach().numpy(), v.detach().numpy(), state["func_evals"], state["n_iter"]


OPTIONS = [{}, {"lr": 0.8}, {"lr": 0.5, "max_iter": 5, "history_size": 3}, {"max_iter": 7, "max_eval": 4},
           {"tolerance_grad": 1e-3}, {"tolerance_change": 1e-4}]  # fmt: skip


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_same_steps_as_pytorch_in_float64(options):
    torch = pytest.importorskip("torch")
    ours, theirs = _run(mt, mt.float64, **options), _run(torch, torch.float64, **options)
    for a, b in zip(ours[:3], theirs[:3], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert ours[3:] == theirs[3:]  # evaluations and iterations


def test_float32_stays_float32_and_close_to_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _run(mt, mt.float32), _run(torch, torch.float32)
    assert ours[1].dtype == np.float32
    for a, b in zip(ours[:3], theirs[:3], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_converges_on_a_quadratic_without_pytorch():
    w = mt.tensor([3.0, -2.0, 0.5], dtype=mt.float64, requires_grad=True)
    opt = mt.optim.LBFGS([w])

    def closure():
        opt.zero_grad()
        loss = ((w - mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64)) ** 2 * mt.tensor([1.0, 10.0, 100.0])).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(w.numpy(), [1.0, 2.0, 3.0], atol=1e-6)


def test_errors():
    w = mt.tensor([1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="strong_wolfe"):
        mt.optim.LBFGS([w], line_search_fn="strong_wolfe")
    with pytest.raises(ValueError, match="needs a closure"):
        mt.optim.LBFGS([w]).step()
    with pytest.raises(ValueError, match="max_iter must be a positive int"):
        mt.optim.LBFGS([w], max_iter=0)
    with pytest.raises(ValueError, match="one parameter group"):
        mt.optim.LBFGS([{"params": [w]}, {"params": [mt.tensor([2.0], requires_grad=True)]}])


def test_state_dict_round_trip_through_a_checkpoint_continues_identically(tmp_path):
    """Two steps, a checkpoint (mt.save / mt.load), two more steps: the same parameters, bit for bit,
    as four steps without interruption; the snapshot does not change when the optimizer steps on."""

    def make():
        w = mt.tensor([3.0, -2.0], dtype=mt.float64, requires_grad=True)
        v = mt.tensor([[0.5, 1.5]], dtype=mt.float64, requires_grad=True)
        opt = mt.optim.LBFGS([w, v], max_iter=4)

        def closure():
            opt.zero_grad()
            loss = ((w - 1) ** 4).sum() + ((v - w) ** 2).sum() + (w * v).sum() ** 2
            loss.backward()
            return loss

        return w, v, opt, closure

    w, v, opt, closure = make()
    for _ in range(2):
        opt.step(closure)
    snapshot = opt.state_dict()
    kept = [d.copy() for d in snapshot["state"][0]["old_dirs"]]
    mt.save({"opt": snapshot, "w": w.numpy(), "v": v.numpy()}, tmp_path / "ck.pt")
    for _ in range(2):
        opt.step(closure)
    assert all(np.array_equal(a, b) for a, b in zip(kept, snapshot["state"][0]["old_dirs"], strict=True))
    w2, v2, opt2, closure2 = make()
    checkpoint = mt.load(tmp_path / "ck.pt")
    with mt.no_grad():
        w2.copy_(mt.tensor(checkpoint["w"], dtype=mt.float64))
        v2.copy_(mt.tensor(checkpoint["v"], dtype=mt.float64))
    opt2.load_state_dict(checkpoint["opt"])
    for _ in range(2):
        opt2.step(closure2)
    assert np.array_equal(w.numpy(), w2.numpy()) and np.array_equal(v.numpy(), v2.numpy())
