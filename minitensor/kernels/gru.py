"""The recurrence of one GRU layer over a whole sequence, forward and backward, in one kernel call each.

``ops/gru_layer.py`` computes the input half of every gate for all time steps
in one matrix product, ``xg = x W_ihᵀ + b_ih`` (L, N, 3H), in PyTorch's gate
order r, z, n.  The hidden half ``hg = h_prev W_hhᵀ + b_hh`` needs the previous
step; for each time step t (t = L-1 down to 0 for the reverse direction)::

    hg[t] = b_hh + h_prev W_hhᵀ                        BLAS (``blas.gemm``, from numba)
    r = sigmoid(xg_r + hg_r)   z = sigmoid(xg_z + hg_z)
    n = tanh(xg_n + r * hg_n)
    h[t] = (1 - z) * n + z * h_prev

``gru_forward`` writes [r, z, n] over ``xg`` and keeps ``hg`` (backward needs
both) and returns ``out`` (L, N, H), h for every step.  ``gru_backward`` walks
the steps the other way; with ``dh`` the gradient of h[t] (from the output and
from step t+1)::

    dn~ = dh * (1 - z) * (1 - n^2)          (the gradient of n's pre-activation)
    dr~ = dn~ * hg_n * r(1-r)      dz~ = dh * (h_prev - n) * z(1-z)
    dgx = [dr~, dz~, dn~]          dgh = [dr~, dz~, dn~ * r]      (of xg and of hg)
    dh  = dh * z + dgh @ W_hh                           BLAS

and returns dgx, dgh for all steps; the op turns them into dx, dW_ih, dW_hh,
db_ih and db_hh with whole-sequence matrix products.  Sigmoid and tanh come
from the SIMD ``exp`` (``_gates.py``); the NumPy references beside the
kernels run the same loop with one ``np.matmul`` per step.

>>> xg = np.zeros((2, 1, 3))                       # L = 2, N = 1, H = 1: every gate input 0
>>> out, hg = gru_forward(xg, np.zeros((3, 1)), np.zeros(3), np.ones((1, 1)), False)
>>> out.ravel()                                    # h = 0.5 * tanh(0) + 0.5 * h_prev
array([0.5 , 0.25])
"""

from __future__ import annotations

import numpy as np

from ._exp import exp_inplace
from ._gates import sigmoid_numpy, sigmoid_of, tanh_of, taylor_bound, time_order
from .runtime.blas import gemm
from .runtime.dispatch import BlasKernel
from .runtime.jit import njit


