"""One check for a new differentiable op: float64 gradcheck, second-order gradcheck, PyTorch oracle.

``check_op(mt_fn, torch_fn, *arrays)``:

1. ``gradcheck(mt_fn, inputs)`` in float64 (the full Jacobian, no ``.sum()``);
2. the second order: ``gradcheck`` of ``(x, w) -> autograd.grad((f(x) * w).sum(), x, create_graph=True)``
   with the output weighting ``w`` an input too (so linear ops are checked through their backward);
3. against PyTorch: the output, the weighted gradient, and the gradient of a random weighting
   of that gradient (the second derivative) w.r.t. the inputs and ``w``;
4. forward mode: the JVP rule (``forward_ad``) against central finite differences and against
   PyTorch's forward AD, in a random direction.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.autograd.forward_ad as fwAD
from minitensor.autograd import gradcheck


def _pair(mt_fn, n):
    def grad_fn(*ts):
        xs, w = ts[:n], ts[n]
        with mt.enable_grad():  # gradcheck evaluates fn under no_grad for its differences
            grads = mt.autograd.grad((mt_fn(*xs) * w).sum(), list(xs), create_graph=True, allow_unused=True)
        return tuple(mt.zeros_like(x) if g is None else g for g, x in zip(grads, xs))  # (no gradient: zeros)

    return grad_fn


def check_jvp(mt_fn, torch_fn, *arrays, seed: int = 0, atol: float = 1e-10) -> None:
    """The tangent of ``mt_fn`` at ``arrays`` (float64) in a random direction, by its JVP rules,
    against central differences and (when PyTorch is installed) PyTorch's forward AD."""
    rng = np.random.default_rng(seed + 1)
    vs = [rng.standard_normal(np.shape(a)) for a in arrays]
    with fwAD.dual_level():
        duals = [
            fwAD.make_dual(mt.tensor(a, dtype=mt.float64), mt.tensor(v, dtype=mt.float64)) for a, v in zip(arrays, vs)
        ]
        out = mt_fn(*duals)
        tangent = fwAD.unpack_dual(out).tangent
    mine = np.zeros(out.shape) if tangent is None else tangent.numpy()
    eps = 1e-6

    def at(step: float) -> np.ndarray:
        with mt.no_grad():
            return mt_fn(*[mt.tensor(a + step * v, dtype=mt.float64) for a, v in zip(arrays, vs)]).numpy()

    np.testing.assert_allclose(
        mine, (at(eps) - at(-eps)) / (2 * eps), rtol=1e-5, atol=1e-6, err_msg="JVP vs differences"
    )
    torch = pytest.importorskip("torch")
    with torch.autograd.forward_ad.dual_level():
        make = torch.autograd.forward_ad.make_dual
        theirs = torch_fn(*[make(torch.tensor(a, dtype=torch.float64), torch.tensor(v)) for a, v in zip(arrays, vs)])
        t_tangent = torch.autograd.forward_ad.unpack_dual(theirs).tangent
    expected = np.zeros(out.shape) if t_tangent is None else t_tangent.numpy()
    np.testing.assert_allclose(mine, expected, rtol=1e-9, atol=atol, err_msg="JVP vs PyTorch's forward AD")


def check_op(mt_fn, torch_fn, *arrays, seed: int = 0, second: bool = True, atol: float = 1e-10):
    check_jvp(mt_fn, torch_fn, *arrays, seed=seed, atol=atol)
    rng = np.random.default_rng(seed)
    xs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in arrays]
    assert gradcheck(mt_fn, xs)
    out = mt_fn(*xs)
    w_arr = rng.standard_normal(out.shape)
    w = mt.tensor(w_arr, dtype=mt.float64, requires_grad=True)
    if second:
        assert gradcheck(_pair(mt_fn, len(xs)), [*xs, w])
    torch = pytest.importorskip("torch")
    txs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    tout = torch_fn(*txs)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-10, atol=atol)
    tw = torch.tensor(w_arr, requires_grad=True)
    tgrads = torch.autograd.grad((tout * tw).sum(), txs, create_graph=True, allow_unused=True)
    mgrads = _pair(mt_fn, len(xs))(*xs, w)
    vs = [rng.standard_normal(np.shape(a)) for a in arrays]
    tsecond_out = sum((g * torch.tensor(v)).sum() for g, v in zip(tgrads, vs) if g is not None)
    msecond_out = sum((g * mt.tensor(v, dtype=mt.float64)).sum() for g, v in zip(mgrads, vs) if g is not None)
    for tg, mg, a in zip(tgrads, mgrads, arrays):
        t_arr = np.zeros(np.shape(a)) if tg is None else tg.detach().numpy()
        m_arr = np.zeros(np.shape(a)) if mg is None else mg.numpy()
        np.testing.assert_allclose(m_arr, t_arr, rtol=1e-10, atol=atol)
    if not second or not getattr(tsecond_out, "requires_grad", False):
        return
    tsec = torch.autograd.grad(tsecond_out, [*txs, tw], allow_unused=True)
    msec = mt.autograd.grad(msecond_out, [*xs, w], allow_unused=True)
    for ts, ms, shape in zip(tsec, msec, [*[np.shape(a) for a in arrays], w_arr.shape]):
        t_arr = np.zeros(shape) if ts is None else ts.numpy(force=True)  # (force: a ZeroTensor)
        m_arr = np.zeros(shape) if ms is None else ms.numpy()
        np.testing.assert_allclose(m_arr, t_arr, rtol=1e-9, atol=atol)
