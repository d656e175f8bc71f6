"""``torch.version``: what a CPU-only build of PyTorch answers (scripts print ``torch.version.cuda`` or
branch on it).  ``cuda``, ``hip`` and ``xpu`` are None: there is no GPU toolkit."""

from __future__ import annotations

import minitensor

__version__ = f"{minitensor.__version__}+minitensor"
cuda = None
hip = None
xpu = None
debug = False
git_version = "minitensor"
