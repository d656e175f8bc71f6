"""``run_python``: run Python in a fresh process with this checkout's minitensor importable.

The switch owns the name ``torch``, and the test process may hold the real
PyTorch (the oracle), so every switch test runs in a child process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env["MINITENSOR_THREAD_POLICY"] = "0"  # the same thread count in every run, whatever else is busy: same bits
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


@pytest.fixture
def run_python():
    """``run_python(args, cwd, check=True)``: ``python *args`` in ``cwd``; raises with the output if it fails."""
    return _run
