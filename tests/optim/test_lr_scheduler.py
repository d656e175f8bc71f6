"""Every learning-rate scheduler against PyTorch's: the lr (and momentum) sequences over several
steps, several option sets, two parameter groups with different learning rates."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from optim_checks import EVERY_SCHEDULER, LRS, optimizer, same_trace, trace

import minitensor as mt
from minitensor.optim import lr_scheduler

torch = pytest.importorskip("torch")

# name: (make, steps, optimizer kind, optimizer options): variants beyond EVERY_SCHEDULER's
VARIANTS = {
    "StepLR default gamma": (lambda L, o: L.StepLR(o, step_size=4), 14, "sgd", {}),
    "MultiStepLR default gamma": (lambda L, o: L.MultiStepLR(o, [3, 7]), 10, "sgd", {}),
    "ConstantLR defaults": (lambda L, o: L.ConstantLR(o), 8, "sgd", {}),
    "LinearLR defaults": (lambda L, o: L.LinearLR(o), 8, "sgd", {}),
    "LinearLR decay": (lambda L, o: L.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=10), 12, "sgd", {}),
    "PolynomialLR defaults": (lambda L, o: L.PolynomialLR(o), 8, "sgd", {}),
    "PolynomialLR sqrt": (lambda L, o: L.PolynomialLR(o, total_iters=6, power=0.5), 8, "sgd", {}),
    "LambdaLR per group": (lambda L, o: L.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.5 + e % 3]), 8, "sgd", {}),
    "MultiplicativeLR per group": (
        lambda L, o: L.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.1 if e % 2 else 0.8]), 8, "sgd", {},
    ),
    "CosineAnnealingLR periodic": (lambda L, o: L.CosineAnnealingLR(o, T_max=5), 23, "sgd", {}),
    "CosineAnnealingLR T_max=1": (lambda L, o: L.CosineAnnealingLR(o, T_max=1, eta_min=0.005), 4, "sgd", {}),
    "CosineAnnealingWarmRestarts T_mult=1": (
        lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, eta_min=0.001), 10, "sgd", {},
    ),
    "CyclicLR triangular2": (
        lambda L, o: L.CyclicLR(o, [0.01, 0.005], 0.1, step_size_up=2, step_size_down=3, mode="triangular2"),
        16, "sgd", {"momentum": 0.9},
    ),
    "CyclicLR exp_range betas": (
        lambda L, o: L.CyclicLR(o, 0.01, [0.1, 0.05], step_size_up=3, mode="exp_range", gamma=0.9), 14, "adamw", {},
    ),
    "CyclicLR scale_fn iterations": (
        lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations",
                                cycle_momentum=False),
        10, "sgd", {},
    ),
    "CyclicLR momenta per group": (
        lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, base_momentum=[0.7, 0.8], max_momentum=0.95),
        8, "sgd", {"momentum": 0.5},
    ),
    "OneCycleLR epochs linear": (
        lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 0.1], epochs=3, steps_per_epoch=7, anneal_strategy="linear"),
        20, "sgd", {},
    ),
    "OneCycleLR three phase": (
        lambda L, o: L.OneCycleLR(o, max_lr=0.3, total_steps=25, three_phase=True, pct_start=0.25),
        24, "sgd", {"momentum": 0.5},
    ),
    "OneCycleLR betas": (
        lambda L, o: L.OneCycleLR(o, max_lr=0.01, total_steps=16, div_factor=10.0, final_div_factor=100.0),
        15, "adamw", {},
    ),
    "OneCycleLR no momentum": (lambda L, o: L.OneCycleLR(o, max_lr=0.01, total_steps=12, cycle_momentum=False),
                               11, "adamw", {}),
    "OneCycleLR momenta per group": (
        lambda L, o: L.OneCycleLR(o, max_lr=0.2, total_steps=10, base_momentum=[0.8, 0.7], max_momentum=0.99),
        9, "sgd", {},
    ),
    "SequentialLR of three": (
        lambda L, o: L.SequentialLR(
            o, [L.ConstantLR(o, 0.5, total_iters=2), L.StepLR(o, 2, 0.5), L.CosineAnnealingLR(o, T_max=4)], [2, 6]
        ),
        14, "sgd", {},
    ),
    "SequentialLR warmup then cosine": (
        lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=4), L.CosineAnnealingLR(o, 8, 1e-3)], [4]),
        14, "sgd", {},
    ),
    "ChainedScheduler given the optimizer": (
        lambda L, o: L.ChainedScheduler([L.LinearLR(o, 0.5, total_iters=3), L.StepLR(o, 4, 0.3)], optimizer=o),
        12, "sgd", {},
    ),
}  # fmt: skip

CASES = {**EVERY_SCHEDULER, **VARIANTS}


@pytest.mark.parametrize("name", list(CASES))
def test_lr_sequence_matches_torch(name):
    make, steps, kind, options = CASES[name]
    same_trace(make, steps, kind, **options)


def _hf_linear_warmup(warmup: int, total: int):
    """Hugging Face's get_linear_schedule_with_warmup factor, the reference of LinearWarmup."""

    def factor(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


@pytest.mark.parametrize("warmup, total", [(4, 11), (0, 6)])
def test_linear_warmup_is_hugging_faces_schedule(warmup, total):
    opt, topt = optimizer(mt), optimizer(torch)
    got = trace(opt, lr_scheduler.LinearWarmup(opt, warmup_steps=warmup, total_steps=total).step, 14)
    want = trace(topt, torch.optim.lr_scheduler.LambdaLR(topt, _hf_linear_warmup(warmup, total)).step, 14)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    lrs = [row[0] for row in got]
    assert max(lrs) == pytest.approx(LRS[0]) and lrs[total:] == [0.0] * (15 - total)


PLATEAU = [
    ({}, [1.0, 0.9, 0.95, 0.97, 0.99, 1.0, 1.1, 1.2, 1.3] + [1.0] * 30),
    ({"patience": 2, "factor": 0.5}, [5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3]),
    ({"patience": 1, "cooldown": 2, "min_lr": [0.01, 0.001]}, [3.0] * 20),
    ({"mode": "max", "patience": 1, "threshold": 0.1, "threshold_mode": "abs"}, [0.5, 0.55, 0.58, 0.7, 0.71, 0.9] * 2),
    ({"mode": "max", "patience": 0, "factor": 0.3, "eps": 0.01}, [0.1, 0.1, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]),
    ({"threshold_mode": "abs", "threshold": 0.5, "patience": 1}, [10, 9.6, 9.2, 8.8, 8.0, 7.9, 7.8, 7.7]),
]


@pytest.mark.parametrize("options, metrics", PLATEAU)
def test_reduce_on_plateau_matches_torch(options, metrics):
    same_trace(lambda L, o: L.ReduceLROnPlateau(o, **options), len(metrics), metrics=metrics, momentum=0.9)


def test_reduce_on_plateau_takes_tensor_metrics():
    opt = optimizer(mt)
    sched = lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    sched.step(mt.tensor(1.0))
    sched.step(mt.tensor(2.0))
    assert sched.get_last_lr() == pytest.approx([0.01, 0.002]) and sched.best == 1.0


def test_one_cycle_stops_after_total_steps():
    opt = optimizer(mt)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    for _ in range(3):  # step 3 == total_steps is still allowed, as in PyTorch
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="tried to step 4 times; total_steps is 3"):
        sched.step()


@pytest.mark.parametrize("name", torch.optim.lr_scheduler.__all__)
def test_signature_is_pytorchs(name):
    """Argument names, order, kinds and defaults."""
    ours, theirs = (
        inspect.signature(getattr(lr_scheduler, name)),
        inspect.signature(getattr(torch.optim.lr_scheduler, name)),
    )
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]


def test_every_pytorch_scheduler_is_here():
    assert set(torch.optim.lr_scheduler.__all__) <= set(lr_scheduler.__all__)
    assert set(EVERY_SCHEDULER) | {"ReduceLROnPlateau", "LRScheduler"} == set(torch.optim.lr_scheduler.__all__)
