"""CosineAnnealingLR, OneCycleLR and ReduceLROnPlateau against PyTorch's lr (and momentum) sequences."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import optim
from minitensor.optim import lr_scheduler

torch = pytest.importorskip("torch")

LRS = (0.1, 0.02)


def opts(kind: str = "sgd", **kw):
    """The same two-group optimizer in minitensor and in PyTorch."""
    ours = [{"params": [mt.zeros(2, requires_grad=True)], "lr": lr} for lr in LRS]
    theirs = [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr in LRS]
    if kind == "sgd":
        return optim.SGD(ours, lr=1.0, **kw), torch.optim.SGD(theirs, lr=1.0, **kw)
    return optim.AdamW(ours, lr=1.0, **kw), torch.optim.AdamW(theirs, lr=1.0, **kw)


def momenta(opt) -> list:
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def trace(opt, sched, steps: int, metrics=None) -> list:
    rows = [sched.get_last_lr() + momenta(opt)]
    for i in range(steps):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[i])
        rows.append(sched.get_last_lr() + momenta(opt))
        assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return rows


def compare(make_ours, make_theirs, steps: int, kind: str = "sgd", metrics=None, **opt_kw) -> None:
    opt, topt = opts(kind, **opt_kw)
    got = trace(opt, make_ours(opt), steps, metrics)
    want = trace(topt, make_theirs(topt), steps, metrics)
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), rtol=1e-9, atol=1e-15)
    assert len({tuple(r) for r in got}) > 1  # the schedule moves


@pytest.mark.parametrize("t_max, eta_min, steps", [(5, 0.0, 23), (10, 1e-3, 10), (1, 0.005, 4)])
def test_cosine_annealing_matches_torch(t_max, eta_min, steps) -> None:
    compare(
        lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=t_max, eta_min=eta_min),
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=t_max, eta_min=eta_min),
        steps,
    )


ONE_CYCLE = [
    ("sgd", {"max_lr": 0.5, "total_steps": 20}, {"momentum": 0.9}),
    ("sgd", {"max_lr": [0.5, 0.1], "epochs": 3, "steps_per_epoch": 7, "anneal_strategy": "linear"}, {}),
    ("sgd", {"max_lr": 0.3, "total_steps": 25, "three_phase": True, "pct_start": 0.25}, {"momentum": 0.5}),
    ("adamw", {"max_lr": 0.01, "total_steps": 16, "div_factor": 10.0, "final_div_factor": 100.0}, {}),
    ("adamw", {"max_lr": 0.01, "total_steps": 12, "cycle_momentum": False}, {}),
    ("sgd", {"max_lr": 0.2, "total_steps": 10, "base_momentum": [0.8, 0.7], "max_momentum": 0.99}, {}),
]


@pytest.mark.parametrize("kind, kw, opt_kw", ONE_CYCLE)
def test_one_cycle_matches_torch(kind, kw, opt_kw) -> None:
    steps = kw.get("total_steps") or kw["epochs"] * kw["steps_per_epoch"]
    compare(
        lambda o: lr_scheduler.OneCycleLR(o, **kw),
        lambda o: torch.optim.lr_scheduler.OneCycleLR(o, **kw),
        steps - 1,
        kind,
        **opt_kw,
    )


def test_one_cycle_stops_after_total_steps_and_checks_arguments() -> None:
    opt, _ = opts()
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    sched.step()
    sched.step()
    sched.step()  # step 3 == total_steps is still allowed, as in PyTorch
    with pytest.raises(ValueError, match="tried to step 4 times; total_steps is 3"):
        sched.step()
    with pytest.raises(ValueError, match="total_steps, or both epochs and steps_per_epoch"):
        lr_scheduler.OneCycleLR(opts()[0], max_lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy"):
        lr_scheduler.OneCycleLR(opts()[0], max_lr=0.1, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr: expected 2 values"):
        lr_scheduler.OneCycleLR(opts()[0], max_lr=[0.1], total_steps=5)


PLATEAU = [
    ({}, [1.0, 0.9, 0.95, 0.97, 0.99, 1.0, 1.1, 1.2, 1.3] + [1.0] * 30),
    ({"patience": 2, "factor": 0.5}, [5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3]),
    ({"patience": 1, "cooldown": 2, "min_lr": [0.01, 0.001]}, [3.0] * 20),
    (
        {"mode": "max", "patience": 1, "threshold": 0.1, "threshold_mode": "abs"},
        [0.5, 0.55, 0.58, 0.7, 0.71, 0.72, 0.9] * 2,
    ),
    ({"mode": "max", "patience": 0, "factor": 0.3, "eps": 0.01}, [0.1, 0.1, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]),
    ({"threshold_mode": "abs", "threshold": 0.5, "patience": 1}, [10, 9.6, 9.2, 8.8, 8.0, 7.9, 7.8, 7.7]),
]


@pytest.mark.parametrize("kw, metrics", PLATEAU)
def test_reduce_on_plateau_matches_torch(kw, metrics) -> None:
    compare(
        lambda o: lr_scheduler.ReduceLROnPlateau(o, **kw),
        lambda o: torch.optim.lr_scheduler.ReduceLROnPlateau(o, **kw),
        len(metrics),
        metrics=metrics,
        momentum=0.9,
    )


def test_reduce_on_plateau_takes_tensor_metrics_and_round_trips_state() -> None:
    opt, _ = opts()
    sched = lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    sched.step(mt.tensor(1.0))
    sched.step(mt.tensor(2.0))
    assert sched.get_last_lr() == pytest.approx([0.01, 0.002])
    state = sched.state_dict()
    assert "optimizer" not in state and state["best"] == 1.0
    other = lr_scheduler.ReduceLROnPlateau(opts()[0])
    other.load_state_dict(state)
    assert other.best == 1.0 and other.patience == 0
    for kw, match in [
        ({"factor": 1.0}, "factor"),
        ({"mode": "up"}, "mode"),
        ({"threshold_mode": "x"}, "threshold_mode"),
    ]:
        with pytest.raises(ValueError, match=match):
            lr_scheduler.ReduceLROnPlateau(opts()[0], **kw)
