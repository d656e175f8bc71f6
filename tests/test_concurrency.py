"""Threads: grad mode is per thread, and separate models train independently in parallel.

What is shared between threads, and so is not thread-safe to change while
others run:

- the random generator (``mt.manual_seed``): init, ``randn`` and dropout all
  draw from one generator, so two threads that draw concurrently interleave
  their draws; with dropout > 0 the results then depend on the scheduling.
  For reproducible parallel runs use dropout 0 (or seed, build and train one
  model per process);
- the kernel switch (``mt.set_jit_enabled`` / ``mt.jit_disabled()``), process-wide;
- the default dtype (``mt.set_default_dtype``).

Grad mode (``no_grad``/``enable_grad``) is per thread; a graph and its
backward pass belong to the thread that built them.
"""

from __future__ import annotations

import threading

import numpy as np

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim


def run_in_threads(*fns, timeout: float = 60.0) -> list:
    """Run each fn in its own thread, started together; return their results (re-raising errors)."""
    start = threading.Barrier(len(fns))
    results, errors = [None] * len(fns), []

    def target(i, fn):
        try:
            start.wait(timeout)
            results[i] = fn()
        except BaseException as e:  # noqa: BLE001  (re-raised in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    if errors:
        raise errors[0]
    return results


def test_a_new_thread_starts_with_grad_enabled_even_if_its_creator_is_in_no_grad() -> None:
    with mt.no_grad():
        (inside,) = run_in_threads(lambda: (mt.is_grad_enabled(), (mt.ones(2, requires_grad=True) * 2).requires_grad))
        assert not mt.is_grad_enabled()
    assert inside == (True, True)


def test_no_grad_in_one_thread_while_another_trains() -> None:
    """Thread A evaluates under no_grad in a loop while thread B records graphs and back-propagates."""
    stop = threading.Event()
    w = mt.tensor([1.0, 2.0], requires_grad=True)

    def evaluate():
        recorded = 0
        while not stop.is_set():
            with mt.no_grad():
                recorded += (w * 3).requires_grad
        return recorded

    def train():
        try:
            grads = []
            for _ in range(300):
                x = mt.tensor([3.0, 4.0], requires_grad=True)
                (x * x * w).sum().backward()
                grads.append(x.grad.numpy().copy())
            return grads
        finally:
            stop.set()

    recorded, grads = run_in_threads(evaluate, train)
    assert recorded == 0
    np.testing.assert_array_equal(np.array(grads), np.tile([6.0, 16.0], (300, 1)))


def make_model(seed: int) -> tuple:
    """A small encoder-and-head model, its Adam optimizer and a fixed batch (dropout 0: deterministic)."""
    mt.manual_seed(seed)
    model = nn.Sequential(
        nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True), nn.Linear(16, 3)
    )
    opt = optim.Adam(model.parameters(), lr=1e-2)
    x, y = mt.randn(4, 5, 16), mt.tensor(np.random.default_rng(seed).integers(0, 3, size=(4, 5)))
    return model, opt, x, y


def train(model, opt, x, y, steps: int = 40) -> list:
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 3), y.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_two_models_trained_in_parallel_match_sequential_training() -> None:
    sequential, seq_params = [], []
    for seed in (1, 2):
        model, opt, x, y = make_model(seed)
        sequential.append(train(model, opt, x, y))
        seq_params.append([p.numpy().copy() for p in model.parameters()])

    setups = [make_model(seed) for seed in (1, 2)]  # built (and seeded) before the threads start
    parallel = run_in_threads(*(lambda s=s: train(*s) for s in setups))

    for seq, par in zip(sequential, parallel, strict=True):
        np.testing.assert_allclose(par, seq, rtol=1e-6, atol=1e-7)
    for (model, *_), params in zip(setups, seq_params, strict=True):
        for p, expected in zip(model.parameters(), params, strict=True):
            np.testing.assert_allclose(p.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert parallel[0][-1] < parallel[0][0] and parallel[1][-1] < parallel[1][0]  # both really trained


def test_many_threads_back_propagating_through_their_own_graphs() -> None:
    def work(seed: int):
        rng = np.random.default_rng(seed)
        a = mt.tensor(rng.standard_normal((8, 8)), dtype=mt.float64, requires_grad=True)
        for _ in range(50):
            a.grad = None
            (a @ a).tanh().sum().backward()
        expected = (1 - np.tanh(a.numpy() @ a.numpy()) ** 2) @ a.numpy().T
        expected += a.numpy().T @ (1 - np.tanh(a.numpy() @ a.numpy()) ** 2)
        return np.abs(a.grad.numpy() - expected).max()

    errors = run_in_threads(*(lambda s=s: work(s) for s in range(4)))
    assert max(errors) < 1e-12
