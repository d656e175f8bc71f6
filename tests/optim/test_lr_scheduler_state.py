"""Scheduler state: ``state_dict`` has PyTorch's keys, state dicts load across minitensor and PyTorch and
through ``mt.save`` / ``mt.load``, resuming (``load_state_dict`` or ``last_epoch``) continues the schedule;
and the argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from optim_checks import EVERY_SCHEDULER, LRS, momenta, optimizer, schedulers, trace

import minitensor as mt
from minitensor.optim import lr_scheduler

torch = pytest.importorskip("torch")

ALL = {**EVERY_SCHEDULER, "ReduceLROnPlateau": (lambda L, o: L.ReduceLROnPlateau(o, patience=1), 10, "sgd", {})}


def run(lib, name: str, steps: int):
    """The optimizer and scheduler ``name`` of ``lib`` after ``steps`` steps (a falling metric for the plateau)."""
    make, _, kind, options = ALL[name]
    opt = optimizer(lib, kind, **options)
    sched = make(schedulers(lib), opt)
    for i in range(steps):
        opt.step()
        sched.step(1.0 / (1 + i % 3)) if name == "ReduceLROnPlateau" else sched.step()
    return opt, sched


def keys(state: dict) -> dict:
    """The keys of a (possibly nested) scheduler state dict."""
    return {k: [keys(s) for s in v] if k == "_schedulers" else None for k, v in state.items()}


@pytest.mark.parametrize("name", list(ALL))
def test_state_dict_has_pytorchs_keys(name):
    assert keys(run(mt, name, 3)[1].state_dict()) == keys(run(torch, name, 3)[1].state_dict())


def plain(value):
    """A state-dict value as it crosses between libraries (Tensors would be arrays; these are numbers)."""
    if isinstance(value, dict):
        return type(value)({k: plain(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


@pytest.mark.parametrize("name", list(ALL))
def test_state_dicts_load_across_libraries_and_the_schedule_goes_on(name):
    """4 steps in one library, the optimizer's and the scheduler's state dicts into a fresh pair of the
    other, 5 more steps: the same learning rates (and momenta) as 9 steps without interruption."""
    metrics = [1.0 / (1 + (i + 4) % 3) for i in range(5)] if name == "ReduceLROnPlateau" else None
    for source, target in ((mt, torch), (torch, mt)):
        opt, sched = run(source, name, 4)
        straight_opt, straight = run(target, name, 9)
        fresh_opt, fresh = run(target, name, 0)  # (made first, then loaded: PyTorch's order)
        fresh_opt.load_state_dict(opt.state_dict())  # (no parameter state: these never get gradients)
        fresh.load_state_dict(plain(sched.state_dict()))
        trace(fresh_opt, fresh.step, 5, metrics)
        assert fresh.get_last_lr() == pytest.approx(straight.get_last_lr(), rel=1e-12), source.__name__
        assert momenta(fresh_opt) == pytest.approx(momenta(straight_opt), rel=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "LambdaLR", "OneCycleLR", "SequentialLR", "CosineAnnealingWarmRestarts"])
def test_resume_through_a_checkpoint_file(name, tmp_path):
    _, straight = run(mt, name, 9)
    opt, sched = run(mt, name, 4)
    checkpoint = mt.load(mt.save({"sched": sched.state_dict(), "opt": opt.state_dict()}, tmp_path / "ckpt"))
    fresh_opt, fresh = run(mt, name, 0)
    fresh_opt.load_state_dict(checkpoint["opt"])
    fresh.load_state_dict(checkpoint["sched"])
    trace(fresh_opt, fresh.step, 5)
    assert fresh.get_last_lr() == pytest.approx(straight.get_last_lr(), rel=1e-12)


def test_a_callable_objects_attributes_are_saved_as_pytorch():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, step):
            return self.rate**step

    for lib in (mt, torch):
        sched = lib.optim.lr_scheduler.LambdaLR(optimizer(lib), [Decay(0.5), lambda e: 1.0])
        state = sched.state_dict()
        assert state["lr_lambdas"] == [{"rate": 0.5}, None]
        other = lib.optim.lr_scheduler.LambdaLR(optimizer(lib), [Decay(0.9), lambda e: 1.0])
        other.load_state_dict(state)
        assert other.lr_lambdas[0].rate == 0.5 and "lr_lambdas" in state  # (the dict given is left whole)


def test_cosine_annealing_made_after_loading_a_checkpoint_keeps_its_lr_as_torch():
    """Resume: a new scheduler over an optimizer loaded mid-schedule keeps the loaded lr, then continues."""

    def resumed(lib) -> list:
        first = optimizer(lib, "adamw")
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(first, T_max=8, eta_min=1e-3)
        trace(first, sched.step, 3)
        fresh = optimizer(lib, "adamw")
        fresh.load_state_dict(first.state_dict())
        sched_state = sched.state_dict()
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(fresh, T_max=8, eta_min=1e-3)
        rows = [[g["lr"] for g in fresh.param_groups]]  # the checkpoint's lr, not the initial one
        sched.load_state_dict(sched_state)
        return rows + [r[:2] for r in trace(fresh, sched.step, 5)]

    got, want = resumed(mt), resumed(torch)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
    assert got[0] != list(LRS)  # the loaded lr differs from the initial one, so the test can fail


RESUMED = {  # schedules made with last_epoch=3 (PyTorch's other way to resume)
    "StepLR": lambda L, o: L.StepLR(o, step_size=3, gamma=0.5, last_epoch=3),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.8, last_epoch=3),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=4, eta_min=0.001, last_epoch=3),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.2, total_iters=6, last_epoch=3),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, last_epoch=3),
    "CyclicLR": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, cycle_momentum=False, last_epoch=3),
}


@pytest.mark.parametrize("name", list(RESUMED))
def test_resuming_with_last_epoch_as_pytorch(name):
    """Over groups that hold 'initial_lr' (as a loaded optimizer's do), the schedule goes on from step 4."""
    rows = []
    for lib in (mt, torch):
        opt = optimizer(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"]
        sched = RESUMED[name](schedulers(lib), opt)
        rows.append(trace(opt, sched.step, 5))
        assert sched.last_epoch == 9
    np.testing.assert_allclose(rows[0], rows[1], rtol=1e-9, atol=1e-15)


def test_resuming_without_initial_lr_raises_keyerror_as_pytorch():
    for lib in (mt, torch):
        with pytest.raises(KeyError, match="initial_lr"):
            lib.optim.lr_scheduler.StepLR(optimizer(lib), step_size=2, last_epoch=3)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda o: lr_scheduler.StepLR(o, step_size=0), ValueError, "step_size.*0"),
        (lambda o: lr_scheduler.StepLR(o, step_size=2.5), TypeError, "step_size"),
        (lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=math.nan), ValueError, "gamma.*nan"),
        (lambda o: lr_scheduler.StepLR(object(), step_size=2), TypeError, "optimizer.*object"),
        (lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, -1]), ValueError, r"milestones\[1\].*-1"),
        (lambda o: lr_scheduler.ExponentialLR(o, gamma=-0.5), ValueError, "gamma.*-0.5"),
        (lambda o: lr_scheduler.ConstantLR(o, factor=1.5), ValueError, "factor.*1.5"),
        (lambda o: lr_scheduler.ConstantLR(o, factor=0.0), ValueError, "factor.*0"),
        (lambda o: lr_scheduler.LinearLR(o, start_factor=0.0), ValueError, "start_factor.*0"),
        (lambda o: lr_scheduler.LinearLR(o, start_factor=1.5), ValueError, "start_factor.*1.5"),
        (lambda o: lr_scheduler.LinearLR(o, end_factor=-0.1), ValueError, "end_factor.*-0.1"),
        (lambda o: lr_scheduler.LinearLR(o, total_iters=0), ValueError, "total_iters.*0"),
        (lambda o: lr_scheduler.PolynomialLR(o, total_iters=0), ValueError, "total_iters.*0"),
        (lambda o: lr_scheduler.LambdaLR(o, [lambda e: 1.0]), ValueError, "lr_lambda.*2"),
        (lambda o: lr_scheduler.LambdaLR(o, 0.5), TypeError, "lr_lambda.*float"),
        (lambda o: lr_scheduler.MultiplicativeLR(o, [1, 2]), TypeError, r"lr_lambda\[0\].*int"),
        (lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=0), ValueError, "T_max.*0"),
        (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, "T_0.*0"),
        (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5), ValueError, "T_mult.*1.5"),
        (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), ValueError, "eta_min.*str"),
        (lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, mode="cosine"), ValueError, "mode.*cosine"),
        (lambda o: lr_scheduler.CyclicLR(o, 0.01, [0.1]), ValueError, "max_lr.*2"),
        (lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=0), ValueError, "step_size_up.*0"),
        (lambda o: lr_scheduler.CyclicLR(mt.optim.Optimizer([mt.zeros(1, requires_grad=True)], {"lr": 0.1}), 0.01, 1),
         ValueError, "cycle_momentum.*Optimizer"),
        (lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.1), ValueError, "total_steps, or both epochs"),
        (lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=0), ValueError, "total_steps.*0"),
        (lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=5, anneal_strategy="exp"), ValueError,
         "anneal_strategy.*exp"),
        (lambda o: lr_scheduler.OneCycleLR(o, max_lr=[0.1], total_steps=5), ValueError, "max_lr: expected 2 values"),
        (lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=5, pct_start=1.5), ValueError, "pct_start.*1.5"),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, factor=1.0), ValueError, "factor.*1.0"),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="up"), ValueError, "mode.*up"),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, threshold_mode="x"), ValueError, "threshold_mode.*x"),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "min_lr.*2"),
        (lambda o: lr_scheduler.SequentialLR(o, [], []), ValueError, "at least one"),
        (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(o, 2)], [3]), ValueError, "milestones.*0.*1"),
        (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.ReduceLROnPlateau(o)], []), ValueError, "metric"),
        (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(optimizer(mt), 2)], []), ValueError,
         "another optimizer"),
        (lambda o: lr_scheduler.ChainedScheduler([3]), TypeError, r"schedulers\[0\].*int"),
        (lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(o, 2), 3], optimizer=o), TypeError,
         r"schedulers\[1\].*int"),
        (lambda o: lr_scheduler.LinearWarmup(o, warmup_steps=5, total_steps=3), ValueError, "warmup_steps.*5"),
        (lambda o: lr_scheduler.LinearWarmup(o, warmup_steps=-1, total_steps=3), ValueError, "warmup_steps.*-1"),
    ],
)  # fmt: skip
def test_bad_arguments_raise_naming_them(make, error, match):
    with pytest.raises(error, match=match):
        make(optimizer(mt))
