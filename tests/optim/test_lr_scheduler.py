"""Learning-rate schedulers against PyTorch's sequences, plus checks and state dicts."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import optim
from minitensor.optim import lr_scheduler

torch = pytest.importorskip("torch")

LRS = (0.1, 0.02)  # two parameter groups with different learning rates
N_STEPS = 14


def _hf_linear_warmup(warmup: int, total: int):
    """Hugging Face's get_linear_schedule_with_warmup factor, the reference of LinearWarmup."""

    def factor(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


CASES = {
    "step": (
        lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
        lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5),
    ),
    "step_default_gamma": (
        lambda o: lr_scheduler.StepLR(o, step_size=4),
        lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=4),
    ),
    "lambda": (
        lambda o: lr_scheduler.LambdaLR(o, lambda e: 0.9**e),
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 0.9**e),
    ),
    "lambda_per_group": (
        lambda o: lr_scheduler.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.5 + e % 3]),
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.5 + e % 3]),
    ),
    "linear_default": (lambda o: lr_scheduler.LinearLR(o), lambda o: torch.optim.lr_scheduler.LinearLR(o)),
    "linear_warmup": (
        lambda o: lr_scheduler.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=7),
        lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=7),
    ),
    "linear_decay": (
        lambda o: lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=10),
        lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=10),
    ),
    "warmup_then_decay": (
        lambda o: lr_scheduler.LinearWarmup(o, warmup_steps=4, total_steps=11),
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, _hf_linear_warmup(4, 11)),
    ),
    "no_warmup": (
        lambda o: lr_scheduler.LinearWarmup(o, warmup_steps=0, total_steps=6),
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, _hf_linear_warmup(0, 6)),
    ),
}


def _mt_opt():
    return optim.SGD([{"params": [mt.zeros(2, requires_grad=True)], "lr": lr} for lr in LRS], lr=1.0)


def _torch_opt():
    return torch.optim.SGD([{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr in LRS], lr=1.0)


def _sequence(opt, sched, steps: int = N_STEPS) -> list:
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        assert lrs[-1] == [g["lr"] for g in opt.param_groups]
    return lrs


@pytest.mark.parametrize("case", list(CASES))
def test_lr_sequence_matches_torch(case):
    ours, theirs = CASES[case]
    opt, topt = _mt_opt(), _torch_opt()
    got = _sequence(opt, ours(opt))
    want = _sequence(topt, theirs(topt))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-12, atol=1e-15)
    assert len({tuple(x) for x in got}) > 1  # the schedule moves


def test_linear_warmup_shape():
    opt = _mt_opt()
    lrs = [lr for lr, _ in _sequence(opt, lr_scheduler.LinearWarmup(opt, warmup_steps=4, total_steps=8), steps=10)]
    assert lrs[0] == 0.0 and lrs[4] == pytest.approx(LRS[0]) and lrs[8] == 0.0 and lrs[10] == 0.0
    assert all(a < b for a, b in zip(lrs[:4], lrs[1:5])) and all(a > b for a, b in zip(lrs[4:8], lrs[5:9]))


def test_creating_a_scheduler_records_initial_lr_and_applies_step_zero():
    opt = _mt_opt()
    sched = lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    assert [g["initial_lr"] for g in opt.param_groups] == list(LRS)
    assert sched.base_lrs == list(LRS) and sched.last_epoch == 0
    assert [g["lr"] for g in opt.param_groups] == [lr * 0.5 for lr in LRS]


@pytest.mark.parametrize("through_file", [False, True])
def test_scheduler_and_optimizer_resume_from_state_dicts(through_file, tmp_path):
    def make(opt):
        return lr_scheduler.StepLR(opt, step_size=2, gamma=0.3)

    opt = _mt_opt()
    straight = _sequence(opt, make(opt), steps=9)

    opt = _mt_opt()
    sched = make(opt)
    _sequence(opt, sched, steps=4)
    ckpt = {"sched": sched.state_dict(), "opt": opt.state_dict()}
    if through_file:
        ckpt = mt.load(mt.save(ckpt, tmp_path / "ckpt.npz"))
    opt2 = _mt_opt()
    sched2 = make(opt2)  # as in PyTorch: create the scheduler, then load both states
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    resumed = _sequence(opt2, sched2, steps=5)
    assert resumed == straight[4:]


def test_lambda_lr_state_dict_leaves_the_functions_out():
    sched = lr_scheduler.LambdaLR(_mt_opt(), lambda e: 0.5**e)
    assert "lr_lambdas" not in sched.state_dict() and "optimizer" not in sched.state_dict()
    with pytest.raises(ValueError, match="lr_lambdas"):
        sched.load_state_dict({**sched.state_dict(), "lr_lambdas": []})


def test_load_state_dict_rejects_unknown_keys():
    sched = lr_scheduler.StepLR(_mt_opt(), step_size=3)
    with pytest.raises(ValueError, match="total_iters"):
        sched.load_state_dict({**sched.state_dict(), "total_iters": 5})


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda o: lr_scheduler.StepLR(o, step_size=0), ValueError, "step_size.*0"),
        (lambda o: lr_scheduler.StepLR(o, step_size=2.5), TypeError, "step_size"),
        (lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=float("nan")), ValueError, "gamma.*nan"),
        (lambda o: lr_scheduler.LinearLR(o, start_factor=0.0), ValueError, "start_factor.*0"),
        (lambda o: lr_scheduler.LinearLR(o, start_factor=1.5), ValueError, "start_factor.*1.5"),
        (lambda o: lr_scheduler.LinearLR(o, end_factor=-0.1), ValueError, "end_factor.*-0.1"),
        (lambda o: lr_scheduler.LinearLR(o, total_iters=0), ValueError, "total_iters.*0"),
        (lambda o: lr_scheduler.LinearWarmup(o, warmup_steps=5, total_steps=3), ValueError, "warmup_steps.*5"),
        (lambda o: lr_scheduler.LinearWarmup(o, warmup_steps=-1, total_steps=3), ValueError, "warmup_steps.*-1"),
        (lambda o: lr_scheduler.LambdaLR(o, [lambda e: 1.0]), ValueError, "lr_lambda.*2"),
        (lambda o: lr_scheduler.LambdaLR(o, 0.5), TypeError, "lr_lambda"),
        (lambda o: lr_scheduler.StepLR(o, step_size=2, last_epoch=3), ValueError, "initial_lr"),
        (lambda o: lr_scheduler.StepLR(object(), step_size=2), TypeError, "optimizer"),
    ],
)
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make(_mt_opt())


def test_resuming_with_last_epoch_uses_initial_lr():
    opt = _mt_opt()
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        sched.step()
    again = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5, last_epoch=3)
    assert again.last_epoch == 4 and again.get_last_lr() == [lr * 0.25 for lr in LRS]
