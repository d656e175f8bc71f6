"""``python -m minitensor.compat script.py [args]``: run a PyTorch script on minitensor.

The script runs exactly as ``python script.py [args]`` would run it
(``sys.argv``, ``__name__ == "__main__"``, the script's folder first on
``sys.path``), but ``import torch`` gives minitensor.  ``-m module`` runs a
module instead, as ``python -m module`` does.
"""

from __future__ import annotations

import os
import runpy
import sys

from . import install

USAGE = (
    "usage: python -m minitensor.compat script.py [args ...]\n       python -m minitensor.compat -m module [args ...]"
)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr if not argv or argv[0] == "-m" else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    install()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"python -m minitensor.compat: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
