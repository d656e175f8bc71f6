"""Start-up costs, each measured in a fresh Python process.

    python benchmarks/bench_startup.py

- ``import minitensor`` (numba must not be imported there);
- the first forward+backward of a small TransformerEncoderLayer with a *cold*
  numba cache (an empty ``NUMBA_CACHE_DIR``: every kernel compiles) and with a
  *warm* one (the same directory again: kernels load from disk).

Targets (printed, not asserted): import <= 0.35 s; warm first step <= 2 s.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

_IMPORT = """
import json, sys, time
t0 = time.perf_counter()
import minitensor
print(json.dumps({"import_s": time.perf_counter() - t0, "numba_loaded": "numba" in sys.modules}))
"""

_FIRST_STEP = """
import json, time
t0 = time.perf_counter()
import minitensor as mt
import minitensor.nn as nn
t1 = time.perf_counter()
mt.manual_seed(0)
layer = nn.TransformerEncoderLayer(64, 8, 128, dropout=0.0, batch_first=True)
x = mt.randn(2, 12, 64, requires_grad=True)
layer(x).sum().backward()
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_step_s": t2 - t1, "total_s": t2 - t0}))
"""


def run(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter and return the JSON it prints."""
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **(env or {})}, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    imports = [run(_IMPORT) for _ in range(5)]
    import_s = statistics.median(r["import_s"] for r in imports)
    numba_loaded = any(r["numba_loaded"] for r in imports)
    with tempfile.TemporaryDirectory() as cache:
        env = {"NUMBA_CACHE_DIR": cache}
        cold = run(_FIRST_STEP, env)
        warm = [run(_FIRST_STEP, env) for _ in range(3)]
    warm_step = statistics.median(r["first_step_s"] for r in warm)
    print("| measurement | seconds | target |")
    print("|---|---:|---|")
    print(f"| import minitensor (median of 5) | {import_s:.3f} | <= 0.35: {'met' if import_s <= 0.35 else 'NOT met'} |")
    print(f"| numba imported by `import minitensor` | {numba_loaded} | False |")
    print(f"| first forward+backward, cold numba cache | {cold['first_step_s']:.3f} | - |")
    verdict = "met" if warm_step <= 2 else "NOT met"
    print(f"| first forward+backward, warm numba cache (median of 3) | {warm_step:.3f} | <= 2: {verdict} |")


if __name__ == "__main__":
    main()
