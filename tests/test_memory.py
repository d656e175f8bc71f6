"""Memory: the graph lets go of its arrays after backward, and training does not grow.

Graphs are plain trees of references (a Tensor points to its ``grad_fn``, a
node to its parents and its saved arrays; nothing points back), so reference
counting alone frees them: these tests run with the cycle collector off and
check that ``gc.collect()`` then finds nothing of ours to collect.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from contextlib import contextmanager

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim


@contextmanager
def gc_disabled():
    """The cycle collector off: whatever is freed is freed by reference counting."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def nodes_of(t: mt.Tensor) -> list:
    """Every graph node reachable from ``t`` (iteratively)."""
    seen, stack, found = set(), [t.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or not hasattr(node, "parents") or id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(node.parents)
    return found


def saved_array_refs(t: mt.Tensor, keep: list) -> list:
    """Weak references to the arrays the graph's nodes saved, except the leaves' own data (``keep``)."""
    kept = {id(a) for a in keep}
    refs = []
    for node in nodes_of(t):
        for a in node.saved_tensors:
            if isinstance(a, np.ndarray) and id(a) not in kept and id(a.base) not in kept:
                refs.append(weakref.ref(a))
    return refs


def small_graph():
    """A graph whose nodes save intermediate arrays (tanh and exp save outputs, mul both inputs)."""
    x = mt.randn(4, 5, requires_grad=True)
    w = mt.randn(5, 3, requires_grad=True)
    h = (x @ w).tanh()
    e = (h * h).exp()
    loss = (e * h).mean()
    return x, w, h, e, loss


def test_backward_releases_the_saved_arrays_while_the_output_is_still_alive() -> None:
    with gc_disabled():
        x, w, h, e, loss = small_graph()
        del h, e  # keep only the loss (and so, through it, the graph)
        refs = saved_array_refs(loss, keep=[x.numpy(), w.numpy()])
        assert len(refs) >= 4
        loss.backward()
        assert all(r() is None for r in refs), "saved arrays outlived backward()"
        assert loss.grad_fn is not None  # the graph's nodes remain; only their buffers went


def test_retain_graph_keeps_the_arrays_until_the_last_backward() -> None:
    with gc_disabled():
        x, w, h, e, loss = small_graph()
        del h, e
        refs = saved_array_refs(loss, keep=[x.numpy(), w.numpy()])
        loss.backward(retain_graph=True)
        assert all(r() is not None for r in refs)
        loss.backward()
        assert all(r() is None for r in refs)


def test_autograd_grad_releases_the_saved_arrays_too() -> None:
    with gc_disabled():
        x, w, h, e, loss = small_graph()
        del h, e
        refs = saved_array_refs(loss, keep=[x.numpy(), w.numpy()])
        mt.autograd.grad(loss, [x, w])
        assert all(r() is None for r in refs)


def test_intermediate_tensors_die_with_their_last_reference_no_cycle_collector_needed() -> None:
    with gc_disabled():
        x, w, h, e, loss = small_graph()
        tensor_refs = [weakref.ref(t) for t in (h, e, loss)]
        array_refs = saved_array_refs(loss, keep=[x.numpy(), w.numpy()])
        del h, e, loss
        assert all(r() is None for r in tensor_refs), "an intermediate Tensor is kept alive (a reference cycle?)"
        assert all(r() is None for r in array_refs), "a saved array outlived its graph"
        assert gc.collect() == 0, "the graph left cyclic garbage for the cycle collector"


def test_a_training_step_leaves_no_cyclic_garbage() -> None:
    mt.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, batch_first=True)
    opt = optim.Adam(layer.parameters(), lr=1e-3)
    src = mt.randn(2, 5, 8)
    layer(src).sum().backward()  # compiles the kernels first (numba's compiler leaves cyclic garbage)
    with gc_disabled():
        for _ in range(3):
            opt.zero_grad()
            loss = (layer(src) ** 2).mean()
            loss.backward()
            opt.step()
        del loss
        assert gc.collect() == 0


def fill_free_lists() -> None:
    """CPython keeps freed tuples (up to 2,000 of each small size), floats, lists and dicts
    for reuse, and tracemalloc counts them as allocated.  Fill those free lists first, so
    that their slow filling during a loop (tens of KB) is not mistaken for minitensor's."""
    junk = [tuple(range(size)) for size in range(1, 21) for _ in range(2000)]
    junk += [float(i) + 0.5 for i in range(1000)] + [[i] for i in range(1000)] + [{i: i} for i in range(1000)]
    del junk


@pytest.mark.parametrize("norm_first", [False, True])
def test_training_memory_stays_flat_over_200_steps(norm_first: bool) -> None:
    """tracemalloc: the peak traced memory of step 200 is within 10% of step 20's.

    What stays allocated between steps (parameters, gradients, Adam's state) may
    differ by 10% plus 4 KB: CPython's free lists churn by a few hundred bytes.
    """
    mt.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.1, batch_first=True, norm_first=norm_first)
    opt = optim.Adam(layer.parameters(), lr=1e-3)
    src = mt.randn(4, 12, 32)
    pad = mt.zeros(4, 12, dtype=mt.bool)
    pad[:, -1] = True

    def step() -> float:
        opt.zero_grad()
        loss = (layer(src, src_key_padding_mask=pad) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    step()  # compiles the kernels (numba's memory is not minitensor's)
    fill_free_lists()
    peaks = np.zeros(200, np.int64)  # preallocated: recording must not allocate per step
    held = np.zeros(200, np.int64)
    tracemalloc.start()
    try:
        for i in range(200):
            tracemalloc.reset_peak()
            step()
            held[i], peaks[i] = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peaks[199] <= 1.10 * peaks[19], f"peak grew from {peaks[19]} to {peaks[199]} bytes"
    assert held[199] <= 1.10 * held[19] + 4096, f"memory held between steps grew from {held[19]} to {held[199]} bytes"


def test_the_flat_memory_check_detects_a_leak() -> None:
    """The same measurement, with the classic leak of keeping every step's loss Tensor (and its graph)."""
    mt.manual_seed(0)
    layer = nn.Linear(16, 16)
    x = mt.randn(8, 16)
    kept = []
    fill_free_lists()
    held = np.zeros(200, np.int64)
    tracemalloc.start()
    try:
        for i in range(200):
            loss = (layer(x).tanh() ** 2).mean()
            loss.backward()
            kept.append(loss)  # a leak: loss.item() was meant
            held[i] = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held[199] > 1.10 * held[19] + 4096
