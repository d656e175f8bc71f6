"""The recurrence of one LSTM layer over a whole sequence, forward and backward, in one kernel call each.

``ops/lstm_layer.py`` computes the input half of every gate for all time steps
in one matrix product, ``xg = x W_ihᵀ + b_ih + b_hh`` (L, N, 4H), in PyTorch's
gate order i, f, g, o.  What is left is sequential: for each time step t
(t = L-1 down to 0 for the reverse direction)::

    gates = xg[t] + h_prev W_hhᵀ                       BLAS (``blas.gemm``, from numba)
    i, f, o = sigmoid(gates[i, f, o])   g = tanh(gates[g])
    c[t] = f * c_prev + i * g
    h[t] = o * tanh(c[t])

``lstm_forward`` writes the activated gates over ``xg`` (backward needs them),
c and tanh(c) for every step, and ``out`` (L+1, N, H): h for every step, then
the last c.  ``lstm_backward`` walks the steps the other way: with ``dh`` the
gradient of h[t] (from the output and from step t+1) and ``dc`` that of c[t]::

    dc     += dh * o * (1 - tanh(c)^2)
    dgates  = [dc * g * i(1-i), dc * c_prev * f(1-f), dc * i * (1-g^2), dh * tanh(c) * o(1-o)]
    dc      = dc * f                                    (the gradient of c_prev)
    dh      = dgates @ W_hh                             BLAS

and returns dgates for all steps; the op turns them into dx, dW_ih, dW_hh and
the biases' gradients with whole-sequence matrix products.

The kernels (one call per layer and direction, instead of a NumPy call per step
and gate) compute sigmoid and tanh from the SIMD ``exp`` (``_gates.py``).  The
NumPy references beside them run the same loop with one ``np.matmul`` per
step; they also serve where numba finds no BLAS.

>>> xg = np.zeros((2, 1, 4))                       # L = 2, N = 1, H = 1: every gate 0
>>> out, c, tanh_c = lstm_forward(xg, np.zeros((4, 1)), np.zeros((1, 1)), np.ones((1, 1)), False)
>>> c.ravel()                                      # c = 0.5 * c_prev + 0.5 * tanh(0)
array([0.5 , 0.25])
"""

from __future__ import annotations

import numpy as np

from ._exp import exp_inplace
from ._gates import sigmoid_numpy, sigmoid_of, tanh_of, taylor_bound, time_order
from .runtime.blas import gemm
from .runtime.dispatch import BlasKernel
from .runtime.jit import njit


