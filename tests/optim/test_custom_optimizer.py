"""An optimizer written for PyTorch (a subclass of ``Optimizer`` with its own ``step`` on Tensors and
``self.state[p]``) runs unchanged on minitensor and matches PyTorch: state keyed by the parameter,
PyTorch's state-dict layout across the two libraries, ``add_param_group``, ``zero_grad``, closures,
step hooks and named parameters."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")


def momentum_sgd(lib):
    """The same PyTorch-style optimizer class, on ``lib`` (minitensor or torch): the body never names either."""

    class MomentumSGD(lib.optim.Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.9):
            super().__init__(params, dict(lr=lr, momentum=momentum))

        @lib.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with lib.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["momentum_buffer"] = p.grad.detach().clone()
                    else:
                        state["momentum_buffer"].mul_(group["momentum"]).add_(p.grad)
                    state["step"] += 1
                    p.add_(state["momentum_buffer"], alpha=-group["lr"])
            return loss

    return MomentumSGD


def problem(lib, seed: int = 0):
    """Two parameters (one a scalar) and a loss coupling them."""
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.normal(size=(2, 3)), dtype=lib.float64, requires_grad=True)
    b = lib.tensor(rng.normal(), dtype=lib.float64, requires_grad=True)
    c = lib.tensor(rng.uniform(0.5, 2.0, size=(2, 3)), dtype=lib.float64)

    def loss():
        return (c * w * w).sum() + (w.sum() - 1.0) * b + b * b

    return [w, b], loss


def train(opt, loss, steps: int) -> list:
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
        losses.append(float(value.detach()))
    return losses


def values(params) -> list:
    return [np.array(p.detach().numpy()) for p in params]


def both(make, steps: int = 5):
    """Run ``make(lib, params)`` for ``steps`` steps in both libraries: (ours, theirs), each
    (optimizer, params, loss function, losses)."""
    runs = []
    for lib in (mt, torch):
        params, loss = problem(lib)
        opt = make(lib, params)
        runs.append((opt, params, loss, train(opt, loss, steps)))
    return runs


def test_a_pytorch_style_optimizer_runs_unchanged_and_matches_pytorch():
    (opt, params, _, losses), (topt, tparams, _, tlosses) = both(lambda lib, ps: momentum_sgd(lib)(ps, lr=0.05))
    np.testing.assert_allclose(losses, tlosses, rtol=1e-12)
    for a, b in zip(values(params), values(tparams)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for p, tp in zip(params, tparams):
        assert opt.state[p]["step"] == topt.state[tp]["step"] == 5
        np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), topt.state[tp]["momentum_buffer"].numpy())


def test_state_is_keyed_by_the_parameter_by_identity():
    """Two parameters with equal values are two keys; a parameter without a step has no entry."""
    a, b, unused = (mt.zeros(3, requires_grad=True) for _ in range(3))
    opt = mt.optim.SGD([a, b, unused], lr=0.1, momentum=0.9)
    (a.sum() + b.sum()).backward()
    opt.step()
    assert len(opt.state) == 2 and a in opt.state and b in opt.state and unused not in opt.state
    assert opt.state[a] is not opt.state[b]
    assert opt.state[unused] == {} and len(opt.state) == 3  # a defaultdict(dict), as PyTorch's


def as_arrays(state: dict) -> dict:
    """A state dict's ``'state'`` with every Tensor made a NumPy array (how it crosses between libraries)."""
    return {
        i: {k: np.array(v.detach().numpy()) if hasattr(v, "shape") else v for k, v in s.items()}
        for i, s in state.items()
    }


