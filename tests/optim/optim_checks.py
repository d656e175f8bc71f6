"""Shared helpers of the lr-scheduler tests: the same two-group optimizer in minitensor and in PyTorch,
and the trace of learning rates (and momenta) a schedule gives, to compare the two libraries.

A schedule is written once for both, as ``make(L, opt)`` where ``L`` is the library's
``lr_scheduler`` module: ``lambda L, o: L.StepLR(o, step_size=3, gamma=0.5)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import minitensor as mt

LRS = (0.1, 0.02)  # two parameter groups with different learning rates


def optimizer(lib, kind: str = "sgd", **options):
    """A two-group optimizer of ``lib`` (minitensor or torch): SGD (``momentum`` in its defaults) or AdamW
    (``betas``), for the momentum-cycling schedules."""
    groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in LRS]
    make = lib.optim.SGD if kind == "sgd" else lib.optim.AdamW
    return make(groups, lr=1.0, **options)


def schedulers(lib):
    """``lib``'s lr_scheduler module."""
    return lib.optim.lr_scheduler


def momenta(opt) -> list:
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def trace(opt, step: Callable, steps: int, metrics=None, before_step: Callable | None = None) -> list:
    """Rows of [lr per group] + [momentum per group]: at the start, then after each of ``steps`` steps
    (``opt.step()``, then ``step()`` or ``step(metrics[i])``).  ``before_step(i, opt)`` may change the
    optimizer first (set an lr by hand)."""
    rows = [[g["lr"] for g in opt.param_groups] + momenta(opt)]
    for i in range(steps):
        if before_step is not None:
            before_step(i, opt)
        opt.step()
        step() if metrics is None else step(metrics[i])
        rows.append([g["lr"] for g in opt.param_groups] + momenta(opt))
    return rows


def same_trace(make: Callable, steps: int, kind: str = "sgd", metrics=None, before_step=None, **options) -> list:
    """Build ``make(L, opt)`` (a scheduler, or a list of schedulers stepped together in order) in both
    libraries, trace both, assert they agree (to rounding) and that the schedule moves (so a constant
    lr cannot pass).  Returns minitensor's trace."""
    import torch

    traces = []
    for lib in (mt, torch):
        opt = optimizer(lib, kind, **options)
        made = make(schedulers(lib), opt)
        scheds = made if isinstance(made, list) else [made]

        def step(*metric, scheds=scheds):
            for sched in scheds:
                sched.step(*metric)

        rows = trace(opt, step, steps, metrics, before_step)
        assert scheds[-1].get_last_lr() == [g["lr"] for g in opt.param_groups]
        traces.append(rows)
    ours, theirs = (np.array(t, dtype=float) for t in traces)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-15)
    assert len({tuple(r) for r in traces[0]}) > 1, "the schedule never moves: the comparison proves nothing"
    return traces[0]


# One of each scheduler (and the steps that show it moving), for the tests that go through all of them.
# (name: (make, steps, optimizer kind, optimizer options))
EVERY_SCHEDULER = {
    "StepLR": (lambda L, o: L.StepLR(o, step_size=3, gamma=0.5), 10, "sgd", {}),
    "MultiStepLR": (lambda L, o: L.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.5), 10, "sgd", {}),
    "ExponentialLR": (lambda L, o: L.ExponentialLR(o, gamma=0.8), 10, "sgd", {}),
    "ConstantLR": (lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4), 10, "sgd", {}),
    "LinearLR": (lambda L, o: L.LinearLR(o, start_factor=0.2, total_iters=6), 10, "sgd", {}),
    "PolynomialLR": (lambda L, o: L.PolynomialLR(o, total_iters=8, power=2.0), 10, "sgd", {}),
    "LambdaLR": (lambda L, o: L.LambdaLR(o, lambda e: 0.9**e), 10, "sgd", {}),
    "MultiplicativeLR": (lambda L, o: L.MultiplicativeLR(o, lambda e: 0.5 + 0.1 * (e % 3)), 10, "sgd", {}),
    "CosineAnnealingLR": (lambda L, o: L.CosineAnnealingLR(o, T_max=4, eta_min=0.001), 10, "sgd", {}),
    "CosineAnnealingWarmRestarts": (lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2), 10, "sgd", {}),
    "CyclicLR": (lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3), 10, "sgd", {"momentum": 0.9}),
    "OneCycleLR": (lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=12), 10, "sgd", {"momentum": 0.9}),
    "SequentialLR": (
        lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=3), L.ExponentialLR(o, 0.8)], milestones=[3]),
        10, "sgd", {},
    ),
    "ChainedScheduler": (
        lambda L, o: L.ChainedScheduler([L.ConstantLR(o, factor=0.1, total_iters=2), L.ExponentialLR(o, 0.9)]),
        10, "sgd", {},
    ),
}  # fmt: skip
