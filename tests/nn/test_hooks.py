"""Module hooks: forward pre / forward / full backward hooks, their handles, and the fused
Transformer paths falling back to module-by-module calls when a sub-module has hooks.

The call order, arguments and replaced values are compared with PyTorch where it is cheap.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt
import minitensor.nn as nn


def _f64(lib, array, requires_grad: bool = False):
    """A float64 tensor of ``lib`` (minitensor makes float64 arrays its default float32 otherwise)."""
    return lib.tensor(array, dtype=lib.float64, requires_grad=requires_grad)


def _mlp(lib, rng):
    """Linear(3, 4) -> Tanh -> Linear(4, 2) in ``lib`` (torch or minitensor) with weights from ``rng``."""
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
    for p in model.parameters():
        p.data[...] = _f64(lib, rng.standard_normal(tuple(p.shape)))
    return model


def _record_all(model, log: list, np_of) -> list:
    """Register a pre, forward and backward hook on every module; each appends what it saw."""
    handles = []
    for name, module in model.named_modules():
        name = name or "model"
        handles.append(module.register_forward_pre_hook(lambda m, a, n=name: log.append((n, "pre", len(a)))))
        handles.append(
            module.register_forward_hook(lambda m, a, o, n=name: log.append((n, "fwd", np_of(o).round(6).tolist())))
        )
        handles.append(
            module.register_full_backward_hook(
                lambda m, gi, go, n=name: log.append(
                    (n, "bwd", [None if g is None else np_of(g).round(6).tolist() for g in gi + go])
                )
            )
        )
    return handles


def _run_both(seed: int, setup):
    """Build the same MLP and input in both libraries, call ``setup(lib, model, log, np_of)``, run
    forward and backward of a random weighting; return (log, x.grad) for each library."""
    torch = pytest.importorskip("torch")
    results = []
    for lib, np_of in ((torch, lambda t: t.detach().numpy()), (mt, lambda t: t.numpy())):
        rng = np.random.default_rng(seed)
        model = _mlp(lib, rng)
        x = _f64(lib, rng.standard_normal((5, 3)), requires_grad=True)
        w = _f64(lib, rng.standard_normal((5, 2)))
        log: list = []
        setup(lib, model, log, np_of)
        y = model(x)
        (y * w).sum().backward()
        results.append((log, np_of(x.grad), np_of(y)))
    return results


def test_call_order_and_values_match_torch():
    (t_log, t_grad, t_y), (m_log, m_grad, m_y) = _run_both(0, lambda lib, m, log, f: _record_all(m, log, f))
    assert [entry[:2] for entry in m_log] == [entry[:2] for entry in t_log]
    assert len(m_log) == 12  # 4 modules x (pre, fwd, bwd)
    for (name, kind, t_val), (_, _, m_val) in zip(t_log, m_log):
        if kind != "bwd":
            t_val, m_val = [t_val], [m_val]
        assert [v is None for v in m_val] == [v is None for v in t_val], name
        for t, m in zip(t_val, m_val):
            if t is not None:
                np.testing.assert_allclose(m, t, atol=1e-6, err_msg=f"{name} {kind}")
    np.testing.assert_allclose(m_grad, t_grad, atol=1e-10)


def test_returned_values_replace_args_output_and_grad_input_as_in_torch():
    def setup(lib, model, log, np_of):
        model[0].register_forward_pre_hook(lambda m, args: args[0] * 2)  # not a tuple: wrapped
        model[1].register_forward_hook(lambda m, args, out: out + 1)
        model[2].register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))

    (_, t_grad, t_y), (_, m_grad, m_y) = _run_both(1, setup)
    np.testing.assert_allclose(m_y, t_y, atol=1e-10)
    np.testing.assert_allclose(m_grad, t_grad, atol=1e-10)
    (_, plain_grad, plain_y), _ = _run_both(1, lambda *a: None)
    assert not np.allclose(m_y, plain_y) and not np.allclose(m_grad, plain_grad)  # the hooks did change them


def test_with_kwargs_and_prepend():
    order = []
    lin = nn.Linear(2, 2)
    lin.register_forward_hook(lambda m, a, o: order.append("first"))
    lin.register_forward_hook(lambda m, a, o: order.append("prepended"), prepend=True)
    lin.register_forward_pre_hook(lambda m, a, kw: ((a[0] * 0,), kw), with_kwargs=True)
    lin.register_forward_hook(lambda m, a, kw, o: order.append(sorted(kw)), with_kwargs=True)
    y = lin(mt.randn(3, 2))
    assert order == ["prepended", "first", []]
    np.testing.assert_allclose(y.numpy(), np.broadcast_to(lin.bias.numpy(), (3, 2)))  # the input was zeroed
    lin.register_forward_pre_hook(lambda m, a, kw: "bad", with_kwargs=True)
    with pytest.raises(RuntimeError, match="new_args, new_kwargs"):
        lin(mt.randn(3, 2))


def test_handles_remove_and_work_as_context_managers():
    lin = nn.Linear(2, 2)
    calls = []
    handle = lin.register_forward_hook(lambda m, a, o: calls.append(1))
    lin(mt.randn(1, 2))
    handle.remove()
    handle.remove()  # twice is harmless
    lin(mt.randn(1, 2))
    assert calls == [1]
    assert lin._hooks is None  # back on the lean path
    with lin.register_forward_pre_hook(lambda m, a: calls.append(2)):
        lin(mt.randn(1, 2))
    lin(mt.randn(1, 2))
    assert calls == [1, 2]
    assert lin._hooks is None
    with pytest.raises(TypeError, match="register_forward_hook: hook must be callable, got int"):
        lin.register_forward_hook(3)
    with pytest.raises(TypeError, match="register_full_backward_pre_hook: hook must be callable"):
        lin.register_full_backward_pre_hook(None)


def test_always_call_runs_when_forward_raises():
    seen = []
    lin = nn.Linear(2, 2)
    lin.register_forward_hook(lambda m, a, o: seen.append(o), always_call=True)
    lin.register_forward_hook(lambda m, a, o: seen.append("not always"))
    with pytest.raises(ValueError):
        lin(mt.randn(1, 3))
    assert seen == [None]


def test_backward_hook_when_no_input_requires_grad_and_with_retain_graph():
    lin = nn.Linear(3, 2)
    got = []
    lin.register_full_backward_hook(lambda m, gi, go: got.append((gi, go[0].numpy().copy())))
    y = lin(mt.randn(4, 3))  # the input does not require grad; the weights do
    w = mt.randn(4, 2)
    (y * w).sum().backward(retain_graph=True)
    (y * w).sum().backward()
    assert [gi for gi, _ in got] == [(None,), (None,)]
    for _, go in got:
        np.testing.assert_allclose(go, w.numpy())
    lin.register_full_backward_hook(lambda m, gi, go: (mt.ones(4, 3),))
    with pytest.raises(RuntimeError, match="None for all gradients"):
        (lin(mt.randn(4, 3)) * w).sum().backward()


def test_backward_hook_is_not_set_up_under_no_grad():
    lin = nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    x = mt.randn(4, 3, requires_grad=True)
    with mt.no_grad():
        y = lin(x)
    assert y.grad_fn is None


def test_multihead_attention_backward_hook_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    t_mha = torch.nn.MultiheadAttention(4, 2, batch_first=True).double()
    m_mha = nn.MultiheadAttention(4, 2, batch_first=True, dtype=mt.float64)
    copy_weights(t_mha, m_mha)
    a, w = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    logs = []
    for lib, mha in ((torch, t_mha), (mt, m_mha)):
        log = []
        mha.register_full_backward_hook(lambda m, gi, go, log=log: log.append((gi, go)))
        x = _f64(lib, a, requires_grad=True)
        out, _ = mha(x, x, x, need_weights=False)
        (out * _f64(lib, w)).sum().backward()
        logs.append((log, x.grad))
    (t_log, t_grad), (m_log, m_grad) = logs
    (t_gi, t_go), (m_gi, m_go) = t_log[0], m_log[0]
    assert len(m_gi) == len(t_gi) == 3 and len(m_go) == len(t_go) == 2 and m_go[1] is None
    for t, m in zip(t_gi + t_go[:1], m_gi + m_go[:1]):
        np.testing.assert_allclose(m.numpy(), t.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(m_grad.numpy(), t_grad.numpy(), atol=1e-10)


# ------------------------------------------------------- Transformer fast paths honour hooks
ENCODER_SUBS = ("self_attn", "linear1", "dropout2", "linear2", "norm1", "norm2", "dropout1", "dropout3")


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mode", ["train", "eval", "eval_no_grad"])
def test_encoder_layer_hooks_run_on_every_path(mode: str, norm_first: bool):
    mt.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first)
    layer.train(mode == "train")
    src = mt.randn(2, 5, 8)
    plain = layer(src).numpy()
    calls, attn = [], []
    handles = [layer._modules[n].register_forward_hook(lambda m, a, o, n=n: calls.append(n)) for n in ENCODER_SUBS]
    handles.append(layer.self_attn.register_forward_hook(lambda m, a, o: attn.append((a, o[0].numpy()))))
    if mode == "eval_no_grad":
        with mt.no_grad():
            out = layer(src).numpy()
    else:
        out = layer(src).numpy()
    assert sorted(calls) == sorted(ENCODER_SUBS)
    np.testing.assert_allclose(out, plain, rtol=1e-5, atol=1e-6)  # the same layer, path by path
    ((args, sa_out),) = attn
    x = args[0]
    assert args[1] is x and args[2] is x  # called as self_attn(x, x, x, ...), as PyTorch does
    np.testing.assert_allclose(sa_out, layer.self_attn(x, x, x, need_weights=False)[0].numpy(), rtol=1e-5, atol=1e-6)
    for h in handles:
        h.remove()
    calls.clear()
    layer(src)
    assert calls == []


def test_encoder_self_attn_hook_matches_torch_in_eval_no_grad():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double().eval()
    m_layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, dtype=mt.float64).eval()
    copy_weights(t_layer, m_layer)
    a = rng.standard_normal((2, 5, 8))
    got = []
    for lib, layer in ((torch, t_layer), (mt, m_layer)):
        layer.self_attn.register_forward_hook(lambda m, args, out: got.append(np.array(out[0].detach().numpy())))
        with warnings.catch_warnings(), lib.no_grad():
            warnings.simplefilter("ignore")  # (torch warns about its nested-tensor fast path)
            layer(_f64(lib, a))
    assert len(got) == 2
    np.testing.assert_allclose(got[1], got[0], atol=1e-10)


def test_decoder_layer_hooks_run():
    mt.manual_seed(1)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    names = ("self_attn", "multihead_attn", "linear1", "linear2", "norm1", "norm2", "norm3", "dropout")
    calls = []
    for n in names:
        layer._modules[n].register_forward_hook(lambda m, a, o, n=n: calls.append(n))
    tgt, memory = mt.randn(4, 2, 8, requires_grad=True), mt.randn(6, 2, 8)
    layer(tgt, memory).sum().backward()
    assert sorted(calls) == sorted(names)
    assert tgt.grad is not None


def test_backward_hook_on_encoder_sub_module_sees_gradients():
    mt.manual_seed(2)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=mt.float64)
    got = []
    layer.linear2.register_full_backward_hook(lambda m, gi, go: got.append((gi[0].shape, go[0].shape)))
    src = mt.randn(5, 3, 8, dtype=mt.float64, requires_grad=True)
    (layer(src) * mt.randn(5, 3, 8, dtype=mt.float64)).sum().backward()
    assert got == [((5, 3, 16), (5, 3, 8))]


def test_docstring_examples_run():
    import doctest

    from minitensor.nn import hooks, module

    for mod in (hooks, module):
        result = doctest.testmod(mod, extraglobs={"mt": mt, "nn": nn}, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, mod.__name__


def test_backward_hook_on_a_module_used_twice_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    weight, a, w = rng.standard_normal((3, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    logs = []
    for lib, np_of in ((torch, lambda t: t.detach().numpy()), (mt, lambda t: t.numpy())):
        lin = lib.nn.Linear(3, 3, bias=False).double()
        lin.weight.data[...] = _f64(lib, weight)
        log = []
        lin.register_full_backward_hook(lambda m, gi, go, log=log, f=np_of: log.append((f(gi[0]), f(go[0]))))
        x = _f64(lib, a, requires_grad=True)
        (lin(lin(x).tanh()) * _f64(lib, w)).sum().backward()
        logs.append(log)
    assert len(logs[0]) == len(logs[1]) == 2  # once per call, the second call's first
    for (t_gi, t_go), (m_gi, m_go) in zip(*logs):
        np.testing.assert_allclose(m_gi, t_gi, atol=1e-10)
        np.testing.assert_allclose(m_go, t_go, atol=1e-10)


def test_backward_pre_hook_replaces_grad_output_and_runs_first_as_in_torch():
    def setup(lib, model, log, np_of):
        def pre(m, grad_output):
            log.append(("pre", np_of(grad_output[0]).copy()))
            return (grad_output[0] * 2,)

        model[2].register_full_backward_hook(lambda m, gi, go: log.append(("full", np_of(go[0]).copy())))
        model[2].register_full_backward_pre_hook(pre)

    (t_log, t_grad, _), (m_log, m_grad, _) = _run_both(5, setup)
    assert [k for k, _ in m_log] == [k for k, _ in t_log] == ["pre", "full"]
    for (_, t), (_, m) in zip(t_log, m_log):
        np.testing.assert_allclose(m, t, atol=1e-10)
    np.testing.assert_allclose(m_log[1][1], 2 * m_log[0][1])  # the full hook saw the replaced grad_output
    np.testing.assert_allclose(m_grad, t_grad, atol=1e-10)


class _TwoOutputs(nn.Module):
    def forward(self, a, b, scale):
        return a * b, a.tanh(), scale


def test_two_inputs_two_outputs_and_a_non_tensor():
    torch = pytest.importorskip("torch")

    class TorchTwo(torch.nn.Module):
        def forward(self, a, b, scale):
            return a * b, a.tanh(), scale

    rng = np.random.default_rng(6)
    va, vb, wa = rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    results = []
    for lib, module, np_of in ((torch, TorchTwo(), lambda t: t.detach().numpy()), (mt, _TwoOutputs(), np.asarray)):
        log = []
        module.register_full_backward_pre_hook(lambda m, go: (go[0], go[1] * 0, go[2]))
        module.register_full_backward_hook(lambda m, gi, go, log=log: log.append((gi, go)))
        a, b = _f64(lib, va, requires_grad=True), _f64(lib, vb, requires_grad=True)
        p, q, scale = module(a, b, 3.0)
        ((p * _f64(lib, wa)).sum() + q.sum() * scale).backward()
        ((gi, go),) = log
        results.append(([None if g is None else np_of(g) for g in gi], [None if g is None else np_of(g) for g in go]))
        results[-1] += (np_of(a.grad), np_of(b.grad))
    for t, m in zip(*results):
        for t_g, m_g in zip(t, m) if isinstance(t, list) else [(t, m)]:
            assert (t_g is None) == (m_g is None)
            if t_g is not None:
                np.testing.assert_allclose(m_g, t_g, atol=1e-10)
    assert results[1][0][2] is None and results[1][1][2] is None  # the float argument and output


class _MatmulTanh(nn.Module):
    """x @ w, then tanh: built from ops that are differentiable twice."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.w = nn.Parameter(mt.randn(n_in, n_out, dtype=mt.float64))

    def forward(self, x):
        return (x @ self.w).tanh()


