"""Grad mode: no_grad / enable_grad / set_grad_enabled, per thread."""

from __future__ import annotations

import threading

import pytest

import minitensor as mt


def _leaf() -> mt.Tensor:
    return mt.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_context_manager():
    x = _leaf()
    with mt.no_grad():
        assert not mt.is_grad_enabled()
        y = x * 2
    assert mt.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert (x * 2).requires_grad


def test_no_grad_decorator_and_return_value():
    x = _leaf()

    @mt.no_grad()
    def double(t):
        assert not mt.is_grad_enabled()
        return t * 2

    y = double(x)
    assert not y.requires_grad and y.tolist() == [2.0, 4.0]
    assert mt.is_grad_enabled()
    assert double.__name__ == "double"


def test_enable_grad_inside_no_grad_and_nesting():
    x = _leaf()
    with mt.no_grad():
        with mt.enable_grad():
            assert mt.is_grad_enabled()
            y = x * 2
            with mt.no_grad():
                z = x * 2
            assert mt.is_grad_enabled()
        assert not mt.is_grad_enabled()
        w = x * 2
    assert y.requires_grad and not z.requires_grad and not w.requires_grad


def test_enable_grad_decorator_inside_no_grad():
    @mt.enable_grad()
    def f(t):
        return t * 2

    with mt.no_grad():
        y = f(_leaf())
        assert not mt.is_grad_enabled()
    assert y.requires_grad


def test_decorator_is_reentrant():
    """The same decorated function may call itself (one switch per call)."""

    @mt.no_grad()
    def depth(n):
        assert not mt.is_grad_enabled()
        return 0 if n == 0 else 1 + depth(n - 1)

    assert depth(3) == 3
    assert mt.is_grad_enabled()


def test_mode_restored_after_exception():
    with pytest.raises(KeyError):
        with mt.no_grad():
            raise KeyError("boom")
    assert mt.is_grad_enabled()


def test_set_grad_enabled():
    x = _leaf()
    with mt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert mt.is_grad_enabled()
    try:
        mt.set_grad_enabled(False)
        assert not mt.is_grad_enabled()
    finally:
        mt.set_grad_enabled(True)
    assert mt.is_grad_enabled()


def test_set_grad_enabled_as_decorator_does_not_switch_at_decoration_time():
    @mt.set_grad_enabled(False)
    def double(t):
        assert not mt.is_grad_enabled()
        return t * 2

    assert mt.is_grad_enabled()
    assert not double(_leaf()).requires_grad
    assert mt.is_grad_enabled()


def test_grad_mode_is_per_thread():
    """Thread A holds no_grad open while thread B records a graph, and the other way round."""
    a_inside = threading.Event()
    b_done = threading.Event()
    results = {}

    def thread_a():
        with mt.no_grad():
            a_inside.set()
            b_done.wait(5)
            results["a_enabled"] = mt.is_grad_enabled()
            results["a_requires_grad"] = (_leaf() * 2).requires_grad

    def thread_b():
        a_inside.wait(5)
        results["b_enabled"] = mt.is_grad_enabled()
        results["b_requires_grad"] = (_leaf() * 2).requires_grad
        b_done.set()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == {"a_enabled": False, "a_requires_grad": False, "b_enabled": True, "b_requires_grad": True}


def test_no_grad_in_main_thread_does_not_leak_into_a_new_thread():
    seen = []
    with mt.no_grad():
        t = threading.Thread(target=lambda: seen.append(mt.is_grad_enabled()))
        t.start()
        t.join(10)
    assert seen == [True]


def test_no_grad_decorates_a_generator_body():
    @mt.no_grad()
    def steps(x):
        for _ in range(3):
            yield x * 2

    x = mt.randn(2, requires_grad=True)
    outs = list(steps(x))
    assert all(not o.requires_grad for o in outs)
    assert mt.is_grad_enabled()  # restored between and after the items
