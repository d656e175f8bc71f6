"""``func.vmap`` against ``torch.func.vmap`` and against a Python loop over the examples.

Each program is written once, for a library ``L`` (minitensor or torch) and its ``func``
module, and run on both with the same float64 inputs (``on_both``).  Without PyTorch the
comparisons against a loop still run.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_trees_close

import minitensor as mt
import minitensor.func as mf
from minitensor.autograd import batching


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def on_both(program, *arrays, rtol: float = 1e-10, atol: float = 1e-12):
    """``program(L, func, *tensors)`` on minitensor and (when installed) PyTorch: the same nest of
    values.  Returns minitensor's result."""
    ours = program(mt, mf, *[mt.tensor(a, dtype=mt.float64) for a in arrays])
    torch = _torch()
    if torch is not None:
        theirs = program(torch, torch.func, *[torch.tensor(a, dtype=torch.float64) for a in arrays])
        assert_trees_close(ours, theirs, rtol=rtol, atol=atol)
    return ours


def T(a) -> mt.Tensor:
    """A float64 minitensor tensor of ``a``'s values."""
    return mt.tensor(a, dtype=mt.float64)


def looped(f, *xs):
    """The reference: ``f`` on each example (the leading dim of each input), stacked."""
    return mt.stack([f(*[x[i] for x in xs]) for i in range(xs[0].shape[0])])


rng = np.random.default_rng(0)
X = rng.standard_normal((5, 3, 4))
W = rng.standard_normal((4, 6))
V = rng.standard_normal((5, 4))


# ------------------------------------------------------------------ the ops' batching rules
def _f(L):
    return L.nn.functional


