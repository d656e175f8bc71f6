"""minitensor.autograd.forward_ad: dual tensors, levels and their errors as PyTorch's, tangents
through views and in-place ops, no reverse graph, and composition with reverse mode."""

from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt
import minitensor.autograd.forward_ad as fwAD


def f64(values, requires_grad: bool = False) -> mt.Tensor:
    return mt.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def test_a_dual_tensor_carries_its_tangent_through_ops():
    x, v = f64([1.0, 2.0]), f64([1.0, 0.5])
    with fwAD.dual_level():
        y = (fwAD.make_dual(x, v) ** 2).exp().sum()  # d/dx sum(exp(x^2)) = 2 x exp(x^2)
        primal, tangent = fwAD.unpack_dual(y)
    expected = np.sum(2 * x.numpy() * np.exp(x.numpy() ** 2) * v.numpy())
    assert primal.item() == pytest.approx(np.exp(1) + np.exp(4))
    assert tangent.item() == pytest.approx(expected)


def test_unpack_dual_returns_a_named_tuple():
    with fwAD.dual_level():
        unpacked = fwAD.unpack_dual(fwAD.make_dual(f64([1.0]), f64([3.0])))
    assert isinstance(unpacked, fwAD.UnpackedDualTensor) and unpacked._fields == ("primal", "tangent")
    assert unpacked.tangent.tolist() == [3.0]
    assert fwAD.unpack_dual(f64([1.0])).tangent is None  # outside a level: no tangent


def test_the_tangents_are_gone_when_the_level_is_left():
    with fwAD.dual_level():
        y = fwAD.make_dual(f64([1.0]), f64([1.0])) * 2
        assert fwAD.unpack_dual(y).tangent is not None
    assert fwAD.unpack_dual(y).tangent is None


def test_forward_mode_records_no_reverse_graph():
    x = f64([1.0, 2.0])
    with fwAD.dual_level():
        y = fwAD.make_dual(x, f64([1.0, 1.0])).tanh() * 3
        assert not y.requires_grad and y.grad_fn is None


def test_tangents_flow_under_no_grad_and_stop_at_detach():
    with fwAD.dual_level():
        d = fwAD.make_dual(f64([0.5]), f64([2.0]))
        with mt.no_grad():
            assert fwAD.unpack_dual(d.sin()).tangent.item() == pytest.approx(2 * np.cos(0.5))
        assert fwAD.unpack_dual(d.detach()).tangent is None
        assert fwAD.unpack_dual(d.data).tangent is None


@pytest.mark.parametrize("op", ["gelu", "layer_norm"])
def test_a_fused_op_under_no_grad_with_inputs_that_require_grad(op):
    """Its tangent comes from its formula's gradients (``composite_grads``): under no_grad, with a primal
    and a tangent that require grad, the same tangent as outside it, and nothing requiring grad."""
    fn = {"gelu": mt.nn.functional.gelu, "layer_norm": lambda a: mt.nn.functional.layer_norm(a, (3,))}[op]
    rng = np.random.default_rng(0)
    x, v = (mt.tensor(rng.standard_normal((2, 3)), dtype=mt.float64, requires_grad=True) for _ in range(2))
    with fwAD.dual_level():
        expected = fwAD.unpack_dual(fn(fwAD.make_dual(x.detach(), v.detach()))).tangent
        with mt.no_grad():
            out = fn(fwAD.make_dual(x, v))
        tangent = fwAD.unpack_dual(out).tangent
    np.testing.assert_allclose(tangent.numpy(), expected.numpy(), rtol=1e-12)
    assert not out.requires_grad and not tangent.requires_grad


def test_levels_and_their_errors_as_pytorch():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(f64([1.0]), f64([1.0]))
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="Tensor is of size \\[3\\] while the given forward gradient is"):
            fwAD.make_dual(f64([1.0, 2.0, 3.0]), f64([1.0]))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, but got"):
            fwAD.make_dual(mt.tensor([1, 2]), f64([1.0, 2.0]))
        with pytest.raises(RuntimeError, match="not the last one"):
            fwAD.exit_dual_level(level=3)
    level = fwAD.enter_dual_level()
    fwAD.exit_dual_level(level=level)


def test_dual_level_is_also_a_decorator():
    @fwAD.dual_level()
    def tangent_of_square(x, v):
        return fwAD.unpack_dual(fwAD.make_dual(x, v) ** 2).tangent

    assert tangent_of_square(f64([3.0]), f64([1.0])).tolist() == [6.0]


