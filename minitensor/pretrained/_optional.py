"""Import the optional extras (``safetensors``, ``tokenizers``) only when a model is loaded.

The core of minitensor needs NumPy and numba only; reading a checkpoint and
tokenizing text need the ``pretrained`` extra.  A missing extra is reported
with the command that installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

INSTALL_HINT = 'pip install -e ".[pretrained]"  (or: pip install safetensors tokenizers)'


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` (e.g. ``"safetensors.numpy"``), or raise ImportError saying how to install it.

    >>> require("json", "reading configs").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"minitensor.pretrained needs the package {module.split('.')[0]!r} for {purpose}, "
            f"but it is not installed. Install the extra with: {INSTALL_HINT}"
        ) from err
