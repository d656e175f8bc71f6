"""Grad mode: whether new operations are recorded in the autograd graph.

The flag is thread-local, so ``with mt.no_grad():`` in one thread never changes
what another thread records.  ``no_grad`` / ``enable_grad`` / ``set_grad_enabled``
work both as context managers and as decorators::

    with mt.no_grad():
        y = x * 2          # y.requires_grad is False

    @mt.no_grad()
    def evaluate(model, x): ...
"""

from __future__ import annotations

import functools
import inspect
import threading

import numpy as np


class _ThreadState(threading.local):
    """Per-thread flags; the class attributes are each new thread's starting values (read as plain
    attributes: ``getattr(local, name, default)`` costs six times as much, on every op)."""

    enabled = True  # grad mode
    graph_backward = 0  # how many backward passes that build a graph are running


_state = _ThreadState()


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are recorded (per thread)."""
    return _state.enabled


def _set_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradMode:
    """Base of the grad-mode switches: sets ``mode`` on enter, restores on exit."""

    mode = True

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_enabled(self.mode)

    def __exit__(self, *exc) -> None:
        _set_enabled(self._prev)

    def __call__(self, fn):
        """Use as a decorator: every call of ``fn`` runs inside a fresh switch."""

        if inspect.isgeneratorfunction(fn):  # cover the generator's body, each time it resumes (as PyTorch)

            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                sent = None
                while True:
                    with self._clone():
                        try:
                            item = gen.send(sent)
                        except StopIteration as stop:
                            return stop.value
                    sent = yield item

            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper

    def _clone(self) -> _GradMode:
        return type(self)()


class no_grad(_GradMode):
    """Disable graph recording: results of ops do not require grad."""

    mode = False


class enable_grad(_GradMode):
    """Re-enable graph recording, e.g. inside a ``no_grad`` block."""

    mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` works like ``no_grad()``; called bare it sets the mode."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, (bool, np.bool_)):
            raise TypeError(f"set_grad_enabled: mode must be a bool, got {type(mode).__name__}")
        self.mode = bool(mode)
        self._prev = is_grad_enabled()
        _set_enabled(self.mode)

    def __enter__(self) -> None:
        _set_enabled(self.mode)

    def __call__(self, fn):
        _set_enabled(self._prev)  # used as a decorator: do not switch the mode at decoration time
        return super().__call__(fn)

    def _clone(self) -> _GradMode:
        return enable_grad() if self.mode else no_grad()


class building_graph_backward:
    """Marks a backward that runs on Tensors (``create_graph=True``): inside it, NumPy functions
    minitensor does not implement raise on Tensors instead of silently dropping the graph
    (``numpy_protocol.py``)."""

    def __enter__(self) -> None:
        _state.graph_backward += 1

    def __exit__(self, *exc) -> None:
        _state.graph_backward -= 1


def building_graph() -> bool:
    """Is a backward that builds a graph running in this thread?"""
    return _state.graph_backward > 0
