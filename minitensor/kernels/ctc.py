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
(T steps of a dozen calls each way, and ``np.logaddexp.at`` to gather the states by class).  The
kernels do the same for each block of ``BLOCK`` samples (the unit the threads share): its states
are one flat row, so a time step is one loop of branch-free log-sum-exps (``_lse3``: two
vectorised exponentials and a log a state) that LLVM runs on SIMD lanes; they keep beta for two
time steps only, and gather each sample's states by class in a row of C.  An infeasible sample
(its target cannot fit: ``nll`` = inf) gets a zero gradient; time steps past ``input_lengths``
too.  Where lp is -inf the reference gives PyTorch's NaN (``exp(-inf + inf)``), the kernels 0 for
a class outside the sample's target (the limit) and NaN as PyTorch at its own classes.

Measured (T = 32, 256 samples of 8 labels, C = 16, float32, one core of the AVX2 AMD EPYC of
docs/performance.md, medians of 15): forward 2.8-3.0 -> 1.6 ms, gradient 5.1-5.3 -> 2.3-2.6 ms
against one sample's states at a time with scalar ``exp`` and ``log`` (which skipped -inf terms).
"""

from __future__ import annotations

import numpy as np

from ._exp import exp64
from ._log import log_consts
from .exp_log import exp, log64
from .runtime.dispatch import choose
from .runtime.jit import njit, prange

NS_PER_STATE = 12.0  # the kernels' time per state and time step (two exponentials and a log, vectorised)


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
    skip_ahead = np.zeros_like(skip)  # may state s + 2 be reached from s
    skip_ahead[:, :-2] = skip[:, 2:]
    ns = 2.0 * NS_PER_STATE * ext.shape[1] / max(1, lp.shape[2])
    run = choose(lp, _gradient_numpy, _gradient, _gradient_parallel, ns=ns)
    probs = exp(lp)  # (in lp's dtype: float32 on twice the lanes, rounded as the result will be)
    run(np.asarray(grad, np.float64).reshape(-1), lp, probs, alpha, nll, ext, skip_ahead, states, input_lengths, out)
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


def _gradient_numpy(grad, lp, probs, alpha, nll, ext, skip_ahead, states, input_lengths, out) -> None:
    lp_ext = _states_lp(lp, ext, states)
    t_max, n, c = lp.shape
    beta = np.full(lp_ext.shape, -np.inf)  # (T, N, L)
    rows = np.nonzero(input_lengths > 0)[0]
    for back in (1, 2):  # the last two states at each sample's last time step
        has = rows[states[rows] >= back]
        t_last, s_last = input_lengths[has] - 1, states[has] - back
        beta[t_last, has, s_last] = lp_ext[t_last, has, s_last]
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
        g = probs - np.exp(lcab + np.where(feasible, nll, 0.0)[None, :, None] - lp64)
    counted = (np.arange(t_max)[:, None] < input_lengths[None, :]) & feasible[None, :]
    out[...] = np.where(counted[:, :, None], g * grad[None, :, None], 0.0)


# ------------------------------------------------------------------ kernels
# A block of samples walks through time together: its states are one flat row (sample after sample,
# L each), so each step is one vectorised loop of (samples x L) log-sum-exps (one sample's L ~ 20
# states would leave the loop's start and end to dominate).  The masks keep the samples apart.
BLOCK = 64  # samples a block (its rows of states stay in the L1 cache; the parallel kernels' unit)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _lse3(a, b, c, k):
    """log(exp(a) + exp(b) + exp(c)) (``k``: float64 ``log_consts``): -inf when all three are, inf
    when one is.  Branch-free, with the vectorisable ``exp64`` and ``log64``, so a loop over the
    states runs on SIMD lanes: the largest, m, taken out, m + log(1 + exp(mid - m) + exp(low - m))
    (-inf terms give exp 0)."""
    m, low = max(a, max(b, c)), min(a, min(b, c))
    mid = max(min(a, b), min(max(a, b), c))
    r = m + log64(1.0 + exp64(mid - m) + exp64(low - m), k)
    return r if -np.inf < m < np.inf else m


@njit(fastmath={"contract"}, error_model="numpy")
def _alpha_step(prev, cur, lp_states, after_one, skips, k):
    """cur[j] = lse(prev[j], prev[j - 1] if after_one[j], prev[j - 2] if skips[j]) + lp_states[j] for
    the block's flat states j; prev has two -inf in front (prev[j + 2] is state j).  (A function of
    its own, on rows of their own: the loop vectorises.)"""
    for j in range(cur.size):
        one, two = prev[j + 1], prev[j]  # (read either way: selects, not branches)
        cur[j] = _lse3(prev[j + 2], one if after_one[j] else -np.inf, two if skips[j] else -np.inf, k) + lp_states[j]


@njit(fastmath={"contract"}, error_model="numpy")
def _beta_step(nxt, beta, lp_states, before_one, skips_ahead, k):
    """beta[j] = lse(nxt[j], nxt[j + 1] if before_one[j], nxt[j + 2] if skips_ahead[j]) + lp_states[j];
    nxt has two -inf at its end."""
    for j in range(beta.size):
        one, two = nxt[j + 1], nxt[j + 2]
        beta[j] = _lse3(nxt[j], one if before_one[j] else -np.inf, two if skips_ahead[j] else -np.inf, k) + lp_states[j]


@njit(inline="always")
def _gather_states(lp_t, ext, states, n0, n1, out):
    """out[(n - n0) L + s] = lp_t[n, ext[n, s]] for the block's samples n (float64), -inf for the
    states past each sample's own."""
    width = ext.shape[1]
    for n in range(n0, n1):
        for s in range(width):
            out[(n - n0) * width + s] = lp_t[n, ext[n, s]] if s < states[n] else -np.inf


