"""SGD, Adam and AdamW against PyTorch: same parameters, same loss, same steps, same values."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import optim

torch = pytest.importorskip("torch")

SHAPES = [(3,), (2, 3), ()]
N_STEPS = 6


def _problem(seed: int = 0):
    """Initial parameter values and the constants of a coupled quadratic + linear loss."""
    rng = np.random.default_rng(seed)
    inits = [rng.normal(size=s) for s in SHAPES]
    curvatures = [rng.uniform(0.5, 3.0, size=s) for s in SHAPES]
    slopes = [rng.normal(size=s) for s in SHAPES]
    return inits, curvatures, slopes


def _loss(params, curvatures, slopes):
    """sum_i (c_i * p_i^2 + s_i * p_i) + sum(p_0) * sum(p_1): written once for both libraries."""
    total = params[0].sum() * params[1].sum()
    for p, c, s in zip(params, curvatures, slopes):
        total = total + (c * p * p).sum() + (s * p).sum()
    return total


def _run_mt(make_opt, steps: int = N_STEPS, seed: int = 0):
    inits, curvatures, slopes = _problem(seed)
    params = [mt.tensor(v, dtype=mt.float64, requires_grad=True) for v in inits]
    consts = [[mt.tensor(v, dtype=mt.float64) for v in vs] for vs in (curvatures, slopes)]
    opt = make_opt(params)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(params, *consts).backward()
        opt.step()
        history.append([p.numpy().copy() for p in params])
    return history, opt


def _run_torch(make_opt, steps: int = N_STEPS, seed: int = 0):
    inits, curvatures, slopes = _problem(seed)
    params = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in inits]
    consts = [[torch.tensor(v, dtype=torch.float64) for v in vs] for vs in (curvatures, slopes)]
    opt = make_opt(params)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(params, *consts).backward()
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


def _assert_same_history(ours, theirs):
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for i, (x, y) in enumerate(zip(a, b)):
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6, err_msg=f"step {step}, param {i}")


SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.8, nesterov=True),
    dict(lr=0.1, weight_decay=0.2),
    dict(lr=0.05, maximize=True),
    dict(lr=0.03, momentum=0.5, weight_decay=0.05, nesterov=True, maximize=True),
]

ADAM_CONFIGS = [
    dict(lr=0.05),
    dict(lr=0.05, weight_decay=0.2),
    dict(lr=0.1, betas=(0.8, 0.5), amsgrad=True),
    dict(lr=0.05, betas=(0.8, 0.5), eps=1e-3, weight_decay=0.1, amsgrad=True, maximize=True),
]

ADAMW_CONFIGS = [
    dict(lr=0.05),
    dict(lr=0.05, weight_decay=0.3),
    dict(lr=0.1, betas=(0.8, 0.5), weight_decay=0.1, amsgrad=True),
]


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=str)
def test_sgd_matches_torch(config):
    ours, opt = _run_mt(lambda ps: optim.SGD(ps, **config))
    theirs, topt = _run_torch(lambda ps: torch.optim.SGD(ps, **config))
    _assert_same_history(ours, theirs)
    if config.get("momentum"):
        for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
            np.testing.assert_allclose(opt.state[p]["momentum_buffer"], topt.state[tp]["momentum_buffer"].numpy())


@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=str)
def test_adam_matches_torch(config):
    ours, opt = _run_mt(lambda ps: optim.Adam(ps, **config))
    theirs, topt = _run_torch(lambda ps: torch.optim.Adam(ps, **config))
    _assert_same_history(ours, theirs)
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        assert opt.state[p]["step"] == int(topt.state[tp]["step"]) == N_STEPS
        for key in ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if config.get("amsgrad") else ()):
            np.testing.assert_allclose(opt.state[p][key], topt.state[tp][key].numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("config", ADAMW_CONFIGS, ids=str)
def test_adamw_matches_torch(config):
    ours, _ = _run_mt(lambda ps: optim.AdamW(ps, **config))
    theirs, _ = _run_torch(lambda ps: torch.optim.AdamW(ps, **config))
    _assert_same_history(ours, theirs)


def test_amsgrad_changes_the_trajectory_in_the_tested_setting():
    """Otherwise the amsgrad cases above could not catch a missing max()."""
    config = ADAM_CONFIGS[2]
    with_max, _ = _run_torch(lambda ps: torch.optim.Adam(ps, **config))
    without, _ = _run_torch(lambda ps: torch.optim.Adam(ps, **{**config, "amsgrad": False}))
    assert max(np.abs(a - b).max() for a, b in zip(with_max[-1], without[-1])) > 1e-3


def test_adamw_defaults_differ_from_adam_only_in_weight_decay():
    ours = optim.AdamW([mt.zeros(2, requires_grad=True)])
    theirs = torch.optim.AdamW([torch.zeros(2, requires_grad=True)])
    for key in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"):
        assert ours.defaults[key] == theirs.defaults[key], key
    assert ours.defaults["weight_decay"] == 1e-2
    assert optim.Adam([mt.zeros(2, requires_grad=True)]).defaults["weight_decay"] == 0


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_param_groups_with_their_own_settings_match_torch(name):
    def groups(ps):
        return [{"params": [ps[0]], "lr": 0.1}, {"params": ps[1:], "weight_decay": 0.1}]

    extra = {"momentum": 0.9} if name == "SGD" else {}
    ours, opt = _run_mt(lambda ps: getattr(optim, name)(groups(ps), lr=0.01, **extra))
    theirs, _ = _run_torch(lambda ps: getattr(torch.optim, name)(groups(ps), lr=0.01, **extra))
    _assert_same_history(ours, theirs)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert [g["weight_decay"] for g in opt.param_groups] == [opt.defaults["weight_decay"], 0.1]


def test_loading_a_torch_optimizer_state_continues_like_torch():
    """PyTorch's state dict, converted to numpy, loads (same layout) and training continues identically."""
    config = dict(lr=0.05, betas=(0.8, 0.5), weight_decay=0.1, amsgrad=True)
    theirs, topt = _run_torch(lambda ps: torch.optim.Adam(ps, **config), steps=3)
    tparams = topt.param_groups[0]["params"]
    tsd = topt.state_dict()
    sd = {
        "state": {i: {k: v.numpy() for k, v in s.items()} for i, s in tsd["state"].items()},
        "param_groups": tsd["param_groups"],
    }
    params = [mt.tensor(p.detach().numpy(), dtype=mt.float64, requires_grad=True) for p in tparams]
    opt = optim.Adam(params, **config)
    opt.load_state_dict(sd)
    _, curvatures, slopes = _problem()
    for _ in range(3):
        for ps, lib, o in ((params, mt, opt), (tparams, torch, topt)):
            o.zero_grad()
            consts = [[lib.tensor(v, dtype=lib.float64) for v in vs] for vs in (curvatures, slopes)]
            _loss(ps, *consts).backward()
            o.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-9, atol=1e-12)