def gru_forward(xg: np.ndarray, w_hh: np.ndarray, b_hh, h0: np.ndarray, reverse: bool) -> tuple:
    """(out (L, N, H), hg (L, N, 3H)) of the recurrence; ``xg`` (L, N, 3H), C-contiguous, becomes
    [r, z, n].  ``w_hh`` (3H, H), ``b_hh`` (3H,) or None, ``h0`` (N, H) (cast to ``xg``'s dtype)."""
    steps, rows, width = xg.shape
    out = np.empty((steps, rows, width // 3), xg.dtype)
    hg = np.empty_like(xg)
    hg[...] = 0 if b_hh is None else b_hh  # the gemm of each step adds h_prev W_hhᵀ
    w_hh_t = np.ascontiguousarray(w_hh.T, xg.dtype)  # BLAS multiplies by a transposed operand ~2x slower here
    h0 = np.ascontiguousarray(h0, xg.dtype)
    _FORWARD.on(xg)(xg, w_hh_t, h0, reverse, out, hg)
    return out, hg


def gru_backward(grad: np.ndarray, gates: np.ndarray, hg: np.ndarray, out: np.ndarray, h0, w_hh, reverse) -> tuple:
    """(dgx (L, N, 3H), dgh (L, N, 3H), dh0 (N, H)) from ``grad`` (L, N, H), the gradient of ``out``,
    and what ``gru_forward`` left: the ``gates`` [r, z, n], ``hg`` and ``out``."""
    dgx, dgh = np.empty_like(gates), np.empty_like(gates)
    dh0 = np.empty(out.shape[1:], gates.dtype)
    grad, h0, w_hh = (np.ascontiguousarray(a, gates.dtype) for a in (grad, h0, w_hh))
    _BACKWARD.on(gates)(grad, gates, hg, out, h0, w_hh, reverse, dgx, dgh, dh0)
    return dgx, dgh, dh0


# ------------------------------------------------------------------ NumPy references
def _forward_numpy(xg, w_hh_t, h0, reverse, out, hg) -> None:
    """Reference of ``_forward``: one ``np.matmul`` and a few NumPy passes per step."""
    size = xg.shape[2] // 3
    order, _ = time_order(xg.shape[0], reverse)
    h_prev = h0
    for t in order:
        hg[t] += h_prev @ w_hh_t
        gates = xg[t]
        gates[:, : 2 * size] = sigmoid_numpy(gates[:, : 2 * size] + hg[t][:, : 2 * size])
        r, z = gates[:, :size], gates[:, size : 2 * size]
        gates[:, 2 * size :] = np.tanh(gates[:, 2 * size :] + r * hg[t][:, 2 * size :])
        out[t] = (1 - z) * gates[:, 2 * size :] + z * h_prev
        h_prev = out[t]


def _backward_numpy(grad, gates, hg, out, h0, w_hh, reverse, dgx, dgh, dh0) -> None:
    """Reference of ``_backward``: the steps in the other order, one ``np.matmul`` per step."""
    size = gates.shape[2] // 3
    order, back = time_order(gates.shape[0], reverse)
    dh0[...] = 0  # the gradient reaching h[t] from step t+1 (none for the last step)
    for t in reversed(order):
        r, z, n = (gates[t][:, k * size : (k + 1) * size] for k in range(3))
        h_prev = h0 if t == order[0] else out[t + back]
        dh = grad[t] + dh0
        dn = dh * (1 - z) * (1 - n * n)
        dr = dn * hg[t][:, 2 * size :] * r * (1 - r)
        dz = dh * (h_prev - n) * z * (1 - z)
        dgx[t] = np.concatenate([dr, dz, dn], axis=-1)
        dgh[t] = np.concatenate([dr, dz, dn * r], axis=-1)
        dh0[...] = dh * z + dgh[t] @ w_hh


# ------------------------------------------------------------------ numba kernels
@njit(fastmath={"contract"}, error_model="numpy")
def _cell(gates, hg, h_prev, h, e):
    """[r, z, n] over ``gates`` (N, 3H, the input halves) and h (N, H), given ``hg`` (N, 3H); e: scratch
    of the same dtype, at least 3NH."""
    rows, width = gates.shape
    size, bound = width // 3, taylor_bound(gates)
    for n in range(rows):
        a, b, en = gates[n], hg[n], e[n * 2 * size : (n + 1) * 2 * size]
        for k in range(2 * size):
            a[k] += b[k]
            en[k] = -abs(a[k])
    exp_inplace(e[: rows * 2 * size])
    for n in range(rows):
        a, b, en = gates[n], hg[n], e[n * 2 * size : (n + 1) * 2 * size]
        for k in range(2 * size):
            a[k] = sigmoid_of(a[k], en[k])
        r, hn, pre = a[:size], b[2 * size :], a[2 * size :]
        em = e[rows * 2 * size + n * size : rows * 2 * size + (n + 1) * size]
        for k in range(size):
            pre[k] += r[k] * hn[k]
            em[k] = -2.0 * abs(pre[k])
    exp_inplace(e[rows * 2 * size : rows * 3 * size])
    for n in range(rows):
        a, hp, hn, em = gates[n], h_prev[n], h[n], e[rows * 2 * size + n * size : rows * 2 * size + (n + 1) * size]
        z, ng = a[size : 2 * size], a[2 * size :]
        for k in range(size):
            ng[k] = tanh_of(ng[k], em[k], bound)
            hn[k] = (1 - z[k]) * ng[k] + z[k] * hp[k]


@njit(fastmath={"contract"}, error_model="numpy")
def _forward(xg, w_hh_t, h0, reverse, out, hg):
    """The recurrence (module docstring); same arguments as ``_forward_numpy``."""
    steps, rows, width = xg.shape
    e = np.empty(rows * width, xg.dtype)
    back = 1 if reverse else -1
    for s in range(steps):
        t = steps - 1 - s if reverse else s
        h_prev = h0 if s == 0 else out[t + back]
        gemm(h_prev, False, w_hh_t, False, hg[t], 1.0)
        _cell(xg[t], hg[t], h_prev, out[t], e)


@njit(fastmath={"contract"}, error_model="numpy")
def _cell_backward(grad, dh, gates, hg, h_prev, dgx, dgh):
    """One step's dgx, dgh (N, 3H) from the gradient of h (``grad + dh``); dh becomes ``(grad + dh) * z``."""
    rows, size = dh.shape
    for n in range(rows):
        a, b, x, y = gates[n], hg[n], dgx[n], dgh[n]
        r, z, ng, hn = a[:size], a[size : 2 * size], a[2 * size :], b[2 * size :]
        dr, dz, dn = x[:size], x[size : 2 * size], x[2 * size :]
        hr, hz, hnn = y[:size], y[size : 2 * size], y[2 * size :]
        gn, dhn, hp = grad[n], dh[n], h_prev[n]
        for k in range(size):
            dhk = gn[k] + dhn[k]
            dnk = dhk * (1 - z[k]) * (1 - ng[k] * ng[k])
            drk = dnk * hn[k] * r[k] * (1 - r[k])
            dzk = dhk * (hp[k] - ng[k]) * z[k] * (1 - z[k])
            dr[k], dz[k], dn[k] = drk, dzk, dnk
            hr[k], hz[k], hnn[k] = drk, dzk, dnk * r[k]
            dhn[k] = dhk * z[k]


@njit(fastmath={"contract"}, error_model="numpy")
def _backward(grad, gates, hg, out, h0, w_hh, reverse, dgx, dgh, dh0):
    """The recurrence backwards (module docstring); same arguments as ``_backward_numpy``."""
    steps = gates.shape[0]
    back = 1 if reverse else -1
    dh0[...] = 0
    for s in range(steps - 1, -1, -1):  # s: the forward's step number, t: its time position
        t = steps - 1 - s if reverse else s
        h_prev = h0 if s == 0 else out[t + back]
        _cell_backward(grad[t], dh0, gates[t], hg[t], h_prev, dgx[t], dgh[t])
        gemm(dgh[t], False, w_hh, False, dh0, 1.0)


# The kernels call BLAS: where numba finds none, the references run (``BlasKernel``).
_FORWARD = BlasKernel(_forward_numpy, _forward)
_BACKWARD = BlasKernel(_backward_numpy, _backward)