RULES = {
    # name: f of one example (3, 4) and a shared (4, 6) weight
    "elementwise": lambda L, x, w: (x.exp() * 2 + x.sin()) / (1 + x * x),
    "broadcast_shared": lambda L, x, w: x[:, :1] - w[:, 0],
    "reduction": lambda L, x, w: x.sum(1) + x.mean(-1) + x.amax(0).sum(),
    "softmax": lambda L, x, w: _f(L).softmax(x, dim=-1) + _f(L).log_softmax(x, dim=0),
    "matmul_left": lambda L, x, w: x @ w,
    "matmul_right": lambda L, x, w: w.T @ x.T,
    "linear": lambda L, x, w: _f(L).linear(x, w.T, w[0]),
    "layer_norm": lambda L, x, w: _f(L).layer_norm(x, (4,), w[:, 0], w[:, 1]),
    "indexing": lambda L, x, w: x[1:, [0, 2]] + x[L.tensor([2, 0])][:, 1:3],
    "gather": lambda L, x, w: x.gather(1, L.tensor([[0, 3], [1, 1], [2, 0]])),
    "cat_stack": lambda L, x, w: L.cat([x, x * 2], dim=0).sum(0) + L.stack([x, w.T[:3]], dim=0).sum((0, 1)),
    "reshape_permute": lambda L, x, w: x.reshape(2, 6).T.reshape(-1) + x.permute(1, 0).flatten(),
    "cumsum_flip": lambda L, x, w: x.cumsum(1).flip(0),
    "where": lambda L, x, w: L.where(x > 0, x, w.T[:3] * 0 - 1),
    "cross_entropy": lambda L, x, w: _f(L).cross_entropy(x, L.tensor([0, 3, 1])),
    "mse": lambda L, x, w: _f(L).mse_loss(x, w.T[:3], reduction="none").sum(1),
    "embedding": lambda L, x, w: _f(L).embedding(L.tensor([1, 0, 3]), w.T) + x[0, 0],
    "attention": lambda L, x, w: _f(L).scaled_dot_product_attention(x[None], x[None], x[None], is_causal=True),
    "einsum": lambda L, x, w: L.einsum("ij,jk->ik", x, w),
    "triangle": lambda L, x, w: L.tril(x) + L.triu(x, 1),
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_batching_rule_gives_the_loop_and_torch_func(name: str) -> None:
    f = RULES[name]
    ours = on_both(lambda L, func, x, w: func.vmap(lambda e: f(L, e, w))(x), X, W)
    with mt.no_grad():
        x, w = T(X), T(W)
        np.testing.assert_allclose(ours.numpy(), looped(lambda e: f(mt, e, w), x).numpy(), rtol=1e-12, atol=1e-12)


def test_rules_run_without_the_loop_fallback() -> None:
    """Every op of the table above has a rule: no 'slow fallback' warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in RULES.values():
            mf.vmap(lambda e, f=f: f(mt, e, T(W)))(T(X))


def test_an_op_without_a_rule_loops_with_a_warning_naming_it_once() -> None:
    batching._warned.discard("sort")
    x = T(X)
    with pytest.warns(UserWarning, match="sort") as caught:
        got = mf.vmap(lambda e: mt.sort(e, dim=-1).values)(x)
        mf.vmap(lambda e: mt.sort(e, dim=-1).values)(x)
    assert sum("sort" in str(w.message) for w in caught) == 1
    np.testing.assert_array_equal(got.numpy(), np.sort(X, axis=-1))


def test_the_loop_fallback_stacks_differentiably() -> None:
    """The examples' results are stacked by an op (np.stack on Tensors, answered by mt.stack): gradients
    flow back through the fallback, and through grad inside it, as through sort without vmap."""
    weights = np.arange(X.shape[-1], dtype=np.float64)
    x = T(X).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (the loop fallback's warning)
        stacked = mf.vmap(lambda e: mt.sort(e, dim=-1).values)(x)
        per_example = mf.vmap(mf.grad(lambda e: (mt.sort(e, dim=-1).values * T(weights)).sum()))(T(X))
    (stacked * T(weights)).sum().backward()
    direct = T(X).requires_grad_()
    (mt.sort(direct, dim=-1).values * T(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), direct.grad.numpy())
    np.testing.assert_array_equal(per_example.numpy(), direct.grad.numpy())


def test_functions_that_read_values_run_per_example() -> None:
    """max/argmax/topk/sort pick indices from the values themselves: under vmap each example picks its own."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (the loop fallback's warning)
        on_both(lambda L, func, x: func.vmap(lambda e: e.max(dim=1).values + e.argmax(1))(x), X)
        on_both(lambda L, func, x: func.vmap(lambda e: L.topk(e, 2, dim=-1).values)(x), X)
        on_both(lambda L, func, x: func.vmap(lambda e: (e > 0.5).any(0) & L.isclose(e, e).all(0))(x), X)


# ------------------------------------------------------------------ in_dims and out_dims
def test_in_dims_none_shares_an_argument() -> None:
    on_both(lambda L, func, x, w: func.vmap(lambda e, w: e @ w, in_dims=(0, None))(x, w), X, W)


def test_negative_in_dims_and_out_dims() -> None:
    on_both(lambda L, func, x: func.vmap(lambda e: e.exp().sum(0), in_dims=-1, out_dims=-1)(x), X)
    on_both(lambda L, func, x: func.vmap(lambda e: e * 2, in_dims=1, out_dims=2)(x), X)


def test_nested_in_dims_and_several_outputs() -> None:
    def program(L, func, x, v):
        def f(pair, d):
            a, b = pair
            return {"sum": a.sum() + d["v"].sum(), "both": (a * 2, b + d["v"])}

        return func.vmap(f, in_dims=((0, 1), {"v": 0}), out_dims={"sum": 0, "both": (1, 0)})(
            (x, x.transpose(0, 1)), {"v": v}
        )

    on_both(program, X, V)


def test_out_dims_none_for_an_output_independent_of_the_batch() -> None:
    on_both(lambda L, func, x, w: func.vmap(lambda e: (e.sum(), w * 2), out_dims=(0, None))(x), X, W)


def test_non_tensor_arguments_pass_through() -> None:
    on_both(lambda L, func, x: func.vmap(lambda e, k, scale: e.sum(k) * scale, in_dims=(0, None, None))(x, 1, 3.0), X)


def test_nested_vmap_is_an_outer_computation() -> None:
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))

    def program(L, func, a, b):
        rows = func.vmap(lambda u, v: (u * v).sum(), in_dims=(None, 0))
        return func.vmap(rows, in_dims=(0, None))(a, b)

    ours = on_both(program, a, b)
    np.testing.assert_allclose(ours.numpy(), a @ b.T, rtol=1e-12)


