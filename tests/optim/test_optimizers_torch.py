"""Every optimizer against PyTorch's: same parameters, same loss, same steps, same values and state,
for each option; PyTorch's signatures and defaults; state dicts in PyTorch's layout both ways."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitensor as mt
from minitensor import optim

torch = pytest.importorskip("torch")

SHAPES = [(3,), (2, 3), ()]
N_STEPS = 8  # (RAdam's rectified steps start at step 7 with betas=(0.9, 0.8))

# name: option sets, each run for N_STEPS steps; together they turn every option on
CONFIGS = {
    "SGD": [
        dict(lr=0.1),
        dict(lr=0.05, momentum=0.9),
        dict(lr=0.05, momentum=0.9, dampening=0.3),
        dict(lr=0.05, momentum=0.8, nesterov=True),
        dict(lr=0.1, weight_decay=0.2, foreach=True),
        dict(lr=0.05, maximize=True),
        dict(lr=0.03, momentum=0.5, weight_decay=0.05, nesterov=True, maximize=True, fused=False),
    ],
    "Adam": [
        dict(lr=0.05),
        dict(lr=0.05, weight_decay=0.2),
        dict(lr=0.1, betas=(0.8, 0.5), amsgrad=True),
        dict(lr=0.05, betas=(0.8, 0.5), eps=1e-3, weight_decay=0.1, amsgrad=True, maximize=True),
        dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, foreach=False),
    ],
    "AdamW": [
        dict(lr=0.05),
        dict(lr=0.05, weight_decay=0.3),
        dict(lr=0.1, betas=(0.8, 0.5), weight_decay=0.1, amsgrad=True, maximize=True),
    ],
    "Adagrad": [
        dict(lr=0.1),
        dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2, eps=1e-6),
        dict(lr=0.05, maximize=True, foreach=True),
    ],
    "Adadelta": [
        dict(),
        dict(lr=0.5, rho=0.5, eps=1e-3, weight_decay=0.1),
        dict(maximize=True, foreach=False),
    ],
    "RMSprop": [
        dict(lr=0.01),
        dict(lr=0.01, momentum=0.9),
        dict(lr=0.01, centered=True),
        dict(lr=0.005, alpha=0.9, eps=1e-4, weight_decay=0.1, momentum=0.5, centered=True, maximize=True),
    ],
    "Adamax": [
        dict(lr=0.05),
        dict(lr=0.05, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1, maximize=True),
    ],
    "NAdam": [
        dict(lr=0.05),
        dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1),
        dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01, maximize=True),
    ],
    "RAdam": [
        dict(lr=0.05),
        dict(lr=0.05, betas=(0.9, 0.8), weight_decay=0.1),
        dict(lr=0.05, betas=(0.8, 0.8), eps=1e-3, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    ],
    "Rprop": [
        dict(),
        dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)),
        dict(lr=0.02, maximize=True),
    ],
    "ASGD": [
        dict(lr=0.05),
        dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1),
        dict(lr=0.05, t0=0, maximize=True),
    ],
}
CASES = [(name, config) for name, configs in CONFIGS.items() for config in configs]


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


def _run(lib, make_opt, steps: int = N_STEPS, seed: int = 0):
    """``steps`` steps of ``make_opt(params)`` in ``lib``: (the parameters after each step, the optimizer)."""
    inits, curvatures, slopes = _problem(seed)
    params = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in inits]
    consts = [[lib.tensor(v, dtype=lib.float64) for v in vs] for vs in (curvatures, slopes)]
    opt = make_opt(params)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(params, *consts).backward()
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


def _assert_same_history(ours, theirs, rtol: float):
    for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-14, err_msg=f"step {step}, param {i}")


def _assert_same_state(opt, topt, name: str, rtol: float):
    """Every parameter's state: the same keys, arrays and numbers as PyTorch's."""
    params = [p for g in opt.param_groups for p in g["params"]]
    tparams = [p for g in topt.param_groups for p in g["params"]]
    for p, tp in zip(params, tparams, strict=True):
        ours, theirs = opt.state.get(p, {}), topt.state.get(tp, {})
        assert set(ours) == set(theirs), (set(ours), set(theirs))
        for key, value in theirs.items():
            want = value.detach().numpy() if isinstance(value, torch.Tensor) else value
            np.testing.assert_allclose(ours[key], want, rtol=rtol, atol=rtol, err_msg=key)


@pytest.mark.parametrize("name, config", CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_steps_and_state_match_torch(name, config):
    ours, opt = _run(mt, lambda ps: getattr(optim, name)(ps, **config))
    theirs, topt = _run(torch, lambda ps: getattr(torch.optim, name)(ps, **config))
    _assert_same_history(ours, theirs, 1e-10)
    _assert_same_state(opt, topt, name, 1e-10)
    assert np.abs(ours[-1][0] - ours[0][0]).max() > 1e-3  # the parameters moved: the comparison can fail


@pytest.mark.parametrize("name", list(CONFIGS))
def test_signature_and_defaults_are_pytorchs(name):
    """Argument names, order, kinds (keyword-only or not) and defaults; the defaults dict, key for key."""
    ours, theirs = inspect.signature(getattr(optim, name)), inspect.signature(getattr(torch.optim, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]
    made = getattr(optim, name)([mt.zeros(2, requires_grad=True)])
    assert made.defaults == getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)]).defaults


@pytest.mark.parametrize("name", list(CONFIGS))
def test_param_groups_with_their_own_settings_match_torch(name):
    """Two groups, one with its own lr, one with its own weight decay (or momentum for Rprop/ASGD's lambd)."""
    first = CONFIGS[name][-1]
    own = {"Rprop": {"etas": (0.4, 1.1)}, "ASGD": {"lambd": 0.05}}.get(name, {"weight_decay": 0.05})

    def groups(ps):
        return [{"params": [ps[0]], "lr": 0.02}, {"params": ps[1:], **own}]

    ours, opt = _run(mt, lambda ps: getattr(optim, name)(groups(ps), **first))
    theirs, topt = _run(torch, lambda ps: getattr(torch.optim, name)(groups(ps), **first))
    _assert_same_history(ours, theirs, 1e-10)
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_state_dict_layout_is_pytorchs(name):
    """Indices for parameters, the same entries per parameter, the same group settings."""
    config = CONFIGS[name][-1]
    _, opt = _run(mt, lambda ps: getattr(optim, name)(ps, **config), steps=2)
    _, topt = _run(torch, lambda ps: getattr(torch.optim, name)(ps, **config), steps=2)
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert {i: set(s) for i, s in ours["state"].items()} == {i: set(s) for i, s in theirs["state"].items()}


def test_adagrad_has_state_before_its_first_step_as_pytorch():
    ours = optim.Adagrad([mt.zeros(2, requires_grad=True)], initial_accumulator_value=0.5).state_dict()
    theirs = torch.optim.Adagrad([torch.zeros(2, requires_grad=True)], initial_accumulator_value=0.5).state_dict()
    assert ours["state"][0]["step"] == theirs["state"][0]["step"] == 0
    np.testing.assert_array_equal(ours["state"][0]["sum"], theirs["state"][0]["sum"].numpy())


@pytest.mark.parametrize("name", list(CONFIGS))
def test_loading_a_torch_optimizer_state_continues_like_torch(name):
    """PyTorch's state dict, its Tensors made arrays, loads (same layout) and training continues identically."""
    config = CONFIGS[name][-1]
    _, topt = _run(torch, lambda ps: getattr(torch.optim, name)(ps, **config), steps=3)
    tparams = topt.param_groups[0]["params"]
    tsd = topt.state_dict()
    sd = {
        "state": {i: {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in s.items()}
                  for i, s in tsd["state"].items()},
        "param_groups": tsd["param_groups"],
    }  # fmt: skip
    params = [mt.tensor(p.detach().numpy(), dtype=mt.float64, requires_grad=True) for p in tparams]
    opt = getattr(optim, name)(params, lr=1.0)
    opt.load_state_dict(sd)
    _, curvatures, slopes = _problem()
    for _ in range(3):
        for ps, lib, o in ((params, mt, opt), (tparams, torch, topt)):
            o.zero_grad()
            consts = [[lib.tensor(v, dtype=lib.float64) for v in vs] for vs in (curvatures, slopes)]
            _loss(ps, *consts).backward()
            o.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_the_tested_settings_take_every_branch():
    """Otherwise the cases above could not catch a wrong branch: amsgrad changes Adam's trajectory, and
    RAdam's rho_t passes 5 within the steps (its rectified update runs) with betas=(0.9, 0.8)."""
    config = CONFIGS["Adam"][2]
    with_max, _ = _run(torch, lambda ps: torch.optim.Adam(ps, **config))
    without, _ = _run(torch, lambda ps: torch.optim.Adam(ps, **{**config, "amsgrad": False}))
    assert max(np.abs(a - b).max() for a, b in zip(with_max[-1], without[-1])) > 1e-3
    beta2 = 0.8
    rho_inf = 2 / (1 - beta2) - 1
    rho = [rho_inf - 2 * t * beta2**t / (1 - beta2**t) for t in range(1, N_STEPS + 1)]
    assert rho[0] <= 5 < rho[-1]
