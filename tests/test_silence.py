"""minitensor/_silence.py: inf and nan come without NumPy's RuntimeWarnings, as in PyTorch, even
under ``python -W error``; the user's own NumPy code still warns."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import numpy as np
import minitensor as mt
x = mt.tensor([0.0, 1.0, -1.0])
results = [x / 0, x.sqrt(), x.log(), mt.tensor(0.0) ** -1.0, mt.tensor([1000.0]).exp(), mt.tensor(1e38) * 10,
           mt.zeros(0).mean(), mt.zeros(0, 3).var(0), x % 0, mt.tensor(0.0).rsqrt()]
print(" ".join(str(r.tolist()) for r in results))
try:
    np.array(1.0) / 0
except RuntimeWarning:
    print("numpy still warns")
"""


def test_inf_and_nan_without_warnings_under_python_w_error() -> None:
    run = subprocess.run([sys.executable, "-W", "error", "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    values, numpy_line = run.stdout.strip().splitlines()
    assert values.startswith("[nan, inf, -inf] [0.0, 1.0, nan] [-inf, 0.0, nan] inf [inf] inf nan [nan, nan, nan]")
    assert numpy_line == "numpy still warns"