@njit(fastmath={"contract"}, error_model="numpy")
def _alpha_block(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll, n0, n1):
    """Samples n0 .. n1 - 1: their forward variables into alpha[n0:n1] (already -inf), their losses."""
    width, size, k = ext.shape[1], (n1 - n0) * ext.shape[1], log_consts(alpha)
    after_one, skips = np.empty(size, np.bool_), np.empty(size, np.bool_)
    for n in range(n0, n1):
        for s in range(width):
            after_one[(n - n0) * width + s], skips[(n - n0) * width + s] = s > 0, skip[n, s]
    lp_states, prev, cur = np.empty(size), np.full(size + 2, -np.inf), np.empty(size)
    t_top = 0
    for n in range(n0, n1):
        t_top = max(t_top, input_lengths[n])
        if input_lengths[n] > 0:
            row = alpha[n, 0]
            row[0] = lp[0, n, ext[n, 0]]
            if states[n] > 1:
                row[1] = lp[0, n, ext[n, 1]]
            prev[2 + (n - n0) * width : 2 + (n - n0 + 1) * width] = row
    for t in range(1, t_top):
        _gather_states(lp[t], ext, states, n0, n1, lp_states)
        _alpha_step(prev, cur, lp_states, after_one, skips, k)
        prev[2:] = cur
        for n in range(n0, n1):
            if t < input_lengths[n]:
                alpha[n, t] = cur[(n - n0) * width : (n - n0 + 1) * width]
    for n in range(n0, n1):
        t_n, length = input_lengths[n], states[n]
        if t_n == 0:
            nll[n] = 0.0 if target_lengths[n] == 0 else np.inf
        else:
            last = alpha[n, t_n - 1]
            nll[n] = -_lse3(last[length - 1], last[length - 2] if length > 1 else -np.inf, -np.inf, k)


@njit
def _alpha(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll):
    n = lp.shape[1]
    for b in range((n + BLOCK - 1) // BLOCK):
        start = b * BLOCK
        _alpha_block(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll, start, min(n, start + BLOCK))


@njit(parallel=True)
def _alpha_parallel(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll):
    n = lp.shape[1]
    for b in prange((n + BLOCK - 1) // BLOCK):
        start = b * BLOCK
        _alpha_block(lp, ext, skip, states, input_lengths, target_lengths, alpha, nll, start, min(n, start + BLOCK))


@njit(fastmath={"contract"}, error_model="numpy")
def _gradient_block(grad, lp, probs, alpha, nll, ext, skip_ahead, states, input_lengths, out, n0, n1):
    """Samples n0 .. n1 - 1: their gradients into out[:, n0:n1] (probs = exp(lp), in its dtype)."""
    c, width, size, k = lp.shape[2], ext.shape[1], (n1 - n0) * ext.shape[1], log_consts(alpha)
    out[:, n0:n1] = 0.0
    before_one, skips_ahead, log_p = np.empty(size, np.bool_), np.empty(size, np.bool_), np.empty(size)
    t_top = 0
    for n in range(n0, n1):
        if np.isfinite(nll[n]):  # (an infeasible sample keeps its zeros)
            t_top = max(t_top, input_lengths[n])
        for s in range(width):
            j = (n - n0) * width + s
            before_one[j], skips_ahead[j], log_p[j] = s < width - 1, skip_ahead[n, s], nll[n]
    lp_states, posterior = np.empty(size), np.empty(size)
    beta, nxt, alpha_t = np.empty(size), np.full(size + 2, -np.inf), np.empty(size)
    occupancy = np.empty(c)
    for t in range(t_top - 1, -1, -1):
        _gather_states(lp[t], ext, states, n0, n1, lp_states)
        _beta_step(nxt, beta, lp_states, before_one, skips_ahead, k)
        for n in range(n0, n1):
            start, length = (n - n0) * width, states[n]
            if t == input_lengths[n] - 1:  # the sample's last step: its last two states start
                beta[start : start + width] = -np.inf
                beta[start + length - 1] = lp_states[start + length - 1]
                if length > 1:
                    beta[start + length - 2] = lp_states[start + length - 2]
            alpha_t[start : start + width] = alpha[n, t]
        for j in range(size):  # (alpha + beta counts lp_t(s) twice: one is taken off)
            posterior[j] = exp64(alpha_t[j] + beta[j] + log_p[j] - lp_states[j])
        for n in range(n0, n1):
            if t < input_lengths[n] and np.isfinite(nll[n]):
                occupancy[:] = 0.0
                for s in range(states[n]):
                    occupancy[ext[n, s]] += posterior[(n - n0) * width + s]
                for j in range(c):
                    out[t, n, j] = (probs[t, n, j] - occupancy[j]) * grad[n]
        nxt[:size] = beta


@njit
def _gradient(grad, lp, probs, alpha, nll, ext, skip_ahead, states, input_lengths, out):
    n = lp.shape[1]
    for b in range((n + BLOCK - 1) // BLOCK):
        start = b * BLOCK
        _gradient_block(
            grad, lp, probs, alpha, nll, ext, skip_ahead, states, input_lengths, out, start, min(n, start + BLOCK)
        )


@njit(parallel=True)
def _gradient_parallel(grad, lp, probs, alpha, nll, ext, skip_ahead, states, input_lengths, out):
    n = lp.shape[1]
    for b in prange((n + BLOCK - 1) // BLOCK):
        start = b * BLOCK
        _gradient_block(
            grad, lp, probs, alpha, nll, ext, skip_ahead, states, input_lengths, out, start, min(n, start + BLOCK)
        )
