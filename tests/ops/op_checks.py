"""One check for a new differentiable op: float64 gradcheck, second-order gradcheck, PyTorch oracle.

``check_op(mt_fn, torch_fn, *arrays)``:

1. ``gradcheck(mt_fn, inputs)`` in float64 (the full Jacobian, no ``.sum()``);
2. the second order: ``gradcheck`` of ``(x, w) -> autograd.grad((f(x) * w).sum(), x, create_graph=True)``
   with the output weighting ``w`` an input too (so linear ops are checked through their backward);
3. against PyTorch: the output, the weighted gradient, and the gradient of a random weighting
   of that gradient (the second derivative) w.r.t. the inputs and ``w``.

``pytorch_second_order=False`` leaves out the last comparison only (for PyTorch kernels whose
backward has no derivative, e.g. ``multi_margin_loss``): step 2 still checks ours.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck


def _pair(mt_fn, n):
    def grad_fn(*ts):
        xs, w = ts[:n], ts[n]
        with mt.enable_grad():  # gradcheck evaluates fn under no_grad for its differences
            return mt.autograd.grad((mt_fn(*xs) * w).sum(), list(xs), create_graph=True, allow_unused=True)

    return grad_fn


def check_op(
    mt_fn, torch_fn, *arrays, seed: int = 0, second: bool = True, atol: float = 1e-10, pytorch_second_order: bool = True
):
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
    tgrads = torch.autograd.grad((tout * tw).sum(), txs, create_graph=pytorch_second_order, allow_unused=True)
    mgrads = _pair(mt_fn, len(xs))(*xs, w)
    vs = [rng.standard_normal(np.shape(a)) for a in arrays]
    tsecond_out = sum((g * torch.tensor(v)).sum() for g, v in zip(tgrads, vs) if g is not None)
    msecond_out = sum((g * mt.tensor(v, dtype=mt.float64)).sum() for g, v in zip(mgrads, vs) if g is not None)
    for tg, mg, a in zip(tgrads, mgrads, arrays):
        t_arr = np.zeros(np.shape(a)) if tg is None else tg.detach().numpy()
        m_arr = np.zeros(np.shape(a)) if mg is None else mg.numpy()
        np.testing.assert_allclose(m_arr, t_arr, rtol=1e-10, atol=atol)
    if not (second and pytorch_second_order) or not getattr(tsecond_out, "requires_grad", False):
        return
    tsec = torch.autograd.grad(tsecond_out, [*txs, tw], allow_unused=True)
    msec = mt.autograd.grad(msecond_out, [*xs, w], allow_unused=True)
    for ts, ms, shape in zip(tsec, msec, [*[np.shape(a) for a in arrays], w_arr.shape]):
        t_arr = np.zeros(shape) if ts is None else ts.numpy(force=True)  # (force: a ZeroTensor)
        m_arr = np.zeros(shape) if ms is None else ms.numpy()
        np.testing.assert_allclose(m_arr, t_arr, rtol=1e-9, atol=atol)
