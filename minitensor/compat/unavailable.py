"""Modules for PyTorch features minitensor does not have: they import, and using them raises.

``torch.distributed``, ``torch.multiprocessing``, ``torch.onnx``,
``torch.nn.parallel`` and ``torch.utils.data.distributed`` exist so that a
script which merely imports them (nanoGPT imports ``init_process_group`` at the
top) still runs.  Questions with a truthful CPU answer get it
(``torch.distributed.is_available()`` is False); every other name is a
stand-in that raises a RuntimeError naming the feature when called or
instantiated.
"""

from __future__ import annotations

import types


class Unavailable:
    """A stand-in for a function or class of a missing feature: calling it raises."""

    def __init__(self, qualname: str, feature: str) -> None:
        self.qualname, self.feature = qualname, feature

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self.qualname}: {self.feature} is not available in minitensor (it runs in one CPU process)"
        )

    def __repr__(self) -> str:
        return f"<unavailable {self.qualname}>"


def unavailable_module(name: str, feature: str, answers: dict | None = None) -> types.ModuleType:
    """A module ``name`` whose ``answers`` are real and whose other attributes are ``Unavailable``."""
    module = types.ModuleType(name, f"{name}: {feature} is not available in minitensor.")
    module.__dict__.update(answers or {})

    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unavailable(f"{name}.{attr}", feature)

    module.__getattr__ = __getattr__
    return module


def _false(*args, **kwargs) -> bool:
    return False


def modules() -> dict:
    """``{name: module}`` of every unavailable feature's module."""
    distributed = unavailable_module(
        "torch.distributed",
        "distributed training (torch.distributed)",
        {"is_available": _false, "is_initialized": _false, "is_torchelastic_launched": _false},
    )
    multiprocessing = unavailable_module("torch.multiprocessing", "torch.multiprocessing", {"cpu_count": _cpu_count})
    return {
        "torch.distributed": distributed,
        "torch.multiprocessing": multiprocessing,
        "torch.onnx": unavailable_module("torch.onnx", "ONNX export (torch.onnx)"),
        "torch.nn.parallel": unavailable_module("torch.nn.parallel", "multi-device training (torch.nn.parallel)"),
        "torch.utils.data.distributed": unavailable_module(
            "torch.utils.data.distributed", "distributed data loading (torch.utils.data.distributed)"
        ),
    }


def _cpu_count() -> int:
    import os

    return os.cpu_count() or 1
