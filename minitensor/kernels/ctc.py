"""The CTC loss's recursions (``ops/ctc.py`` has the notation): the forward variables alpha and each
sample's loss, then the backward variables beta and PyTorch's gradient, one sample at a time.

For one sample of T_n time steps and L_n = 2 S_n + 1 extended states, in log space (``lse`` =
log-sum-exp, -inf where no path leads; ``lp_t(s)`` = lp[t, n, ext[n, s]])::

    alpha_0(0) = lp_0(0),  alpha_0(1) = lp_0(1)
    alpha_t(s) = lse(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if skip[n, s]) + lp_t(s)
    nll        = -lse(alpha_{T_n-1}(L_n-1), alpha_{T_n-1}(L_n-2))

    beta_{T_n-1}(s) = lp_{T_n-1}(s) for the last two states
    beta_t(s)  = lse(beta_{t+1}(s), beta_{t+1}(s+1), beta_{t+1}(s+2) if skip[n, s+2]) + lp_t(s)
    grad_t(c)  = (exp(lp_t(c)) - sum_{s: ext[n, s] = c} exp(alpha_t(s) + beta_t(s) + nll - lp_t(c))) * g_n

Each term of that sum is the posterior probability of state s at time t (at most 1: no overflow), so
the kernels add them as they are; the reference takes PyTorch's way, a log-sum-exp per class.

The NumPy references run the recursions for all samples at once, one time step per NumPy call
(T steps of a dozen calls each way, and ``np.logaddexp.at`` to gather the states by class); the
kernels walk each sample's states in one loop (samples split over the threads), keep beta for
two time steps only, and gather the classes in a row of C.  An infeasible sample (its target
cannot fit: ``nll`` = inf) gets a zero gradient; time steps past ``input_lengths`` too.
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import choose
from .runtime.jit import njit, prange

NS_PER_STATE = 12.0  # the kernels' time per state and time step (three exponentials and a log)


def ctc_alpha(lp: np.ndarray, ext: np.ndarray, skip: np.ndarray, states: np.ndarray, input_lengths: np.ndarray,
              target_lengths: np.ndarray) -> tuple:  # fmt: skip
    """The forward variables and each sample's loss.

    Args:
        lp: (T, N, C) log-probabilities (float32 or float64).
        ext: (N, L) int64 extended targets; skip: (N, L) bool, may state s be reached from s - 2;
        states: (N,) int64, each sample's 2 S_n + 1; input_lengths, target_lengths: (N,) int64.

    Returns:
        ``(alpha, nll)``: alpha (N, T, L) float64 (-inf past each sample's states and time steps),
        nll (N,) float64 (inf where the target cannot fit; 0 for an empty input and target).
    """
    t_max, n, c = lp.shape
    alpha = np.full((n, t_max, ext.shape[1]), -np.inf)
    nll = np.empty(n)
    ns = NS_PER_STATE * ext.shape[1] / max(1, c)  # (per element of lp)
    run = choose(lp, _alpha_numpy, _alpha, _alpha_parallel, ns=ns)
    run(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll)
    return alpha, nll


def ctc_gradient(grad: np.ndarray, lp: np.ndarray, alpha: np.ndarray, nll: np.ndarray, ext: np.ndarray,
                 skip: np.ndarray, states: np.ndarray, input_lengths: np.ndarray) -> np.ndarray:  # fmt: skip
    """PyTorch's gradient (T, N, C), in lp's dtype, of the losses ``nll`` (N,) (``ctc_alpha``'s, with
    its ``alpha``) weighted by ``grad`` (N,); zero for infeasible samples and past their time steps."""
    out = np.empty(lp.shape, lp.dtype)
    ns = 2.0 * NS_PER_STATE * ext.shape[1] / max(1, lp.shape[2])
    run = choose(lp, _gradient_numpy, _gradient, _gradient_parallel, ns=ns)
    run(np.asarray(grad, np.float64).reshape(-1), lp, alpha, nll, ext, skip, states, input_lengths, out)
    return out


# ------------------------------------------------------------------ NumPy references
def _shift(a: np.ndarray, by: int) -> np.ndarray:
    """``a`` (N, L) moved ``by`` states to the right (``by`` < 0: to the left), -inf filling in."""
    out = np.full_like(a, -np.inf)
    if by > 0:
        out[:, by:] = a[:, :-by]
    else:
        out[:, :by] = a[:, -by:]
    return out


def _lse(*arrays: np.ndarray) -> np.ndarray:
    out = arrays[0]
    for a in arrays[1:]:
        out = np.logaddexp(out, a)
    return out


def _states_lp(lp: np.ndarray, ext: np.ndarray, states: np.ndarray) -> np.ndarray:
    """lp at the extended targets, (T, N, L) float64, -inf past each sample's states."""
    lp_ext = np.take_along_axis(lp.astype(np.float64), np.broadcast_to(ext, (lp.shape[0], *ext.shape)), axis=2)
    return np.where(np.arange(ext.shape[1]) < states[:, None], lp_ext, -np.inf)


def _alpha_numpy(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll) -> None:
    lp_ext = _states_lp(lp, ext, states)
    t_max, n, length = lp_ext.shape
    a = np.full(lp_ext.shape, -np.inf)  # (T, N, L)
    if t_max:
        a[0, :, 0] = lp_ext[0, :, 0]
        if length > 1:
            a[0, :, 1] = np.where(states > 1, lp_ext[0, :, 1], -np.inf)
    for t in range(1, t_max):
        prev = a[t - 1]
        a[t] = _lse(prev, _shift(prev, 1), np.where(skip, _shift(prev, 2), -np.inf)) + lp_ext[t]
    a[np.arange(t_max)[:, None] >= input_lengths[None, :]] = -np.inf
    alpha[...] = a.transpose(1, 0, 2)
    nll[...] = np.where(target_lengths == 0, 0.0, np.inf)  # (an empty input: only an empty target fits)
    rows = np.nonzero(input_lengths > 0)[0]
    last = alpha[rows, input_lengths[rows] - 1]  # (rows, L)
    end = last[np.arange(rows.size), states[rows] - 1]
    before = np.where(states[rows] > 1, last[np.arange(rows.size), np.maximum(states[rows] - 2, 0)], -np.inf)
    nll[rows] = -np.logaddexp(end, before)


def _gradient_numpy(grad, lp, alpha, nll, ext, skip, states, input_lengths, out) -> None:
    lp_ext = _states_lp(lp, ext, states)
    t_max, n, c = lp.shape
    beta = np.full(lp_ext.shape, -np.inf)  # (T, N, L)
    rows = np.nonzero(input_lengths > 0)[0]
    for back in (1, 2):  # the last two states at each sample's last time step
        has = rows[states[rows] >= back]
        t_last, s_last = input_lengths[has] - 1, states[has] - back
        beta[t_last, has, s_last] = lp_ext[t_last, has, s_last]
    skip_ahead = _shift(skip.astype(float), -2) > 0  # may state s + 2 be reached from s
    for t in range(t_max - 2, -1, -1):
        nxt = beta[t + 1]
        step = _lse(nxt, _shift(nxt, -1), np.where(skip_ahead, _shift(nxt, -2), -np.inf)) + lp_ext[t]
        beta[t] = np.where((t < input_lengths - 1)[:, None], step, beta[t])
    lcab = np.full((t_max, n, c), -np.inf)  # per class: lse of alpha + beta over its states
    t_idx, n_idx, s_idx = np.indices(beta.shape)
    np.logaddexp.at(lcab, (t_idx, n_idx, ext[n_idx, s_idx]), alpha.transpose(1, 0, 2) + beta)
    feasible = np.isfinite(nll)
    lp64 = lp.astype(np.float64)
    with np.errstate(invalid="ignore"):  # (infeasible samples: -inf + inf, replaced below)
        g = np.exp(lp64) - np.exp(lcab + np.where(feasible, nll, 0.0)[None, :, None] - lp64)
    counted = (np.arange(t_max)[:, None] < input_lengths[None, :]) & feasible[None, :]
    out[...] = np.where(counted[:, :, None], g * grad[None, :, None], 0.0)


# ------------------------------------------------------------------ kernels
@njit(inline="always")
def _term(x, m):
    """exp(x - m), without calling exp for the largest term (1) or an impossible one (0)."""
    if x == m:
        return 1.0
    return 0.0 if x == -np.inf else np.exp(x - m)


@njit(inline="always")
def _lse3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)): -inf when all three are."""
    m = max(a, b, c)
    if m == -np.inf:
        return m
    return m + np.log(_term(a, m) + _term(b, m) + _term(c, m))


@njit(inline="always")
def _lse2(a, b):
    m = max(a, b)
    if m == -np.inf:
        return m
    return m + np.log1p(np.exp(min(a, b) - m))


@njit
def _alpha_sample(lp, ext, skip, length, t_n, target_length, alpha, i):
    """Sample i's forward variables into alpha[i] (already -inf); its loss."""
    if t_n == 0:
        return 0.0 if target_length == 0 else np.inf
    a = alpha[i]
    a[0, 0] = lp[0, i, ext[i, 0]]
    if length > 1:
        a[0, 1] = lp[0, i, ext[i, 1]]
    minus_inf = -np.inf
    for t in range(1, t_n):
        prev, cur = a[t - 1], a[t]
        for s in range(length):
            one = prev[s - 1] if s > 0 else minus_inf
            two = prev[s - 2] if s > 1 and skip[i, s] else minus_inf
            cur[s] = _lse3(prev[s], one, two) + lp[t, i, ext[i, s]]
    last = a[t_n - 1]
    return -_lse2(last[length - 1], last[length - 2] if length > 1 else minus_inf)


