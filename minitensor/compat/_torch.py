"""The module that ``import torch`` gives once the switch is on.

Every name minitensor has is minitensor's own object (``torch.tensor is
minitensor.tensor``, ``torch.nn.Linear is minitensor.nn.Linear``), found through
the module-level ``__getattr__`` below.  This file adds only what a CPU-only
library can answer truthfully: the GPU and distributed modules (see
``cuda.py``, ``backends.py``, ``unavailable.py``), ``torch.compile`` (returns the
model unchanged: there is no compiler), ``inference_mode`` (``no_grad``) and a
few global settings that have no effect here.
"""

from __future__ import annotations

import minitensor

from . import cuda as cuda  # noqa: PLC0414  (torch.cuda)
from . import version as version  # noqa: PLC0414  (torch.version)
from .cuda import autocast as autocast  # noqa: PLC0414

__version__ = version.__version__
__path__: list = []  # a package, so that ``import torch.<anything>`` reaches the switch's finder
Size = tuple  # t.size() is a tuple; torch.Size([2, 3]) == (2, 3)
_float32_matmul_precision = ["highest"]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(minitensor, name)
    except AttributeError:
        raise AttributeError(
            f"module 'torch' (minitensor) has no attribute {name!r}: minitensor does not implement torch.{name} "
            "(docs/pytorch.md lists what is supported)"
        ) from None


def __dir__() -> list:
    return sorted(set(globals()) | set(dir(minitensor)))


def compile(model=None, **kwargs):  # noqa: A001  (PyTorch's name)
    """``torch.compile``: minitensor has no compiler, so the model (or function) is returned unchanged."""
    if model is None:  # used as @torch.compile(...)
        return lambda fn: fn
    return model


def inference_mode(mode: bool = True):
    """``torch.inference_mode``: ``no_grad`` (or ``enable_grad`` with ``mode=False``)."""
    return minitensor.no_grad() if mode else minitensor.enable_grad()


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted and remembered; minitensor's float32 matmul is always full precision."""
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got {precision!r}")
    _float32_matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _float32_matmul_precision[0]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted and ignored: minitensor has no nondeterministic GPU algorithms to switch off."""