def lstm_forward(xg: np.ndarray, w_hh: np.ndarray, h0: np.ndarray, c0: np.ndarray, reverse: bool) -> tuple:
    """(out (L+1, N, H), c (L, N, H), tanh(c) (L, N, H)) of the recurrence; ``xg`` (L, N, 4H), C-contiguous,
    becomes the activated gates.  ``w_hh`` (4H, H), ``h0``, ``c0`` (N, H) (cast to ``xg``'s dtype)."""
    steps, rows, width = xg.shape
    out = np.empty((steps + 1, rows, width // 4), xg.dtype)
    c, tanh_c = np.empty_like(out[:steps]), np.empty_like(out[:steps])
    w_hh_t = np.ascontiguousarray(w_hh.T, xg.dtype)  # BLAS multiplies by a transposed operand ~2x slower here
    h0, c0 = (np.ascontiguousarray(a, xg.dtype) for a in (h0, c0))
    _FORWARD.on(xg)(xg, w_hh_t, h0, c0, reverse, out, c, tanh_c)
    return out, c, tanh_c


def lstm_backward(
    grad: np.ndarray, gates: np.ndarray, c: np.ndarray, tanh_c: np.ndarray, c0: np.ndarray, w_hh, reverse: bool
) -> tuple:
    """(dgates (L, N, 4H), dh0 (N, H), dc0 (N, H)) from ``grad`` (L+1, N, H), the gradient of ``out``, and
    what ``lstm_forward`` left: the activated ``gates``, ``c`` and ``tanh_c``."""
    steps, rows, width = gates.shape
    dgates = np.empty_like(gates)
    dh0, dc0 = np.empty((rows, width // 4), gates.dtype), np.empty((rows, width // 4), gates.dtype)
    grad, c0, w_hh = (np.ascontiguousarray(a, gates.dtype) for a in (grad, c0, w_hh))
    _BACKWARD.on(gates)(grad, gates, c, tanh_c, c0, w_hh, reverse, dgates, dh0, dc0)
    return dgates, dh0, dc0


# ------------------------------------------------------------------ NumPy references
def _forward_numpy(xg, w_hh_t, h0, c0, reverse, out, c, tanh_c) -> None:
    """Reference of ``_forward``: one ``np.matmul`` and a few NumPy passes per step."""
    steps, _, width = xg.shape
    size = width // 4
    order, _ = time_order(steps, reverse)
    h_prev, c_prev = h0, c0
    for t in order:
        gates = xg[t]
        gates += h_prev @ w_hh_t
        gates[:, : 2 * size] = sigmoid_numpy(gates[:, : 2 * size])
        gates[:, 2 * size : 3 * size] = np.tanh(gates[:, 2 * size : 3 * size])
        gates[:, 3 * size :] = sigmoid_numpy(gates[:, 3 * size :])
        i, f, g, o = (gates[:, k * size : (k + 1) * size] for k in range(4))
        c[t] = f * c_prev + i * g
        tanh_c[t] = np.tanh(c[t])
        out[t] = o * tanh_c[t]
        h_prev, c_prev = out[t], c[t]
    out[steps] = c_prev


def _backward_numpy(grad, gates, c, tanh_c, c0, w_hh, reverse, dgates, dh0, dc0) -> None:
    """Reference of ``_backward``: the steps in the other order, one ``np.matmul`` per step."""
    steps, _, width = gates.shape
    size = width // 4
    order, back = time_order(steps, reverse)
    dh0[...] = 0  # the gradient reaching h[t] from step t+1 (none for the last step)
    dc0[...] = grad[steps]
    for t in reversed(order):
        i, f, g, o = (gates[t][:, k * size : (k + 1) * size] for k in range(4))
        c_prev = c0 if t == order[0] else c[t + back]
        dh = grad[t] + dh0
        dc = dc0 + dh * o * (1 - tanh_c[t] * tanh_c[t])
        dgates[t] = np.concatenate(
            [dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g), dh * tanh_c[t] * o * (1 - o)],
            axis=-1,
        )
        dc0[...] = dc * f
        dh0[...] = dgates[t] @ w_hh


# ------------------------------------------------------------------ numba kernels
@njit(fastmath={"contract"}, error_model="numpy")
def _activate(gates, e):
    """gates (N, 4H) pre-activations -> [sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)] in place; e: scratch
    of the same dtype, at least N * 4H."""
    rows, width = gates.shape
    size, bound = width // 4, taylor_bound(gates)
    for n in range(rows):
        z, en = gates[n], e[n * width : (n + 1) * width]
        for k in range(width):
            en[k] = -abs(z[k])
        eg = en[2 * size : 3 * size]
        for k in range(size):
            eg[k] *= 2.0  # tanh needs exp(-2|z|)
    exp_inplace(e[: rows * width])
    for n in range(rows):
        z, en = gates[n], e[n * width : (n + 1) * width]
        zs, es = z[: 2 * size], en[: 2 * size]
        for k in range(2 * size):
            zs[k] = sigmoid_of(zs[k], es[k])
        zg, eg = z[2 * size : 3 * size], en[2 * size : 3 * size]
        for k in range(size):
            zg[k] = tanh_of(zg[k], eg[k], bound)
        zo, eo = z[3 * size :], en[3 * size :]
        for k in range(size):
            zo[k] = sigmoid_of(zo[k], eo[k])


@njit(fastmath={"contract"}, error_model="numpy")
def _cell(gates, c_prev, c, tanh_c, h, e):
    """c = f * c_prev + i * g, tanh_c = tanh(c), h = o * tanh_c, all (N, H), from the activated gates."""
    rows, size = c.shape
    bound = taylor_bound(c)
    for n in range(rows):
        a, cp, cn, en = gates[n], c_prev[n], c[n], e[n * size : (n + 1) * size]
        i, f, g = a[:size], a[size : 2 * size], a[2 * size : 3 * size]
        for k in range(size):
            cn[k] = f[k] * cp[k] + i[k] * g[k]
            en[k] = -2.0 * abs(cn[k])
    exp_inplace(e[: rows * size])
    for n in range(rows):
        o, cn, tn, hn, en = gates[n, 3 * size :], c[n], tanh_c[n], h[n], e[n * size : (n + 1) * size]
        for k in range(size):
            tn[k] = tanh_of(cn[k], en[k], bound)
            hn[k] = o[k] * tn[k]


@njit(fastmath={"contract"}, error_model="numpy")
def _forward(xg, w_hh_t, h0, c0, reverse, out, c, tanh_c):
    """The recurrence (module docstring); same arguments as ``_forward_numpy``."""
    steps, rows, width = xg.shape
    e = np.empty(rows * width, xg.dtype)
    back = 1 if reverse else -1
    for s in range(steps):
        t = steps - 1 - s if reverse else s
        h_prev = h0 if s == 0 else out[t + back]
        c_prev = c0 if s == 0 else c[t + back]
        gemm(h_prev, False, w_hh_t, False, xg[t], 1.0)
        _activate(xg[t], e)
        _cell(xg[t], c_prev, c[t], tanh_c[t], out[t], e)
    out[steps] = c[0] if reverse else c[steps - 1]


@njit(fastmath={"contract"}, error_model="numpy")
def _gates_backward(grad, dh, dc, gates, c_prev, tanh_c, dgates):
    """One step's dgates (N, 4H) from the gradients of h (``grad + dh``) and of c (``dc``, which becomes
    the gradient of c_prev, in place)."""
    rows, size = dh.shape
    for n in range(rows):
        a, d, cp, tc = gates[n], dgates[n], c_prev[n], tanh_c[n]
        i, f, g, o = a[:size], a[size : 2 * size], a[2 * size : 3 * size], a[3 * size :]
        di, df, dg, do = d[:size], d[size : 2 * size], d[2 * size : 3 * size], d[3 * size :]
        gn, hn, cn = grad[n], dh[n], dc[n]
        for k in range(size):
            dhk = gn[k] + hn[k]
            dck = cn[k] + dhk * o[k] * (1 - tc[k] * tc[k])
            di[k] = dck * g[k] * i[k] * (1 - i[k])
            df[k] = dck * cp[k] * f[k] * (1 - f[k])
            dg[k] = dck * i[k] * (1 - g[k] * g[k])
            do[k] = dhk * tc[k] * o[k] * (1 - o[k])
            cn[k] = dck * f[k]


@njit(fastmath={"contract"}, error_model="numpy")
def _backward(grad, gates, c, tanh_c, c0, w_hh, reverse, dgates, dh0, dc0):
    """The recurrence backwards (module docstring); same arguments as ``_backward_numpy``."""
    steps = gates.shape[0]
    back = 1 if reverse else -1
    dh0[...] = 0
    dc0[...] = grad[steps]
    for s in range(steps - 1, -1, -1):  # s: the forward's step number, t: its time position
        t = steps - 1 - s if reverse else s
        c_prev = c0 if s == 0 else c[t + back]
        _gates_backward(grad[t], dh0, dc0, gates[t], c_prev, tanh_c[t], dgates[t])
        gemm(dgates[t], False, w_hh, False, dh0, 0.0)


# The kernels call BLAS: where numba finds none, the references run (``BlasKernel``).
_FORWARD = BlasKernel(_forward_numpy, _forward)
_BACKWARD = BlasKernel(_backward_numpy, _backward)