def test_chunk_size_gives_the_same_values() -> None:
    whole = mf.vmap(lambda e: e.softmax(-1) @ T(W))(T(X))
    for chunk in (1, 2, 5, 9):
        part = mf.vmap(lambda e: e.softmax(-1) @ T(W), chunk_size=chunk)(T(X))
        np.testing.assert_allclose(part.numpy(), whole.numpy(), rtol=1e-12)


# ------------------------------------------------------------------ randomness
def test_random_ops_refuse_under_randomness_error() -> None:
    with pytest.raises(RuntimeError, match="randomness"):
        mf.vmap(lambda e: e + mt.randn(4))(T(X))


def test_randomness_same_draws_once_for_all_examples() -> None:
    out = mf.vmap(lambda e: mt.rand(4) + e * 0, randomness="same")(T(V)).numpy()
    np.testing.assert_array_equal(out, np.broadcast_to(out[0], out.shape))


def test_randomness_different_draws_per_example_and_dropout_follows() -> None:
    out = mf.vmap(lambda e: mt.rand(4) + e * 0, randomness="different")(T(V)).numpy()
    assert len({tuple(row) for row in out}) == len(out)
    ones = mt.ones(5, 200)
    dropped = mf.vmap(lambda e: mt.nn.functional.dropout(e, 0.5), randomness="different")(ones).numpy()
    assert len({tuple(row) for row in dropped}) == 5
    same = mf.vmap(lambda e: mt.nn.functional.dropout(e, 0.5), randomness="same")(ones).numpy()
    np.testing.assert_array_equal(same, np.broadcast_to(same[0], same.shape))


# ------------------------------------------------------------------ errors, as PyTorch's
def _both_raise(program, error, match):
    with pytest.raises(error, match=match):
        program(mt, mf)
    torch = _torch()
    if torch is not None:
        with pytest.raises(error, match=match):
            program(torch, torch.func)


def test_inconsistent_batch_sizes_raise() -> None:
    _both_raise(
        lambda L, func: func.vmap(lambda a, b: a + b)(L.ones(3, 2), L.ones(4, 2)),
        ValueError,
        "Expected all tensors to have the same size in the mapped dimension",
    )


def test_an_in_dim_beyond_the_input_raises() -> None:
    _both_raise(lambda L, func: func.vmap(lambda a: a, in_dims=2)(L.ones(3, 2)), ValueError, "in_dims")


def test_a_bad_in_dims_type_raises() -> None:
    _both_raise(lambda L, func: func.vmap(lambda a: a, in_dims="0")(L.ones(3, 2)), ValueError, "in_dims")


def test_no_batched_input_raises() -> None:
    _both_raise(lambda L, func: func.vmap(lambda a: a, in_dims=(None,))(L.ones(3)), ValueError, "at least one")


def test_a_bad_randomness_raises() -> None:
    _both_raise(lambda L, func: func.vmap(lambda a: a, randomness="fresh")(L.ones(3)), RuntimeError, "randomness")


def test_reading_a_batched_value_raises() -> None:
    with pytest.raises(RuntimeError, match="item"):
        mf.vmap(lambda e: e.sum().item())(T(V))


# ------------------------------------------------------------------ compositions
def _mlp_loss(L, params, x, y):
    h = L.tanh(x @ params["w1"] + params["b1"])
    return ((h @ params["w2"]).squeeze(-1) - y) ** 2


