"""PyTorch's chainable schedules: schedulers stepped together compose, an lr set by hand is kept,
``step(epoch)`` uses the closed form (with PyTorch's deprecation warning), PyTorch's warnings, and
schedules of one's own on ``LRScheduler`` (or its old name ``_LRScheduler``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from optim_checks import EVERY_SCHEDULER, optimizer, same_trace, schedulers, trace

import minitensor as mt
from minitensor.optim import lr_scheduler

torch = pytest.importorskip("torch")

TOGETHER = {
    "LinearLR + StepLR": lambda L, o: [L.LinearLR(o, start_factor=0.1, total_iters=5), L.StepLR(o, 10, 0.5)],
    "StepLR + CosineAnnealingLR": lambda L, o: [L.StepLR(o, 4, 0.5), L.CosineAnnealingLR(o, T_max=10)],
    "CosineAnnealingLR + ExponentialLR": lambda L, o: [
        L.CosineAnnealingLR(o, 6, eta_min=1e-3),
        L.ExponentialLR(o, 0.9),
    ],
    "LinearLR + MultiStepLR": lambda L, o: [L.LinearLR(o), L.MultiStepLR(o, [4, 8], gamma=0.5)],
    "ConstantLR + PolynomialLR": lambda L, o: [L.ConstantLR(o, 0.5, total_iters=3), L.PolynomialLR(o, total_iters=9)],
    "MultiplicativeLR + StepLR": lambda L, o: [L.MultiplicativeLR(o, lambda e: 0.95), L.StepLR(o, 3, 0.5)],
}


@pytest.mark.parametrize("name", list(TOGETHER))
def test_schedulers_stepped_together_compose_as_pytorch(name):
    same_trace(TOGETHER[name], 14)


def test_linear_warmup_with_step_decay_keeps_the_warmup():
    """Issue 39: LinearLR(start_factor=0.1, total_iters=5) and StepLR(10, 0.5) stepped together warm up
    (0.01, 0.028, 0.046 ...) instead of jumping to the full lr at step 0."""
    lrs = [row[0] for row in same_trace(TOGETHER["LinearLR + StepLR"], 14)]
    np.testing.assert_allclose(lrs[:7], [0.01, 0.028, 0.046, 0.064, 0.082, 0.1, 0.1], rtol=1e-12)
    np.testing.assert_allclose(lrs[10:], [0.05] * 5, rtol=1e-12)


def set_lr_by_hand(i: int, opt) -> None:
    """Before step 4, set group 0's lr as nanoGPT-style code does."""
    if i == 4:
        opt.param_groups[0]["lr"] = 0.01


def test_step_lr_keeps_an_lr_set_by_hand():
    """Issue 39: after ``param_groups[0]['lr'] = 0.01`` StepLR decays from 0.01, not from base_lr."""
    rows = same_trace(lambda L, o: L.StepLR(o, step_size=3, gamma=0.5), 10, before_step=set_lr_by_hand)
    assert [row[0] for row in rows[4:]] == pytest.approx([0.05, 0.01, 0.005, 0.005, 0.005, 0.0025, 0.0025])


@pytest.mark.parametrize("name", list(EVERY_SCHEDULER))
def test_every_scheduler_treats_an_lr_set_by_hand_as_pytorch(name):
    """Chainable ones keep it and go on from it; formula ones (LambdaLR, CyclicLR ...) override it."""
    make, steps, kind, options = EVERY_SCHEDULER[name]
    same_trace(make, steps, kind, before_step=set_lr_by_hand, **options)


CLOSED_FORMS = ["StepLR", "MultiStepLR", "ExponentialLR", "ConstantLR", "LinearLR", "PolynomialLR",
                "CosineAnnealingLR", "LambdaLR", "MultiplicativeLR", "CosineAnnealingWarmRestarts"]  # fmt: skip


@pytest.mark.parametrize("name", CLOSED_FORMS)
def test_step_with_an_epoch_warns_and_jumps_as_pytorch(name):
    """The deprecated ``step(epoch)``: the closed form where PyTorch has one (else ``get_lr``), epochs
    out of order included; the deprecation warning each time (but CosineAnnealingWarmRestarts'
    documented fractional epochs)."""
    make, _, kind, options = EVERY_SCHEDULER[name]
    epochs = [1, 2, 5, 3, 3, 7.5 if name == "CosineAnnealingWarmRestarts" else 7, 8]
    rows = []
    for lib in (mt, torch):
        opt = optimizer(lib, kind, **options)
        sched = make(schedulers(lib), opt)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows.append(trace(opt, sched.step, len(epochs), metrics=epochs))  # (step(metrics[i]): the epoch)
        deprecations = [w for w in caught if "epoch parameter in `scheduler.step()`" in str(w.message)]
        assert len(deprecations) == (0 if name == "CosineAnnealingWarmRestarts" else len(epochs)), lib
        assert sched.last_epoch == 8
    np.testing.assert_allclose(rows[0], rows[1], rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("lib_name", ["minitensor", "torch"])
def test_pytorchs_warnings(lib_name):
    """Stepping the scheduler before the optimizer warns; so does calling get_lr() by hand."""
    lib = mt if lib_name == "minitensor" else torch
    opt = optimizer(lib)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    opt = optimizer(lib)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()  # the right order: silent


def halving(base):
    """A schedule of one's own, on either library's base class: halve the current lr every 2 steps."""

    class Halving(base):
        def __init__(self, optimizer, every=2, last_epoch=-1):
            self.every = every
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            if self.last_epoch == 0 or self.last_epoch % self.every:
                return [group["lr"] for group in self.optimizer.param_groups]
            return [group["lr"] * 0.5 for group in self.optimizer.param_groups]

    return Halving


@pytest.mark.parametrize("base_name", ["LRScheduler", "_LRScheduler"])
def test_a_schedule_of_ones_own_runs_as_on_pytorch(base_name):
    """A user subclass that defines get_lr (on the old name too) behaves as on PyTorch, also chained."""
    rows = same_trace(lambda L, o: [halving(getattr(L, base_name))(o), L.LinearLR(o, 0.5, total_iters=3)], 9)
    assert rows[-1][0] == pytest.approx(0.1 / 16)
    assert issubclass(lr_scheduler._LRScheduler, lr_scheduler.LRScheduler)
    assert lr_scheduler._LRScheduler.__name__ == "_LRScheduler"
    with pytest.raises(NotImplementedError, match="get_lr"):
        lr_scheduler.LRScheduler(optimizer(mt))