def test_an_in_place_op_through_a_view_gives_the_base_a_tangent():
    """As PyTorch: writing a dual into a view of a plain tensor gives the base a tangent, zero elsewhere."""
    x, t = f64([1.0, 2.0, 3.0]), f64([10.0, 20.0, 30.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        base = mt.zeros(4, dtype=mt.float64)
        base[:2].copy_(d[:2])
        assert fwAD.unpack_dual(base).tangent.tolist() == [10.0, 20.0, 0.0, 0.0]
        b = fwAD.make_dual(f64([1.0, 1.0, 1.0]), f64([1.0, 1.0, 1.0]))
        b.mul_(d)  # d(b * d) = db * d + b * dd
        assert fwAD.unpack_dual(b).tangent.tolist() == [11.0, 22.0, 33.0]


def test_an_in_place_op_on_a_base_changes_the_tangent_of_its_views():
    with fwAD.dual_level():
        d = fwAD.make_dual(f64([1.0, 2.0]), f64([1.0, 1.0]))
        view = d[1:]
        d.mul_(3.0)
        assert fwAD.unpack_dual(view).tangent.tolist() == [3.0]
        d.zero_()
        assert fwAD.unpack_dual(view).tangent.tolist() == [0.0]


def test_forward_over_reverse_gives_a_hessian_vector_product():
    """The gradient computed inside a level carries its tangent: H v (f = sum(x^3) + x0 x1)."""
    x, v = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(f64(x), f64(v)).requires_grad_(False)
        leaf = d * 1.0
        leaf.requires_grad_(True)
        y = (leaf**3).sum() + leaf[0] * leaf[1]
        (g,) = mt.autograd.grad(y, leaf)
        hvp = fwAD.unpack_dual(g).tangent
    hessian = np.diag(6 * x) + np.array([[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(g.numpy(), 3 * x**2 + x[::-1])
    np.testing.assert_allclose(hvp.numpy(), hessian @ v)


@pytest.mark.parametrize("how", ["dual_level", "func.jvp of func.grad"])
def test_leaving_a_level_leaves_no_reference_cycles(how):
    """A tangent computed from an op's output (tanh's: ẋ (1 - y²)) leads back to the op's node through its
    graph, and the node remembers it for a backward inside the level: leaving the level breaks that cycle,
    so the arrays go at once (by reference counting), not at the garbage collector's next full pass."""
    x, v = f64(np.linspace(-1.0, 1.0, 5)), f64(np.ones(5))

    def f(a):
        return (a.tanh() * a).tanh().sum()

    def hessian_vector_product():
        if how == "dual_level":
            with fwAD.dual_level():
                leaf = fwAD.make_dual(x, v).requires_grad_(False) * 1.0
                leaf.requires_grad_(True)
                (g,) = mt.autograd.grad(f(leaf), leaf)
                hvp = fwAD.unpack_dual(g).tangent
        else:
            g, hvp = mt.func.jvp(mt.func.grad(f), (x,), (v,))
        return hvp

    hessian_vector_product()  # (first: what a first call makes once, kernels loaded on demand, is not the point)
    gc.collect()
    gc.disable()
    try:
        hvp = hessian_vector_product()
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert hvp.shape == (5,) and np.isfinite(hvp.numpy()).all()


def test_reverse_over_forward_differentiates_the_tangent():
    """A tangent computed from a primal that requires grad is differentiable: d/dx (J v) = H v."""
    x = f64([1.0, 2.0], requires_grad=True)
    v = f64([0.5, -1.0])
    with fwAD.dual_level():
        y = (fwAD.make_dual(x, v) ** 3).sum()
        tangent = fwAD.unpack_dual(y).tangent  # 3 x^2 · v
    (hvp,) = mt.autograd.grad(tangent, x)
    np.testing.assert_allclose(hvp.numpy(), 6 * x.numpy() * v.numpy())


def test_a_function_without_a_jvp_rule_raises_naming_it():
    class Twice(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def backward(ctx, grad):
            return 2 * grad

    with fwAD.dual_level():
        d = fwAD.make_dual(f64([1.0]), f64([1.0]))
        with pytest.raises(RuntimeError, match="forward AD with Twice that does not support it"):
            Twice.apply(d)


def test_a_user_function_with_a_jvp_rule_takes_part():
    class Cube(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * grad

        @staticmethod
        def jvp(ctx, dx):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * dx

    with fwAD.dual_level():
        y = Cube.apply(fwAD.make_dual(f64([2.0]), f64([1.0])))
        assert fwAD.unpack_dual(y).tangent.tolist() == [12.0]


def test_make_dual_inside_vmap_with_a_batched_tangent_and_a_shared_primal():
    """Each example's tangent, through an op with another batched operand (the primal is lifted
    into the tangent's batch, where minitensor keeps a tangent)."""
    x, r = f64([1.0, 2.0, 3.0]), f64(np.arange(9.0).reshape(3, 3))

    def tangent_of(t, q):
        with fwAD.dual_level():
            return fwAD.unpack_dual(fwAD.make_dual(x, t) * q).tangent

    out = mt.func.vmap(tangent_of)(mt.eye(3, dtype=mt.float64), r)
    np.testing.assert_array_equal(out.numpy(), np.diag(np.diag(r.numpy())))


def test_the_autograd_submodules_are_attributes_after_import_minitensor() -> None:
    """As ``torch.autograd.forward_ad`` after ``import torch``: in a fresh interpreter, where no test has
    imported a submodule first (which alone would make the attribute exist)."""
    names = ["forward_ad.dual_level", "profiler.profile", "functional.hvp", "graph.saved_tensors_hooks"]
    code = "import minitensor as mt\n" + "\n".join(f"mt.autograd.{name}" for name in names)
    subprocess.run([sys.executable, "-c", code], check=True)