def _hook_calls_in_double_backward(lib, make_block) -> list:
    """The (kind, layer) of each backward hook call in a create_graph backward, then in a
    backward through its result."""
    model = lib.nn.Sequential(make_block(3, 4), lib.nn.Tanh(), make_block(4, 1))
    x = lib.randn(5, 3, dtype=lib.float64, requires_grad=True)
    seen = []
    for i, m in enumerate(model):
        m.register_full_backward_hook(lambda mod, gi, go, i=i: seen.append(("full", i)))
        m.register_full_backward_pre_hook(lambda mod, go, i=i: seen.append(("pre", i)))
    (g,) = lib.autograd.grad(model(x).sum(), x, create_graph=True)
    seen.append("second")
    lib.autograd.grad((g * lib.randn(5, 3, dtype=lib.float64)).sum(), x)
    return seen


def test_backward_hooks_in_a_double_backward_run_as_in_torch():
    torch = pytest.importorskip("torch")

    class TorchBlock(torch.nn.Module):
        def __init__(self, n_in: int, n_out: int) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(n_in, n_out, dtype=torch.float64))

        def forward(self, x):
            return (x @ self.w).tanh()

    want = _hook_calls_in_double_backward(torch, TorchBlock)
    assert _hook_calls_in_double_backward(mt, _MatmulTanh) == want
    assert want.count(("full", 0)) == 2  # (the saved inputs of the next layer lead back through the hooks)


def test_backward_hooks_keep_higher_order_gradients():
    mt.manual_seed(7)
    model = nn.Sequential(_MatmulTanh(3, 4), nn.Tanh(), _MatmulTanh(4, 1))
    x = mt.randn(5, 3, dtype=mt.float64, requires_grad=True)
    w = mt.randn(5, 3, dtype=mt.float64)

    def first_and_second():
        (g,) = mt.autograd.grad(model(x).sum(), x, create_graph=True)
        (gg,) = mt.autograd.grad((g * w).sum(), x)
        return g.numpy(), gg.numpy()

    want = first_and_second()
    for m in model:
        m.register_full_backward_hook(lambda mod, gi, go: None)
        m.register_full_backward_pre_hook(lambda mod, go: None)
    got = first_and_second()
    np.testing.assert_allclose(got[0], want[0], atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], atol=1e-12)
    assert np.abs(want[1]).max() > 1e-3  # the second derivative is not trivially zero
