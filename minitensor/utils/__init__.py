"""Utilities outside the tensor core: ``minitensor.utils.data`` (PyTorch's ``torch.utils.data``)."""

from __future__ import annotations

from . import data

__all__ = ["data"]
