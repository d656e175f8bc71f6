"""Run PyTorch code on minitensor, unchanged: make ``import torch`` give minitensor.

From the shell (like ``python script.py [args]``: same ``sys.argv``, ``__name__ == "__main__"``)::

    python -m minitensor.compat script.py [args]
    python -m minitensor.compat -m package.module [args]

In a notebook or a Python session, before the first ``import torch``::

    import minitensor.compat
    minitensor.compat.install()
    import torch            # minitensor, with torch.nn, torch.optim, torch.utils.data ...

``torch.cuda.is_available()`` is then False, the GPU/distributed/export modules
import but raise a RuntimeError naming the feature when used, and anything
minitensor lacks raises an AttributeError or ModuleNotFoundError that says so.
See docs/pytorch.md for what is supported.

- ``_install.py``: ``install``/``uninstall`` and the table of ``torch.*`` modules;
- ``_torch.py``: the ``torch`` module (forwards to ``minitensor``);
- ``cuda.py``, ``backends.py``, ``unavailable.py``: what a CPU-only library answers.
"""

from __future__ import annotations

from ._install import install, is_installed, uninstall

__all__ = ["install", "is_installed", "uninstall"]
