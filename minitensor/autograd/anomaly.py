"""Anomaly detection: find the forward line behind a NaN gradient.

``with mt.autograd.detect_anomaly():`` (or ``mt.autograd.set_detect_anomaly(True)``)
makes every op recorded meanwhile remember the file and line of the user's code
that called it, and makes the backward pass check each gradient an op's backward
returns: the first one with a NaN raises ``RuntimeError`` naming the op and that
forward line.  When detection is off nothing is recorded or checked (one flag test
per op).

>>> import minitensor as mt
>>> with mt.autograd.detect_anomaly():
...     x = mt.tensor([0.0], requires_grad=True)
...     y = x.sqrt() * 0          # forward is fine: 0 * 0
...     y.sum().backward()        # d sqrt(x)/dx at 0 is inf, inf * 0 = nan
Traceback (most recent call last):
RuntimeError: SqrtBackward returned nan values in its gradient 0 ... y = x.sqrt() * 0 ...

``check_nan=False`` records the lines but checks nothing; ``set_detect_anomaly(mode)`` also
works as a ``with`` block, as PyTorch's.
"""

from __future__ import annotations

import os
import sys

import numpy as np

enabled = False  # read by Function.apply and the engine
checks_nan = True  # with detection on: are gradients checked for NaN?
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled() -> bool:
    return enabled


def is_anomaly_check_nan_enabled() -> bool:
    return checks_nan


def _set(mode: bool, check_nan: bool) -> None:
    global enabled, checks_nan
    enabled, checks_nan = bool(mode), bool(check_nan)


class set_detect_anomaly:  # noqa: N801  (torch.autograd.set_detect_anomaly's name)
    """Turn anomaly detection on or off for the whole process, as PyTorch's: called as a
    function it stays set; used as ``with set_detect_anomaly(mode):`` the previous setting
    comes back at the end of the block.

    Args:
        mode: record forward lines and check gradients (True) or not.
        check_nan: with ``mode``, raise on a NaN gradient (False: record the lines only).
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._previous = (enabled, checks_nan)
        _set(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        _set(*self._previous)


class detect_anomaly:  # noqa: N801  (torch.autograd.detect_anomaly's name)
    """Context manager: anomaly detection on inside, the previous setting restored after.

    Args:
        check_nan: raise on a NaN gradient (False: only record the forward lines).
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._previous = (enabled, checks_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _set(*self._previous)


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
    """Raise if a gradient returned by ``node``'s backward holds a NaN (when ``check_nan``)."""
    if not checks_nan:
        return
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