def test_state_dict_layout_is_pytorchs_and_loads_both_ways():
    """After 3 steps, each library's state dict (as arrays) loads into the other's optimizer, and 3 more
    steps there give what 3 more steps of the original give."""
    runs = both(lambda lib, ps: momentum_sgd(lib)(ps, lr=0.05), steps=3)
    (opt, params, _, _), (topt, tparams, _, _) = runs
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert list(ours["state"]) == list(theirs["state"]) == [0, 1]
    assert all(set(ours["state"][i]) == set(theirs["state"][i]) for i in (0, 1))

    to_torch = {i: {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in s.items()}
                for i, s in as_arrays(ours["state"]).items()}  # fmt: skip
    loaded = {}
    crossings = [(torch, to_torch, ours["param_groups"], values(params)),
                 (mt, as_arrays(theirs["state"]), theirs["param_groups"], values(tparams))]  # fmt: skip
    for lib, state, groups, start in crossings:
        fresh, loss = problem(lib)
        with lib.no_grad():
            for p, v in zip(fresh, start):
                p.copy_(lib.tensor(v, dtype=lib.float64))
        other = momentum_sgd(lib)(fresh, lr=1.0)
        other.load_state_dict({"state": state, "param_groups": groups})
        assert other.param_groups[0]["lr"] == 0.05
        train(other, loss, 3)
        loaded[lib] = values(fresh)
    for (o, ps, loss, _), lib in zip(runs, (torch, mt)):  # minitensor's run goes on beside torch's load ...
        train(o, loss, 3)
        for a, b in zip(values(ps), loaded[lib]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_add_param_group_mid_training_matches_pytorch():
    """A third parameter joins with its own lr after two steps (fine-tuning a frozen layer)."""

    def run(lib):
        params, loss = problem(lib)
        extra = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        opt = momentum_sgd(lib)(params, lr=0.05)
        train(opt, loss, 2)
        opt.add_param_group({"params": [extra], "lr": 0.2})
        train(opt, lambda: loss() + (extra * extra * extra).sum(), 3)
        return opt, values(params + [extra])

    (opt, ours), (topt, theirs) = run(mt), run(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in topt.param_groups] == [0.05, 0.2]
    assert opt.param_groups[1]["momentum"] == 0.9  # filled in from the defaults
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


LIBRARIES = ["minitensor", "torch"]


def library(name: str):
    return mt if name == "minitensor" else torch


def closure_for(opt, loss):
    def closure():
        opt.zero_grad()
        value = loss()
        value.backward()
        return value

    return closure


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("name", LIBRARIES)
def test_zero_grad_and_a_closure_as_pytorch(name, set_to_none):
    lib = library(name)
    params, loss = problem(lib)
    opt = momentum_sgd(lib)(params)
    before = float(loss().detach())
    assert float(opt.step(closure_for(opt, loss)).detach()) == before
    opt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert all(p.grad is None for p in params)
    else:
        assert all(p.grad is not None and not np.any(p.grad.numpy()) for p in params)


@pytest.mark.parametrize("custom", [True, False], ids=["custom", "Adam"])
@pytest.mark.parametrize("name", LIBRARIES)
def test_step_hooks_run_around_every_step_as_pytorchs(name, custom):
    """Pre-hooks may replace (args, kwargs); post-hooks see them; a removed hook stops; a built-in
    optimizer (whose step calls the base's) runs each hook once a step."""
    lib = library(name)
    params, loss = problem(lib)
    opt = momentum_sgd(lib)(params) if custom else lib.optim.Adam(params)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o, args)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o, args)))
    closure = closure_for(opt, loss)
    opt.step(closure)
    pre.remove()
    opt.step(closure)
    args = (opt, closure)  # (PyTorch's hooks see the optimizer itself first in args)
    assert calls == [("pre", opt, args), ("post", opt, args), ("post", opt, args)]
    # a pre-hook that swaps the closure for one that doubles the loss
    opt.register_step_pre_hook(lambda o, args, kwargs: ((o, lambda: 2 * args[1]()), kwargs))
    before = float(loss().detach())  # the loss the closure computes, before the step moves anything
    assert float(opt.step(closure).detach()) == pytest.approx(2 * before, rel=1e-12)


@pytest.mark.parametrize("name", LIBRARIES)
def test_named_parameters_are_kept_as_param_names_like_pytorch(name):
    lib = library(name)
    params, _ = problem(lib)
    opt = lib.optim.SGD([("w", params[0]), ("b", params[1])], lr=0.1)
    assert all(a is b for a, b in zip(opt.param_groups[0]["params"], params, strict=True))
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="names"):
        opt.add_param_group({"params": [lib.zeros(2, requires_grad=True)]})  # groups all named or none


def test_a_base_class_optimizer_without_a_step_says_what_to_define():
    w = mt.zeros(2, requires_grad=True)
    w.grad = mt.ones(2)
    with pytest.raises(NotImplementedError, match="must define step"):
        mt.optim.Optimizer([w], {"lr": 0.1}).step()