def test_per_sample_gradients_are_the_examples_own() -> None:
    p = {"w1": rng.standard_normal((4, 8)), "b1": rng.standard_normal(8), "w2": rng.standard_normal((8, 1))}
    xs, ys = rng.standard_normal((6, 4)), rng.standard_normal(6)

    def program(L, func, w1, b1, w2, x, y):
        params = {"w1": w1, "b1": b1, "w2": w2}
        return func.vmap(func.grad(lambda q, a, b: _mlp_loss(L, q, a, b)), in_dims=(None, 0, 0))(params, x, y)

    ours = on_both(program, p["w1"], p["b1"], p["w2"], xs, ys)
    params = {k: T(v) for k, v in p.items()}
    for i in range(6):
        one = mf.grad(lambda q, i=i: _mlp_loss(mt, q, T(xs[i]), T(ys[i])))(params)
        for k in p:
            np.testing.assert_allclose(ours[k].numpy()[i], one[k].numpy(), rtol=1e-12, atol=1e-14)


def test_vmap_of_jvp_and_of_jacrev() -> None:
    on_both(lambda L, func, x, v: func.vmap(lambda a, t: func.jvp(lambda z: z.sin() * z, (a,), (t,)))(x, v), V, V)
    on_both(lambda L, func, x: func.vmap(func.jacrev(lambda z: z.softmax(-1)))(x), V)
    on_both(lambda L, func, x: func.vmap(func.jacfwd(lambda z: (z * z).cumsum(0)))(x), V)


def test_jacobians_of_a_vmapped_function() -> None:
    on_both(lambda L, func, x: func.jacrev(func.vmap(lambda z: z.exp().sum()))(x), V)
    on_both(lambda L, func, x: func.jacfwd(func.vmap(lambda z: z.exp().sum()))(x), V)


def test_vmap_of_hessian() -> None:
    on_both(lambda L, func, x: func.vmap(func.hessian(lambda z: (z**3).sum() + z.prod()))(x), V)


def test_ensembling_with_stack_module_state() -> None:
    """Three models' outputs on one batch in one call: vmap over their stacked parameters."""
    xs = rng.standard_normal((7, 4))

    def program(L, func, x):
        L.manual_seed(0)
        models = [L.nn.Sequential(L.nn.Linear(4, 5), L.nn.Tanh(), L.nn.Linear(5, 2)).double() for _ in range(3)]
        for k, m in enumerate(models):  # the same weights on both sides
            for j, p in enumerate(m.parameters()):
                gen = np.random.default_rng(10 * k + j)
                p.data.copy_(L.tensor(gen.standard_normal(tuple(p.shape)), dtype=L.float64))
        params, buffers = func.stack_module_state(models)
        base = models[0]

        def one(p, b, data):
            return func.functional_call(base, (p, b), (data,))

        return func.vmap(one, in_dims=(0, 0, None))(params, buffers, x)

    ours = on_both(program, xs)
    assert tuple(ours.shape) == (3, 7, 2)


def test_empirical_ntk() -> None:
    """The neural tangent kernel J(x1) J(x2)^T of a small network, by vmap(jacrev) and einsum."""
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    w1, w2 = rng.standard_normal((4, 5)), rng.standard_normal((5, 2))

    def program(L, func, a, b, w1, w2):
        def net(params, x):
            return L.tanh(x @ params[0]) @ params[1]

        def jac(x):
            return func.vmap(func.jacrev(net), in_dims=(None, 0))((w1, w2), x)

        ja, jb = jac(a), jac(b)
        return sum(L.einsum("Naf...,Mbf...->NMab", u.flatten(3), v.flatten(3)) for u, v in zip(ja, jb))

    ntk = on_both(program, a, b, w1, w2)
    assert tuple(ntk.shape) == (3, 2, 2, 2)