@njit
def _alpha(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll):
    for i in range(lp.shape[1]):
        nll[i] = _alpha_sample(lp, ext, skip, states[i], input_lengths[i], target_lengths[i], alpha, i)


@njit(parallel=True)
def _alpha_parallel(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll):
    for i in prange(lp.shape[1]):
        nll[i] = _alpha_sample(lp, ext, skip, states[i], input_lengths[i], target_lengths[i], alpha, i)


@njit
def _gradient_sample(grad, lp, alpha, nll, ext, skip, length, t_n, out, i):
    """Sample i's gradient into out[:, i] (T, C)."""
    t_max, _, c = lp.shape
    minus_inf = -np.inf
    feasible = np.isfinite(nll[i])
    for t in range(t_n if feasible else 0, t_max):
        for k in range(c):
            out[t, i, k] = 0.0
    if not feasible:
        return
    width = ext.shape[1]
    beta, nxt = np.full(width + 2, minus_inf), np.full(width + 2, minus_inf)  # (two -inf states past the end)
    occupancy = np.empty(c)  # per class: the posterior probability of its states at t
    g, log_p = grad[i], nll[i]
    for t in range(t_n - 1, -1, -1):
        if t == t_n - 1:
            beta[length - 1] = lp[t, i, ext[i, length - 1]]
            if length > 1:
                beta[length - 2] = lp[t, i, ext[i, length - 2]]
        else:
            for s in range(length):
                two = nxt[s + 2] if s + 2 < length and skip[i, s + 2] else minus_inf
                beta[s] = _lse3(nxt[s], nxt[s + 1], two) + lp[t, i, ext[i, s]]
        occupancy[:] = 0.0
        a = alpha[i, t]
        for s in range(length):  # (alpha + beta counts lp_t(s) twice: one is taken off)
            k = ext[i, s]
            occupancy[k] += np.exp(a[s] + beta[s] + log_p - lp[t, i, k])
        for k in range(c):
            out[t, i, k] = (np.exp(np.float64(lp[t, i, k])) - occupancy[k]) * g
        beta, nxt = nxt, beta


@njit
def _gradient(grad, lp, alpha, nll, ext, skip, states, input_lengths, out):
    for i in range(lp.shape[1]):
        _gradient_sample(grad, lp, alpha, nll, ext, skip, states[i], input_lengths[i], out, i)


@njit(parallel=True)
def _gradient_parallel(grad, lp, alpha, nll, ext, skip, states, input_lengths, out):
    for i in prange(lp.shape[1]):
        _gradient_sample(grad, lp, alpha, nll, ext, skip, states[i], input_lengths[i], out, i)
