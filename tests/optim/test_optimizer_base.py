"""The Optimizer base: argument checks, groups, zero_grad, dtypes, state dicts and checkpoints."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim


def _params(dtype=mt.float64, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [mt.tensor(rng.normal(size=s), dtype=dtype, requires_grad=True) for s in [(4,), (2, 3), ()]]


def _train(params, opt, steps: int, seed: int = 1):
    """A few steps on a fixed quadratic: L = sum_i (c_i * p_i^2 + s_i * p_i)."""
    rng = np.random.default_rng(seed)
    consts = [(rng.uniform(0.5, 2.0, p.shape), rng.normal(size=p.shape)) for p in params]
    consts = [(mt.tensor(c, dtype=p.dtype), mt.tensor(s, dtype=p.dtype)) for (c, s), p in zip(consts, params)]
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(((c * p * p).sum() + (s * p).sum() for p, (c, s) in zip(params, consts)), mt.tensor(0.0))
        loss.backward()
        opt.step()


OPTIMIZERS = [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    lambda ps: optim.Adam(ps, lr=0.05, amsgrad=True, weight_decay=0.01),
    lambda ps: optim.AdamW(ps, lr=0.05),
    lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.01),
    lambda ps: optim.Adadelta(ps, weight_decay=0.01),
    lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True),
    lambda ps: optim.Adamax(ps, lr=0.05),
    lambda ps: optim.NAdam(ps, lr=0.05),
    lambda ps: optim.RAdam(ps, lr=0.05, betas=(0.9, 0.8), decoupled_weight_decay=True, weight_decay=0.1),
    lambda ps: optim.Rprop(ps, lr=0.05),
    lambda ps: optim.ASGD(ps, lr=0.05, t0=2),
]


# ------------------------------------------------------------------ arguments
@pytest.mark.parametrize(
    "make, name, value",
    [
        (lambda ps: optim.SGD(ps, lr=-0.1), "lr", "-0.1"),
        (lambda ps: optim.SGD(ps, lr=math.nan), "lr", "nan"),
        (lambda ps: optim.SGD(ps, lr=math.inf), "lr", "inf"),
        (lambda ps: optim.SGD(ps, momentum=-0.5), "momentum", "-0.5"),
        (lambda ps: optim.SGD(ps, weight_decay=-1.0), "weight_decay", "-1.0"),
        (lambda ps: optim.SGD(ps, dampening=math.inf), "dampening", "inf"),
        (lambda ps: optim.Adam(ps, lr=-1.0), "lr", "-1.0"),
        (lambda ps: optim.Adam(ps, betas=(1.0, 0.999)), "betas[0]", "1.0"),
        (lambda ps: optim.Adam(ps, betas=(0.9, -0.1)), "betas[1]", "-0.1"),
        (lambda ps: optim.Adam(ps, betas=(0.9, math.nan)), "betas[1]", "nan"),
        (lambda ps: optim.Adam(ps, betas=(0.9,)), "betas", "(0.9,)"),
        (lambda ps: optim.Adam(ps, eps=-1e-8), "eps", "-1e-08"),
        (lambda ps: optim.AdamW(ps, weight_decay=-0.01), "weight_decay", "-0.01"),
        (lambda ps: optim.AdamW(ps, weight_decay=math.inf), "weight_decay", "inf"),
        (lambda ps: optim.Adagrad(ps, lr_decay=-0.1), "lr_decay", "-0.1"),
        (lambda ps: optim.Adagrad(ps, initial_accumulator_value=-1.0), "initial_accumulator_value", "-1.0"),
        (lambda ps: optim.Adadelta(ps, rho=1.5), "rho", "1.5"),
        (lambda ps: optim.RMSprop(ps, alpha=-0.9), "alpha", "-0.9"),
        (lambda ps: optim.RMSprop(ps, momentum=math.nan), "momentum", "nan"),
        (lambda ps: optim.Adamax(ps, betas=(0.9, 1.0)), "betas[1]", "1.0"),
        (lambda ps: optim.NAdam(ps, momentum_decay=-1.0), "momentum_decay", "-1.0"),
        (lambda ps: optim.RAdam(ps, eps=-1.0), "eps", "-1.0"),
        (lambda ps: optim.Rprop(ps, etas=(1.5, 2.0)), "etas", "(1.5, 2.0)"),
        (lambda ps: optim.Rprop(ps, step_sizes=(1.0, 0.1)), "step_sizes", "(1.0, 0.1)"),
        (lambda ps: optim.ASGD(ps, t0=-5.0), "t0", "-5.0"),
        (lambda ps: optim.ASGD(ps, lambd=math.inf), "lambd", "inf"),
        (lambda ps: optim.RMSprop(ps, capturable=True), "capturable", "True"),
    ],
)
def test_out_of_range_settings_raise_value_error_naming_them(make, name, value):
    with pytest.raises(ValueError) as info:
        make(_params())
    assert name in str(info.value) and value in str(info.value)


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_differentiable_steps_are_refused_and_foreach_is_accepted(make):
    name = type(make(_params())).__name__
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(optim, name)(_params(), differentiable=True)
    assert getattr(optim, name)(_params(), foreach=True).defaults["foreach"] is True


@pytest.mark.parametrize("kwargs", [dict(momentum=0.0), dict(momentum=0.9, dampening=0.1)])
def test_nesterov_needs_momentum_and_no_dampening(kwargs):
    with pytest.raises(ValueError, match="nesterov"):
        optim.SGD(_params(), lr=0.1, nesterov=True, **kwargs)


def test_a_bad_setting_in_one_group_raises():
    a, b, _ = _params()
    with pytest.raises(ValueError, match="lr.*-2"):
        optim.SGD([{"params": [a]}, {"params": [b], "lr": -2.0}], lr=0.1)


def test_setting_of_the_wrong_type_raises_type_error():
    with pytest.raises(TypeError, match="lr"):
        optim.SGD(_params(), lr="0.1")


def test_params_must_be_a_non_empty_iterable_of_leaf_tensors():
    with pytest.raises(ValueError, match="empty"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="single Tensor"):
        optim.SGD(mt.zeros(3, requires_grad=True), lr=0.1)
    with pytest.raises(TypeError, match="params\\[1\\].*ndarray"):
        optim.Adam([mt.zeros(3, requires_grad=True), np.zeros(3)])
    w = mt.zeros(3, requires_grad=True)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.Adam([w * 2])
    with pytest.raises(ValueError, match="more than once"):
        optim.Adam([w, w])
    with pytest.raises(ValueError, match="more than once"):
        optim.Adam([{"params": [w]}, {"params": [w]}])


def test_params_may_be_a_generator():
    params = _params()
    opt = optim.SGD((p for p in params), lr=0.1)
    assert len(opt.param_groups) == 1 and all(a is b for a, b in zip(opt.param_groups[0]["params"], params))


def test_group_settings_default_from_the_optimizer():
    a, b, c = _params()
    opt = optim.SGD([{"params": [a], "lr": 0.5}, {"params": [b, c], "momentum": 0.7}], lr=0.1, momentum=0.2)
    assert (opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]) == (0.5, 0.2)
    assert (opt.param_groups[1]["lr"], opt.param_groups[1]["momentum"]) == (0.1, 0.7)
    d = mt.zeros(2, requires_grad=True)
    opt.add_param_group({"params": d, "lr": 0.01})
    assert opt.param_groups[2]["params"] == [d] and opt.param_groups[2]["momentum"] == 0.2


# ------------------------------------------------------------ steps and grads
def test_zero_grad_to_none_and_to_zeros():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    sum((p * p).sum() for p in params).backward()
    opt.zero_grad(set_to_none=False)
    for p in params:
        assert p.grad is not None and p.grad.shape == p.shape and not np.any(p.grad.numpy())
    opt.zero_grad()
    assert all(p.grad is None for p in params)


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_params_without_grad_are_skipped(make):
    a, b, c = _params()
    before = b.numpy().copy()
    opt = make([a, b, c])
    (a * a).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.numpy(), before)
    assert opt.state[a] and opt.state.get(b, {}).get("step", 0) == 0  # (Adagrad has b's state from the start)


def test_step_changes_data_in_place_and_returns_the_closure_loss():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    array = w.numpy()
    opt = optim.SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    assert w.numpy() is array
    np.testing.assert_allclose(array, [0.0, 0.0])
    assert w.grad_fn is None and w.requires_grad


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_float32_parameters_and_state_stay_float32(make):
    params = _params(dtype=mt.float32)
    opt = make(params)
    _train(params, opt, steps=3)
    assert all(p.dtype == mt.float32 for p in params)
    arrays = [v for s in opt.state.values() for v in s.values() if isinstance(v, np.ndarray)]
    assert arrays and all(v.dtype == np.float32 for v in arrays)


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_float32_steps_agree_with_float64_steps(make):
    p32, p64 = _params(dtype=mt.float32), _params(dtype=mt.float64)
    _train(p32, make(p32), steps=5)
    _train(p64, make(p64), steps=5)
    for a, b in zip(p32, p64):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- state dicts
@pytest.mark.parametrize("make", OPTIMIZERS)
def test_state_dict_layout_is_pytorchs(make):
    params = _params()
    opt = make([{"params": params[:1]}, {"params": params[1:], "lr": 0.01}])
    _train(params, opt, steps=2)
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1, 2]]
    assert sd["param_groups"][1]["lr"] == 0.01
    assert sorted(sd["state"]) == [0, 1, 2]
    for i, p in enumerate(params):
        arrays = [v for v in sd["state"][i].values() if isinstance(v, np.ndarray)]
        assert arrays and all(v.shape == p.shape for v in arrays)


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_state_dict_is_a_snapshot(make):
    params = _params()
    opt = make(params)
    _train(params, opt, steps=2)
    sd = opt.state_dict()
    copies = {i: {k: np.copy(v) for k, v in s.items()} for i, s in sd["state"].items()}
    _train(params, opt, steps=2)
    for i, s in sd["state"].items():
        for k, v in s.items():
            np.testing.assert_array_equal(v, copies[i][k])


@pytest.mark.parametrize("through_file", [False, True])
@pytest.mark.parametrize("make", OPTIMIZERS)
def test_resuming_from_a_state_dict_equals_uninterrupted_training(make, through_file, tmp_path):
    straight = _params()
    _train(straight, make(straight), steps=6)

    first = _params()
    opt = make(first)
    _train(first, opt, steps=3)
    sd = opt.state_dict()
    if through_file:
        path = mt.save({"optimizer": sd, "params": [p.numpy() for p in first]}, tmp_path / "ckpt")
        loaded = mt.load(path)
        sd, values = loaded["optimizer"], loaded["params"]
    else:
        values = [p.numpy().copy() for p in first]
    resumed = [mt.tensor(v, dtype=mt.float64, requires_grad=True) for v in values]
    opt2 = make(resumed)
    opt2.load_state_dict(sd)
    _train(resumed, opt2, steps=3)  # the last 3 of the 6 steps (same loss)
    for a, b in zip(resumed, straight):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_load_state_dict_restores_group_settings_and_casts_state_to_the_param_dtype():
    p64 = _params()
    opt = optim.Adam(p64, lr=0.05, betas=(0.8, 0.9))
    _train(p64, opt, steps=2)
    sd = opt.state_dict()
    sd["param_groups"][0]["betas"] = list(sd["param_groups"][0]["betas"])  # as a JSON round trip would give
    p32 = _params(dtype=mt.float32)
    opt32 = optim.Adam(p32, lr=1.0)
    opt32.load_state_dict(sd)
    assert opt32.param_groups[0]["lr"] == 0.05 and opt32.param_groups[0]["betas"] == (0.8, 0.9)
    assert opt32.param_groups[0]["params"] == p32
    assert all(v.dtype == np.float32 for s in opt32.state.values() for v in s.values() if isinstance(v, np.ndarray))
    assert opt32.state[p32[0]]["step"] == 2


def test_load_state_dict_rejects_a_mismatched_optimizer():
    params = _params()
    opt = optim.SGD(params, lr=0.1, momentum=0.9)
    _train(params, opt, steps=1)
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="parameter groups"):
        optim.SGD([{"params": params[:1]}, {"params": params[1:]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="group 0 has 3 parameters"):
        optim.SGD(params[:2], lr=0.1).load_state_dict(sd)
    other = [mt.zeros(5, requires_grad=True), params[1], params[2]]
    with pytest.raises(ValueError, match="shape"):
        optim.SGD(other, lr=0.1, momentum=0.9).load_state_dict(sd)
    bad = opt.state_dict()
    bad["param_groups"][0]["lr"] = -1.0
    with pytest.raises(ValueError, match="lr"):
        opt.load_state_dict(bad)
    assert opt.param_groups[0]["lr"] == 0.1  # nothing changed


def test_repr_lists_the_groups():
    text = repr(optim.SGD(_params(), lr=0.25, momentum=0.5))
    assert text.startswith("SGD (") and "Parameter Group 0" in text and "lr: 0.25" in text


def test_numpy_scalar_settings_become_python_numbers(tmp_path):
    params = _params(dtype=mt.float32)
    opt = optim.Adam(params, lr=np.float64(0.01), betas=(np.float64(0.8), 0.9))
    group = opt.param_groups[0]
    assert type(group["lr"]) is float and type(group["betas"][0]) is float
    _train(params, opt, steps=2)
    opt.load_state_dict(mt.load(mt.save(opt.state_dict(), tmp_path / "opt")))
    _train(params, opt, steps=1)
    assert all(p.dtype == mt.float32 for p in params)


def test_adam_step_settings_follow_each_group_dtype_and_step_count():
    """Adam computes its step's numbers once per (group, dtype, step count) within a step: parameters
    of two groups (different lr), of two dtypes, and one whose step count lags (no gradient in the
    first step) each move as ``adam_update`` moves them alone."""
    from minitensor.kernels.adam import adam_update

    rng = np.random.default_rng(0)
    inits = [rng.standard_normal(4).astype(dtype) for dtype in ("float32", "float64", "float32", "float32")]
    params = [mt.from_numpy(v.copy()).requires_grad_() for v in inits]  # (float32 and float64)
    groups = [{"params": params[:2]}, {"params": params[2:], "lr": 0.05}]
    opt = optim.AdamW(groups, lr=0.1, weight_decay=0.1)
    expected = [v.copy() for v in inits]
    moments = [(np.zeros_like(v), np.zeros_like(v)) for v in inits]
    steps = [0, 0, 0, 0]
    for step in range(3):
        grads = [rng.standard_normal(4).astype(v.dtype) for v in inits]
        for i, p in enumerate(params):
            p.grad = None if (step == 0 and i == 3) else mt.from_numpy(grads[i])
            if p.grad is not None:
                steps[i] += 1
                lr = 0.1 if i < 2 else 0.05
                adam_update(expected[i], grads[i], *moments[i], None, lr=lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.1, decoupled=True, maximize=False, step=steps[i])  # fmt: skip
        opt.step()
    assert [opt.state[p]["step"] for p in params] == [3, 3, 3, 2]
    for p, want in zip(params, expected):
        np.testing.assert_array_equal(p.numpy(), want)


def test_zero_grad_defaults_to_none_as_pytorch() -> None:
    model = nn.Linear(3, 2)
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    model(mt.randn(4, 3)).sum().backward()
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model(mt.randn(4, 3)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())


def test_mingpt_style_parameter_groups_match_torch() -> None:
    """Two groups with different weight decay (minGPT's configure_optimizers), lr changed by hand."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    w0, b0, g = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal((3, 3))
    w, b = mt.tensor(w0, dtype=mt.float64, requires_grad=True), mt.tensor(b0, dtype=mt.float64, requires_grad=True)
    tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    groups = lambda a, c: [{"params": [a], "weight_decay": 0.1}, {"params": [c], "weight_decay": 0.0}]  # noqa: E731
    opt = optim.AdamW(groups(w, b), lr=1e-2, betas=(0.9, 0.95))
    topt = torch.optim.AdamW(groups(tw, tb), lr=1e-2, betas=(0.9, 0.95))
    for step in range(5):
        for o in (opt, topt):
            for group in o.param_groups:
                group["lr"] = 1e-2 * (step + 1) / 5  # a hand-written warmup, as in nanoGPT
        for (p, q), o in (((w, b), opt), ((tw, tb), topt)):
            o.zero_grad(set_to_none=True)
            loss = (p * (mt.tensor(g) if o is opt else torch.tensor(g))).sum() + (q * q).sum()
            loss.backward()
            o.step()
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-10)
    assert [grp["weight_decay"] for grp in opt.param_groups] == [0.1, 0.0]
