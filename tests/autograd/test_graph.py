"""``autograd.graph`` (saved-tensor hooks, Node hooks, next_functions, ``_saved_*``) against PyTorch.

Each program runs on minitensor and on PyTorch (``run_on_both``) and returns plain values to compare.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_on_both

import minitensor as mt


def _leaf(L, values):
    return L.tensor(values, dtype=L.float64, requires_grad=True)


def test_pack_and_unpack_hooks_see_every_saved_tensor_and_the_gradient_is_unchanged() -> None:
    def program(L):
        x = _leaf(L, [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
        packed, unpacked = [], []

        def pack(t):
            packed.append(tuple(t.shape))
            return t.detach().numpy().copy()  # kept as an array, outside the library

        def unpack(a):
            unpacked.append(a.shape)
            return L.from_numpy(a)

        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x.exp()).sum()
        y.backward()
        return len(packed) > 0, len(packed) == len(unpacked), x.grad.numpy()

    ours, theirs = run_on_both(program)
    assert ours[:2] == (True, True) and theirs[:2] == (True, True)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


def test_unpack_sees_what_pack_returned_and_may_change_it() -> None:
    """Saved values scaled by 2 when packed: the gradient of x * x, x + x, reads 2x + 2x."""

    def program(L):
        x = _leaf(L, [1.0, -2.0])
        with L.autograd.graph.saved_tensors_hooks(lambda t: ("box", t * 2), lambda p: p[1]):
            y = (x * x).sum()
        y.backward()
        return x.grad.tolist()

    ours, theirs = run_on_both(program)
    assert ours == theirs == [4.0, -8.0]


def test_the_innermost_hooks_apply_and_leaving_restores_the_outer() -> None:
    counts = {"outer": 0, "inner": 0}

    def hooks(name):
        def pack(t):
            counts[name] += 1
            return t

        return mt.autograd.graph.saved_tensors_hooks(pack, lambda t: t)

    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with hooks("outer"):
        with hooks("inner"):
            (x * x).sum()
        inner = counts["inner"]
        (x * x).sum()
    assert inner > 0 and counts["outer"] == inner  # the same op, saved once under each


def test_an_unpack_hook_returning_a_non_tensor_raises() -> None:
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with mt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t.numpy()):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.backward()


def test_save_on_cpu_keeps_the_gradients() -> None:
    def program(L):
        x = _leaf(L, [0.3, 0.7, -1.1])
        with L.autograd.graph.save_on_cpu():
            y = (x.sin() * x).sum()
        y.backward()
        return x.grad.numpy()

    ours, theirs = run_on_both(program)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_disable_saved_tensors_hooks_refuses_new_hooks_with_its_message() -> None:
    def program(L):
        with L.autograd.graph.disable_saved_tensors_hooks("no hooks in this region"):
            try:
                with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as e:
                return str(e)
        return "not refused"

    ours, theirs = run_on_both(program)
    assert ours == theirs == "no hooks in this region"


def test_forward_mode_ignores_saved_tensor_hooks() -> None:
    import minitensor.autograd.forward_ad as fwAD

    packed = []
    x = mt.tensor([0.5, 1.0], dtype=mt.float64)
    with mt.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        with fwAD.dual_level():
            y = fwAD.make_dual(x, mt.ones(2, dtype=mt.float64)).exp()
            tangent = fwAD.unpack_dual(y).tangent
    np.testing.assert_allclose(tangent.numpy(), np.exp([0.5, 1.0]))


def test_next_functions_are_pairs_with_accumulate_grad_at_leaves() -> None:
    def program(L):
        a = _leaf(L, [1.0, 2.0])
        c = L.tensor([3.0, 4.0], dtype=L.float64)
        y = (a * c).exp()
        ((mul, index),) = y.grad_fn.next_functions
        (acc, _), (none, _) = mul.next_functions
        return index, acc.variable is a, none, acc.next_functions == ()

    ours, theirs = run_on_both(program)
    assert ours == theirs == (0, True, None, True)


def test_node_prehook_replaces_the_incoming_gradient_and_hook_the_outgoing() -> None:
    def program(L):
        x = _leaf(L, [1.0, 2.0, 3.0])
        y = x * x
        seen = []
        pre = y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))

        def post(grad_inputs, grad_outputs):
            seen.append((len(grad_inputs), grad_outputs[0].tolist()))
            return tuple(None if g is None else g + 1 for g in grad_inputs)

        y.grad_fn.register_hook(post)
        y.sum().backward(retain_graph=True)
        first = x.grad.tolist()
        pre.remove()
        x.grad = None
        y.sum().backward()
        return first, x.grad.tolist(), seen

    ours, theirs = run_on_both(program)
    assert ours == theirs


def test_saved_self_other_and_result() -> None:
    def program(L):
        x = _leaf(L, [1.0, 2.0])
        w = _leaf(L, [3.0, -1.0])
        m = x * w
        e = x.exp()
        return (
            m.grad_fn._saved_self.tolist(),
            m.grad_fn._saved_other.tolist(),
            e.grad_fn._saved_result.tolist(),
        )

    ours, theirs = run_on_both(program)
    np.testing.assert_allclose(np.array(ours[2]), np.array(theirs[2]), rtol=1e-12)
    assert ours[:2] == theirs[:2]


def test_saved_values_after_backward_raise_as_pytorch() -> None:
    def program(L):
        x = _leaf(L, [1.0, 2.0])
        y = x.exp()
        y.sum().backward()
        try:
            y.grad_fn._saved_result
        except RuntimeError as e:
            return "freed" if "backward through the graph a second time" in str(e) else str(e)
        return "kept"

    ours, theirs = run_on_both(program)
    assert ours == theirs == "freed"


def test_an_unknown_saved_name_is_an_attribute_error() -> None:
    y = mt.tensor([1.0], requires_grad=True).exp()
    with pytest.raises(AttributeError, match="_saved_mat2"):
        y.grad_fn._saved_mat2
