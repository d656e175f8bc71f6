"""Anomaly detection: find the forward line behind a NaN gradient.

``with mt.autograd.detect_anomaly():`` (or ``mt.autograd.set_detect_anomaly(True)``)
makes every op recorded meanwhile remember the file and line of the user's code
that called it, and makes the backward pass check each gradient an op's backward
returns: the first one with a NaN raises ``RuntimeError`` naming the op and that
forward line.  When detection is off nothing is recorded or checked (one flag test
per op).

>>> with mt.autograd.detect_anomaly():
...     x = mt.tensor([0.0], requires_grad=True)
...     y = x.sqrt() * 0          # forward is fine: 0 * 0
...     y.sum().backward()        # d sqrt(x)/dx at 0 is inf, inf * 0 = nan
Traceback (most recent call last):
RuntimeError: SqrtBackward returned nan values in its gradient 0 ...
"""

from __future__ import annotations

import os
import sys

import numpy as np

enabled = False  # read by Function.apply and the engine
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled() -> bool:
    return enabled


def set_detect_anomaly(mode: bool) -> None:
    """Turn anomaly detection on or off for the whole process."""
    global enabled
    enabled = bool(mode)


class detect_anomaly:
    """Context manager: anomaly detection on inside, the previous setting restored after."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._previous = enabled
        set_detect_anomaly(self.check_nan)

    def __exit__(self, *exc) -> None:
        set_detect_anomaly(self._previous)


def user_line() -> str:
    """``file:line: code`` of the innermost caller outside minitensor (the user's forward line)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame = frame.f_back
    if frame is None:
        return "(unknown)"
    import linecache

    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}: {code}"


def check_gradients(node, in_grads: tuple) -> None:
    """Raise if a gradient returned by ``node``'s backward holds a NaN."""
    for index, g in enumerate(in_grads):
        if g is None:
            continue
        values = g._data if hasattr(g, "_data") else np.asarray(g)
        if values.dtype.kind in "fc" and np.isnan(values).any():
            where = node.__dict__.get("forward_line", "(recorded before detect_anomaly was on)")
            raise RuntimeError(
                f"{node.name()} returned nan values in its gradient {index} (for input {index} of "
                f"{node.function.__name__}). The forward call that created it: {where}"
            )
